import { test } from "node:test";
import assert from "node:assert/strict";

import { W, decadeCeil, decadeFloor, layout, rate, ratioText, tickLabel } from "../../theme/pipebook/ipc/chart.js";

const MIB = 2 ** 20;

test("a figure becomes MiB/s: 200 MiB in 1373 ms is about 146 MiB/s", () => {
  assert.ok(Math.abs(rate(1373, 200 * MIB) - 145.67) < 0.01);
  assert.equal(rate(0, 200 * MIB), null);
  assert.equal(rate(100, null), null);
});

test("decades enclose a value", () => {
  assert.equal(decadeFloor(146), 100);
  assert.equal(decadeCeil(146), 1000);
  assert.equal(decadeFloor(100), 100);
  assert.equal(decadeCeil(1000), 1000);
  assert.equal(decadeFloor(0.5), 0.1);
  assert.deepEqual([10, 1000, 10000, 2e6].map(tickLabel), ["10", "1k", "10k", "2M"]);
});

test("the axis is log10: a ten times faster rate is one decade further, whatever the row", () => {
  const g = layout([
    { id: "a", mine: 100, survey: 10 },
    { id: "b", mine: 1000, survey: null },
    { id: "c", mine: null, survey: 10000 },
  ]);
  assert.equal(g.lo, 10);
  assert.equal(g.hi, 10000);
  assert.deepEqual(g.ticks.map((t) => t.label), ["10", "100", "1k", "10k"]);
  const xs = g.ticks.map((t) => t.x);
  const gaps = xs.slice(1).map((x, i) => x - xs[i]);
  for (const gap of gaps) assert.ok(Math.abs(gap - gaps[0]) < 0.2, `${gaps}`);
  const [a, b, c] = g.rows;
  // Bars start at the axis and end at their rate's tick.
  assert.ok(Math.abs(a.mine.x + a.mine.w - xs[1]) < 0.2);
  assert.ok(Math.abs(a.survey.w - 1) < 0.01, "the axis minimum still shows a sliver");
  assert.ok(Math.abs(b.mine.x + b.mine.w - xs[2]) < 0.2);
  assert.equal(b.survey, null);
  assert.equal(c.mine, null);
  assert.ok(c.survey.x + c.survey.w <= W);
  // Rows stack downwards, and the height holds them all.
  assert.ok(a.y < b.y && b.y < c.y && c.y < g.height);
  assert.equal(a.ratio, "10×");
  assert.equal(b.ratio, "");
});

test("ratios read as this machine over the survey", () => {
  assert.equal(ratioText(146, 146), "1.0×");
  assert.equal(ratioText(2000, 146), "14×");
  assert.equal(ratioText(50, 146), "0.34×");
  assert.equal(ratioText(50, 0), "");
});

test("an empty chart still has an axis", () => {
  const g = layout([]);
  assert.ok(g.ticks.length >= 2);
  assert.deepEqual(g.rows, []);
});
