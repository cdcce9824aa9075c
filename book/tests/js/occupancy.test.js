import { test } from "node:test";
import assert from "node:assert/strict";

import { H, PAD, W, capacityLabel, fillText, layout, phases, summary, usable } from "../../theme/pipebook/occupancy.js";

// 30 points of 2 ms: full for 10, filling for 10, empty for 10, in a 64 KiB pipe.
function run() {
  const t_ms = [];
  const min = [];
  const max = [];
  for (let i = 0; i < 30; i++) {
    t_ms.push(i * 2);
    if (i < 10) {
      min.push(65536);
      max.push(65536);
    } else if (i < 20) {
      min.push((i - 9) * 4096);
      max.push((i - 8) * 4096);
    } else {
      min.push(0);
      max.push(0);
    }
  }
  return {
    capacity: 65536,
    bucket_ms: 2,
    samples: 30,
    full_share: 1 / 3,
    empty_share: 1 / 3,
    writer_sleeps: 12,
    reader_sleeps: 1234,
    series: { t_ms, min, max, writer_sleeps: t_ms.map(() => 0), reader_sleeps: t_ms.map(() => 0) },
  };
}

test("full and empty stretches are found and joined", () => {
  assert.deepEqual(phases(run()), [
    { start: 0, end: 20, kind: "full" },
    { start: 40, end: 60, kind: "empty" },
  ]);
  // Within one page of capacity still counts as full; one byte in the pipe is not empty.
  const occ = run();
  occ.series.min[0] = 65536 - 4096;
  occ.series.max[25] = 1;
  const p = phases(occ);
  assert.equal(p[0].start, 0);
  assert.deepEqual(p.slice(1), [
    { start: 40, end: 50, kind: "empty" },
    { start: 52, end: 60, kind: "empty" },
  ]);
});

test("the layout stays in its box: full at the capacity line, empty at the bottom", () => {
  const g = layout(run());
  assert.equal(g.points, 30);
  const coords = g.band.split(" ").map((p) => p.split(",").map(Number));
  assert.equal(coords.length, 60);
  for (const [x, y] of coords) {
    assert.ok(x >= PAD.left && x <= W - PAD.right, `x ${x}`);
    assert.ok(y >= PAD.top && y <= H - PAD.bottom, `y ${y}`);
  }
  // The first point is full: its top sits on the capacity line; the last is empty.
  assert.equal(coords[0][1], g.capacityY);
  assert.equal(coords[29][1], g.plotBottom);
  assert.ok(g.capacityY > g.plotTop, "headroom above the capacity line");
  assert.deepEqual(g.phases.map((p) => p.kind), ["full", "empty"]);
  assert.ok(g.phases[0].x === PAD.left && g.phases[1].x + g.phases[1].w <= W - PAD.right + 0.1);
  assert.deepEqual(g.yTicks.map((t) => t.label), ["0", "8 slots", "16 slots"]);
  assert.deepEqual(g.xTicks.map((t) => t.label), ["0 s", "0.03 s", "0.06 s"]);
});

test("a single point still has a width", () => {
  const occ = { capacity: 131072, bucket_ms: 2, series: { t_ms: [0], min: [0], max: [131072] } };
  assert.ok(usable(occ));
  const g = layout(occ);
  assert.equal(g.band.split(" ").length, 4);
});

test("words: capacity in slots, the live fill, the summary; bad input is not drawn", () => {
  assert.equal(capacityLabel(65536), "64 KiB = 16 slots of 4 KiB");
  assert.equal(fillText(49152, 65536), "48 KiB (12 of 16 slots)");
  assert.equal(fillText(1, 65536), "1 B (1 of 16 slots)");
  assert.equal(fillText(undefined, 65536), "");
  assert.equal(
    summary(run()),
    "Full in 33% of 30 samples (the writer had no free slot), empty in 33% (the reader had nothing to read). Meanwhile the writer slept 12 times and the reader 1,234.",
  );
  assert.match(summary({ ...run(), alternating: true }), /took turns on the two ends' CPUs/);
  assert.doesNotMatch(summary(run()), /took turns/);
  assert.ok(!usable(undefined));
  assert.ok(!usable({ capacity: 65536, bucket_ms: 2, series: { t_ms: [], min: [], max: [] } }));
  assert.ok(!usable({ capacity: 65536, bucket_ms: 2, series: { t_ms: [0, 2], min: [0], max: [0, 0] } }));
});

test("slots are the machine's pages: 4, 16 or 64 KiB", async () => {
  const { fullThreshold, slotOf } = await import("../../theme/pipebook/occupancy.js");
  for (const slot of [4096, 16384, 65536]) {
    const capacity = 16 * slot;
    assert.equal(slotOf({ slot_bytes: slot }), slot);
    assert.equal(fullThreshold(capacity, slot), 15 * slot);
    assert.equal(capacityLabel(capacity, slot).split(" = ")[1], `16 slots of ${slot / 1024} KiB`);
    assert.equal(fillText(slot + 1, capacity, slot).split(" (")[1], "2 of 16 slots)");
  }
  // A result saved before slots were named was measured on 4 KiB pages.
  assert.equal(slotOf({ capacity: 65536 }), 4096);
});
