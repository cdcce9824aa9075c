// The lab checks' figures, read in the page (pure: no DOM, no network): what
// each run carries (`metric`, which the table of runs shows), a task's
// progress, a measure's figure for the student's prediction, and the two tasks
// a choice compares. The checks themselves are judged by the runner alone
// (labs::checks, sent in /api/labs as each lab's `checks`): the page shows that
// judgement and never a verdict of its own, and what the card says of how it
// was judged: a ratio of two tasks' runs is judged at looks planned before the
// first run, each at its share of the 5% (not settled at a look, it asks for the
// runs its next look needs; after the last look it is final), and runs recorded
// when each new run was judged afresh at 95% were judged again under this rule.

import { t } from "../i18n.js";
import { judge as askRunner } from "../judge.js";
import { LAB_WORDS, checkSay, labSay } from "./labtext.js";

const num = (v) => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** Each figure a run may carry, by name: how it is read from a result (null when it is not there). */
const METRICS = {
  gib_per_s: (r) => num(r?.gib_per_s),
  // An IPC record carries both; a pipe result only GiB/s (1 GiB = 1024 MiB).
  mib_per_s: (r) => num(r?.mib_per_s) ?? (num(r?.gib_per_s) === null ? null : r.gib_per_s * 1024),
  cpu_per_wall: cpuPerWall,
  corrupted_share: corruptedShare,
  huge_share: (r) => {
    const checked = num(r?.huge_pages?.checked_bytes);
    const huge = num(r?.huge_pages?.huge_bytes);
    return !checked || huge === null ? null : huge / checked;
  },
  writer_page_allocs_per_gib: (r) => perGib(num(r?.counts?.writer?.page_allocs), r),
  // Each fault of the writer's own memory allocates a page (its buffers at
  // start-up); what is left is what its data calls allocated.
  writer_allocs_beyond_faults_per_gib: (r) => {
    const allocs = num(r?.counts?.writer?.page_allocs);
    const faults = num(r?.counts?.writer?.page_faults);
    return allocs === null || faults === null ? null : perGib(Math.max(allocs - faults, 0), r);
  },
  sleeps_per_gib: sleepsPerGib,
  writer_page_faults: (r) => num(r?.counts?.writer?.page_faults),
  // A latency figure read from anything else would be some other number.
  p50_ns: (r) => (isLatency(r) ? num(r.p50) : null),
  p99_ns: (r) => (isLatency(r) ? num(r.p99) : null),
  cpu_ns_per_round_trip: (r) => (isLatency(r) ? sum(num(r.ping_cpu_ns), num(r.pong_cpu_ns)) : null),
  sleeps_per_round_trip: (r) => (isLatency(r) ? sum(num(r.ping_sleeps), num(r.pong_sleeps)) : null),
  producer_faults_per_page: (r) => {
    const faults = num(ipcEndCounts(r, "producer")?.page_faults);
    const bytes = num(r?.bytes);
    // Pages of the machine that ran it (4 KiB on x86-64, 16 or 64 KiB on some
    // arm64 kernels); a record without its page size cannot say.
    const page = num(r?.page_size);
    return faults === null || !(bytes > 0) || !(page > 0) ? null : faults / (bytes / page);
  },
  call_bytes_per_byte: callBytesPerByte,
};

/** The figure `name` of one run result, or null when the run does not carry it. */
export function metric(result, name) {
  return Object.hasOwn(METRICS, name) ? METRICS[name](result) : null;
}

function cpuPerWall(result) {
  if (isLatency(result)) {
    // Both ends' CPU time per round trip over the round trip's own time.
    const mean = num(result.mean);
    const ping = num(result.ping_cpu_ns);
    const pong = num(result.pong_cpu_ns);
    return mean === null || mean <= 0 || ping === null || pong === null ? null : (ping + pong) / mean;
  }
  // IPC records report their ends otherwise: no figure rather than zero.
  if (result?.writer === undefined && result?.reader === undefined) return null;
  const elapsed = num(result?.elapsed_ms);
  if (elapsed === null || elapsed <= 0) return null;
  const part = (end, key) => num(result?.[end]?.[key]) ?? 0;
  const cpu = part("writer", "user_ms") + part("writer", "system_ms") + part("reader", "user_ms") + part("reader", "system_ms");
  return cpu / elapsed;
}

