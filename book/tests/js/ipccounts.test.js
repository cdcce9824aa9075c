import { test } from "node:test";
import assert from "node:assert/strict";

import { ipcCountRows, ipcEndCounts, ipcModelRows } from "../../theme/pipebook/ipc/counts.js";

const end = (role, counts, missing = []) => ({ role, usage: {}, counts: { counts, missing } });

test("counts are per GiB, per end, and what was not counted is n/a, not 0", () => {
  const result = {
    bytes: 2 * 2 ** 30,
    ends: [
      end("consumer", { syscalls: {}, voluntary_switches: 4000, involuntary_switches: 2, page_faults: 10, page_allocs: 300 }),
      end("producer", { syscalls: { send: 64 }, voluntary_switches: 0, involuntary_switches: 0, page_faults: 0 }, [
        { counts: ["page_allocs"], message: "needs root" },
      ]),
    ],
  };
  const t = ipcCountRows(result);
  assert.deepEqual(t.ends, ["consumer", "producer"]);
  const row = (label) => t.rows.find((r) => r.label === label).cells;
  assert.deepEqual(row("data calls"), ["n/a", "32.0"]);
  assert.deepEqual(row("sleeps (voluntary switches)"), ["2,000", "0.0"]);
  assert.deepEqual(row("page allocations"), ["150", "n/a"]);
  assert.deepEqual(t.missing, ["page allocations: needs root"]);
});

test("each reason names what it left out, once for both ends", () => {
  const off = { counts: ["ipis", "tlb_flushes", "wakeups"], message: "turned off" };
  const result = { bytes: 2 ** 30, ends: [end("producer", { syscalls: {} }, [off]), end("consumer", { syscalls: {} }, [off])] };
  assert.deepEqual(ipcCountRows(result).missing, ["IPIs sent, TLB flushes, wakeups issued: turned off"]);
});

test("a result without counts has no table", () => {
  assert.equal(ipcCountRows({ bytes: 1, ends: [{ role: "solo", usage: {} }] }), null);
  assert.equal(ipcCountRows(null), null);
});

test("bytes per data call come from the calls' bytes over their number, n/a without either", () => {
  const result = {
    bytes: 2 ** 26,
    ends: [
      { ...end("consumer", { syscalls: { read: 1025, write: 1024 } }), call_bytes: { read: 2 ** 26, write: 2 ** 26 } },
      { ...end("producer", { syscalls: {} }) },
    ],
  };
  const t = ipcCountRows(result);
  const perCall = t.rows.find((r) => r.label === "bytes per data call").cells;
  // 128 MiB over 2049 calls: just under 64 KiB each.
  assert.deepEqual(perCall, ["64.0 KiB", "n/a"]);
});

test("the chapter's predictions read holds, does not hold, or cannot tell with why", () => {
  const rows = ipcModelRows({
    model: [
      { id: "producer_call_bytes", end: "producer", what: "bytes through data calls per byte moved", measured: 2, model: "2: ...", verdict: "agrees" },
      { id: "producer_faults", end: "producer", what: "page faults per page of data", measured: 0.0019531, model: "about one", verdict: "disagrees" },
      { id: "consumer_sleeps", end: "consumer", what: "sleeps per message", measured: null, model: "at most one", verdict: "unknown", why: "the consumer sent no counts" },
      { id: "odd", end: "consumer", what: "x", measured: 1, model: "y", verdict: "maybe" },
    ],
  });
  assert.deepEqual(rows.map((r) => r.verdict), ["agrees", "disagrees", "unknown", "unknown"]);
  assert.equal(rows[0].verdictText, "Holds");
  assert.equal(rows[0].measured, "2");
  assert.equal(rows[1].measured, "0.00195");
  assert.match(rows[1].verdictText, /^Does not hold/);
  assert.equal(rows[2].verdictText, "Cannot tell: the consumer sent no counts");
  assert.equal(rows[2].measured, "n/a");
  assert.deepEqual(ipcModelRows({}), []);
});

test("a record keeps its counts once, keyed by role; older records' per-end counts read alike", () => {
  const older = {
    bytes: 2 * 2 ** 30,
    ends: [
      { ...end("producer", { syscalls: { write: 64 }, voluntary_switches: 10, page_faults: 4 }, [{ counts: ["wakeups"], message: "turned off" }]), call_bytes: { write: 2 * 2 ** 30 } },
      end("consumer", { syscalls: { read: 128 }, voluntary_switches: 20, page_faults: 6 }, [{ counts: ["wakeups"], message: "turned off" }]),
    ],
  };
  const keyed = {
    bytes: older.bytes,
    ends: [{ role: "producer", usage: {}, call_bytes: { write: 2 * 2 ** 30 } }, { role: "consumer", usage: {} }],
    counts: {
      producer: { syscalls: { write: 64 }, voluntary_switches: 10, page_faults: 4 },
      consumer: { syscalls: { read: 128 }, voluntary_switches: 20, page_faults: 6 },
      missing: [{ counts: ["wakeups"], message: "turned off" }],
    },
  };
  assert.deepEqual(ipcCountRows(keyed), ipcCountRows(older));
  assert.deepEqual(ipcCountRows(keyed).ends, ["producer", "consumer"]);
  assert.equal(ipcCountRows(keyed).rows[1].cells[0], "32.0 MiB");
  // The record's roles, not `missing`, are its ends.
  assert.deepEqual(ipcEndCounts(keyed).map((e) => e.end.role), ["producer", "consumer"]);
  assert.equal(ipcCountRows({ ...keyed, counts: { missing: [] } }), null);
});
