// What an IPC card shows of a finished run: its figures beside the survey's, each
// end's counters, and "What the kernel did" with the chapter's explanation beside it.

import { modelHead } from "../countsview.js";
import { h } from "../dom.js";
import * as fmt from "../format.js";
import { runnerText, t } from "../i18n.js";
import { ratioText } from "./chart.js";
import { ipcCountRows, ipcModelRows } from "./counts.js";
import { surveyRate } from "./model.js";

/** Whether a run's figure carries the cost of watching it, said plainly ("" when it does not say). */
export function watchedText(r) {
  if (r.watched === true) return t("A watched run: its progress was streamed to this page, which costs it a little; tick “Quiet run” for a figure to compare.");
  if (r.watched === false) return t("A quiet run: nothing watched it while it ran.");
  return "";
}

/** The result table: yours beside the survey's, then each end's counters. */
export function resultTable(m, r) {
  const survey = m.survey;
  const theirs = surveyRate(m);
  const row = (label, ...cells) => h("tr", null, h("th", null, label), ...cells.map((c) => h("td", null, c)));
  const rows = [
    h("tr", null, h("th", null, h("span.pipebook-visually-hidden", null, t("figure"))), h("th", null, t("this machine")), h("th", null, t("survey"))),
    row(t("time"), t("{time} for {bytes}", { time: fmt.ms(r.elapsed_ms), bytes: fmt.bytes(r.bytes) }), survey ? t("{time} for {bytes}", { time: fmt.ms(survey.ms), bytes: fmt.bytes(survey.bytes) }) : "—"),
    row("MiB/s", h("span.pipebook-ipc-mibs", null, fmt.figure(r.mib_per_s)), theirs ? fmt.figure(theirs) : "—"),
    row(t("checksum"), r.checksum_ok ? t("OK") : t("not checked"), ""),
    row(t("copies per byte"), r.copies ?? "—", m.copies ?? "—"),
  ];
  if (fmt.isNumber(r.lines)) rows.push(row(t("lines counted"), fmt.count(r.lines), ""));
  if (r.cow) {
    rows.push(
      row(
        t("copy-on-write"),
        t("the child wrote {pages} pages and took {faults} faults doing it; the parent {saw}", { pages: fmt.count(r.cow.pages), faults: fmt.count(r.cow.child_faults_after - r.cow.child_faults_before), saw: r.cow.parent_sees_original ? t("still saw its own bytes") : t("saw the child's bytes") }),
        "",
      ),
    );
  }
  if (r.filesystem) rows.push(row(t("files on"), r.filesystem, ""));
  for (const end of r.ends || []) {
    const u = end.usage || {};
    rows.push(
      row(
        end.role,
        t("{minor} minor / {major} major faults, {voluntary} voluntary / {involuntary} involuntary context switches, {user} user + {system} system CPU", { minor: fmt.count(u.minor_faults), major: fmt.count(u.major_faults), voluntary: fmt.count(u.voluntary_ctx_switches), involuntary: fmt.count(u.involuntary_ctx_switches), user: fmt.ms(u.user_ms), system: fmt.ms(u.system_ms) }),
        "",
      ),
    );
  }
  const ratio = ratioText(r.mib_per_s, theirs);
  return {
    table: rows,
    summary: ratio ? t("This run moved the bytes at {ratio} the survey's rate (one run: the quiet runs below say how sure).", { ratio }) : "",
  };
}

/** "What the kernel did": each end's counts per GiB, as table.pipebook-ipc-counts. */
export function countsTable(r) {
  const counted = ipcCountRows(r);
  if (!counted) return [];
  const head = h("tr", null, h("th", null, t("per GiB moved")), ...counted.ends.map((e) => h("th", null, e)));
  const body = counted.rows.map((row) => h("tr", null, h("th", null, row.label), ...row.cells.map((c) => h("td", null, c))));
  const out = [
    h("p", null, t("What the kernel did, counted in each end over its own run:")),
    h("table.pipebook-ipc-counts", null, head, ...body),
  ];
  const model = modelTable(ipcModelRows(r));
  if (model) out.push(model);
  if (counted.missing.length) out.push(h("ul.pipebook-ipc-counts-missing", null, ...counted.missing.map((m) => h("li", null, t("Not counted: "), runnerText(h("span", null, m))))));
  return out;
}

/** The chapter's explanation beside this run, as table.pipebook-ipc-model (null without one). */
function modelTable(model) {
  if (!model.length) return null;
  const mbody = model.map((j) =>
    h(
      "tr",
      { dataset: { model: j.id, verdict: j.verdict } },
      h("th", { scope: "row" }, `${j.end}: `, runnerText(h("span", null, j.what))),
      h("td", null, j.measured),
      runnerText(h("td", null, j.model)),
      h("td", null, j.verdictText),
    ),
  );
  return h(
    "div.pipebook-table-scroll",
    { tabindex: "0", role: "group", "aria-label": t("The chapter's explanation beside this run (scrolls sideways)") },
    h(
      "table.pipebook-ipc-model",
      null,
      h("caption", null, t("The chapter's explanation beside this run")),
      h("thead", null, modelHead(t("The chapter predicts"))),
      h("tbody", null, ...mbody),
    ),
  );
}
