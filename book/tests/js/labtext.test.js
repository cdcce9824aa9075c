import { test } from "node:test";
import assert from "node:assert/strict";

import { outcomeOf } from "../../theme/pipebook/lab/labchecks.js";
import { LAB_WORDS, assumesText, resultFigure, statusWord, taskText } from "../../theme/pipebook/lab/labtext.js";

test("a task says in one line what it runs: a step, a sweep, an IPC mechanism or a latency configuration", () => {
  assert.equal(taskText({ step: "vmsplice", params: { verify: true } }), `vmsplice${LAB_WORDS.everyByte}`);
  assert.equal(taskText({ step: "baseline", sweep: { param: "buf_size", values: [65536, 1048576] } }), "baseline, buf_size over 64 KiB, 1 MiB");
  assert.equal(taskText({ mechanism: "pipe" }), `IPC pipe, ${LAB_WORDS.runnersDefault} unless capped`);
  assert.match(taskText({ latency: { mechanism: "pipe", mode: "busy", size: 64, round_trips: 1000 } }), /^latency pipe, busy, 64 B messages, 1000 round trips/);
});

test("a result's headline is its GiB/s, or a latency run's median and 99th percentile", () => {
  assert.equal(resultFigure({ gib_per_s: 3.14159 }), "3.14 GiB/s");
  assert.match(resultFigure({ kind: "latency", p50: 5000, p99: 9000 }), /^median .+, 99th percentile .+$/);
});

test("a check that assumes a kernel behaviour says what this machine's probe found", () => {
  const check = { when: { probe: "vmsplice", answer: "maps-pages" } };
  assert.equal(assumesText({}, {}), null);
  assert.equal(assumesText(check, {}), "Assumes vmsplice: maps-pages.");
  assert.match(assumesText(check, { assumes: { measured: "unknown" } }), /could not tell/);
  assert.match(assumesText(check, { assumes: { measured: "copies-pages" } }), /probe says: copies-pages\.$/);
  assert.equal(statusWord("not_resolved"), LAB_WORDS.notResolved);
  assert.equal(statusWord("pass"), "pass");
});

test("a check shows the runner's outcome, from a list or a map, and is pending without one", () => {
  const check = { id: "ratio" };
  const judged = { id: "ratio", status: "pass", detail: "2.1×" };
  assert.equal(outcomeOf([judged], check, true), judged);
  assert.equal(outcomeOf({ ratio: judged }, check, true), judged);
  assert.deepEqual(outcomeOf(null, check, true), { id: "ratio", status: "pending", detail: LAB_WORDS.waitingCheck });
  assert.equal(outcomeOf([{ id: "ratio" }], check, false).detail, LAB_WORDS.offlineCheck);
});
