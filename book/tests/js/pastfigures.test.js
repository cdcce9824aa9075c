import assert from "node:assert/strict";
import { test } from "node:test";
import { beginSearch, describeTune, keptNote, nsPerPage, foldTrial, layoutHeat, pageSettings, searchRows, shade, sharedParams, sharedRow, toolRows, totalsAddUp, tunedRows, variantEntry } from "../../theme/pipebook/past/figures.js";

const KIB = 1024;
const started = {
  kind: "tune",
  cells: [
    { buf_size: 64 * KIB, pipe_size: 64 * KIB },
    { buf_size: 64 * KIB, pipe_size: 1024 * KIB },
    { buf_size: 1024 * KIB, pipe_size: 64 * KIB },
    { buf_size: 1024 * KIB, pipe_size: 1024 * KIB },
  ],
  own: { buf_size: 256 * KIB, pipe_size: 128 * KIB },
  rounds: 3,
  runs: 15,
};

const trial = (index, buf, pipe, median, best, own = false) => ({ index, of: 15, buf_size: buf, pipe_size: pipe, own, median, gib_per_s: median, best });

test("a search starts with every configuration unmeasured and folds trials as they come", () => {
  let search = beginSearch(started);
  assert.equal(search.cells.size, 4);
  assert.ok([...search.cells.values()].every((c) => c.median === null && c.runs === 0));
  search = foldTrial(search, trial(1, 1024 * KIB, 1024 * KIB, 40, { buf_size: 1024 * KIB, pipe_size: 1024 * KIB, median: 40 }));
  search = foldTrial(search, trial(2, 64 * KIB, 64 * KIB, 10, { buf_size: 1024 * KIB, pipe_size: 1024 * KIB, median: 40 }));
  search = foldTrial(search, trial(3, 256 * KIB, 128 * KIB, 30, { buf_size: 1024 * KIB, pipe_size: 1024 * KIB, median: 40 }, true));
  assert.equal(search.done, 3);
  assert.equal(search.own.median, 30);
  assert.equal(search.own.runs, 1);
  // The step's own configuration is not a cell of the grid.
  assert.equal(search.cells.size, 4);
  assert.equal(search.cells.get(`${1024 * KIB}/${1024 * KIB}`).median, 40);
  // A search that keeps the step's own pages names none (null).
  assert.deepEqual(search.best, { buf: 1024 * KIB, pipe: 1024 * KIB, huge: null, median: 40 });
});

test("the heat map puts bytes per call across and the largest pipe on top, darkest for the fastest", () => {
  let search = beginSearch(started);
  const best = { buf_size: 1024 * KIB, pipe_size: 1024 * KIB, median: 40 };
  search = foldTrial(search, trial(1, 1024 * KIB, 1024 * KIB, 40, best));
  search = foldTrial(search, trial(2, 64 * KIB, 64 * KIB, 10, best));
  const out = layoutHeat(search, 580, 250);
  assert.equal(out.cells.length, 4);
  assert.deepEqual(out.columns.map((c) => c.label), ["64 KiB", "1 MiB"]);
  assert.deepEqual(out.rows.map((r) => r.label), ["1 MiB", "64 KiB"]);
  const at = (buf, pipe) => out.cells.find((c) => c.buf === buf && c.pipe === pipe);
  const fast = at(1024 * KIB, 1024 * KIB);
  const slow = at(64 * KIB, 64 * KIB);
  assert.ok(fast.x > slow.x && fast.y < slow.y);
  assert.equal(fast.fill, shade(1).fill);
  assert.equal(slow.fill, shade(0).fill);
  assert.ok(fast.best && !slow.best);
  // The darkest cell takes white text, the lightest black.
  assert.equal(fast.darkText, false);
  assert.equal(slow.darkText, true);
  // Not measured yet: no colour, a placeholder label.
  assert.equal(at(64 * KIB, 1024 * KIB).fill, null);
  assert.equal(at(64 * KIB, 1024 * KIB).label, "…");
  assert.equal(out.measured, 2);
  assert.equal(out.lo, 10);
  assert.equal(out.hi, 40);
});

test("the table lists every configuration, marks the fastest, and ends with the step's own", () => {
  let search = beginSearch(started);
  search = foldTrial(search, trial(1, 64 * KIB, 1024 * KIB, 12, { buf_size: 64 * KIB, pipe_size: 1024 * KIB, median: 12 }));
  const rows = searchRows(search);
  assert.equal(rows.length, 5);
  assert.equal(rows.at(-1).note, "the step's own configuration");
  assert.equal(rows.at(-1).median, "not run yet");
  assert.deepEqual(rows.filter((r) => r.note === "fastest so far").map((r) => [r.perCall, r.pipe]), [["64 KiB", "1 MiB"]]);
});

