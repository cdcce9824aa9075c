// A card's life around a job, as data (pure: no DOM, no socket, tested in Node): the
// phases a card goes through, which of them hold the card busy, the phase each
// event of a session leads to, and the words a card says by default in each.
// cardlife.js shows what this decides; a card supplies only its own words.

import { t } from "./i18n.js";

/** The phases of a card; `data-state` carries them (or a card's own word for each). */
export const PHASES = ["idle", "connecting", "queued", "running", "done", "cancelled", "error"];

/** Whether a job is under way in `phase` (the form is locked, Cancel is live). */
export function isBusy(phase) {
  return phase === "connecting" || phase === "queued" || phase === "running";
}

/**
 * The phase after `event` (a message of a session, runner.js) in `phase`;
 * `ends` is the message type that ends the session. `whole` says whether the
 * session is the card's whole job: one of a sequence leaves the ending to the card.
 */
export function phaseAfter(phase, event, ends, whole = true) {
  switch (event.type) {
    case "connecting":
    case "queued":
      return event.type;
    case "notice":
      return phase;
    case "cancelled":
    case "error":
      return whole ? event.type : phase;
    default:
      if (event.type === ends) return whole ? "done" : phase;
      // Whatever else a job says (started, progress, point, leg, ...) means it runs;
      // after the end, only its `saved` still comes.
      return isBusy(phase) ? "running" : phase;
  }
}

/** The words every card says unless it has its own (`words` overrides any); null says nothing new. */
export const WORDS = {
  connecting: () => t("Connecting to the runner…"),
  queued: (position) => t("Waiting: place {position} in the queue.", { position }),
  running: () => null,
  done: () => t("Done."),
  cancelling: () => t("Cancelling…"),
  cancelled: () => t("Cancelled."),
  error: (message) => t("Error: {message}", { message }),
};

/** A card's words: its own where it has them, the common ones otherwise. */
export function wordsOf(own = {}) {
  return { ...WORDS, ...own };
}

/**
 * What the status line says after `event` (null: the card's handler says it, or
 * nothing changes). The session's connecting, end, cancellation and failure are
 * said only when the session is the card's whole job.
 */
export function sayAfter(words, event, ends, whole = true) {
  switch (event.type) {
    case "connecting":
      // A sequence said at its `begin` what it is starting.
      return whole ? words.connecting() : null;
    case "queued":
      return words.queued(event.position);
    case "cancelled":
      return whole ? words.cancelled() : null;
    case "error":
      return whole ? words.error(event.message) : null;
    default:
      return event.type === ends && whole ? words.done(event) : null;
  }
}

/** How a session ended, for a card that runs several: {ended: "done" | "cancelled" | "error", event | message}. */
export function outcomeOf(event, ends) {
  if (event.type === ends) return { ended: "done", event };
  if (event.type === "cancelled") return { ended: "cancelled" };
  if (event.type === "error") return { ended: "error", message: event.message };
  return null;
}
