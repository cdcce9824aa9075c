// The results the tables and "your best so far" show. With the runner, its history
// (/api/results) is the one source: the page keeps nothing of its own. localStorage is
// only a cache of it, for a static copy of the book read without the runner.

import { history, runnerAvailable } from "./api.js";
import { perGib } from "./counts.js";
import { isNumber } from "./format.js";

const KEY = "pipebook-results-v1";
const MAX = 500;
export const RESULT_EVENT = "pipebook:result";

/** The few fields the tables need (with the kernel's counts per GiB, `kernel`, when
 * the run counted them); a full result is kept by the server. */
export function slim(result) {
  const kernel = perGib(result);
  return {
    step: String(result.step),
    gib_per_s: Number(result.gib_per_s),
    bytes: Number(result.bytes),
    elapsed_ms: Number(result.elapsed_ms),
    finished_at_ms: Number(result.finished_at_ms),
    ...(kernel ? { kernel } : {}),
    // What makes runs of one step comparable (its configuration) and whether
    // the run was watched: comparisons use quiet runs only.
    ...(typeof result.watched === "boolean" ? { watched: result.watched } : {}),
    // A traced run was slowed by its tracepoints: compared only with traced runs.
    ...(result.traced === true ? { traced: true } : {}),
    ...(isNumber(result.bytes_per_call) ? { bytes_per_call: Number(result.bytes_per_call) } : {}),
    ...(isNumber(result.pipe_capacity) ? { pipe_capacity: Number(result.pipe_capacity) } : {}),
  };
}

export function valid(r) {
  return r && typeof r.step === "string" && isNumber(r.gib_per_s) && r.gib_per_s > 0;
}

/** The server stamps every result with the millisecond it finished: with the step,
 * that names one result exactly. */
const key = (r) => `${r.step}@${r.finished_at_ms}`;

/**
 * The server's history plus results this page finished that it has not listed yet
 * (the server answers the page first and saves after). Pure, for tests.
 */
export function withFresh(server, fresh) {
  const known = new Set(server.map(key));
  return [...server, ...fresh.filter((r) => !known.has(key(r)))];
}

function loadCache() {
  try {
    const data = JSON.parse(localStorage.getItem(KEY) || "[]");
    return Array.isArray(data) ? data.filter(valid) : [];
  } catch {
    return [];
  }
}

function saveCache(results) {
  try {
    localStorage.setItem(KEY, JSON.stringify(results.slice(-MAX)));
  } catch {
    // Storage full or disabled: only the offline copy loses.
  }
}

let fresh = [];

/** Tells the page a run finished (the results tables listen). */
export function record(result) {
  const entry = slim(result);
  if (!valid(entry)) return;
  fresh.push(entry);
  document.dispatchEvent(new CustomEvent(RESULT_EVENT, { detail: entry }));
}

/** Every result on record: the runner's history, or without it the cached copy. */
export async function allResults() {
  if (!(await runnerAvailable())) return loadCache();
  const server = (await history()).filter((r) => r && r.step !== undefined).map(slim).filter(valid);
  const all = withFresh(server, fresh);
  fresh = fresh.filter((r) => !server.some((s) => key(s) === key(r)));
  saveCache(all);
  return all;
}
