import { test } from "node:test";
import assert from "node:assert/strict";

import { slim, valid, withFresh } from "../../theme/pipebook/store.js";

const r = (step, at, gibs = 1) => ({ step, finished_at_ms: at, gib_per_s: gibs, bytes: 1, elapsed_ms: 1 });

test("the server's history is the source; a fresh result shows until it is listed", () => {
  const server = [r("write-read", 1000), r("busy-loop", 2000)];
  assert.deepEqual(withFresh(server, [r("busy-loop", 2000)]), server);
  assert.deepEqual(withFresh(server, [r("busy-loop", 3000)]).length, 3);
  // Two runs of one step in the same second are two results, not one.
  assert.equal(withFresh([r("busy-loop", 3001)], [r("busy-loop", 3002)]).length, 2);
});

test("slim keeps what the tables need and valid refuses the rest", () => {
  const full = { ...r("write-read", 5, 0.5), options: { writer: {} }, argv: ["pipebench"] };
  assert.deepEqual(Object.keys(slim(full)).sort(), ["bytes", "elapsed_ms", "finished_at_ms", "gib_per_s", "step"]);
  assert.ok(valid(slim(full)));
  assert.ok(!valid(slim({ step: "x", gib_per_s: "fast" })));
  assert.ok(!valid(slim({ step: "x", gib_per_s: 0 })));
});

test("slim keeps whether a run was watched and its sizes, only when the result says them", () => {
  const quiet = slim({ ...r("write-read", 6, 2), watched: false, bytes_per_call: 262144, pipe_capacity: 65536 });
  assert.equal(quiet.watched, false);
  assert.deepEqual([quiet.bytes_per_call, quiet.pipe_capacity], [262144, 65536]);
  const older = slim({ ...r("write-read", 7, 2), pipe_capacity: null });
  assert.ok(!("watched" in older) && !("pipe_capacity" in older));
});
