// Verdicts the page states, in words and as a picture (pure: no DOM, no
// network): the machine check before a comparison or a lab, a comparison's
// sentence, the layout of a ratio's interval against 1.0, and the one
// definition of a comparison every card uses (`compareRuns`): the runner's
// bootstrap (stats.js), judged and sized as pipebench's stats::verdict judges
// and sizes it, so a card and the CLI say the same of the same runs.

import { bytes } from "./format.js";
import { median, ratioOfMediansPaired, ratioOfMediansUnpaired } from "./stats.js";

/** The difference "more runs to resolve" is sized for: 10%, as the runner's. */
export const RESOLVE_DIFFERENCE = 1.1;

/** Fewest runs a side before a ratio has an interval. */
export const MIN_RUNS = 2;

/**
 * Where an interval low..high lies against a threshold (1.0 for "A against B"):
 * "faster" wholly above, "slower" wholly below, else "not_resolved".
 */
export function judge(low, high, threshold = 1) {
  if (low > threshold) return "faster";
  if (high < threshold) return "slower";
  return "not_resolved";
}

/**
 * About how many more runs (pairs, or runs a side) would narrow the interval to
 * ±difference around its centre at this noise: the width shrinks as 1/sqrt(n),
 * on the log scale where ratios are symmetric. 0 when it is that narrow already.
 */
export function morePairs(n, low, high, difference = RESOLVE_DIFFERENCE) {
  const half = (Math.log(high) - Math.log(low)) / 2;
  const target = Math.log(difference);
  if (!(Number.isFinite(half) && target > 0) || half <= target) return 0;
  const half2 = (half / target) * (half / target);
  return Math.max(Math.ceil(n * half2) - n, 0);
}

/**
 * A's runs against B's (rates: higher is faster): median(A) / median(B), its 95%
 * interval, the verdict and about how many more runs would resolve a 10%
 * difference: {ratio, ci_low, ci_high, runs, verdict, more_pairs}, or null with
 * fewer than two runs a side. `paired` when a[i] and b[i] ran back to back (the
 * compare job's pairs: whole pairs are resampled); otherwise the two sets are
 * resampled each on its own, as a lab's tasks are.
 */
export function compareRuns(a, b, { paired = false } = {}) {
  const i = paired ? ratioOfMediansPaired(a, b) : ratioOfMediansUnpaired(a, b);
  if (!i) return null;
  const runs = Math.min(a.length, b.length);
  return { ratio: i.ratio, ci_low: i.low, ci_high: i.high, runs, pairs: runs, verdict: judge(i.low, i.high), more_pairs: morePairs(runs, i.low, i.high) };
}

/**
 * Runs against a published figure that has no spread of its own (the article's):
 * the same definition with the figure as a set that never varies, so the
 * interval is the runs' own, divided by the figure.
 */
export function compareWithFigure(runs, figure) {
  if (!(typeof figure === "number" && figure > 0)) return null;
  return compareRuns(runs, runs.map(() => figure));
}

/** The machine check's advice (from /api/precheck) as one sentence. */
export function precheckSentence(advice) {
  if (!Array.isArray(advice)) return "Machine check: the runner could not look at its CPUs.";
  if (!advice.length) return "Machine check: nothing seen that would make these runs noisy (governor, boost, steal time, other work on the runner's CPUs).";
  const joined = advice.map((a) => String(a)).join("; ");
  return `Machine check: ${joined}.`;
}

/** A ratio to two decimals, or two significant digits below 0.1 (0.013, not 0.01). */
export function ratioText(v) {
  if (!(typeof v === "number" && Number.isFinite(v))) return "?";
  return Math.abs(v) >= 0.1 || v === 0 ? v.toFixed(2) : v.toPrecision(2);
}

/**
 * A comparison (the runner's `leg` or `verdict` figures: ratio, ci_low, ci_high,
 * pairs, verdict, more_pairs) of A against B, in words.
 */
export function compareSentence(c, a, b) {
  const figures = `${a} is ${ratioText(c.ratio)}× ${b} (95% interval ${ratioText(c.ci_low)} to ${ratioText(c.ci_high)}, ${c.pairs} pairs)`;
  if (c.verdict === "faster") return `${figures}: ${a} is faster.`;
  if (c.verdict === "slower") return `${figures}: ${a} is slower.`;
  if (!c.more_pairs) return `Not resolved: ${figures}; the interval holds 1.0 and already rules out a difference of 10% or more.`;
  return `Not resolved: ${figures}; the interval holds 1.0; about ${c.more_pairs} more pairs would resolve a 10% difference at this noise.`;
}

/**
 * Where to draw a ratio's interval on a log axis that always shows 1.0:
 * {min, max, x(v) -> 0..width, ticks: [values]} for a drawing `width` wide.
 */
