import { test } from "node:test";
import assert from "node:assert/strict";

import { capacityText } from "../../theme/pipebook/details.js";

const KIB = 1024;

test("a pipe's capacity counts slots of the machine's own page", () => {
  // x86-64's 4 KiB pages, and the 16 and 64 KiB pages of some arm64 kernels.
  assert.match(capacityText(64 * KIB, 4 * KIB), /^64 KiB \(16 slots of one 4 KiB page\)$/);
  assert.match(capacityText(64 * KIB, 16 * KIB), /\(4 slots of one 16 KiB page\)/);
  assert.match(capacityText(1024 * KIB, 64 * KIB), /\(16 slots of one 64 KiB page\)/);
});

test("without a page size no slot count is made up", () => {
  assert.equal(capacityText(64 * KIB, undefined), "64 KiB");
  assert.equal(capacityText(64 * KIB, 0), "64 KiB");
  assert.equal(capacityText(undefined, 4 * KIB), "unknown");
});
