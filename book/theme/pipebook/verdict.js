// Verdicts the page states, in words and as a picture (pure: no DOM, no
// network): the machine check before a comparison or a lab, a comparison's
// sentence, and the layout of a ratio's interval against 1.0.

/** The machine check's advice (from /api/precheck) as one sentence. */
export function precheckSentence(advice) {
  if (!Array.isArray(advice)) return "Machine check: the runner could not look at its CPUs.";
  if (!advice.length) return "Machine check: nothing seen that would make these runs noisy (governor, boost, steal time, other work on the runner's CPUs).";
  const joined = advice.map((a) => String(a)).join("; ");
  return `Machine check: ${joined}.`;
}

/** Two significant decimals for a ratio. */
export function ratioText(v) {
  return typeof v === "number" && Number.isFinite(v) ? v.toFixed(2) : "?";
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
  for (const t of [0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100]) if (t >= lo && t <= hi) ticks.push(t);
  if (!ticks.includes(1)) ticks.push(1);
  return { min: lo, max: hi, x, ticks: ticks.sort((p, q) => p - q) };
}

/** What watching cost: a live figure against a quiet one of the same step, or null. */
export function watchingCost(live, quiet) {
  if (!(live > 0 && quiet > 0)) return null;
  const ratio = live / quiet;
  const share = Math.round((1 - ratio) * 100);
  if (Math.abs(share) < 2) return { ratio, sentence: `Watching cost nothing measurable here: live ${live.toFixed(2)} GiB/s against quiet ${quiet.toFixed(2)}.` };
  if (share > 0) return { ratio, sentence: `Watching cost about ${share}% here: the live run gave ${live.toFixed(2)} GiB/s, a quiet run of the same step ${quiet.toFixed(2)} (one run each, so read it as a hint).` };
  return { ratio, sentence: `The live run was ${-share}% faster than the quiet one here (${live.toFixed(2)} against ${quiet.toFixed(2)} GiB/s): single runs vary that much; comparisons use quiet runs.` };
}
