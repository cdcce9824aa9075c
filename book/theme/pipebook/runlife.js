// A run's life as data: the session's events (queued, started, progress, result,
// saved, cancelled, error) fold into one state, which the card then shows. Pure: no
// DOM, no socket, tested in Node; widget.js feeds it events and renders what it returns
// (cardlife.js's phases, with a run card's own words and figures).

import * as fmt from "./format.js";
import { t } from "./i18n.js";

/** The phases a card goes through; `data-state` on the card carries them. */
export const PHASES = ["idle", "connecting", "queued", "running", "done", "cancelled", "error"];

const STATUS_TEXT = {
  idle: t("Ready. Runs on this machine: the writer and reader are pinned to two CPUs."),
  connecting: t("Connecting to the runner…"),
  done: t("Done."),
  cancelled: t("Cancelled. Nothing is left running."),
};

const BUTTON_TEXT = {
  connecting: t("Connecting…"),
  queued: t("Queued…"),
  running: t("Running…"),
};

/** Whether a run is under way in `phase` (the form is locked, Cancel is live). */
export function isBusy(phase) {
  return phase === "connecting" || phase === "queued" || phase === "running";
}

/** The status line for `phase` when no event gave a more specific one. */
export function statusText(phase) {
  return STATUS_TEXT[phase] ?? "";
}

/** The run button's label in `phase`. */
export function buttonText(phase) {
  return BUTTON_TEXT[phase] ?? t("Run this step");
}

/** The chart plots the rate over stretches of at least this many seconds. */
export const CHART_STRETCH_S = 0.15;

/** The state before any event of a run with these `params` (budget in `seconds`). */
export function begin(params) {
  return {
    phase: "connecting",
    status: statusText("connecting"),
    budget: params.seconds,
    quiet: Boolean(params.quiet),
    progressCount: 0,
    lastSample: null,
    live: "0.00",
    chartPoint: null,
    pipeBytes: null,
    warnings: [],
    result: null,
    saved: null,
    savedText: "",
  };
}

/**
 * What the card says of a result's `saved {store, ok, error}`: whether the runner's
 * history has it, and why not (the runner's own sentence, e.g. a full disk).
 */
export function savedText(event) {
  if (event.ok) return t("Saved in this machine's history.");
  const why = event.error?.message ? String(event.error.message) : t("the runner could not save it");
  return t("Not saved: {why}.", { why: `${why.charAt(0).toUpperCase()}${why.slice(1)}` });
}

/**
 * The state after `event`, a message of the run's session as the server sent it
 * ({type, ...}: runner.js's start); `state` is not changed.
 */
export function step(state, event) {
  const next = { ...state, chartPoint: null };
  switch (event.type) {
    case "queued":
      next.phase = "queued";
      next.status =
        event.position > 0
          ? t("Waiting: another run goes first (place {position} in the queue). Benchmarks share the CPUs, so they run one at a time.", { position: event.position })
          : t("Queued…");
      return next;
    case "started":
      next.phase = "running";
      next.status = state.quiet
        ? t("Quiet run: up to {seconds} {u_s}, the result comes at the end…", { u_s: "s", seconds: state.budget })
        : t("Running for up to {seconds} {u_s}…", { u_s: "s", seconds: state.budget });
      next.warnings = Array.isArray(event.warnings) ? event.warnings.map(String) : [];
      return next;
    case "progress":
      return progress(next, event);
    case "result":
      // The server's result message: the result's fields at the top level.
      next.phase = "done";
      next.result = event;
      next.status = t("Done: {bytes} in {time}.", { bytes: fmt.bytes(event.bytes), time: fmt.ms(event.elapsed_ms) });
      return next;
    case "saved":
      // The history's answer about this result (a lab record's is the lab card's).
      if (event.store !== "history") return next;
      next.saved = Boolean(event.ok);
      next.savedText = savedText(event);
      return next;
    case "cancelled":
      next.phase = "cancelled";
      next.status = statusText("cancelled");
      return next;
    case "error":
      next.phase = "error";
      next.status = t("Error: {message}", { message: event.message });
      return next;
    default:
      return next;
  }
}

function progress(next, msg) {
  next.progressCount += 1;
  next.phase = "running";
  const secs = Number(msg.elapsed_ms) / 1000;
  const b = Number(msg.bytes);
  // The big figure is the average so far (it settles on the result); the chart shows
  // the rate stretch by stretch, not the running average.
  next.live = fmt.gib(secs > 0 ? b / 2 ** 30 / secs : Number(msg.gib_per_s));
  const last = next.lastSample;
  if (!last) {
    next.chartPoint = [secs, Number(msg.gib_per_s)];
    next.lastSample = { t: secs, b };
  } else if (secs - last.t >= CHART_STRETCH_S && b >= last.b) {
    next.chartPoint = [secs, (b - last.b) / 2 ** 30 / (secs - last.t)];
    next.lastSample = { t: secs, b };
  }
  if (fmt.isNumber(msg.pipe_bytes)) next.pipeBytes = msg.pipe_bytes;
  next.status = t("Running: {elapsed} {u_s} of {budget} {u_s}, {bytes} through the pipe.", { u_s: "s", elapsed: secs.toFixed(1), budget: next.budget, bytes: fmt.bytes(b) });
  return next;
}
