// The "Run this step" card that replaces each <div class="pipebook-run">: mounts the
// static card (card.js) and the form (controls.js), folds the run's session events
// into a state (runlife.js) and shows it; cardlife.js holds the card busy and runs
// the session.
// Stable hooks for tests and styling: button.pipebook-run-button, button.pipebook-cancel-button,
// .pipebook-status[data-state], .pipebook-live-gibs, .pipebook-result-gibs,
// .pipebook-saved[data-saved="yes"|"no"] (whether the runner's history kept the result) and
// data-progress-count / data-state on the .pipebook-run root; runverdict.js's hooks
// for the quiet runs against the article and what watching cost.

import { statusLine } from "./announce.js";
import { START_HINT } from "./api.js";
import { cardFigures, cardHead } from "./card.js";
import { LiveChart } from "./chart.js";
import { runControls } from "./controls.js";
import { KernelCounts } from "./countsview.js";
import { EndStats, resultNotes } from "./details.js";
import { fill, h, offlineHint } from "./dom.js";
import * as fmt from "./format.js";
import { OccupancyChart } from "./occchart.js";
import { begin, buttonText, statusText, step } from "./runlife.js";
import { mountProfile } from "./profile.js";
import { CardLife } from "./cardlife.js";
import { RunEvidence, configOf } from "./runverdict.js";
import { bestSoFar, comparison, describe } from "./stepinfo.js";
import { allResults, record } from "./store.js";
import { runnerText, t } from "./i18n.js";

let nextId = 0;

export function mountWidget(root, { online, catalogEntry }) {
  const info = describe(root.dataset, catalogEntry);
  const id = `pipebook-${++nextId}`;
  root.classList.add("pipebook-enhanced");
  root.dataset.progressCount = "0";
  root.dataset.state = online ? "idle" : "offline";

  const figures = cardFigures(info);
  const card = h("div.pipebook-card", { role: "group", "aria-label": t("Run step: {title}", { title: info.title }) }, cardHead(info));
  root.append(card);

  if (!online) {
    figures.yoursBox.remove();
    card.append(
      figures.el,
      offlineHint(t("To measure this on your own machine"), START_HINT, t(" and press “Run this step”.")),
    );
    return;
  }
  new RunCard(root, card, info, figures, runControls(catalogEntry, id), id);
}

