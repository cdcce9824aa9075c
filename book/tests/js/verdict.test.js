import { test } from "node:test";
import assert from "node:assert/strict";

import { compareSentence, intervalAxis, precheckSentence, watchingCost } from "../../theme/pipebook/verdict.js";

test("the machine check reads as one sentence", () => {
  assert.match(precheckSentence([]), /nothing seen/);
  assert.equal(precheckSentence(["the governor is `powersave`", "boost is on"]), "Machine check: the governor is `powersave`; boost is on.");
  assert.match(precheckSentence(null), /could not look/);
});

// Judgements as the runner sends them (/api/judge, the compare job's verdict):
// the page words them and judges nothing.
const judged = (over = {}) => ({ method: "signed_rank", level: 0.95, design: "fixed", level_this_look: 0.95, n_a: 6, n_b: 6, ratio: 3.1, ci_low: 2.95, ci_high: 3.3, verdict: "faster", min_n: 6, ...over });

test("a comparison's sentence follows the runner's verdict", () => {
  const c = { ratio: 3.1, ci_low: 2.95, ci_high: 3.3, pairs: 6, verdict: "faster" };
  assert.equal(compareSentence(c, "busy-loop", "write-read"), "busy-loop is 3.10× write-read (95% interval 2.95 to 3.30, 6 pairs): busy-loop is faster.");
  assert.match(compareSentence({ ...c, ratio: 0.5, ci_low: 0.4, ci_high: 0.6, verdict: "slower" }, "a", "b"), /a is slower\.$/);
  const open = { ratio: 1.02, ci_low: 0.9, ci_high: 1.2, pairs: 8, verdict: "not_resolved" };
  assert.match(compareSentence(open, "a", "b"), /^Not resolved: a is 1\.02× b .*8 pairs\); the interval holds 1\.0\.$/);
  // Too few pairs: no verdict, and how many the level needs.
  assert.equal(compareSentence({ pairs: 5, n_a: 5, n_b: 5, verdict: "too_few", ratio: 1.1, ci_low: null, ci_high: null, min_n: 6 }, "a", "b"), "5 pairs cannot resolve at 95%: at least 6 are needed.");
  // A look of a sequential design says which look and its level.
  const look = compareSentence({ ...c, design: "sequential", look: 2, looks: 3, level_this_look: 0.978 }, "a", "b");
  assert.match(look, /a is faster\. Look 2 of 3 of a sequential design: each look judges at 97\.8%/);
});

test("the interval's axis always shows 1.0 and keeps the order of values", () => {
  const axis = intervalAxis(2.5, 3.5, 3, 300);
  assert.ok(axis.ticks.includes(1));
  assert.ok(axis.x(1) >= 0 && axis.x(1) < axis.x(2.5) && axis.x(2.5) < axis.x(3) && axis.x(3.5) <= 300);
  const below = intervalAxis(0.4, 0.6, 0.5, 300);
  assert.ok(below.x(0.6) < below.x(1) && below.x(1) <= 300);
});

test("watching's cost is said from a live and a quiet figure", () => {
  assert.equal(watchingCost(null, 2), null);
  assert.match(watchingCost(35.2, 40.3).sentence, /about 13%/);
  assert.match(watchingCost(40, 40.2).sentence, /nothing measurable/);
  assert.match(watchingCost(42, 40).sentence, /faster than quiet/);
});

import { articleSentence, runEvidence } from "../../theme/pipebook/verdict.js";

