import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import {
  COUNT_METRICS,
  choiceMargin,
  evaluate,
  judge,
  judgeAll,
  median,
  metric,
  parsePrediction,
  predictionVerdict,
  progress,
  round,
  settle,
} from "../../theme/pipebook/labchecks.js";

const book = JSON.parse(readFileSync(new URL("../../labs/labs.json", import.meta.url)));
const cases = JSON.parse(readFileSync(new URL("../../labs/check-cases.json", import.meta.url)));
const lab = (id) => book.labs.find((l) => l.id === id);

test("the server's crafted cases judge the same here", () => {
  assert.ok(cases.length >= 6);
  for (const c of cases) {
    const l = lab(c.lab);
    for (const [id, expect] of Object.entries(c.expect)) {
      const got = judge(l, c.measurements, l.checks.find((x) => x.id === id));
      assert.equal(got.status, expect.status, `${c.name}: ${id}: ${got.detail}`);
      if (typeof expect.value === "number") assert.ok(Math.abs(got.value - expect.value) < 1e-9, `${c.name}: ${id}: ${got.value}`);
      for (const key of ["ci_low", "ci_high"]) {
        if (typeof expect[key] === "number") assert.ok(Math.abs(got[key] - expect[key]) < 1e-9, `${c.name}: ${id}: ${key} ${got[key]}`);
      }
      if ("more_runs" in expect) assert.equal(got.more_runs, expect.more_runs, `${c.name}: ${id}: more_runs`);
    }
    if ("answer" in c) {
      const e = evaluate(l, c.measurements, l.prediction.answer);
      const got = e.number ?? e.choice;
      if (typeof c.answer === "number") assert.ok(Math.abs(got - c.answer) < 1e-9, `${c.name}: answer ${got}`);
      else assert.equal(got, c.answer, `${c.name}: answer`);
    }
  }
});

test("each of the six step and IPC labs judges a count, and the cases make it pass, fail and be unavailable", () => {
  for (const id of ["variance", "sizes", "vmsplice-safety", "huge-pages", "busy-cost", "choose-ipc"]) {
    const counted = lab(id).checks.filter((c) => COUNT_METRICS.has(c.measure.metric));
    assert.ok(counted.length > 0, `${id} judges no count`);
    for (const check of counted) {
      const seen = new Set(cases.filter((c) => c.lab === id && c.expect[check.id]).map((c) => c.expect[check.id].status));
      for (const status of ["pass", "fail", "unavailable"]) {
        assert.ok(seen.has(status), `${id}/${check.id}: no crafted case is ${status}: ${[...seen]}`);
      }
    }
  }
});

const run = (task, gibs, extra = {}) => ({
  task,
  result: { gib_per_s: gibs, bytes: 2 ** 30, elapsed_ms: 1000 / gibs, ...extra },
});

test("a ratio check passes, fails and waits on crafted measurements", () => {
  const l = lab("busy-cost");
  const check = l.checks.find((c) => c.id === "busy-not-slower");
  const blocking = [1, 1, 1].map((g) => run("blocking", g));
  assert.equal(judge(l, blocking, check).status, "pending");
  assert.match(judge(l, blocking, check).detail, /“busy” has 0 of its 3 runs/);
  const fast = [...blocking, ...[2, 2, 2].map((g) => run("busy", g))];
  assert.deepEqual(
    [judge(l, fast, check).status, judge(l, fast, check).value],
    ["pass", 2],
  );
  const slow = [...blocking, ...[0.5, 0.5, 0.5].map((g) => run("busy", g))];
  assert.equal(judge(l, slow, check).status, "fail");
});

test("IPC records: MiB/s is read, CPU per wall second is not made up", () => {
  const ipc = { kind: "ipc", mechanism: "posix-shm", bytes: 2 ** 26, elapsed_ms: 50, gib_per_s: 1.25, mib_per_s: 1280 };
  assert.equal(metric(ipc, "mib_per_s"), 1280);
  assert.equal(metric({ gib_per_s: 2 }, "mib_per_s"), 2048);
  assert.equal(metric(ipc, "cpu_per_wall"), null);
  assert.equal(metric(ipc, "corrupted_share"), null);
  const l = lab("choose-ipc");
  const check = l.checks.find((c) => c.id === "fd-passing-is-cheap");
  const rec = (task, mib) => ({ task, result: { ...ipc, mechanism: task, mib_per_s: mib, gib_per_s: mib / 1024 } });
  const shm = [1000, 1000, 1000].map((m) => rec("posix-shm", m));
  assert.equal(judge(l, shm, check).status, "pending");
  const memfd = (m) => [m, m, m].map((x) => rec("memfd-scm", x));
  assert.equal(judge(l, [...shm, ...memfd(900)], check).status, "pass");
  assert.equal(judge(l, [...shm, ...memfd(500)], check).status, "fail");
});

