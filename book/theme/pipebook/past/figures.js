// Past the article, pure: the tuning search folded from its `started` and `trial`
// messages into a grid (bytes per call × pipe capacity) and laid out as a heat map
// with a table for screen readers; the sentences a tool run and a shared-pipe point
// are read by; a tuned variant's catalog entry and a shared-pipe job's parameters.
// No DOM: tested in Node.

import * as fmt from "../format.js";
import { parseSize } from "../sizes.js";
import { t } from "../i18n.js";

// A configuration: bytes per call, pipe capacity, and the writer's pages where the
// search tries both (`huge_pages` true or false; absent, null: the step's own).
const pages = (c) => (typeof c?.huge_pages === "boolean" ? c.huge_pages : null);
const key = (buf, pipe, huge) => `${buf}/${pipe ?? "default"}${huge === null ? "" : huge ? "/huge" : "/small"}`;
const same = (a, b) => a.buf === b.buf && a.pipe === b.pipe && (a.huge ?? null) === (b.huge ?? null);

/** A search's grid before any run: every configuration of `started` ({cells, own}), none measured. */
export function beginSearch(started) {
  const cells = new Map();
  for (const c of started?.cells || []) {
    cells.set(key(c.buf_size, c.pipe_size, pages(c)), { buf: c.buf_size, pipe: c.pipe_size, huge: pages(c), median: null, runs: 0 });
  }
  return {
    cells,
    own: started?.own ? { buf: started.own.buf_size, pipe: started.own.pipe_size, huge: pages(started.own), median: null, runs: 0 } : null,
    done: 0,
    of: started?.runs ?? 0,
    best: null,
  };
}

/** The grid after one `trial` message: its configuration's median so far, the best so far. */
export function foldTrial(search, trial) {
  const cells = new Map(search.cells);
  let own = search.own;
  if (trial.own) {
    own = { ...(own || { buf: trial.buf_size, pipe: trial.pipe_size, huge: pages(trial) }), median: trial.median, runs: (own?.runs || 0) + 1 };
  } else {
    const k = key(trial.buf_size, trial.pipe_size, pages(trial));
    const before = cells.get(k) || { buf: trial.buf_size, pipe: trial.pipe_size, huge: pages(trial), runs: 0 };
    cells.set(k, { ...before, median: trial.median, runs: before.runs + 1 });
  }
  const best = trial.best ? { buf: trial.best.buf_size, pipe: trial.best.pipe_size, huge: pages(trial.best), median: trial.best.median } : search.best;
  return { cells, own, done: trial.index, of: trial.of, best };
}

/** Light to dark blue: the colour of `share` in [0, 1] as rgb(), and whether text on it must be white. */
export function shade(share) {
  const lo = [222, 235, 247];
  const hi = [8, 48, 107];
  const c = lo.map((v, i) => Math.round(v + (hi[i] - v) * Math.min(1, Math.max(0, share))));
  // Relative luminance (WCAG): dark cells take white text, light ones black.
  const lin = c.map((v) => {
    const s = v / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  });
  const luminance = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2];
  return { fill: `rgb(${c.join(",")})`, darkText: luminance > 0.18 };
}

/** The writer's page settings a search tries, one heat map each: [true, false] where it
 * tries huge pages on and off, [null] where the step's own pages are kept. */
export function pageSettings(search) {
  const found = new Set([...search.cells.values()].map((c) => c.huge ?? null));
  return [true, false, null].filter((h) => found.has(h));
}

/** "huge pages", "small pages", or "" for the step's own. */
export function pagesLabel(huge) {
  return huge === true ? t("huge pages") : huge === false ? t("small pages") : "";
}

/**
 * The heat map's layout in a `width` × `height` box: columns are bytes per call,
 * rows pipe capacities (largest at the top), colour the median GiB/s between the
 * slowest and fastest measured so far in the whole search (so the maps of two page
 * settings share one scale). Cells not measured yet have no colour. `huge` picks the
 * cells of one page setting (see `pageSettings`); undefined takes them all.
 */