test("a run card's evidence: the quiet runs of its configuration, and watching's cost", () => {
  const run = (gib_per_s, watched, extra = {}) => ({ step: "write-read", gib_per_s, watched, bytes_per_call: 262144, pipe_capacity: 65536, ...extra });
  const config = { step: "write-read", bytes_per_call: 262144, pipe_capacity: 65536 };
  const results = [
    run(6.1, false),
    run(5.2, true),
    run(5.0, true),
    // Another configuration, another step and a run that does not say how it ran: left out.
    run(30, false, { pipe_capacity: 1048576 }),
    run(30, false, { step: "busy-loop" }),
    { step: "write-read", gib_per_s: 30, bytes_per_call: 262144, pipe_capacity: 65536 },
    // A traced run (slowed by its tracepoints) is its own configuration.
    run(2, false, { traced: true }),
  ];
  const one = runEvidence(results, config);
  assert.deepEqual(one.quiet, [6.1]);
  assert.deepEqual(one.live, [5.2, 5]);
  assert.equal(one.vsArticle, undefined, "the page states no verdict of its own");
  assert.match(one.watching.sentence, /about 16%.*medians of 2 live and 1 quiet runs/);
  assert.deepEqual(runEvidence(results, { ...config, traced: true }).quiet, [2]);
  assert.match(articleSentence(judged({ ratio: 0.36, ci_low: 0.34, ci_high: 0.38, verdict: "slower", n_a: 6 })), /^Quiet runs here are 0\.36× the article's figure \(95% interval 0\.34 to 0\.38, 6 quiet runs\): slower than the article's machine\.$/);
  assert.equal(articleSentence(judged({ n_a: 4, verdict: "too_few", ci_low: null, ci_high: null })), "4 quiet runs cannot resolve at 95%: at least 6 are needed.");
});

import { bestAgainstWorst, bestWorstSentence } from "../../theme/pipebook/verdict.js";

test("a sweep's best against its worst: by median, the two sets handed to the runner", () => {
  const name = (v) => `${v / 1024} KiB`;
  assert.equal(bestAgainstWorst(new Map([[4096, [1, 2]]])), null);
  const bw = bestAgainstWorst(new Map([[4096, [3, 4]], [65536, [9, 8]], [262144, [7]]]));
  assert.deepEqual([bw.best, bw.worst, bw.bestRates, bw.worstRates], [65536, 4096, [9, 8], [3, 4]]);
  const j = judged({ method: "rank_sum", n_a: 4, n_b: 4, min_n: 4, ratio: 1.79, ci_low: 1.5, ci_high: 2.1 });
  assert.match(bestWorstSentence(j, bw, name), /^Best 64 KiB is 1\.79× worst 4 KiB \(95% interval 1\.50 to 2\.10, 4 and 4 runs\): resolved\.$/);
  assert.equal(bestWorstSentence(judged({ method: "rank_sum", n_a: 2, n_b: 3, min_n: 4, verdict: "too_few" }), bw, name), "2 runs a side cannot resolve at 95%: at least 4 a side are needed.");
});

import { ratioText } from "../../theme/pipebook/verdict.js";

test("small ratios keep two significant digits, and their axis has ticks", () => {
  assert.equal(ratioText(3.1), "3.10");
  assert.equal(ratioText(0.0134), "0.013");
  assert.equal(ratioText(Number.NaN), "?");
  const axis = intervalAxis(0.011, 0.014, 0.013, 300);
  assert.ok(axis.ticks.includes(0.01) && axis.ticks.includes(1), `${axis.ticks}`);
});

import { BASELINE, baselineEvidence, baselineSentence } from "../../theme/pipebook/verdict.js";

