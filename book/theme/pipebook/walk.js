// A virtual address taken apart the way the x86-64 MMU walks its page table, and the
// geometry of a drawing of that walk. Pure (BigInt arithmetic, no DOM): tested in Node
// against the same vectors as the Rust `paging::walk` (book/tests/paging-vectors.json).
//
// 4-level paging translates 48 bits: PGD, PUD, PMD, PTE (9 bits each) and a 12-bit
// offset; bits 63..48 must copy bit 47. 5-level paging adds the P4D and translates 57
// bits; bits 63..57 must copy bit 56. A 2 MiB page ends the walk at the PMD, and its
// offset has 21 bits.

import { t } from "./i18n.js";

export const ARTICLE_ADDRESS = "0x0000f2705af953c0";

const NAMES = { 4: ["PGD", "PUD", "PMD", "PTE"], 5: ["PGD", "P4D", "PUD", "PMD", "PTE"] };
const U64 = (1n << 64n) - 1n;

/** Bits an address translates under `levels`-level paging (48 or 57). */
export function addressBits(levels) {
  return 12 + 9 * levels;
}

/** Parses hex (`0x...`) or decimal, `_` allowed: {ok, address} or {ok: false, kind, message}. */
export function parseAddress(text) {
  const raw = String(text ?? "");
  const cleaned = raw.trim().replaceAll("_", "");
  const hex = /^0[xX]/.test(cleaned);
  const digits = hex ? cleaned.slice(2) : cleaned;
  const valid = hex ? /^[0-9a-fA-F]+$/ : /^[0-9]+$/;
  if (!digits || !valid.test(digits)) {
    return {
      ok: false,
      kind: "unparsable",
      message: t("`{raw}` is not an address: write it in hex like {example}, or in decimal", { raw, example: ARTICLE_ADDRESS }),
    };
  }
  const address = BigInt(hex ? `0x${digits}` : digits);
  if (address > U64) {
    return {
      ok: false,
      kind: "too_wide",
      message: t("`{raw}` is wider than 64 bits: an x86-64 virtual address has at most 16 hex digits", { raw }),
    };
  }
  return { ok: true, address };
}

/** Whether the bits above the translated ones all copy the highest translated bit. */
export function isCanonical(address, levels) {
  const shift = BigInt(addressBits(levels) - 1);
  const high = address >> shift;
  return high === 0n || high === U64 >> shift;
}

/** `address` as 0x and 16 hex digits. */
export function hex64(address) {
  return `0x${address.toString(16).padStart(16, "0")}`;
}

/**
 * The walk to a page of `page` size ("4KiB" or "2MiB"):
 * {ok, address, levels, page, walk: [{name, index, shift}], offset, offsetBits}, or
 * {ok: false, kind: "not_canonical", message} when the CPU would refuse the address.
 */
export function walk(address, levels, page = "4KiB") {
  if (!isCanonical(address, levels)) {
    const bits = addressBits(levels);
    const five = levels === 4 && isCanonical(address, 5) ? t("; it is canonical with 5-level paging (57 bits)") : "";
    return {
      ok: false,
      kind: "not_canonical",
      message: t("{address} is not canonical for {levels}-level paging: bits 63..{bits} must all equal bit {bit} (user addresses start 0x0000, kernel ones 0xffff){five}", { address: hex64(address), levels, bits, bit: bits - 1, five }),
    };
  }
  const names = NAMES[levels];
  const depth = page === "2MiB" ? names.length - 1 : names.length;
  const steps = names.slice(0, depth).map((name, i) => {
    const shift = 12 + 9 * (names.length - 1 - i);
    return { name, index: Number((address >> BigInt(shift)) & 0x1ffn), shift };
  });
  const offsetBits = page === "2MiB" ? 21 : 12;
  const offset = Number(address & ((1n << BigInt(offsetBits)) - 1n));
  return { ok: true, address, levels, page, walk: steps, offset, offsetBits };
}