export function layoutHeat(search, width, height, margin = { left: 80, top: 10, bottom: 40 }, huge = undefined) {
  const every = [...search.cells.values()];
  const all = huge === undefined ? every : every.filter((c) => (c.huge ?? null) === huge);
  const bufs = [...new Set(all.map((c) => c.buf))].sort((a, b) => a - b);
  const pipes = [...new Set(all.map((c) => c.pipe))].sort((a, b) => b - a);
  const measured = all.filter((c) => fmt.isNumber(c.median)).map((c) => c.median);
  const scale = every.filter((c) => fmt.isNumber(c.median)).map((c) => c.median);
  const lo = scale.length ? Math.min(...scale) : 0;
  const hi = scale.length ? Math.max(...scale) : 0;
  const w = bufs.length ? (width - margin.left) / bufs.length : 0;
  const h = pipes.length ? (height - margin.top - margin.bottom) / pipes.length : 0;
  const isBest = (c) => search.best && same(c, search.best);
  const cells = all.map((c) => {
    const share = hi > lo ? (c.median - lo) / (hi - lo) : 1;
    const colour = fmt.isNumber(c.median) ? shade(share) : null;
    return {
      ...c,
      x: margin.left + bufs.indexOf(c.buf) * w,
      y: margin.top + pipes.indexOf(c.pipe) * h,
      w,
      h,
      fill: colour?.fill ?? null,
      darkText: colour ? colour.darkText : true,
      label: fmt.isNumber(c.median) ? fmt.gib(c.median) : "…",
      best: Boolean(isBest(c)),
    };
  });
  return {
    cells,
    columns: bufs.map((b, i) => ({ x: margin.left + (i + 0.5) * w, label: fmt.bytes(b) })),
    rows: pipes.map((p, i) => ({ y: margin.top + (i + 0.5) * h, label: p === null ? "default" : fmt.bytes(p) })),
    lo,
    hi,
    measured: measured.length,
  };
}

/** The rows of the search's table (screen readers and print): every configuration, the step's own last. */
export function searchRows(search) {
  const rows = [...search.cells.values()]
    .sort((a, b) => a.buf - b.buf || (a.pipe ?? 0) - (b.pipe ?? 0) || Number(b.huge ?? 0) - Number(a.huge ?? 0))
    .map((c) => ({
      perCall: fmt.bytes(c.buf),
      pipe: c.pipe === null ? "kernel's default" : fmt.bytes(c.pipe),
      pages: pagesLabel(c.huge) || t("the step's own"),
      median: fmt.isNumber(c.median) ? fmt.gib(c.median) : t("not run yet"),
      runs: c.runs,
      note: search.best && same(c, search.best) ? t("fastest so far") : "",
    }));
  if (search.own) {
    rows.push({
      pages: pagesLabel(search.own.huge) || t("the step's own"),
      perCall: fmt.bytes(search.own.buf),
      pipe: search.own.pipe === null || search.own.pipe === undefined ? "kernel's default" : fmt.bytes(search.own.pipe),
      median: fmt.isNumber(search.own.median) ? fmt.gib(search.own.median) : t("not run yet"),
      runs: search.own.runs,
      note: t("the step's own configuration"),
    });
  }
  return rows;
}

/** Nanoseconds one page of `pageSize` bytes takes to pass at `gib` GiB/s (null when
 * either is unknown: a page is 4 KiB on x86-64 but 16 or 64 KiB on some arm64 kernels). */
export function nsPerPage(gib, pageSize) {
  return fmt.isNumber(gib) && gib > 0 && fmt.isNumber(pageSize) && pageSize > 0 ? (pageSize / (gib * 2 ** 30)) * 1e9 : null;
}

/** What a finished search found, in one sentence. */
export function describeTune(result) {
  const b = result.best;
  const g = result.gain || {};
  const x = (v) => (fmt.isNumber(v) ? `${v.toFixed(2)}×` : "—");
  // A step's own runs that moved nothing leave no ratio (JSON has no infinity).
  const gain = fmt.isNumber(g.ratio)
    ? t("{ratio} the step's own configuration measured in the same rounds (spread {low} to {high}{interval}). ", {
        ratio: x(g.ratio),
        low: x(g.low),
        high: x(g.high),
        interval:
          fmt.isNumber(g.ci_low) && fmt.isNumber(g.ci_high)
            ? t("; 95% interval {low} to {high} over {rounds} rounds, {verdict}", { low: x(g.ci_low), high: x(g.ci_high), rounds: result.rounds, verdict: g.ci_low > 1 ? t("faster") : g.ci_high < 1 ? t("slower") : t("not resolved: run the tuned step against its own below until it is") })
            : "",
      })
    : t("The step's own configuration gave no figure to compare with in this session. ");
  const overlap = fmt.isNumber(g.low) && g.low < 1 ? t(" The two overlap, so this session cannot tell them apart for sure.") : "";
  const perPage = nsPerPage(b.summary.median, result.page_size);
  // The step's own configuration is measured beside the others, never offered as
  // the variant: when it was the fastest (the runner's `own_fastest`, one rule for
  // the CLI and the page; an older result without it: a ratio under 1), the
  // sentence says so.
  const ownFastest = typeof result.own_fastest === "boolean" ? result.own_fastest : fmt.isNumber(g.ratio) && g.ratio < 1;
  const lead = ownFastest ? t("No configuration searched beat the step's own; the best of the others: ") : t("Fastest: ");
  return (
    lead +
    t("{bytes} per call into a {pipe} pipe, {median} {u_gibs} (median of {runs} runs), ", { u_gibs: "GiB/s", bytes: fmt.bytes(b.buf_size), pipe: fmt.bytes(b.pipe_size), median: fmt.gib(b.summary.median), runs: b.summary.runs }) +
    gain +
    (perPage === null ? "" : t("At that speed one {page} page passes every {ns} {u_ns}.", { u_ns: "ns", page: fmt.bytes(result.page_size), ns: perPage.toFixed(1) })) +
    overlap
  );
}

