// Verdicts the page states, in words and as a picture (pure: no DOM, no
// network): the machine check before a comparison or a lab, the sentences of
// the runner's judgements (judge.js asks for them: the page judges nothing
// itself), the layout of a ratio's interval against 1.0, and which runs each
// card sets against which (runEvidence, baselineEvidence, articleColumn,
// bestAgainstWorst gather the figures; the runner judges them).

import { bytes } from "./format.js";
import { designSentence, plural, tooFewSentence } from "./judge.js";
import { t } from "./i18n.js";

/** The median (the mean of the middle two for an even count), or null: a figure shown, never a verdict. */
export function median(values) {
  if (!values.length) return null;
  const s = [...values].sort((p, q) => p - q);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/** The figures a judgement stands on: "6 pairs", "4 and 5 runs". */
function basis(j, unit) {
  if (j.method === "rank_sum") return t("{a} and {b}", { a: j.n_a, b: plural(j.n_b, unit === "pair" ? "run" : unit) });
  return plural(j.n_a, unit);
}

/**
 * The runner's judgement `j` of A against B in words: `a` and `verb` start the
 * sentence ("write-read is"), `b` names B, `won`/`lost` end it when the
 * interval clears 1.0. A too_few judgement says why there is no verdict; a
 * look of a sequential design says which.
 */
export function judgedSentence(j, { a, b, unit = "pair", verb = t("is"), won = t("{a} is faster", { a }), lost = t("{a} is slower", { a }) }) {
  if (j.verdict === "too_few") return tooFewSentence(j, unit);
  // A look of a sequential design has its interval at that look's level.
  const level = j.design === "sequential" && Number.isFinite(j.level_this_look) ? `${(100 * j.level_this_look).toFixed(1)}%` : "95%";
  const figures = t("{a} {verb} {ratio}× {b} ({level} interval {low} to {high}, {basis})", { a, verb, ratio: ratioText(j.ratio), b, level, low: ratioText(j.ci_low), high: ratioText(j.ci_high), basis: basis(j, unit) });
  const design = designSentence(j);
  const tail = design ? ` ${design}` : "";
  if (j.verdict === "faster") return t("{figures}: {verdict}.{tail}", { figures, verdict: won, tail });
  if (j.verdict === "slower") return t("{figures}: {verdict}.{tail}", { figures, verdict: lost, tail });
  return t("Not resolved: {figures}; the interval holds 1.0.{tail}", { figures, tail });
}

/** The machine check's advice (from /api/precheck) as one sentence. */
export function precheckSentence(advice) {
  if (!Array.isArray(advice)) return t("Machine check: the runner could not look at its CPUs.");
  if (!advice.length) return t("Machine check: nothing seen that would make these runs noisy (governor, boost, steal time, other work on the runner's CPUs).");
  const joined = advice.map((a) => String(a)).join("; ");
  return t("Machine check: {advice}.", { advice: joined });
}

/** A ratio to two decimals, or two significant digits below 0.1 (0.013, not 0.01). */
export function ratioText(v) {
  if (!(typeof v === "number" && Number.isFinite(v))) return "?";
  return Math.abs(v) >= 0.1 || v === 0 ? v.toFixed(2) : v.toPrecision(2);
}

/**
 * The compare job's verdict (the runner's figures: ratio, ci_low, ci_high,
 * verdict, n_a or pairs, design, look) of A against B, in words.
 */
export function compareSentence(c, a, b) {
  const j = { ...c, n_a: c.n_a ?? c.pairs, n_b: c.n_b ?? c.pairs, method: c.method ?? "signed_rank" };
  return judgedSentence(j, { a, b, unit: "pair" });
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
  for (const tick of [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]) if (tick >= lo && tick <= hi) ticks.push(tick);
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
  const basis = single ? t("one run each, so read it as a hint") : t("medians of {live} live and {quiet} quiet runs", { live: counts.live, quiet: counts.quiet });
  const liveWords = counts.live === 1 ? t("a live run gave") : t("live runs gave");
  const quietWords = counts.quiet === 1 ? t("a quiet run of the same step") : t("quiet runs of the same step");
  const figures = t("{liveWords} {live} {u_gibs}, {quietWords} {quiet}", { u_gibs: "GiB/s", liveWords, live: live.toFixed(2), quietWords, quiet: quiet.toFixed(2) });
  if (Math.abs(share) < 2) return { ratio, sentence: t("Watching cost nothing measurable here: live {live} {u_gibs} against quiet {quiet} ({basis}).", { u_gibs: "GiB/s", live: live.toFixed(2), quiet: quiet.toFixed(2), basis }) };
  if (share > 0) return { ratio, sentence: t("Watching cost about {share}% here: {figures} ({basis}).", { share, figures, basis }) };
  return { ratio, sentence: t("Live was {share}% faster than quiet here ({live} against {quiet} {u_gibs}, {basis}): runs vary that much; comparisons use quiet runs.", { u_gibs: "GiB/s", share: -share, live: live.toFixed(2), quiet: quiet.toFixed(2), basis }) };
}

/**
 * What the reader's runs of one configuration (`config`: {step, bytes_per_call,
 * pipe_capacity, traced}) are, from results as store.js slims them: the quiet
 * figures and the live ones (runs that do not say how they ran are left out),
 * and what watching cost (null without one run of each). The runner judges the
 * quiet runs against the article's figure (judge.js).
 */
export function runEvidence(results, config) {
  const same = sameConfiguration(results, config);
  const quiet = same.filter((r) => !r.watched).map((r) => r.gib_per_s);
  const live = same.filter((r) => r.watched).map((r) => r.gib_per_s);
  return {
    quiet,
    live,
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
 * baseline's). The runner judges them as two separate sets (the history's runs
 * were not all made in pairs).
 */
export function baselineEvidence(results, config, baseConfig) {
  const quietOf = (c) => sameConfiguration(results, c).filter((r) => !r.watched).map((r) => r.gib_per_s);
  return { mine: quietOf(config), base: quietOf(baseConfig) };
}

/** How the baseline is named on a card: the step, its role and, when known, its sizes. */
export function baselineName(step, baseConfig = {}, baseStep = BASELINE) {
  const sized = Number.isFinite(baseConfig.bytes_per_call) && Number.isFinite(baseConfig.pipe_capacity);
  const role = baseStep === BASELINE ? t("the baseline") : t("its step's own configuration");
  return { role, name: sized ? t("{step}, {role} ({bytes} a call, a {pipe} pipe)", { step: baseStep, role, bytes: bytes(baseConfig.bytes_per_call), pipe: bytes(baseConfig.pipe_capacity) }) : t("{step}, {role}", { step: baseStep, role }) };
}

/**
 * A run card's step against the baseline, in words: the runner's judgement `j`
 * of the step's quiet runs against the baseline's (null while it is asked, or
 * without a runner: then the counts and `fallback`).
 */
export function baselineSentence(j, e, step, baseConfig = {}, baseStep = BASELINE, fallback = "") {
  const { role, name } = baselineName(step, baseConfig, baseStep);
  if (!j) return t("Quiet runs so far: {mine} of {step} and {base} of {name}.{fallback}", { mine: e.mine.length, step, base: e.base.length, name, fallback: fallback ? ` ${fallback}` : "" });
  // A head-to-head's verdict is over pairs; the history's runs are two sets.
  const unit = j.method === "signed_rank" ? "pair" : "quiet run";
  return judgedSentence(j, { a: step, b: name, unit, won: t("faster than {what}", { what: role }), lost: t("slower than {what}", { what: role }) });
}

/**
 * Quiet runs against a published figure, in words: the runner's judgement `j`
 * of the runs paired with the figure. `figure` names the figure ("the
 * article's figure"), `machine` whose it is.
 */
export function figureSentence(j, figure, machine) {
  return judgedSentence(j, { a: t("Quiet runs here"), verb: t("are"), b: figure, unit: "quiet run", won: t("faster than {what}", { what: machine }), lost: t("slower than {what}", { what: machine }) });
}

/** A run card's quiet runs against the article, in words. */
export function articleSentence(j) {
  return figureSentence(j, t("the article's figure"), t("the article's machine"));
}

/**
 * The results table's "÷ article" cell for one step, from results as store.js
 * slims them: the quiet, untraced runs of the step's newest quiet configuration
 * (its sizes; watched runs are left out, as every comparison leaves them out).
 * {config, runs (their figures), quiet (their count), left (the step's runs not
 * used), ratio (median of the quiet runs over the figure, or null)}, or null
 * without a figure. The runner judges the runs against the figure.
 */
export function articleColumn(results, step, article) {
  if (!(typeof article === "number" && article > 0)) return null;
  const all = results.filter((r) => r.step === step);
  const newest = all.filter((r) => r.watched === false && !r.traced).at(-1);
  if (!newest) return { config: null, article, runs: [], quiet: 0, left: all.length, ratio: null };
  const config = { step };
  if (Number.isFinite(newest.bytes_per_call)) config.bytes_per_call = newest.bytes_per_call;
  if (Number.isFinite(newest.pipe_capacity)) config.pipe_capacity = newest.pipe_capacity;
  const e = runEvidence(results, config);
  return { config, article, runs: e.quiet, quiet: e.quiet.length, left: all.length - e.quiet.length, ratio: e.quiet.length ? median(e.quiet) / article : null };
}

/**
 * A sweep's best value against its worst, by median, from `runsByValue` (a Map
 * of value to its GiB/s figures): {best, worst, bestRates, worstRates}, or
 * null with fewer than two values. The runner judges the two sets.
 */
export function bestAgainstWorst(runsByValue) {
  const points = [...runsByValue.entries()]
    .filter(([, rates]) => rates.length)
    .map(([value, rates]) => ({ value, rates, median: median(rates) }));
  if (points.length < 2) return null;
  const sorted = [...points].sort((p, q) => q.median - p.median);
  const best = sorted[0];
  const worst = sorted[sorted.length - 1];
  return { best: best.value, worst: worst.value, bestRates: best.rates, worstRates: worst.rates };
}

/** The sentence for a sweep's best against its worst (the runner's judgement `j`), values named by `name(value)`. */
export function bestWorstSentence(j, bw, name) {
  const [best, worst] = [name(bw.best), name(bw.worst)];
  return judgedSentence(j, { a: t("Best {value}", { value: best }), b: t("worst {value}", { value: worst }), unit: j.method === "rank_sum" ? "run" : "pair", won: t("resolved"), lost: t("resolved (the order turned)") });
}
