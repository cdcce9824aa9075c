// The pipe's occupancy over a run, laid out for drawing: bytes in the pipe against
// time as a min-max band, the stretches where the pipe stayed full (the writer waits
// for a slot) or empty (the reader waits for data), and the capacity named in slots.
// Pure geometry and words, tested in Node; occchart.js draws it.

import { bytes, count, isNumber } from "./format.js";
import { t } from "./i18n.js";

export const W = 640;
export const H = 170;
export const PAD = { left: 56, right: 12, top: 12, bottom: 26 };

/** One slot of the ring holds one page: a result names its size (`slot_bytes`, the
 * machine's page size); results saved before it did were measured on 4 KiB pages. */
export const SLOT = 4096;

/** The bytes one slot of `occ`'s pipe held. */
export function slotOf(occ) {
  return isNumber(occ?.slot_bytes) && occ.slot_bytes > 0 ? occ.slot_bytes : SLOT;
}

/** Bytes at or above which the pipe counts as full: within one slot of capacity. */
export function fullThreshold(capacity, slot = SLOT) {
  return Math.max(1, capacity - slot);
}

/** Whether `occ` (a result's `occupancy`) has a series that can be drawn. */
export function usable(occ) {
  const s = occ?.series;
  return Boolean(
    s &&
      isNumber(occ.capacity) &&
      occ.capacity > 0 &&
      isNumber(occ.bucket_ms) &&
      Array.isArray(s.t_ms) &&
      s.t_ms.length > 0 &&
      Array.isArray(s.min) &&
      Array.isArray(s.max) &&
      s.min.length === s.t_ms.length &&
      s.max.length === s.t_ms.length,
  );
}

/** "64 KiB = 16 slots of 4 KiB". */
export function capacityLabel(capacity, slot = SLOT) {
  return t("{capacity} = {slots} slots of {slot}", { capacity: bytes(capacity), slots: capacity / slot, slot: bytes(slot) });
}

/** "48 KiB (12 of 16 slots)": the pipe's content as a share of its ring. */
export function fillText(pipeBytes, capacity, slot = SLOT) {
  if (!isNumber(pipeBytes)) return "";
  if (!isNumber(capacity) || capacity <= 0) return bytes(pipeBytes);
  return t("{bytes} ({used} of {slots} slots)", { bytes: bytes(pipeBytes), used: Math.ceil(pipeBytes / slot), slots: capacity / slot });
}

/**
 * Stretches where every sample of a point was full or every one empty, neighbours
 * joined: [{start, end, kind: "full" | "empty"}] in milliseconds.
 */
export function phases(occ) {
  const { t_ms: t, min, max } = occ.series;
  const threshold = fullThreshold(occ.capacity, slotOf(occ));
  const out = [];
  for (let i = 0; i < t.length; i++) {
    const kind = min[i] >= threshold ? "full" : max[i] === 0 ? "empty" : null;
    if (!kind) continue;
    const start = t[i];
    const end = t[i] + occ.bucket_ms;
    const last = out[out.length - 1];
    if (last && last.kind === kind && Math.abs(last.end - start) < 1e-6) last.end = end;
    else out.push({ start, end, kind });
  }
  return out;
}

function percent(share) {
  if (!isNumber(share)) return "—";
  const p = 100 * share;
  return `${p.toFixed(p > 0 && p < 1 ? 1 : 0)}%`;
}

/** The sentence under the chart: shares of full and empty samples, and the sleeps. */
export function summary(occ) {
  const parts = [
    t("Full in {share} of {samples} samples (the writer had no free slot)", { share: percent(occ.full_share), samples: count(occ.samples) }),
    t("empty in {share} (the reader had nothing to read)", { share: percent(occ.empty_share) }),
  ];
  let text = t("{parts}.", { parts: parts.join(t(", ")) });
  if (occ.alternating) {
    text += t(" With no CPU to spare, the sampler took turns on the two ends' CPUs and ran only while the end beside it slept, so this split says where it sat, not how long each phase lasted; the sleep counts are the ends' own.");
  }
  if (isNumber(occ.writer_sleeps) && isNumber(occ.reader_sleeps)) {
    text += t(" Meanwhile the writer slept {writer} times and the reader {reader}.", { writer: count(occ.writer_sleeps), reader: count(occ.reader_sleeps) });
  }
  return text;
}

/**
 * Geometry in a W x H box: {band, phases: [{x, w, kind}], capacityY, yTicks: [{y, label}],
 * xTicks: [{x, label}], points}. The y axis ends a little above capacity.
 */
export function layout(occ) {
  const s = occ.series;
  const n = s.t_ms.length;
  const tEnd = Math.max(s.t_ms[n - 1] + occ.bucket_ms, 1e-3);
  const top = occ.capacity * 1.1;
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const round = (v) => Math.round(v * 10) / 10;
  const x = (ms) => round(PAD.left + (ms / tEnd) * plotW);
  const y = (b) => round(PAD.top + plotH - (Math.min(b, top) / top) * plotH);
  // A band point at each bucket's middle, so a lone bucket still has width.
  const mid = (i) => s.t_ms[i] + occ.bucket_ms / 2;
  const upper = [];
  const lower = [];
  for (let i = 0; i < n; i++) {
    upper.push(`${x(mid(i))},${y(s.max[i])}`);
    lower.push(`${x(mid(i))},${y(s.min[i])}`);
  }
  if (n === 1) {
    upper.unshift(`${x(s.t_ms[0])},${y(s.max[0])}`);
    lower.unshift(`${x(s.t_ms[0])},${y(s.min[0])}`);
  }
  const slots = occ.capacity / slotOf(occ);
  // Ticks at empty, half and full, in slots (the ring's unit).
  const yTicks = [0, 0.5, 1].map((f) => ({
    y: y(occ.capacity * f),
    label: f === 0 ? "0" : t("{n} slots", { n: Math.round(slots * f) }),
  }));
  const seconds = tEnd / 1000;
  const xTicks = [0, 0.5, 1].map((f) => ({
    x: x(tEnd * f),
    label: `${(seconds * f).toFixed(seconds * f >= 10 || f === 0 ? 0 : seconds < 1 ? 2 : 1)} s`,
  }));
  return {
    band: `${upper.join(" ")} ${lower.reverse().join(" ")}`,
    phases: phases(occ).map((p) => ({ x: x(p.start), w: Math.max(0.5, round(x(p.end) - x(p.start))), kind: p.kind })),
    capacityY: y(occ.capacity),
    plotTop: PAD.top,
    plotBottom: H - PAD.bottom,
    yTicks,
    xTicks,
    points: n,
  };
}
