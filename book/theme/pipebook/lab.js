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

import { START_HINT, labReportUrl, labState, precheck } from "./api.js";
import { secondsInput } from "./controls.js";
import { runnerText, t } from "./i18n.js";
import { fill, h, offlineHint } from "./dom.js";
import * as fmt from "./format.js";
import { runsTable } from "./labruns.js";
import { nsText } from "./latency/dist.js";
import * as labs from "./labchecks.js";
import { saveLab, startIpc, startLatency, startRun, startSweep } from "./runner.js";
import { parseSize } from "./sizes.js";
import { precheckSentence } from "./verdict.js";
import { LAB_WORDS, labSay } from "./labtext.js";

let nextId = 0;

/** A finished run's headline figure: a latency run's median and 99th percentile, else its GiB/s. */
function figure(result) {
  if (result?.kind === "latency") return labSay.latencyFigure(nsText(result.p50), nsText(result.p99));
  return `${fmt.gib(result.gib_per_s)} GiB/s`;
}

/** What a task runs, in a line of code text. */
function taskText(task) {
  if (task.latency) {
    const l = task.latency;
    return labSay.latencyTask(l.mechanism, l.mode, fmt.bytes(l.size), l.round_trips);
  }
  // Without bytes of its own, a task moves the runner's default (published at /api/ipc).
  if (task.mechanism) return labSay.ipcTask(task.mechanism, task.bytes ? fmt.bytes(task.bytes) : LAB_WORDS.runnersDefault);
  if (task.sweep) {
    const values = task.sweep.values.map((v) => fmt.bytes(v)).join(", ");
    return labSay.sweepTask(task.step, task.sweep.param, values);
  }
  return `${task.step}${task.params?.verify ? LAB_WORDS.everyByte : ""}`;
}

/** A check's status as the card shows it. */
function statusWord(status) {
  if (status === "not_resolved") return LAB_WORDS.notResolved;
  if (status === "not_this_kernel") return t("not this kernel");
  return status;
}

/**
 * Which kernel behaviour a check assumed (`check.when`), and what the runner's
 * probe said here (`outcome.assumes`); null for a check that assumes nothing.
 */
export function assumesText(check, outcome) {
  const when = check?.when;
  if (!when) return null;
  const measured = outcome?.assumes?.measured;
  if (!measured) return t("Assumes {probe}: {answer}.", { probe: when.probe, answer: when.answer });
  if (measured === "unknown") {
    return t("Assumes {probe}: {answer}, as on the article's kernel; this machine's probe could not tell.", { probe: when.probe, answer: when.answer });
  }
  return t("Assumes {probe}: {answer}. This machine's probe says: {measured}.", { probe: when.probe, answer: when.answer, measured });
}

function checkItem(check, outcome) {
  const item = h(
    "li",
    { dataset: { check: check.id, status: outcome.status } },
    h("span.pipebook-check-status", null, statusWord(outcome.status)),
    h("span.pipebook-check-title", null, check.title),
    runnerText(h("p.pipebook-check-detail", null, outcome.detail)),
  );
  const assumes = assumesText(check, outcome);
  if (assumes) item.append(h("p.pipebook-check-assumes", null, assumes));
  if (outcome.status === "not_this_kernel") {
    item.append(h("p.pipebook-check-help", null, t("This check rests on a kernel behaviour this machine does not have, so it is not judged here and does not count against you.")));
  }
  if (outcome.status === "fail") {
    item.append(h("p.pipebook-check-help", null, labSay.whyTry(check.explain, check.try)));
  }
  // Judged at planned looks: the runs the next look needs, or that it is final.
  if (outcome.status === "not_resolved") {
    item.append(h("p.pipebook-check-help", { dataset: { final: outcome.more_runs == null ? "yes" : "no" } }, labs.lookHelp(outcome)));
  }
  if (outcome.status === "unavailable") {
    item.append(h("p.pipebook-check-help", null, LAB_WORDS.unavailableHelp));
  }
  return item;
}

/** What a check shows: the runner's outcome for it in `judged` (/api/labs' `checks`: a list of outcomes with `id`, or a map by id), or none yet. */
function outcomeOf(judged, check, online) {
  const list = Array.isArray(judged) ? judged : judged && typeof judged === "object" ? Object.values(judged) : [];
  const found = list.find((o) => o?.id === check.id) ?? (judged && !Array.isArray(judged) ? judged[check.id] : undefined);
  if (found && typeof found.status === "string") return found;
  return {
    id: check.id,
    status: "pending",
    detail: online ? LAB_WORDS.waitingCheck : LAB_WORDS.offlineCheck,
  };
}

