// The IPC lab's cards. Each <div class="pipebook-ipc" data-mechanism=ID> becomes a
// card with the mechanism, its copies, the survey's figure (with its source) and a
// "Run this mechanism" button; <div class="pipebook-ipc-matrix"> runs every
// mechanism in turn, each its own queued run, and charts them beside the survey.
// Hooks for tests: button.pipebook-ipc-button, button.pipebook-cancel-button,
// input.pipebook-ipc-bytes, input.pipebook-ipc-counts (unchecked: the run leaves the
// kernel's events uncounted, as --no-counts), input.pipebook-ipc-quiet (the single
// card's "Quiet run": no progress streamed; the matrix's runs are always quiet, as
// everything it compares must be), .pipebook-status[data-state], table.pipebook-ipc-result,
// progress.pipebook-ipc-progress, and on the root data-state, data-mib-per-s,
// data-checksum, data-progress-samples (and data-rows on the matrix).
// Under a single card's result, .pipebook-ipc-evidence states the mechanism's
// quiet runs (of the configuration last run quiet: bytes, bytes per call,
// counted or not) against the survey's rate as the runner judges them (each
// run paired with the rate, from 6 runs on; judge.js), drawn as
// svg.pipebook-ipc-evidence-interval; watched runs are left out and counted.
// button.pipebook-ipc-evidence-until adds quiet runs through the runner's
// queue in a sequential design (looks planned in advance, each judged by the
// runner) until a look resolves or input.pipebook-ipc-evidence-budget's runs
// are spent; data-state, data-verdict and data-quiet on that element, its
// status .pipebook-ipc-evidence-status.
// Under the matrix, .pipebook-ipc-versus states one mechanism against another
// from the quiet runs this page made of each (the matrix's and its own), as the
// runner judges the two sets, drawn as svg.pipebook-ipc-versus-interval, and
// button.pipebook-ipc-versus-until runs the two in pairs (A B, then B A, ...)
// in a sequential design until a look resolves or
// input.pipebook-ipc-versus-budget's pairs are spent;
// select.pipebook-ipc-versus-a/-b pick them; data-state and data-verdict on
// that element. The page judges nothing itself.

import { statusLine } from "./announce.js";
import { START_HINT, history } from "./api.js";
import { fill, h, offlineHint } from "./dom.js";
import * as fmt from "./format.js";
import { IpcChart, rate, ratioText } from "./ipcchart.js";
import { earlierRuns, ipcConfigOf, newestQuietConfig, quietRuns, surveyCell } from "./ipchistory.js";
import { ipcCountRows, ipcModelRows } from "./ipccounts.js";
import { ipcProgress } from "./ipcprogress.js";
import { savedText } from "./runlife.js";
import { startIpc } from "./runner.js";
import { parseSize } from "./sizes.js";
import { designNote, endingSentence, figureSide, judge, pairedPlan, planSentence, runSequence } from "./judge.js";
import { showJudged } from "./runverdict.js";
import { judgedSentence } from "./verdict.js";
import { runnerText, t, withNodes } from "./i18n.js";

const SURVEY_SOURCE =
  t("BiscuitOS zero-copy survey, Linux 6.10 x86_64, measured in an emulator on hardware it does not name");

/** The mechanism as the card shows it: from /api/ipc, else from the static attributes. */
function describe(root, lab) {
  const id = root.dataset.mechanism;
  const m = lab?.mechanisms?.find((x) => x.id === id);
  if (m) return m;
  const copies = fmt.number(root.dataset.copies);
  const ms = fmt.number(root.dataset.surveyMs);
  return {
    id,
    title: root.dataset.title || id,
    copies,
    copy_path: "",
    kernel_functions: [],
    survey: ms === null ? null : { ms, bytes: fmt.number(root.dataset.surveyBytes) },
  };
}

/** Where the card's survey figure comes from: the book says it per card (two surveys). */
function surveySource(root) {
  return root.dataset.surveySource || SURVEY_SOURCE;
}

function surveyLine(m, source) {
  if (!m.survey) return h("p.pipebook-ipc-survey", null, t("The survey gives no time for this one."));
  return h(
    "p.pipebook-ipc-survey",
    null,
    h("strong", null, t("Survey: {time} for {bytes}", { time: fmt.ms(m.survey.ms), bytes: fmt.bytes(m.survey.bytes) })),
    t(" ({rate} {u_mibs}). Source: {source}; compare mechanisms within it, not with your machine's absolute figures.", { u_mibs: "MiB/s", rate: fmt.figure(rate(m.survey.ms, m.survey.bytes)), source }),
  );
}

