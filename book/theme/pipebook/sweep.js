// The sweep card that replaces each <div class="pipebook-sweep">: one step run at
// several values of one parameter, each value a queued run on the server, the curve
// growing point by point. Hooks for tests: button.pipebook-sweep-button,
// button.pipebook-cancel-button, .pipebook-status[data-state], svg[data-points],
// table.pipebook-sweep-table, and data-state / data-points on the root.
// Every run is quiet (a sweep draws no live chart, and watching would cost
// each point). Once two values have runs, .pipebook-sweep-verdict states the
// runner's judgement of the best value against the worst (two sets of runs,
// from 4 a side), with its 95% interval (svg.pipebook-sweep-interval,
// data-verdict on the root), and button.pipebook-sweep-until runs the two in
// pairs, a run of each at a time, in a sequential design (the runner judges
// each planned look), until a look resolves or input.pipebook-sweep-budget's
// pairs are spent.

import { statusLine } from "./announce.js";
import { START_HINT } from "./api.js";
import { fill, h, offlineHint } from "./dom.js";
import * as fmt from "./format.js";
import { secondsInput } from "./controls.js";
import { spec, sweepDefaults } from "./params.js";
import { savedText } from "./runlife.js";
import { CardLife } from "./cardlife.js";
import { SweepChart, summarize } from "./sweepchart.js";
import { parseSizeList } from "./sizes.js";
import { designNote, endingSentence, isErrorText, judge, pairedPlan, planSentence, runSequence } from "./judge.js";
import { showJudged } from "./runverdict.js";
import { bestAgainstWorst, bestWorstSentence } from "./verdict.js";
import { runnerText, t, withNodes } from "./i18n.js";

/** Most pairs one "Run until resolved" of the best and the worst may run: three looks of six. */
const MAX_PAIRS = 18;

export function mountSweep(root, { online, catalogEntry, params }) {
  const step = root.dataset.step;
  const param = root.dataset.param;
  const s = spec(catalogEntry, param);
  const label = s ? s.label.toLowerCase() : param;
  root.classList.add("pipebook-enhanced");
  root.dataset.state = online ? "idle" : "offline";
  root.dataset.points = "0";
  const title = t("{title}: {u_gibs} against {parameter}", { u_gibs: "GiB/s", title: root.dataset.title || step, parameter: label });
  const card = h(
    "div.pipebook-card.pipebook-sweep-card",
    { role: "group", "aria-label": t("Sweep: {title}", { title }) },
    h(
      "div.pipebook-card-head",
      null,
      h("span.pipebook-kind", { dataset: { kind: "sweep" } }, t("Sweep")),
      h("span.pipebook-step-id", null, `${step} · ${param}`),
      h("p.pipebook-title", null, title),
      runnerText(h("p.pipebook-summary", null, s ? s.help : "")),
    ),
  );
  root.append(card);
  if (!online || !s) {
    card.append(
      offlineHint(
        t("To draw this curve on your own machine"),
        START_HINT,
        withNodes(t(", or run {command}."), { command: h("code", null, `pipebench sweep ${step} --${param.replace("_", "-")} 16KiB,64KiB,256KiB,1MiB`) }),
      ),
    );
    return;
  }
  new SweepCard(root, card, { step, param, label, title, s, catalogEntry, repeats: params.sweep.repeats });
}

function field(input, text, unit) {
  return h("label.pipebook-field", { for: input.id }, h("span", null, text), unit ? h("span.pipebook-input-unit", null, input, h("span", null, unit)) : input);
}

