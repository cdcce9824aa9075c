// A card's life around its jobs, in one place: given the card's status line, its
// run and cancel buttons, its form and its bar, a CardLife owns the busy state (the
// form and run buttons locked, Cancel live, `data-state` on the elements that carry
// it), the one Cancel handler, the words of each phase (connecting, queued,
// cancelled, error, done: cardstate.js, or the card's own) and the job's session
// (runner.js). A card supplies only what is its own: the message to send and what
// to do with each event (handlers named as runner.js's `byName` says).
//
// A card with one job a press calls `start(message, on)`; a card that runs several
// in a row (a sequence, pairs, tries) calls `begin()`, then `session(message, on)`
// for each (a promise of how it ended) and `show(phase, text)` at the end.

import { fill } from "./dom.js";
import { PHASES, isBusy, outcomeOf, phaseAfter, sayAfter, wordsOf } from "./cardstate.js";
import { byName, lastMessageOf, start } from "./runner.js";

export class CardLife {
  /**
   * @param {object} parts
   * @param {Element | ((...text) => void)} parts.status the status line, or how to say a status
   * @param {Element[]} [parts.marks] elements whose `data-state` carries the phase
   * @param {object} [parts.states] the card's word for a phase in `data-state` (default: the phase)
   * @param {Element[]} [parts.run] buttons locked while a job runs
   * @param {Element} [parts.cancel] the Cancel (or Stop) button: live while a job runs
   * @param {"disabled" | "hidden" | "attached"} [parts.cancelShows] how Cancel is out of play
   *   when idle: disabled, hidden, or not in the card at all (then it is put right after the status)
   * @param {Element} [parts.form] its inputs and selects are locked while a job runs
   * @param {Element} [parts.bar] a <progress>, hidden but while `progress()` shows it
   * @param {object} [parts.words] the card's own words (cardstate.js's WORDS); `cancelling: null` says nothing
   * @param {(phase: string, busy: boolean) => void} [parts.onPhase] the card's own part of showing a phase
   */
  constructor({ status, marks = [], states = {}, run = [], cancel = null, cancelShows = "disabled", form = null, bar = null, words = {}, onPhase = null }) {
    Object.assign(this, { status, marks, states, run, cancelButton: cancel, cancelShows, form, bar, onPhase });
    this.own = words;
    this.words = wordsOf(words);
    this.phase = "idle";
    this.current = null;
    this.stopped = false;
    cancel?.addEventListener("click", () => this.cancel());
  }

  /**
   * The life of a part with one button and no Cancel (Profile this step, Look
   * again, Measure a wakeup, Probe again): `panel`'s data-state says "running"
   * from the moment the button is pressed, and `states` what it says after.
   */
  static ofButton(button, { status, panel = null, states = {}, words = {} }) {
    return new CardLife({ status, marks: panel ? [panel] : [], states: { connecting: "running", queued: "running", ...states }, run: [button], words });
  }

  /** Whether a job of the card is under way. */
  get busy() {
    return isBusy(this.phase);
  }

  /** Shows `phase` (a PHASES entry, or a card's own ending) and says `text`, or the phase's words. */
  show(phase, ...text) {
    // Without text, the phase's own words; a phase with none (running) keeps what was said.
    const said = text.length ? text : PHASES.includes(phase) ? [this.words[phase]?.()] : [];
    if (said.length && said[0] !== null && said[0] !== undefined) this.say(...said);
    this.enter(phase);
  }

  /** Enters `phase` without a word: `data-state`, the buttons, the form, the bar. */
  enter(phase) {
    this.phase = phase;
    const mark = this.states[phase] ?? phase;
    for (const el of this.marks) el.dataset.state = mark;
    const busy = isBusy(phase);
    this.hold(busy);
    this.showCancel(busy);
    if (!busy && this.bar) this.bar.hidden = true;
    this.onPhase?.(phase, busy);
  }

  /** Says `text` (strings and nodes) on the status line; the phase stays. */
  say(...text) {
    if (typeof this.status === "function") this.status(...text);
    else if (text.length === 1 && typeof text[0] === "string") this.status.textContent = text[0];
    else fill(this.status, ...text);
  }

  /** Locks (or frees) the run buttons and the form, as while a job runs: for runs the card's other parts make. */
  hold(on) {
    for (const button of this.run) button.disabled = on;
    for (const el of this.form?.querySelectorAll("input, select") ?? []) el.disabled = on;
  }

  showCancel(busy) {
    const button = this.cancelButton;
    if (!button) return;
    if (this.cancelShows === "hidden") button.hidden = !busy;
    else if (this.cancelShows === "disabled") button.disabled = !busy;
    else if (!busy) button.remove();
    else if (typeof this.status !== "function" && !button.isConnected) this.status.after(button);
  }

  /** Shows the bar at `fraction` (null: no value, the browser draws it indeterminate). */
  progress(fraction) {
    if (!this.bar) return;
    this.bar.hidden = false;
    if (fraction === null) this.bar.removeAttribute("value");
    else this.bar.value = fraction;
  }

  /**
   * One job as the card's whole task: sends `message`, shows each phase in the
   * card's words, and calls the card's handler of each event (`on`: handlers by
   * name, or a function of every event) after the card shows what the event means;
   * a notice the card does not handle is added to the status. Returns how it ended
   * (see `session`). `words` are this job's own (a count in its cancelled line).
   */
  start(message, on, words = {}) {
    this.stopped = false;
    this.words = wordsOf({ ...this.own, ...words });
    return this.open(message, on, true);
  }

  /** Marks the card busy for a sequence of jobs (`phase`, saying `text`); Cancel stops the sequence. */
  begin(phase = "connecting", ...text) {
    this.stopped = false;
    this.words = wordsOf(this.own);
    this.show(phase, ...text);
  }

  /**
   * One job of a sequence: as `start`, but its end, cancellation or failure is
   * left to the card (`show` once the sequence is over). A promise of
   * {ended: "done", event} | {ended: "cancelled"} | {ended: "error", message}.
   */
  session(message, on) {
    return this.open(message, on, false);
  }

  open(message, on, whole) {
    const last = lastMessageOf(message);
    // A card's handlers by name, or one function given every event as it came.
    const handle = typeof on === "function" ? on : byName(on);
    const noticed = typeof on === "function" || Boolean(on.notice);
    return new Promise((resolve) => {
      let session = null;
      session = start(message, (event) => {
        const outcome = outcomeOf(event, last);
        if (outcome && this.current === session) this.current = null;
        const phase = phaseAfter(this.phase, event, last, whole);
        const text = sayAfter(this.words, event, last, whole);
        if (text !== null) this.show(phase, text);
        else if (phase !== this.phase) this.enter(phase);
        handle(event);
        if (event.type === "notice" && !noticed) this.say(`${this.statusText()} (${event.message})`);
        if (outcome) resolve(outcome);
      });
      this.current = session;
    });
  }

  statusText() {
    return typeof this.status === "function" ? "" : this.status.textContent;
  }

  /** The one Cancel: stops the job under way (and the sequence it belongs to). */
  cancel() {
    this.stopped = true;
    if (!this.current) return;
    const cancelling = this.words.cancelling?.();
    if (cancelling) this.say(cancelling);
    this.current.cancel();
  }
}
