// What the kernel did for each end of an IPC run, per GiB moved: the rows of the
// IPC card's counts table, from the `counts` each end of a result carries. Pure
// (no DOM), so node --test checks it. A count an end could not take is "n/a",
// never 0; the reasons come once, below the rows.

import { t } from "../i18n.js";

const GIB = 2 ** 30;

const ROWS = [
  [t("data calls"), (c) => (c.syscalls && Object.keys(c.syscalls).length ? Object.values(c.syscalls).reduce((a, b) => a + b, 0) : null)],
  [t("sleeps (voluntary switches)"), (c) => c.voluntary_switches],
  [t("preemptions"), (c) => c.involuntary_switches],
  [t("page faults"), (c) => c.page_faults],
  [t("page allocations"), (c) => c.page_allocs],
  [t("pages freed"), (c) => c.page_frees],
  [t("wakeups issued"), (c) => c.wakeups],
  [t("IPIs sent"), (c) => c.ipis],
  [t("CPU migrations"), (c) => c.cpu_migrations],
];

/** The counts a reason names, in the table's words. */
const MISSING_WORDS = {
  cpu_migrations: t("CPU migrations"),
  page_allocs: t("page allocations"),
  page_frees: t("pages freed"),
  wakeups: t("wakeups issued"),
  ipis: t("IPIs sent"),
  tlb_flushes: t("TLB flushes"),
  syscalls_traced: t("system calls traced"),
};

/** One reason as the card lists it: which counts, then why. */
function missingText(m) {
  const names = (Array.isArray(m.counts) ? m.counts : []).map((c) => MISSING_WORDS[c] ?? String(c));
  return names.length ? `${names.join(", ")}: ${m.message}` : m.message;
}

function perGib(value, bytes) {
  if (typeof value !== "number" || !Number.isFinite(value)) return "n/a";
  if (!(bytes > 0)) return "—";
  const per = value / (bytes / GIB);
  return per >= 100 ? Math.round(per).toLocaleString("en-US") : per.toFixed(1);
}

/** Bytes per data call of one end (its calls' bytes over their number), or
 * "n/a" where the end made no call or did not tally the bytes. */
function bytesPerCall(end, counts) {
  const calls = counts?.syscalls;
  const bytes = end?.call_bytes;
  if (!calls || !bytes || typeof bytes !== "object") return "n/a";
  let n = 0;
  let moved = 0;
  for (const [kind, b] of Object.entries(bytes)) {
    if (typeof b === "number" && typeof calls[kind] === "number") {
      n += calls[kind];
      moved += b;
    }
  }
  if (!(n > 0)) return "n/a";
  const per = moved / n;
  for (const [unit, size] of [["MiB", 2 ** 20], ["KiB", 2 ** 10]]) {
    if (per >= size) return `${(per / size).toFixed(1)} ${unit}`;
  }
  return `${Math.round(per)} B`;
}

const VERDICT_WORDS = { agrees: t("Holds"), disagrees: t("Does not hold: a finding about this machine"), unknown: t("Cannot tell") };

/** A measured figure of the model: three significant digits, or "n/a". */
function modelFigure(x) {
  if (typeof x !== "number" || !Number.isFinite(x)) return "n/a";
  if (x === 0) return "0";
  return Math.abs(x) >= 100 ? Math.round(x).toLocaleString("en-US") : x.toPrecision(3).replace(/\.?0+$/, "");
}

/**
 * The chapter's predictions for one IPC result, judged: one row per prediction,
 * `{ id, end, what, measured, model, verdict, verdictText }`; the verdict text
 * says why it cannot tell when it cannot.
 */
export function ipcModelRows(result) {
  const model = Array.isArray(result?.model) ? result.model : [];
  return model.map((j) => {
    const verdict = ["agrees", "disagrees"].includes(j?.verdict) ? j.verdict : "unknown";
    const why = verdict === "unknown" && typeof j?.why === "string" && j.why ? `: ${j.why}` : "";
    return {
      id: String(j?.id ?? ""),
      end: String(j?.end ?? ""),
      what: String(j?.what ?? ""),
      measured: modelFigure(j?.measured),
      model: String(j?.model ?? ""),
      verdict,
      verdictText: `${VERDICT_WORDS[verdict]}${why}`,
    };
  });
}

/**
 * The counts table of one IPC result: `{ ends, rows, missing }`, or null when no
 * end counted anything. `ends` are the roles in the result's order; each row is
 * `{ label, cells }` with one text per end; `missing` the reasons, each once,
 * each naming the counts it left out.
 */
export function ipcCountRows(result) {
  const ends = ipcEndCounts(result);
  if (!ends.length) return null;
  const rows = ROWS.map(([label, read]) => ({
    label,
    cells: ends.map((e) => perGib(read(e.counts) ?? null, result.bytes)),
  }));
  // Bytes per call is per call, not per GiB: it comes right after the calls.
  rows.splice(1, 0, { label: t("bytes per data call"), cells: ends.map((e) => bytesPerCall(e.end, e.counts)) });
  const missing = [];
  for (const m of ends.flatMap((e) => e.missing)) {
    const text = m?.message ? missingText(m) : "";
    if (text && !missing.includes(text)) missing.push(text);
  }
  return { ends: ends.map((e) => e.end.role), rows, missing };
}

/**
 * Each end of an IPC result that counted, in the result's order: `{ end, counts,
 * missing }`. A record keeps its counts once, in `counts` keyed by role (the
 * reasons in `counts.missing`, for the whole record); a record from before that
 * kept them in each end's own `counts: { counts, missing }`, read as such.
 */
export function ipcEndCounts(result) {
  const ends = Array.isArray(result?.ends) ? result.ends : [];
  const top = result?.counts;
  if (top && typeof top === "object") {
    const missing = Array.isArray(top.missing) ? top.missing : [];
    return ends
      .filter((e) => top[e?.role] && typeof top[e.role] === "object")
      .map((e, i) => ({ end: e, counts: top[e.role], missing: i === 0 ? missing : [] }));
  }
  return ends
    .filter((e) => e?.counts?.counts && typeof e.counts.counts === "object")
    .map((e) => ({ end: e, counts: e.counts.counts, missing: Array.isArray(e.counts.missing) ? e.counts.missing : [] }));
}
