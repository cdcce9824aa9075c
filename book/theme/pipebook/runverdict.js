// The run card's "how sure": the reader's quiet runs of the card's configuration
// against the article's figure, as the runner judges them (judge.js: each run
// paired with the figure, the signed-rank interval, from 6 runs on), drawn
// against 1.0; "Run until resolved" adds quiet runs through the runner's queue
// in a sequential design (looks planned in advance, judged by the runner at
// each look's level) and stops at the first look that resolves or the last;
// and what watching cost here, once there is a live and a quiet run of the same
// configuration. On every step but the baseline, the step against the baseline
// (write-read; a tuned variant against its own step, the gain its search
// measured, since the server runs a tuned side at its search's sizes): the
// runner's judgement of their quiet runs as two sets, and its own "Run until
// resolved", one compare job (quiet pairs, A B B A) whose budget the runner
// spends in its own sequential design. The page judges nothing itself.
// Hooks for tests: .pipebook-evidence[data-state="idle"|"busy"] with data-verdict,
// .pipebook-evidence-text, svg.pipebook-evidence-interval, .pipebook-watching,
// input.pipebook-evidence-budget, button.pipebook-evidence-until, .pipebook-evidence-status;
// .pipebook-baseline[data-state="idle"|"busy"] with data-verdict, .pipebook-baseline-text,
// svg.pipebook-baseline-interval, input.pipebook-baseline-budget,
// button.pipebook-baseline-until, .pipebook-baseline-status.

import { fill, h } from "./dom.js";
import * as fmt from "./format.js";
import { intervalPicture } from "./interval.js";
import { OFFLINE_SENTENCE, designNote, endingSentence, fewestAt, figureSide, judge, pairedPlan, planSentence, plural, runSequence } from "./judge.js";
import { CardLife } from "./cardlife.js";
import { allResults, record } from "./store.js";
import { BASELINE, articleSentence, baseOf, baselineEvidence, baselineSentence, runEvidence } from "./verdict.js";
import { runnerText, t } from "./i18n.js";

/** Most quiet runs one press of "Run until resolved" may add. */
const MAX_BUDGET = 20;

/** Most pairs one press of the baseline's "Run until resolved" may run (the runner takes 20 a request). */
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

/**
 * Shows the runner's answer `asked` ({judgement} | {offline} | {error}) in
 * `text` and `picture` (the interval drawn with class `cls`), worded by
 * `words(judgement)`, and sets `el`'s data-verdict.
 */
