// What the kernel did in a run (pure): a result's `counts` as rows per GiB and per
// call for each end, the book's model judged beside them, and what could not be
// counted with what to do. Also the steps side by side from several runs.

import { isNumber, median } from "./format.js";
import { t } from "./i18n.js";

const GIB = 2 ** 30;

/** Sum of an end's data calls by kind (`{write: 4096}`), or null without any. */
function dataCalls(end) {
  const calls = end?.syscalls;
  if (!calls || typeof calls !== "object") return null;
  const values = Object.values(calls).filter(isNumber);
  return values.length ? values.reduce((a, b) => a + b, 0) : null;
}

/** The counts a table shows: a key, words, and how to read it off one end (null
 * when that end did not count it: never 0 for "unknown"). */
export const COUNT_ROWS = [
  { key: "data_calls", label: t("Data calls (read, write, vmsplice, splice)"), value: dataCalls },
  { key: "voluntary_switches", label: t("Sleeps (voluntary context switches)"), value: (e) => e?.voluntary_switches },
  { key: "involuntary_switches", label: t("Preemptions (involuntary context switches)"), value: (e) => e?.involuntary_switches },
  { key: "page_faults", label: t("Page faults"), value: (e) => e?.page_faults },
  { key: "page_allocs", label: t("Pages allocated"), value: (e) => e?.page_allocs },
  { key: "page_frees", label: t("Pages freed"), value: (e) => e?.page_frees },
  { key: "huge_page_allocs", label: t("Huge pages allocated in its own faults"), value: (e) => e?.huge_page_allocs },
  { key: "wakeups", label: t("Wakeups issued"), value: (e) => e?.wakeups },
  { key: "ipis", label: t("Interrupts sent to other CPUs (IPIs)"), value: (e) => e?.ipis },
  { key: "cpu_migrations", label: t("Moves to another CPU"), value: (e) => e?.cpu_migrations },
];

/** Words for the counts a `missing` entry names. */
const COUNT_WORDS = {
  cpu_migrations: t("moves to another CPU"),
  page_allocs: t("pages allocated"),
  page_frees: t("pages freed"),
  huge_page_allocs: t("huge pages allocated"),
  thp_events: t("the THP tracepoints (huge_memory, thp)"),
  wakeups: t("wakeups issued"),
  ipis: "IPIs",
  tlb_flushes: t("TLB flushes"),
  syscalls_traced: t("system calls traced"),
};

const VERDICT_WORDS = { agrees: t("Agrees"), disagrees: t("Disagrees: a finding about this machine"), unknown: t("Not counted here") };

/** The ends a result's counts name, writer and reader first. */
export function endNames(counts) {
  if (!counts || typeof counts !== "object") return [];
  const names = Object.keys(counts).filter((k) => k !== "missing" && k !== "model" && counts[k] && typeof counts[k] === "object");
  const order = (n) => (n === "writer" ? 0 : n === "reader" ? 1 : 2);
  return names.sort((a, b) => order(a) - order(b) || a.localeCompare(b));
}

/**
 * A result's counts as a table: for each count, per end, the figure per GiB moved
 * and per data call of that end. Null when the result has no counts.
 */
export function countTable(result) {
  const counts = result?.counts;
  const ends = endNames(counts);
  if (!ends.length) return null;
  const gib = isNumber(result.bytes) && result.bytes > 0 ? result.bytes / GIB : null;
  const rows = COUNT_ROWS.map((row) => {
    const cells = {};
    for (const name of ends) {
      const end = counts[name];
      const raw = row.value(end);
      const calls = dataCalls(end);
      cells[name] = {
        total: isNumber(raw) ? raw : null,
        perGib: isNumber(raw) && gib ? raw / gib : null,
        perCall: isNumber(raw) && calls ? raw / calls : null,
      };
    }
    return { key: row.key, label: row.label, cells };
  }).filter((row) => ends.some((name) => row.cells[name].total !== null));
  const model = (Array.isArray(counts.model) ? counts.model : []).map((j) => ({
    id: String(j.id),
    end: String(j.end),
    what: String(j.what),
    measured: isNumber(j.measured) ? j.measured : null,
    model: String(j.model),
    verdict: ["agrees", "disagrees"].includes(j.verdict) ? j.verdict : "unknown",
    verdictText: VERDICT_WORDS[j.verdict] ?? VERDICT_WORDS.unknown,
  }));
  return { ends, rows, model, missing: missingReasons(counts) };
}