function corruptedShare(result) {
  const bytes = num(result?.bytes);
  if (!bytes) return null;
  const corrupted = num(result?.corrupted_bytes);
  if (corrupted !== null) return corrupted / bytes;
  // A verifying reader that does not count stops the run at the first bad
  // byte, so a verified run that finished had none.
  return result?.options?.reader?.verify === true ? 0 : null;
}

function sleepsPerGib(result) {
  const counts = result?.counts;
  if (!counts || typeof counts !== "object") return null;
  const sleeps = Object.entries(counts)
    .filter(([name]) => name !== "missing" && name !== "model")
    .map(([, end]) => num(end?.voluntary_switches))
    .filter((v) => v !== null);
  return sleeps.length ? perGib(sleeps.reduce((a, b) => a + b, 0), result) : null;
}

function callBytesPerByte(result) {
  const ends = ipcEnds(result);
  // Every end counted, and the run tallied its calls' bytes: a record from
  // before the tally has none, which is not the same as zero.
  if (!ends || !ends.length) return null;
  if (ends.some((e) => !ipcEndCounts(result, e?.role))) return null;
  if (!ends.some((e) => e?.call_bytes !== undefined)) return null;
  const bytes = num(result?.bytes);
  if (!(bytes > 0)) return null;
  let through = 0;
  for (const e of ends) {
    const calls = e?.call_bytes;
    if (!calls || typeof calls !== "object") continue;
    for (const v of Object.values(calls)) if (num(v) !== null) through += v;
  }
  return through / bytes;
}

/** `count` per GiB the run moved, or null without either. */
function perGib(count, result) {
  const g = gib(result);
  return count === null || g === null ? null : count / g;
}

/** Whether a result is a latency run's record (`"kind":"latency"`). */
function isLatency(result) {
  return result?.kind === "latency";
}

/** a + b, or null when either is missing. */
function sum(a, b) {
  return a === null || b === null ? null : a + b;
}

/** The ends of an IPC record (`kind: "ipc"`), or null for a pipe result. */
function ipcEnds(result) {
  return result?.kind === "ipc" && Array.isArray(result?.ends) ? result.ends : null;
}

/** The counts of the end `role` of an IPC record: the record's `counts` keyed by
 * role, or, in a record from before they were kept there, that end's own
 * `counts.counts`; null without. */
function ipcEndCounts(result, role) {
  const ends = ipcEnds(result);
  if (!ends || typeof role !== "string") return null;
  const counts = result?.counts;
  const found =
    counts && typeof counts === "object" ? counts[role] : ends.find((e) => e?.role === role)?.counts?.counts;
  return found && typeof found === "object" ? found : null;
}

/** The GiB a result moved, or null when it moved none. */
function gib(result) {
  const bytes = result?.bytes;
  return typeof bytes === "number" && Number.isFinite(bytes) && bytes > 0 ? bytes / 2 ** 30 : null;
}

/** Figures that are the kernel's counts: missing, they are "not counted here" (the
 * machine's doing), never the student's failure. */
export const COUNT_METRICS = new Set([
  "writer_page_allocs_per_gib",
  "writer_allocs_beyond_faults_per_gib",
  "sleeps_per_gib",
  "writer_page_faults",
  "producer_faults_per_page",
  "call_bytes_per_byte",
]);

/** Why a result lacks a kernel count: the reasons it carries, or that it has none. */
function notCounted(result) {
  const ends = ipcEnds(result);
  if (ends) {
    // An IPC record counts per end; the counts read from it are always taken, so
    // a record lacks them only when its runner did not count.
    return ends.some((e) => !ipcEndCounts(result, e?.role))
      ? checkSay.noCountsEnd
      : checkSay.noTally;
  }
  const counts = result?.counts;
  if (counts === undefined || counts === null) return checkSay.countingOff;
  const reasons = (Array.isArray(counts.missing) ? counts.missing : [])
    .map((m) => m?.message)
    .filter((m) => typeof m === "string");
  return reasons.length ? reasons.join("; ") : checkSay.countsLack;
}

const METRIC_NAME = {
  gib_per_s: "throughput",
  mib_per_s: "throughput",
  cpu_per_wall: "CPU time per wall second",
  corrupted_share: "share of corrupted bytes",
  huge_share: "share of huge pages",
  writer_page_allocs_per_gib: "writer's page allocations per GiB",
  writer_allocs_beyond_faults_per_gib: "writer's page allocations beyond its page faults, per GiB",
  sleeps_per_gib: "sleeps per GiB",
  writer_page_faults: "writer's page faults",
  p50_ns: "median round trip",
  p99_ns: "99th percentile round trip",
  cpu_ns_per_round_trip: "CPU time per round trip",
  sleeps_per_round_trip: "sleeps per round trip",
  producer_faults_per_page: "producer's page faults per page",
  call_bytes_per_byte: "bytes through data calls per byte moved",
};

