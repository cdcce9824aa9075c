import { test } from "node:test";
import assert from "node:assert/strict";

import { ipcProgress } from "../../theme/pipebook/ipc/progress.js";

const MIB = 1 << 20;

test("before the first byte the runner is setting up", () => {
  const p = ipcProgress({ bytes: 0, elapsed_ms: 40, gib_per_s: 0 }, 200 * MIB);
  assert.equal(p.fraction, 0);
  assert.match(p.text, /^Setting up/);
  assert.match(p.text, /40 ms/);
});

test("bytes received, share of the total and the recent rate", () => {
  const p = ipcProgress({ bytes: 50 * MIB, elapsed_ms: 120, gib_per_s: 1 }, 200 * MIB);
  assert.equal(p.fraction, 0.25);
  assert.equal(p.text, "Received 50 MiB of 200 MiB (25%), lately 1024.0 MiB/s (120 ms)…");
});

test("the bar never overflows and a missing total leaves it indeterminate", () => {
  assert.equal(ipcProgress({ bytes: 300 * MIB, elapsed_ms: 1 }, 200 * MIB).fraction, 1);
  const open = ipcProgress({ bytes: 3 * MIB, elapsed_ms: 5, gib_per_s: 0 }, null);
  assert.equal(open.fraction, null);
  assert.equal(open.text, "Received 3 MiB (5 ms)…");
  assert.equal(ipcProgress({}, undefined).fraction, null);
});
