import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { lookHelp, rejudgedNote, runsToAdd } from "../../theme/pipebook/lab/labchecks.js";

const book = JSON.parse(readFileSync(new URL("../../labs/labs.json", import.meta.url)));
const busyCost = book.labs.find((l) => l.id === "busy-cost");

test("a check left open at a planned look asks for the runs of the next look, and the last look says it is final", () => {
  const open = lookHelp({ status: "not_resolved", more_runs: 6, next_look_runs: 12, judged: { look: 1, looks: 3 } });
  assert.match(open, /^Not settled at look 1 of 3: run each task 6 more times for the next look\./);
  const final = lookHelp({ status: "not_resolved", judged: { look: 3, looks: 3 } });
  assert.match(final, /^This verdict is final: the last of its 3 planned looks is taken/);
});

test("older runs judged again are said once for the lab, and only then", () => {
  assert.equal(rejudgedNote([{ id: "a", status: "pass" }]), null);
  assert.equal(rejudgedNote(undefined), null);
  const note = rejudgedNote([{ id: "a", status: "pass" }, { id: "b", status: "pass", rejudged: true }]);
  assert.match(note, /^Judged again under the current rule: /);
});

test("a task's button runs the rest of its runs, then up to the next planned look of an open check on it", () => {
  assert.equal(runsToAdd(busyCost, [], "busy", 2, 6), 4);
  const checks = [
    { id: "busy-not-slower", status: "not_resolved", more_runs: 6, next_look_runs: 12 },
    { id: "busy-burns-cpu", status: "pass" },
  ];
  assert.equal(runsToAdd(busyCost, checks, "busy", 6, 6), 6);
  // Runs already past the look's need of this task: one more at a time.
  assert.equal(runsToAdd(busyCost, checks, "busy", 13, 6), 1);
  // A final check asks for nothing more.
  assert.equal(runsToAdd(busyCost, [{ id: "busy-not-slower", status: "not_resolved" }], "blocking", 18, 6), 1);
});
