import { test } from "node:test";
import assert from "node:assert/strict";

import { compareSentence, intervalAxis, precheckSentence, watchingCost } from "../../theme/pipebook/verdict.js";

test("the machine check reads as one sentence", () => {
  assert.match(precheckSentence([]), /nothing seen/);
  assert.equal(precheckSentence(["the governor is `powersave`", "boost is on"]), "Machine check: the governor is `powersave`; boost is on.");
  assert.match(precheckSentence(null), /could not look/);
});

test("a comparison's sentence follows its verdict", () => {
  const c = { ratio: 3.1, ci_low: 2.95, ci_high: 3.3, pairs: 5, verdict: "faster", more_pairs: 0 };
  assert.equal(compareSentence(c, "busy-loop", "write-read"), "busy-loop is 3.10× write-read (95% interval 2.95 to 3.30, 5 pairs): busy-loop is faster.");
  assert.match(compareSentence({ ...c, ratio: 0.5, ci_low: 0.4, ci_high: 0.6, verdict: "slower" }, "a", "b"), /a is slower\.$/);
  const open = { ratio: 1.02, ci_low: 0.9, ci_high: 1.2, pairs: 3, verdict: "not_resolved", more_pairs: 12 };
  assert.match(compareSentence(open, "a", "b"), /^Not resolved: .*about 12 more pairs/);
  assert.match(compareSentence({ ...open, more_pairs: 0 }, "a", "b"), /rules out a difference of 10%/);
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

import { readFileSync } from "node:fs";
import { compareRuns, compareWithFigure, judge, morePairs } from "../../theme/pipebook/verdict.js";

const vectors = JSON.parse(readFileSync(new URL("../compare-vectors.json", import.meta.url)));

test("comparisons on crafted runs: the verdicts and figures the runner's Rust gives", () => {
  // pipebench's stats tests hold the runner to the same file.
  assert.ok(vectors.cases.length >= 6);
  for (const c of vectors.cases) {
    const got = compareRuns(c.a, c.b, { paired: c.paired });
    assert.equal(got.verdict, c.verdict, c.name);
    assert.equal(got.more_pairs, c.more_pairs, c.name);
    for (const k of ["ratio", "ci_low", "ci_high"]) assert.ok(Math.abs(got[k] - c[k]) < 1e-9, `${c.name}: ${k} ${got[k]}`);
  }
  const outcomes = new Set(vectors.cases.map((c) => c.verdict));
  assert.deepEqual([...outcomes].sort(), ["faster", "not_resolved", "slower"]);
});

test("runs against a published figure are the runs' own interval over the figure", () => {
  const runs = [6.1, 5.8, 6.4, 6.0];
  const got = compareWithFigure(runs, 17);
  assert.equal(got.verdict, "slower");
  assert.ok(got.ci_low >= 5.8 / 17 - 1e-12 && got.ci_high <= 6.4 / 17 + 1e-12);
  assert.ok(Math.abs(got.ratio - 6.05 / 17) < 1e-12);
  assert.equal(compareWithFigure(runs, null), null);
  assert.equal(compareWithFigure([6.1], 17), null);
});

test("judging and sizing an interval as the runner does", () => {
  assert.equal(judge(1.2, 1.5, 1.1), "faster");
  assert.equal(judge(0.5, 0.9, 1.1), "slower");
  assert.equal(judge(1.0, 1.3, 1.1), "not_resolved");
  assert.equal(judge(0.9, 1.1), "not_resolved");
  // Half-width ln(1.21)/2 = ln(1.1): enough; twice that needs four times the runs.
  assert.equal(morePairs(5, 1.0, 1.21), 0);
  assert.equal(morePairs(5, 1.0, 1.21 ** 2), 15);
});

import { articleSentence, runEvidence } from "../../theme/pipebook/verdict.js";

test("a run card's evidence: quiet runs of its configuration against the article, and watching's cost", () => {
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
  const one = runEvidence(results, config, 17);
  assert.deepEqual(one.quiet, [6.1]);
  assert.deepEqual(one.live, [5.2, 5]);
  assert.equal(one.vsArticle, null, "one quiet run has no interval");
  assert.match(one.watching.sentence, /about 16%.*medians of 2 live and 1 quiet runs/);
  const two = runEvidence([...results, run(5.8, false), run(6.4, false), run(6.0, false)], config, 17);
  assert.equal(two.vsArticle.verdict, "slower");
  assert.match(articleSentence(two.vsArticle, two.quiet.length), /^4 quiet runs here are 0\.36× the article's figure \(95% interval 0\.\d\d to 0\.\d\d\): slower/);
  assert.equal(runEvidence(results, config, null).vsArticle, null);
  assert.deepEqual(runEvidence(results, { ...config, traced: true }, 17).quiet, [2]);
  const open = runEvidence([run(15, false), run(19.5, false), run(16.2, false), run(18.4, false)], config, 17);
  assert.match(articleSentence(open.vsArticle, 4), /^Not resolved: .*about 4 more quiet runs/);
});

import { bestAgainstWorst, bestWorstSentence } from "../../theme/pipebook/verdict.js";

test("a sweep's best against its worst: by median, an interval from two runs each", () => {
  const name = (v) => `${v / 1024} KiB`;
  assert.equal(bestAgainstWorst(new Map([[4096, [1, 2]]])), null);
  const one = bestAgainstWorst(new Map([[4096, [3]], [65536, [9]], [262144, [7]]]));
  assert.deepEqual([one.best, one.worst, one.comparison], [65536, 4096, null]);
  assert.match(bestWorstSentence(one, name), /with 2 or more runs of each/);
  // The sweep-repeats case of the shared vectors: best clears worst.
  const sweep = vectors.cases.find((c) => c.name.startsWith("sweep repeats"));
  const two = bestAgainstWorst(new Map([[4096, sweep.b], [65536, sweep.a], [16384, [15, 15.5]]]));
  assert.deepEqual([two.best, two.worst, two.comparison.verdict], [65536, 4096, "faster"]);
  assert.ok(Math.abs(two.comparison.ci_low - sweep.ci_low) < 1e-9);
  assert.match(bestWorstSentence(two, name), /^Resolved: best 64 KiB is 1\.79× worst 4 KiB \(95% interval/);
  const close = bestAgainstWorst(new Map([[1, [10, 14]], [2, [11, 13]]]));
  assert.match(bestWorstSentence(close, String), /^Not resolved: .*about 12 more runs of each/);
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

test("a step against the baseline: quiet runs of each configuration, judged by the one definition", () => {
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
  assert.equal(one.vsBaseline, null, "one quiet run a side has no interval");
  assert.match(baselineSentence(one, "busy-loop"), /^Quiet runs so far: 1 of busy-loop and 1 of write-read, the baseline\./);
  assert.match(baselineSentence(one, "busy-loop", base), /1 of write-read, the baseline \(256 KiB a call, a 64 KiB pipe\)\./);
  const more = [...results, run("busy-loop", 41, false), run("busy-loop", 39, false), run(BASELINE, 4.2, false), run(BASELINE, 3.9, false)];
  const two = baselineEvidence(more, mine, base);
  // Exactly compareRuns over the two sets: no second statistic.
  assert.deepEqual(two.vsBaseline, compareRuns([40, 41, 39], [4, 4.2, 3.9]));
  assert.equal(two.vsBaseline.verdict, "faster");
  assert.match(baselineSentence(two, "busy-loop"), /^busy-loop is 10\.00× write-read, the baseline; 95% interval \d+\.\d\d to \d+\.\d\d, 3 and 3 quiet runs: faster than the baseline\.$/);
  const slower = baselineEvidence(more, base, mine);
  assert.equal(slower.vsBaseline.verdict, "slower");
  assert.match(baselineSentence(slower, BASELINE), /: slower than the baseline\.$/);
  const noisy = [run("busy-loop", 3, false), run("busy-loop", 5, false), run(BASELINE, 4.5, false), run(BASELINE, 3.5, false)];
  const open = baselineEvidence(noisy, mine, base);
  assert.equal(open.vsBaseline.verdict, "not_resolved");
  assert.match(baselineSentence(open, "busy-loop"), /^Not resolved: .*About \d+ more quiet runs of each would resolve a 10% difference/);
});

import { articleColumn, surveySentence } from "../../theme/pipebook/verdict.js";

test("the results table's ÷ article takes the quiet runs of the step's newest quiet sizes, with an interval from two", () => {
  const r = (gib_per_s, watched, extra = {}) => ({ step: "write-read", gib_per_s, bytes_per_call: 262144, pipe_capacity: 65536, ...(watched === undefined ? {} : { watched }), ...extra });
  assert.equal(articleColumn([r(3, false)], "write-read", null), null);
  // Watched runs only: nothing compared, and it says how many were left out.
  const none = articleColumn([r(3, true), r(3.1, true)], "write-read", 3.3);
  assert.deepEqual([none.quiet, none.left, none.ratio, none.vsArticle], [0, 2, null, null]);
  // One quiet run: its ratio, no interval.
  const one = articleColumn([r(9, true), r(3, false)], "write-read", 6);
  assert.deepEqual([one.quiet, one.left, one.ratio, one.vsArticle], [1, 1, 0.5, null]);
  // The watched run far faster moves nothing; a traced run and other sizes are left out too.
  const rows = [r(20, true), r(3, false), r(3.2, false), r(2.8, false), r(1, false, { traced: true }), r(30, false, { pipe_capacity: 1048576 }), r(3.1, false)];
  const col = articleColumn(rows, "write-read", 6);
  assert.deepEqual(col.config, { step: "write-read", bytes_per_call: 262144, pipe_capacity: 65536 });
  assert.equal(col.quiet, 4);
  assert.equal(col.left, 3);
  const quiet = [3, 3.2, 2.8, 3.1];
  assert.deepEqual(col.vsArticle, compareWithFigure(quiet, 6));
  assert.equal(col.vsArticle.verdict, "slower");
  assert.ok(col.vsArticle.ci_low < 0.525 && col.vsArticle.ci_high > 0.5, JSON.stringify(col.vsArticle));
});

test("an IPC card's quiet runs against the survey are worded as the run card's against the article", () => {
  const c = compareWithFigure([100, 110, 90, 105], 400);
  assert.match(surveySentence(c, 4), /^4 quiet runs here are 0\.2\d× the survey's rate \(95% interval 0\.\d\d to 0\.\d\d\): slower than the survey's machine\.$/);
  assert.equal(surveySentence(null, 0), "");
});

test("a tuned variant is set against its own step, every other step against the baseline", async () => {
  const { baseOf, baselineEvidence, baselineSentence } = await import("../../theme/pipebook/verdict.js");
  assert.equal(baseOf("tuned-busy-loop"), "busy-loop");
  assert.equal(baseOf("busy-loop"), "write-read");
  assert.equal(baseOf(undefined), "write-read");
  const run = (step, gib) => ({ step, gib_per_s: gib, watched: false });
  const results = [run("tuned-busy-loop", 50), run("busy-loop", 40), run("tuned-busy-loop", 51), run("busy-loop", 41), run("tuned-busy-loop", 52), run("busy-loop", 40.5)];
  const e = baselineEvidence(results, { step: "tuned-busy-loop" }, { step: "busy-loop" });
  assert.equal(e.mine.length, 3);
  assert.equal(e.base.length, 3);
  const sentence = baselineSentence(e, "tuned-busy-loop", {}, "busy-loop");
  assert.match(sentence, /^tuned-busy-loop is \d+\.\d\d× busy-loop, its step's own configuration; 95% interval \d+\.\d\d to \d+\.\d\d, 3 and 3 quiet runs: /);
  assert.doesNotMatch(sentence, /baseline/);
});
