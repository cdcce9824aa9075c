// Earlier runs of an IPC mechanism, from the runner's history (/api/results, where
// IPC lab results carry "kind":"ipc"). Pure, for tests.

import { isNumber } from "../format.js";
import { median, ratioText } from "../verdict.js";
import { t } from "../i18n.js";

/**
 * The verified runs of `mechanism` in `history`, summarised:
 * {runs, best: {mib_per_s, bytes, finished_at_ms} | null, last: same | null}.
 */
export function earlierRuns(history, mechanism) {
  const mine = (Array.isArray(history) ? history : []).filter(
    (r) => r && r.kind === "ipc" && r.mechanism === mechanism && r.checksum_ok === true && isNumber(r.mib_per_s) && r.mib_per_s > 0,
  );
  const pick = (r) => (r ? { mib_per_s: r.mib_per_s, bytes: r.bytes, finished_at_ms: r.finished_at_ms } : null);
  const best = mine.reduce((a, r) => (!a || r.mib_per_s > a.mib_per_s ? r : a), null);
  const last = mine.reduce((a, r) => (!a || (r.finished_at_ms ?? 0) >= (a.finished_at_ms ?? 0) ? r : a), null);
  return { runs: mine.length, best: pick(best), last: pick(last) };
}

/**
 * What makes IPC runs of one mechanism comparable: the mechanism, the bytes
 * moved, the bytes per call and whether the ends counted the kernel's events
 * (counting costs a run a little, as tracing costs a pipe step). From a record,
 * or null for something that is not an IPC record.
 */
export function ipcConfigOf(r) {
  if (!r || r.kind !== "ipc" || typeof r.mechanism !== "string") return null;
  return {
    mechanism: r.mechanism,
    bytes: isNumber(r.bytes) ? Number(r.bytes) : null,
    chunk: isNumber(r.chunk) ? Number(r.chunk) : null,
    counted: Array.isArray(r.ends) && r.ends.length > 0 && r.ends.every((e) => e?.counts != null),
  };
}

function sameIpcConfig(r, config) {
  const c = ipcConfigOf(r);
  return !!c && c.mechanism === config.mechanism && c.bytes === config.bytes && c.chunk === config.chunk && c.counted === config.counted;
}

/**
 * The newest quiet, verified run of `mechanism` in `records` (the history and
 * this page's own), as a configuration to compare, or null when there is none.
 */
export function newestQuietConfig(records, mechanism) {
  const quiet = (Array.isArray(records) ? records : []).filter(
    (r) => r?.kind === "ipc" && r.mechanism === mechanism && r.watched === false && r.checksum_ok === true,
  );
  const newest = quiet.reduce((a, r) => (!a || (r.finished_at_ms ?? 0) >= (a.finished_at_ms ?? 0) ? r : a), null);
  return ipcConfigOf(newest);
}

/**
 * The runs of one IPC configuration in `records`: the MiB/s of the quiet ones
 * (watched runs, and older records that do not say, are left out and counted
 * as `left`), each run once (by its finish time), verified only.
 */
export function quietRuns(records, config) {
  const seen = new Set();
  const mine = [];
  let left = 0;
  for (const r of Array.isArray(records) ? records : []) {
    if (!r || r.checksum_ok !== true || !(isNumber(r.mib_per_s) && r.mib_per_s > 0) || !sameIpcConfig(r, config)) continue;
    const key = r.finished_at_ms;
    if (seen.has(key)) continue;
    seen.add(key);
    if (r.watched === false) mine.push(Number(r.mib_per_s));
    else left += 1;
  }
  return { quiet: mine, left };
}

/**
 * A matrix row's "÷ survey" cell from the quiet runs this page made of the
 * mechanism (MiB/s, one configuration) against the survey's rate (MiB/s) and
 * the runner's judgement `j` of them (null until it answers): {text,
 * comparison}: with the runner's interval, the ratio and it; otherwise the
 * median's ratio and the count of runs (and, when the runner said they are too
 * few, how many it needs); with none or no survey figure, a dash.
 */
export function surveyCell(runs, surveyRate, j = null) {
  if (!(isNumber(surveyRate) && surveyRate > 0) || !Array.isArray(runs) || !runs.length) return { text: "—", comparison: null };
  if (j && j.verdict !== "too_few" && isNumber(j.ci_low) && isNumber(j.ci_high)) return { text: t("{ratio}× ({low} to {high}, {n} runs)", { ratio: ratioText(j.ratio), low: ratioText(j.ci_low), high: ratioText(j.ci_high), n: runs.length }), comparison: j };
  const n = runs.length;
  const why = j?.verdict === "too_few" ? t("; an interval needs {n}", { n: j.min_n }) : "";
  return { text: t("{ratio}× ({runs}{why})", { ratio: ratioText(median(runs) / surveyRate), runs: n === 1 ? t("one run") : t("{n} runs", { n }), why }), comparison: null };
}
