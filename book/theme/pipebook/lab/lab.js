// A lab card, mounted on each <div class="pipebook-lab" data-lab data-def> the
// `{{#lab ID}}` directive leaves. The student enters a prediction, runs the lab's
// tasks (each a run, a sweep or an IPC run tagged with the lab, so the runner records the
// results), and sees the checks as the runner judged them on their own measurements
// (/api/labs sends each lab's `checks`; the page judges nothing). The runner's
// /api/labs is the one source of progress and verdicts: a reload or a restart
// shows the same lab. Hooks for tests: .pipebook-prediction-input, .pipebook-prediction-save,
// .pipebook-lab-bytes, button.pipebook-lab-run[data-task], li[data-check][data-status],
// .pipebook-lab-status, .pipebook-lab-student, a.pipebook-lab-export-json/-html,
// data-state on the root (offline, idle, busy).

import { START_HINT, labState, precheck } from "../api.js";
import { CardLife } from "../cardlife.js";
import { secondsInput } from "../controls.js";
import { fill, h, offlineHint } from "../dom.js";
import * as fmt from "../format.js";
import { parseSize } from "../sizes.js";
import { precheckSentence } from "../verdict.js";
import * as labs from "./labchecks.js";
import { runsTable } from "./labruns.js";
import { LAB_WORDS, labSay, resultFigure } from "./labtext.js";
import { checkItem, exportSection, offlineSections, predictionInput, runsRows, taskItem } from "./labview.js";

let nextId = 0;

export function mountLab(root, { online, catalogEntry }) {
  const lab = JSON.parse(root.dataset.def);
  const id = `pipebook-lab-${++nextId}`;
  root.classList.add("pipebook-enhanced");
  root.dataset.state = online ? "idle" : "offline";
  const card = h(
    "div.pipebook-card",
    { role: "group", "aria-label": labSay.ariaLabel(lab.title) },
    h("div.pipebook-card-head", null, h("span.pipebook-kind", null, LAB_WORDS.kind), h("p.pipebook-title", null, lab.title), h("p.pipebook-summary", null, lab.goal)),
  );
  root.append(card);
  const lc = new LabCard(root, card, lab, online);
  if (!online) {
    card.append(...offlineSections(lab, lc.checksList), offlineHint(LAB_WORDS.offline, START_HINT, LAB_WORDS.comeBack));
    lc.showChecks(null);
    return;
  }
  lc.mount(id, catalogEntry);
  lc.render();
  lc.refresh();
}

/** A lab card: its prediction, its tasks and their runs, its checks as the runner judged them. */
class LabCard {
  constructor(root, card, lab, online) {
    Object.assign(this, { root, card, lab, online });
    this.predictionBox = h("section.pipebook-lab-prediction", null, h("h2", null, LAB_WORDS.predict), h("p", null, lab.prediction.question));
    this.tasksList = h("ul.pipebook-lab-tasks");
    this.checksList = h("ul.pipebook-lab-checks");
    this.verdict = h("p.pipebook-lab-verdict");
    // Said once for the lab when the runner judged older runs again.
    this.rejudged = h("p.pipebook-lab-rejudged", { hidden: true });
    this.runsEl = h("table.pipebook-lab-runs");
    this.status = h("p.pipebook-status.pipebook-lab-status", { role: "status", "aria-live": "polite" });
    card.append(this.predictionBox);
    this.state = { prediction: null, measurements: [] };
    this.marginAsked = 0;
    this.buttons = new Map();
  }

  /** Each check as the runner judged it (`checks`, from /api/labs); without a runner, or before it answers, with no verdict. */
  showChecks(judged) {
    const { lab } = this;
    const outcomes = lab.checks.map((c) => labs.outcomeOf(judged, c, this.online));
    fill(this.checksList, lab.checks.map((c, i) => checkItem(c, outcomes[i])));
    this.root.dataset.checks = outcomes.map((o) => o.status).join(",");
    const note = labs.rejudgedNote(outcomes);
    fill(this.rejudged, note ?? "");
    this.rejudged.hidden = note === null;
  }

