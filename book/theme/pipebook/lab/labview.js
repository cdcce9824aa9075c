// The lab card's pieces that are only drawing: a check as the runner judged it, the
// prediction's input, the sections of tasks and checks, the hand-in links. lab.js
// puts them together and gives them life.

import { labReportUrl } from "../api.js";
import { h } from "../dom.js";
import { runnerText, t } from "../i18n.js";
import * as labs from "./labchecks.js";
import { LAB_WORDS, assumesText, labSay, statusWord, taskText } from "./labtext.js";

/** A check as one list item: its status, title, the runner's detail and what would help. */
export function checkItem(check, outcome) {
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

/** The prediction's input: a choice among the lab's options, or a number in its bounds. */
export function predictionInput(lab, id) {
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

/** The card without a runner: the tasks as text, the checks unjudged, how to start the runner. */
export function offlineSections(lab, checksList) {
  return [
    h("section", null, h("h2", null, LAB_WORDS.run), h("ul.pipebook-lab-tasks", null, lab.tasks.map((task) => h("li", null, `${task.title} (${taskText(task)})`)))),
    h("section", null, h("h2", null, LAB_WORDS.check), checksList),
  ];
}

/** A task's list item, with its count of runs and its Run button (`onRun` when pressed). */
export function taskItem(task, onRun) {
  const button = h("button.pipebook-run-button.pipebook-lab-run", { type: "button", dataset: { task: task.id } }, LAB_WORDS.runButton);
  const count = h("span.pipebook-lab-count");
  button.addEventListener("click", onRun);
  const item = h(
    "li",
    { dataset: { task: task.id } },
    h("div.pipebook-lab-task", null, h("span.pipebook-lab-task-title", null, task.title, h("br"), h("code", null, taskText(task))), count, button),
  );
  return { item, button, count };
}

/** "4. Hand in": the student's name and the report's two links, and Start over. */
export function exportSection(id, resetButton) {
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
  return h(
    "section.pipebook-lab-export",
    null,
    h("h2", null, LAB_WORDS.handIn),
    h("p", null, LAB_WORDS.reportHolds),
    h("div.pipebook-lab-row", null, h("label.pipebook-field", { for: student.id }, h("span", null, LAB_WORDS.nameOnReport), student), jsonLink, htmlLink),
    h("p", null, resetButton),
  );
}

/** The table of recorded runs, from labruns.js's head and rows. */
export function runsRows(table) {
  return [
    table ? h("tr", null, table.head.map((task) => h("th", null, task))) : null,
    (table?.rows ?? []).map((row) => h("tr", null, row.map((c) => h("td", null, c)))),
  ];
}
