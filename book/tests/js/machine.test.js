import { test } from "node:test";
import assert from "node:assert/strict";

import { findingsOf, topologyLines } from "../../theme/pipebook/machine.js";

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