test("a step against the baseline: the quiet runs of each configuration, worded as the runner judged them", () => {
  const run = (step, gib_per_s, watched, extra = {}) => ({ step, gib_per_s, watched, bytes_per_call: 262144, pipe_capacity: 65536, ...extra });
  const mine = { step: "busy-loop", bytes_per_call: 262144, pipe_capacity: 65536 };
  const base = { step: BASELINE, bytes_per_call: 262144, pipe_capacity: 65536 };
  const results = [
    run("busy-loop", 40, false),
    run(BASELINE, 4, false),
    // Watched runs, another configuration and a run that does not say how it ran: left out.
    run("busy-loop", 20, true),
    run(BASELINE, 40, true),
    run(BASELINE, 9, false, { pipe_capacity: 1048576 }),
    { step: BASELINE, gib_per_s: 40, bytes_per_call: 262144, pipe_capacity: 65536 },
  ];
  const one = baselineEvidence(results, mine, base);
  assert.deepEqual([one.mine, one.base], [[40], [4]]);
  assert.match(baselineSentence(null, one, "busy-loop"), /^Quiet runs so far: 1 of busy-loop and 1 of write-read, the baseline\./);
  assert.match(baselineSentence(null, one, "busy-loop", base), /1 of write-read, the baseline \(256 KiB a call, a 64 KiB pipe\)\./);
  const j = judged({ method: "rank_sum", n_a: 4, n_b: 5, min_n: 4, ratio: 10, ci_low: 9.5, ci_high: 10.5 });
  assert.equal(baselineSentence(j, one, "busy-loop"), "busy-loop is 10.00× write-read, the baseline (95% interval 9.50 to 10.50, 4 and 5 quiet runs): faster than the baseline.");
  assert.match(baselineSentence({ ...j, verdict: "slower" }, one, BASELINE), /: slower than the baseline\.$/);
  assert.match(baselineSentence({ ...j, verdict: "not_resolved" }, one, "busy-loop"), /^Not resolved: .*the interval holds 1\.0\.$/);
  assert.equal(baselineSentence({ ...j, n_a: 3, verdict: "too_few" }, one, "busy-loop"), "3 quiet runs a side cannot resolve at 95%: at least 4 a side are needed.");
  // A head-to-head (the compare job's pairs) is worded in pairs; a look of a
  // sequential design names its interval at that look's level.
  const pairs = judged({ n_a: 6, n_b: 6, ratio: 10, ci_low: 9.5, ci_high: 10.5, design: "sequential", look: 1, looks: 2, level_this_look: 0.99 });
  assert.match(baselineSentence(pairs, null, "busy-loop", base), /^busy-loop is 10\.00× write-read, the baseline \(256 KiB a call, a 64 KiB pipe\) \(99\.0% interval 9\.50 to 10\.50, 6 pairs\): faster than the baseline\. Look 1 of 2 /);
});

import { articleColumn } from "../../theme/pipebook/verdict.js";

test("the results table's ÷ article takes the quiet runs of the step's newest quiet sizes, for the runner to judge", () => {
  const r = (gib_per_s, watched, extra = {}) => ({ step: "write-read", gib_per_s, bytes_per_call: 262144, pipe_capacity: 65536, ...(watched === undefined ? {} : { watched }), ...extra });
  assert.equal(articleColumn([r(3, false)], "write-read", null), null);
  // Watched runs only: nothing compared, and it says how many were left out.
  const none = articleColumn([r(3, true), r(3.1, true)], "write-read", 3.3);
  assert.deepEqual([none.quiet, none.left, none.ratio, none.runs], [0, 2, null, []]);
  // One quiet run: its ratio.
  const one = articleColumn([r(9, true), r(3, false)], "write-read", 6);
  assert.deepEqual([one.quiet, one.left, one.ratio], [1, 1, 0.5]);
  // The watched run far faster moves nothing; a traced run and other sizes are left out too.
  const rows = [r(20, true), r(3, false), r(3.2, false), r(2.8, false), r(1, false, { traced: true }), r(30, false, { pipe_capacity: 1048576 }), r(3.1, false)];
  const col = articleColumn(rows, "write-read", 6);
  assert.deepEqual(col.config, { step: "write-read", bytes_per_call: 262144, pipe_capacity: 65536 });
  assert.deepEqual([col.quiet, col.left, col.runs, col.article], [4, 3, [3, 3.2, 2.8, 3.1], 6]);
});

test("a tuned variant is set against its own step, every other step against the baseline", async () => {
  const { baseOf, baselineSentence } = await import("../../theme/pipebook/verdict.js");
  assert.equal(baseOf("tuned-busy-loop"), "busy-loop");
  assert.equal(baseOf("busy-loop"), "write-read");
  assert.equal(baseOf(undefined), "write-read");
  const sentence = baselineSentence(judged({ method: "rank_sum", n_a: 4, n_b: 4, min_n: 4 }), { mine: [], base: [] }, "tuned-busy-loop", {}, "busy-loop");
  assert.match(sentence, /^tuned-busy-loop is 3\.10× busy-loop, its step's own configuration \(95% interval/);
  assert.doesNotMatch(sentence, /baseline/);
});
