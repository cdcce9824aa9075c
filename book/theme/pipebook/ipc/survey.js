// Under a single IPC card, .pipebook-ipc-evidence: the mechanism's quiet runs (of the
// configuration last run quiet: bytes, bytes per call, counted or not) against the
// survey's rate as the runner judges them (each run paired with the rate, from 6 runs
// on; judge.js), drawn as svg.pipebook-ipc-evidence-interval; watched runs are left
// out and counted. button.pipebook-ipc-evidence-until adds quiet runs through the
// runner's queue in a sequential design (looks planned in advance, each judged by the
// runner) until a look resolves or input.pipebook-ipc-evidence-budget's runs are
// spent; data-state, data-verdict and data-quiet on that element, its status
// .pipebook-ipc-evidence-status. The page judges nothing itself.

import { CardLife } from "../cardlife.js";
import { fill, h } from "../dom.js";
import * as fmt from "../format.js";
import { designNote, endingSentence, figureSide, judge, pairedPlan, planSentence, runSequence } from "../judge.js";
import { showJudged } from "../runverdict.js";
import { judgedSentence } from "../verdict.js";
import { t } from "../i18n.js";
import { ipcConfigOf, newestQuietConfig, quietRuns } from "./history.js";

/** A part's `data-state` while its runs go ("busy") and otherwise ("idle"), by the phase of its life. */
export const BUSY_OR_IDLE = { idle: "idle", connecting: "busy", queued: "busy", running: "busy", done: "idle", cancelled: "idle", error: "idle" };

/** Most quiet runs one press of the card's "Run until resolved" may add. */
const MAX_SURVEY_BUDGET = 18;

/** The part's elements: the judgement's text and picture, the budget, Run until resolved and Stop, the status. */
function parts(m, surveyRate) {
  const id = `pipebook-ipc-${m.id}-evidence`;
  const p = {
    text: h("p.pipebook-ipc-evidence-text"),
    picture: h("div.pipebook-ipc-evidence-picture"),
    budget: h("input.pipebook-ipc-evidence-budget", { id: `${id}-budget`, type: "number", min: 1, max: MAX_SURVEY_BUDGET, value: 12, size: 4 }),
    until: h("button.pipebook-run-button.pipebook-ipc-evidence-until", { type: "button", "aria-label": t("Run until resolved: {id} against the survey", { id: m.id }) }, t("Run until resolved")),
    stop: h("button.pipebook-cancel-button", { type: "button", hidden: true }, t("Stop")),
    status: h("p.pipebook-status.pipebook-ipc-evidence-status", { role: "status", "aria-live": "polite" }),
  };
  p.el = h(
    "div.pipebook-ipc-evidence",
    { "data-state": "idle", hidden: surveyRate === null },
    p.text,
    p.picture,
    h("div.pipebook-lab-row", null, h("label.pipebook-field", { for: p.budget.id }, h("span", null, t("Quiet runs at most")), p.budget), p.until, p.stop),
    designNote(h),
    p.status,
  );
  return p;
}

/** The configuration a set of runs is of, as the sentence under the judgement says it. */
function sizesText(config) {
  if (!config) return "";
  return t(" ({bytes}{chunk}{counted})", { bytes: fmt.bytes(config.bytes), chunk: config.chunk ? t(" in calls of {chunk}", { chunk: fmt.bytes(config.chunk) }) : "", counted: config.counted ? "" : t(", kernel events not counted") });
}

/** How many watched or unlabelled runs were left out, said ("" when none). */
function leftText(left) {
  if (!left) return "";
  return left === 1 ? t(" {n} watched or unlabelled run is left out: watching costs a run.", { n: 1 }) : t(" {n} watched or unlabelled runs are left out: watching costs a run.", { n: left });
}

class SurveyEvidence {
  /** `read()` gives the card's parameters; `holdCard(busy)` keeps the card's own Run off while these go. */
  constructor(m, surveyRate, read, holdCard) {
    Object.assign(this, parts(m, surveyRate), { m, surveyRate, read });
    // The history's records and this card's own, which the history may not list yet.
    this.records = [];
    this.own = [];
    this.config = null;
    // The newest "Run until resolved"'s judgement, shown until another configuration runs.
    this.series = null;
    this.asked = 0;
    this.held = false;
    // Stop ends the sequence; the card's own Run waits while it goes.
    this.life = new CardLife({
      status: this.status,
      marks: [this.el],
      states: BUSY_OR_IDLE,
      run: [this.until],
      cancel: this.stop,
      cancelShows: "hidden",
      words: { queued: () => null, cancelling: () => null },
      onPhase: (phase, busy) => holdCard(busy),
    });
    this.until.addEventListener("click", () => this.runUntilResolved());
  }

