import { test } from "node:test";
import assert from "node:assert/strict";

import { QuietRuns, commandLine, copiesText, describe, ipcParams, readSize, surveyRate } from "../../theme/pipebook/ipc/model.js";

const MIB = 1 << 20;
const lab = {
  params: [
    { name: "bytes", min: MIB, max: 256 * MIB },
    { name: "chunk", min: 1, max: 4 * MIB },
  ],
  mechanisms: [{ id: "pipe-rw", title: "A pipe, write and read", copies: 2, survey: { ms: 100, bytes: 100 * MIB } }],
};

test("a mechanism the runner lists is described as the runner gives it", () => {
  assert.equal(describe({ mechanism: "pipe-rw", title: "ignored" }, lab), lab.mechanisms[0]);
});

test("without the runner a mechanism is read from the placeholder's attributes", () => {
  const m = describe({ mechanism: "fifo", copies: "2", surveyMs: "50", surveyBytes: String(100 * MIB) }, null);
  assert.deepEqual(m, { id: "fifo", title: "fifo", copies: 2, copy_path: "", kernel_functions: [], survey: { ms: 50, bytes: 100 * MIB } });
  assert.equal(describe({ mechanism: "fifo" }, null).survey, null);
});

test("the survey's rate is in MiB/s, and none without a survey", () => {
  assert.equal(surveyRate(lab.mechanisms[0]), 1000);
  assert.equal(surveyRate({ survey: null }), null);
});

test("one copy is singular, several plural, unknown copies say nothing", () => {
  assert.equal(copiesText(1), "1 copy per byte");
  assert.equal(copiesText(2), "2 copies per byte");
  assert.equal(copiesText(null), "");
  assert.equal(copiesText(undefined), "");
});

test("a size outside the runner's bounds is refused with the bounds named", () => {
  const b = lab.params[0];
  assert.deepEqual(readSize("8MiB", b, "bytes", false), { value: 8 * MIB });
  assert.match(readSize("1GiB", b, "bytes", false).error, /^bytes must be 1 MiB to 256 MiB, not 1 GiB$/);
  assert.match(readSize("lots", b, "bytes", false).error, /“lots” is not a size such as 200MiB/);
  assert.deepEqual(readSize("  ", b, "bytes per call", true), { value: null });
  assert.ok(readSize("", b, "bytes", false).error);
});

test("a run's parameters carry bytes, a typed chunk, counts only when off, quiet only when asked", () => {
  assert.deepEqual(ipcParams({ bytes: "8MiB", chunk: "", counted: true, quiet: false }, lab), { params: { bytes: 8 * MIB } });
  assert.deepEqual(ipcParams({ bytes: "8MiB", chunk: "64KiB", counted: false, quiet: true }, lab), {
    params: { bytes: 8 * MIB, chunk: 64 << 10, counts: false, quiet: true },
  });
  assert.ok(ipcParams({ bytes: "8MiB", chunk: "8MiB", counted: true, quiet: false }, lab).error.startsWith("bytes per call must be"));
});

test("the command line says the same run", () => {
  assert.equal(commandLine("pipe-rw", 8 * MIB, null, undefined), "pipebench ipc pipe-rw --bytes 8MiB --repeats 1");
  assert.equal(commandLine("pipe-rw", 8 * MIB, 64 << 10, false), "pipebench ipc pipe-rw --bytes 8MiB --chunk 64KiB --no-counts --repeats 1");
});

const quiet = (mib, bytes = 8 * MIB, extra = {}) => ({ kind: "ipc", mechanism: "x", mib_per_s: mib, bytes, watched: false, ends: [{ counts: {} }], ...extra });

test("the matrix keeps only quiet runs with a figure, by mechanism", () => {
  const runs = new QuietRuns();
  runs.keep("pipe-rw", quiet(900));
  runs.keep("pipe-rw", quiet(950));
  runs.keep("pipe-rw", quiet(990, 8 * MIB, { watched: true }));
  runs.keep("pipe-rw", quiet(0));
  runs.keep("fifo", quiet(800, 8 * MIB, { watched: undefined }));
  assert.deepEqual(runs.of("pipe-rw"), [900, 950]);
  assert.deepEqual(runs.of("fifo"), []);
});

test("a quiet run at another size, or counted otherwise, starts the set afresh", () => {
  const runs = new QuietRuns();
  runs.keep("pipe-rw", quiet(900));
  runs.keep("fifo", quiet(700));
  runs.keep("pipe-rw", quiet(400, 16 * MIB));
  assert.deepEqual(runs.of("pipe-rw"), [400]);
  assert.deepEqual(runs.of("fifo"), []);
  runs.keep("pipe-rw", quiet(410, 16 * MIB, { ends: [] }));
  assert.deepEqual(runs.of("pipe-rw"), [410]);
});