/** What could not be counted, once per reason: "pages allocated, pages freed: why, what to do". */
export function missingReasons(counts) {
  const list = Array.isArray(counts?.missing) ? counts.missing : [];
  return list.map((m) => ({
    kind: String(m?.reason?.kind ?? "unknown"),
    counts: (Array.isArray(m?.counts) ? m.counts : []).map((c) => COUNT_WORDS[c] ?? String(c)),
    message: String(m?.message ?? ""),
  }));
}

/** Words for the machine's THP counters (`/proc/vmstat`'s `thp_*`) a run moved. */
const THP_WORDS = {
  thp_fault_alloc: t("huge pages allocated at a fault"),
  thp_fault_fallback: t("faults that wanted a huge page and got small ones"),
  thp_collapse_alloc: t("huge pages khugepaged made from small ones"),
  thp_split_page: t("huge pages split into small ones"),
  thp_split_pmd: t("huge page mappings split"),
};

/**
 * The machine-wide THP counters that moved over a run (`machine.thp`), as
 * `[{ name, label, moved }]`: every process on the machine and khugepaged add to
 * them, so they are the machine's, not an end's. Null where the result does not
 * carry them (an older result, or /proc/vmstat unreadable); [] when none moved.
 */
export function machineThp(result) {
  const thp = result?.machine?.thp;
  if (!thp || typeof thp !== "object") return null;
  return Object.entries(thp)
    .filter(([, moved]) => isNumber(moved) && moved > 0)
    .map(([name, moved]) => ({ name, label: THP_WORDS[name] ?? name, moved }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** A figure as a table shows it: whole numbers from 100 up, else three significant digits. */
export function countText(x) {
  if (!isNumber(x)) return "—";
  if (Math.abs(x) >= 100) return Math.round(x).toLocaleString("en");
  if (x === 0) return "0";
  return x.toPrecision(3).replace(/\.?0+$/, "");
}

/** The few per-GiB figures a results table compares across steps, from one result
 * (null without counts): `{ "writer.page_allocs": 229152, ... }`. */
export function perGib(result) {
  const table = countTable(result);
  if (!table) return null;
  const out = {};
  for (const row of table.rows) {
    for (const end of table.ends) {
      const v = row.cells[end].perGib;
      if (v !== null) out[`${end}.${row.key}`] = v;
    }
  }
  return out;
}

/** The rows of the comparison across steps: which end's which count. */
export const COMPARE_ROWS = [
  { key: "writer.page_allocs", label: t("Pages the writer allocated") },
  { key: "reader.page_frees", label: t("Pages the reader freed") },
  { key: "writer.data_calls", label: t("Writer's data calls") },
  { key: "reader.data_calls", label: t("Reader's data calls") },
  { key: "writer.voluntary_switches", label: t("Writer's sleeps") },
  { key: "reader.voluntary_switches", label: t("Reader's sleeps") },
  { key: "writer.page_faults", label: t("Writer's page faults") },
];

/**
 * Steps side by side: for each of `steps` (ids) and each compared count, the median
 * per GiB over the results of that step that carry `kernel` figures (see `perGib`).
 * Returns `{ steps: [{id, runs}], rows: [{key, label, values: [median|null]}] }`.
 */
export function compareSteps(results, steps) {
  const byStep = new Map(steps.map((id) => [id, []]));
  for (const r of results) {
    if (r && byStep.has(r.step) && r.kernel && typeof r.kernel === "object") byStep.get(r.step).push(r.kernel);
  }
  const rows = COMPARE_ROWS.map((row) => ({
    key: row.key,
    label: row.label,
    values: steps.map((id) => median(byStep.get(id).map((k) => k[row.key]).filter(isNumber))),
  }));
  return { steps: steps.map((id) => ({ id, runs: byStep.get(id).length })), rows };
}
