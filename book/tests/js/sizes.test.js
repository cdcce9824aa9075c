import { test } from "node:test";
import assert from "node:assert/strict";

import { parseSize, parseSizeList } from "../../theme/pipebook/sizes.js";

test("sizes read as pipebench reads them", () => {
  assert.equal(parseSize("256KiB"), 262144);
  assert.equal(parseSize(" 1 MiB "), 1 << 20);
  assert.equal(parseSize("4096"), 4096);
  assert.equal(parseSize("2g"), 2 ** 31);
  assert.equal(parseSize("lots"), null);
  assert.equal(parseSize("12 apples"), null);
});

test("a range doubles from its first value to its last", () => {
  assert.deepEqual(parseSizeList("4KiB..32KiB").values, [4096, 8192, 16384, 32768]);
  assert.deepEqual(parseSizeList("16KiB,64KiB,256KiB").values, [16384, 65536, 262144]);
});

test("bad lists are refused with a reason", () => {
  assert.match(parseSizeList("1MiB..4KiB").error, /must go up/);
  assert.match(parseSizeList("64KiB,16KiB").error, /must go up/);
  assert.match(parseSizeList("0..4KiB").error, /above 0/);
  assert.match(parseSizeList("0,4KiB").error, /0 bytes/);
  assert.match(parseSizeList("4KiB,lots").error, /lots/);
  assert.match(parseSizeList("").error, /at least one/);
  assert.match(parseSizeList("1..1GiB").error, /more than a sweep may have/);
});
