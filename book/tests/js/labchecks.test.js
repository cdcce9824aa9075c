import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import {
  choiceSides,
  evaluate,
  marginSentence,
  median,
  metric,
  parsePrediction,
  predictionVerdict,
  progress,
  round,
  settle,
} from "../../theme/pipebook/lab/labchecks.js";

const book = JSON.parse(readFileSync(new URL("../../labs/labs.json", import.meta.url)));
const cases = JSON.parse(readFileSync(new URL("../../labs/check-cases.json", import.meta.url)));
const lab = (id) => book.labs.find((l) => l.id === id);

test("the crafted cases' prediction answers are the figures the page reads for the student's prediction", () => {
  assert.ok(cases.length >= 6);
  for (const c of cases.filter((c) => "answer" in c)) {
    const l = lab(c.lab);
    const e = evaluate(l, c.measurements, l.prediction.answer);
    const got = e.number ?? e.choice;
    if (typeof c.answer === "number") assert.ok(Math.abs(got - c.answer) < 1e-9, `${c.name}: answer ${got}`);
    else assert.equal(got, c.answer, `${c.name}: answer`);
  }
});

const run = (task, gibs, extra = {}) => ({
  task,
  result: { gib_per_s: gibs, bytes: 2 ** 30, elapsed_ms: 1000 / gibs, ...extra },
});

test("IPC records: MiB/s is read, CPU per wall second is not made up", () => {
  const ipc = { kind: "ipc", mechanism: "posix-shm", bytes: 2 ** 26, elapsed_ms: 50, gib_per_s: 1.25, mib_per_s: 1280 };
  assert.equal(metric(ipc, "mib_per_s"), 1280);
  assert.equal(metric({ gib_per_s: 2 }, "mib_per_s"), 2048);
  assert.equal(metric(ipc, "cpu_per_wall"), null);
  assert.equal(metric(ipc, "corrupted_share"), null);
});

test("numbers read without exponents", () => {
  assert.equal(round(9.537e-7), "0.0000009537");
  assert.equal(round(2), "2");
  assert.equal(round(1234.5678), "1235");
  assert.equal(round(0.30000000000000004), "0.3");
});

test("medians and settling", () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 2, 3]), 2.5);
  assert.equal(median([]), null);
  assert.equal(settle([3, 1, 1, 1, 1, 1], 0.1), 3);
  assert.equal(settle([1, 2, 1, 2, 3, 3], 0.1), 5);
});

test("predictions are read within the question's bounds", () => {
  assert.deepEqual(parsePrediction(lab("variance"), " 3 "), { value: 3 });
  assert.ok(parsePrediction(lab("variance"), "60").error);
  assert.ok(parsePrediction(lab("variance"), "").error);
  assert.deepEqual(parsePrediction(lab("choose-ipc"), "posix-shm"), { value: "posix-shm" });
  assert.ok(parsePrediction(lab("choose-ipc"), "pigeon").error);
});

test("the verdict compares the prediction with the measurement", () => {
  const l = lab("busy-cost");
  assert.equal(predictionVerdict(l, 1, []), null);
  const cpu = { writer: { user_ms: 1000, system_ms: 0 }, reader: { user_ms: 1000, system_ms: 0 } };
  // As many runs as each task asks for (labs.json).
  const n = l.tasks[0].runs;
  const ms = Array.from({ length: n }, () => run("blocking", 1, cpu)).concat(Array.from({ length: n }, () => ({ task: "busy", result: { gib_per_s: 1, bytes: 2 ** 30, elapsed_ms: 1000, ...cpu } })));
  assert.match(predictionVerdict(l, 2, ms), /you measured 2 CPU s per s \(close\)/);
  assert.match(predictionVerdict(l, 0.5, ms), /far off/);
  assert.equal(progress(l, ms, l.tasks[0]).done, n);
});

