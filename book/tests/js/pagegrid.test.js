import { test } from "node:test";
import assert from "node:assert/strict";

import { CELL, COLUMNS, GAP, cellState, cellTitle, gridLayout, summary } from "../../theme/pipebook/pagegrid.js";

const BASE = 0x7f0000000000;

/** A buffer as `pipebench pages --json` reports it, `n` pages made by `page(i)`. */
function buffer(n, page, extra = {}) {
  const pages = Array.from({ length: n }, (_, i) => ({ index: i, vaddr: BASE + i * 4096, ...page(i) }));
  return { address: BASE, len: n * 4096, offset_in_page: 0, pages, present: pages.filter((p) => p.present).length, ...extra };
}

const flags = (names) => ({
  raw: 0,
  names,
  thp: names.includes("thp"),
  head: names.includes("compound_head"),
  tail: names.includes("compound_tail"),
  zero_page: names.includes("zero_page"),
});

test("a touched huge page: one head, 511 tails, only the first 64 handed over", () => {
  const huge = buffer(512, (i) => ({
    present: true,
    pfn: 0x25b000 + i,
    flags: flags(["anon", i === 0 ? "compound_head" : "compound_tail", "thp"]),
  }));
  const g = gridLayout(huge, 256 * 1024);
  assert.equal(g.counts.head, 1);
  assert.equal(g.counts.tail, 511);
  assert.equal(g.cells.filter((c) => c.used).length, 64);
  assert.equal(g.width, COLUMNS * (CELL + GAP) - GAP);
  assert.equal(g.height, 16 * (CELL + GAP) - GAP);
  assert.deepEqual([g.cells[33].x, g.cells[33].y], [CELL + GAP, CELL + GAP]);
  assert.match(g.cells[0].title, /page 0 at 0x7f0000000000\nhuge page: compound head\nframe 0x25b000\nflags: anon, compound_head, thp/);
  assert.match(g.cells[100].title, /past the bytes one call hands over/);
  assert.equal(summary(huge, 256 * 1024), "512 pages of 4 KiB, 512 present; the first 64 hold the 256 KiB one call hands over; 1 compound head, 511 tails");
});

test("an untouched malloc'd buffer: 65 pages, none present, all used", () => {
  const untouched = buffer(65, () => ({ present: false }), { offset_in_page: 16 });
  const g = gridLayout(untouched, 256 * 1024);
  assert.equal(g.counts.absent, 65);
  assert.ok(g.cells.every((c) => c.used), "16 bytes in, 256 KiB reaches into the 65th page");
  assert.equal(g.height, 3 * (CELL + GAP) - GAP);
  assert.equal(summary(untouched, 256 * 1024), "65 pages of 4 KiB, 0 present");
});

test("without root: present pages without frames, huge only when smaps says so", () => {
  const page = { index: 0, vaddr: BASE, present: true };
  assert.equal(cellState(page), "present");
  assert.equal(cellState(page, true), "thp");
  assert.equal(cellTitle(page, "present", true), "page 0 at 0x7f0000000000\npresent, a base page");
  const smapsHuge = buffer(512, () => ({ present: true }), { huge_pages: { huge_bytes: 512 * 4096 } });
  assert.equal(gridLayout(smapsHuge, 256 * 1024).counts.thp, 512);
  assert.equal(cellState({ present: true, flags: flags(["zero_page"]) }), "zero");
  assert.equal(cellState({ present: false, flags: flags(["thp"]) }), "absent");
});

test("the pages one call hands over are counted in the machine's page size", () => {
  // 256 KiB placed 16 bytes into a page: 65 pages of 4 KiB, 17 of 16 KiB, 5 of 64 KiB.
  for (const [pageSize, used] of [
    [4096, 65],
    [16384, 17],
    [65536, 5],
  ]) {
    const b = buffer(80, () => ({ present: true }), { offset_in_page: 16, page_size: pageSize });
    const g = gridLayout(b, 256 * 1024);
    assert.equal(g.cells.filter((c) => c.used).length, used, `${pageSize}-byte pages`);
    assert.match(summary(b, 256 * 1024), new RegExp(`^80 pages of ${pageSize / 1024} KiB, `));
  }
  // A report from before page sizes were named: 4 KiB pages.
  const old = buffer(80, () => ({ present: true }), { offset_in_page: 16 });
  assert.equal(gridLayout(old, 256 * 1024).cells.filter((c) => c.used).length, 65);
});