/** The median (the mean of the middle two for an even count), or null. */
export function median(values) {
  if (!values.length) return null;
  const s = [...values].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/** After how many runs the running median stays within `tolerance` of the final one. */
export function settle(values, tolerance) {
  const last = median(values);
  if (last === null) return 0;
  let k = values.length;
  for (let j = values.length; j >= 1; j -= 1) {
    if (Math.abs(median(values.slice(0, j)) - last) <= tolerance * Math.abs(last)) k = j;
    else break;
  }
  return k;
}

export function task(lab, id) {
  return lab.tasks.find((one) => one.id === id) || null;
}

/** How many runs a reference needs before a measure reads it. */
export function required(lab, ref) {
  const found = task(lab, ref.task);
  if (!found) return Infinity;
  if (found.sweep && ref.value === undefined) return found.sweep.values.length * found.runs;
  return found.runs;
}

const valueOf = (m) => (m.value === undefined || m.value === null ? undefined : m.value);

/**
 * Whether a run says it was watched (its progress streamed, its pipe sampled).
 * Watching costs a run its speed, so no check on a figure that watching moves
 * (MOVED_BY_WATCHING) counts such a run: the lab card makes only quiet runs,
 * and an older watched one is left out (a record that does not say, from
 * before the field, counts as it always did). As labs::checks decides.
 */
export function watched(m) {
  return m?.result?.watched === true;
}

/** Figures watching moves: speed, and CPU time per wall second (a watched run
 * takes longer). Damaged bytes, huge pages and the kernel's counts do not move. */
export const MOVED_BY_WATCHING = new Set(["gib_per_s", "mib_per_s", "cpu_per_wall"]);

/** The runs a reference reads for `name`, and how many watched ones were left out. */
function runsOf(measurements, ref, name) {
  const all = measurements.filter((m) => m.task === ref.task && (ref.value === undefined || valueOf(m) === ref.value));
  const skip = (m) => MOVED_BY_WATCHING.has(name) && watched(m);
  return { runs: all.filter((m) => !skip(m)), watched: all.filter(skip).length };
}

/** Every measure of a lab: its checks' and its prediction's answer. */
function measures(lab) {
  return [...lab.checks.map((c) => c.measure), lab.prediction.answer];
}

/** The references a measure reads. */
function refsOf(measure) {
  return [measure.num, measure.den, measure.of, ...(measure.among ?? [])].filter(Boolean);
}

/** What a pending check adds when watched runs of the task were left out. */
function leftOut(n) {
  if (!n) return "";
  return checkSay.leftOut(n);
}

function sizeText(bytes) {
  for (const [unit, size] of [["GiB", 2 ** 30], ["MiB", 2 ** 20], ["KiB", 2 ** 10]]) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit}`;
  }
  return `${bytes} B`;
}

/**
 * Progress of a task: runs every measure reading it can count (watched ones
 * left out where one of them reads a figure watching moves) and runs needed.
 */
export function progress(lab, measurements, of) {
  const moved = measures(lab).some((m) => MOVED_BY_WATCHING.has(m.metric) && refsOf(m).some((r) => r.task === of.id));
  const done = measurements.filter((m) => m.task === of.id && !(moved && watched(m))).length;
  return { done, needed: required(lab, { task: of.id }) };
}

function series(lab, measurements, ref, name) {
  const { runs, watched: left } = runsOf(measurements, ref, name);
  const need = required(lab, ref);
  const at = ref.value === undefined ? "" : checkSay.at(sizeText(ref.value));
  if (runs.length < need) {
    return { pending: checkSay.pending(ref.task, at, runs.length, need, leftOut(left)) };
  }
  const values = runs.map((m) => metric(m.result, name));
  if (COUNT_METRICS.has(name)) {
    const uncounted = runs.find((m) => metric(m.result, name) === null);
    if (uncounted) return { unavailable: checkSay.uncounted(ref.task, at, notCounted(uncounted.result)) };
  }
  if (values.some((v) => v === null)) {
    return { missing: checkSay.missingFigure(ref.task, at, METRIC_NAME[name] || name) };
  }
  return { values };
}

/**
 * Computes a measure: {pending: why} | {missing: why} | {unavailable: why} | {number} | {choice}.
 */
export function evaluate(lab, measurements, measure) {
  const one = (ref) => series(lab, measurements, ref, measure.metric);
  switch (measure.op) {
    case "ratio": {
      const a = one(measure.num);
      if (!a.values) return a;
      const b = one(measure.den);
      if (!b.values) return b;
      const top = median(a.values);
      const bottom = median(b.values);
      if (!(bottom > 0)) return { missing: checkSay.zero(METRIC_NAME[measure.metric], measure.den.task) };
      return { number: top / bottom };
    }
    case "median":
    case "max":
    case "min": {
      const s = one(measure.of);
      if (!s.values) return s;
      const agg = { median, max: (v) => Math.max(...v), min: (v) => Math.min(...v) }[measure.op];
      return { number: agg(s.values) };
    }
    case "settle": {
      const s = one(measure.of);
      if (!s.values) return s;
      return { number: settle(s.values, measure.tolerance) };
    }
    case "fastest":
    case "lowest": {
      // The highest median wins, or the lowest for `lowest`; the first of equals keeps its place.
      const lowest = measure.op === "lowest";
      let best = null;
      for (const ref of measure.among) {
        const s = one(ref);
        if (!s.values) return s;
        const m = median(s.values);
        if (best === null || (lowest ? m < best.m : m > best.m)) best = { m, task: ref.task };
      }
      return best ? { choice: best.task } : { missing: checkSay.noCandidates };
    }
    default:
      return { missing: `unknown measure ${measure.op}` };
  }
}

/** Four significant digits, without trailing zeros or an exponent. */
export function round(v) {
  if (v === 0 || !Number.isFinite(v)) return String(v);
  const digits = Math.min(20, Math.max(0, 3 - Math.floor(Math.log10(Math.abs(v)))));
  const text = v.toFixed(digits);
  return text.includes(".") ? text.replace(/0+$/, "").replace(/\.$/, "") : text;
}

/**
 * The winner of a choice among tasks (`fastest`, `lowest`) and its runner-up,
 * with their figures: {winner, runnerUp, winnerValues, runnerUpValues, lowest},
 * or null until every candidate has its runs.
 */
export function choiceSides(lab, measurements, answer) {
  if (answer.op !== "fastest" && answer.op !== "lowest") return null;
  const lowest = answer.op === "lowest";
  const ranked = [];
  for (const ref of answer.among) {
    const s = series(lab, measurements, ref, answer.metric);
    if (!s.values) return null;
    ranked.push({ task: ref.task, values: s.values, m: median(s.values) });
  }
  if (ranked.length < 2) return null;
  // Stable: the first of equals keeps its place, as evaluate picks the winner.
  ranked.sort((p, q) => (lowest ? p.m - q.m : q.m - p.m));
  const [winner, runnerUp] = ranked;
  return { winner: winner.task, runnerUp: runnerUp.task, winnerValues: winner.values, runnerUpValues: runnerUp.values, lowest };
}

/**
 * The runner's judgement of a choice's margin (`sides`: choiceSides), asked so
 * that "faster" always means the winner's side is the better one: for
 * `lowest`, the runner-up's figures over the winner's.
 */
export function judgeMargin(sides) {
  const [a, b] = sides.lowest ? [sides.runnerUpValues, sides.winnerValues] : [sides.winnerValues, sides.runnerUpValues];
  return askRunner({ paired: false, a, b });
}

/** A choice's margin over the runner-up (the runner's judgement `j` of judgeMargin's sides), in words. */
export function marginSentence(sides, j) {
  if (j.verdict === "too_few") return checkSay.marginTooFew(sides.runnerUp, Math.min(j.n_a, j.n_b), j.min_n);
  const ratio = sides.lowest ? 1 / j.ratio : j.ratio;
  const [low, high] = sides.lowest ? [1 / j.ci_high, 1 / j.ci_low] : [j.ci_low, j.ci_high];
  const figures = checkSay.marginFigures(sides.winner, round(ratio), sides.runnerUp, round(low), round(high));
  if (j.verdict === "faster") return checkSay.marginClear(figures);
  if (j.verdict === "slower") return checkSay.marginTurned(figures);
  return checkSay.marginOpen(figures);
}

/** Reads what the student typed as a prediction: {value} or {error}. */
export function parsePrediction(lab, text) {
  const p = lab.prediction;
  const raw = String(text ?? "").trim();
  if (p.kind === "choice") {
    return p.options.includes(raw) ? { value: raw } : { error: labSay.chooseOneOf(p.options.join(", ")) };
  }
  const v = Number(raw);
  if (raw === "" || !Number.isFinite(v)) return { error: LAB_WORDS.enterNumber };
  if ((p.min != null && v < p.min) || (p.max != null && v > p.max)) {
    return { error: labSay.numberFromTo(p.min, p.max) };
  }
  return { value: v };
}

/** The prediction next to what was measured, as a sentence (null until measured). */
export function predictionVerdict(lab, predicted, measurements) {
  const e = evaluate(lab, measurements, lab.prediction.answer);
  if (e.choice !== undefined) {
    const won = lab.prediction.answer.op === "lowest" ? checkSay.lowestOf(METRIC_NAME[lab.prediction.answer.metric] ?? "figure") : checkSay.fastest;
    return e.choice === predicted ? checkSay.predictedRight(predicted, e.choice, won) : checkSay.predictedOther(predicted, e.choice, won);
  }
  if (e.number === undefined) return null;
  const unit = lab.prediction.unit ? ` ${lab.prediction.unit}` : "";
  const measured = round(e.number);
  if (typeof predicted !== "number") return checkSay.measured(measured, unit);
  // How many times off, either way; near zero (a share of corrupted bytes) the
  // distance itself decides.
  const m = e.number;
  let closeness;
  if (predicted > 0 && m > 0) {
    const times = Math.max(predicted / m, m / predicted);
    closeness = times <= 1.25 ? "close" : times <= 2 ? "within 2x" : "far off";
  } else {
    closeness = Math.abs(predicted - m) <= 0.05 ? "close" : "far off";
  }
  return checkSay.predictedMeasured(round(predicted), measured, unit, checkSay.closeness[closeness] ?? closeness);
}

/** The help under a check the runner left not resolved (`outcome` from /api/labs). */
export function lookHelp(outcome) {
  const judged = outcome?.judged ?? {};
  const look = judged.look ?? 1;
  const looks = judged.looks ?? 1;
  if (Number.isInteger(outcome?.more_runs)) {
    return t("Not settled at look {look} of {looks}: run each task {more} more times for the next look. The looks were planned before the first run, each at its share of the 5%, so asking again does not make a wrong verdict likelier, and a noisy machine never fails the check.", { look, looks, more: outcome.more_runs });
  }
  return t("This verdict is final: the last of its {looks} planned looks is taken, and another look would spend more than the 5%. Start the lab over to measure afresh.", { looks });
}

/** The lab's one sentence when the runner judged older runs again (any outcome `rejudged`), else null. */
export function rejudgedNote(outcomes) {
  const list = Array.isArray(outcomes) ? outcomes : [];
  if (!list.some((o) => o?.rejudged === true)) return null;
  return t("Judged again under the current rule: some of these runs were recorded when each new run was judged afresh at 95%, so a check may read differently than it did then.");
}

/**
 * How many runs of task `id` its button adds: the rest of its runs while it
 * has fewer than `needed`, then up to the next planned look of a check on it
 * that the runner left open (`next_look_runs`), at least one.
 */
export function runsToAdd(lab, outcomes, id, done, needed) {
  if (done < needed) return needed - done;
  const reads = new Set(lab.checks.filter((c) => c.measure?.num?.task === id || c.measure?.den?.task === id).map((c) => c.id));
  const list = Array.isArray(outcomes) ? outcomes : [];
  const wanted = list.filter((o) => reads.has(o?.id) && Number.isInteger(o.next_look_runs)).map((o) => o.next_look_runs - done);
  return Math.max(1, ...wanted);
}

/**
 * What a check shows: the runner's outcome for it in `judged` (/api/labs'
 * `checks`: a list of outcomes with `id`, or a map by id), or a pending one.
 */
export function outcomeOf(judged, check, online) {
  const list = Array.isArray(judged) ? judged : judged && typeof judged === "object" ? Object.values(judged) : [];
  const found = list.find((o) => o?.id === check.id) ?? (judged && !Array.isArray(judged) ? judged[check.id] : undefined);
  if (found && typeof found.status === "string") return found;
  return { id: check.id, status: "pending", detail: online ? LAB_WORDS.waitingCheck : LAB_WORDS.offlineCheck };
}