/** The survey's kernel functions, and the ones a profile showed on the project's machine. */
function kernelLine(m) {
  if (!m.kernel_functions?.length) return null;
  const seen = new Set(m.seen_here || []);
  const code = (names) => names.flatMap((f, i) => [i ? ", " : "", h("code", null, f)]);
  const extra = (m.seen_here || []).filter((f) => !m.kernel_functions.includes(f));
  const unseen = m.kernel_functions.filter((f) => !seen.has(f));
  return h(
    "details.pipebook-ipc-kernel",
    null,
    h("summary", null, t("Kernel functions on the path")),
    h("p", null, withNodes(t("Listed: {functions}."), { functions: code(m.kernel_functions) })),
    seen.size
      ? h(
          "p",
          null,
          t("Seen by perf on the project's machine (Linux 6.18, KVM guest): "),
          code(m.kernel_functions.filter((f) => seen.has(f))),
          extra.length ? [t("; also "), code(extra)] : "",
          ".",
          unseen.length ? withNodes(t(" Not seen there (inlined, too brief to sample, or renamed): {functions}."), { functions: code(unseen) }) : "",
        )
      : null,
  );
}

function bound(lab, name) {
  return lab?.params?.find((p) => p.name === name) || null;
}

/** Bytes from a text field, checked against the server's bounds: {value} or {error}. */
function readSize(text, b, label, optional) {
  if (optional && String(text).trim() === "") return { value: null };
  const value = parseSize(text);
  if (value === null) return { error: t("{label}: “{text}” is not a size such as {example}", { label, text, example: "200MiB" }) };
  if (b && (value < b.min || value > b.max)) {
    return { error: t("{label} must be {min} to {max}, not {value}", { label, min: fmt.bytes(b.min), max: fmt.bytes(b.max), value: fmt.bytes(value) }) };
  }
  return { value };
}

function commandLine(id, bytes, chunk, counts) {
  return `pipebench ipc ${id} --bytes ${fmt.sizeArg(bytes)}${chunk ? ` --chunk ${fmt.sizeArg(chunk)}` : ""}${counts === false ? " --no-counts" : ""} --repeats 1`;
}

/** Whether a run's figure carries the cost of watching it, said plainly ("" when it does not say). */
export function watchedText(r) {
  if (r.watched === true) return t("A watched run: its progress was streamed to this page, which costs it a little; tick “Quiet run” for a figure to compare.");
  if (r.watched === false) return t("A quiet run: nothing watched it while it ran.");
  return "";
}