  /** The card online: the prediction, the time budget and byte cap of each run, the tasks, the export. */
  mount(id, catalogEntry) {
    const { lab, card } = this;
    this.input = predictionInput(lab, `${id}-prediction`);
    this.saveButton = h("button.pipebook-run-button.pipebook-prediction-save", { type: "button" }, LAB_WORDS.save);
    this.predicted = h("p.pipebook-lab-predicted");
    const unit = lab.prediction.unit ? labSay.predictionUnit(lab.prediction.unit) : LAB_WORDS.yourPrediction;
    this.predictionBox.append(h("div.pipebook-lab-row", null, h("label.pipebook-field", { for: this.input.id }, h("span", null, unit), this.input), this.saveButton), this.predicted);
    this.seconds = secondsInput(catalogEntry, id, lab.seconds).input;
    this.bytes = h("input.pipebook-lab-bytes", { id: `${id}-bytes`, type: "text", placeholder: LAB_WORDS.noCap, size: 8 });
    this.resetButton = h("button.pipebook-cancel-button.pipebook-lab-reset", { type: "button" }, LAB_WORDS.startOver);
    // Before any run: what would make this machine noisy, so an open check is
    // read as the machine's doing and the student knows what to change.
    const machineCheck = h("p.pipebook-precheck", null, LAB_WORDS.machineCheck);
    precheck().then((advice) => fill(machineCheck, precheckSentence(advice)));
    const field = (input, text) => h("label.pipebook-field", { for: input.id }, h("span", null, text), input);
    card.append(
      h(
        "section",
        null,
        h("h2", null, LAB_WORDS.run),
        // IPC runs move a number of bytes and take no time budget; latency runs
        // time a number of round trips and take neither.
        h("div.pipebook-lab-row", null, lab.tasks.some((task) => !task.mechanism && !task.latency) ? field(this.seconds, LAB_WORDS.secondsPerRun) : null, lab.tasks.some((task) => !task.latency) ? field(this.bytes, LAB_WORDS.byteCap) : null),
        machineCheck,
        this.tasksList,
        this.status,
      ),
      h("section", null, h("h2", null, LAB_WORDS.check), this.verdict, this.rejudged, this.checksList, this.runsEl),
      exportSection(id, this.resetButton),
    );
    this.lives();
    for (const task of lab.tasks) {
      const { item, button, count } = taskItem(task, () => !this.busy && this.runTask(task));
      this.buttons.set(task.id, { button, count });
      this.tasksList.append(item);
    }
    this.saveButton.addEventListener("click", () => this.savePrediction());
    this.resetButton.addEventListener("click", () => this.save({ type: "reset_lab", lab: lab.id }, LAB_WORDS.startsOver));
  }

  /** The tasks' runs (a Cancel after the status while one goes) and the saves of a prediction or a fresh start. */
  lives() {
    const cancel = h("button.pipebook-cancel-button", { type: "button" }, LAB_WORDS.cancel);
    this.life = new CardLife({ status: this.status, cancel, cancelShows: "attached", words: { queued: labSay.waitingPlace, cancelling: () => null } });
    this.saving = new CardLife({ status: this.status, words: { queued: () => null } });
  }

  get busy() {
    return this.life.busy || this.saving.busy;
  }

  render() {
    const { lab, state } = this;
    const hasPrediction = state.prediction !== null;
    const started = state.measurements.length > 0;
    if (hasPrediction) {
      const v = state.prediction.value;
      fill(this.predicted, LAB_WORDS.savedPrediction, h("strong", null, typeof v === "number" ? labs.round(v) : String(v)), lab.prediction.unit ? ` ${lab.prediction.unit}` : "", started ? LAB_WORDS.locked : ".");
      if (document.activeElement !== this.input) this.input.value = String(v);
    } else {
      fill(this.predicted, LAB_WORDS.saveFirst);
    }
    this.input.disabled = started || this.busy;
    this.saveButton.disabled = started || this.busy;
    this.resetButton.disabled = this.busy;
    for (const task of lab.tasks) {
      const { done, needed } = labs.progress(lab, state.measurements, task);
      const entry = this.buttons.get(task.id);
      entry.count.textContent = labSay.runsOf(Math.min(done, needed), needed);
      entry.button.textContent = done >= needed ? LAB_WORDS.runAgain : done ? LAB_WORDS.runRest : LAB_WORDS.runButton;
      entry.button.disabled = !hasPrediction || this.busy;
    }
    this.showVerdict(hasPrediction);
    this.showChecks(state.checks);
    fill(this.runsEl, ...runsRows(runsTable(state.measurements)));
    this.root.dataset.state = this.busy ? "busy" : "idle";
    this.root.dataset.measurements = String(state.measurements.length);
  }

  /** The prediction against the runs, and a choice's margin over the runner-up as the runner judges the two tasks' runs. */
  showVerdict(hasPrediction) {
    const { lab, state } = this;
    const v = hasPrediction ? labs.predictionVerdict(lab, state.prediction.value, state.measurements) : null;
    fill(this.verdict, v ?? "");
    const sides = v ? labs.choiceSides(lab, state.measurements, lab.prediction.answer) : null;
    if (!sides) return;
    const asked = (this.marginAsked += 1);
    labs.judgeMargin(sides).then((answer) => {
      if (asked === this.marginAsked && answer.judgement) this.verdict.append(` ${labs.marginSentence(sides, answer.judgement)}`);
    });
  }

  async refresh() {
    try {
      const all = await labState();
      this.state = all?.labs?.[this.lab.id] ?? { prediction: null, measurements: [] };
    } catch (err) {
      this.status.textContent = labSay.progressUnread(err.message);
    }
    this.render();
  }

