// The page builds its controls from the runner's parameter specs, never from bounds
// of its own: these tests hold the pure parts of that to the specs' meaning.
import { test } from "node:test";
import assert from "node:assert/strict";

import { check, collect, powersOfTwo, secondsControl, sizeChoices, spec, sweepDefaults } from "../../theme/pipebook/params.js";

const KIB = 1024;
const entry = {
  id: "write-read",
  params: [
    { name: "seconds", label: "Seconds", unit: "seconds", default: 4, min: 0.1, max: 120, multiple_of: null },
    { name: "buf_size", label: "Bytes per call", unit: "bytes", default: 256 * KIB, min: 4 * KIB, max: 64 * KIB * KIB, multiple_of: 4096 },
    { name: "pipe_size", label: "Pipe capacity", unit: "bytes", default: null, min: 4 * KIB, max: 1024 * KIB, multiple_of: 4096 },
    { name: "quiet", label: "Quiet run", unit: "flag", default: 0, min: 0, max: 1, multiple_of: null },
  ],
};

test("spec finds a parameter by name and nothing else", () => {
  assert.equal(spec(entry, "buf_size").default, 256 * KIB);
  assert.equal(spec(entry, "colour"), null);
  assert.equal(spec(undefined, "seconds"), null);
});

test("powers of two stay inside the bounds", () => {
  assert.deepEqual(powersOfTwo(4 * KIB, 32 * KIB), [4 * KIB, 8 * KIB, 16 * KIB, 32 * KIB]);
  assert.deepEqual(powersOfTwo(5000, 20000), [8192, 16384]);
  assert.deepEqual(powersOfTwo(10, 5), []);
});

test("size choices start with the step's own value and respect the runner's maximum", () => {
  const pipe = sizeChoices(spec(entry, "pipe_size"), { own: "kernel's default" });
  assert.deepEqual(pipe[0], ["", "kernel's default"]);
  assert.equal(pipe.at(-1)[0], 1024 * KIB);
  assert.equal(pipe[1][0], 4 * KIB);
  const buf = sizeChoices(spec(entry, "buf_size"), { limit: 16 * KIB * KIB });
  assert.equal(buf[0][1], "step's own (256 KiB)");
  assert.equal(buf.at(-1)[0], 16 * KIB * KIB);
});

test("the seconds control follows the spec", () => {
  assert.deepEqual(secondsControl(spec(entry, "seconds")), { min: 0.5, max: 120, value: 4, sweep: 4 });
  // A sweep's runs take the runner's sweep default when it publishes one.
  const published = { ...spec(entry, "seconds"), sweep_default: 1 };
  assert.equal(secondsControl(published).sweep, 1);
});

test("check names the value and the bounds when refusing", () => {
  assert.deepEqual(check(spec(entry, "buf_size"), "262144"), { value: 262144 });
  assert.match(check(spec(entry, "buf_size"), "2048").error, /out of range \(4 KiB to 64 MiB\)/);
  assert.match(check(spec(entry, "buf_size"), "4097").error, /4097 bytes is not a multiple of 4096/);
  assert.match(check(spec(entry, "seconds"), "soon").error, /not a number/);
  assert.match(check(spec(entry, "seconds"), "500").error, /out of range/);
});

test("collect leaves out the step's own values and gathers every error", () => {
  assert.deepEqual(collect(entry, { seconds: "2", buf_size: "", pipe_size: "65536", quiet: false }), {
    params: { seconds: 2, pipe_size: 65536 },
  });
  assert.deepEqual(collect(entry, { seconds: "1", quiet: true }).params, { seconds: 1, quiet: true });
  const bad = collect(entry, { seconds: "0", pipe_size: "100", colour: "red" });
  assert.equal(bad.errors.length, 3);
});

test("sweep defaults are values the runner accepts", () => {
  const values = sweepDefaults(spec(entry, "pipe_size"), "pipe_size");
  assert.deepEqual(values, [16 * KIB, 64 * KIB, 256 * KIB, 1024 * KIB]);
  for (const v of values) assert.ok(check(spec(entry, "pipe_size"), v).value);
  assert.deepEqual(sweepDefaults(null, "pipe_size"), []);
});