/** The result table: yours beside the survey's, then each end's counters. */
function resultTable(m, r) {
  const survey = m.survey;
  const surveyRate = survey ? rate(survey.ms, survey.bytes) : null;
  const row = (label, ...cells) => h("tr", null, h("th", null, label), ...cells.map((c) => h("td", null, c)));
  const rows = [
    h("tr", null, h("th", null, h("span.pipebook-visually-hidden", null, t("figure"))), h("th", null, t("this machine")), h("th", null, t("survey"))),
    row(t("time"), t("{time} for {bytes}", { time: fmt.ms(r.elapsed_ms), bytes: fmt.bytes(r.bytes) }), survey ? t("{time} for {bytes}", { time: fmt.ms(survey.ms), bytes: fmt.bytes(survey.bytes) }) : "—"),
    row("MiB/s", h("span.pipebook-ipc-mibs", null, fmt.figure(r.mib_per_s)), surveyRate ? fmt.figure(surveyRate) : "—"),
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
  const ratio = ratioText(r.mib_per_s, surveyRate);
  return {
    table: rows,
    summary: ratio ? t("This run moved the bytes at {ratio} the survey's rate (one run: the quiet runs below say how sure).", { ratio }) : "",
  };
}

/** "What the kernel did": each end's counts per GiB, as table.pipebook-ipc-counts. */
function countsTable(r) {
  const counted = ipcCountRows(r);
  if (!counted) return [];
  const head = h("tr", null, h("th", null, t("per GiB moved")), ...counted.ends.map((e) => h("th", null, e)));
  const body = counted.rows.map((row) => h("tr", null, h("th", null, row.label), ...row.cells.map((c) => h("td", null, c))));
  const out = [
    h("p", null, t("What the kernel did, counted in each end over its own run:")),
    h("table.pipebook-ipc-counts", null, head, ...body),
  ];
  const model = ipcModelRows(r);
  if (model.length) {
    const mhead = h(
      "tr",
      null,
      h("th", { scope: "col" }, t("Measured")),
      h("th", { scope: "col" }, t("This run")),
      h("th", { scope: "col" }, t("The chapter predicts")),
      h("th", { scope: "col" }, t("Verdict")),
    );
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
    out.push(
      h(
        "div.pipebook-table-scroll",
        { tabindex: "0", role: "group", "aria-label": t("The chapter's explanation beside this run (scrolls sideways)") },
        h(
          "table.pipebook-ipc-model",
          null,
          h("caption", null, t("The chapter's explanation beside this run")),
          h("thead", null, mhead),
          h("tbody", null, ...mbody),
        ),
      ),
    );
  }
  if (counted.missing.length) out.push(h("ul.pipebook-ipc-counts-missing", null, ...counted.missing.map((m) => h("li", null, t("Not counted: "), runnerText(h("span", null, m))))));
  return out;
}

/** The run/cancel form shared by both cards: returns the elements and a setState. */
function controls(id, lab, defaults) {
  const bytesBound = bound(lab, "bytes");
  const chunkBound = bound(lab, "chunk");
  const countsBound = bound(lab, "counts");
  // The single card offers the switch; the matrix runs quiet, always (`defaults.quiet`).
  const quietBound = defaults.quiet === "choice" ? bound(lab, "quiet") : null;
  // The runner publishes its default size (the survey's); without a runner nothing runs anyway.
  const value = fmt.isNumber(bytesBound?.default) ? fmt.sizeArg(bytesBound.default) : "";
  const bytes = h("input.pipebook-ipc-bytes", { id: `${id}-bytes`, type: "text", value, size: 9, spellcheck: "false" });
  const chunk = h("input.pipebook-ipc-chunk", { id: `${id}-chunk`, type: "text", value: "", placeholder: t("default"), size: 9, spellcheck: "false" });
  const field = (input, text, help) => h("label.pipebook-field", { for: input.id, title: help || "" }, h("span", null, text), input);
  // Only where the runner takes the switch (it publishes it in /api/ipc).
  const counts = countsBound ? h("input.pipebook-ipc-counts", { id: `${id}-counts`, type: "checkbox", checked: countsBound.default !== 0 }) : null;
  const countsField = counts
    ? h("label.pipebook-field.pipebook-check", { for: counts.id, title: countsBound.help || "" }, counts, (countsBound.label ? runnerText(h("span", null, countsBound.label)) : h("span", null, t("Count kernel events"))))
    : null;
  const quiet = quietBound ? h("input.pipebook-ipc-quiet", { id: `${id}-quiet`, type: "checkbox" }) : null;
  const quietField = quiet
    ? h("label.pipebook-field.pipebook-check", { for: quiet.id, title: quietBound.help || "" }, quiet, (quietBound.label ? runnerText(h("span", null, quietBound.label)) : h("span", null, t("Quiet run"))))
    : null;
  const runButton = h("button.pipebook-run-button.pipebook-ipc-button", { type: "submit" }, defaults.button);
  const cancelButton = h("button.pipebook-cancel-button", { type: "button", disabled: true }, t("Cancel"));
  const form = h(
    "form.pipebook-controls",
    { novalidate: true },
    field(bytes, t("Bytes (at most {max})", { max: fmt.bytes(bytesBound?.max) }), bytesBound?.help),
    field(chunk, t("Bytes per call"), chunkBound?.help),
    countsField,
    quietField,
    h("div.pipebook-buttons", null, runButton, cancelButton),
  );
  const read = () => {
    const b = readSize(bytes.value, bytesBound, "bytes", false);
    if (b.error) return b;
    const c = readSize(chunk.value, chunkBound, t("bytes per call"), true);
    if (c.error) return c;
    const params = { bytes: b.value };
    if (c.value !== null) params.chunk = c.value;
    // Sent only when off: the runner counts by default.
    if (counts && !counts.checked) params.counts = false;
    if (defaults.quiet === "always" || quiet?.checked) params.quiet = true;
    return { params };
  };
  return { form, runButton, cancelButton, read };
}

function stateSetter(root, card, status, ui) {
  return (state, text) => {
    root.dataset.state = state;
    card.dataset.state = state;
    status.dataset.state = state;
    status.textContent = text;
    const busy = state === "connecting" || state === "running";
    ui.runButton.disabled = busy;
    ui.cancelButton.disabled = !busy;
    for (const el of ui.form.querySelectorAll("input")) el.disabled = busy;
  };
}

/** One mechanism's card. */
export function mountIpc(root, { online, lab }) {
  const m = describe(root, lab);
  root.classList.add("pipebook-enhanced");
  root.dataset.state = online && lab ? "idle" : "offline";
  const copies = m.copies === null || m.copies === undefined ? "" : (m.copies === 1 ? t("{n} copy per byte", { n: m.copies }) : t("{n} copies per byte", { n: m.copies }));
  const card = h(
    "div.pipebook-card.pipebook-ipc-card",
    { role: "group", "aria-label": t("IPC mechanism: {title}", { title: m.title }) },
    h(
      "div.pipebook-card-head",
      null,
      h("span.pipebook-kind", { dataset: { kind: "ipc" } }, "IPC"),
      h("span.pipebook-step-id", null, m.id),
      h("p.pipebook-title", null, m.title),
      h("p.pipebook-summary", null, [copies, m.copy_path].filter(Boolean).join(": ")),
    ),
    surveyLine(m, surveySource(root)),
    kernelLine(m),
  );
  root.append(card);
  if (!online || !lab) {
    card.append(offlineHint(t("To run this mechanism on your own machine"), START_HINT, withNodes(t(", or run {command}."), { command: h("code", null, `pipebench ipc ${m.id}`) })));
    return;
  }
  const ui = controls(`pipebook-ipc-${m.id}`, lab, { button: t("Run this mechanism"), quiet: "choice" });
  const status = statusLine({ state: "idle" });
  const bar = h("progress.pipebook-ipc-progress", { max: 1, hidden: true });
  const table = h("table.pipebook-ipc-result");
  const summary = h("p.pipebook-ipc-summary");
  const notes = h("ul.pipebook-ipc-notes");
  const counts = h("div.pipebook-ipc-counts-box");
  const command = h("p.pipebook-sweep-command");
  const earlier = h("p.pipebook-ipc-earlier");
  const surveyRate = m.survey ? rate(m.survey.ms, m.survey.bytes) : null;
  const evidence = surveyEvidence(m, surveyRate, () => ui.read(), (busy) => {
    ui.runButton.disabled = busy;
  });
  card.append(ui.form, status, bar, table, summary, evidence.el, counts, notes, command, earlier);
  const setState = stateSetter(root, card, status, ui);
  let total = null;
  let samples = 0;
  const showProgress = (msg) => {
    samples += 1;
    root.dataset.progressSamples = String(samples);
    const p = ipcProgress(msg, total);
    status.textContent = p.text;
    bar.hidden = false;
    // No value: the browser draws an indeterminate bar.
    if (p.fraction === null) bar.removeAttribute("value");
    else bar.value = p.fraction;
  };
  const endProgress = () => {
    bar.hidden = true;
  };
  setState("idle", t("Ready: the run takes the machine for itself, after any run ahead of it."));
  const showEarlier = async () => {
    const records = await history();
    evidence.show(records);
    const e = earlierRuns(records, m.id);
    root.dataset.earlierRuns = String(e.runs);
    earlier.textContent = e.runs
      ? t("Runs of {id} on this machine so far (the runner's history): {runs}, best {best} {u_mibs} ({bytes}), latest {latest} {u_mibs}.", { u_mibs: "MiB/s", id: m.id, runs: e.runs, best: fmt.figure(e.best.mib_per_s), bytes: fmt.bytes(e.best.bytes), latest: fmt.figure(e.last.mib_per_s) })
      : "";
  };
  showEarlier().catch(() => {});

  let run = null;
  ui.form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (run || evidence.busy()) return;
    const asked = ui.read();
    if (asked.error) return setState("error", `Error: ${asked.error}.`);
    evidence.hold(true);
    fill(command, t("Same on the command line: "), h("code", null, commandLine(m.id, asked.params.bytes, asked.params.chunk, asked.params.counts)));
    setState("connecting", t("Connecting to the runner…"));
    samples = 0;
    // This run's count, not the last one's: a quiet run streams none.
    root.dataset.progressSamples = "0";
    run = startIpc(m.id, asked.params, {
      queued: (position) => setState("running", t("Waiting: place {position} in the queue.", { position })),
      started: (msg) => {
        total = msg.params?.bytes ?? null;
        const how = asked.params.quiet ? t(" (quiet: not watched, so no progress until it ends)") : "";
        setState("running", t("Moving {bytes} in calls of {chunk}{how}…", { bytes: fmt.bytes(msg.params?.bytes), chunk: fmt.bytes(msg.params?.chunk), how }));
      },
      progress: showProgress,
      result: (r) => {
        run = null;
        endProgress();
        evidence.add(r);
        evidence.hold(false);
        const out = resultTable(m, r);
        fill(table, out.table);
        summary.textContent = [out.summary, watchedText(r)].filter(Boolean).join(" ");
        if (typeof r.watched === "boolean") root.dataset.watched = String(r.watched);
        fill(notes, (r.notes || []).map((n) => runnerText(h("li", null, n))));
        fill(counts, countsTable(r));
        root.dataset.mibPerS = String(r.mib_per_s);
        root.dataset.checksum = r.checksum_ok ? "ok" : "unchecked";
        setState("done", t("Done: {rate} {u_mibs}.", { u_mibs: "MiB/s", rate: fmt.figure(r.mib_per_s) }));
      },
      // The runner answers first and saves after: read the history once it says.
      saved: (msg) => {
        if (msg.store !== "history") return;
        if (msg.ok) showEarlier().catch(() => {});
        else status.textContent = `${status.textContent} ${savedText(msg)}`;
        root.dataset.saved = msg.ok ? "yes" : "no";
      },
      cancelled: () => {
        run = null;
        endProgress();
        evidence.hold(false);
        setState("cancelled", t("Cancelled. The runner removed the run's files, queues and segments."));
      },
      error: (message) => {
        run = null;
        endProgress();
        evidence.hold(false);
        setState("error", `Error: ${message}`);
      },
      notice: (message) => {
        status.textContent = `${status.textContent} (${message})`;
      },
    });
  });
  ui.cancelButton.addEventListener("click", () => {
    if (run) {
      status.textContent = t("Cancelling…");
      run.cancel();
    }
  });
}

