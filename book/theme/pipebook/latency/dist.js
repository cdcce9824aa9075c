// The latency lab's arithmetic, pure: the live distribution's buckets (each octave
// of nanoseconds cut in four equal quarters, as the runner counts them), their
// layout as bars on a log axis, and the words a card says about a result.

import { t } from "../i18n.js";

/** The lower edge of bucket `i`, ns: 2^(i div 4) * (1 + (i mod 4) / 4). */
export function bucketFloor(i) {
  return 2 ** Math.floor(i / 4) * (1 + (i % 4) / 4);
}

/** ns as people read it: 850 ns, 12.3 µs, 4.1 ms. */
export function nsText(ns) {
  if (typeof ns !== "number" || !Number.isFinite(ns)) return "—";
  if (ns >= 1e6) return `${(ns / 1e6).toPrecision(3)} ms`;
  if (ns >= 1e3) return `${(ns / 1e3).toPrecision(3)} µs`;
  return `${Math.round(ns)} ns`;
}

/**
 * Bars for the non-empty stretch of `buckets` in a box `width` x `height`: x on a
 * log scale of ns (one bucket, one bar), height by share of the count.
 * Returns {bars: [{x, w, y, h, from, to, count}], total, lo, hi}.
 */
export function layoutHistogram(buckets, width, height) {
  const counts = (buckets || []).map((c) => (typeof c === "number" && c > 0 ? c : 0));
  const first = counts.findIndex((c) => c > 0);
  if (first < 0) return { bars: [], total: 0, lo: null, hi: null };
  let last = counts.length - 1;
  while (counts[last] === 0) last -= 1;
  const total = counts.reduce((a, b) => a + b, 0);
  const peak = Math.max(...counts);
  const n = last - first + 1;
  const w = width / n;
  const bars = [];
  for (let i = first; i <= last; i += 1) {
    const h = counts[i] ? Math.max(1, (counts[i] / peak) * height) : 0;
    bars.push({ x: (i - first) * w, w, y: height - h, h, from: bucketFloor(i), to: bucketFloor(i + 1), count: counts[i] });
  }
  return { bars, total, lo: bucketFloor(first), hi: bucketFloor(last + 1) };
}

/** Whether a result's percentiles are in order and counted (what the card checks before drawing). */
export function sane(r) {
  const p = [r?.min, r?.p50, r?.p90, r?.p99, r?.p999, r?.max];
  return p.every((x) => typeof x === "number") && p.every((x, i) => i === 0 || p[i - 1] <= x) && r.count > 0;
}

/** One sentence on a result: median, tail, and what a message cost each end in CPU. */
export function describeResult(r) {
  const tail = r.p50 > 0 ? r.p99 / r.p50 : null;
  const cpu = (r.ping_cpu_ns + r.pong_cpu_ns) / 2;
  const waiting = r.mode === "busy" ? t("busy-polling") : t("blocking");
  return t("{mechanism}, {waiting}, {size} {u_b}: half the round trips took at most {p50}, one in a hundred more than {p99}{tail}; each end spent {cpu} of CPU per round trip on average ({share}% of the median).", { u_b: "B",
    mechanism: r.mechanism,
    waiting,
    size: r.size,
    p50: nsText(r.p50),
    p99: nsText(r.p99),
    tail: tail ? t(" ({ratio}× the median)", { ratio: tail.toFixed(1) }) : "",
    cpu: nsText(cpu),
    share: ((cpu / Math.max(1, r.p50)) * 100).toFixed(0),
  });
}

/** The matrix's rows from results: one per mechanism and mode, sorted by p99. */
export function matrixRows(results) {
  return [...results]
    .filter((r) => r && typeof r.p99 === "number")
    .sort((a, b) => a.p99 - b.p99)
    .map((r) => ({
      id: r.mechanism,
      mode: r.mode,
      p50: r.p50,
      p99: r.p99,
      cpu: (r.ping_cpu_ns + r.pong_cpu_ns) / 2,
    }));
}

const PLACEMENTS = {
  "same-cpu": t("one CPU"),
  "smt-siblings": t("two threads of one core"),
  "separate-cores": t("two cores"),
};

/** How a result's two CPUs sit, in words ("two cores"); older results say nothing of it. */
export function placementText(placement) {
  return PLACEMENTS[placement] ?? t("placement not known");
}

/**
 * What timing every round trip added, measured against untimed blocks of round
 * trips beside the timed ones: "+3.2% on the mean (untimed blocks averaged
 * 410 ns)"; older results lack them.
 */
export function timingText(r) {
  if (!(r?.batch_mean_ns > 0) || typeof r.timing_overhead !== "number") return t("not measured in this result");
  const sign = r.timing_overhead >= 0 ? "+" : "−";
  return t("{share}% on the mean (untimed blocks averaged {mean})", { share: `${sign}${Math.abs(100 * r.timing_overhead).toFixed(1)}`, mean: nsText(r.batch_mean_ns) });
}

/** What timing adds to a round trip (`clock_ns`), as a share of the median, in percent (null without one). */
export function clockPercent(r) {
  return typeof r?.clock_ns === "number" && r.p50 > 0 ? (100 * r.clock_ns) / r.p50 : null;
}
