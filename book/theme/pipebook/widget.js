// The "Run this step" card that replaces each <div class="pipebook-run">: mounts the
// static card (card.js) and the form (controls.js), folds the run's session events
// into a state (runlife.js) and shows it.
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
import { begin, buttonText, isBusy, statusText, step } from "./runlife.js";
import { mountProfile } from "./profile.js";
import { connectRun } from "./runner.js";
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

  const { form, sec, runButton, cancelButton, readParams } = runControls(catalogEntry, id);
  const status = statusLine({ state: "idle" });
  const savedNote = h("p.pipebook-saved", { hidden: true, "aria-live": "polite" });
  const chart = new LiveChart();
  chart.reset({ article: info.article, reference: info.reference, seconds: sec.value });
  const occupancy = new OccupancyChart();
  const compare = h("p.pipebook-compare");
  // Set below, once showPhase exists: the evidence's runs hold the card's own.
  let holdCard = () => {};
  const evidence = new RunEvidence(info, id, () => readParams(), (busy) => holdCard(busy));
  const stats = new EndStats();
  const kernel = new KernelCounts();
  const notes = h("ul.pipebook-notes");
  card.append(form, status, savedNote, h("div.pipebook-body", null, chart.el, figures.el), occupancy.el, compare, evidence.el, stats.el, kernel.el, notes);
  mountProfile(card, { step: info.step, readParams });

  stats.show(null);

  // The session of the run under way, and its state (null between runs).
  let session = null;
  let life = null;

  const showPhase = (phase, text) => {
    root.dataset.state = phase;
    status.dataset.state = phase;
    card.dataset.state = phase;
    status.textContent = text ?? statusText(phase);
    const busy = isBusy(phase);
    runButton.disabled = busy;
    cancelButton.disabled = !busy;
    for (const el of form.querySelectorAll("input, select")) el.disabled = busy;
    runButton.textContent = buttonText(phase);
    evidence.hold(busy || evidence.running);
    figures.live.hidden = phase !== "running";
    figures.yours.hidden = phase === "running";
    if (phase === "running") figures.label.textContent = t("So far");
    else if (busy || phase === "done" || phase === "error") figures.label.textContent = t("This machine");
  };
  showPhase("idle");
  holdCard = (busy) => {
    runButton.disabled = busy;
    for (const el of form.querySelectorAll("input, select")) el.disabled = busy;
  };

  // Before a run: the reader's best so far for this step (this browser and the runner's
  // history), and what to compare with.
  const showBest = async () => {
    const results = await allResults();
    // A run started meanwhile owns the figures now.
    if (session) return;
    const { best, text } = bestSoFar(info, results);
    figures.yours.textContent = best === null ? "—" : fmt.gib(best);
    figures.label.textContent = best === null ? t("This machine") : t("Your best so far");
    fill(compare, text);
    // The newest run of this step names the configuration its evidence is about.
    const newest = results.filter((r) => r.step === info.step).at(-1);
    evidence.config = configOf(info.step, newest);
    evidence.show(results);
  };
  showBest();

  const showResult = (result) => {
    const corrupted = result.corrupted_bytes;
    if (info.kind === "experiment" && fmt.isNumber(corrupted)) {
      // The experiment is about damage, not speed: lead with the corrupted share.
      figures.label.textContent = t("Bytes corrupted");
      figures.yours.textContent = result.bytes > 0 ? `${((100 * corrupted) / result.bytes).toFixed(1)}%` : "—";
      root.dataset.corrupted = String(corrupted);
      figures.unit.textContent = "";
    } else {
      figures.yours.textContent = fmt.gib(result.gib_per_s);
    }
    chart.finish(Number(result.elapsed_ms) / 1000);
    occupancy.show(result);
    const text = comparison(info, result.gib_per_s, result.watched === true);
    fill(compare, text ? h("strong", null, text) : "");
    stats.show(result);
    kernel.show(result);
    record(result);
    evidence.refresh(configOf(info.step, result));
    const items = resultNotes(result, { budget: life.budget, warnings: life.warnings });
    fill(notes, items.map((item) => h("li", null, item)));
  };

  // One event of the session: fold it into the state, then show what changed.
  const on = (event) => {
    const before = life;
    life = step(life, event);
    if (!isBusy(life.phase)) session = null;
    showPhase(life.phase, life.status);
    switch (event.type) {
      case "started":
        fill(notes, life.warnings.map((w) => runnerText(h("li.pipebook-warning", null, w))));
        break;
      case "progress":
        root.dataset.progressCount = String(life.progressCount);
        figures.live.textContent = life.live;
        if (life.chartPoint) chart.push(...life.chartPoint);
        if (life.pipeBytes !== before.pipeBytes) occupancy.live(life.pipeBytes);
        break;
      case "result":
        showResult(life.result);
        break;
      case "notice":
        notes.append(runnerText(h("li.pipebook-warning", null, event.message)));
        break;
      case "saved":
        savedNote.hidden = !life.savedText;
        savedNote.textContent = life.savedText;
        if (life.saved !== null) savedNote.dataset.saved = life.saved ? "yes" : "no";
        break;
      case "cancelled":
        showBest();
        break;
      default:
        break;
    }
  };

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (session) return;
    const read = readParams();
    if (read.errors) {
      showPhase("error", t("Error: {errors}.", { errors: read.errors.join(t("; ")) }));
      return;
    }
    const params = read.params;
    life = begin(params);
    root.dataset.progressCount = "0";
    figures.live.textContent = life.live;
    figures.yours.textContent = "—";
    fill(notes);
    savedNote.hidden = true;
    savedNote.textContent = "";
    delete savedNote.dataset.saved;
    stats.show(null);
    kernel.show(null);
    fill(compare, "");
    chart.reset({ article: info.article, reference: info.reference, seconds: life.budget });
    occupancy.reset({ quiet: life.quiet });
    card.classList.add("pipebook-used");
    showPhase(life.phase, life.status);
    // The session's messages go to the reducer as the server sent them.
    session = connectRun(info.step, params, on);
  });

  cancelButton.addEventListener("click", () => {
    if (session) {
      status.textContent = t("Cancelling…");
      session.cancel();
    }
  });
}
