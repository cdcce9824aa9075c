// Past the article's cards. <div class="pipebook-tune" data-step=ID> searches bytes per
// call × pipe capacity for a step and draws the search as a heat map while it runs (with
// a table for screen readers), then offers the best configuration as a run card of its
// own (tuned-STEP); <div class="pipebook-tool"> runs a program of the runner's tool table
// against pipebench's end; <div class="pipebook-shared-pipe"> puts many writers and readers
// on one pipe.
// Hooks for tests: button.pipebook-tune-button, svg.pipebook-tune-heat
// (rect.pipebook-tune-cell[data-median]), table.pipebook-tune-table,
// .pipebook-tune-variant .pipebook-run, p.pipebook-tune-kept; select.pipebook-tool-select,
// select.pipebook-tool-side, button.pipebook-tool-button, table.pipebook-tool-result;
// button.pipebook-shared-button, input.pipebook-shared-profile, table.pipebook-shared-result,
// details.pipebook-shared-profile-point (a point's profile); on each root data-state,
// and data-trials / data-best / data-kept ("yes" or why not, the runner's kind) (tune),
// data-bytes (tool), data-points / data-torn / data-profiles (shared).

import { statusLine } from "./announce.js";
import { START_HINT, toolTable, tunedVariants } from "./api.js";
import { fill, h, offlineHint, svg } from "./dom.js";
import * as fmt from "./format.js";
import { beginSearch, describeTune, foldTrial, keptNote, layoutHeat, pageSettings, pagesLabel, searchRows, sharedRow, toolRows } from "./past/figures.js";
import { startSharedPipe, startTool, startTune } from "./runner.js";
import { parseSize } from "./sizes.js";
import { renderProfile } from "./profile.js";
import { mountWidget } from "./widget.js";
import { runnerText, t, withNodes } from "./i18n.js";

const W = 560;
const H = 240;

function head(kind, title, id) {
  return h(
    "div.pipebook-card-head",
    null,
    h("span.pipebook-kind", { dataset: { kind: "past" } }, kind),
    id ? h("span.pipebook-step-id", null, id) : null,
    h("p.pipebook-title", null, title),
  );
}

function field(input, text) {
  return h("label.pipebook-field", { for: input.id }, h("span", null, text), input);
}

/** Buttons, status and the busy state every card of this family shares. */
function cardControls(root, form, runButton, cancelButton) {
  const status = statusLine({ state: "idle" });
  const setState = (state, text) => {
    root.dataset.state = state;
    status.dataset.state = state;
    status.textContent = text;
    const busy = state === "connecting" || state === "running";
    runButton.disabled = busy;
    cancelButton.disabled = !busy;
    for (const el of form.querySelectorAll("input, select")) el.disabled = busy;
  };
  return { status, setState };
}

/** One heat map per page setting the search tries (one map where it keeps the step's own
 * pages), all coloured on one scale. */
function drawMaps(box, search, step) {
  const settings = pageSettings(search);
  const maps = settings.map((huge) => {
    const what = pagesLabel(huge);
    const map = svg("svg", {
      class: "pipebook-tune-heat",
      viewBox: `0 0 ${W} ${H}`,
      role: "img",
      "data-pages": huge === null ? "own" : huge ? "huge" : "small",
      "aria-label": t("Heat map of the search of {step}{with}: bytes per call across, pipe capacity down, darker is faster; the table below has the figures", { step, with: what ? t(" with {what}", { what }) : "" }),
    });
    drawHeat(map, search, huge);
    return settings.length > 1 ? h("figure.pipebook-tune-map", null, h("figcaption", null, t("The writer's buffers in {what}", { what })), map) : map;
  });
  box.replaceChildren(...maps);
}

/** The heat map of a search's cells of one page setting: one rect per configuration,
 * coloured by its median so far. */
