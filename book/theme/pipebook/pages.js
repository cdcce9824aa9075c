// The page inspector card that replaces each <div class="pipebook-pages">: for one or two
// steps, the writer's first buffer as a grid of its pages (present or not, huge
// page head or tail, frame and flags on hover), side by side. The runner allocates the
// buffers in a short child exactly as the writer does (a `pages` message, queued like a
// run); the grid comes back after a run of the same step on this page, too.
// Hooks for tests: .pipebook-pages-panel[data-step][data-state], svg.pipebook-pages-grid
// with data-present / data-heads / data-tails, .pipebook-pages-limit[data-kind].

import { START_HINT } from "./api.js";
import { fill, h, offlineHint, svg } from "./dom.js";
import { STATES, gridLayout, summary } from "./pagegrid.js";
import { CardLife } from "./cardlife.js";
import { runnerText, t, withNodes } from "./i18n.js";

/** `huge-pages:untouched` -> {step, touch: false}; plain ids leave `touch` to the step. */
export function parseSpec(spec) {
  const [step, mode] = spec.split(":");
  return { step, touch: mode === "untouched" ? false : mode === "touched" ? true : null };
}

function drawGrid(buffer, chunk) {
  const g = gridLayout(buffer, chunk);
  const plot = svg("svg", {
    class: "pipebook-pages-grid",
    viewBox: `0 0 ${g.width} ${g.height}`,
    width: g.width,
    height: g.height,
    role: "img",
    "aria-label": summary(buffer, chunk),
  });
  plot.dataset.present = String(buffer.present);
  plot.dataset.heads = String(g.counts.head);
  plot.dataset.tails = String(g.counts.tail);
  for (const c of g.cells) {
    const cell = svg("rect", {
      x: c.x,
      y: c.y,
      width: c.size,
      height: c.size,
      class: `pipebook-page pipebook-page-${c.state}${c.used ? "" : " pipebook-page-unused"}`,
    });
    const title = svg("title");
    title.textContent = c.title;
    cell.append(title);
    plot.append(cell);
  }
  return { plot, counts: g.counts };
}

function legend(counts) {
  return h(
    "ul.pipebook-pages-legend",
    null,
    ...Object.entries(STATES)
      .filter(([state]) => counts[state] > 0)
      .map(([state, text]) => h("li", null, h(`span.pipebook-swatch.pipebook-page-${state}`), `${text}: ${counts[state]}`)),
  );
}

/** "Walk it": hands the buffer's address to the page's walk drawing (walkview.js), if any. */
function walkButton(buffer, huge) {
  if (!document.querySelector(".pipebook-walk")) return null;
  const detail = { address: `0x${buffer.address.toString(16)}`, page: huge ? "2MiB" : "4KiB" };
  return h(
    "button.pipebook-pages-walk",
    { type: "button", onclick: () => document.dispatchEvent(new CustomEvent("pipebook-walk", { detail })) },
    t("Walk this address"),
  );
}

function render(body, message) {
  const report = message.report;
  const buffer = report.buffers[0];
  const { plot, counts } = drawGrid(buffer, report.buf_size);
  const extra = report.buffers.length > 1 ? t(" (buffer 1 of {n}; the other looks alike)", { n: report.buffers.length }) : "";
  fill(
    body,
    h(
      "p.pipebook-pages-where",
      null,
      withNodes(t("{size} KiB buffer at {address}, {offset} bytes into its page{extra}. "), { size: String(report.buf_size / 1024), address: h("code", null, `0x${buffer.address.toString(16)}`), offset: String(buffer.offset_in_page), extra }),
      walkButton(buffer, report.huge_pages),
    ),
    plot,
    h("p.pipebook-pages-summary", null, summary(buffer, report.buf_size)),
    legend(counts),
    ...report.limitations.map((l) => runnerText(h("p.pipebook-pages-limit", { dataset: { kind: l.kind } }, l.message))),
  );
}

function panelFor(spec, online) {
  const { step, touch } = parseSpec(spec);
  const what = touch === false ? t("untouched") : touch === true ? t("written first") : t("as the writer has them");
  const body = h("div.pipebook-pages-body");
  const button = h("button.pipebook-pages-button", { type: "button" }, t("Look again"));
  const panel = h(
    "div.pipebook-pages-panel",
    { dataset: { step, state: "idle" } },
    h("p.pipebook-pages-title", null, h("code", null, step), ` — ${what}`),
    body,
    online ? button : null,
  );
  // The panel's status is a paragraph of its body, until the grid takes its place.
  const life = new CardLife({
    status: (...text) => fill(body, h("p.pipebook-status", null, ...text)),
    marks: [panel],
    states: { connecting: "running", queued: "running", cancelled: "idle" },
    run: [button],
    words: {
      connecting: () => t("Allocating the buffers in a child process and reading its page table…"),
      queued: (position) => t("Waiting for the run ahead (place {position})…", { position }),
      cancelled: () => null,
      error: () => null,
      done: () => null,
    },
  });
  const message = { type: "pages", step };
  if (touch !== null) message.touch = touch;
  const look = () =>
    life.start(message, {
      pages: (answer) => render(body, answer),
      error: (text) => fill(body, h("p.pipebook-error", null, text)),
    });
  button.addEventListener("click", look);
  return { panel, body, step, look };
}

export function mountPages(root, { online }) {
  const specs = (root.dataset.specs || "").split(/\s+/).filter(Boolean);
  root.classList.add("pipebook-enhanced");
  const panels = specs.map((spec) => panelFor(spec, online));
  const card = h(
    "div.pipebook-card.pipebook-pages-card",
    { role: "group", "aria-label": t("page inspector") },
    h(
      "div.pipebook-card-head",
      null,
      h("span.pipebook-kind", null, t("Page inspector")),
      h("p.pipebook-summary", null, t("The writer's buffer, one square per page (4 KiB on x86-64), read from /proc/self/pagemap and /proc/kpageflags. Hover over a page for its address, frame and flags.")),
    ),
    h("div.pipebook-pages-panels", null, ...panels.map((p) => p.panel)),
  );
  root.append(card);
  if (!online) {
    for (const p of panels) {
      fill(p.body, offlineHint(t("To see these pages on your machine"), START_HINT, withNodes(t(", or run {command}."), { command: h("code", null, `pipebench pages --step ${p.step}`) })));
    }
    return;
  }
  // After a run of the same step on this page, look again: the reader sees the
  // buffers of the configuration they just measured.
  for (const p of panels) {
    for (const run of document.querySelectorAll(`.pipebook-run[data-step="${CSS.escape(p.step)}"]`)) {
      new MutationObserver(() => {
        if (run.dataset.state === "done" && p.panel.dataset.state !== "running") p.look();
      }).observe(run, { attributes: true, attributeFilter: ["data-state"] });
    }
  }
  // One at a time, each a job in the runner's queue; the page does not wait for them.
  (async () => {
    for (const p of panels) await p.look();
  })();
}
