// The run card's "how sure": the reader's quiet runs of the card's configuration
// against the article's figure, with its 95% interval once there are two, drawn
// against 1.0; "Run until resolved" adds quiet runs through the runner's queue,
// one at a time, until the interval clears 1.0 or the budget is spent; and what
// watching cost here, once there is a live and a quiet run of the same
// configuration. On every step but the baseline, the step against the baseline
// (write-read; a tuned variant against its own step, the gain its search
// measured, since the server runs a tuned side at its search's sizes): their quiet runs' ratio of medians with its 95% interval once
// each has two, and its own "Run until resolved", which sends the two head to
// head through the runner's queue in quiet pairs (A B B A, the compare job, two
// pairs a round) until that interval clears 1.0 or the pairs are spent. The
// figures come from verdict.js (runEvidence, baselineEvidence: compareRuns), the
// one definition of a comparison the page uses.
// Hooks for tests: .pipebook-evidence[data-state="idle"|"busy"] with data-verdict,
// .pipebook-evidence-text, svg.pipebook-evidence-interval, .pipebook-watching,
// input.pipebook-evidence-budget, button.pipebook-evidence-until, .pipebook-evidence-status;
// .pipebook-baseline[data-state="idle"|"busy"] with data-verdict, .pipebook-baseline-text,
// svg.pipebook-baseline-interval, input.pipebook-baseline-budget,
// button.pipebook-baseline-until, .pipebook-baseline-status.

import { fill, h } from "./dom.js";
import * as fmt from "./format.js";
import { intervalPicture } from "./interval.js";
import { startCompare, startRun } from "./runner.js";
import { allResults, record } from "./store.js";
import { BASELINE, MIN_RUNS, articleSentence, baseOf, baselineEvidence, baselineSentence, runEvidence } from "./verdict.js";

/** Most quiet runs one press of "Run until resolved" may add. */
const MAX_BUDGET = 20;

/** Pairs each head-to-head round against the baseline runs: one A B B A block. */
const ROUND_PAIRS = 2;

/** Most pairs one press of the baseline's "Run until resolved" may add (the runner takes 20 a comparison). */
const MAX_BASE_PAIRS = 20;

/** The configuration runs must share to be compared: the step and its sizes. */
export function configOf(step, result) {
  const c = { step };
  if (result && fmt.isNumber(result.bytes_per_call)) c.bytes_per_call = Number(result.bytes_per_call);
  if (result && fmt.isNumber(result.pipe_capacity)) c.pipe_capacity = Number(result.pipe_capacity);
  // A traced run is slowed by its tracepoints: compared only with traced runs.
  if (result?.traced) c.traced = true;
  return c;
}

export class RunEvidence {
  /**
   * `info`: the card's step ({step, article}); `id`: a prefix for element ids;
   * `readParams()`: the card's form as the card reads it; `onBusy(bool)`: the
   * card holds its own runs while these go.
   */
  constructor(info, id, readParams, onBusy) {
    this.info = info;
    this.readParams = readParams;
    this.onBusy = onBusy;
    this.config = { step: info.step };
    this.session = null;
    this.text = h("p.pipebook-evidence-text");
    this.picture = h("div.pipebook-evidence-picture");
    this.watching = h("p.pipebook-watching", { hidden: true });
    this.budget = h("input.pipebook-evidence-budget", { id: `${id}-until-budget`, type: "number", min: 1, max: MAX_BUDGET, value: 6, size: 4 });
    this.button = h("button.pipebook-run-button.pipebook-evidence-until", { type: "button" }, "Run until resolved");
    this.cancel = h("button.pipebook-cancel-button", { type: "button", hidden: true }, "Stop");
    this.status = h("p.pipebook-status.pipebook-evidence-status", { role: "status", "aria-live": "polite" });
    const row = h(
      "div.pipebook-lab-row",
      null,
      h("label.pipebook-field", { for: this.budget.id }, h("span", null, "Quiet runs at most"), this.budget),
      this.button,
      this.cancel,
    );
    this.el = h("div.pipebook-evidence", { "data-state": "idle" }, this.text, this.picture, row, this.status, this.watching);
    this.row = row;
    this.running = false;
    // A tuned variant is set against its own step (the gain its search measured),
    // every other step against the baseline.
    this.baseStep = baseOf(info.step);
    this.base = info.step === BASELINE ? null : this.baselinePart(id);
    if (this.base) this.el.append(this.base.el);
    row.hidden = info.article === null;
    this.button.addEventListener("click", () => this.untilResolved());
    this.cancel.addEventListener("click", () => {
      this.stopped = true;
      this.session?.cancel();
    });
  }