/** A tool run's result as rows of label and value. */
export function toolRows(r) {
  const rows = [
    [t("Bytes verified by pipebench's end"), t("{count} ({bytes}) of {asked} asked", { count: fmt.count(r.bytes), bytes: fmt.bytes(r.bytes), asked: fmt.bytes(r.requested_bytes) })],
    [t("Throughput"), t("{gib} {u_gibs} over {time}", { u_gibs: "GiB/s", gib: fmt.gib(r.gib_per_s), time: fmt.ms(r.elapsed_ms) })],
    [t("Command"), (r.argv || []).join(" ")],
    [t("How it ended"), r.exit],
  ];
  if (r.calls) {
    const per = fmt.isNumber(r.calls.bytes_per_call) ? fmt.bytes(r.calls.bytes_per_call) : t("unknown");
    rows.push([t("Data calls on the pipe"), t("{calls}, {per} each on average{how}", { calls: fmt.count(r.calls.on_pipe), per, how: r.calls.zero_copy ? t(", pages moved without a copy") : t(", every byte copied") })]);
  } else {
    rows.push([t("Data calls on the pipe"), t("not counted on this machine (the kernel's tracepoints need root or CAP_PERFMON)")]);
  }
  // The tool's counts are keyed by its end, as the result names it (writer or reader).
  const own = r.counts?.[r.side];
  if (own && fmt.isNumber(own.context_switches)) {
    rows.push([t("The tool's kernel counts"), t("{switches} context switches ({voluntary} voluntary), {faults} page faults{migrations}", { switches: fmt.count(own.context_switches), voluntary: fmt.count(own.voluntary_switches), faults: fmt.count(own.page_faults), migrations: fmt.isNumber(own.cpu_migrations) ? t(", {n} CPU migrations", { n: fmt.count(own.cpu_migrations) }) : "" })]);
  }
  const syscalls = own?.syscalls;
  if (syscalls && typeof syscalls === "object") {
    const tally = Object.entries(syscalls)
      .filter(([, n]) => fmt.isNumber(n) && n > 0)
      .sort((a, b) => b[1] - a[1])
      .map(([name, n]) => `${name} ${fmt.count(n)}`)
      .join(", ");
    if (tally) rows.push([t("Calls by kind"), tally]);
  }
  return rows;
}

/** Whether a shared-pipe point's per-writer totals add up: what each wrote, the readers got. */
export function totalsAddUp(point) {
  const wrote = (point.written || []).reduce((a, b) => a + b, 0);
  const got = (point.received || []).reduce((a, b) => a + b, 0);
  const read = (point.per_reader || []).reduce((a, b) => a + b, 0);
  return wrote === got && got === read && read === point.bytes;
}

/** "writers / readers" of one of a shared-pipe point's counts, "not counted" for a side
 * whose count is absent (never 0: an absent count is unknown). */
function bothSides(counts, name) {
  const side = (s) => (typeof counts?.[s]?.[name] === "number" ? fmt.count(counts[s][name]) : t("not counted"));
  return counts ? `${side("writers")} / ${side("readers")}` : t("not counted");
}

/** A shared-pipe point as table cells. */
export function sharedRow(point) {
  return {
    switches: bothSides(point.counts, "context_switches"),
    wakeups: bothSides(point.counts, "wakeups"),
    writers: String(point.writers),
    readers: String(point.readers),
    size: `${fmt.bytes(point.msg_size)}${point.atomic ? " (≤ PIPE_BUF)" : ""}`,
    gib: fmt.gib(point.gib_per_s),
    perWriter: (point.received || []).map((n) => fmt.bytes(n)).join(", "),
    torn: fmt.count(point.torn_messages),
    sleeps: `${fmt.count(point.sleeps?.[0])} / ${fmt.count(point.sleeps?.[1])}`,
    addsUp: totalsAddUp(point),
    oversubscribed: Boolean(point.oversubscribed),
  };
}

