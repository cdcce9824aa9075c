// Live throughput chart: GiB/s over time as an SVG line. The SVG stretches to its box
// (non-scaling strokes keep lines crisp); axis labels are HTML so text never distorts.
// Colours come from CSS (currentColor and mdBook's theme variables): light and dark alike.

import { h, svg } from "./dom.js";
import { figure, isNumber } from "./format.js";
import { t } from "./i18n.js";

const W = 1000;
const H = 100;

function niceCeil(x) {
  if (!(x > 0)) return 1;
  const exp = Math.pow(10, Math.floor(Math.log10(x)));
  for (const step of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) {
    if (x <= step * exp) return step * exp;
  }
  return 10 * exp;
}

/** The chart in words, for screen readers (the SVG itself is a picture): how many
 * stretches were measured, the lowest, highest and last rate, and the references. */
export function describeThroughput(points, { article = null, reference = null } = {}) {
  const refs = [];
  if (isNumber(article)) refs.push(t("the article measured {figure} {u_gibs}", { u_gibs: "GiB/s", figure: figure(article) }));
  if (reference && isNumber(reference.low) && isNumber(reference.high)) {
    refs.push(t("the C++ on the project's VM {figure} {u_gibs}", { u_gibs: "GiB/s", figure: figure((reference.low + reference.high) / 2) }));
  }
  const tail = refs.length ? t("; {references}.", { references: refs.join(t(", ")) }) : t(".");
  if (!points.length) return t("Throughput over time: no run yet{tail}", { tail });
  const rates = points.map(([, v]) => v);
  const seconds = points[points.length - 1][0];
  const said = { seconds: seconds.toFixed(1), n: points.length, low: figure(Math.min(...rates)), high: figure(Math.max(...rates)), last: figure(rates[rates.length - 1]), tail };
  return points.length === 1
    ? t("Throughput over {seconds} {u_s}, {n} stretch: from {low} to {high} {u_gibs}, last {last} {u_gibs}{tail}", { u_gibs: "GiB/s", u_s: "s", ...said })
    : t("Throughput over {seconds} {u_s}, {n} stretches: from {low} to {high} {u_gibs}, last {last} {u_gibs}{tail}", { u_gibs: "GiB/s", u_s: "s", ...said });
}

export class LiveChart {
  constructor() {
    this.line = svg("polyline", { class: "pipebook-chart-line", points: "" });
    this.area = svg("polygon", { class: "pipebook-chart-area", points: "" });
    this.grid = svg("g", { class: "pipebook-chart-grid" });
    this.refs = svg("g", { class: "pipebook-chart-refs" });
    const plot = svg("svg", {
      viewBox: `0 0 ${W} ${H}`,
      preserveAspectRatio: "none",
      "aria-hidden": "true",
      focusable: "false",
    });
    plot.append(this.grid, this.refs, this.area, this.line);
    this.labels = h("div.pipebook-chart-labels", { "aria-hidden": "true" });
    this.xEnd = h("span.pipebook-chart-xend");
    this.empty = h("p.pipebook-chart-empty", null, t("Throughput over time appears here while the step runs."));
    // A div, not a figure: a figure with a caption may not be given the img role, and
    // the picture's words (describe) say more than its axis caption would.
    this.el = h(
      "div.pipebook-chart",
      { role: "img", "aria-label": t("Throughput over time") },
      h("div.pipebook-chart-plot", null, plot, this.labels, this.empty),
      h("div.pipebook-chart-axis", null, h("span", null, "0 s"), h("span", null, t("{u_gibs} over time", { u_gibs: "GiB/s" })), this.xEnd),
    );
    this.reset({});
  }

  /** refs: {article, reference: {low, high}}, seconds: expected duration. */
  reset({ article, reference, seconds } = {}) {
    this.points = [];
    this.article = isNumber(article) ? article : null;
    this.reference = reference || null;
    this.seconds = isNumber(seconds) && seconds > 0 ? seconds : 4;
    this.el.classList.remove("pipebook-chart-has-data");
    this.draw();
    this.describe();
  }

