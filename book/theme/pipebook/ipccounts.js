// What the kernel did for each end of an IPC run, per GiB moved: the rows of the
// IPC card's counts table, from the `counts` each end of a result carries. Pure
// (no DOM), so node --test checks it. A count an end could not take is "n/a",
// never 0; the reasons come once, below the rows.

const GIB = 2 ** 30;

const ROWS = [
  ["data calls", (c) => (c.syscalls && Object.keys(c.syscalls).length ? Object.values(c.syscalls).reduce((a, b) => a + b, 0) : null)],
  ["sleeps (voluntary switches)", (c) => c.voluntary_switches],
  ["preemptions", (c) => c.involuntary_switches],
  ["page faults", (c) => c.page_faults],
  ["page allocations", (c) => c.page_allocs],
  ["pages freed", (c) => c.page_frees],
  ["wakeups issued", (c) => c.wakeups],
  ["IPIs sent", (c) => c.ipis],
  ["CPU migrations", (c) => c.cpu_migrations],
];

function perGib(value, bytes) {
  if (typeof value !== "number" || !Number.isFinite(value)) return "n/a";
  if (!(bytes > 0)) return "—";
  const per = value / (bytes / GIB);
  return per >= 100 ? Math.round(per).toLocaleString("en-US") : per.toFixed(1);
}

/**
 * The counts table of one IPC result: `{ ends, rows, missing }`, or null when no
 * end counted anything. `ends` are the roles in the result's order; each row is
 * `{ label, cells }` with one text per end; `missing` the reasons, each once.
 */
export function ipcCountRows(result) {
  const ends = (result?.ends || []).filter((e) => e.counts?.counts);
  if (!ends.length) return null;
  const rows = ROWS.map(([label, read]) => ({
    label,
    cells: ends.map((e) => perGib(read(e.counts.counts) ?? null, result.bytes)),
  }));
  const missing = [];
  for (const e of ends) {
    for (const m of e.counts.missing || []) {
      if (m.message && !missing.includes(m.message)) missing.push(m.message);
    }
  }
  return { ends: ends.map((e) => e.role), rows, missing };
}
