import { test } from "node:test";
import assert from "node:assert/strict";

import { earlierRuns } from "../../theme/pipebook/ipc/history.js";

const run = (mechanism, mib_per_s, finished_at_ms, extra = {}) => ({
  kind: "ipc",
  mechanism,
  mib_per_s,
  bytes: 8 << 20,
  finished_at_ms,
  checksum_ok: true,
  ...extra,
});

test("only this mechanism's verified IPC runs count; pipe results are ignored", () => {
  const history = [
    { step: "write-read", gib_per_s: 3, finished_at_ms: 1 },
    run("posix-shm", 300, 10),
    run("posix-shm", 500, 20),
    run("posix-shm", 400, 30),
    run("posix-shm", 9999, 40, { checksum_ok: false }),
    run("sysv-shm", 800, 50),
    null,
  ];
  const s = earlierRuns(history, "posix-shm");
  assert.equal(s.runs, 3);
  assert.equal(s.best.mib_per_s, 500);
  assert.equal(s.last.finished_at_ms, 30);
});

test("no history, no runs", () => {
  assert.deepEqual(earlierRuns(undefined, "x"), { runs: 0, best: null, last: null });
  assert.deepEqual(earlierRuns([], "x"), { runs: 0, best: null, last: null });
});

import { ipcConfigOf, newestQuietConfig, quietRuns } from "../../theme/pipebook/ipc/history.js";

test("an IPC card compares the quiet runs of one configuration: watched ones and other sizes are left out", () => {
  const ends = [{ role: "producer", counts: {} }, { role: "consumer", counts: {} }];
  const rec = (mib, at, extra = {}) => run("posix-shm", mib, at, { chunk: 65536, ends, watched: false, ...extra });
  const history = [
    rec(300, 1),
    rec(900, 2, { watched: true }),
    rec(310, 3),
    rec(320, 4, { bytes: 16 << 20 }),
    rec(330, 5, { ends: [{ role: "producer", counts: null }, { role: "consumer", counts: null }] }),
    rec(305, 6),
    rec(1, 7, { checksum_ok: false }),
    run("posix-shm", 500, 8),
    rec(305, 6),
    rec(200, 9, { mechanism: "sysv-shm" }),
  ];
  const config = newestQuietConfig(history, "posix-shm");
  assert.deepEqual(config, { mechanism: "posix-shm", bytes: 8 << 20, chunk: 65536, counted: true });
  // The same run twice (the history and the page's own copy) counts once.
  assert.deepEqual(quietRuns(history, config), { quiet: [300, 310, 305], left: 1 });
  assert.equal(ipcConfigOf({ step: "write-read" }), null);
  assert.equal(newestQuietConfig([run("posix-shm", 1, 1)], "posix-shm"), null);
});

import { surveyCell } from "../../theme/pipebook/ipc/history.js";

test("a matrix row's ÷ survey: the median's ratio with its count, and the runner's interval once it has one", () => {
  assert.deepEqual(surveyCell([], 100), { text: "—", comparison: null });
  assert.deepEqual(surveyCell([50], null), { text: "—", comparison: null });
  assert.deepEqual(surveyCell([50], 100), { text: "0.50× (one run)", comparison: null });
  const runs = [300, 320, 310, 305, 315, 312];
  assert.deepEqual(surveyCell(runs, 100), { text: "3.11× (6 runs)", comparison: null });
  // As the runner judged the runs against the rate: its figures, never the page's.
  const j = { method: "signed_rank", n_a: 6, n_b: 6, ratio: 3.11, ci_low: 3.02, ci_high: 3.18, verdict: "faster", min_n: 6 };
  assert.deepEqual(surveyCell(runs, 100, j), { text: "3.11× (3.02 to 3.18, 6 runs)", comparison: j });
  const few = surveyCell(runs.slice(0, 2), 100, { ...j, n_a: 2, n_b: 2, verdict: "too_few", ci_low: null, ci_high: null });
  assert.deepEqual(few, { text: "3.10× (2 runs; an interval needs 6)", comparison: null });
});