/** Most quiet runs one press of the card's "Run until resolved" may add. */
const MAX_SURVEY_BUDGET = 18;

/**
 * A single card's quiet runs against the survey's rate (`surveyRate`, MiB/s;
 * null hides the part): the runner's judgement of the quiet runs of one
 * configuration, and "Run until resolved" (quiet runs through the queue, one
 * at a time, in a sequential design). `read()` gives the card's parameters;
 * `holdCard(busy)` keeps the card's own Run off while these go. Returns {el,
 * show(records), add(record), hold(busy), busy()}.
 */
function surveyEvidence(m, surveyRate, read, holdCard) {
  const id = `pipebook-ipc-${m.id}-evidence`;
  const text = h("p.pipebook-ipc-evidence-text");
  const picture = h("div.pipebook-ipc-evidence-picture");
  const budget = h("input.pipebook-ipc-evidence-budget", { id: `${id}-budget`, type: "number", min: 1, max: MAX_SURVEY_BUDGET, value: 12, size: 4 });
  const until = h("button.pipebook-run-button.pipebook-ipc-evidence-until", { type: "button", "aria-label": t("Run until resolved: {id} against the survey", { id: m.id }) }, t("Run until resolved"));
  const stop = h("button.pipebook-cancel-button", { type: "button", hidden: true }, t("Stop"));
  const status = h("p.pipebook-status.pipebook-ipc-evidence-status", { role: "status", "aria-live": "polite" });
  const el = h(
    "div.pipebook-ipc-evidence",
    { "data-state": "idle", hidden: surveyRate === null },
    text,
    picture,
    h("div.pipebook-lab-row", null, h("label.pipebook-field", { for: budget.id }, h("span", null, t("Quiet runs at most")), budget), until, stop),
    designNote(h),
    status,
  );
  // The history's records and this card's own, which the history may not list yet.
  let records = [];
  const own = [];
  let config = null;
  let session = null;
  let stopped = false;
  // The newest "Run until resolved"'s judgement, shown until another configuration runs.
  let series = null;
  let asked = 0;
  const all = () => [...records, ...own];
  const words = (j) => judgedSentence(j, { a: t("Quiet runs of {id} here", { id: m.id }), verb: t("are"), b: t("the survey's rate"), unit: "quiet run", won: t("faster than the survey's machine"), lost: t("slower than the survey's machine") });
  const draw = (answer) => showJudged(answer, { text, picture, el, cls: "pipebook-ipc-evidence-interval", words, unit: "quiet run" });
  const render = () => {
    if (surveyRate === null) return;
    if (!config) config = newestQuietConfig(all(), m.id);
    const runs = config ? quietRuns(all(), config) : { quiet: [], left: 0 };
    el.dataset.quiet = String(runs.quiet.length);
    const mine = (asked += 1);
    if (series) return draw({ judgement: series });
    const sizes = config ? t(" ({bytes}{chunk}{counted})", { bytes: fmt.bytes(config.bytes), chunk: config.chunk ? t(" in calls of {chunk}", { chunk: fmt.bytes(config.chunk) }) : "", counted: config.counted ? "" : t(", kernel events not counted") }) : "";
    const left = runs.left ? (runs.left === 1 ? t(" {n} watched or unlabelled run is left out: watching costs a run.", { n: 1 }) : t(" {n} watched or unlabelled runs are left out: watching costs a run.", { n: runs.left })) : "";
    if (!runs.quiet.length) {
      fill(text, t("No quiet run of {id}{sizes} yet: the runner judges quiet runs only.{left}", { id: m.id, sizes, left }));
      fill(picture);
      delete el.dataset.verdict;
      return;
    }
    judge({ paired: true, a: runs.quiet, b: figureSide(runs.quiet, surveyRate) }).then((answer) => {
      if (mine !== asked) return;
      draw(answer);
      if (answer.judgement) text.append(t(" Runs of {id}{sizes}.{left}", { id: m.id, sizes, left }));
    });
  };
  let held = false;
  const hold = (busy) => {
    held = busy;
    until.disabled = busy;
  };
  const add = (r) => {
    if (r?.kind !== "ipc") return;
    own.push(r);
    // A quiet run names the configuration compared from now on.
    if (r.watched === false && r.checksum_ok === true) {
      const next = ipcConfigOf(r);
      if (JSON.stringify(next) !== JSON.stringify(config)) series = null;
      config = next;
    }
    if (el.dataset.state !== "busy") render();
  };
  const oneRun = (params, n, most) =>
    new Promise((resolve) => {
      const where = (what) => fill(status, t("Quiet run {n} of at most {most}: {what}", { n, most, what }));
      session = startIpc(m.id, params, {
        connecting: () => where("connecting…"),
        queued: (position) => where(t("waiting for place {position} in the queue…", { position })),
        started: () => where(t("running (not watched)…")),
        result: (r) => {
          add(r);
          resolve(r.watched === false && r.checksum_ok === true && r.mib_per_s > 0 ? { ok: true, mib: r.mib_per_s } : { ok: false, message: t("Error: a run came back without a verified figure.") });
        },
        cancelled: () => resolve({ ok: false, message: n === 2 ? t("Stopped after {n} quiet run.", { n: 1 }) : t("Stopped after {n} quiet runs.", { n: n - 1 }) }),
        error: (message) => resolve({ ok: false, message: `Error: ${message}` }),
      });
    });
  until.addEventListener("click", async () => {
    if (held || el.dataset.state === "busy") return;
    const planned = await pairedPlan(Number(budget.value), MAX_SURVEY_BUDGET, t("Quiet runs at most"));
    if (!planned.plan) return fill(status, planned.message);
    const plan = planned.plan;
    const form = read();
    if (form.error) return fill(status, `Error: ${form.error}.`);
    const params = { ...form.params, quiet: true };
    el.dataset.state = "busy";
    until.disabled = true;
    stop.hidden = false;
    stopped = false;
    holdCard(true);
    fill(status, planSentence(plan, "quiet run"));
    // Only this sequence's runs count: earlier ones were already looked at.
    const runs = [];
    const done = await runSequence(plan, {
      count: () => runs.length,
      stopped: () => stopped,
      addOne: async () => {
        const one = await oneRun(params, runs.length + 1, plan.at.at(-1));
        session = null;
        if (one.ok) runs.push(one.mib);
        return one;
      },
      judgeAt: (look, looks) => judge({ paired: true, a: runs, b: figureSide(runs, surveyRate), look, looks }),
      onLook: (j) => {
        series = j;
        draw({ judgement: j });
      },
    });
    fill(status, endingSentence(done, "quiet run"));
    el.dataset.state = "idle";
    until.disabled = false;
    stop.hidden = true;
    holdCard(false);
  });
  stop.addEventListener("click", () => {
    stopped = true;
    session?.cancel();
  });
  return {
    el,
    show: (history) => {
      records = Array.isArray(history) ? history : [];
      render();
    },
    add,
    hold,
    busy: () => el.dataset.state === "busy",
  };
}

