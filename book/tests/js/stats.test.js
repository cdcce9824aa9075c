import { test } from "node:test";
import assert from "node:assert/strict";

import {
  DEFAULT_SEED,
  SplitMix64,
  expandedTail,
  normalCdf,
  normalQuantileUpper,
  quantileSorted,
  ratioOfMediansPaired,
  ratioOfMediansUnpaired,
  studentTQuantile,
} from "../../theme/pipebook/stats.js";

test("SplitMix64 gives the reference sequence", () => {
  // Rosetta Code, "Pseudo-random numbers/Splitmix64", seeded with 1234567: the
  // same outputs the runner's Rust test checks.
  const rng = new SplitMix64(1234567n);
  assert.deepEqual(
    [rng.nextU64(), rng.nextU64(), rng.nextU64()],
    [6457827717110365317n, 3203168211198807973n, 9817491932198370423n],
  );
});

test("normal and t quantiles match the tables", () => {
  assert.ok(Math.abs(normalQuantileUpper(0.025) - 1.959964) < 1e-5);
  assert.ok(Math.abs(normalCdf(1) - 0.841345) < 1e-6);
  for (const [df, want] of [[4, 2.776], [10, 2.228], [30, 2.042]]) {
    const got = studentTQuantile(1.959964, df);
    assert.ok(Math.abs(got - want) / want < 0.003, `df ${df}: ${got}`);
  }
  // scipy: norm.cdf(-sqrt(6/5) * t.ppf(0.975, 5)) = 0.0024318.
  assert.ok(Math.abs(expandedTail(0.95, 6) - 0.0024318031746115667) < 2e-5);
});

test("quantiles interpolate like numpy", () => {
  const sorted = [1, 2, 3, 4, 10];
  const got = [0.025, 0.5, 0.975].map((q) => quantileSorted(sorted, q));
  [1.1, 3, 9.4].forEach((want, i) => assert.ok(Math.abs(got[i] - want) < 1e-12, `${got}`));
});

test("the paired bootstrap agrees with numpy and scipy on the same draws", () => {
  // The reference the runner's Rust test holds to: ratio 1.9611650485436891,
  // interval 1.8269230769230769 .. 2.142857142857143 (numpy 2, scipy 1.17).
  const a = [10, 11, 9.5, 10.5, 10.2, 9.9];
  const b = [5, 5.5, 5.2, 4.9, 5.1, 5.3];
  const got = ratioOfMediansPaired(a, b);
  assert.ok(Math.abs(got.ratio - 1.9611650485436891) < 1e-12);
  assert.ok(Math.abs(got.low - 1.8269230769230769) < 1e-3, `${got.low}`);
  assert.ok(Math.abs(got.high - 2.142857142857143) < 1e-3, `${got.high}`);
  assert.deepEqual(ratioOfMediansPaired(a, b), got);
});

test("unpaired sets of two span their extremes; one run has no interval", () => {
  const got = ratioOfMediansUnpaired([3, 3.3], [1, 1.2], 0.95, 4000, DEFAULT_SEED);
  assert.ok(Math.abs(got.ratio - 3.15 / 1.1) < 1e-12);
  assert.deepEqual([got.low, got.high], [3 / 1.2, 3.3 / 1]);
  assert.equal(ratioOfMediansUnpaired([3, 3.3], [1]), null);
  assert.equal(ratioOfMediansUnpaired([3, 0], [1, 1]), null);
  const wide = ratioOfMediansUnpaired([10, 11, 9.5, 10.5, 10.2], [5, 5.5, 5.2]);
  assert.ok(wide.low >= 9.5 / 5.5 && wide.high <= 11 / 5, JSON.stringify(wide));
});