  /** The step against the baseline: its elements and their wiring. */
  baselinePart(id) {
    const part = {
      config: { step: this.baseStep },
      // Until a head-to-head names it, the baseline is as its newest quiet run ran.
      learned: false,
      text: h("p.pipebook-baseline-text"),
      picture: h("div.pipebook-baseline-picture"),
      budget: h("input.pipebook-baseline-budget", { id: `${id}-baseline-budget`, type: "number", min: ROUND_PAIRS, max: MAX_BASE_PAIRS, step: ROUND_PAIRS, value: 4, size: 4 }),
      button: h("button.pipebook-run-button.pipebook-baseline-until", { type: "button", "aria-label": `Run until resolved against ${this.baseStep}` }, "Run until resolved"),
      cancel: h("button.pipebook-cancel-button", { type: "button", hidden: true }, "Stop"),
      status: h("p.pipebook-status.pipebook-baseline-status", { role: "status", "aria-live": "polite" }),
      session: null,
      stopped: false,
    };
    const row = h(
      "div.pipebook-lab-row",
      null,
      h("label.pipebook-field", { for: part.budget.id }, h("span", null, `Pairs against ${this.baseStep} at most`), part.budget),
      part.button,
      part.cancel,
    );
    part.el = h(
      "div.pipebook-baseline",
      { "data-state": "idle" },
      h(
        "p.pipebook-summary",
        null,
        this.baseStep === BASELINE
          ? `Against the baseline: this step's quiet runs and ${BASELINE}'s, each at its own sizes, as the article compares its steps.`
          : `Against its own step: this variant's quiet runs (at the sizes its search found) and ${this.baseStep}'s (at the step's own), the gain the search measured, head to head.`,
      ),
      part.text,
      part.picture,
      row,
      part.status,
    );
    part.button.addEventListener("click", () => this.untilBaseline());
    part.cancel.addEventListener("click", () => {
      part.stopped = true;
      part.session?.cancel();
    });
    return part;
  }

  /** Holds both "Run until resolved" buttons while any run of the card goes. */
  hold(busy) {
    this.button.disabled = busy;
    if (this.base) this.base.button.disabled = busy;
  }

  /** Shows what the runs of `config` say now (from the history and this page's runs). */
  async refresh(config = this.config) {
    this.config = config;
    const results = await allResults();
    return this.show(results);
  }

  /** Shows what `results` (slimmed) say of this card's configuration; returns the evidence. */
  show(results) {
    const e = runEvidence(results, this.config, this.info.article);
    if (this.info.article === null) {
      fill(this.text);
    } else if (e.vsArticle) {
      const sentence = articleSentence(e.vsArticle, e.quiet.length);
      fill(this.text, sentence);
      fill(this.picture, intervalPicture(e.vsArticle, sentence, "pipebook-evidence-interval"));
      this.el.dataset.verdict = e.vsArticle.verdict;
    } else {
      fill(
        this.text,
        `Quiet runs of this configuration so far: ${e.quiet.length}. With ${MIN_RUNS} or more the card states how sure the comparison with the article is (quiet runs only: watching a run costs it).`,
      );
      fill(this.picture);
      delete this.el.dataset.verdict;
    }
    this.watching.hidden = !e.watching;
    fill(this.watching, e.watching ? e.watching.sentence : "");
    if (this.base) e.baseline = this.showBaseline(results);
    return e;
  }