/** The "all mechanisms" card: one queued run per mechanism, in table order. */
export function mountIpcMatrix(root, { online, lab }) {
  root.classList.add("pipebook-enhanced");
  root.dataset.state = online && lab ? "idle" : "offline";
  root.dataset.rows = "0";
  const title = t("Every mechanism on this machine beside the survey");
  const card = h(
    "div.pipebook-card.pipebook-ipc-card",
    { role: "group", "aria-label": title },
    h(
      "div.pipebook-card-head",
      null,
      h("span.pipebook-kind", { dataset: { kind: "ipc" } }, t("IPC matrix")),
      h("p.pipebook-title", null, title),
      h("p.pipebook-summary", null, t("Each mechanism runs as its own queued run, one after another, quiet (not watched: watching costs a run, and these figures are compared). Survey: {source}.", { source: SURVEY_SOURCE })),
    ),
  );
  root.append(card);
  if (!online || !lab) {
    card.append(offlineHint(t("To run every mechanism on your own machine"), START_HINT, withNodes(t(", or run {command}."), { command: h("code", null, "pipebench ipc") })));
    return;
  }
  const mechanisms = lab.mechanisms.filter((m) => m.pair);
  const ui = controls("pipebook-ipc-matrix", lab, { button: t("Run all mechanisms"), quiet: "always" });
  const status = statusLine({ state: "idle" });
  const chart = new IpcChart(title);
  chart.el.hidden = true; // until the first run starts
  const table = h("table.pipebook-sweep-table");
  // Every MiB/s of a quiet run this page made, by mechanism: what "one against
  // another" reads. A run that does not say it was quiet is left out.
  // All of one size (bytes moved, kernel events counted or not): runs at
  // another size start the set afresh, so no ratio mixes two sizes. (Bytes per
  // call are each mechanism's own default unless typed, so they are not keyed.)
  const runsOf = new Map();
  let runsAt = null;
  const keep = (id, r) => {
    const mib = r.mib_per_s;
    if (!(mib > 0) || r.watched !== false) return;
    const c = ipcConfigOf(r);
    const at = c ? `${c.bytes}/${c.counted}` : "";
    if (at !== runsAt) {
      runsOf.clear();
      runsAt = at;
    }
    if (!runsOf.has(id)) runsOf.set(id, []);
    runsOf.get(id).push(mib);
  };
  // A run of the part below adds to a row's ÷ survey too, once the matrix has rows.
  const keepAndRedraw = (id, r) => {
    keep(id, r);
    if (rows.length) redraw();
  };
  const versus = versusSection(mechanisms, keepAndRedraw, runsOf, () => ui.read(), (busy) => {
    ui.runButton.disabled = busy;
  });
  card.append(ui.form, status, chart.el, table, versus.el);
  const setState = stateSetter(root, card, status, ui);
  setState("idle", t("Ready: {n} producer/consumer mechanisms.", { n: mechanisms.length }));

  let rows = [];
  const redraw = () => {
    chart.el.hidden = false;
    chart.draw(rows);
    root.dataset.rows = String(rows.filter((r) => fmt.isNumber(r.mine)).length);
    fill(
      table,
      h(
        "tr",
        null,
        h("th", null, t("mechanism")),
        h("th", null, t("copies")),
        h("th", null, t("{u_mibs} here", { u_mibs: "MiB/s" })),
        h("th", null, t("survey {u_mibs}", { u_mibs: "MiB/s" })),
        h("th", { title: t("Your quiet runs' median over the survey's rate, with the runner's 95% interval once there are six") }, t("÷ survey")),
      ),
      rows.map((r) => {
        // This page's quiet runs of the row's mechanism, at the matrix's size.
        const mine = runsOf.get(r.id) ?? [];
        const cell = fmt.isNumber(r.mine) ? surveyCell(mine, r.survey) : { text: "—", comparison: null };
        const td = h("td.pipebook-ipc-vs-survey", null, cell.text);
        // The runner's interval once the runs can have one; the cell shows the ratio meanwhile.
        if (fmt.isNumber(r.mine) && fmt.isNumber(r.survey) && mine.length) {
          judge({ paired: true, a: mine, b: figureSide(mine, r.survey) }).then((answer) => {
            const judged = surveyCell(mine, r.survey, answer.judgement ?? null);
            fill(td, judged.text);
            if (judged.comparison) td.dataset.verdict = judged.comparison.verdict;
          });
        }
        return h("tr", { dataset: { mechanism: r.id } }, h("td", null, r.id), h("td", null, r.copies ?? "—"), h("td", null, fmt.figure(r.mine)), h("td", null, fmt.figure(r.survey)), td);
      }),
    );
  };

  let run = null;
  let stopped = false;
  ui.form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (run) return;
    const asked = ui.read();
    if (asked.error) return setState("error", `Error: ${asked.error}.`);
    stopped = false;
    versus.hold(true);
    rows = mechanisms.map((m) => ({ id: m.id, copies: m.copies, mine: null, survey: m.survey ? rate(m.survey.ms, m.survey.bytes) : null }));
    redraw();
    const next = (index) => {
      if (stopped) return;
      if (index >= mechanisms.length) {
        run = null;
        versus.hold(false);
        return setState("done", `Done: ${mechanisms.length} mechanisms.`);
      }
      const m = mechanisms[index];
      setState("running", t("Connecting for {id} ({n} of {total})…", { id: m.id, n: index + 1, total: mechanisms.length }));
      let total = null;
      const label = t("{id} ({n} of {total})", { id: m.id, n: index + 1, total: mechanisms.length });
      run = startIpc(m.id, asked.params, {
        queued: (position) => setState("running", t("{id}: waiting, place {position} in the queue.", { id: m.id, position })),
        started: (msg) => {
          total = msg.params?.bytes ?? null;
          setState("running", t("Running {label}, quiet…", { label }));
        },
        progress: (msg) => {
          status.textContent = `${label}: ${ipcProgress(msg, total).text}`;
        },
        result: (r) => {
          rows[index].mine = r.mib_per_s;
          keep(m.id, r);
          versus.show();
          redraw();
          next(index + 1);
        },
        cancelled: () => {
          run = null;
          versus.hold(false);
          setState("cancelled", t("Cancelled at {id}. Nothing is left running.", { id: m.id }));
        },
        error: (message) => {
          // One mechanism refused (e.g. a System V limit): say so and go on.
          rows[index].error = message;
          status.textContent = `${m.id}: ${message}`;
          next(index + 1);
        },
      });
    };
    next(0);
  });
  ui.cancelButton.addEventListener("click", () => {
    if (run) {
      stopped = true;
      status.textContent = t("Cancelling…");
      run.cancel();
    }
  });
}

