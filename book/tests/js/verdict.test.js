import { test } from "node:test";
import assert from "node:assert/strict";

import { compareSentence, intervalAxis, precheckSentence, watchingCost } from "../../theme/pipebook/verdict.js";

test("the machine check reads as one sentence", () => {
  assert.match(precheckSentence([]), /nothing seen/);
  assert.equal(precheckSentence(["the governor is `powersave`", "boost is on"]), "Machine check: the governor is `powersave`; boost is on.");
  assert.match(precheckSentence(null), /could not look/);
});

test("a comparison's sentence follows its verdict", () => {
  const c = { ratio: 3.1, ci_low: 2.95, ci_high: 3.3, pairs: 5, verdict: "faster", more_pairs: 0 };
  assert.equal(compareSentence(c, "busy-loop", "write-read"), "busy-loop is 3.10× write-read (95% interval 2.95 to 3.30, 5 pairs): busy-loop is faster.");
  assert.match(compareSentence({ ...c, ratio: 0.5, ci_low: 0.4, ci_high: 0.6, verdict: "slower" }, "a", "b"), /a is slower\.$/);
  const open = { ratio: 1.02, ci_low: 0.9, ci_high: 1.2, pairs: 3, verdict: "not_resolved", more_pairs: 12 };
  assert.match(compareSentence(open, "a", "b"), /^Not resolved: .*about 12 more pairs/);
  assert.match(compareSentence({ ...open, more_pairs: 0 }, "a", "b"), /rules out a difference of 10%/);
});

test("the interval's axis always shows 1.0 and keeps the order of values", () => {
  const axis = intervalAxis(2.5, 3.5, 3, 300);
  assert.ok(axis.ticks.includes(1));
  assert.ok(axis.x(1) >= 0 && axis.x(1) < axis.x(2.5) && axis.x(2.5) < axis.x(3) && axis.x(3.5) <= 300);
  const below = intervalAxis(0.4, 0.6, 0.5, 300);
  assert.ok(below.x(0.6) < below.x(1) && below.x(1) <= 300);
});

test("watching's cost is said from a live and a quiet figure", () => {
  assert.equal(watchingCost(null, 2), null);
  assert.match(watchingCost(35.2, 40.3).sentence, /about 13%/);
  assert.match(watchingCost(40, 40.2).sentence, /nothing measurable/);
  assert.match(watchingCost(42, 40).sentence, /faster than the quiet one/);
});
