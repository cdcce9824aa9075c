import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { ARTICLE_ADDRESS, TABLE_H, TOP, fields, hex64, isCanonical, layout, parseAddress, walk, walkText } from "../../theme/pipebook/walk.js";

// The same vectors as the Rust paging::walk tests (bench/tests/paging_vectors.rs).
const vectors = JSON.parse(readFileSync(new URL("../paging-vectors.json", import.meta.url), "utf8"));

test("every shared vector walks as the Rust side says", () => {
  assert.ok(vectors.cases.length >= 10);
  for (const c of vectors.cases) {
    const parsed = parseAddress(c.input);
    const result = parsed.ok ? walk(parsed.address, c.levels, c.page) : parsed;
    if (c.error) {
      assert.equal(result.ok, false, c.note);
      assert.equal(result.kind, c.error, c.note);
      assert.ok(result.message.length > 20, result.message);
    } else {
      assert.ok(result.ok, `${c.note}: ${result.message}`);
      assert.equal(hex64(result.address), c.address);
      assert.deepEqual(result.walk, c.walk, c.note);
      assert.equal(result.offset, c.offset);
      assert.equal(result.offsetBits, c.offset_bits);
    }
  }
});

test("the article's address needs 57 bits, and auto picks 5 levels for it with a note", () => {
  const strict = walkText(ARTICLE_ADDRESS, 4);
  assert.equal(strict.ok, false);
  assert.match(strict.message, /not canonical for 4-level paging: bits 63\.\.48 must all equal bit 47/);
  assert.match(strict.message, /canonical with 5-level paging/);
  const auto = walkText(ARTICLE_ADDRESS);
  assert.ok(auto.ok);
  assert.equal(auto.levels, 5);
  assert.deepEqual(auto.walk.map((s) => s.index), [0, 484, 449, 215, 405]);
  assert.equal(auto.offset, 0x3c0);
  assert.match(auto.note, /bit 47/);
  // A user address that fits 48 bits stays on 4 levels, without a note.
  const user = walkText("0x00007f705af953c0");
  assert.equal(user.levels, 4);
  assert.equal(user.note, null);
  // Neither 48 nor 57 bits: refused under 4 levels.
  const bad = walkText("0x0100000000000000");
  assert.equal(bad.kind, "not_canonical");
  assert.match(bad.message, /nor with 5-level paging/);
});

test("fields cover the 64 bits exactly, high to low", () => {
  for (const [text, levels, page] of [["0x00007f705af953c0", 4, "4KiB"], [ARTICLE_ADDRESS, 5, "2MiB"]]) {
    const w = walk(parseAddress(text).address, levels, page);
    const f = fields(w);
    assert.equal(f.map((x) => x.bits).join(""), w.address.toString(2).padStart(64, "0"));
    assert.equal(f[0].name, "sign");
    assert.equal(f.at(-1).name, "offset");
    assert.equal(f.at(-1).bits.length, w.offsetBits);
  }
});

test("the drawing puts each chosen entry where its index falls", () => {
  const w = walk(parseAddress("0x00007f705af953c0").address, 4, "4KiB");
  const g = layout(w);
  const tables = g.boxes.filter((b) => b.kind === "table");
  assert.deepEqual(tables.map((t) => t.label), ["PGD[254]", "PUD[449]", "PMD[215]", "PTE[405]"]);
  for (const [t, s] of tables.map((t, i) => [t, w.walk[i]])) {
    assert.ok(Math.abs(t.entry.y - (TOP + (s.index / 512) * TABLE_H)) < 1e-9);
  }
  // CR3 to the first table, table to table, the last table to the page.
  assert.equal(g.arrows.length, tables.length + 1);
  const page = g.boxes.at(-1);
  assert.equal(page.kind, "page");
  assert.equal(page.label, "offset 0x3c0");
  assert.ok(g.width >= page.x + page.w);
  // A 2 MiB page: one table fewer.
  const huge = layout(walk(w.address, 4, "2MiB"));
  assert.equal(huge.boxes.filter((b) => b.kind === "table").length, 3);
  assert.equal(huge.boxes.at(-1).name, "2 MiB page");
});

test("canonical checks at the edges", () => {
  assert.ok(isCanonical(0x00007fffffffffffn, 4));
  assert.ok(isCanonical(0xffff800000000000n, 4));
  assert.ok(!isCanonical(0x0000800000000000n, 4));
  assert.ok(isCanonical(0xff00000000000000n, 5));
  assert.equal(parseAddress("0x1_0000_0000_0000_0000").kind, "too_wide");
});
