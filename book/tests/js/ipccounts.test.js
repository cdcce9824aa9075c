import { test } from "node:test";
import assert from "node:assert/strict";

import { ipcCountRows } from "../../theme/pipebook/ipccounts.js";

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
  assert.deepEqual(t.missing, ["needs root"]);
});

test("a result without counts has no table", () => {
  assert.equal(ipcCountRows({ bytes: 1, ends: [{ role: "solo", usage: {} }] }), null);
  assert.equal(ipcCountRows(null), null);
});
