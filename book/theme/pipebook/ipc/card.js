// One IPC mechanism's card. Each <div class="pipebook-ipc" data-mechanism=ID> becomes a
// card with the mechanism, its copies, the survey's figure (with its source) and a
// "Run this mechanism" button; under its result, the quiet runs against the survey
// (survey.js).
// Hooks for tests: button.pipebook-ipc-button, button.pipebook-cancel-button,
// input.pipebook-ipc-bytes, input.pipebook-ipc-counts (unchecked: the run leaves the
// kernel's events uncounted, as --no-counts), input.pipebook-ipc-quiet ("Quiet run":
// no progress streamed), .pipebook-status[data-state], table.pipebook-ipc-result,
// progress.pipebook-ipc-progress, and on the root data-state, data-mib-per-s,
// data-checksum, data-progress-samples.

import { statusLine } from "../announce.js";
import { START_HINT, history } from "../api.js";
import { fill, h, offlineHint } from "../dom.js";
import * as fmt from "../format.js";
import { CardLife } from "../cardlife.js";
import { savedText } from "../runlife.js";
import { runnerText, t, withNodes } from "../i18n.js";
import { controls } from "./form.js";
import { earlierRuns } from "./history.js";
import { commandLine, describe, surveyRate } from "./model.js";
import { ipcProgress } from "./progress.js";
import { countsTable, resultTable, watchedText } from "./result.js";
import { surveyEvidence } from "./survey.js";
import { mechanismCard } from "./view.js";

/** The card's parts below its form, in the order they show. */
function outputs() {
  return {
    bar: h("progress.pipebook-ipc-progress", { max: 1, hidden: true }),
    table: h("table.pipebook-ipc-result"),
    summary: h("p.pipebook-ipc-summary"),
    notes: h("ul.pipebook-ipc-notes"),
    counts: h("div.pipebook-ipc-counts-box"),
    command: h("p.pipebook-sweep-command"),
    earlier: h("p.pipebook-ipc-earlier"),
  };
}

/** The runs of the mechanism in the runner's history, said under the card (and handed to the evidence). */
async function showEarlier(root, m, out, evidence) {
  const records = await history();
  evidence.show(records);
  const e = earlierRuns(records, m.id);
  root.dataset.earlierRuns = String(e.runs);
  out.earlier.textContent = e.runs
    ? t("Runs of {id} on this machine so far (the runner's history): {runs}, best {best} {u_mibs} ({bytes}), latest {latest} {u_mibs}.", { u_mibs: "MiB/s", id: m.id, runs: e.runs, best: fmt.figure(e.best.mib_per_s), bytes: fmt.bytes(e.best.bytes), latest: fmt.figure(e.last.mib_per_s) })
    : "";
}

/** A finished run, laid out: its table, summary, notes and counts, and the root's data. */
function showResult(root, m, out, r) {
  const laid = resultTable(m, r);
  fill(out.table, laid.table);
  out.summary.textContent = [laid.summary, watchedText(r)].filter(Boolean).join(" ");
  if (typeof r.watched === "boolean") root.dataset.watched = String(r.watched);
  fill(out.notes, (r.notes || []).map((n) => runnerText(h("li", null, n))));
  fill(out.counts, countsTable(r));
  root.dataset.mibPerS = String(r.mib_per_s);
  root.dataset.checksum = r.checksum_ok ? "ok" : "unchecked";
}

/** The handlers of one run's session (runner.js), past what the card's life shows of it. */
function runHandlers(card, params) {
  const { root, m, out, life, evidence, earlier } = card;
  let total = null;
  let samples = 0;
  // This run's count, not the last one's: a quiet run streams none.
  root.dataset.progressSamples = "0";
  return {
    started: (msg) => {
      total = msg.params?.bytes ?? null;
      const how = params.quiet ? t(" (quiet: not watched, so no progress until it ends)") : "";
      life.say(t("Moving {bytes} in calls of {chunk}{how}…", { bytes: fmt.bytes(msg.params?.bytes), chunk: fmt.bytes(msg.params?.chunk), how }));
    },
    progress: (msg) => {
      samples += 1;
      root.dataset.progressSamples = String(samples);
      const p = ipcProgress(msg, total);
      life.say(p.text);
      // No fraction: the browser draws an indeterminate bar.
      life.progress(p.fraction);
    },
    result: (r) => {
      evidence.add(r);
      showResult(root, m, out, r);
    },
    // The runner answers first and saves after: read the history once it says.
    saved: (msg) => {
      if (msg.store !== "history") return;
      if (msg.ok) earlier();
      else life.say(`${life.statusText()} ${savedText(msg)}`);
      root.dataset.saved = msg.ok ? "yes" : "no";
    },
  };
}

/** The card's life: data-state on root, card and status (queued shows as running), its form, bar and words. */
function cardLife(root, el, status, ui, bar, evidence) {
  return new CardLife({
    status,
    marks: [root, el, status],
    states: { queued: "running" },
    run: [ui.runButton],
    cancel: ui.cancelButton,
    form: ui.form,
    bar,
    words: {
      cancelled: () => t("Cancelled. The runner removed the run's files, queues and segments."),
      done: (event) => t("Done: {rate} {u_mibs}.", { u_mibs: "MiB/s", rate: fmt.figure(event.mib_per_s) }),
    },
    // The quiet runs below wait while the card's own run goes.
    onPhase: (phase, busy) => evidence.hold(busy),
  });
}

/** One mechanism's card. */
export function mountIpc(root, { online, lab }) {
  const m = describe(root.dataset, lab);
  root.classList.add("pipebook-enhanced");
  root.dataset.state = online && lab ? "idle" : "offline";
  const el = mechanismCard(root, m);
  root.append(el);
  if (!online || !lab) {
    el.append(offlineHint(t("To run this mechanism on your own machine"), START_HINT, withNodes(t(", or run {command}."), { command: h("code", null, `pipebench ipc ${m.id}`) })));
    return;
  }
  const ui = controls(`pipebook-ipc-${m.id}`, lab, { button: t("Run this mechanism"), quiet: "choice" });
  const status = statusLine({ state: "idle" });
  const out = outputs();
  const evidence = surveyEvidence(m, surveyRate(m), () => ui.read(), (busy) => {
    ui.runButton.disabled = busy;
  });
  el.append(ui.form, status, out.bar, out.table, out.summary, evidence.el, out.counts, out.notes, out.command, out.earlier);
  const life = cardLife(root, el, status, ui, out.bar, evidence);
  life.show("idle", t("Ready: the run takes the machine for itself, after any run ahead of it."));
  const earlier = () => showEarlier(root, m, out, evidence).catch(() => {});
  earlier();
  const card = { root, m, out, life, evidence, earlier };
  ui.form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (life.busy || evidence.busy()) return;
    const asked = ui.read();
    if (asked.error) return life.show("error", `Error: ${asked.error}.`);
    fill(out.command, t("Same on the command line: "), h("code", null, commandLine(m.id, asked.params.bytes, asked.params.chunk, asked.params.counts)));
    life.start({ type: "ipc", mechanism: m.id, params: asked.params }, runHandlers(card, asked.params));
  });
}
