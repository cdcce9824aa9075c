import { test } from "node:test";
import assert from "node:assert/strict";

import { findingsOf, gapText, historyGaps, topologyLines, wakeupText } from "../../theme/pipebook/machine.js";

test("topology reads per CPU, naming SMT siblings", () => {
  assert.deepEqual(
    topologyLines([
      { cpu: 0, core: 0, package: 0, siblings: [0, 2] },
      { cpu: 1, core: 1, package: 0, siblings: [1] },
      { cpu: "x" },
    ]),
    ["CPU 0: core 0, package 0, shares its core with CPU 2", "CPU 1: core 1, package 0, no SMT sibling"],
  );
  assert.deepEqual(topologyLines(undefined), []);
});

test("findings need every field as text", () => {
  const good = { id: "thp-never", title: "t", evidence: "e", effect: "x" };
  assert.deepEqual(findingsOf({ findings: [good, { id: "half", title: "t" }, null] }), [good]);
  assert.deepEqual(findingsOf({}), []);
  assert.deepEqual(findingsOf(null), []);
});

test("the blocking-vs-busy gap from the reader's own best runs", () => {
  const results = [
    { step: "huge-pages", gib_per_s: 2 },
    { step: "huge-pages", gib_per_s: 4 },
    { step: "busy-loop", gib_per_s: 40 },
    { step: "write-read", gib_per_s: 0.4 },
  ];
  const [gap] = historyGaps(results);
  assert.equal(gap.blocking, 4);
  assert.equal(gap.busy, 40);
  assert.ok(Math.abs(gap.msPerGiB - 225) < 1e-9);
  assert.equal(gapText(gap), "Your history: huge-pages best 4.0 GiB/s, busy-loop best 40.0 GiB/s; blocking loses 225.0 ms per GiB.");
  assert.deepEqual(historyGaps([{ step: "busy-loop", gib_per_s: 40 }]), []);
  assert.equal(gapText(undefined), "");
});

test("a wakeup measurement in words", () => {
  const text = wakeupText({ blocking_us: 41, busy_us: 1, round_trips: 5000, cpus: [0, 1] });
  assert.equal(text, "Round trip between CPUs 0 and 1: 41.0 µs blocking, 1.00 µs busy-polling (medians of 5000); about 20.0 µs per sleep.");
  assert.equal(wakeupText({}), "");
});