export function intervalAxis(low, high, ratio, width) {
  const lo = Math.min(low, ratio, 1) / 1.15;
  const hi = Math.max(high, ratio, 1) * 1.15;
  const span = Math.log(hi) - Math.log(lo);
  const x = (v) => ((Math.log(v) - Math.log(lo)) / span) * width;
  const ticks = [];
  for (const t of [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]) if (t >= lo && t <= hi) ticks.push(t);
  if (!ticks.includes(1)) ticks.push(1);
  return { min: lo, max: hi, x, ticks: ticks.sort((p, q) => p - q) };
}

/**
 * What watching cost: a live figure against a quiet one of the same step, or
 * null. `counts` ({live, quiet}: runs behind each figure, their medians) words
 * how much to read into it; without it, one run each.
 */
export function watchingCost(live, quiet, counts = { live: 1, quiet: 1 }) {
  if (!(live > 0 && quiet > 0)) return null;
  const ratio = live / quiet;
  const share = Math.round((1 - ratio) * 100);
  const single = counts.live === 1 && counts.quiet === 1;
  const basis = single ? "one run each, so read it as a hint" : `medians of ${counts.live} live and ${counts.quiet} quiet runs`;
  const liveWords = counts.live === 1 ? "a live run gave" : "live runs gave";
  const quietWords = counts.quiet === 1 ? "a quiet run of the same step" : "quiet runs of the same step";
  const figures = `${liveWords} ${live.toFixed(2)} GiB/s, ${quietWords} ${quiet.toFixed(2)}`;
  if (Math.abs(share) < 2) return { ratio, sentence: `Watching cost nothing measurable here: live ${live.toFixed(2)} GiB/s against quiet ${quiet.toFixed(2)} (${basis}).` };
  if (share > 0) return { ratio, sentence: `Watching cost about ${share}% here: ${figures} (${basis}).` };
  return { ratio, sentence: `Live was ${-share}% faster than quiet here (${live.toFixed(2)} against ${quiet.toFixed(2)} GiB/s, ${basis}): runs vary that much; comparisons use quiet runs.` };
}

/**
 * What the reader's runs of one configuration (`config`: {step, bytes_per_call,
 * pipe_capacity, traced}) say, from results as store.js slims them: the quiet figures
 * and the live ones (runs that do not say how they ran are left out), the
 * quiet runs against the article's figure (null below two quiet runs or without
 * a figure) and what watching cost (null without one run of each).
 */
export function runEvidence(results, config, article) {
  const same = sameConfiguration(results, config);
  const quiet = same.filter((r) => !r.watched).map((r) => r.gib_per_s);
  const live = same.filter((r) => r.watched).map((r) => r.gib_per_s);
  return {
    quiet,
    live,
    vsArticle: quiet.length >= MIN_RUNS ? compareWithFigure(quiet, article) : null,
    watching: quiet.length && live.length ? watchingCost(median(live), median(quiet), { live: live.length, quiet: quiet.length }) : null,
  };
}

/** The runs of one configuration among `results` that say whether they were watched. */
function sameConfiguration(results, config) {
  return results.filter(
    (r) =>
      r.step === config.step &&
      typeof r.watched === "boolean" &&
      // A traced run is slowed by its tracepoints: compared only with traced runs.
      Boolean(r.traced) === Boolean(config.traced) &&
      (config.bytes_per_call === undefined || r.bytes_per_call === config.bytes_per_call) &&
      (config.pipe_capacity === undefined || r.pipe_capacity === config.pipe_capacity),
  );
}

/** The step every other is set against: the article's first, plain write and read. */
export const BASELINE = "write-read";

/** What a step's card sets it against: a tuned variant (`tuned-STEP`) its own step, as its search measured its gain; every other step the baseline. */
export function baseOf(step) {
  return typeof step === "string" && step.startsWith("tuned-") ? step.slice("tuned-".length) : BASELINE;
}

/**
 * A step against the baseline, from results as store.js slims them: the quiet
 * figures of `config` (the card's configuration) and of `baseConfig` (the
 * baseline's), and `vsBaseline`, compareRuns over the two sets (unpaired: the
 * history's runs were not all made in pairs), null below two quiet runs a side.
 */
export function baselineEvidence(results, config, baseConfig) {
  const quietOf = (c) => sameConfiguration(results, c).filter((r) => !r.watched).map((r) => r.gib_per_s);
  const mine = quietOf(config);
  const base = quietOf(baseConfig);
  return { mine, base, vsBaseline: compareRuns(mine, base) };
}

/**
 * A run card's verdict against the baseline (`e`: baselineEvidence), in words;
 * `baseConfig` ({bytes_per_call, pipe_capacity}) names the baseline's sizes when known.
 */
