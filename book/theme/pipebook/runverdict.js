// The run card's "how sure": the reader's quiet runs of the card's configuration
// against the article's figure, with its 95% interval once there are two, drawn
// against 1.0; "Run until resolved" adds quiet runs through the runner's queue,
// one at a time, until the interval clears 1.0 or the budget is spent; and what
// watching cost here, once there is a live and a quiet run of the same
// configuration. The figures come from verdict.js (runEvidence), the one
// definition of a comparison the page uses.
// Hooks for tests: .pipebook-evidence[data-state="idle"|"busy"] with data-verdict,
// .pipebook-evidence-text, svg.pipebook-evidence-interval, .pipebook-watching,
// input.pipebook-evidence-budget, button.pipebook-evidence-until, .pipebook-evidence-status.

import { fill, h } from "./dom.js";
import * as fmt from "./format.js";
import { intervalPicture } from "./interval.js";
import { startRun } from "./runner.js";
import { allResults, record } from "./store.js";
import { MIN_RUNS, articleSentence, runEvidence } from "./verdict.js";

/** Most quiet runs one press of "Run until resolved" may add. */
const MAX_BUDGET = 20;

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
    row.hidden = info.article === null;
    this.button.addEventListener("click", () => this.untilResolved());
    this.cancel.addEventListener("click", () => {
      this.stopped = true;
      this.session?.cancel();
    });
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
    return e;
  }

  /** Quiet runs of the card's configuration, one at a time, until resolved or the budget is spent. */
  async untilResolved() {
    if (this.session || this.el.dataset.state === "busy") return;
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
    this.el.dataset.state = "busy";
    this.button.disabled = true;
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
    this.button.disabled = false;
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
