import { test } from "node:test";
import assert from "node:assert/strict";

import { kernelLine, probeOf } from "../../theme/pipebook/kernelline.js";

const report = {
  behaviour: [
    { id: "vmsplice", answer: "maps", line: "On this machine: vmsplice hands the pipe references to your pages (measured).", expect: "Steps 2 to 5 move references.", evidence: "the reader got the new bytes", took_ms: 1 },
    { id: "spare-pages", answer: "unknown", line: "On this machine: this could not be measured, so the chapter cannot tell what your kernel does.", expect: "yours may differ", evidence: "", why_unknown: "tracefs is not mounted", took_ms: 1 },
    { id: "thp", answer: 3 },
  ],
};

test("a measured probe shows its line, what to expect and its evidence", () => {
  const line = kernelLine(report, "vmsplice");
  assert.equal(line.state, "measured");
  assert.match(line.text, /references to your pages/);
  assert.equal(line.expect, "Steps 2 to 5 move references.");
  assert.equal(line.evidence, "Seen: the reader got the new bytes");
});

test("a probe that could not run says why and that the chapter cannot tell", () => {
  const line = kernelLine(report, "spare-pages");
  assert.equal(line.state, "unknown");
  assert.match(line.text, /cannot tell/);
  assert.equal(line.evidence, "Why: tracefs is not mounted");
});

test("a malformed or missing probe is unknown, never guessed", () => {
  assert.equal(probeOf(report, "thp"), null);
  assert.equal(kernelLine(report, "thp").state, "unknown");
  assert.equal(kernelLine({ behaviour: "x" }, "vmsplice").state, "unknown");
});

test("without a runner the line says how to measure", () => {
  const line = kernelLine(null, "vmsplice");
  assert.equal(line.state, "offline");
  assert.match(line.text, /cargo run --release/);
});

test("a chapter's asides follow the probe: this machine's shown, the default marked, the others hidden", async () => {
  const { branchState } = await import("../../theme/pipebook/kernelline.js");
  const copies = { behaviour: [{ id: "vmsplice", answer: "copies", line: "x" }] };
  assert.equal(branchState(copies, "vmsplice", "copies", false), "this");
  assert.equal(branchState(copies, "vmsplice", "maps", true), "not-this");
  const maps = { behaviour: [{ id: "vmsplice", answer: "maps", line: "x" }] };
  assert.equal(branchState(maps, "vmsplice", "maps", true), "this");
  assert.equal(branchState(maps, "vmsplice", "copies", false), "hidden");
});

test("without a runner, or a probe that could not tell, every aside stays", async () => {
  const { branchState } = await import("../../theme/pipebook/kernelline.js");
  assert.equal(branchState(null, "thp", "off", false), "offline");
  assert.equal(branchState(report, "spare-pages", "2", false), "unknown");
  assert.equal(branchState({ behaviour: [] }, "thp", "given", true), "unknown");
});
