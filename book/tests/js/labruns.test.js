import { test } from "node:test";
import assert from "node:assert/strict";

import { runsTable } from "../../theme/pipebook/lab/labruns.js";

const MIB = 1 << 20;

test("no runs, no table", () => {
  assert.equal(runsTable([]), null);
  assert.equal(runsTable(undefined), null);
});

test("IPC runs show only the figures they carry", () => {
  const t = runsTable([
    { task: "pipe-rw", result: { kind: "ipc", mechanism: "pipe-rw", gib_per_s: 1.19, mib_per_s: 1218.6 } },
    { task: "posix-shm", result: { kind: "ipc", mechanism: "posix-shm", gib_per_s: 0.98, mib_per_s: 1003.5 } },
  ]);
  assert.deepEqual(t.head, ["task", "GiB/s"]);
  assert.deepEqual(t.rows, [
    ["pipe-rw", "1.19"],
    ["posix-shm", "0.98"],
  ]);
});

test("a column appears when one run carries its figure, dashes for the others", () => {
  const pipe = {
    gib_per_s: 2,
    elapsed_ms: 1000,
    bytes: 2 << 30,
    writer: { user_ms: 500, system_ms: 500 },
    reader: { user_ms: 250, system_ms: 250 },
    corrupted_bytes: 0,
  };
  const t = runsTable([
    { task: "verified", result: pipe },
    { task: "sweep", value: 64 * 1024, result: { kind: "ipc", gib_per_s: 1, mib_per_s: 1024 } },
  ]);
  assert.deepEqual(t.head.slice(0, 2), ["task", "GiB/s"]);
  assert.ok(!t.head.includes("in huge pages"), t.head.join());
  assert.equal(t.rows[1][0], "sweep @ 64 KiB");
  assert.ok(t.rows[1].slice(2).every((c) => c === "—"), t.rows[1].join());
});

test("latency runs show their percentiles, CPU and sleeps, and no GiB/s", () => {
  const run = (p50, p99) => ({ kind: "latency", mechanism: "pipe", mode: "busy", p50, p99, mean: p50, ping_cpu_ns: p50, pong_cpu_ns: p50, ping_sleeps: 0.5, pong_sleeps: 0.25 });
  const t = runsTable([
    { task: "busy", result: run(2000, 9000) },
    { task: "busy", result: run(1500, 4000) },
  ]);
  assert.deepEqual(t.head, ["task", "median", "99th percentile", "CPU s per s", "CPU per round trip", "sleeps per round trip"]);
  assert.deepEqual(t.rows[0], ["busy", "2.00 µs", "9.00 µs", "2.00", "4.00 µs", "0.75"]);
  assert.deepEqual(t.rows[1].slice(1, 3), ["1.50 µs", "4.00 µs"]);
});

test("a watched run is listed, marked as left out of speed checks; a quiet one and one that does not say are not marked", () => {
  const r = (watched) => ({ task: "busy", result: { gib_per_s: 2, ...(watched === undefined ? {} : { watched }) } });
  const t = runsTable([r(true), r(false), r(undefined)]);
  assert.deepEqual(t.rows.map((row) => row[0]), ["busy (watched: left out of speed checks)", "busy", "busy"]);
});
