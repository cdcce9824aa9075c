// The reader's own results, kept in localStorage so "your machine vs the article" fills
// in as they read, and merged with the runner's history (/api/results).

import { history } from "./api.js";
import { isNumber } from "./format.js";

const KEY = "pipebook-results-v1";
const MAX = 500;
export const RESULT_EVENT = "pipebook:result";

/** The few fields the tables need; a full result is kept by the server. */
function slim(result) {
  return {
    step: String(result.step),
    gib_per_s: Number(result.gib_per_s),
    bytes: Number(result.bytes),
    elapsed_ms: Number(result.elapsed_ms),
    finished_at_ms: Number(result.finished_at_ms) || Date.now(),
  };
}

function valid(r) {
  return r && typeof r.step === "string" && isNumber(r.gib_per_s) && r.gib_per_s > 0;
}

export function loadLocal() {
  try {
    const data = JSON.parse(localStorage.getItem(KEY) || "[]");
    return Array.isArray(data) ? data.filter(valid) : [];
  } catch {
    return [];
  }
}

/** Records a finished run and tells the page (results tables listen). */
export function record(result) {
  const entry = slim(result);
  if (!valid(entry)) return;
  const all = loadLocal();
  all.push(entry);
  try {
    localStorage.setItem(KEY, JSON.stringify(all.slice(-MAX)));
  } catch {
    // Storage full or disabled: the table still gets the event.
  }
  document.dispatchEvent(new CustomEvent(RESULT_EVENT, { detail: entry }));
}

const identity = (r) => `${r.step}|${Math.round(r.finished_at_ms / 1000)}|${r.gib_per_s.toFixed(4)}`;

/** Local results plus the server's history, without duplicates. */
export async function allResults() {
  const merged = new Map();
  for (const r of loadLocal()) merged.set(identity(r), r);
  for (const raw of await history()) {
    if (!raw || raw.step === undefined) continue;
    const r = slim(raw);
    if (valid(r)) merged.set(identity(r), r);
  }
  return [...merged.values()];
}
