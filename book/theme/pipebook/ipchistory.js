// Earlier runs of an IPC mechanism, from the runner's history (/api/results, where
// IPC lab results carry "kind":"ipc"). Pure, for tests.

import { isNumber } from "./format.js";

/**
 * The verified runs of `mechanism` in `history`, summarised:
 * {runs, best: {mib_per_s, bytes, finished_at_ms} | null, last: same | null}.
 */
export function earlierRuns(history, mechanism) {
  const mine = (Array.isArray(history) ? history : []).filter(
    (r) => r && r.kind === "ipc" && r.mechanism === mechanism && r.checksum_ok === true && isNumber(r.mib_per_s) && r.mib_per_s > 0,
  );
  const pick = (r) => (r ? { mib_per_s: r.mib_per_s, bytes: r.bytes, finished_at_ms: r.finished_at_ms } : null);
  const best = mine.reduce((a, r) => (!a || r.mib_per_s > a.mib_per_s ? r : a), null);
  const last = mine.reduce((a, r) => (!a || (r.finished_at_ms ?? 0) >= (a.finished_at_ms ?? 0) ? r : a), null);
  return { runs: mine.length, best: pick(best), last: pick(last) };
}