  /** Words for the picture; set when a run starts and ends, not at every sample. */
  describe() {
    this.el.setAttribute("aria-label", describeThroughput(this.points, { article: this.article, reference: this.reference }));
  }

  push(seconds, gibs) {
    if (!isNumber(seconds) || !isNumber(gibs)) return;
    this.points.push([seconds, Math.max(0, gibs)]);
    this.el.classList.add("pipebook-chart-has-data");
    this.draw();
  }

  /** The run ended after `seconds`: fit the time axis to what was actually run. */
  finish(seconds) {
    if (isNumber(seconds) && seconds > 0) this.seconds = seconds;
    this.draw();
    this.describe();
  }

  draw() {
    const maxSeen = this.points.reduce((m, [, v]) => Math.max(m, v), 0);
    const tMax = Math.max(this.seconds, this.points.length ? this.points[this.points.length - 1][0] : 0);
    // Scale to the data, and to the reference figures when they are of the same order
    // (a far-off one is named at the top edge instead of flattening the line).
    const refMid = this.reference ? (this.reference.low + this.reference.high) / 2 : null;
    // Before the first sample the references set the scale.
    const scale = this.points.length ? Math.max(maxSeen, 0.3) : Math.max(refMid ?? this.article ?? 0.3, 0.3);
    let top = Math.max(maxSeen * 1.15, 0.5);
    if (refMid !== null && refMid <= 3 * scale) top = Math.max(top, refMid * 1.1);
    if (this.article !== null && this.article <= 3 * Math.max(scale, refMid ?? 0)) {
      top = Math.max(top, this.article * 1.1);
    }
    const yMax = niceCeil(top);
    const x = (secs) => ((secs / tMax) * W).toFixed(1);
    const y = (v) => (H - (Math.min(v, yMax) / yMax) * H).toFixed(2);

    this.grid.replaceChildren();
    this.labels.replaceChildren();
    for (const frac of [0.25, 0.5, 0.75, 1]) {
      const v = yMax * frac;
      this.grid.append(svg("line", { x1: 0, x2: W, y1: y(v), y2: y(v), "vector-effect": "non-scaling-stroke" }));
      if (frac === 0.5 || frac === 1) {
        this.labels.append(h("span.pipebook-chart-tick", { style: `top:${(1 - frac) * 100}%` }, figure(v)));
      }
    }

    this.refs.replaceChildren();
    const refLine = (value, cls, text) => {
      if (!isNumber(value)) return;
      const above = value > yMax;
      if (!above) {
        this.refs.append(
          svg("line", { class: cls, x1: 0, x2: W, y1: y(value), y2: y(value), "vector-effect": "non-scaling-stroke" }),
        );
      }
      const top = above ? 0 : (1 - value / yMax) * 100;
      this.labels.append(
        h(`span.pipebook-chart-ref.${cls}`, { style: `top:${top}%` }, `${text} ${figure(value)}${above ? " ↑" : ""}`),
      );
    };
    refLine(this.article, "pipebook-ref-article", t("article"));
    if (this.reference) {
      const mid = (this.reference.low + this.reference.high) / 2;
      refLine(mid, "pipebook-ref-cpp", t("C++ on the project's VM"));
    }
    // Keep reference labels from overlapping each other.
    const refLabels = [...this.labels.querySelectorAll(".pipebook-chart-ref")];
    if (refLabels.length === 2) {
      const [a, b] = refLabels.map((el) => parseFloat(el.style.top));
      if (Math.abs(a - b) < 14) refLabels[1].classList.add("pipebook-chart-ref-low");
    }

    const pts = this.points.map(([secs, v]) => `${x(secs)},${y(v)}`);
    this.line.setAttribute("points", pts.join(" "));
    this.line.setAttribute("vector-effect", "non-scaling-stroke");
    if (pts.length) {
      const first = this.points[0][0];
      const last = this.points[this.points.length - 1][0];
      this.area.setAttribute("points", `${x(first)},${H} ${pts.join(" ")} ${x(last)},${H}`);
    } else {
      this.area.setAttribute("points", "");
    }
    this.xEnd.textContent = `${Number.isInteger(tMax) ? tMax : tMax.toFixed(1)} s`;
  }
}