  /** Shows the step against the baseline from `results`; returns baselineEvidence's answer. */
  showBaseline(results) {
    const part = this.base;
    if (!part.learned) {
      const newest = results.filter((r) => r.step === this.baseStep && r.watched === false).at(-1);
      part.config = configOf(this.baseStep, newest);
    }
    const b = baselineEvidence(results, this.config, part.config);
    const sentence = baselineSentence(b, this.info.step, part.config, this.baseStep);
    fill(part.text, sentence);
    if (b.vsBaseline) {
      fill(part.picture, intervalPicture(b.vsBaseline, sentence, "pipebook-baseline-interval"));
      part.el.dataset.verdict = b.vsBaseline.verdict;
    } else {
      fill(part.picture);
      delete part.el.dataset.verdict;
    }
    return b;
  }

  /**
   * The step and the baseline head to head, two quiet pairs a round through the
   * runner's queue, until the interval clears 1.0 or the pairs are spent. Only
   * the run's length (seconds, bytes) goes from the card's form: each step runs
   * at its own sizes.
   */
  async untilBaseline() {
    const part = this.base;
    if (this.running) return;
    const budget = Number(part.budget.value);
    if (!Number.isInteger(budget) || budget < ROUND_PAIRS || budget > MAX_BASE_PAIRS) {
      fill(part.status, `Pairs against ${this.baseStep} at most: enter a whole number from ${ROUND_PAIRS} to ${MAX_BASE_PAIRS}.`);
      return;
    }
    const read = this.readParams();
    if (read.errors) {
      fill(part.status, `Error: ${read.errors.join("; ")}.`);
      return;
    }
    const params = {};
    for (const name of ["seconds", "bytes"]) if (read.params[name] !== undefined) params[name] = read.params[name];
    this.running = true;
    part.stopped = false;
    part.el.dataset.state = "busy";
    part.cancel.hidden = false;
    this.hold(true);
    this.onBusy(true);
    let evidence = await this.refresh();
    let pairs = 0;
    let ending = "";
    const plural = (n) => `${n} pair${n === 1 ? "" : "s"}`;
    while (!ending) {
      const c = evidence.baseline.vsBaseline;
      if (c && c.verdict !== "not_resolved") ending = pairs ? `Resolved after ${plural(pairs)} of quiet runs.` : "Resolved already: no more runs needed.";
      else if (pairs + ROUND_PAIRS > budget) ending = `Budget spent: ${plural(pairs)} of quiet runs added, not resolved yet.`;
      else if (part.stopped) ending = `Stopped after ${plural(pairs)}.`;
      if (ending) break;
      const round = await this.oneRound(params, pairs, budget);
      if (!round.ok) {
        ending = round.message;
        break;
      }
      pairs += round.pairs;
      evidence = await this.refresh();
    }
    fill(part.status, ending);
    part.el.dataset.state = "idle";
    part.cancel.hidden = true;
    this.running = false;
    this.hold(false);
    this.onBusy(false);
  }