function drawHeat(el, search, huge) {
  const out = layoutHeat(search, W, H, undefined, huge);
  el.replaceChildren();
  const title = svg("title");
  const what = pagesLabel(huge);
  title.textContent = out.measured
    ? t("Search so far{what}: {n} configurations measured, {low} to {high} {u_gibs} over the whole search (darker is faster)", { u_gibs: "GiB/s", what: what ? `, ${what}` : "", n: out.measured, low: fmt.gib(out.lo), high: fmt.gib(out.hi) })
    : t("Search{what}: no configuration measured yet", { what: what ? `, ${what}` : "" });
  el.append(title);
  for (const c of out.cells) {
    const rect = svg("rect", {
      class: `pipebook-tune-cell${c.best ? " pipebook-tune-best" : ""}`,
      x: c.x.toFixed(1),
      y: c.y.toFixed(1),
      width: Math.max(1, c.w - 2).toFixed(1),
      height: Math.max(1, c.h - 2).toFixed(1),
      fill: c.fill ?? "none",
      "data-buf": c.buf,
      "data-pipe": c.pipe ?? "",
      "data-pages": c.huge === null || c.huge === undefined ? "own" : c.huge ? "huge" : "small",
      ...(fmt.isNumber(c.median) ? { "data-median": c.median } : {}),
    });
    const tip = svg("title");
    tip.textContent = t("{bytes} per call, {pipe} pipe{what}: {figure}", { bytes: fmt.bytes(c.buf), pipe: c.pipe === null ? t("default") : fmt.bytes(c.pipe), what: what ? `, ${what}` : "", figure: fmt.isNumber(c.median) ? `${fmt.gib(c.median)} GiB/s` : t("not run yet") });
    rect.append(tip);
    const text = svg("text", {
      // An empty cell shows the page's own background: its mark takes the text colour.
      class: !c.fill ? "pipebook-tune-empty" : c.darkText ? "pipebook-tune-label" : "pipebook-tune-label pipebook-tune-label-light",
      x: (c.x + c.w / 2).toFixed(1),
      y: (c.y + c.h / 2 + 4).toFixed(1),
      "text-anchor": "middle",
    });
    text.textContent = c.best ? `${c.label} ★` : c.label;
    el.append(rect, text);
  }
  for (const col of out.columns) {
    const tick = svg("text", { x: col.x.toFixed(1), y: H - 22, "text-anchor": "middle" });
    tick.textContent = col.label;
    el.append(tick);
  }
  const xName = svg("text", { x: 80 + (W - 80) / 2, y: H - 4, "text-anchor": "middle" });
  xName.textContent = t("bytes per call");
  el.append(xName);
  for (const row of out.rows) {
    const tick = svg("text", { x: 72, y: (row.y + 4).toFixed(1), "text-anchor": "end" });
    tick.textContent = row.label;
    el.append(tick);
  }
  const yName = svg("text", { x: 4, y: 12 });
  yName.textContent = t("pipe");
  el.append(yName);
  return out.measured;
}

function searchTable(table, search) {
  fill(
    table,
    h("caption", null, t("Every configuration of the search ({u_gibs}, median of its runs so far)", { u_gibs: "GiB/s" })),
    h("tr", null, [t("bytes per call"), t("pipe"), t("writer's pages"), t("median {u_gibs}", { u_gibs: "GiB/s" }), t("runs"), t("note")].map((name) => h("th", { scope: "col" }, name))),
    searchRows(search).map((r) => h("tr", null, h("td", null, r.perCall), h("td", null, r.pipe), h("td", null, r.pages), h("td", null, r.median), h("td", null, String(r.runs)), h("td", null, r.note))),
  );
}

/** The tuned variant's catalog entry: its base step at the sizes the search found, nothing else to choose. */
function variantEntry(base, variant) {
  const fixed = (p, value) => ({ ...p, default: value, min: value, max: value });
  return {
    ...(base || {}),
    id: variant.id,
    title: t("{title}, tuned on this machine", { title: base?.title || variant.base }),
    summary: t("{bytes} per call into a {pipe} pipe{pages}: the fastest configuration a search found on this machine (median {median} {u_gibs} in its rounds). Its runs are kept under {id}, apart from {base}.", { u_gibs: "GiB/s", bytes: fmt.bytes(variant.buf_size), pipe: fmt.bytes(variant.pipe_size), pages: typeof variant.huge_pages === "boolean" ? t(", the writer's buffers in {what}", { what: pagesLabel(variant.huge_pages) }) : "", median: fmt.gib(variant.median), id: variant.id, base: variant.base }),
    kind: "variant",
    article_gib_s: null,
    reference_gib_s: null,
    params: (base?.params || []).map((p) => (p.name === "buf_size" ? fixed(p, variant.buf_size) : p.name === "pipe_size" ? fixed(p, variant.pipe_size) : p)),
  };
}

function showVariant(box, base, variant) {
  const entry = variantEntry(base, variant);
  const el = h("div.pipebook-run", { dataset: { step: variant.id, title: entry.title, summary: entry.summary, kind: "variant" } });
  fill(box, h("p", null, t("Run the best configuration again as a step of its own:")), el);
  mountWidget(el, { online: true, catalogEntry: entry });
}

