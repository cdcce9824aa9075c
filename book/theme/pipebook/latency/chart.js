// What a latency card draws: the live distribution of round trips (an SVG redrawn
// from the bucket counts, log scale) and a finished run's table.

import { h, svg } from "../dom.js";
import { t } from "../i18n.js";
import { clockPercent, layoutHistogram, nsText, placementText, timingText } from "./dist.js";

const W = 600;
const H = 160;

/** The live distribution: an SVG redrawn from the bucket counts. */
export function distChart(label) {
  const el = svg("svg", { class: "pipebook-latency-dist", viewBox: `0 0 ${W} ${H + 30}`, role: "img", "aria-label": label });
  const draw = (buckets, mode) => {
    const out = layoutHistogram(buckets, W, H);
    el.replaceChildren();
    el.dataset.mode = mode;
    const title = svg("title");
    title.textContent = out.total
      ? t("{label}: {n} round trips from {low} to {high}", { label, n: out.total, low: nsText(out.lo), high: nsText(out.hi) })
      : t("{label}: no round trips yet", { label });
    el.append(title);
    for (const b of out.bars) {
      if (!b.h) continue;
      const bar = svg("rect", { class: "pipebook-latency-bar", x: b.x.toFixed(1), y: b.y.toFixed(1), width: Math.max(1, b.w - 1).toFixed(1), height: b.h.toFixed(1) });
      const tip = svg("title");
      tip.textContent = t("{n} round trips of {from} to {to}", { n: b.count, from: nsText(b.from), to: nsText(b.to) });
      bar.append(tip);
      el.append(bar);
    }
    el.append(svg("line", { x1: 0, y1: H, x2: W, y2: H }));
    if (out.total) {
      const lo = svg("text", { x: 0, y: H + 16 });
      lo.textContent = nsText(out.lo);
      const hi = svg("text", { x: W, y: H + 16, "text-anchor": "end" });
      hi.textContent = t("{high} (log scale, {u_ns} per round trip)", { u_ns: "ns", high: nsText(out.hi) });
      el.append(lo, hi);
    }
    return out.bars.filter((b) => b.h).length;
  };
  return { el, draw };
}

/** A finished run's percentiles, CPU and sleeps per round trip, placement and timing's cost, as table rows. */
export function resultTable(r) {
  const row = (label, value) => h("tr", null, h("th", null, label), h("td", null, value));
  return [
    row("p50 (median)", nsText(r.p50)),
    row("p90", nsText(r.p90)),
    row("p99", nsText(r.p99)),
    row("p99.9", nsText(r.p999)),
    row("max", nsText(r.max)),
    row(t("round trips timed"), String(r.count)),
    row(t("CPU per round trip"), t("ping {ping}, pong {pong}", { ping: nsText(r.ping_cpu_ns), pong: nsText(r.pong_cpu_ns) })),
    row(t("sleeps per round trip"), t("ping {ping}, pong {pong}", { ping: r.ping_sleeps.toFixed(2), pong: r.pong_sleeps.toFixed(2) })),
    row(t("CPUs (ping, pong)"), `${r.cpus.join(", ")}: ${placementText(r.placement)}`),
    row(t("timing's cost per round trip"), t("{ns} {u_ns}, {share}% of this median (timed blocks against untimed ones beside them)", { u_ns: "ns", ns: r.clock_ns.toFixed(1), share: clockPercent(r)?.toFixed(1) ?? "—" })),
    row(t("timing's cost on the mean"), timingText(r)),
  ];
}
