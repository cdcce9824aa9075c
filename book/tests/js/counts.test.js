import { test } from "node:test";
import assert from "node:assert/strict";

import { compareSteps, countTable, countText, endNames, machineThp, missingReasons, perGib } from "../../theme/pipebook/counts.js";
import { slim } from "../../theme/pipebook/store.js";

const GIB = 2 ** 30;

// 2 GiB of write-read as a result carries it (figures shaped like the measured ones).
const writeRead = {
  step: "write-read",
  bytes: 2 * GIB,
  gib_per_s: 0.8,
  elapsed_ms: 2500,
  finished_at_ms: 1,
  counts: {
    writer: { syscalls: { write: 8192 }, voluntary_switches: 32000, page_faults: 400, page_allocs: 460000, page_frees: 200 },
    reader: { syscalls: { read: 32768 }, voluntary_switches: 31000, page_faults: 300, page_allocs: 400, page_frees: 458000 },
    missing: [],
    model: [
      { id: "writer_page_allocs", end: "writer", what: "page allocations per 4 KiB moved", measured: 0.877, model: "at most one", verdict: "agrees" },
      { id: "reads_per_write", end: "reader", what: "read calls per write call", measured: 4, model: "4", verdict: "disagrees" },
    ],
  },
};

test("the table gives each end's counts per GiB and per data call", () => {
  const t = countTable(writeRead);
  assert.deepEqual(t.ends, ["writer", "reader"]);
  const allocs = t.rows.find((r) => r.key === "page_allocs");
  assert.equal(allocs.cells.writer.perGib, 230000);
  assert.equal(allocs.cells.writer.perCall, 460000 / 8192);
  const calls = t.rows.find((r) => r.key === "data_calls");
  assert.equal(calls.cells.reader.perGib, 16384);
  assert.equal(calls.cells.reader.perCall, 1);
  // Counts no end has (wakeups, IPIs here) get no row; a missing one is null, not 0.
  assert.ok(!t.rows.some((r) => r.key === "wakeups"));
  assert.equal(t.model.length, 2);
  assert.equal(t.model[1].verdict, "disagrees");
  assert.match(t.model[1].verdictText, /finding/);
});

test("a run without tracepoints says which counts are missing and what to do", () => {
  const result = {
    ...writeRead,
    counts: {
      writer: { syscalls: { write: 10 }, voluntary_switches: 5, page_faults: 3 },
      missing: [
        {
          counts: ["page_allocs", "page_frees", "wakeups"],
          reason: { kind: "not_permitted", paranoid: 2 },
          message: "counting kernel events needs root",
        },
      ],
    },
  };
  const t = countTable(result);
  assert.ok(!t.rows.some((r) => r.key === "page_allocs"));
  assert.deepEqual(t.missing, [
    { kind: "not_permitted", counts: ["pages allocated", "pages freed", "wakeups issued"], message: "counting kernel events needs root" },
  ]);
  assert.deepEqual(missingReasons(undefined), []);
  assert.equal(countTable({ step: "x", bytes: 1 }), null);
  assert.deepEqual(endNames({ reader: {}, ipc_a: {}, writer: {}, missing: [] }), ["writer", "reader", "ipc_a"]);
});

test("figures read as whole numbers from 100 up and three digits below", () => {
  assert.equal(countText(229152.4), "229,152");
  assert.equal(countText(0.8751), "0.875");
  assert.equal(countText(4), "4");
  assert.equal(countText(0), "0");
  assert.equal(countText(null), "—");
});

test("the steps compare by the median per GiB of the runs that counted", () => {
  const vmsplice = (allocs) => ({
    ...writeRead,
    step: "vmsplice-splice",
    bytes: GIB,
    counts: { writer: { syscalls: { vmsplice: 4096 }, voluntary_switches: 10, page_faults: 2000, page_allocs: allocs } },
  });
  const results = [writeRead, vmsplice(0), vmsplice(10), vmsplice(30), { step: "vmsplice-splice", gib_per_s: 3 }].map(slim);
  assert.deepEqual(results[0].kernel["writer.page_allocs"], 230000);
  assert.equal(results[4].kernel, undefined);
  const { steps, rows } = compareSteps(results, ["write-read", "vmsplice-splice", "busy-loop"]);
  assert.deepEqual(steps, [
    { id: "write-read", runs: 1 },
    { id: "vmsplice-splice", runs: 3 },
    { id: "busy-loop", runs: 0 },
  ]);
  const allocs = rows.find((r) => r.key === "writer.page_allocs");
  assert.deepEqual(allocs.values, [230000, 10, null]);
  assert.deepEqual(perGib({ step: "x" }), null);
});

test("an end's huge pages are its row; the machine's THP counters stay the machine's", () => {
  const huge = {
    ...writeRead,
    step: "huge-pages",
    counts: {
      writer: { syscalls: { vmsplice: 100 }, page_faults: 12, huge_page_allocs: 2 },
      reader: { syscalls: { splice: 100 }, page_faults: 10, huge_page_allocs: 0 },
      missing: [{ counts: ["thp_events"], reason: { kind: "not_per_end", events: ["huge_memory:mm_collapse_huge_page"] }, message: "not in either end" }],
    },
    machine: { cpus: [0, 1], thp: { thp_fault_alloc: 5, thp_split_pmd: 0 } },
  };
  const t = countTable(huge);
  const row = t.rows.find((r) => r.key === "huge_page_allocs");
  assert.equal(row.cells.writer.total, 2);
  assert.equal(row.cells.reader.total, 0);
  assert.deepEqual(t.missing[0].counts, ["the THP tracepoints (huge_memory, thp)"]);
  // Only what moved, in words; none moved is [], not carried is null.
  assert.deepEqual(machineThp(huge), [{ name: "thp_fault_alloc", label: "huge pages allocated at a fault", moved: 5 }]);
  assert.deepEqual(machineThp({ machine: { thp: {} } }), []);
  assert.equal(machineThp(writeRead), null);
  // Never an end of its own: `machine` is beside `counts`, not in it.
  assert.deepEqual(t.ends, ["writer", "reader"]);
});