export function showJudged(asked, { text, picture, el, cls, words, unit }) {
  const j = asked.judgement;
  if (!j) {
    fill(text, asked.offline ? OFFLINE_SENTENCE : [t("The runner could not judge these runs: "), runnerText(h("span", null, asked.error))]);
    fill(picture);
    delete el.dataset.verdict;
    return null;
  }
  const sentence = words(j);
  fill(text, sentence);
  fill(picture, intervalPicture(j, sentence, cls, unit));
  el.dataset.verdict = j.verdict;
  return j;
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
    // The newest "Run until resolved" and its judgement: shown until the card's configuration changes.
    this.series = null;
    // Each show asks the runner; only the newest answer is drawn.
    this.asked = 0;
    this.text = h("p.pipebook-evidence-text");
    this.picture = h("div.pipebook-evidence-picture");
    this.watching = h("p.pipebook-watching", { hidden: true });
    this.budget = h("input.pipebook-evidence-budget", { id: `${id}-until-budget`, type: "number", min: 1, max: MAX_BUDGET, value: 12, size: 4 });
    this.button = h("button.pipebook-run-button.pipebook-evidence-until", { type: "button" }, t("Run until resolved"));
    this.cancel = h("button.pipebook-cancel-button", { type: "button", hidden: true }, t("Stop"));
    this.status = h("p.pipebook-status.pipebook-evidence-status", { role: "status", "aria-live": "polite" });
    const row = h(
      "div.pipebook-lab-row",
      null,
      h("label.pipebook-field", { for: this.budget.id }, h("span", null, t("Quiet runs at most")), this.budget),
      this.button,
      this.cancel,
    );
    this.el = h("div.pipebook-evidence", { "data-state": "idle" }, this.text, this.picture, row, designNote(h), this.status, this.watching);
    this.row = row;
    this.running = false;
    // A tuned variant is set against its own step (the gain its search measured),
    // every other step against the baseline.
    this.baseStep = baseOf(info.step);
    this.base = info.step === BASELINE ? null : this.baselinePart(id);
    if (this.base) this.el.append(this.base.el);
    row.hidden = info.article === null;
    this.button.addEventListener("click", () => this.untilResolved());
    this.life = this.partLife(this);
  }

  /** The life of one part's "Run until resolved" (this or the baseline's): its Stop, its state, the card held meanwhile. */
  partLife(part) {
    return new CardLife({
      status: part.status,
      marks: [part.el],
      states: { connecting: "busy", queued: "busy", running: "busy", done: "idle", cancelled: "idle", error: "idle" },
      cancel: part.cancel,
      cancelShows: "hidden",
      words: { cancelling: () => null },
      onPhase: (phase, busy) => {
        this.running = busy;
        this.hold(busy);
        this.onBusy(busy);
      },
    });
  }

  /** The step against the baseline: its elements and their wiring. */
  baselinePart(id) {
    const part = {
      config: { step: this.baseStep },
      // Until a head-to-head names it, the baseline is as its newest quiet run ran.
      learned: false,
      // The newest head-to-head's verdict: shown until the card's configuration changes.
      verdict: null,
      asked: 0,
      text: h("p.pipebook-baseline-text"),
      picture: h("div.pipebook-baseline-picture"),
      budget: h("input.pipebook-baseline-budget", { id: `${id}-baseline-budget`, type: "number", min: 1, max: MAX_BASE_PAIRS, value: 12, size: 4 }),
      button: h("button.pipebook-run-button.pipebook-baseline-until", { type: "button", "aria-label": t("Run until resolved against {step}", { step: this.baseStep }) }, t("Run until resolved")),
      cancel: h("button.pipebook-cancel-button", { type: "button", hidden: true }, t("Stop")),
      status: h("p.pipebook-status.pipebook-baseline-status", { role: "status", "aria-live": "polite" }),
    };
    const row = h(
      "div.pipebook-lab-row",
      null,
      h("label.pipebook-field", { for: part.budget.id }, h("span", null, t("Pairs against {step} at most", { step: this.baseStep })), part.budget),
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
          ? t("Against the baseline: this step's quiet runs and {baseline}'s, each at its own sizes, as the article compares its steps.", { baseline: BASELINE })
          : t("Against its own step: this variant's quiet runs (at the sizes its search found) and {step}'s (at the step's own), the gain the search measured, head to head.", { step: this.baseStep }),
      ),
      part.text,
      part.picture,
      row,
      part.status,
    );
    part.button.addEventListener("click", () => this.untilBaseline());
    part.life = this.partLife(part);
    return part;
  }

  /** Holds both "Run until resolved" buttons while any run of the card goes. */
  hold(busy) {
    this.button.disabled = busy;
    if (this.base) this.base.button.disabled = busy;
  }

  /** Shows what the runs of `config` say now (from the history and this page's runs). */
  async refresh(config = this.config) {
    if (!sameConfig(config, this.config)) {
      this.series = null;
      if (this.base) this.base.verdict = null;
    }
    this.config = config;
    const results = await allResults();
    return this.show(results);
  }

  /**
   * Shows what `results` (slimmed) say of this card's configuration: the
   * runner's judgement of its quiet runs against the article (or the newest
   * sequence's); returns the evidence (the judgements follow when the runner answers).
   */
  show(results) {
    const e = runEvidence(results, this.config);
    this.watching.hidden = !e.watching;
    fill(this.watching, e.watching ? e.watching.sentence : "");
    if (this.base) e.baseline = this.showBaseline(results);
    if (this.info.article === null) {
      fill(this.text);
      return e;
    }
    const shown = (this.asked += 1);
    const draw = (asked) => {
      if (shown !== this.asked) return;
      showJudged(asked, { text: this.text, picture: this.picture, el: this.el, cls: "pipebook-evidence-interval", words: articleSentence, unit: "quiet run" });
    };
    if (this.series) draw({ judgement: this.series });
    else if (!e.quiet.length) {
      fill(this.text, t("No quiet run of this configuration yet: the runner judges quiet runs only (watching a run costs it)."));
      fill(this.picture);
      delete this.el.dataset.verdict;
    } else judge({ paired: true, a: e.quiet, b: figureSide(e.quiet, this.info.article) }).then(draw);
    return e;
  }

  /** Shows the step against the baseline from `results` (the runner's judgement of the two sets); returns their figures. */
  showBaseline(results) {
    const part = this.base;
    if (!part.learned) {
      const newest = results.filter((r) => r.step === this.baseStep && r.watched === false).at(-1);
      part.config = configOf(this.baseStep, newest);
    }
    const b = baselineEvidence(results, this.config, part.config);
    const shown = (part.asked += 1);
    const words = (j) => baselineSentence(j, b, this.info.step, part.config, this.baseStep);
    const draw = (asked) => {
      if (shown !== part.asked) return;
      showJudged(asked, { text: part.text, picture: part.picture, el: part.el, cls: "pipebook-baseline-interval", words, unit: "quiet run" });
    };
    if (part.verdict) draw({ judgement: part.verdict });
    else if (!b.mine.length || !b.base.length) {
      fill(part.text, baselineSentence(null, b, this.info.step, part.config, this.baseStep, t("With quiet runs of each, the runner judges how they compare (quiet runs only: watching a run costs it).")));
      fill(part.picture);
      delete part.el.dataset.verdict;
    } else judge({ paired: false, a: b.mine, b: b.base }).then(draw);
    return b;
  }

  /**
   * The step and the baseline head to head: one compare job of quiet pairs
   * through the runner's queue, its budget the most pairs in all. The runner
   * adds pairs in its sequential design and sends the verdict; only the run's
   * length (seconds, bytes) goes from the card's form: each step runs at its own sizes.
   */
  async untilBaseline() {
    const part = this.base;
    if (this.running) return;
    const budget = Number(part.budget.value);
    // The runner's first look: the fewest pairs that can resolve at 95%.
    this.running = true;
    const fewest = await fewestAt(true, 1);
    this.running = false;
    if (fewest.min === undefined) {
      fill(part.status, fewest.offline ? OFFLINE_SENTENCE : `Error: ${fewest.error}`);
      return;
    }
    if (!Number.isInteger(budget) || budget < fewest.min || budget > MAX_BASE_PAIRS) {
      fill(part.status, t("Pairs against {step} at most: enter a whole number from {min} to {max}.", { step: this.baseStep, min: fewest.min, max: MAX_BASE_PAIRS }));
      return;
    }
    const read = this.readParams();
    if (read.errors) {
      fill(part.status, `Error: ${read.errors.join("; ")}.`);
      return;
    }
    const params = {};
    for (const name of ["seconds", "bytes"]) if (read.params[name] !== undefined) params[name] = read.params[name];
    const step = this.info.step;
    const where = (text) => fill(part.status, t("Head to head, at most {pairs}: {text}", { pairs: plural(budget, "pair"), text }));
    // The step's new quiet runs count on the card's other part too.
    const end = () => this.refresh();
    part.life.start({ type: "compare", a: step, b: this.baseStep, pairs: fewest.min, budget, params }, {
      connecting: () => where("connecting…"),
      queued: (position) => where(t("waiting for place {position} in the queue…", { position })),
      leg: (msg) => {
        // The page's own record keeps it among the figures until the history lists it.
        record(msg.result);
        if (msg.side === "a") this.config = configOf(step, msg.result);
        else {
          part.config = configOf(this.baseStep, msg.result);
          part.learned = true;
        }
        where(t("run {index} of {of}, {step} (quiet): {gib} {u_gibs}.", { u_gibs: "GiB/s", index: msg.index, of: msg.of, step: msg.side === "a" ? step : this.baseStep, gib: fmt.gib(msg.result.gib_per_s) }));
      },
      verdict: (msg) => {
        this.showBaselineVerdict(msg);
        const looked = msg.design === "sequential" ? t(" at look {look} of {looks}", { look: msg.look, looks: msg.looks }) : "";
        part.life.say(msg.verdict === "faster" || msg.verdict === "slower" ? t("Resolved{looked}, after {pairs} of quiet runs.", { looked, pairs: plural(msg.pairs, "pair") }) : t("Budget spent: {pairs} of quiet runs{looked}, not resolved.", { pairs: plural(msg.pairs, "pair"), looked }));
        end();
      },
      cancelled: end,
      error: end,
      notice: (message) => where(message),
    }, { cancelled: () => t("Stopped: the runner kept no verdict of the unfinished pairs.") });
  }

  /** The runner's verdict over the baseline's pairs: shown until the card's configuration changes. */
  showBaselineVerdict(msg) {
    const part = this.base;
    part.verdict = { ...msg, n_a: msg.n_a ?? msg.pairs, n_b: msg.n_b ?? msg.pairs, method: msg.method ?? "signed_rank" };
    part.asked += 1;
    showJudged({ judgement: part.verdict }, { text: part.text, picture: part.picture, el: part.el, cls: "pipebook-baseline-interval", words: (j) => baselineSentence(j, null, this.info.step, part.config, this.baseStep) });
  }

  /**
   * Quiet runs of the card's configuration through the queue, in a sequential
   * design: looks after every 6 runs (the fewest that can resolve against a
   * figure), as many as the budget holds (at most 3), each judged by the runner
   * at that look's level. Only this sequence's runs count: earlier ones were
   * already looked at.
   */
  async untilResolved() {
    if (this.running || this.life.busy) return;
    this.running = true;
    const planned = await pairedPlan(Number(this.budget.value), MAX_BUDGET, t("Quiet runs at most"));
    this.running = false;
    if (!planned.plan) {
      fill(this.status, planned.message);
      return;
    }
    const plan = planned.plan;
    const read = this.readParams();
    if (read.errors) {
      fill(this.status, `Error: ${read.errors.join("; ")}.`);
      return;
    }
    const params = { ...read.params, quiet: true };
    this.life.begin("running", planSentence(plan, "quiet run"));
    const runs = [];
    const article = this.info.article;
    const done = await runSequence(plan, {
      count: () => runs.length,
      stopped: () => this.life.stopped,
      addOne: async () => {
        const one = await this.oneQuietRun(params, runs.length + 1, plan.at.at(-1));
        if (one.ok) {
          runs.push(one.result.gib_per_s);
          this.config = configOf(this.info.step, one.result);
        }
        return one;
      },
      judgeAt: (look, looks) => judge({ paired: true, a: runs, b: figureSide(runs, article), look, looks }),
      onLook: (j) => {
        this.series = j;
        this.asked += 1;
        showJudged({ judgement: j }, { text: this.text, picture: this.picture, el: this.el, cls: "pipebook-evidence-interval", words: articleSentence, unit: "quiet run" });
      },
    });
    // What watching cost, now with these quiet runs too (the sequence's judgement
    // stays shown), said before the status tells how the sequence ended.
    await this.refresh();
    this.life.show("idle", endingSentence(done, "quiet run"));
  }

  /** One quiet run through the queue: {ok, result} or {ok: false, message}. */
  async oneQuietRun(params, n, budget) {
    const got = await this.life.session({ type: "run", step: this.info.step, params }, {
      connecting: () => fill(this.status, t("Quiet run {n} of at most {budget}: connecting…", { n, budget })),
      queued: (position) => fill(this.status, t("Quiet run {n} of at most {budget}: waiting for place {position} in the queue…", { n, budget, position })),
      started: () => fill(this.status, t("Quiet run {n} of at most {budget}: running (not watched)…", { n, budget })),
      // The page's own record keeps it among the figures until the history
      // lists it, so the next run need not wait for the save.
      result: (msg) => {
        record(msg);
        fill(this.status, t("Quiet run {n}: {gib} {u_gibs}.", { u_gibs: "GiB/s", n, gib: fmt.gib(msg.gib_per_s) }));
      },
    });
    if (got.ended === "done") return { ok: true, result: got.event };
    if (got.ended === "cancelled") return { ok: false, message: n === 2 ? t("Stopped after {n} quiet run.", { n: n - 1 }) : t("Stopped after {n} quiet runs.", { n: n - 1 }) };
    return { ok: false, message: t("Error: {message}", { message: got.message }) };
  }
}

/** Whether two configurations are the same (step, sizes, traced). */
function sameConfig(p, q) {
  return p.step === q.step && p.bytes_per_call === q.bytes_per_call && p.pipe_capacity === q.pipe_capacity && Boolean(p.traced) === Boolean(q.traced);
}