  /**
   * The run parameters (every run a lab makes is quiet: its checks compare the
   * runs, and watching a run would cost it): {params} or {error}.
   */
  params() {
    const p = { seconds: Number(this.seconds.value), quiet: true };
    const cap = this.bytes.value.trim();
    if (cap) {
      const b = parseSize(cap);
      if (b === null || b < 1) return { error: labSay.notASize(cap) };
      p.bytes = b;
    }
    if (!(p.seconds > 0)) return { error: LAB_WORDS.secondsMissing };
    return { params: p };
  }

  /** The first message of one run of `task` (a latency configuration, a pipe step or an IPC mechanism). */
  runMessage(task, params, lab) {
    // A latency task is its configuration, on the runner's default CPUs.
    if (task.latency) return { type: "latency", mechanism: task.latency.mechanism, mode: task.latency.mode, size: task.latency.size, round_trips: task.latency.round_trips, lab };
    if (!task.mechanism) return { type: "run", step: task.step, params, lab };
    // An IPC run takes only the byte cap: the task's bytes otherwise.
    const bytes = params.bytes ?? task.bytes;
    return { type: "ipc", mechanism: task.mechanism, params: bytes === undefined ? { quiet: true } : { bytes, quiet: true }, lab };
  }

  /** What the status says as a task's session goes, and a run the runner could not record for the lab. */
  handlers(task) {
    const say = (text) => this.life.say(text);
    return {
      connecting: () => say(labSay.connectingFor(task.title)),
      started: () => say(labSay.running(task.latency ? `${task.latency.mechanism} (${task.latency.mode})` : (task.mechanism ?? task.step))),
      point: (msg) => say(labSay.point(msg.index, msg.of, fmt.bytes(msg.value), fmt.gib(msg.result.gib_per_s))),
      saved: (msg) => {
        if (msg.store !== "labs" || msg.ok) return;
        this.unsaved = labSay.notRecorded(msg.error?.message);
        this.root.dataset.unsaved = "yes";
        if (!this.busy) say(`${this.status.textContent} ${this.unsaved}`);
      },
      notice: say,
    };
  }

  async runTask(task) {
    const read = this.params();
    if (read.error) return this.life.say(`${labSay.error(read.error)}.`);
    const tag = { id: this.lab.id, task: task.id };
    // A run the runner could not record for the lab (a full or read-only disk), and why.
    this.unsaved = "";
    this.life.begin("connecting", labSay.connectingFor(task.title));
    const ending = task.sweep ? this.sweepTask(task, read.params, tag) : this.runsTask(task, read.params, tag);
    this.render();
    const text = await ending;
    this.life.enter("idle");
    await this.refresh();
    this.life.say(this.unsaved ? `${text} ${this.unsaved}` : text);
  }

  /** How a session that did not finish ended, in the status's words. */
  stopText(got) {
    return got.ended === "cancelled" ? LAB_WORDS.cancelled : labSay.error(got.message);
  }

  async sweepTask(task, params, lab) {
    const got = await this.life.session({ type: "sweep", step: task.step, param: task.sweep.param, values: task.sweep.values, repeats: task.runs, params, lab }, this.handlers(task));
    return got.ended === "done" ? labSay.sweepDone(task.title) : this.stopText(got);
  }

  /**
   * Plain runs (pipe, IPC or latency) one after another, until the task has its
   * runs, then up to the next planned look of a check the runner left open (at least one).
   */
  async runsTask(task, params, lab) {
    const { done, needed } = labs.progress(this.lab, this.state.measurements, task);
    let left = labs.runsToAdd(this.lab, this.state.checks, task.id, done, needed);
    for (;;) {
      const got = await this.life.session(this.runMessage(task, params, lab), this.handlers(task));
      if (got.ended !== "done") return this.stopText(got);
      left -= 1;
      if (left <= 0 || this.life.stopped) return left <= 0 ? labSay.done(task.title, resultFigure(got.event)) : LAB_WORDS.cancelled;
      this.life.say(labSay.runDone(resultFigure(got.event), left));
      const all = await labState().catch(() => null);
      this.state = all?.labs?.[this.lab.id] ?? this.state;
      this.render();
    }
  }

  savePrediction() {
    const read = labs.parsePrediction(this.lab, this.input.value);
    if (read.error) return this.life.say(labSay.yourPredictionError(read.error));
    this.save({ type: "predict", lab: this.lab.id, value: read.value }, LAB_WORDS.predictionSaved);
  }

  /** A prediction or a fresh start saved by the runner; `done` said once it is. */
  async save(message, done) {
    this.saving.begin("running");
    const ending = this.saving.session(message, {});
    this.render();
    const got = await ending;
    this.saving.show("idle");
    await this.refresh();
    if (got.ended === "done") this.life.say(got.event.ok ? done : labSay.notSaved(got.event.error?.message));
    else this.life.say(labSay.error(got.message));
  }
}
