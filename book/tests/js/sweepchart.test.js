import { test } from "node:test";
import assert from "node:assert/strict";

import { H, W, layout, niceCeil, summarize } from "../../theme/pipebook/sweepchart.js";

test("runs per value become medians, minima and maxima in value order", () => {
  const points = summarize(new Map([[65536, [2, 1, 3]], [16384, [1]], [262144, []]]));
  assert.deepEqual(points, [
    { value: 16384, runs: 1, median: 1, min: 1, max: 1 },
    { value: 65536, runs: 3, median: 2, min: 1, max: 3 },
  ]);
});

test("the x axis is log2: doubling values sit at equal distances, ticks at every value", () => {
  const values = [16384, 32768, 65536, 131072];
  const points = values.map((v, i) => ({ value: v, runs: 1, median: i + 1, min: i + 1, max: i + 1 }));
  const g = layout(points, values);
  const xs = g.ticks.map((t) => t.x);
  const gaps = xs.slice(1).map((x, i) => x - xs[i]);
  for (const gap of gaps) assert.ok(Math.abs(gap - gaps[0]) < 0.2, `${gaps}`);
  assert.deepEqual(g.ticks.map((t) => t.label), ["16 KiB", "32 KiB", "64 KiB", "128 KiB"]);
  for (const x of xs) assert.ok(x > 0 && x < W);
  // Higher GiB/s is higher on the page (smaller y), and everything stays inside.
  const ys = g.dots.map((d) => d.y);
  assert.ok(ys.every((y, i) => i === 0 || y < ys[i - 1]), `${ys}`);
  assert.ok(ys.every((y) => y > 0 && y < H));
  assert.equal(g.top, niceCeil(4 * 1.05));
});

test("an empty sweep still lays out its axis", () => {
  const g = layout([], [4096, 8192]);
  assert.equal(g.line, "");
  assert.equal(g.ticks.length, 2);
});

test("nice ceilings", () => {
  assert.equal(niceCeil(0.83), 1);
  assert.equal(niceCeil(3.2), 4);
  assert.equal(niceCeil(58), 60);
  assert.equal(niceCeil(0), 1);
});