/**
 * What the reader typed, walked: `levels` "auto" takes 4 where the address is canonical
 * with 48 bits, else 5, and says so in `note`.
 */
export function walkText(text, levels = "auto", page = "4KiB") {
  const parsed = parseAddress(text);
  if (!parsed.ok) return parsed;
  let chosen = Number(levels);
  let note = null;
  if (levels === "auto") {
    chosen = isCanonical(parsed.address, 4) || !isCanonical(parsed.address, 5) ? 4 : 5;
    if (chosen === 5) {
      note = t("{address} has bit 47 set but not bits 63..48, so a CPU with 4-level paging would refuse it; with 5-level paging (57 bits) it is a valid user address, walked here.", { address: hex64(parsed.address) });
    }
  }
  const result = walk(parsed.address, chosen, page);
  if (!result.ok && levels === "auto") {
    result.message += t("; nor with 5-level paging, where bits 63..57 must all equal bit 56");
  }
  return result.ok ? { ...result, note } : result;
}

/**
 * The address's 64 bits as labelled fields, high to low: the unused top, each level's
 * 9 bits, the offset. [{name, hi, lo, bits}] with `bits` a string of 0s and 1s.
 */
export function fields(w) {
  const bin = w.address.toString(2).padStart(64, "0");
  const slice = (hi, lo) => bin.slice(63 - hi, 64 - lo);
  const top = addressBits(w.levels);
  const out = [{ name: "sign", hi: 63, lo: top, bits: slice(63, top) }];
  for (const s of w.walk) out.push({ name: s.name, hi: s.shift + 8, lo: s.shift, bits: slice(s.shift + 8, s.shift) });
  out.push({ name: "offset", hi: w.offsetBits - 1, lo: 0, bits: slice(w.offsetBits - 1, 0) });
  return out;
}

// The drawing: CR3, one column per table (512 entries, top to bottom), then the page.
export const TABLE_W = 96;
export const TABLE_H = 220;
export const GAP = 34;
export const TOP = 34;

/**
 * Geometry of the walk's picture: {width, height, boxes: [{kind, name, x, y, w, h,
 * entry: {y, h}, label}], arrows: [{x1, y1, x2, y2}]}. Entry i of a table sits at
 * i/512 of its height, so the highlighted stripe shows where the index falls.
 */
export function layout(w) {
  const boxes = [];
  const arrows = [];
  const cr3 = { kind: "cr3", name: "CR3", x: 0, y: TOP, w: 56, h: 30, label: "CR3" };
  boxes.push(cr3);
  let x = cr3.w + GAP;
  let from = { x: cr3.x + cr3.w, y: cr3.y + cr3.h / 2 };
  const stripe = Math.max(3, TABLE_H / 512);
  for (const s of w.walk) {
    const y = TOP + (s.index / 512) * TABLE_H;
    const entry = { y: Math.min(y, TOP + TABLE_H - stripe), h: stripe };
    boxes.push({ kind: "table", name: s.name, x, y: TOP, w: TABLE_W, h: TABLE_H, entry, label: `${s.name}[${s.index}]` });
    arrows.push({ x1: from.x, y1: from.y, x2: x, y2: TOP });
    from = { x: x + TABLE_W, y: entry.y + entry.h / 2 };
    x += TABLE_W + GAP;
  }
  const size = w.offsetBits === 21 ? 1 << 21 : 1 << 12;
  const y = TOP + (w.offset / size) * TABLE_H;
  const entry = { y: Math.min(y, TOP + TABLE_H - 3), h: 3 };
  const label = `offset 0x${w.offset.toString(16)}`;
  boxes.push({ kind: "page", name: t("{size} page", { size: w.page === "2MiB" ? "2 MiB" : "4 KiB" }), x, y: TOP, w: TABLE_W, h: TABLE_H, entry, label });
  arrows.push({ x1: from.x, y1: from.y, x2: x, y2: TOP });
  return { width: x + TABLE_W + 4, height: TOP + TABLE_H + 34, boxes, arrows };
}