function predictionInput(lab, id) {
  const p = lab.prediction;
  if (p.kind === "choice") {
    return h(
      "select.pipebook-prediction-input",
      { id },
      h("option", { value: "" }, LAB_WORDS.choose),
      p.options.map((o) => h("option", { value: o }, o)),
    );
  }
  return h("input.pipebook-prediction-input", {
    id,
    type: "number",
    min: p.min,
    max: p.max,
    step: "any",
    inputmode: "decimal",
  });
}

export function mountLab(root, { online, catalogEntry }) {
  const lab = JSON.parse(root.dataset.def);
  const id = `pipebook-lab-${++nextId}`;
  root.classList.add("pipebook-enhanced");
  root.dataset.state = online ? "idle" : "offline";

  const card = h(
    "div.pipebook-card",
    { role: "group", "aria-label": labSay.ariaLabel(lab.title) },
    h(
      "div.pipebook-card-head",
      null,
      h("span.pipebook-kind", null, LAB_WORDS.kind),
      h("p.pipebook-title", null, lab.title),
      h("p.pipebook-summary", null, lab.goal),
    ),
  );
  root.append(card);

  const predictionBox = h("section.pipebook-lab-prediction", null, h("h2", null, LAB_WORDS.predict), h("p", null, lab.prediction.question));
  const tasksList = h("ul.pipebook-lab-tasks");
  const checksList = h("ul.pipebook-lab-checks");
  const verdict = h("p.pipebook-lab-verdict");
  // Said once for the lab when the runner judged older runs again.
  const rejudged = h("p.pipebook-lab-rejudged", { hidden: true });
  const runsEl = h("table.pipebook-lab-runs");
  const status = h("p.pipebook-status.pipebook-lab-status", { role: "status", "aria-live": "polite" });
  card.append(predictionBox);

  // Each check as the runner judged it (`checks`, from /api/labs); without a
  // runner, or before it answers, the check is listed with no verdict.
  const showChecks = (judged) => {
    const outcomes = lab.checks.map((c) => outcomeOf(judged, c, online));
    fill(checksList, lab.checks.map((c, i) => checkItem(c, outcomes[i])));
    root.dataset.checks = outcomes.map((o) => o.status).join(",");
    const note = labs.rejudgedNote(outcomes);
    fill(rejudged, note ?? "");
    rejudged.hidden = note === null;
  };

  if (!online) {
    card.append(
      h("section", null, h("h2", null, LAB_WORDS.run), h("ul.pipebook-lab-tasks", null, lab.tasks.map((task) => h("li", null, `${task.title} (${taskText(task)})`)))),
      h("section", null, h("h2", null, LAB_WORDS.check), checksList),
      offlineHint(LAB_WORDS.offline, START_HINT, LAB_WORDS.comeBack),
    );
    showChecks(null);
    return;
  }

  // Controls: the prediction, the time budget and byte cap of each run, the export.
  const input = predictionInput(lab, `${id}-prediction`);
  const saveButton = h("button.pipebook-run-button.pipebook-prediction-save", { type: "button" }, LAB_WORDS.save);
  const predicted = h("p.pipebook-lab-predicted");
  predictionBox.append(
    h(
      "div.pipebook-lab-row",
      null,
      h("label.pipebook-field", { for: input.id }, h("span", null, lab.prediction.unit ? labSay.predictionUnit(lab.prediction.unit) : LAB_WORDS.yourPrediction), input),
      saveButton,
    ),
    predicted,
  );
  const { input: seconds } = secondsInput(catalogEntry, id, lab.seconds);
  const bytes = h("input.pipebook-lab-bytes", { id: `${id}-bytes`, type: "text", placeholder: LAB_WORDS.noCap, size: 8 });
  const resetButton = h("button.pipebook-cancel-button.pipebook-lab-reset", { type: "button" }, LAB_WORDS.startOver);
  // Before any run: what would make this machine noisy, so an open check is
  // read as the machine's doing and the student knows what to change.
  const machineCheck = h("p.pipebook-precheck", null, LAB_WORDS.machineCheck);
  precheck().then((advice) => fill(machineCheck, precheckSentence(advice)));
  card.append(
    h(
      "section",
      null,
      h("h2", null, LAB_WORDS.run),
      h(
        "div.pipebook-lab-row",
        null,
        // IPC runs move a number of bytes and take no time budget; latency runs
        // time a number of round trips and take neither.
        lab.tasks.some((task) => !task.mechanism && !task.latency) ? h("label.pipebook-field", { for: seconds.id }, h("span", null, LAB_WORDS.secondsPerRun), seconds) : null,
        lab.tasks.some((task) => !task.latency) ? h("label.pipebook-field", { for: bytes.id }, h("span", null, LAB_WORDS.byteCap), bytes) : null,
      ),
      machineCheck,
      tasksList,
      status,
    ),
    h("section", null, h("h2", null, LAB_WORDS.check), verdict, rejudged, checksList, runsEl),
  );
  const student = h("input.pipebook-lab-student", { id: `${id}-student`, type: "text", maxlength: 64, placeholder: LAB_WORDS.yourName });
  const jsonLink = h("a.pipebook-lab-export-json", { download: "pipebook-lab-report.json" }, LAB_WORDS.exportJson);
  const htmlLink = h("a.pipebook-lab-export-html", { download: "pipebook-lab-report.html" }, LAB_WORDS.exportHtml);
  const updateLinks = () => {
    const name = student.value.trim() || "student";
    jsonLink.href = labReportUrl("json", name);
    htmlLink.href = labReportUrl("html", name);
  };
  student.addEventListener("input", updateLinks);
  updateLinks();
  card.append(
    h(
      "section.pipebook-lab-export",
      null,
      h("h2", null, LAB_WORDS.handIn),
      h("p", null, LAB_WORDS.reportHolds),
      h("div.pipebook-lab-row", null, h("label.pipebook-field", { for: student.id }, h("span", null, LAB_WORDS.nameOnReport), student), jsonLink, htmlLink),
      h("p", null, resetButton),
    ),
  );

  let state = { prediction: null, measurements: [] };
  let marginAsked = 0;
  let busy = null;
  const buttons = new Map();

  // Every recorded run, with the figures the checks read: the huge-page share is
  // what the writer found in its own page tables (the page inspector's view).
  const showRuns = () => {
    const table = runsTable(state.measurements);
    fill(
      runsEl,
      table ? h("tr", null, table.head.map((task) => h("th", null, task))) : null,
      (table?.rows ?? []).map((row) => h("tr", null, row.map((c) => h("td", null, c)))),
    );
  };

  const render = () => {
    const hasPrediction = state.prediction !== null;
    const started = state.measurements.length > 0;
    if (hasPrediction) {
      const v = state.prediction.value;
      fill(predicted, LAB_WORDS.savedPrediction, h("strong", null, typeof v === "number" ? labs.round(v) : String(v)), lab.prediction.unit ? ` ${lab.prediction.unit}` : "", started ? LAB_WORDS.locked : ".");
      if (document.activeElement !== input) input.value = String(v);
    } else {
      fill(predicted, LAB_WORDS.saveFirst);
    }
    input.disabled = started || !!busy;
    saveButton.disabled = started || !!busy;
    resetButton.disabled = !!busy;
    for (const task of lab.tasks) {
      const { done, needed } = labs.progress(lab, state.measurements, task);
      const entry = buttons.get(task.id);
      entry.count.textContent = labSay.runsOf(Math.min(done, needed), needed);
      entry.button.textContent = done >= needed ? LAB_WORDS.runAgain : done ? LAB_WORDS.runRest : LAB_WORDS.runButton;
      entry.button.disabled = !hasPrediction || !!busy;
    }
    const v = hasPrediction ? labs.predictionVerdict(lab, state.prediction.value, state.measurements) : null;
    fill(verdict, v ?? "");
    // A choice's margin over the runner-up, as the runner judges the two tasks' runs.
    const sides = v ? labs.choiceSides(lab, state.measurements, lab.prediction.answer) : null;
    if (sides) {
      const asked = (marginAsked += 1);
      labs.judgeMargin(sides).then((answer) => {
        if (asked === marginAsked && answer.judgement) verdict.append(` ${labs.marginSentence(sides, answer.judgement)}`);
      });
    }
    showChecks(state.checks);
    showRuns();
    root.dataset.state = busy ? "busy" : "idle";
    root.dataset.measurements = String(state.measurements.length);
  };

  const refresh = async () => {
    try {
      const all = await labState();
      state = all?.labs?.[lab.id] ?? { prediction: null, measurements: [] };
    } catch (err) {
      status.textContent = labSay.progressUnread(err.message);
    }
    render();
  };

  // Every run a lab makes is quiet: its checks compare the runs, and watching a
  // run would cost it (the card draws nothing live anyway).
  const params = () => {
    const p = { seconds: Number(seconds.value), quiet: true };
    const cap = bytes.value.trim();
    if (cap) {
      const b = parseSize(cap);
      if (b === null || b < 1) return { error: labSay.notASize(cap) };
      p.bytes = b;
    }
    if (!(p.seconds > 0)) return { error: LAB_WORDS.secondsMissing };
    return { params: p };
  };

  const runTask = (task) => {
    const read = params();
    if (read.error) {
      status.textContent = `${labSay.error(read.error)}.`;
      return;
    }
    const tag = { id: lab.id, task: task.id };
    const cancel = h("button.pipebook-cancel-button", { type: "button" }, LAB_WORDS.cancel);
    // A run the runner could not record for the lab (a full or read-only disk), and why.
    let unsaved = "";
    const finish = async (text) => {
      busy = null;
      cancel.remove();
      await refresh();
      status.textContent = unsaved ? `${text} ${unsaved}` : text;
    };
    const callbacks = (onEnd) => ({
      connecting: () => (status.textContent = labSay.connectingFor(task.title)),
      queued: (position) => (status.textContent = labSay.waitingPlace(position)),
      started: () => (status.textContent = labSay.running(task.latency ? `${task.latency.mechanism} (${task.latency.mode})` : (task.mechanism ?? task.step))),
      point: (msg) => {
        status.textContent = labSay.point(msg.index, msg.of, fmt.bytes(msg.value), fmt.gib(msg.result.gib_per_s));
      },
      result: onEnd,
      done: onEnd,
      saved: (msg) => {
        if (msg.store !== "labs" || msg.ok) return;
        unsaved = labSay.notRecorded(msg.error?.message);
        root.dataset.unsaved = "yes";
        if (!busy) status.textContent = `${status.textContent} ${unsaved}`;
      },
      cancelled: () => finish(LAB_WORDS.cancelled),
      error: (message) => finish(`Error: ${message}`),
      notice: (message) => (status.textContent = message),
    });
    status.after(cancel);
    cancel.addEventListener("click", () => busy?.cancel());
    if (task.sweep) {
      busy = startSweep(task.step, task.sweep.param, task.sweep.values, task.runs, read.params, callbacks(() => finish(labSay.sweepDone(task.title))), tag);
      render();
      return;
    }
    // Plain runs (pipe or IPC) one after another, until the task has its runs,
    // then up to the next planned look of a check the runner left open (at
    // least one). An IPC run takes only the byte cap: the task's bytes otherwise.
    const { done, needed } = labs.progress(lab, state.measurements, task);
    let left = labs.runsToAdd(lab, state.checks, task.id, done, needed);
    const start = (on) => {
      // A latency task is its configuration, on the runner's default CPUs.
      if (task.latency) return startLatency({ mechanism: task.latency.mechanism, mode: task.latency.mode, size: task.latency.size, round_trips: task.latency.round_trips, lab: tag }, on);
      if (!task.mechanism) return startRun(task.step, read.params, on, tag);
      const bytes = read.params.bytes ?? task.bytes;
      return startIpc(task.mechanism, bytes === undefined ? { quiet: true } : { bytes, quiet: true }, on, tag);
    };
    const next = () => {
      busy = start(
        callbacks(async (result) => {
          left -= 1;
          if (left > 0) {
            status.textContent = labSay.runDone(figure(result), left);
            const all = await labState().catch(() => null);
            state = all?.labs?.[lab.id] ?? state;
            next();
            render();
          } else {
            finish(labSay.done(task.title, figure(result)));
          }
        }),
      );
    };
    next();
    render();
  };

  for (const task of lab.tasks) {
    const button = h("button.pipebook-run-button.pipebook-lab-run", { type: "button", dataset: { task: task.id } }, LAB_WORDS.runButton);
    const count = h("span.pipebook-lab-count");
    button.addEventListener("click", () => {
      if (!busy) runTask(task);
    });
    buttons.set(task.id, { button, count });
    tasksList.append(
      h(
        "li",
        { dataset: { task: task.id } },
        h("div.pipebook-lab-task", null, h("span.pipebook-lab-task-title", null, task.title, h("br"), h("code", null, taskText(task))), count, button),
      ),
    );
  }

  const save = (message, done) => {
    busy = saveLab(message, {
      saved: async (msg) => {
        busy = null;
        await refresh();
        status.textContent = msg.ok ? done : labSay.notSaved(msg.error?.message);
      },
      error: async (message) => {
        busy = null;
        await refresh();
        status.textContent = labSay.error(message);
      },
    });
    render();
  };

  saveButton.addEventListener("click", () => {
    const read = labs.parsePrediction(lab, input.value);
    if (read.error) {
      status.textContent = labSay.yourPredictionError(read.error);
      return;
    }
    save({ type: "predict", lab: lab.id, value: read.value }, LAB_WORDS.predictionSaved);
  });
  resetButton.addEventListener("click", () => {
    save({ type: "reset_lab", lab: lab.id }, LAB_WORDS.startsOver);
  });

  render();
  refresh();
}
