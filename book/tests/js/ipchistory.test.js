import { test } from "node:test";
import assert from "node:assert/strict";

import { earlierRuns } from "../../theme/pipebook/ipchistory.js";

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