/** The results table's rows past the catalog: one per tuned variant (`tuned-STEP` of a
 * catalog STEP) that has runs in the history, after every catalog row and titled after
 * its step, so its runs are counted apart from the step's. It has no article figure. */
export function tunedRows(steps, results) {
  const known = new Map(steps.map((s) => [s.id, s]));
  const ids = new Set();
  for (const r of results || []) {
    const id = typeof r?.step === "string" ? r.step : "";
    if (id.startsWith("tuned-") && !known.has(id) && known.has(id.slice("tuned-".length))) ids.add(id);
  }
  return [...ids].sort().map((id) => {
    const base = known.get(id.slice("tuned-".length));
    return { id, title: t("{title}, tuned on this machine", { title: base.title }), kind: "tuned", base: base.id, article: null, reference: null };
  });
}

/** Why a search's best was not kept for the next start, by the runner's typed `kind`. */
const NOT_KEPT_BECAUSE = {
  no_space: t("the disk that holds the runner's state folder is full"),
  quota: t("the disk quota of the runner's user is used up"),
  read_only: t("the runner's state folder cannot be written (read-only, or no permission)"),
  unsafe_file: t("{file} in the runner's state folder is a link or a file of another user, which the runner never writes through", { file: "tuned.jsonl" }),
  failed: t("the save failed"),
};

/** What the tuning card says of `saved {store: "tuned"}`: whether the best found is kept for
 * the runner's next start, and if not why (from the runner's typed `error.kind`, its own
 * sentence after it). `runnable` is false only when the runner refused the variant itself. */
export function keptNote(saved) {
  if (saved?.ok) {
    return { kept: "yes", runnable: true, text: t("Kept in the runner's state folder ({file}): the tuned step is still here after a restart.", { file: "tuned.jsonl" }) };
  }
  const kind = typeof saved?.error?.kind === "string" ? saved.error.kind : "failed";
  const detail = typeof saved?.error?.message === "string" && saved.error.message ? ` (${saved.error.message})` : "";
  if (kind === "not_runnable") {
    return { kept: kind, runnable: false, text: t("This runner cannot run the configuration found, so it is not offered as a step{detail}.", { detail }) };
  }
  const why = NOT_KEPT_BECAUSE[kind] ?? NOT_KEPT_BECAUSE.failed;
  return { kept: kind, runnable: true, text: t("Runnable now, but it will not survive a restart of the runner: {why}{detail}.", { why, detail }) };
}

/** The tuned variant's catalog entry: its base step at the sizes the search found, nothing else to choose. */
export function variantEntry(base, variant) {
  const fixed = (p, value) => ({ ...p, default: value, min: value, max: value });
  return {
    ...(base || {}),
    id: variant.id,
    title: t("{title}, tuned on this machine", { title: base?.title || variant.base }),
    summary: t("{bytes} per call into a {pipe} pipe{pages}: the fastest configuration a search found on this machine (median {median} {u_gibs} in its rounds). Its runs are kept under {id}, apart from {base}.", { u_gibs: "GiB/s", bytes: fmt.bytes(variant.buf_size), pipe: fmt.bytes(variant.pipe_size), pages: typeof variant.huge_pages === "boolean" ? t(", the writer's buffers in {what}", { what: pagesLabel(variant.huge_pages) }) : "", median: fmt.gib(variant.median), id: variant.id, base: variant.base }),
    kind: "variant",
    article_gib_s: null,
    reference_gib_s: null,
    params: (base?.params || []).map((p) => (p.name === "buf_size" ? fixed(p, variant.buf_size) : p.name === "pipe_size" ? fixed(p, variant.pipe_size) : p)),
  };
}

/** The comma-separated items of a list the reader typed, trimmed, empty ones dropped. */
const listOf = (text) => text.split(",").map((s) => s.trim()).filter(Boolean);

/**
 * A shared-pipe job's parameters from the lists the reader typed (`writers`,
 * `readers`: counts; `sizes`: message sizes) and whether each point is profiled:
 * {params} or {error}, a sentence.
 */
export function sharedParams({ writers, readers, sizes, profile }) {
  const w = listOf(writers).map(Number);
  const r = listOf(readers).map(Number);
  const s = listOf(sizes).map(parseSize);
  if (!w.length || !r.length || w.some((n) => !Number.isInteger(n)) || r.some((n) => !Number.isInteger(n))) return { error: t("Error: writers and readers are lists of counts such as {example}.", { example: "1,2,4" }) };
  if (!s.length || s.some((n) => n === null)) return { error: t("Error: message sizes are a list such as {example}.", { example: "4KiB,64KiB" }) };
  return { params: { writers: w, readers: r, msg_sizes: s, ...(profile ? { profile: true } : {}) } };
}
