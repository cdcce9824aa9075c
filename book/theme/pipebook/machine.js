// Words for the machine report (/api/system): the CPU topology as a line per CPU,
// the findings list checked before it is shown, a wakeup measurement, and the
// blocking-vs-busy gap in the reader's own history. Pure, tested in Node.

import { figure, isNumber } from "./format.js";
import { t } from "./i18n.js";

/** "CPU 0: core 0, package 0, SMT siblings 0, 2" per CPU the runner may use. */
export function topologyLines(places) {
  if (!Array.isArray(places)) return [];
  return places
    .filter((p) => p && Number.isInteger(p.cpu))
    .map((p) => {
      const parts = [];
      if (Number.isInteger(p.core)) parts.push(t("core {n}", { n: p.core }));
      if (Number.isInteger(p.package)) parts.push(t("package {n}", { n: p.package }));
      const siblings = Array.isArray(p.siblings) ? p.siblings.filter((s) => s !== p.cpu) : [];
      parts.push(siblings.length ? t("shares its core with CPU {cpus}", { cpus: siblings.join(", ") }) : t("no SMT sibling"));
      return t("CPU {cpu}: {parts}", { cpu: p.cpu, parts: parts.join(t(", ")) });
    });
}

/** The findings that have every field as text; anything else is left out. */
export function findingsOf(info) {
  const list = info && Array.isArray(info.findings) ? info.findings : [];
  return list.filter((f) => f && ["id", "title", "evidence", "effect"].every((k) => typeof f[k] === "string"));
}

/** The step pairs that differ only in blocking vs busy-polling: [blocking, busy]. */
export const BUSY_TWINS = [["huge-pages", "busy-loop"]];

/**
 * From the reader's results: for each twin pair with both steps run, the best
 * GiB/s of each and the milliseconds per GiB the blocking one loses.
 */
export function historyGaps(results) {
  const best = new Map();
  for (const r of Array.isArray(results) ? results : []) {
    if (!r || !isNumber(r.gib_per_s) || r.gib_per_s <= 0) continue;
    best.set(r.step, Math.max(best.get(r.step) ?? 0, r.gib_per_s));
  }
  return BUSY_TWINS.filter(([b, s]) => best.has(b) && best.has(s)).map(([blockingStep, busyStep]) => {
    const blocking = best.get(blockingStep);
    const busy = best.get(busyStep);
    return { blockingStep, busyStep, blocking, busy, msPerGiB: 1000 / blocking - 1000 / busy };
  });
}

/** A wakeup measurement in one sentence. */
export function wakeupText(w) {
  if (!w || !isNumber(w.blocking_us) || !isNumber(w.busy_us)) return "";
  const perSleep = Math.max(0, w.blocking_us - w.busy_us) / 2;
  return t("Round trip between CPUs {a} and {b}: {blocking} {u_us} blocking, {busy} {u_us} busy-polling (medians of {n}); about {sleep} {u_us} per sleep.", { u_us: "µs",
    a: w.cpus?.[0],
    b: w.cpus?.[1],
    blocking: w.blocking_us.toFixed(1),
    busy: w.busy_us.toFixed(2),
    n: w.round_trips,
    sleep: perSleep.toFixed(1),
  });
}

/** The history gap in one sentence ("" when the reader has not run both steps). */
export function gapText(gap) {
  if (!gap) return "";
  const said = { blockingStep: gap.blockingStep, blocking: figure(gap.blocking), busyStep: gap.busyStep, busy: figure(gap.busy), ms: Math.abs(gap.msPerGiB).toFixed(1) };
  return gap.msPerGiB >= 0
    ? t("Your history: {blockingStep} best {blocking} {u_gibs}, {busyStep} best {busy} {u_gibs}; blocking loses {ms} ms per GiB.", { u_gibs: "GiB/s", ...said })
    : t("Your history: {blockingStep} best {blocking} {u_gibs}, {busyStep} best {busy} {u_gibs}; blocking gains {ms} ms per GiB.", { u_gibs: "GiB/s", ...said });
}
