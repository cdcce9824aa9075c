import { test } from "node:test";
import assert from "node:assert/strict";

import { begin, buttonText, isBusy, step } from "../../theme/pipebook/runlife.js";

const fold = (state, ...events) => events.reduce(step, state);

test("a run goes connecting, queued, running, done, and the form is locked meanwhile", () => {
  let s = begin({ seconds: 4 });
  assert.equal(s.phase, "connecting");
  assert.ok(isBusy(s.phase));
  s = step(s, { type: "queued", position: 2 });
  assert.equal(s.phase, "queued");
  assert.match(s.status, /place 2 in the queue/);
  assert.equal(step(s, { type: "queued", position: 0 }).status, "Queued…");
  s = step(s, { type: "started", warnings: ["only one CPU"] });
  assert.equal(s.phase, "running");
  assert.equal(s.status, "Running for up to 4 s…");
  assert.deepEqual(s.warnings, ["only one CPU"]);
  assert.equal(buttonText(s.phase), "Running…");
  s = step(s, { type: "result", run: 1, bytes: 2 ** 30, elapsed_ms: 1500 });
  assert.equal(s.phase, "done");
  assert.equal(s.status, "Done: 1 GiB in 1.50 s.");
  assert.ok(!isBusy(s.phase));
  assert.equal(buttonText(s.phase), "Run this step");
});

test("a quiet run says the result comes at the end", () => {
  const s = step(begin({ seconds: 2, quiet: true }), { type: "started" });
  assert.match(s.status, /^Quiet run: up to 2 s/);
  assert.deepEqual(s.warnings, []);
});

test("progress: the live figure is the average so far, the chart gets a point per stretch", () => {
  let s = begin({ seconds: 4 });
  s = step(s, { type: "progress", bytes: 2 ** 29, elapsed_ms: 500, gib_per_s: 1.2, pipe_bytes: 65536 });
  assert.equal(s.phase, "running");
  assert.equal(s.progressCount, 1);
  assert.equal(s.live, "1.00");
  assert.deepEqual(s.chartPoint, [0.5, 1.2]);
  assert.equal(s.pipeBytes, 65536);
  // 50 ms later: too short a stretch for a chart point.
  s = step(s, { type: "progress", bytes: 2 ** 29 + 2 ** 20, elapsed_ms: 550, gib_per_s: 1 });
  assert.equal(s.chartPoint, null);
  assert.equal(s.pipeBytes, 65536, "a progress message without pipe_bytes keeps the last");
  // 200 ms after the first: the rate over the stretch (0.5 GiB in 0.2 s... here 2^28 B).
  s = step(s, { type: "progress", bytes: 2 ** 29 + 2 ** 28, elapsed_ms: 700, gib_per_s: 1 });
  assert.equal(s.progressCount, 3);
  assert.equal(s.chartPoint[0], 0.7);
  assert.ok(Math.abs(s.chartPoint[1] - 1.25) < 1e-9, `${s.chartPoint}`);
  assert.match(s.status, /^Running: 0\.7 s of 4 s, 768 MiB through the pipe\.$/);
});

test("cancel and error end the run; the state given is never changed", () => {
  const s = begin({ seconds: 4 });
  const cancelled = fold(s, { type: "started" }, { type: "cancelled" });
  assert.equal(cancelled.phase, "cancelled");
  assert.equal(cancelled.status, "Cancelled. Nothing is left running.");
  const failed = step(s, { type: "error", message: "the writer failed" });
  assert.equal(failed.phase, "error");
  assert.equal(failed.status, "Error: the writer failed");
  assert.equal(s.phase, "connecting");
});

test("a result's saved message says whether the history kept it, and why not", () => {
  const done = fold(begin({ seconds: 1 }), { type: "started" }, { type: "result", run: 1, bytes: 1024, elapsed_ms: 2 });
  assert.equal(done.saved, null);
  assert.equal(done.savedText, "");
  const kept = step(done, { type: "saved", store: "history", ok: true });
  assert.equal(kept.saved, true);
  assert.equal(kept.savedText, "Saved in this machine's history.");
  assert.equal(kept.phase, "done", "saving does not change the run's phase");
  assert.equal(kept.status, done.status);
  const full = step(done, {
    type: "saved",
    store: "history",
    ok: false,
    error: { kind: "no_space", message: "the result was not saved in the history: No space left on device" },
  });
  assert.equal(full.saved, false);
  assert.equal(full.savedText, "Not saved: The result was not saved in the history: No space left on device.");
  // A lab record's answer is for the lab card, not this one.
  assert.equal(step(done, { type: "saved", store: "labs", ok: false }).saved, null);
  assert.match(step(done, { type: "saved", store: "history", ok: false }).savedText, /could not save it/);
});
