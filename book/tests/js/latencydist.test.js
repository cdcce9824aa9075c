import assert from "node:assert/strict";
import { test } from "node:test";
import { bucketFloor, clockPercent, timingText, describeResult, layoutHistogram, matrixRows, nsText, placementText, sane } from "../../theme/pipebook/latency/dist.js";

test("bucket edges are quarter octaves as the runner counts them", () => {
  assert.equal(bucketFloor(0), 1);
  assert.equal(bucketFloor(4), 2);
  assert.equal(bucketFloor(40), 1024);
  assert.equal(bucketFloor(41), 1280);
  for (let i = 0; i < 100; i += 1) assert.ok(bucketFloor(i) < bucketFloor(i + 1));
});

test("the histogram spans only the filled buckets and the peak is full height", () => {
  const buckets = new Array(112).fill(0);
  buckets[40] = 10;
  buckets[42] = 5;
  const out = layoutHistogram(buckets, 300, 100);
  assert.equal(out.bars.length, 3);
  assert.equal(out.total, 15);
  assert.equal(out.lo, 1024);
  assert.equal(out.hi, bucketFloor(43));
  assert.equal(out.bars[0].h, 100);
  assert.equal(out.bars[1].h, 0);
  assert.equal(out.bars[2].h, 50);
  assert.equal(out.bars[2].x, 200);
  assert.deepEqual(layoutHistogram([], 10, 10).bars, []);
});

test("words and checks of a result", () => {
  const r = { mechanism: "pipe", mode: "busy", size: 64, min: 900, p50: 1000, p90: 1200, p99: 3000, p999: 9000, max: 20000, count: 100, ping_cpu_ns: 1000, pong_cpu_ns: 1000 };
  assert.ok(sane(r));
  assert.ok(!sane({ ...r, p99: 10 }));
  assert.ok(!sane({ ...r, count: 0 }));
  const text = describeResult(r);
  assert.match(text, /busy-polling/);
  assert.match(text, /1\.00 µs/);
  assert.match(text, /3\.0× the median/);
  assert.equal(nsText(850), "850 ns");
  assert.equal(nsText(4_100_000), "4.10 ms");
  const rows = matrixRows([{ ...r, p99: 5000 }, { ...r, mechanism: "tcp", p99: 2000 }]);
  assert.deepEqual(rows.map((x) => x.id), ["tcp", "pipe"]);
});

test("a result says how its CPUs sit and what timing costs against its median", () => {
  assert.equal(placementText("smt-siblings"), "two threads of one core");
  assert.equal(placementText("separate-cores"), "two cores");
  assert.equal(placementText("same-cpu"), "one CPU");
  assert.equal(placementText(undefined), "placement not known");
  assert.equal(clockPercent({ clock_ns: 20, p50: 400 }), 5);
  assert.equal(clockPercent({ clock_ns: 20, p50: 0 }), null);
  assert.equal(clockPercent({ p50: 400 }), null);
});

test("timing's own cost is the timed blocks' mean against untimed ones', measured", () => {
  assert.equal(timingText({ batch_mean_ns: 410, timing_overhead: 0.032 }), "+3.2% on the mean (untimed blocks averaged 410 ns)");
  assert.equal(timingText({ batch_mean_ns: 2000, timing_overhead: -0.004 }), "−0.4% on the mean (untimed blocks averaged 2.00 µs)");
  assert.equal(timingText({ batch_mean_ns: 0, timing_overhead: 0 }), "not measured in this result");
});