/** A sweep card online: its form, its curve and table, the best against the worst. */
class SweepCard {
  constructor(root, card, how) {
    Object.assign(this, { root, card, ...how });
    this.controls();
    this.status = statusLine({ state: "idle" });
    this.chart = new SweepChart(how.title);
    this.table = h("table.pipebook-sweep-table");
    this.command = h("p.pipebook-sweep-command");
    this.verdictText = h("p.pipebook-sweep-verdict");
    this.picture = h("div.pipebook-sweep-picture");
    this.budget = h("input.pipebook-sweep-budget", { id: `${this.id}-budget`, type: "number", min: 1, max: MAX_PAIRS, step: 1, value: 12 });
    this.untilButton = h("button.pipebook-cancel-button.pipebook-sweep-until", { type: "button" }, t("Run until resolved"));
    this.untilRow = h("div", { hidden: true }, h("div.pipebook-lab-row", null, field(this.budget, t("Pairs of runs at most")), this.untilButton), designNote(h));
    card.append(this.form, this.status, this.chart.el, this.table, this.verdictText, this.picture, this.untilRow, this.command);
    this.life = new CardLife({
      status: this.status,
      marks: [root, this.status],
      // A queued run is said as part of the sweep's running.
      states: { queued: "running" },
      run: [this.runButton, this.untilButton],
      cancel: this.cancelButton,
      form: this.form,
    });
    this.life.show("idle", t("Ready: each value runs as its own queued run, one after another."));
    this.runs = new Map();
    this.swept = [];
    // The best value against the worst, as the runner judges them; after a
    // "Run until resolved", that sequence's judgement of its pairs instead.
    this.judged = null;
    this.series = null;
    this.asked = 0;
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.sweep();
    });
    this.untilButton.addEventListener("click", () => this.untilResolved());
  }

  /** The form: the values, seconds and runs per value, Run and Cancel. */
  controls() {
    const { s, param, label, catalogEntry } = this;
    // The runner's bounds on runs per value (/api/params).
    const REPEATS = this.repeats;
    const id = (this.id = `pipebook-sweep-${this.step}-${param}`);
    this.values = h("input.pipebook-sweep-values", {
      id: `${id}-values`,
      type: "text",
      value: sweepDefaults(s, param).map(fmt.sizeArg).join(","),
      spellcheck: "false",
      size: 28,
    });
    // One second per point: a sweep has many points.
    const { sec, input: seconds } = secondsInput(catalogEntry, id, "sweep");
    this.sec = sec;
    this.seconds = seconds;
    this.repeatsInput = h("input.pipebook-sweep-repeats", { id: `${id}-repeats`, type: "number", min: REPEATS.min, max: REPEATS.max, step: 1, value: REPEATS.start });
    this.runButton = h("button.pipebook-sweep-button", { type: "submit" }, t("Run the sweep"));
    this.cancelButton = h("button.pipebook-cancel-button", { type: "button", disabled: true }, t("Cancel"));
    this.form = h(
      "form.pipebook-controls",
      { novalidate: true },
      field(this.values, t("Values of {parameter}", { parameter: label })),
      field(seconds, t("Seconds per run"), "s"),
      field(this.repeatsInput, t("Runs per value")),
      h("div.pipebook-buttons", null, this.runButton, this.cancelButton),
    );
  }

  name(v) {
    return `${this.label} ${fmt.bytes(v)}`;
  }

  shown(answer) {
    showJudged(answer, { text: this.verdictText, picture: this.picture, el: this.root, cls: "pipebook-sweep-interval", words: (j) => bestWorstSentence(j, this.series?.bw ?? this.judged, (v) => this.name(v)) });
  }

  judgeBestWorst() {
    const mine = (this.asked += 1);
    if (this.series) return;
    this.judged = bestAgainstWorst(this.runs);
    if (!this.judged) {
      fill(this.verdictText);
      fill(this.picture);
      delete this.root.dataset.verdict;
      return;
    }
    judge({ paired: false, a: this.judged.bestRates, b: this.judged.worstRates }).then((answer) => {
      if (mine === this.asked) this.shown(answer);
    });
  }

  /** A run's figure at `value`, and the curve, the table and the verdict again. */
  add(value, rate) {
    if (!this.runs.has(value)) this.runs.set(value, []);
    this.runs.get(value).push(rate);
    this.redraw();
  }

  redraw() {
    this.judgeBestWorst();
    const points = summarize(this.runs);
    this.chart.draw(points, this.swept);
    this.root.dataset.points = String(points.length);
    fill(
      this.table,
      h("tr", null, h("th", null, this.label), h("th", null, t("runs")), h("th", null, t("median {u_gibs}", { u_gibs: "GiB/s" })), h("th", null, t("min–max"))),
      points.map((p) => h("tr", null, h("td", null, fmt.bytes(p.value)), h("td", null, String(p.runs)), h("td", null, fmt.gib(p.median)), h("td", null, `${fmt.gib(p.min)}–${fmt.gib(p.max)}`))),
    );
  }

  /** The form as the sweep reads it: {values, secs, reps} or {error}. */
  read() {
    const { sec } = this;
    const REPEATS = this.repeats;
    const parsed = parseSizeList(this.values.value);
    if (parsed.error) return { error: t("Error: {message}", { message: parsed.error }) };
    const secs = Number(this.seconds.value);
    const reps = Math.round(Number(this.repeatsInput.value));
    if (!(secs >= sec.min && secs <= sec.max)) return { error: t("Error: seconds per run must be {min} to {max}.", { min: sec.min, max: sec.max }) };
    if (!(reps >= REPEATS.min && reps <= REPEATS.max)) return { error: t("Error: runs per value must be {min} to {max}.", { min: REPEATS.min, max: REPEATS.max }) };
    return { values: parsed.values, secs, reps };
  }

  /** The sweep: every value, `reps` quiet runs each, one queued run at a time. */
  sweep() {
    if (this.life.busy) return;
    const read = this.read();
    if (read.error) return this.life.show("error", read.error);
    const { step, param } = this;
    const { secs, reps } = read;
    this.swept = read.values;
    this.untilRow.hidden = true;
    this.series = null;
    this.runs = new Map(this.swept.map((v) => [v, []]));
    this.redraw();
    const total = this.swept.length * reps;
    let done = 0;
    // The first point the runner's history could not keep, and why.
    let unsaved = "";
    fill(this.command, t("Same on the command line: "), h("code", null, `pipebench sweep ${step} --${param.replace("_", "-")} ${this.swept.map(fmt.sizeArg).join(",")} --seconds ${secs} --repeats ${reps}`));
    this.life.start({ type: "sweep", step, param, values: this.swept, repeats: reps, params: { seconds: secs, quiet: true } }, {
      started: (msg) => this.life.say(t("Running {parameter} = {value} ({n} of {total})…", { parameter: param, value: fmt.bytes(Number(msg.params?.[param] ?? NaN)), n: done + 1, total })),
      point: (msg) => {
        done += 1;
        this.add(Number(msg.value), Number(msg.result?.gib_per_s));
      },
      saved: (msg) => {
        if (msg.store === "history" && !msg.ok && !unsaved) unsaved = savedText(msg);
      },
      done: () => {
        this.untilRow.hidden = !this.judged;
        this.life.say(unsaved ? `${t("Done: {n} runs (quiet).", { n: done })} ${unsaved}` : t("Done: {n} runs (quiet).", { n: done }));
      },
    }, { cancelled: () => t("Cancelled after {n} of {total} runs. Nothing is left running.", { n: done, total }) });
  }

  /**
   * The best and the worst value again, a run of each at a time (a sweep of the
   * two, in the runner's shuffled order: each round is a pair), in a sequential
   * design: the runner judges the pairs at each planned look.
   */
  async untilResolved() {
    if (this.life.busy || !this.judged) return;
    const planned = await pairedPlan(Math.round(Number(this.budget.value)), MAX_PAIRS, t("Pairs of runs at most"));
    if (!planned.plan) return this.life.show("error", isErrorText(planned.message) ? planned.message : t("Error: {message}", { message: planned.message }));
    const plan = planned.plan;
    const bw = { best: this.judged.best, worst: this.judged.worst };
    const pairs = { best: [], worst: [] };
    // From now on the card shows this sequence's looks, not the sweep's sets.
    this.series = { bw };
    this.life.begin();
    const done = await runSequence(plan, {
      count: () => pairs.best.length,
      stopped: () => this.life.stopped,
      addOne: () => this.onePair(plan, bw, pairs),
      judgeAt: (look, looks) => judge({ paired: true, a: pairs.best, b: pairs.worst, look, looks }),
      onLook: (j) => {
        this.series = { bw, judgement: j };
        this.asked += 1;
        this.shown({ judgement: j });
      },
    });
    const text = endingSentence(done, "pair");
    this.life.show(done.ending === "error" && isErrorText(text) ? "error" : done.ending === "error" ? "cancelled" : "done", text);
  }

  /** One more pair of the best and the worst: {ok} or {ok: false, message}. */
  async onePair(plan, bw, pairs) {
    const got = new Map();
    const most = plan.at.at(-1);
    this.life.show("connecting", `${planSentence(plan, "pair")} ${t("Pair {n} of at most {most}…", { n: pairs.best.length + 1, most })}`);
    // A sweep's values go up (the runner refuses others), whichever won.
    const values = [bw.best, bw.worst].sort((a, b) => a - b);
    const outcome = await this.life.session({ type: "sweep", step: this.step, param: this.param, values, repeats: 1, params: { seconds: Number(this.seconds.value), quiet: true } }, {
      started: () => this.life.say(t("More runs of the best and the worst: pair {n} of at most {most} (quiet)…", { n: pairs.best.length + 1, most })),
      point: (msg) => {
        const value = Number(msg.value);
        const rate = Number(msg.result?.gib_per_s);
        got.set(value, rate);
        this.add(value, rate);
      },
    });
    if (outcome.ended === "cancelled") {
      this.life.stopped = true;
      const n = pairs.best.length;
      return { ok: false, message: n === 1 ? t("Stopped after {n} pair. Nothing is left running.", { n: 1 }) : t("Stopped after {n} pairs. Nothing is left running.", { n }) };
    }
    if (outcome.ended === "error") return { ok: false, message: t("Error: {message}", { message: outcome.message }) };
    if (!got.has(bw.best) || !got.has(bw.worst)) return { ok: false, message: t("Error: a pair came back without both values.") };
    pairs.best.push(got.get(bw.best));
    pairs.worst.push(got.get(bw.worst));
    return { ok: true };
  }
}