  /** One A B B A block of the step and the baseline through the queue: {ok, pairs} or {ok: false, message}. */
  oneRound(params, done, budget) {
    const part = this.base;
    const step = this.info.step;
    return new Promise((resolve) => {
      let ended = false;
      const end = (value) => {
        if (ended) return;
        ended = true;
        part.session = null;
        resolve(value);
      };
      const where = (text) => fill(part.status, `Pairs ${done + 1} and ${done + ROUND_PAIRS} of at most ${budget}: ${text}`);
      part.session = startCompare({ a: step, b: this.baseStep, pairs: ROUND_PAIRS, params }, {
        connecting: () => where("connecting…"),
        queued: (position) => where(`waiting for place ${position} in the queue…`),
        leg: (msg) => {
          // The page's own record keeps it among the figures until the history lists it.
          record(msg.result);
          if (msg.side === "a") this.config = configOf(step, msg.result);
          else {
            part.config = configOf(this.baseStep, msg.result);
            part.learned = true;
          }
          where(`run ${msg.index} of ${msg.of}, ${msg.side === "a" ? step : this.baseStep} (quiet): ${fmt.gib(msg.result.gib_per_s)} GiB/s.`);
        },
        verdict: (msg) => end({ ok: true, pairs: msg.pairs }),
        cancelled: () => end({ ok: false, message: `Stopped after ${done} pair${done === 1 ? "" : "s"}.` }),
        error: (message) => end({ ok: false, message: `Error: ${message}` }),
        notice: (message) => where(message),
      });
    });
  }

  /** Quiet runs of the card's configuration, one at a time, until resolved or the budget is spent. */
  async untilResolved() {
    if (this.running || this.session || this.el.dataset.state === "busy") return;
    const budget = Number(this.budget.value);
    if (!Number.isInteger(budget) || budget < 1 || budget > MAX_BUDGET) {
      fill(this.status, `Quiet runs at most: enter a whole number from 1 to ${MAX_BUDGET}.`);
      return;
    }
    const read = this.readParams();
    if (read.errors) {
      fill(this.status, `Error: ${read.errors.join("; ")}.`);
      return;
    }
    const params = { ...read.params, quiet: true };
    this.stopped = false;
    this.running = true;
    this.el.dataset.state = "busy";
    this.hold(true);
    this.cancel.hidden = false;
    this.onBusy(true);
    let evidence = await this.refresh();
    let ran = 0;
    let ending = "";
    while (!ending) {
      if (evidence.vsArticle && evidence.vsArticle.verdict !== "not_resolved") ending = ran ? `Resolved after ${ran} quiet run${ran === 1 ? "" : "s"}.` : "Resolved already: no more runs needed.";
      else if (ran >= budget) ending = `Budget spent: ${ran} quiet run${ran === 1 ? "" : "s"} added, not resolved yet.`;
      else if (this.stopped) ending = `Stopped after ${ran} quiet run${ran === 1 ? "" : "s"}.`;
      if (ending) break;
      const result = await this.oneQuietRun(params, ran + 1, budget);
      if (!result.ok) {
        ending = result.message;
        break;
      }
      ran += 1;
      this.config = configOf(this.info.step, result.result);
      evidence = await this.refresh();
    }
    fill(this.status, ending);
    this.el.dataset.state = "idle";
    this.running = false;
    this.hold(false);
    this.cancel.hidden = true;
    this.onBusy(false);
  }

  /** One quiet run through the queue: {ok, result} or {ok: false, message}. */
  oneQuietRun(params, n, budget) {
    return new Promise((resolve) => {
      let result = null;
      let ended = false;
      const end = (value) => {
        if (ended) return;
        ended = true;
        this.session = null;
        resolve(value);
      };
      this.session = startRun(this.info.step, params, {
        connecting: () => fill(this.status, `Quiet run ${n} of at most ${budget}: connecting…`),
        queued: (position) => fill(this.status, `Quiet run ${n} of at most ${budget}: waiting for place ${position} in the queue…`),
        started: () => fill(this.status, `Quiet run ${n} of at most ${budget}: running (not watched)…`),
        // The page's own record keeps it among the figures until the history
        // lists it, so the next run need not wait for the save.
        result: (msg) => {
          result = msg;
          record(msg);
          fill(this.status, `Quiet run ${n}: ${fmt.gib(msg.gib_per_s)} GiB/s.`);
          end({ ok: true, result });
        },
        cancelled: () => end({ ok: false, message: `Stopped after ${n - 1} quiet run${n === 2 ? "" : "s"}.` }),
        error: (message) => {
          if (!result) end({ ok: false, message: `Error: ${message}` });
        },
      });
    });
  }
}