/** The tuning card of one step. */
export function mountTune(root, { online, catalogEntry }) {
  const step = root.dataset.step;
  root.classList.add("pipebook-enhanced");
  root.dataset.state = online ? "idle" : "offline";
  root.dataset.trials = "0";
  const title = t("Tune {step}: bytes per call × pipe capacity on this machine", { step });
  const card = h("div.pipebook-card.pipebook-tune-card", { role: "group", "aria-label": title }, head(t("Tuning"), title, step));
  root.append(card);
  if (!online) {
    card.append(offlineHint(t("To search for the fastest configuration on your own machine"), START_HINT, withNodes(t(", or run {command}."), { command: h("code", null, `pipebench tune ${step}`) })));
    return;
  }
  const fid = `pipebook-tune-${step}`;
  // The runner's default and bounds, written by the {{#tune}} directive.
  const budget = h("input.pipebook-tune-budget", { id: `${fid}-budget`, type: "number", value: root.dataset.budget, min: root.dataset.budgetMin, max: root.dataset.budgetMax, step: 1, inputmode: "decimal" });
  const runButton = h("button.pipebook-run-button.pipebook-tune-button", { type: "submit" }, t("Search"));
  const cancelButton = h("button.pipebook-cancel-button", { type: "button", disabled: true }, t("Cancel"));
  const form = h("form.pipebook-controls", { novalidate: true }, h("label.pipebook-field", { for: budget.id }, h("span", null, t("Budget")), h("span.pipebook-input-unit", null, budget, h("span", null, "s"))), h("div.pipebook-buttons", null, runButton, cancelButton));
  const { status, setState } = cardControls(root, form, runButton, cancelButton);
  const bar = h("progress.pipebook-ipc-progress", { max: 1, hidden: true, "aria-label": t("Runs of the search done") });
  const heat = h("div.pipebook-tune-maps");
  const table = h("table.pipebook-tune-table");
  const summary = h("p.pipebook-tune-summary");
  const command = h("p.pipebook-sweep-command");
  // Whether the best found is kept for the runner's next start (its `saved {store: "tuned"}`).
  const kept = h("p.pipebook-tune-kept");
  const variantBox = h("div.pipebook-tune-variant");
  // The map joins the card with its grid: an empty box would print as one.
  card.append(form, status, bar, summary, command, table, kept, variantBox);
  setState("idle", t("Ready: the search takes two CPUs for the whole budget, after any run ahead of it."));
  // A variant found earlier since the runner started can run at once.
  tunedVariants().then((found) => {
    const v = found.find((x) => x.id === `tuned-${step}`);
    if (v && !variantBox.childElementCount) showVariant(variantBox, catalogEntry, v);
  });
  let run = null;
  let search = null;
  const redraw = () => {
    root.dataset.trials = String(search.done);
    drawMaps(heat, search, step);
    if (!heat.isConnected) bar.after(heat);
    searchTable(table, search);
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (run) return;
    const seconds = Number(budget.value);
    if (!fmt.isNumber(seconds) || seconds < 2 || seconds > 120) return setState("error", t("Error: the budget must be {min} to {max} seconds.", { min: 2, max: 120 }));
    fill(summary);
    fill(kept);
    fill(command, t("Same on the command line: "), h("code", null, `pipebench tune ${step} --budget ${seconds}`));
    delete root.dataset.best;
    delete root.dataset.kept;
    setState("connecting", t("Connecting to the runner…"));
    run = startTune(step, seconds, {
      queued: (position) => setState("running", t("Waiting: place {position} in the queue.", { position })),
      started: (msg) => {
        search = beginSearch(msg);
        redraw();
        bar.hidden = false;
        bar.value = 0;
        setState("running", t("Searching: {n} configurations and the step's own, {rounds} rounds of {seconds} {u_s} runs…", { u_s: "s", n: msg.cells.length, rounds: msg.rounds, seconds: msg.seconds_per_run.toFixed(2) }));
      },
      trial: (msg) => {
        if (!search) return;
        search = foldTrial(search, msg);
        redraw();
        bar.value = msg.of ? msg.index / msg.of : 0;
        const pages = typeof msg.best?.huge_pages === "boolean" ? `, ${pagesLabel(msg.best.huge_pages)}` : "";
        const best = msg.best ? t(" Fastest so far: {bytes} per call, {pipe} pipe{pages}, {median} {u_gibs}.", { u_gibs: "GiB/s", bytes: fmt.bytes(msg.best.buf_size), pipe: fmt.bytes(msg.best.pipe_size), pages, median: fmt.gib(msg.best.median) }) : "";
        status.textContent = t("Run {index} of {of}: {gib} {u_gibs}.{best}", { u_gibs: "GiB/s", index: msg.index, of: msg.of, gib: fmt.gib(msg.gib_per_s), best });
      },
      result: (r) => {
        run = null;
        bar.hidden = true;
        summary.textContent = describeTune(r);
        fill(command, t("Run it again on the command line: "), h("code", null, r.best.argv.join(" ")));
        root.dataset.best = r.best.id;
        setState("done", t("Done: {id} is runnable below.", { id: r.best.id }));
        showVariant(variantBox, catalogEntry, { id: r.best.id, base: r.best.base, buf_size: r.best.buf_size, pipe_size: r.best.pipe_size, huge_pages: r.best.huge_pages, median: r.best.summary.median });
        for (const w of r.warnings || []) summary.append(runnerText(h("span.pipebook-warning", null, ` ${w}.`)));
      },
      saved: (msg) => {
        if (msg.store !== "tuned") return;
        const note = keptNote(msg);
        root.dataset.kept = note.kept;
        kept.className = `pipebook-tune-kept${note.kept === "yes" ? "" : " pipebook-warning"}`;
        fill(kept, note.text);
        if (!note.runnable) {
          fill(variantBox);
          delete root.dataset.best;
        }
      },
      cancelled: () => {
        run = null;
        bar.hidden = true;
        setState("cancelled", t("Cancelled: the run under way was stopped."));
      },
      error: (message) => {
        run = null;
        bar.hidden = true;
        setState("error", `Error: ${message}`);
      },
    });
  });
  cancelButton.addEventListener("click", () => {
    if (run) {
      status.textContent = t("Cancelling…");
      run.cancel();
    }
  });
}