/** A mounted run card online: its parts, its life, and what each event of a run shows. */
class RunCard {
  constructor(root, card, info, figures, controls, id) {
    Object.assign(this, { root, card, info, figures, ...controls });
    this.status = statusLine({ state: "idle" });
    this.savedNote = h("p.pipebook-saved", { hidden: true, "aria-live": "polite" });
    this.chart = new LiveChart();
    this.chart.reset({ article: info.article, reference: info.reference, seconds: this.sec.value });
    this.occupancy = new OccupancyChart();
    this.compare = h("p.pipebook-compare");
    // The evidence's runs hold the card's own.
    this.evidence = new RunEvidence(info, id, () => this.readParams(), (busy) => this.life.hold(busy));
    this.stats = new EndStats();
    this.kernel = new KernelCounts();
    this.notes = h("ul.pipebook-notes");
    card.append(this.form, this.status, this.savedNote, h("div.pipebook-body", null, this.chart.el, figures.el), this.occupancy.el, this.compare, this.evidence.el, this.stats.el, this.kernel.el, this.notes);
    mountProfile(card, { step: info.step, readParams: this.readParams });
    this.stats.show(null);
    // The run's state (null between runs).
    this.run = null;
    this.life = new CardLife({
      status: this.status,
      marks: [root, this.status, card],
      run: [this.runButton],
      cancel: this.cancelButton,
      form: this.form,
      words: { cancelled: () => t("Cancelled. Nothing is left running.") },
      onPhase: (phase, busy) => this.showPhase(phase, busy),
    });
    this.life.show("idle", statusText("idle"));
    this.showBest();
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit();
    });
  }

  /** The card's own part of a phase: the button's words, the figures, the evidence's buttons. */
  showPhase(phase, busy) {
    const figures = this.figures;
    this.runButton.textContent = buttonText(phase);
    this.evidence.hold(busy || this.evidence.running);
    figures.live.hidden = phase !== "running";
    figures.yours.hidden = phase === "running";
    if (phase === "running") figures.label.textContent = t("So far");
    else if (busy || phase === "done" || phase === "error") figures.label.textContent = t("This machine");
  }

  /**
   * Before a run: the reader's best so far for this step (this browser and the
   * runner's history), and what to compare with.
   */
  async showBest() {
    const info = this.info;
    const results = await allResults();
    // A run started meanwhile owns the figures now.
    if (this.life.busy) return;
    const { best, text } = bestSoFar(info, results);
    this.figures.yours.textContent = best === null ? "—" : fmt.gib(best);
    this.figures.label.textContent = best === null ? t("This machine") : t("Your best so far");
    fill(this.compare, text);
    // The newest run of this step names the configuration its evidence is about.
    const newest = results.filter((r) => r.step === info.step).at(-1);
    this.evidence.config = configOf(info.step, newest);
    this.evidence.show(results);
  }

  showResult(result) {
    const { info, figures } = this;
    const corrupted = result.corrupted_bytes;
    if (info.kind === "experiment" && fmt.isNumber(corrupted)) {
      // The experiment is about damage, not speed: lead with the corrupted share.
      figures.label.textContent = t("Bytes corrupted");
      figures.yours.textContent = result.bytes > 0 ? `${((100 * corrupted) / result.bytes).toFixed(1)}%` : "—";
      this.root.dataset.corrupted = String(corrupted);
      figures.unit.textContent = "";
    } else {
      figures.yours.textContent = fmt.gib(result.gib_per_s);
    }
    this.chart.finish(Number(result.elapsed_ms) / 1000);
    this.occupancy.show(result);
    const text = comparison(info, result.gib_per_s, result.watched === true);
    fill(this.compare, text ? h("strong", null, text) : "");
    this.stats.show(result);
    this.kernel.show(result);
    record(result);
    this.evidence.refresh(configOf(info.step, result));
    const items = resultNotes(result, { budget: this.run.budget, warnings: this.run.warnings });
    fill(this.notes, items.map((item) => h("li", null, item)));
  }

  /** One event of the session: fold it into the state, then show what changed. */
  on(event) {
    const before = this.run;
    const run = (this.run = step(before, event));
    this.life.show(run.phase, run.status);
    switch (event.type) {
      case "started":
        fill(this.notes, run.warnings.map((w) => runnerText(h("li.pipebook-warning", null, w))));
        break;
      case "progress":
        this.root.dataset.progressCount = String(run.progressCount);
        this.figures.live.textContent = run.live;
        if (run.chartPoint) this.chart.push(...run.chartPoint);
        if (run.pipeBytes !== before.pipeBytes) this.occupancy.live(run.pipeBytes);
        break;
      case "result":
        this.showResult(run.result);
        break;
      case "notice":
        this.notes.append(runnerText(h("li.pipebook-warning", null, event.message)));
        break;
      case "saved":
        this.showSaved(run);
        break;
      case "cancelled":
        this.showBest();
        break;
      default:
        break;
    }
  }

  showSaved(run) {
    this.savedNote.hidden = !run.savedText;
    this.savedNote.textContent = run.savedText;
    if (run.saved !== null) this.savedNote.dataset.saved = run.saved ? "yes" : "no";
  }

  /** The form sent: a run of the step with the form's parameters, its figures cleared first. */
  submit() {
    if (this.life.busy) return;
    const read = this.readParams();
    if (read.errors) return this.life.show("error", t("Error: {errors}.", { errors: read.errors.join(t("; ")) }));
    const params = read.params;
    const run = (this.run = begin(params));
    this.root.dataset.progressCount = "0";
    this.figures.live.textContent = run.live;
    this.figures.yours.textContent = "—";
    fill(this.notes);
    this.savedNote.hidden = true;
    this.savedNote.textContent = "";
    delete this.savedNote.dataset.saved;
    this.stats.show(null);
    this.kernel.show(null);
    fill(this.compare, "");
    this.chart.reset({ article: this.info.article, reference: this.info.reference, seconds: run.budget });
    this.occupancy.reset({ quiet: run.quiet });
    this.card.classList.add("pipebook-used");
    this.life.show(run.phase, run.status);
    // The session's messages go to the reducer as the server sent them.
    this.life.start({ type: "run", step: this.info.step, params }, (event) => this.on(event));
  }
}
