import assert from "node:assert/strict";
import { test } from "node:test";
import { describeThroughput } from "../../theme/pipebook/chart.js";

test("the chart in words names the lowest, highest and last rate", () => {
  const text = describeThroughput(
    [
      [0.25, 1.5],
      [0.5, 3.25],
      [0.75, 2],
    ],
    { article: 3.7, reference: { low: 0.3, high: 0.5 } },
  );
  assert.match(text, /over 0\.8 s, 3 stretches/);
  assert.match(text, /from 1\.5 to 3\.3 GiB\/s/);
  assert.match(text, /last 2\.0 GiB\/s/);
  assert.match(text, /article measured 3\.7 GiB\/s/);
  assert.match(text, /VM 0\.40 GiB\/s/);
});

test("before a run it says there is none yet", () => {
  assert.equal(describeThroughput([]), "Throughput over time: no run yet.");
});