test("latency figures are read from latency records only, and the lowest tail wins the choice", () => {
  const lat = (p50, p99) => ({ kind: "latency", p50, p99, mean: p50, ping_cpu_ns: p50, pong_cpu_ns: p50 / 2, ping_sleeps: 1, pong_sleeps: 0.5 });
  assert.equal(metric(lat(2000, 5000), "p99_ns"), 5000);
  assert.equal(metric(lat(2000, 5000), "cpu_ns_per_round_trip"), 3000);
  assert.equal(metric(lat(2000, 5000), "cpu_per_wall"), 1.5);
  assert.equal(metric(lat(2000, 5000), "sleeps_per_round_trip"), 1.5);
  // A pipe or IPC result has no round trips: no figure, never a made-up one.
  assert.equal(metric({ gib_per_s: 1, p50: 3 }, "p50_ns"), null);
  assert.equal(metric({ kind: "ipc", p99: 3 }, "p99_ns"), null);
  const l = lab("latency-tail");
  const ms = [];
  const tails = { pipe: 9000, futex: 8000, "unix-stream": 12000, "pipe-busy": 30000, "shm-ring": 20000 };
  for (const [task, p99] of Object.entries(tails)) for (let i = 0; i < l.tasks[0].runs; i += 1) ms.push({ task, result: lat(p99 / 10, p99) });
  assert.deepEqual(evaluate(l, ms, l.prediction.answer), { choice: "futex" });
  // The choice's margin: the page hands the two tasks' runs to the runner, the lower tail's side second.
  assert.equal(predictionVerdict(l, "futex", ms), "You predicted futex, and futex had the lowest 99th percentile round trip.");
  const sides = choiceSides(l, ms, l.prediction.answer);
  assert.deepEqual([sides.winner, sides.runnerUp, sides.lowest, sides.winnerValues, sides.runnerUpValues], ["futex", "pipe", true, Array(l.tasks[0].runs).fill(8000), Array(l.tasks[0].runs).fill(9000)]);
  // As the runner judged the runner-up over the winner: worded for the winner.
  const j = { method: "rank_sum", n_a: 4, n_b: 4, min_n: 4, ratio: 1.125, ci_low: 1.1, ci_high: 1.15, verdict: "faster" };
  assert.equal(marginSentence(sides, j), "Against the runner-up: futex is 0.8889× pipe, the runner-up (95% interval 0.8696 to 0.9091), so the order is clear.");
  assert.match(marginSentence(sides, { ...j, verdict: "not_resolved", ci_low: 0.9 }), /^Not resolved against the runner-up: .* the interval holds 1\.0/);
  assert.match(marginSentence(sides, { ...j, n_a: 3, n_b: 3, verdict: "too_few" }), /3 runs a side cannot resolve at 95%; at least 4 a side/);
  // Until every candidate has its runs there is no margin to ask for.
  assert.equal(choiceSides(l, ms.slice(1), l.prediction.answer), null);
});

test("a watched run counts in no task's progress where a check reads a figure watching moves", () => {
  const l = lab("busy-cost");
  const quiet = (task, g) => run(task, g, { watched: false });
  const ms = [quiet("blocking", 2), quiet("blocking", 2.1), quiet("blocking", 1.9), quiet("busy", 3), quiet("busy", 3.1), quiet("busy", 2.9)];
  const withWatched = [...ms, ...[1, 1, 1].map((g) => run("blocking", g, { watched: true }))];
  assert.equal(progress(l, withWatched, l.tasks[0]).done, 3);
  // A run that does not say (from before the field) still counts.
  assert.equal(progress(l, [run("blocking", 2)], l.tasks[0]).done, 1);
  // Watching moves no damaged byte: a watched verified run still counts there.
  const safety = lab("vmsplice-safety");
  const verified = { task: "verified", result: { gib_per_s: 2, bytes: 2 ** 30, elapsed_ms: 500, corrupted_bytes: 0, watched: true } };
  assert.equal(progress(safety, [verified], safety.tasks[0]).done, 1);
});