test("a finished search says its gain and when its spread crosses one", () => {
  const result = {
    best: { buf_size: 2 * 1024 * KIB, pipe_size: 1024 * KIB, summary: { median: 55.6, runs: 3 } },
    gain: { ratio: 1.3, low: 1.1, high: 1.5 },
    page_size: 4096,
  };
  const text = describeTune(result);
  assert.match(text, /2 MiB per call into a 1 MiB pipe/);
  assert.match(text, /1\.30×/);
  assert.doesNotMatch(text, /overlap/);
  // 4096 bytes at 55.6 GiB/s: about 68.6 ns; a 64 KiB page, 16 times that.
  assert.match(text, /one 4 KiB page passes every 68\.6 ns/);
  assert.match(describeTune({ ...result, page_size: 65536 }), /one 64 KiB page passes every 1097\.\d ns/);
  // Without the machine's page size no per-page figure is made up.
  assert.doesNotMatch(describeTune({ ...result, page_size: undefined }), /page passes/);
  assert.equal(nsPerPage(0, 4096), null);
  assert.ok(Math.abs(nsPerPage(1, 4096) - 3814.7) < 0.1);
  // The step's own configuration was the fastest: said, not called a gain.
  assert.match(describeTune({ ...result, gain: { ratio: 0.82, low: 0.39, high: 2.44 } }), /^No configuration searched beat the step's own/);
  // The runner's own word decides when it gives one.
  assert.match(describeTune({ ...result, own_fastest: true }), /^No configuration searched beat the step's own/);
  assert.match(describeTune({ ...result, own_fastest: false, gain: { ratio: 0.82, low: 0.39, high: 2.44 } }), /^Fastest: /);
  assert.match(describeTune({ ...result, gain: { ratio: 1.02, low: 0.9, high: 1.2 } }), /overlap/);
  // The gain's 95% interval over the rounds, when the runner gives it, and its verdict.
  assert.doesNotMatch(text, /95% interval/);
  const sure = { ...result, rounds: 3, gain: { ...result.gain, ci_low: 1.2, ci_high: 1.4 } };
  assert.match(describeTune(sure), /95% interval 1\.20× to 1\.40× over 3 rounds, faster/);
  const unsure = { ...result, rounds: 3, gain: { ...result.gain, ci_low: 0.95, ci_high: 1.4 } };
  assert.match(describeTune(unsure), /95% interval 0\.95× to 1\.40× over 3 rounds, not resolved: run the tuned step against its own below/);
  // The step's own runs moved nothing: no ratio to give, and no crash.
  assert.match(describeTune({ ...result, gain: { ratio: null, low: 0, high: null } }), /no figure to compare with/);
});

test("a tool run reads as verified bytes, speed and its calls", () => {
  const rows = toolRows({
    bytes: 64 << 20,
    requested_bytes: 64 << 20,
    gib_per_s: 2.5,
    elapsed_ms: 25,
    argv: ["cat", "/run/x/input"],
    exit: "exit code 0",
    calls: { on_pipe: 512, bytes_per_call: 131072, zero_copy: false },
    side: "writer",
    counts: { writer: { syscalls: { write: 512, read: 513, splice: 0 }, context_switches: 40, voluntary_switches: 31, page_faults: 9 }, missing: [] },
  });
  const get = (label) => rows.find((r) => r[0] === label)?.[1];
  assert.match(get("Bytes verified by pipebench's end"), /^67,108,864 \(64 MiB\)/);
  assert.match(get("Data calls on the pipe"), /^512, 128 KiB each/);
  assert.equal(get("Calls by kind"), "read 513, write 512");
  assert.equal(get("The tool's kernel counts"), "40 context switches (31 voluntary), 9 page faults");
  // The counts of the other end are not the tool's.
  const asReader = toolRows({ bytes: 1, requested_bytes: 1, argv: [], side: "reader", counts: { writer: { context_switches: 5, voluntary_switches: 5, page_faults: 1, syscalls: { write: 3 } }, missing: [] } });
  assert.equal(asReader.find((r) => r[0] === "The tool's kernel counts"), undefined);
  assert.equal(asReader.find((r) => r[0] === "Calls by kind"), undefined);
  assert.match(toolRows({ bytes: 1, requested_bytes: 1, argv: [] }).find((r) => r[0] === "Data calls on the pipe")[1], /not counted/);
});

test("a shared-pipe point's totals must add up", () => {
  const point = { writers: 2, readers: 1, msg_size: 4096, atomic: true, bytes: 200, gib_per_s: 1, written: [100, 100], received: [100, 100], per_reader: [200], torn_messages: 0, sleeps: [3, 4] };
  assert.ok(totalsAddUp(point));
  assert.ok(!totalsAddUp({ ...point, received: [100, 90] }));
  const row = sharedRow(point);
  assert.equal(row.size, "4 KiB (≤ PIPE_BUF)");
  assert.equal(row.torn, "0");
  assert.equal(row.addsUp, true);
  assert.equal(row.switches, "not counted");
  const counted = sharedRow({
    ...point,
    counts: { writers: { context_switches: 1200, wakeups: 30 }, readers: { context_switches: 7 }, missing: [] },
  });
  assert.equal(counted.switches, "1,200 / 7");
  // The readers' wakeups were not counted: said, never shown as 0.
  assert.equal(counted.wakeups, "30 / not counted");
});

test("a tuned variant's runs get a row of their own after the catalog's, named after its step", () => {
  const steps = [
    { id: "write-read", title: "Write and read" },
    { id: "busy-loop", title: "Busy looping" },
  ];
  const results = [
    { step: "busy-loop", gib_per_s: 40 },
    { step: "tuned-busy-loop", gib_per_s: 55 },
    { step: "tuned-busy-loop", gib_per_s: 54 },
    { step: "tuned-write-read", gib_per_s: 9 },
    // Neither a catalog step's variant nor a step at all: no row.
    { step: "tuned-nope", gib_per_s: 1 },
    { step: "nope", gib_per_s: 1 },
    { gib_per_s: 1 },
  ];
  const rows = tunedRows(steps, results);
  assert.deepEqual(
    rows.map((r) => [r.id, r.base, r.title]),
    [
      ["tuned-busy-loop", "busy-loop", "Busy looping, tuned on this machine"],
      ["tuned-write-read", "write-read", "Write and read, tuned on this machine"],
    ],
  );
  assert.equal(rows[0].article, null);
  assert.deepEqual(tunedRows(steps, []), []);
  assert.deepEqual(tunedRows(steps, undefined), []);
});

test("the card says whether the best found is kept for the next start, and why not from the typed kind", () => {
  const kept = keptNote({ type: "saved", store: "tuned", ok: true });
  assert.equal(kept.kept, "yes");
  assert.match(kept.text, /still here after a restart/);
  const refused = (kind, message = "the tuned variant runs until the server stops, but it was not saved for the next start: …") =>
    keptNote({ type: "saved", store: "tuned", ok: false, error: { kind, message } });
  for (const [kind, why] of [
    ["no_space", /is full/],
    ["quota", /quota/],
    ["read_only", /cannot be written/],
    ["unsafe_file", /a link or a file of another user/],
    ["failed", /the save failed/],
  ]) {
    const note = refused(kind);
    assert.equal(note.kept, kind);
    assert.equal(note.runnable, true, kind);
    assert.match(note.text, /^Runnable now, but it will not survive a restart of the runner: /);
    assert.match(note.text, why, kind);
    // The runner's own sentence follows, quoted, never read for the reason.
    assert.match(note.text, /\(the tuned variant runs until the server stops/);
  }
  // The reason comes from the kind alone: the same words under another kind say the other reason.
  assert.match(refused("read_only", "No space left on device").text, /cannot be written/);
  // A kind this page does not know yet still says the variant is runnable and not kept.
  assert.match(refused("something_new").text, /^Runnable now, .*the save failed/);
  const unrunnable = refused("not_runnable", "pipe_size too large");
  assert.equal(unrunnable.runnable, false);
  assert.match(unrunnable.text, /not offered as a step \(pipe_size too large\)/);
});

test("a search over huge pages too draws one map per setting on one scale", () => {
  const cells = [];
  for (const huge_pages of [true, false]) for (const buf_size of [64 * KIB, 1024 * KIB]) cells.push({ buf_size, pipe_size: 1024 * KIB, huge_pages });
  let search = beginSearch({ cells, own: { buf_size: 256 * KIB, pipe_size: 128 * KIB, huge_pages: true }, rounds: 3, runs: 15 });
  assert.equal(search.cells.size, 4, "the same sizes with each setting are two configurations");
  assert.deepEqual(pageSettings(search), [true, false]);
  const best = { buf_size: 1024 * KIB, pipe_size: 1024 * KIB, huge_pages: false, median: 50 };
  search = foldTrial(search, { index: 1, of: 15, buf_size: 1024 * KIB, pipe_size: 1024 * KIB, huge_pages: false, own: false, median: 50, gib_per_s: 50, best });
  search = foldTrial(search, { index: 2, of: 15, buf_size: 1024 * KIB, pipe_size: 1024 * KIB, huge_pages: true, own: false, median: 25, gib_per_s: 25, best });
  const huge = layoutHeat(search, 560, 240, undefined, true);
  const small = layoutHeat(search, 560, 240, undefined, false);
  assert.equal(huge.cells.length, 2);
  assert.equal(small.cells.length, 2);
  // One scale for both maps: the huge map's only figure is not its own darkest.
  assert.deepEqual([huge.lo, huge.hi], [25, 50]);
  assert.equal(huge.measured, 1);
  // The best is marked in its own setting's map only.
  assert.deepEqual(huge.cells.filter((c) => c.best).length, 0);
  assert.deepEqual(small.cells.filter((c) => c.best).map((c) => c.huge), [false]);
  const rows = searchRows(search);
  assert.deepEqual(rows.filter((r) => r.note === "fastest so far").map((r) => r.pages), ["small pages"]);
  assert.equal(rows.at(-1).pages, "huge pages", "the step's own configuration says its pages");
  // A search that keeps the step's pages has one map and says nothing of them.
  assert.deepEqual(pageSettings(beginSearch(started)), [null]);
  assert.equal(searchRows(beginSearch(started))[0].pages, "the step's own");
});

test("a tuned variant runs its base step with only the sizes the search found", () => {
  const base = {
    id: "write-read",
    title: "Write and read",
    kind: "step",
    article_gib_s: 3.5,
    params: [
      { name: "buf_size", default: 4096, min: 1, max: 1 << 30 },
      { name: "pipe_size", default: 65536, min: 4096, max: 1 << 20 },
      { name: "bytes", default: 1 << 30, min: 1, max: 1 << 34 },
    ],
  };
  const entry = variantEntry(base, { id: "tuned-write-read", base: "write-read", buf_size: 262144, pipe_size: 1 << 20, huge_pages: true, median: 7.25 });
  assert.equal(entry.id, "tuned-write-read");
  assert.equal(entry.kind, "variant");
  assert.equal(entry.article_gib_s, null);
  assert.equal(entry.title, "Write and read, tuned on this machine");
  assert.match(entry.summary, /^256 KiB per call into a 1 MiB pipe, the writer's buffers in huge pages: .*median 7\.25 GiB\/s/);
  assert.deepEqual(entry.params[0], { name: "buf_size", default: 262144, min: 262144, max: 262144 });
  assert.deepEqual(entry.params[1], { name: "pipe_size", default: 1 << 20, min: 1 << 20, max: 1 << 20 });
  assert.deepEqual(entry.params[2], base.params[2], "the other parameters stay the base step's");
  // A variant whose base the catalog does not list still has a title and no parameters.
  const bare = variantEntry(null, { id: "tuned-x", base: "x", buf_size: 4096, pipe_size: 65536, median: 1 });
  assert.equal(bare.title, "x, tuned on this machine");
  assert.deepEqual(bare.params, []);
});

test("a shared pipe's lists are read as counts and sizes, anything else refused with an example", () => {
  assert.deepEqual(sharedParams({ writers: "1, 2,4", readers: "1,,2", sizes: "4KiB,64KiB", profile: false }), {
    params: { writers: [1, 2, 4], readers: [1, 2], msg_sizes: [4096, 65536] },
  });
  assert.deepEqual(sharedParams({ writers: "1", readers: "1", sizes: "512", profile: true }).params, { writers: [1], readers: [1], msg_sizes: [512], profile: true });
  assert.match(sharedParams({ writers: "1.5", readers: "1", sizes: "4KiB" }).error, /writers and readers are lists of counts such as 1,2,4/);
  assert.match(sharedParams({ writers: "", readers: "1", sizes: "4KiB" }).error, /lists of counts/);
  assert.match(sharedParams({ writers: "1", readers: "1", sizes: "big" }).error, /message sizes are a list such as 4KiB,64KiB/);
  assert.match(sharedParams({ writers: "1", readers: "1", sizes: " , " }).error, /message sizes/);
});