export function baselineSentence(e, step, baseConfig = {}, baseStep = BASELINE) {
  const [mine, base] = [e.mine.length, e.base.length];
  const c = e.vsBaseline;
  const sized = Number.isFinite(baseConfig.bytes_per_call) && Number.isFinite(baseConfig.pipe_capacity);
  const role = baseStep === BASELINE ? "the baseline" : "its step's own configuration";
  const name = sized ? `${baseStep}, ${role} (${bytes(baseConfig.bytes_per_call)} a call, a ${bytes(baseConfig.pipe_capacity)} pipe)` : `${baseStep}, ${role}`;
  if (!c) return `Quiet runs so far: ${mine} of ${step} and ${base} of ${name}. With ${MIN_RUNS} or more of each, the card states how ${step} compares with ${role} and how sure that is (quiet runs only: watching a run costs it).`;
  const figures = `${step} is ${ratioText(c.ratio)}× ${name}; 95% interval ${ratioText(c.ci_low)} to ${ratioText(c.ci_high)}, ${mine} and ${base} quiet runs`;
  if (c.verdict === "faster") return `${figures}: faster than ${role}.`;
  if (c.verdict === "slower") return `${figures}: slower than ${role}.`;
  if (!c.more_pairs) return `Not resolved: ${figures}. The interval holds 1.0 and already rules out a difference of 10% or more.`;
  return `Not resolved: ${figures}. About ${c.more_pairs} more quiet runs of each would resolve a 10% difference at this noise.`;
}

/**
 * Quiet runs against a published figure (`compareWithFigure`), in words ("" without
 * one): `figure` names the figure ("the article's figure"), `machine` whose it is.
 */
export function figureSentence(c, runs, figure, machine) {
  if (!c) return "";
  const figures = `${runs} quiet runs here are ${ratioText(c.ratio)}× ${figure} (95% interval ${ratioText(c.ci_low)} to ${ratioText(c.ci_high)})`;
  if (c.verdict === "faster") return `${figures}: faster than ${machine}.`;
  if (c.verdict === "slower") return `${figures}: slower than ${machine}.`;
  if (!c.more_pairs) return `Not resolved: ${figures}; the interval holds 1.0 and already rules out a difference of 10% or more.`;
  return `Not resolved: ${figures}; about ${c.more_pairs} more quiet runs would resolve a 10% difference at this noise.`;
}

/** A run card's verdict against the article, in words ("" without one). */
export function articleSentence(c, runs) {
  return figureSentence(c, runs, "the article's figure", "the article's machine");
}

/** An IPC card's quiet runs against the survey's rate, in words ("" without one). */
export function surveySentence(c, runs) {
  return figureSentence(c, runs, "the survey's rate", "the survey's machine");
}

/**
 * The results table's "÷ article" cell for one step, from results as store.js
 * slims them: the quiet, untraced runs of the step's newest quiet configuration
 * (its sizes; watched runs are left out, as every comparison leaves them out)
 * against the article's figure. {config, quiet (their count), left (the step's
 * runs not used: watched, traced, other sizes, or not saying), ratio (median of
 * the quiet runs over the figure, or null), vsArticle (compareWithFigure, from
 * two quiet runs on)}, or null without a figure.
 */
export function articleColumn(results, step, article) {
  if (!(typeof article === "number" && article > 0)) return null;
  const all = results.filter((r) => r.step === step);
  const newest = all.filter((r) => r.watched === false && !r.traced).at(-1);
  if (!newest) return { config: null, quiet: 0, left: all.length, ratio: null, vsArticle: null };
  const config = { step };
  if (Number.isFinite(newest.bytes_per_call)) config.bytes_per_call = newest.bytes_per_call;
  if (Number.isFinite(newest.pipe_capacity)) config.pipe_capacity = newest.pipe_capacity;
  const e = runEvidence(results, config, article);
  return { config, quiet: e.quiet.length, left: all.length - e.quiet.length, ratio: e.quiet.length ? median(e.quiet) / article : null, vsArticle: e.vsArticle };
}

/**
 * A sweep's best value against its worst, by median, from `runsByValue` (a Map
 * of value to its GiB/s figures): {best, worst, comparison} with the comparison
 * null until each has two runs, or null with fewer than two values.
 */
export function bestAgainstWorst(runsByValue) {
  const points = [...runsByValue.entries()]
    .filter(([, rates]) => rates.length)
    .map(([value, rates]) => ({ value, rates, median: median(rates) }));
  if (points.length < 2) return null;
  const sorted = [...points].sort((p, q) => q.median - p.median);
  const best = sorted[0];
  const worst = sorted[sorted.length - 1];
  return { best: best.value, worst: worst.value, comparison: compareRuns(best.rates, worst.rates) };
}

/** The sentence for a sweep's best against its worst, values named by `name(value)`. */
export function bestWorstSentence(bw, name) {
  const [best, worst] = [name(bw.best), name(bw.worst)];
  const c = bw.comparison;
  if (!c) return `Best ${best} against worst ${worst}: with ${MIN_RUNS} or more runs of each, the card states how sure the difference is.`;
  const figures = `best ${best} is ${ratioText(c.ratio)}× worst ${worst} (95% interval ${ratioText(c.ci_low)} to ${ratioText(c.ci_high)}, ${c.runs} runs each at least)`;
  if (c.verdict !== "not_resolved") return `Resolved: ${figures}.`;
  if (!c.more_pairs) return `Not resolved: ${figures}; the interval holds 1.0 and already rules out a difference of 10% or more.`;
  return `Not resolved: ${figures}; about ${c.more_pairs} more runs of each would resolve a 10% difference at this noise.`;
}
