// The lab card's table of recorded runs (pure, so node tests it): one row a run,
// with the figures the checks read. A column appears only when some run carries
// its figure, so an IPC lab does not show three columns of dashes for the CPU
// time, damage and huge pages that only pipe runs report.

import * as fmt from "../format.js";
import { metric, round, watched } from "./labchecks.js";
import { nsText } from "../latency/dist.js";
import { t } from "../i18n.js";

const DASH = "—";

function fixed(v, digits) {
  return v === null ? DASH : v.toFixed(digits);
}

/** A share as a percentage that never rounds a few damaged bytes to zero. */
function percent(share) {
  if (share === null) return DASH;
  return share === 0 ? "0%" : `${round(100 * share)}%`;
}

// Heading, the metric it reads, and how to write it. GiB/s always shows but in a
// lab of latency runs alone, which move no stream of bytes.
const COLUMNS = [
  { head: "GiB/s", name: "gib_per_s", text: (v) => fixed(v, 2), always: (ms) => ms.some((m) => m.result?.kind !== "latency") },
  { head: t("median"), name: "p50_ns", text: nsText },
  { head: t("99th percentile"), name: "p99_ns", text: nsText },
  { head: t("CPU s per s"), name: "cpu_per_wall", text: (v) => fixed(v, 2) },
  { head: t("CPU per round trip"), name: "cpu_ns_per_round_trip", text: nsText },
  { head: t("sleeps per round trip"), name: "sleeps_per_round_trip", text: (v) => fixed(v, 2) },
  { head: t("corrupted"), name: "corrupted_share", text: percent },
  { head: t("in huge pages"), name: "huge_share", text: (v) => (v === null ? DASH : `${(100 * v).toFixed(0)}%`) },
];

/**
 * `measurements` as the runner keeps them ({task, value?, result}), a watched
 * run's task marked as left out of speed checks; returns
 * {head: [...], rows: [[...]]} of strings, or null when there is no run yet.
 */
export function runsTable(measurements) {
  if (!measurements?.length) return null;
  const shown = COLUMNS.filter((c) => c.always?.(measurements) || measurements.some((m) => metric(m.result, c.name) !== null));
  return {
    head: [t("task"), ...shown.map((c) => c.head)],
    rows: measurements.map((m) => [
      // A watched run is listed but no check on its speed counts it: say so beside it.
      `${m.value == null ? m.task : `${m.task} @ ${fmt.bytes(m.value)}`}${watched(m) ? t(" (watched: left out of speed checks)") : ""}`,
      ...shown.map((c) => c.text(metric(m.result, c.name))),
    ]),
  };
}
