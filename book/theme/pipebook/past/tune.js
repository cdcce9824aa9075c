// The tuning card: <div class="pipebook-tune" data-step=ID> searches bytes per call ×
// pipe capacity for a step and draws the search as a heat map while it runs (with a
// table for screen readers, heat.js), then offers the best configuration as a run
// card of its own (tuned-STEP).
// Hooks for tests: button.pipebook-tune-button, svg.pipebook-tune-heat
// (rect.pipebook-tune-cell[data-median]), table.pipebook-tune-table,
// .pipebook-tune-variant .pipebook-run, p.pipebook-tune-kept; on the root data-state,
// data-trials, data-best and data-kept ("yes" or why not, the runner's kind).

import { tunedVariants } from "../api.js";
import { fill, h } from "../dom.js";
import * as fmt from "../format.js";
import { mountWidget } from "../widget.js";
import { runnerText, t } from "../i18n.js";
import { beginSearch, describeTune, foldTrial, keptNote, pagesLabel, variantEntry } from "./figures.js";
import { drawMaps, searchTable } from "./heat.js";
import { buttons, cardControls, frame } from "./parts.js";

function showVariant(box, base, variant) {
  const entry = variantEntry(base, variant);
  const el = h("div.pipebook-run", { dataset: { step: variant.id, title: entry.title, summary: entry.summary, kind: "variant" } });
  fill(box, h("p", null, t("Run the best configuration again as a step of its own:")), el);
  mountWidget(el, { online: true, catalogEntry: entry });
}

/** The search's form: its budget in seconds (the runner's default and bounds, written by the {{#tune}} directive). */
function tuneForm(root, step) {
  const budget = h("input.pipebook-tune-budget", { id: `pipebook-tune-${step}-budget`, type: "number", value: root.dataset.budget, min: root.dataset.budgetMin, max: root.dataset.budgetMax, step: 1, inputmode: "decimal" });
  const { runButton, cancelButton } = buttons("pipebook-tune-button", t("Search"));
  const form = h("form.pipebook-controls", { novalidate: true }, h("label.pipebook-field", { for: budget.id }, h("span", null, t("Budget")), h("span.pipebook-input-unit", null, budget, h("span", null, "s"))), h("div.pipebook-buttons", null, runButton, cancelButton));
  return { budget, form, runButton, cancelButton };
}

/** The status line after a trial: its figure and the fastest so far. */
function trialText(msg) {
  const pages = typeof msg.best?.huge_pages === "boolean" ? `, ${pagesLabel(msg.best.huge_pages)}` : "";
  const best = msg.best ? t(" Fastest so far: {bytes} per call, {pipe} pipe{pages}, {median} {u_gibs}.", { u_gibs: "GiB/s", bytes: fmt.bytes(msg.best.buf_size), pipe: fmt.bytes(msg.best.pipe_size), pages, median: fmt.gib(msg.best.median) }) : "";
  return t("Run {index} of {of}: {gib} {u_gibs}.{best}", { u_gibs: "GiB/s", index: msg.index, of: msg.of, gib: fmt.gib(msg.gib_per_s), best });
}

/** The handlers of one search's session (runner.js), past what the card's life shows of it. */
function tuneHandlers(card, catalogEntry) {
  const { root, out, life } = card;
  return {
    started: (msg) => {
      card.search = beginSearch(msg);
      card.redraw();
      life.progress(0);
      life.say(t("Searching: {n} configurations and the step's own, {rounds} rounds of {seconds} {u_s} runs…", { u_s: "s", n: msg.cells.length, rounds: msg.rounds, seconds: msg.seconds_per_run.toFixed(2) }));
    },
    trial: (msg) => {
      if (!card.search) return;
      card.search = foldTrial(card.search, msg);
      card.redraw();
      life.progress(msg.of ? msg.index / msg.of : 0);
      life.say(trialText(msg));
    },
    result: (r) => {
      out.summary.textContent = describeTune(r);
      fill(out.command, t("Run it again on the command line: "), h("code", null, r.best.argv.join(" ")));
      root.dataset.best = r.best.id;
      showVariant(out.variantBox, catalogEntry, { id: r.best.id, base: r.best.base, buf_size: r.best.buf_size, pipe_size: r.best.pipe_size, huge_pages: r.best.huge_pages, median: r.best.summary.median });
      for (const w of r.warnings || []) out.summary.append(runnerText(h("span.pipebook-warning", null, ` ${w}.`)));
    },
    saved: (msg) => {
      if (msg.store !== "tuned") return;
      const note = keptNote(msg);
      root.dataset.kept = note.kept;
      out.kept.className = `pipebook-tune-kept${note.kept === "yes" ? "" : " pipebook-warning"}`;
      fill(out.kept, note.text);
      if (!note.runnable) {
        fill(out.variantBox);
        delete root.dataset.best;
      }
    },
  };
}

/** The search's words where they are its own. */
const TUNE_WORDS = {
  cancelled: () => t("Cancelled: the run under way was stopped."),
  done: (r) => t("Done: {id} is runnable below.", { id: r.best.id }),
};

/** The tuning card of one step. */
export function mountTune(root, { online, catalogEntry }) {
  const step = root.dataset.step;
  root.dataset.trials = "0";
  const title = t("Tune {step}: bytes per call × pipe capacity on this machine", { step });
  const el = frame(root, online, { cls: "pipebook-tune-card", kind: t("Tuning"), title, id: step, offline: t("To search for the fastest configuration on your own machine"), command: `pipebench tune ${step}` });
  if (!el) return;
  const { budget, form, runButton, cancelButton } = tuneForm(root, step);
  const out = {
    bar: h("progress.pipebook-ipc-progress", { max: 1, hidden: true, "aria-label": t("Runs of the search done") }),
    heat: h("div.pipebook-tune-maps"),
    table: h("table.pipebook-tune-table"),
    summary: h("p.pipebook-tune-summary"),
    command: h("p.pipebook-sweep-command"),
    // Whether the best found is kept for the runner's next start (its `saved {store: "tuned"}`).
    kept: h("p.pipebook-tune-kept"),
    variantBox: h("div.pipebook-tune-variant"),
  };
  const { status, life } = cardControls(root, form, runButton, cancelButton, TUNE_WORDS, out.bar);
  // The map joins the card with its grid: an empty box would print as one.
  el.append(form, status, out.bar, out.summary, out.command, out.table, out.kept, out.variantBox);
  life.show("idle", t("Ready: the search takes two CPUs for the whole budget, after any run ahead of it."));
  // A variant found earlier since the runner started can run at once.
  tunedVariants().then((found) => {
    const v = found.find((x) => x.id === `tuned-${step}`);
    if (v && !out.variantBox.childElementCount) showVariant(out.variantBox, catalogEntry, v);
  });
  const card = { root, out, life, search: null };
  card.redraw = () => {
    root.dataset.trials = String(card.search.done);
    drawMaps(out.heat, card.search, step);
    if (!out.heat.isConnected) out.bar.after(out.heat);
    searchTable(out.table, card.search);
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (life.busy) return;
    const seconds = Number(budget.value);
    if (!fmt.isNumber(seconds) || seconds < 2 || seconds > 120) return life.show("error", t("Error: the budget must be {min} to {max} seconds.", { min: 2, max: 120 }));
    fill(out.summary);
    fill(out.kept);
    fill(out.command, t("Same on the command line: "), h("code", null, `pipebench tune ${step} --budget ${seconds}`));
    delete root.dataset.best;
    delete root.dataset.kept;
    life.start({ type: "tune", step, budget: seconds }, tuneHandlers(card, catalogEntry));
  });
}
