// The IPC matrix chart: per mechanism, a bar for the reader's MiB/s and one for the
// survey's, on a log10 axis (the mechanisms span three orders of magnitude, so a
// linear axis would flatten the slow ones to nothing). Rates, not times, so a run
// of another size than the survey's still compares. `layout` is pure geometry
// (tested in Node); `IpcChart` draws it as SVG with colours from CSS.

import { h, svg } from "../dom.js";
import { isNumber } from "../format.js";
import { t } from "../i18n.js";

export const W = 640;
const PAD = { left: 150, right: 56, top: 22, bottom: 30 };
const BAR = 9;
const ROW = 2 * BAR + 10;
const MIB = 2 ** 20;

/** MiB/s of a figure {ms, bytes}, or null. */
export function rate(ms, bytes) {
  return isNumber(ms) && isNumber(bytes) && ms > 0 && bytes > 0 ? bytes / MIB / (ms / 1000) : null;
}

/** The power of ten at or below `x` (x > 0). */
export function decadeFloor(x) {
  return Math.pow(10, Math.floor(Math.log10(x) + 1e-9));
}

/** The power of ten at or above `x` (x > 0). */
export function decadeCeil(x) {
  return Math.pow(10, Math.ceil(Math.log10(x) - 1e-9));
}

/** "10", "1k", "10k": a tick label in MiB/s. */
export function tickLabel(v) {
  if (v >= 1e6) return `${v / 1e6}M`;
  if (v >= 1e3) return `${v / 1e3}k`;
  return String(v);
}

/** How many times `mine` is of `theirs`, as "3.2×", or "" without both. */
export function ratioText(mine, theirs) {
  if (!isNumber(mine) || !isNumber(theirs) || theirs <= 0) return "";
  const r = mine / theirs;
  return r >= 10 ? `${r.toFixed(0)}×` : r >= 1 ? `${r.toFixed(1)}×` : `${r.toFixed(2)}×`;
}

/**
 * Geometry for `rows` = [{id, mine (MiB/s or null), survey (MiB/s or null)}], in order:
 * {height, lo, hi, ticks: [{x, label}], rows: [{id, y, mine: {x, w} | null,
 * survey: {x, w} | null, ratio}]}. The axis spans whole decades around every rate.
 */
export function layout(rows) {
  const rates = rows.flatMap((r) => [r.mine, r.survey]).filter((v) => isNumber(v) && v > 0);
  const lo = rates.length ? decadeFloor(Math.min(...rates)) : 10;
  let hi = rates.length ? decadeCeil(Math.max(...rates)) : 10000;
  if (hi <= lo) hi = lo * 10;
  const plotW = W - PAD.left - PAD.right;
  const round = (n) => Math.round(n * 10) / 10;
  const x = (v) => PAD.left + ((Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * plotW;
  const bar = (v) => (isNumber(v) && v > 0 ? { x: PAD.left, w: round(Math.max(1, x(v) - PAD.left)) } : null);
  const ticks = [];
  for (let v = lo; v <= hi * 1.0001; v *= 10) ticks.push({ x: round(x(v)), label: tickLabel(Math.round(v)) });
  return {
    height: PAD.top + rows.length * ROW + PAD.bottom,
    lo,
    hi,
    ticks,
    rows: rows.map((r, i) => ({
      id: r.id,
      y: PAD.top + i * ROW,
      mine: bar(r.mine),
      survey: bar(r.survey),
      ratio: ratioText(r.mine, r.survey),
    })),
  };
}

export class IpcChart {
  constructor(label) {
    this.plot = svg("svg", { viewBox: `0 0 ${W} 100`, class: "pipebook-ipc-plot", role: "img", "aria-label": label });
    this.el = h(
      "figure.pipebook-ipc-chart",
      null,
      this.plot,
      h(
        "figcaption",
        null,
        h("span.pipebook-ipc-key-mine", null, "■"),
        " ",
        t("this machine"),
        "  ",
        h("span.pipebook-ipc-key-survey", null, "■"),
        " ",
        t("survey (emulated, unknown hardware); {u_mibs}, log scale; the figure at the right is this machine's rate over the survey's. The survey moved 200 MiB a run (its splice-to-socket case 1 GiB): compare at that size, since set-up weighs more in a small run.", { u_mibs: "MiB/s" }),
      ),
    );
  }

  /** Redraws with `rows` ({id, mine, survey} in MiB/s). */
  draw(rows) {
    const g = layout(rows);
    this.plot.setAttribute("viewBox", `0 0 ${W} ${g.height}`);
    this.plot.replaceChildren();
    const axis = svg("g", { class: "pipebook-ipc-axis" });
    const bottom = g.height - PAD.bottom;
    for (const tick of g.ticks) {
      axis.append(svg("line", { class: "pipebook-ipc-grid", x1: tick.x, y1: PAD.top - 6, x2: tick.x, y2: bottom }));
      const label = svg("text", { x: tick.x, y: bottom + 16, "text-anchor": "middle" });
      label.textContent = tick.label;
      axis.append(label);
    }
    this.plot.append(axis);
    for (const r of g.rows) {
      const name = svg("text", { class: "pipebook-ipc-label", x: PAD.left - 8, y: r.y + BAR + 4, "text-anchor": "end" });
      name.textContent = r.id;
      this.plot.append(name);
      for (const [kind, b, dy] of [["mine", r.mine, 0], ["survey", r.survey, BAR + 1]]) {
        if (!b) continue;
        const rect = svg("rect", { class: `pipebook-ipc-bar-${kind}`, x: b.x, y: r.y + dy, width: b.w, height: BAR });
        rect.dataset.mechanism = r.id;
        this.plot.append(rect);
      }
      if (r.ratio) {
        const ratio = svg("text", { class: "pipebook-ipc-ratio", x: W - PAD.right + 6, y: r.y + BAR + 4 });
        ratio.textContent = r.ratio;
        this.plot.append(ratio);
      }
    }
    this.plot.dataset.rows = String(rows.filter((r) => isNumber(r.mine)).length);
  }
}
