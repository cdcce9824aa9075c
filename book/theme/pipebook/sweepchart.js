// The sweep curve: median GiB/s against a size on a log2 x axis, with a min-max band,
// growing point by point as the runs finish. `layout` is pure geometry (tested in
// Node); `SweepChart` draws it as SVG with colours from CSS, in light and dark themes.

import { h, svg, yGrid } from "./dom.js";
import { bytes, figure, isNumber, median } from "./format.js";

export const W = 640;
export const H = 260;
const PAD = { left: 44, right: 16, top: 14, bottom: 34 };

/** 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10 times a power of ten, at least `x`. */
export function niceCeil(x) {
  if (!(x > 0)) return 1;
  const exp = Math.pow(10, Math.floor(Math.log10(x)));
  for (const step of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) {
    if (x <= step * exp + 1e-12) return step * exp;
  }
  return 10 * exp;
}

/** Summarises the runs of each value: [{value, runs, median, min, max}], by value. */
export function summarize(runsByValue) {
  return [...runsByValue.entries()]
    .map(([value, rates]) => ({
      value,
      runs: rates.length,
      median: median(rates),
      min: Math.min(...rates),
      max: Math.max(...rates),
    }))
    .filter((p) => isNumber(p.median))
    .sort((a, b) => a.value - b.value);
}

/**
 * Geometry for `points` (summaries) with x ticks at every swept `values`:
 * {ticks: [{x, label}], yTicks: [{y, label}], line, band, dots: [{x, y}], top}.
 */
export function layout(points, values) {
  const xs = values.length ? values : points.map((p) => p.value);
  const logs = xs.map((v) => Math.log2(v));
  const lo = Math.min(...logs) - 0.5;
  const hi = Math.max(...logs) + 0.5;
  const top = niceCeil(Math.max(0.1, ...points.map((p) => p.max)) * 1.05);
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const x = (v) => PAD.left + ((Math.log2(v) - lo) / (hi - lo || 1)) * plotW;
  const y = (g) => PAD.top + plotH - (g / top) * plotH;
  const round = (n) => Math.round(n * 10) / 10;
  const pt = (v, g) => `${round(x(v))},${round(y(g))}`;
  return {
    top,
    ticks: xs.map((v) => ({ x: round(x(v)), label: bytes(v) })),
    yTicks: [0, 0.25, 0.5, 0.75, 1].map((f) => ({ y: round(y(top * f)), label: figure(top * f) })),
    line: points.map((p) => pt(p.value, p.median)).join(" "),
    band: [...points.map((p) => pt(p.value, p.max)), ...points.slice().reverse().map((p) => pt(p.value, p.min))].join(" "),
    dots: points.map((p) => ({ x: round(x(p.value)), y: round(y(p.median)), value: p.value, median: p.median })),
  };
}

export class SweepChart {
  constructor(label) {
    this.plot = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "pipebook-sweep-plot", role: "img", "aria-label": label });
    this.el = h("figure.pipebook-sweep-chart", null, this.plot, h("figcaption", null, label));
    this.draw([], []);
  }

  /** Redraws with `points` (summaries) and ticks at `values`. */
  draw(points, values) {
    const g = layout(points, values);
    this.plot.replaceChildren();
    const axis = svg("g", { class: "pipebook-sweep-axis" });
    axis.append(svg("line", { x1: PAD.left, y1: H - PAD.bottom, x2: W - PAD.right, y2: H - PAD.bottom }));
    yGrid(axis, g.yTicks, { x1: PAD.left, x2: W - PAD.right, gridClass: "pipebook-sweep-grid" });
    for (const tick of g.ticks) {
      const label = svg("text", { x: tick.x, y: H - PAD.bottom + 18, "text-anchor": "middle" });
      label.textContent = tick.label;
      axis.append(label);
    }
    this.plot.append(axis);
    if (points.length) {
      this.plot.append(svg("polygon", { class: "pipebook-sweep-band", points: g.band }));
      this.plot.append(svg("polyline", { class: "pipebook-sweep-line", points: g.line }));
      for (const d of g.dots) {
        const dot = svg("circle", { class: "pipebook-sweep-dot", cx: d.x, cy: d.y, r: 4 });
        const title = svg("title");
        title.textContent = `${bytes(d.value)}: ${figure(d.median)} GiB/s`;
        dot.append(title);
        this.plot.append(dot);
      }
    }
    this.plot.dataset.points = String(points.length);
  }
}
