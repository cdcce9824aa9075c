// The page-table walk card that replaces each <div class="pipebook-walk">: an address
// box (the article's example by default), 4/5-level and 4 KiB/2 MiB choices, the
// address's bits by field, and an SVG of the walk. All arithmetic is in walk.js; it
// needs no runner, so it works in a static copy of the book too.
// Hooks for tests: input.pipebook-walk-input, .pipebook-walk-error, svg.pipebook-walk-svg
// with data-levels / data-indices, and data-state (ok|error) on the root. Listens for
// `pipebook-walk` events ({address, page}) from the page inspector.

import { fill, h, svg } from "./dom.js";
import { ARTICLE_ADDRESS, fields, hex64, layout, walkText } from "./walk.js";
import { t } from "./i18n.js";

function select(name, options, value) {
  return h(
    `select.pipebook-walk-${name}`,
    { "aria-label": name },
    ...options.map(([v, label]) => h("option", { value: v, selected: v === value }, label)),
  );
}

function drawBits(w) {
  return h(
    "div.pipebook-walk-bits",
    { "aria-label": t("the address's bits by field") },
    ...fields(w).map((f) =>
      h(
        "span.pipebook-walk-field",
        { dataset: { field: f.name }, title: t("bits {hi}..{lo}", { hi: f.hi, lo: f.lo }) },
        h("code", null, f.bits),
        h("small", null, f.name === "sign" ? t("{hi}..{lo} copy of bit {bit}", { hi: f.hi, lo: f.lo, bit: f.lo - 1 }) : `${f.name} ${f.hi}..${f.lo}`),
      ),
    ),
  );
}

function drawWalk(w) {
  const g = layout(w);
  const plot = svg("svg", {
    class: "pipebook-walk-svg",
    viewBox: `0 0 ${g.width} ${g.height}`,
    role: "img",
    "aria-label": t("page-table walk of {address}: {steps}, offset {offset}", { address: hex64(w.address), steps: w.walk.map((s) => `${s.name} ${s.index}`).join(", "), offset: w.offset }),
  });
  plot.dataset.levels = String(w.levels);
  plot.dataset.indices = w.walk.map((s) => s.index).join(",");
  const defs = svg("defs");
  const marker = svg("marker", { id: "pipebook-walk-arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
  marker.append(svg("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "pipebook-walk-arrowhead" }));
  defs.append(marker);
  plot.append(defs);
  const text = (x, y, content, cls, anchor = "middle") => {
    const label = svg("text", { x, y, class: cls, "text-anchor": anchor });
    label.textContent = content;
    return label;
  };
  for (const a of g.arrows) {
    plot.append(svg("line", { ...a, class: "pipebook-walk-arrowline", "marker-end": "url(#pipebook-walk-arrow)" }));
  }
  for (const b of g.boxes) {
    plot.append(svg("rect", { x: b.x, y: b.y, width: b.w, height: b.h, rx: 3, class: `pipebook-walk-box pipebook-walk-${b.kind}` }));
    if (b.kind === "cr3") {
      plot.append(text(b.x + b.w / 2, b.y + b.h / 2 + 5, b.label, "pipebook-walk-name"));
      continue;
    }
    plot.append(text(b.x + b.w / 2, b.y - 8, b.name, "pipebook-walk-name"));
    plot.append(svg("rect", { x: b.x, y: b.entry.y, width: b.w, height: b.entry.h, class: "pipebook-walk-entry" }));
    plot.append(text(b.x + b.w / 2, b.y + b.h + 18, b.label, "pipebook-walk-label"));
    if (b.kind === "table") {
      plot.append(text(b.x + 3, b.y + 12, "0", "pipebook-walk-tick", "start"));
      plot.append(text(b.x + 3, b.y + b.h - 4, "511", "pipebook-walk-tick", "start"));
    }
  }
  return plot;
}

export function mountWalk(root) {
  root.classList.add("pipebook-enhanced");
  const input = h("input.pipebook-walk-input", {
    type: "text",
    value: root.dataset.address || ARTICLE_ADDRESS,
    spellcheck: "false",
    size: 22,
    "aria-label": t("virtual address"),
  });
  const levels = select("levels", [["auto", t("auto (4 levels where it fits)")], ["4", t("{n}-level ({bits} bits)", { n: 4, bits: 48 })], ["5", t("{n}-level ({bits} bits)", { n: 5, bits: 57 })]], "auto");
  const page = select("page", [["4KiB", t("{size} page", { size: "4 KiB" })], ["2MiB", t("{size} page", { size: "2 MiB" })]], "4KiB");
  const out = h("div.pipebook-walk-out", { "aria-live": "polite" });
  const card = h(
    "div.pipebook-card.pipebook-walk-card",
    { role: "group", "aria-label": t("page-table walk") },
    h(
      "div.pipebook-card-head",
      null,
      h("span.pipebook-kind", null, t("Page-table walk")),
      h("p.pipebook-summary", null, t("Type a virtual address (hex or decimal) to see which entry of each table the MMU reads, and where in the page the byte lies.")),
    ),
    h("div.pipebook-walk-controls", null, h("label", null, t("Address"), " ", input), levels, page),
    out,
  );
  const update = () => {
    const result = walkText(input.value, levels.value, page.value);
    root.dataset.state = result.ok ? "ok" : "error";
    input.setAttribute("aria-invalid", result.ok ? "false" : "true");
    if (!result.ok) {
      fill(out, h("p.pipebook-walk-error", { role: "alert" }, result.message));
      return;
    }
    fill(
      out,
      result.note ? h("p.pipebook-walk-note", null, result.note) : null,
      drawBits(result),
      drawWalk(result),
      h(
        "p.pipebook-walk-summary",
        null,
        t("{address}: {steps} → offset {offset} in a {size} page ({levels}-level paging, {reads} table reads).", { address: hex64(result.address), steps: result.walk.map((s) => `${s.name} ${s.index}`).join(" → "), offset: `0x${result.offset.toString(16)}`, size: result.page === "2MiB" ? "2 MiB" : "4 KiB", levels: result.levels, reads: result.walk.length }),
      ),
    );
  };
  input.addEventListener("input", update);
  levels.addEventListener("change", update);
  page.addEventListener("change", update);
  root.append(card);
  update();
  // The page inspector's "Walk this address" (pages.js): the first walk on the page
  // shows a real buffer's address, to a 2 MiB page for a huge-page buffer.
  if (document.querySelector(".pipebook-walk") === root) {
    document.addEventListener("pipebook-walk", (event) => {
      input.value = String(event.detail.address);
      page.value = event.detail.page === "2MiB" ? "2MiB" : "4KiB";
      update();
      root.scrollIntoView({ block: "start" });
    });
  }
}