/** Most pairs one "Run until resolved" of two mechanisms may run: three looks of six. */
const MAX_VERSUS_PAIRS = 18;

/**
 * One mechanism against another, from `runsOf` (id to the MiB/s of its quiet
 * runs, which `keep(id, result)` adds to): the runner's judgement of the two
 * sets, and "Run until resolved" (quiet runs in pairs, A B then B A, in a
 * sequential design judged by the runner at each planned look).
 * `read()` gives the matrix's parameters; `holdMatrix(busy)` keeps the matrix's
 * own button off while these runs go. Returns {el, show(), hold(busy)}.
 */
function versusSection(mechanisms, keep, runsOf, read, holdMatrix) {
  const id = "pipebook-ipc-versus";
  const pick = (cls, chosen) =>
    h(`select.${cls}`, { id: `${id}-${cls.slice(-1)}` }, mechanisms.map((m) => h("option", { value: m.id, selected: m.id === chosen }, m.id)));
  const ids = mechanisms.map((m) => m.id);
  const a = pick("pipebook-ipc-versus-a", ids.includes("pipe-rw") ? "pipe-rw" : ids[0]);
  const b = pick("pipebook-ipc-versus-b", ids.includes("pipe-splice") ? "pipe-splice" : ids.find((x) => x !== a.value) ?? ids[0]);
  const budget = h("input.pipebook-ipc-versus-budget", { id: `${id}-budget`, type: "number", min: 1, max: MAX_VERSUS_PAIRS, value: 12, size: 4 });
  const until = h("button.pipebook-cancel-button.pipebook-ipc-versus-until", { type: "button" }, t("Run until resolved"));
  const text = h("p.pipebook-ipc-versus-text");
  const picture = h("div.pipebook-ipc-versus-picture");
  const status = h("p.pipebook-status.pipebook-ipc-versus-status", { role: "status", "aria-live": "polite" });
  const field = (input, label) => h("label.pipebook-field", { for: input.id }, h("span", null, label), input);
  const el = h(
    "div.pipebook-ipc-versus",
    { "data-state": "idle" },
    h("p.pipebook-summary", null, t("One mechanism against another: the ratio of their medians over the quiet runs this page made (not watched: watching costs a run), as the runner judges them.")),
    h("div.pipebook-lab-row", null, field(a, t("Mechanism A")), field(b, t("Mechanism B")), field(budget, t("Pairs at most")), until),
    designNote(h),
    text,
    picture,
    status,
  );
  // The newest "Run until resolved"'s judgement, shown until the mechanisms change.
  let series = null;
  let asked = 0;
  // A sequence's judgement is over pairs; this page's runs of each, two sets.
  const words = (j) => judgedSentence(j, { a: a.value, b: b.value, unit: j.method === "signed_rank" ? "pair" : "quiet run", won: t("{id} is faster here", { id: a.value }), lost: t("{id} is slower here", { id: a.value }) });
  const draw = (answer) => showJudged(answer, { text, picture, el, cls: "pipebook-ipc-versus-interval", words, unit: "quiet run" });
  const show = () => {
    const mine = (asked += 1);
    if (el.dataset.state === "busy") return;
    const [ra, rb] = [runsOf.get(a.value) ?? [], runsOf.get(b.value) ?? []];
    if (a.value === b.value) fill(text, t("Pick two different mechanisms."));
    else if (series) return draw({ judgement: series });
    else if (!ra.length || !rb.length) fill(text, t("{a} has {na} quiet runs here and {b} {nb}: with quiet runs of each, the runner judges how they compare.", { a: a.value, na: ra.length, b: b.value, nb: rb.length }));
    else {
      judge({ paired: false, a: ra, b: rb }).then((answer) => {
        if (mine === asked) draw(answer);
      });
      return;
    }
    fill(picture);
    delete el.dataset.verdict;
  };
  let held = false;
  const hold = (busy) => {
    held = busy;
    until.disabled = busy;
  };
  for (const s of [a, b])
    s.addEventListener("change", () => {
      series = null;
      show();
    });
  const oneRun = (mech, params) =>
    new Promise((resolve) => {
      startIpc(mech, params, {
        result: (r) => {
          keep(mech, r);
          resolve(r.mib_per_s > 0 ? { ok: true, mib: r.mib_per_s } : { ok: false, message: t("Error ({id}): no figure.", { id: mech }) });
        },
        cancelled: () => resolve({ ok: false, message: "Stopped." }),
        error: (message) => resolve({ ok: false, message: t("Error ({id}): {message}", { id: mech, message }) }),
      });
    });
  until.addEventListener("click", async () => {
    if (held || el.dataset.state === "busy") return;
    if (a.value === b.value) return fill(status, t("Pick two different mechanisms."));
    const planned = await pairedPlan(Math.round(Number(budget.value)), MAX_VERSUS_PAIRS, t("Pairs at most"));
    if (!planned.plan) return fill(status, planned.message);
    const plan = planned.plan;
    const form = read();
    if (form.error) return fill(status, `Error: ${form.error}.`);
    const [ma, mb] = [a.value, b.value];
    el.dataset.state = "busy";
    until.disabled = true;
    holdMatrix(true);
    const pairs = { a: [], b: [] };
    const params = { ...form.params, quiet: true };
    const done = await runSequence(plan, {
      count: () => pairs.a.length,
      // A B, then B A: the order balances what drifts over the runs.
      addOne: async () => {
        const n = pairs.a.length;
        fill(status, `${planSentence(plan, "pair")} ${t("Pair {n} of at most {most}, quiet…", { n: n + 1, most: plan.at.at(-1) })}`);
        const order = n % 2 === 0 ? [ma, mb] : [mb, ma];
        const got = {};
        for (const mech of order) {
          const one = await oneRun(mech, params);
          if (!one.ok) return one;
          got[mech] = one.mib;
        }
        pairs.a.push(got[ma]);
        pairs.b.push(got[mb]);
        return { ok: true };
      },
      judgeAt: (look, looks) => judge({ paired: true, a: pairs.a, b: pairs.b, look, looks }),
      onLook: (j) => {
        series = j;
        draw({ judgement: j });
      },
    });
    fill(status, endingSentence(done, "pair"));
    el.dataset.state = "idle";
    until.disabled = false;
    holdMatrix(false);
  });
  show();
  return { el, show, hold };
}