/** The tool card: one program of the runner's table against pipebench's end. */
export async function mountTool(root, { online }) {
  root.classList.add("pipebook-enhanced");
  root.dataset.state = online ? "idle" : "offline";
  const title = t("A program you pipe through, measured against pipebench's end");
  const card = h("div.pipebook-card.pipebook-tool-card", { role: "group", "aria-label": title }, head(t("Tool"), title));
  root.append(card);
  if (!online) {
    card.append(offlineHint(t("To measure yes, cat, dd and others on your own machine"), START_HINT, withNodes(t(", or run {command}."), { command: h("code", null, "pipebench tool cat") })));
    return;
  }
  const table = (await toolTable()) || [];
  const present = table.filter((tool) => tool.present);
  const missing = table.filter((tool) => !tool.present);
  const choice = h("select.pipebook-tool-select", { id: "pipebook-tool-select" }, present.map((tool) => h("option", { value: tool.id }, tool.title)));
  const side = h("select.pipebook-tool-side", { id: "pipebook-tool-side" }, h("option", { value: "writer" }, t("writes into the pipe")), h("option", { value: "reader" }, t("reads from the pipe")));
  const size = h("input.pipebook-tool-bytes", { id: "pipebook-tool-bytes", type: "text", value: root.dataset.bytes || "64MiB", size: 8, spellcheck: "false" });
  const runButton = h("button.pipebook-run-button.pipebook-tool-button", { type: "submit" }, t("Run the tool"));
  const cancelButton = h("button.pipebook-cancel-button", { type: "button", disabled: true }, t("Cancel"));
  const form = h("form.pipebook-controls", { novalidate: true }, field(choice, t("Program")), field(side, t("It")), field(size, t("Bytes")), h("div.pipebook-buttons", null, runButton, cancelButton));
  const { status, setState } = cardControls(root, form, runButton, cancelButton);
  const result = h("table.pipebook-tool-result");
  const note = h("p.pipebook-tool-missing", null, missing.length ? t("Not installed here, so not offered: {programs}.", { programs: missing.map((tool) => tool.program).join(", ") }) : "");
  card.append(form, status, result, note);
  const sidesOf = () => table.find((tool) => tool.id === choice.value)?.sides || [];
  const syncSide = () => {
    for (const option of side.options) option.disabled = !sidesOf().includes(option.value);
    if (side.selectedOptions[0]?.disabled) side.value = sidesOf()[0] || "writer";
  };
  choice.addEventListener("change", syncSide);
  syncSide();
  setState("idle", present.length ? t("Ready: the tool and pipebench's end take two CPUs, after any run ahead of them.") : t("No program of the table is installed here."));
  let run = null;
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (run || !choice.value) return;
    const bytes = parseSize(size.value);
    if (bytes === null || bytes < 1) return setState("error", t("Error: “{value}” is not a size such as {example}.", { value: size.value, example: "64MiB" }));
    fill(result);
    delete root.dataset.bytes;
    setState("connecting", t("Connecting to the runner…"));
    run = startTool(choice.value, side.value, bytes, {
      queued: (position) => setState("running", t("Waiting: place {position} in the queue.", { position })),
      progress: (msg) => setState("running", `${fmt.bytes(msg.bytes)} so far…`),
      result: (r) => {
        run = null;
        fill(result, h("caption", null, r.title), toolRows(r).map(([label, value]) => h("tr", null, h("th", { scope: "row" }, label), h("td", null, value))));
        for (const w of r.warnings || []) result.append(h("tr", null, h("th", { scope: "row" }, t("Note")), runnerText(h("td.pipebook-warning", null, w))));
        root.dataset.bytes = String(r.bytes);
        setState("done", t("Done: {gib} {u_gibs}, {bytes} verified by pipebench's end.", { u_gibs: "GiB/s", gib: fmt.gib(r.gib_per_s), bytes: fmt.bytes(r.bytes) }));
      },
      cancelled: () => {
        run = null;
        setState("cancelled", t("Cancelled: the tool and pipebench's end were stopped."));
      },
      error: (message) => {
        run = null;
        setState("error", `Error: ${message}`);
      },
    });
  });
  cancelButton.addEventListener("click", () => {
    if (run) {
      status.textContent = t("Cancelling…");
      run.cancel();
    }
  });
}

