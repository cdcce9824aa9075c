// The page inspector's grid: one cell per page (the machine's size) of a writer buffer, coloured by
// what pagemap and kpageflags said. Pure (no DOM): the state, hover text and geometry
// of every cell, tested in Node; pages.js draws it.

import { t } from "./i18n.js";

export const COLUMNS = 32;
export const CELL = 10;
export const GAP = 1;

/** States, in legend order, with their legend text. */
export const STATES = {
  absent: t("not present (nothing mapped yet)"),
  present: t("present, a base page"),
  head: t("huge page: compound head"),
  tail: t("huge page: compound tail"),
  thp: t("in a huge page (head or tail unknown)"),
  zero: t("the shared zero page"),
};

/**
 * A page's state. Without flags (no root) a present page is just `present`, unless the
 * whole buffer is known to be huge (`hugeKnown`, from smaps), which makes it `thp`.
 */
export function cellState(page, hugeKnown = false) {
  if (!page.present) return "absent";
  const f = page.flags;
  if (f) {
    if (f.zero_page) return "zero";
    if (f.head) return "head";
    if (f.tail) return "tail";
    if (f.thp) return "thp";
    return "present";
  }
  return hugeKnown ? "thp" : "present";
}

const hex = (n) => `0x${Number(n).toString(16)}`;

/** The hover text of one cell: index, address, state, frame and flags when known. */
export function cellTitle(page, state, used) {
  const parts = [t("page {index} at {address}", { index: page.index, address: hex(page.vaddr) }), STATES[state]];
  if (page.pfn !== undefined && page.pfn !== null) parts.push(t("frame {frame}", { frame: hex(page.pfn) }));
  if (page.flags) parts.push(`flags: ${page.flags.names.join(", ") || "none"}`);
  if (!used) parts.push(t("past the bytes one call hands over"));
  return parts.join("\n");
}

/** The page size a buffer of a pages report was inspected with (reports from before
 * it was named come from 4 KiB pages). */
export function pageSizeOf(buffer) {
  const size = Number(buffer?.page_size);
  return Number.isFinite(size) && size > 0 ? size : 4096;
}

/**
 * Geometry and counts for one buffer of a pages report. `chunk` is the bytes one call
 * hands over (the report's buf_size): pages past it are allocated (a huge page is
 * larger than one call) but never passed to the pipe, and are marked `used: false`.
 * Returns {width, height, cells: [{x, y, size, index, state, used, title}], counts}.
 */
export function gridLayout(buffer, chunk, columns = COLUMNS) {
  const hugeKnown = Boolean(buffer.huge_pages && buffer.huge_pages.huge_bytes >= buffer.len);
  const lastUsed = Math.floor((buffer.offset_in_page + chunk - 1) / pageSizeOf(buffer));
  const counts = Object.fromEntries(Object.keys(STATES).map((k) => [k, 0]));
  const cells = buffer.pages.map((page, i) => {
    const state = cellState(page, hugeKnown);
    counts[state] += 1;
    const used = i <= lastUsed;
    return {
      x: (i % columns) * (CELL + GAP),
      y: Math.floor(i / columns) * (CELL + GAP),
      size: CELL,
      index: page.index,
      state,
      used,
      title: cellTitle(page, state, used),
    };
  });
  const rows = Math.max(1, Math.ceil(cells.length / columns));
  return {
    width: Math.min(cells.length || 1, columns) * (CELL + GAP) - GAP,
    height: rows * (CELL + GAP) - GAP,
    cells,
    counts,
  };
}

/** Bytes in KiB as the grid's text says them: "4 KiB", "64 KiB". */
const kib = (bytes) => `${bytes / 1024} KiB`;

/** One line saying what the grid shows, e.g. "64 of 512 pages handed over per call; 1 head, 511 tails". */
export function summary(buffer, chunk) {
  const g = gridLayout(buffer, chunk);
  const used = g.cells.filter((c) => c.used).length;
  const parts = [t("{n} pages of {size}, {present} present", { n: buffer.pages.length, size: kib(pageSizeOf(buffer)), present: buffer.present })];
  if (used < g.cells.length) parts.push(t("the first {n} hold the {size} one call hands over", { n: used, size: kib(chunk) }));
  if (g.counts.head || g.counts.tail) parts.push(g.counts.head === 1 ? t("{heads} compound head, {tails} tails", { heads: 1, tails: g.counts.tail }) : t("{heads} compound heads, {tails} tails", { heads: g.counts.head, tails: g.counts.tail }));
  if (g.counts.zero) parts.push(t("{n} on the zero page", { n: g.counts.zero }));
  return parts.join("; ");
}