test("a run without the figure a check reads fails and names it", () => {
  const l = lab("huge-pages");
  const ms = [1, 1, 1].map((g) => run("huge", g)).concat([1, 1, 1].map((g) => run("small", g)));
  const [gotHuge] = judgeAll(l, ms);
  assert.equal(gotHuge.status, "fail");
  assert.match(gotHuge.detail, /share of huge pages/);
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
  const ms = [1, 1, 1].map(() => run("blocking", 1, cpu)).concat([1, 1, 1].map(() => ({ task: "busy", result: { gib_per_s: 1, bytes: 2 ** 30, elapsed_ms: 1000, ...cpu } })));
  assert.match(predictionVerdict(l, 2, ms), /you measured 2 CPU s per s \(close\)/);
  assert.match(predictionVerdict(l, 0.5, ms), /far off/);
  assert.equal(progress(l, ms, l.tasks[0]).done, 3);
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
  for (const [task, p99] of Object.entries(tails)) for (let i = 0; i < 3; i += 1) ms.push({ task, result: lat(p99 / 10, p99) });
  assert.deepEqual(evaluate(l, ms, l.prediction.answer), { choice: "futex" });
  // The choice says how sure it is: the winner against the runner-up, on the checks' interval.
  const clear = "Against the runner-up: futex is 0.8889× pipe, the runner-up (95% interval 0.8889 to 0.8889), so the order is clear.";
  assert.equal(predictionVerdict(l, "futex", ms), `You predicted futex, and futex had the lowest 99th percentile round trip. ${clear}`);
  assert.equal(predictionVerdict(l, "shm-ring", ms), `You predicted shm-ring; futex had the lowest 99th percentile round trip here. ${clear}`);
  // Tails that overlap: futex still has the lowest median p99, but not clearly.
  const close = ms.map((m) => (m.task === "pipe" ? { ...m, result: lat(800, [7000, 8500, 9500][ms.indexOf(m) % 3]) } : m));
  const margin = choiceMargin(l, close, l.prediction.answer);
  assert.equal(margin.winner, "futex");
  assert.equal(margin.runnerUp, "pipe");
  assert.ok(margin.low < 1 && margin.high > 1 && !margin.resolved, JSON.stringify(margin));
  assert.match(predictionVerdict(l, "futex", close), /Not resolved against the runner-up: futex is .* the interval holds 1\.0/);
  // Until every candidate has its runs there is no margin to state.
  assert.equal(choiceMargin(l, ms.slice(1), l.prediction.answer), null);
});

test("a watched run counts in no check and no task's progress, and a pending check says it was left out", () => {
  const l = lab("busy-cost");
  const check = l.checks.find((c) => c.id === "busy-not-slower");
  const quiet = (task, g) => run(task, g, { watched: false });
  const ms = [quiet("blocking", 2), quiet("blocking", 2.1), quiet("blocking", 1.9), quiet("busy", 3), quiet("busy", 3.1), quiet("busy", 2.9)];
  const before = judge(l, ms, check);
  // Older watched runs far slower: with them the median would move; without, nothing does.
  const withWatched = [...ms, ...[1, 1, 1].map((g) => run("blocking", g, { watched: true }))];
  const after = judge(l, withWatched, check);
  assert.deepEqual([after.status, after.value, after.ci_low, after.ci_high], [before.status, before.value, before.ci_low, before.ci_high]);
  assert.equal(progress(l, withWatched, l.tasks[0]).done, 3);
  // A run that does not say (from before the field) still counts.
  assert.equal(progress(l, [run("blocking", 2)], l.tasks[0]).done, 1);
  const short = [quiet("blocking", 2), quiet("blocking", 2.1), run("blocking", 2, { watched: true }), ...ms.slice(3)];
  const pending = judge(l, short, check);
  assert.equal(pending.status, "pending");
  assert.match(pending.detail, /has 2 of its 3 runs \(1 watched run left out/);
  assert.equal(progress(l, short, l.tasks[0]).done, 2);
  // Watching moves no damaged byte: a watched verified run still counts there.
  const safety = lab("vmsplice-safety");
  const clean = safety.checks.find((c) => c.id === "double-buffer-clean");
  const verified = { task: "verified", result: { gib_per_s: 2, bytes: 2 ** 30, elapsed_ms: 500, corrupted_bytes: 0, watched: true } };
  assert.equal(judge(safety, [verified], clean).status, "pass");
  assert.equal(progress(safety, [verified], safety.tasks[0]).done, 1);
});

test("the latency labs judge every ratio of round trips on its interval, and the cases give pass, fail and not resolved", () => {
  for (const id of ["latency-tail", "latency-cpu"]) {
    for (const check of lab(id).checks.filter((c) => c.measure.op === "ratio" && /_ns$/.test(c.measure.metric))) {
      const seen = new Set(cases.filter((c) => c.lab === id && c.expect[check.id]).map((c) => c.expect[check.id].status));
      const judged = cases.filter((c) => c.lab === id && c.expect[check.id]).map((c) => judge(lab(id), c.measurements, check));
      // Every judgement of a full set of runs states its interval.
      for (const j of judged.filter((j) => j.status !== "pending")) assert.ok(j.ci_low > 0 && j.ci_high >= j.ci_low, `${id}/${check.id}: ${j.detail}`);
      assert.ok(seen.has("pass") && seen.has("fail"), `${id}/${check.id}: ${[...seen]}`);
    }
  }
  const seen = new Set(cases.filter((c) => c.lab === "latency-tail").flatMap((c) => Object.values(c.expect).map((e) => e.status)));
  assert.ok(seen.has("not_resolved"), [...seen].join());
});