const listOf = (text) => text.split(",").map((s) => s.trim()).filter(Boolean);

/** The shared-pipe card: writers × readers × message sizes on one pipe. */
export function mountSharedPipe(root, { online }) {
  root.classList.add("pipebook-enhanced");
  root.dataset.state = online ? "idle" : "offline";
  const title = t("Many writers and readers on one pipe: throughput and torn messages");
  const card = h("div.pipebook-card.pipebook-shared-card", { role: "group", "aria-label": title }, head(t("Shared pipe"), title));
  root.append(card);
  if (!online) {
    card.append(offlineHint(t("To share one pipe between many processes on your own machine"), START_HINT, withNodes(t(", or run {command}."), { command: h("code", null, "pipebench shared-pipe --writers 1,2,4 --readers 1,2 --msg-size 4KiB,64KiB") })));
    return;
  }
  const input = (cls, id, value) => h(`input.${cls}`, { id, type: "text", value, size: 10, spellcheck: "false" });
  const writers = input("pipebook-shared-writers", "pipebook-shared-writers", root.dataset.writers || "1,2,4");
  const readers = input("pipebook-shared-readers", "pipebook-shared-readers", root.dataset.readers || "1,2");
  const sizes = input("pipebook-shared-sizes", "pipebook-shared-sizes", root.dataset.sizes || "4KiB,64KiB");
  const profile = h("input.pipebook-shared-profile", { id: "pipebook-shared-profile", type: "checkbox" });
  const runButton = h("button.pipebook-run-button.pipebook-shared-button", { type: "submit" }, t("Share the pipe"));
  const cancelButton = h("button.pipebook-cancel-button", { type: "button", disabled: true }, t("Cancel"));
  const form = h(
    "form.pipebook-controls",
    { novalidate: true },
    field(writers, t("Writers")),
    field(readers, t("Readers")),
    field(sizes, t("Message sizes")),
    h("label.pipebook-field.pipebook-check", { for: profile.id }, profile, h("span", null, t("Profile each point (perf: where the writers' and readers' time goes)"))),
    h("div.pipebook-buttons", null, runButton, cancelButton),
  );
  const { status, setState } = cardControls(root, form, runButton, cancelButton);
  const table = h("table.pipebook-shared-result");
  const notes = h("ul.pipebook-notes");
  const profiles = h("div.pipebook-shared-profiles");
  card.append(form, status, table, notes, profiles);
  setState("idle", t("Ready: every point runs its writers and readers as processes of their own."));
  let run = null;
  let points = [];
  const redraw = () => {
    const rows = points.map(sharedRow);
    root.dataset.points = String(points.length);
    // Torn messages where POSIX promises none: at or below PIPE_BUF.
    root.dataset.torn = String(points.filter((p) => p.atomic).reduce((n, p) => n + p.torn_messages, 0));
    fill(
      table,
      h("caption", null, t("Each point: {u_gibs} over all readers, what each writer got through, messages torn", { u_gibs: "GiB/s" })),
      h(
        "tr",
        null,
        [t("writers"), t("readers"), t("message"), "GiB/s", t("received per writer"), t("torn"), t("sleeps (writers / readers)"), t("context switches (writers / readers)"), t("wakeups issued (writers / readers)"), t("totals add up")].map((name) =>
          h("th", { scope: "col" }, name),
        ),
      ),
      rows.map((r) =>
        h("tr", null, h("td", null, r.writers), h("td", null, r.readers), h("td", null, r.size), h("td", null, r.gib), h("td", null, r.perWriter), h("td", null, r.torn), h("td", null, r.sleeps), h("td", null, r.switches), h("td", null, r.wakeups), h("td", null, r.addsUp ? t("yes") : t("no"))),
      ),
    );
  };
  // A point's profile comes just before the point: kept until the point names it.
  let pendingProfile = null;
  const addProfile = (point, outcome) => {
    const body = h("div.pipebook-profile-out");
    if (outcome.report) renderProfile(body, outcome.report, { writer: "writers", reader: "readers" });
    else if (outcome.error) fill(body, h("p.pipebook-profile-note", { dataset: { kind: outcome.error.kind } }, outcome.error.message));
    const row = sharedRow(point);
    profiles.append(h("details.pipebook-shared-profile-point", { dataset: { profiled: outcome.report ? "yes" : "no" } }, h("summary", null, t("Profile: {writers} writers, {readers} readers, {size} messages", { writers: row.writers, readers: row.readers, size: row.size })), body));
    root.dataset.profiles = String(profiles.querySelectorAll("details[data-profiled='yes']").length);
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (run) return;
    const w = listOf(writers.value).map(Number);
    const r = listOf(readers.value).map(Number);
    const s = listOf(sizes.value).map(parseSize);
    if (!w.length || !r.length || w.some((n) => !Number.isInteger(n)) || r.some((n) => !Number.isInteger(n))) return setState("error", t("Error: writers and readers are lists of counts such as {example}.", { example: "1,2,4" }));
    if (!s.length || s.some((n) => n === null)) return setState("error", t("Error: message sizes are a list such as {example}.", { example: "4KiB,64KiB" }));
    points = [];
    pendingProfile = null;
    redraw();
    fill(notes);
    fill(profiles);
    delete root.dataset.profiles;
    setState("connecting", t("Connecting to the runner…"));
    run = startSharedPipe({ writers: w, readers: r, msg_sizes: s, ...(profile.checked ? { profile: true } : {}) }, {
      queued: (position) => setState("running", t("Waiting: place {position} in the queue.", { position })),
      started: (msg) => setState("running", t("Running {points} points on {cpus} CPUs{profiled}…", { points: msg.points, cpus: msg.cpus, profiled: profile.checked ? t(", each profiled") : "" })),
      profile: (msg) => {
        // Before any point: the machine cannot profile at all, said once.
        if (!points.length && !pendingProfile && msg.error && !profiles.childElementCount) {
          profiles.append(h("p.pipebook-profile-note", { dataset: { kind: msg.error.kind } }, msg.error.message));
          return;
        }
        pendingProfile = msg;
      },
      sharedPoint: (point) => {
        points.push(point);
        redraw();
        if (pendingProfile) addProfile(point, pendingProfile);
        pendingProfile = null;
      },
      result: (res) => {
        run = null;
        points = res.points;
        redraw();
        // What the ends could not count here, said once for the sweep.
        const missing = (res.points.find((p) => p.counts)?.counts?.missing || []).map((m) => h("li", null, t("Not counted ({counts}): ", { counts: m.counts.join(", ") }), runnerText(h("span", null, m.message))));
        fill(notes, (res.warnings || []).map((w) => runnerText(h("li.pipebook-warning", null, w))), missing);
        setState("done", t("Done: {points} points, {torn} torn messages at or below PIPE_BUF.", { points: res.points.length, torn: root.dataset.torn }));
      },
      cancelled: () => {
        run = null;
        setState("cancelled", t("Cancelled: every writer and reader was stopped."));
      },
      error: (message) => {
        run = null;
        setState("error", `Error: ${message}`);
      },
    });
  });
  cancelButton.addEventListener("click", () => {
    if (run) {
      status.textContent = t("Cancelling…");
      run.cancel();
    }
  });
}
