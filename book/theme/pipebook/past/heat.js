// The tuning search drawn: one heat map per page setting it tries (bytes per call
// across, pipe capacity down, darker is faster), all on one scale, and the same
// figures as a table for screen readers.

import { fill, h, svg } from "../dom.js";
import * as fmt from "../format.js";
import { t } from "../i18n.js";
import { layoutHeat, pageSettings, pagesLabel, searchRows } from "./figures.js";

const W = 560;
const H = 240;

/** One heat map per page setting the search tries (one map where it keeps the step's own
 * pages), all coloured on one scale. */
export function drawMaps(box, search, step) {
  const settings = pageSettings(search);
  const maps = settings.map((huge) => {
    const what = pagesLabel(huge);
    const map = svg("svg", {
      class: "pipebook-tune-heat",
      viewBox: `0 0 ${W} ${H}`,
      role: "img",
      "data-pages": huge === null ? "own" : huge ? "huge" : "small",
      "aria-label": t("Heat map of the search of {step}{with}: bytes per call across, pipe capacity down, darker is faster; the table below has the figures", { step, with: what ? t(" with {what}", { what }) : "" }),
    });
    drawHeat(map, search, huge);
    return settings.length > 1 ? h("figure.pipebook-tune-map", null, h("figcaption", null, t("The writer's buffers in {what}", { what })), map) : map;
  });
  box.replaceChildren(...maps);
}

/** The heat map of a search's cells of one page setting: one rect per configuration,
 * coloured by its median so far. */
function drawHeat(el, search, huge) {
  const out = layoutHeat(search, W, H, undefined, huge);
  el.replaceChildren();
  const title = svg("title");
  const what = pagesLabel(huge);
  title.textContent = out.measured
    ? t("Search so far{what}: {n} configurations measured, {low} to {high} {u_gibs} over the whole search (darker is faster)", { u_gibs: "GiB/s", what: what ? `, ${what}` : "", n: out.measured, low: fmt.gib(out.lo), high: fmt.gib(out.hi) })
    : t("Search{what}: no configuration measured yet", { what: what ? `, ${what}` : "" });
  el.append(title);
  for (const c of out.cells) {
    const rect = svg("rect", {
      class: `pipebook-tune-cell${c.best ? " pipebook-tune-best" : ""}`,
      x: c.x.toFixed(1),
      y: c.y.toFixed(1),
      width: Math.max(1, c.w - 2).toFixed(1),
      height: Math.max(1, c.h - 2).toFixed(1),
      fill: c.fill ?? "none",
      "data-buf": c.buf,
      "data-pipe": c.pipe ?? "",
      "data-pages": c.huge === null || c.huge === undefined ? "own" : c.huge ? "huge" : "small",
      ...(fmt.isNumber(c.median) ? { "data-median": c.median } : {}),
    });
    const tip = svg("title");
    tip.textContent = t("{bytes} per call, {pipe} pipe{what}: {figure}", { bytes: fmt.bytes(c.buf), pipe: c.pipe === null ? t("default") : fmt.bytes(c.pipe), what: what ? `, ${what}` : "", figure: fmt.isNumber(c.median) ? `${fmt.gib(c.median)} GiB/s` : t("not run yet") });
    rect.append(tip);
    const text = svg("text", {
      // An empty cell shows the page's own background: its mark takes the text colour.
      class: !c.fill ? "pipebook-tune-empty" : c.darkText ? "pipebook-tune-label" : "pipebook-tune-label pipebook-tune-label-light",
      x: (c.x + c.w / 2).toFixed(1),
      y: (c.y + c.h / 2 + 4).toFixed(1),
      "text-anchor": "middle",
    });
    text.textContent = c.best ? `${c.label} ★` : c.label;
    el.append(rect, text);
  }
  for (const col of out.columns) {
    const tick = svg("text", { x: col.x.toFixed(1), y: H - 22, "text-anchor": "middle" });
    tick.textContent = col.label;
    el.append(tick);
  }
  const xName = svg("text", { x: 80 + (W - 80) / 2, y: H - 4, "text-anchor": "middle" });
  xName.textContent = t("bytes per call");
  el.append(xName);
  for (const row of out.rows) {
    const tick = svg("text", { x: 72, y: (row.y + 4).toFixed(1), "text-anchor": "end" });
    tick.textContent = row.label;
    el.append(tick);
  }
  const yName = svg("text", { x: 4, y: 12 });
  yName.textContent = t("pipe");
  el.append(yName);
  return out.measured;
}

/** Every configuration of the search as table rows: the map's figures for a screen reader. */
export function searchTable(table, search) {
  fill(
    table,
    h("caption", null, t("Every configuration of the search ({u_gibs}, median of its runs so far)", { u_gibs: "GiB/s" })),
    h("tr", null, [t("bytes per call"), t("pipe"), t("writer's pages"), t("median {u_gibs}", { u_gibs: "GiB/s" }), t("runs"), t("note")].map((name) => h("th", { scope: "col" }, name))),
    searchRows(search).map((r) => h("tr", null, h("td", null, r.perCall), h("td", null, r.pipe), h("td", null, r.pages), h("td", null, r.median), h("td", null, String(r.runs)), h("td", null, r.note))),
  );
}