  draw(answer) {
    const id = this.m.id;
    const words = (j) => judgedSentence(j, { a: t("Quiet runs of {id} here", { id }), verb: t("are"), b: t("the survey's rate"), unit: "quiet run", won: t("faster than the survey's machine"), lost: t("slower than the survey's machine") });
    showJudged(answer, { text: this.text, picture: this.picture, el: this.el, cls: "pipebook-ipc-evidence-interval", words, unit: "quiet run" });
  }

  render() {
    if (this.surveyRate === null) return;
    const all = [...this.records, ...this.own];
    const id = this.m.id;
    if (!this.config) this.config = newestQuietConfig(all, id);
    const runs = this.config ? quietRuns(all, this.config) : { quiet: [], left: 0 };
    this.el.dataset.quiet = String(runs.quiet.length);
    const mine = (this.asked += 1);
    if (this.series) return this.draw({ judgement: this.series });
    const [sizes, left] = [sizesText(this.config), leftText(runs.left)];
    if (!runs.quiet.length) {
      fill(this.text, t("No quiet run of {id}{sizes} yet: the runner judges quiet runs only.{left}", { id, sizes, left }));
      fill(this.picture);
      delete this.el.dataset.verdict;
      return;
    }
    judge({ paired: true, a: runs.quiet, b: figureSide(runs.quiet, this.surveyRate) }).then((answer) => {
      if (mine !== this.asked) return;
      this.draw(answer);
      if (answer.judgement) this.text.append(t(" Runs of {id}{sizes}.{left}", { id, sizes, left }));
    });
  }

  hold(busy) {
    this.held = busy;
    this.until.disabled = busy;
  }

  add(r) {
    if (r?.kind !== "ipc") return;
    this.own.push(r);
    // A quiet run names the configuration compared from now on.
    if (r.watched === false && r.checksum_ok === true) {
      const next = ipcConfigOf(r);
      if (JSON.stringify(next) !== JSON.stringify(this.config)) this.series = null;
      this.config = next;
    }
    if (this.el.dataset.state !== "busy") this.render();
  }

  /** Quiet run `n` of at most `most`, through the queue: {ok, mib} or {ok: false, message}. */
  async oneRun(params, n, most) {
    const where = (what) => this.life.say(t("Quiet run {n} of at most {most}: {what}", { n, most, what }));
    const got = await this.life.session({ type: "ipc", mechanism: this.m.id, params }, {
      connecting: () => where("connecting…"),
      queued: (position) => where(t("waiting for place {position} in the queue…", { position })),
      started: () => where(t("running (not watched)…")),
      result: (r) => this.add(r),
    });
    if (got.ended === "cancelled") return { ok: false, message: n === 2 ? t("Stopped after {n} quiet run.", { n: 1 }) : t("Stopped after {n} quiet runs.", { n: n - 1 }) };
    if (got.ended === "error") return { ok: false, message: `Error: ${got.message}` };
    const r = got.event;
    return r.watched === false && r.checksum_ok === true && r.mib_per_s > 0 ? { ok: true, mib: r.mib_per_s } : { ok: false, message: t("Error: a run came back without a verified figure.") };
  }

  async runUntilResolved() {
    if (this.held || this.el.dataset.state === "busy") return;
    const planned = await pairedPlan(Number(this.budget.value), MAX_SURVEY_BUDGET, t("Quiet runs at most"));
    if (!planned.plan) return fill(this.status, planned.message);
    const plan = planned.plan;
    const form = this.read();
    if (form.error) return fill(this.status, `Error: ${form.error}.`);
    const params = { ...form.params, quiet: true };
    this.life.begin("running", planSentence(plan, "quiet run"));
    // Only this sequence's runs count: earlier ones were already looked at.
    const runs = [];
    const done = await runSequence(plan, {
      count: () => runs.length,
      stopped: () => this.life.stopped,
      addOne: async () => {
        const one = await this.oneRun(params, runs.length + 1, plan.at.at(-1));
        if (one.ok) runs.push(one.mib);
        return one;
      },
      judgeAt: (look, looks) => judge({ paired: true, a: runs, b: figureSide(runs, this.surveyRate), look, looks }),
      onLook: (j) => {
        this.series = j;
        this.draw({ judgement: j });
      },
    });
    this.life.show("idle", endingSentence(done, "quiet run"));
  }
}

/**
 * A single card's quiet runs against the survey's rate (`surveyRate`, MiB/s;
 * null hides the part). Returns {el, show(records), add(record), hold(busy), busy()}.
 */
export function surveyEvidence(m, surveyRate, read, holdCard) {
  const part = new SurveyEvidence(m, surveyRate, read, holdCard);
  return {
    el: part.el,
    show: (history) => {
      part.records = Array.isArray(history) ? history : [];
      part.render();
    },
    add: (r) => part.add(r),
    hold: (busy) => part.hold(busy),
    busy: () => part.el.dataset.state === "busy",
  };
}
