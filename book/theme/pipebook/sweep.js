// The sweep card that replaces each <div class="pipebook-sweep">: one step run at
// several values of one parameter, each value a queued run on the server, the curve
// growing point by point. Hooks for tests: button.pipebook-sweep-button,
// button.pipebook-cancel-button, .pipebook-status[data-state], svg[data-points],
// table.pipebook-sweep-table, and data-state / data-points on the root.
// Every run is quiet (a sweep draws no live chart, and watching would cost
// each point). Once two values have runs, .pipebook-sweep-verdict states the
// runner's judgement of the best value against the worst (two sets of runs,
// from 4 a side), with its 95% interval (svg.pipebook-sweep-interval,
// data-verdict on the root), and button.pipebook-sweep-until runs the two in
// pairs, a run of each at a time, in a sequential design (the runner judges
// each planned look), until a look resolves or input.pipebook-sweep-budget's
// pairs are spent.

import { statusLine } from "./announce.js";
import { START_HINT } from "./api.js";
import { fill, h, offlineHint } from "./dom.js";
import * as fmt from "./format.js";
import { secondsInput } from "./controls.js";
import { spec, sweepDefaults } from "./params.js";
import { savedText } from "./runlife.js";
import { intervalPicture } from "./interval.js";
import { startSweep } from "./runner.js";
import { SweepChart, summarize } from "./sweepchart.js";
import { parseSizeList } from "./sizes.js";
import { designNote, endingSentence, isErrorText, judge, pairedPlan, planSentence, runSequence } from "./judge.js";
import { showJudged } from "./runverdict.js";
import { bestAgainstWorst, bestWorstSentence } from "./verdict.js";
import { runnerText, t, withNodes } from "./i18n.js";

/** Most pairs one "Run until resolved" of the best and the worst may run: three looks of six. */
const MAX_PAIRS = 18;

export function mountSweep(root, { online, catalogEntry, params }) {
  const step = root.dataset.step;
  const param = root.dataset.param;
  const s = spec(catalogEntry, param);
  const label = s ? s.label.toLowerCase() : param;
  root.classList.add("pipebook-enhanced");
  root.dataset.state = online ? "idle" : "offline";
  root.dataset.points = "0";
  const title = t("{title}: {u_gibs} against {parameter}", { u_gibs: "GiB/s", title: root.dataset.title || step, parameter: label });
  const card = h(
    "div.pipebook-card.pipebook-sweep-card",
    { role: "group", "aria-label": t("Sweep: {title}", { title }) },
    h(
      "div.pipebook-card-head",
      null,
      h("span.pipebook-kind", { dataset: { kind: "sweep" } }, t("Sweep")),
      h("span.pipebook-step-id", null, `${step} · ${param}`),
      h("p.pipebook-title", null, title),
      runnerText(h("p.pipebook-summary", null, s ? s.help : "")),
    ),
  );
  root.append(card);
  if (!online || !s) {
    card.append(
      offlineHint(
        t("To draw this curve on your own machine"),
        START_HINT,
        withNodes(t(", or run {command}."), { command: h("code", null, `pipebench sweep ${step} --${param.replace("_", "-")} 16KiB,64KiB,256KiB,1MiB`) }),
      ),
    );
    return;
  }

  // The runner's bounds on runs per value (/api/params).
  const REPEATS = params.sweep.repeats;
  const id = `pipebook-sweep-${step}-${param}`;
  const values = h("input.pipebook-sweep-values", {
    id: `${id}-values`,
    type: "text",
    value: sweepDefaults(s, param).map(fmt.sizeArg).join(","),
    spellcheck: "false",
    size: 28,
  });
  // One second per point: a sweep has many points.
  const { sec, input: seconds } = secondsInput(catalogEntry, id, "sweep");
  const repeats = h("input.pipebook-sweep-repeats", {
    id: `${id}-repeats`,
    type: "number",
    min: REPEATS.min,
    max: REPEATS.max,
    step: 1,
    value: REPEATS.start,
  });
  const field = (input, text, unit) =>
    h("label.pipebook-field", { for: input.id }, h("span", null, text), unit ? h("span.pipebook-input-unit", null, input, h("span", null, unit)) : input);
  const runButton = h("button.pipebook-sweep-button", { type: "submit" }, t("Run the sweep"));
  const cancelButton = h("button.pipebook-cancel-button", { type: "button", disabled: true }, t("Cancel"));
  const form = h(
    "form.pipebook-controls",
    { novalidate: true },
    field(values, t("Values of {parameter}", { parameter: label })),
    field(seconds, t("Seconds per run"), "s"),
    field(repeats, t("Runs per value")),
    h("div.pipebook-buttons", null, runButton, cancelButton),
  );
  const status = statusLine({ state: "idle" });
  const chart = new SweepChart(title);
  const table = h("table.pipebook-sweep-table");
  const command = h("p.pipebook-sweep-command");
  const verdictText = h("p.pipebook-sweep-verdict");
  const picture = h("div.pipebook-sweep-picture");
  const budget = h("input.pipebook-sweep-budget", { id: `${id}-budget`, type: "number", min: 1, max: MAX_PAIRS, step: 1, value: 12 });
  const untilButton = h("button.pipebook-cancel-button.pipebook-sweep-until", { type: "button" }, t("Run until resolved"));
  const untilRow = h("div", { hidden: true }, h("div.pipebook-lab-row", null, field(budget, t("Pairs of runs at most")), untilButton), designNote(h));
  card.append(form, status, chart.el, table, verdictText, picture, untilRow, command);

  let run = null;
  let runs = new Map();
  let swept = [];

  const setState = (state, text) => {
    root.dataset.state = state;
    status.dataset.state = state;
    status.textContent = text;
    const busy = state === "connecting" || state === "running";
    runButton.disabled = busy;
    untilButton.disabled = busy;
    cancelButton.disabled = !busy;
    for (const el of form.querySelectorAll("input")) el.disabled = busy;
  };
  setState("idle", t("Ready: each value runs as its own queued run, one after another."));

  // The best value against the worst, as the runner judges them; after a
  // "Run until resolved", that sequence's judgement of its pairs instead.
  let judged = null;
  let series = null;
  let asked = 0;
  const name = (v) => `${label} ${fmt.bytes(v)}`;
  const shown = (answer) =>
    showJudged(answer, { text: verdictText, picture, el: root, cls: "pipebook-sweep-interval", words: (j) => bestWorstSentence(j, series?.bw ?? judged, name) });
  const judgeBestWorst = () => {
    const mine = (asked += 1);
    if (series) return;
    judged = bestAgainstWorst(runs);
    if (!judged) {
      fill(verdictText);
      fill(picture);
      delete root.dataset.verdict;
      return;
    }
    judge({ paired: false, a: judged.bestRates, b: judged.worstRates }).then((answer) => {
      if (mine === asked) shown(answer);
    });
  };

  const redraw = () => {
    judgeBestWorst();
    const points = summarize(runs);
    chart.draw(points, swept);
    root.dataset.points = String(points.length);
    fill(
      table,
      h("tr", null, h("th", null, label), h("th", null, t("runs")), h("th", null, t("median {u_gibs}", { u_gibs: "GiB/s" })), h("th", null, t("min–max"))),
      points.map((p) =>
        h(
          "tr",
          null,
          h("td", null, fmt.bytes(p.value)),
          h("td", null, String(p.runs)),
          h("td", null, fmt.gib(p.median)),
          h("td", null, `${fmt.gib(p.min)}–${fmt.gib(p.max)}`),
        ),
      ),
    );
  };

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (run) return;
    const parsed = parseSizeList(values.value);
    if (parsed.error) return setState("error", `Error: ${parsed.error}`);
    const secs = Number(seconds.value);
    const reps = Math.round(Number(repeats.value));
    if (!(secs >= sec.min && secs <= sec.max)) return setState("error", t("Error: seconds per run must be {min} to {max}.", { min: sec.min, max: sec.max }));
    if (!(reps >= REPEATS.min && reps <= REPEATS.max)) return setState("error", t("Error: runs per value must be {min} to {max}.", { min: REPEATS.min, max: REPEATS.max }));
    swept = parsed.values;
    untilRow.hidden = true;
    series = null;
    runs = new Map(swept.map((v) => [v, []]));
    redraw();
    const total = swept.length * reps;
    let done = 0;
    // The first point the runner's history could not keep, and why.
    let unsaved = "";
    fill(command, t("Same on the command line: "), h("code", null, `pipebench sweep ${step} --${param.replace("_", "-")} ${swept.map(fmt.sizeArg).join(",")} --seconds ${secs} --repeats ${reps}`));
    setState("connecting", t("Connecting to the runner…"));
    run = startSweep(step, param, swept, reps, { seconds: secs, quiet: true }, {
      queued: (position) => setState("running", t("Waiting: place {position} in the queue.", { position })),
      started: (msg) => setState("running", t("Running {parameter} = {value} ({n} of {total})…", { parameter: param, value: fmt.bytes(Number(msg.params?.[param] ?? NaN)), n: done + 1, total })),
      point: (msg) => {
        done += 1;
        const value = Number(msg.value);
        if (!runs.has(value)) runs.set(value, []);
        runs.get(value).push(Number(msg.result?.gib_per_s));
        redraw();
      },
      saved: (msg) => {
        if (msg.store === "history" && !msg.ok && !unsaved) unsaved = savedText(msg);
      },
      done: () => {
        run = null;
        untilRow.hidden = !judged;
        setState("done", unsaved ? `${t("Done: {n} runs (quiet).", { n: done })} ${unsaved}` : t("Done: {n} runs (quiet).", { n: done }));
      },
      cancelled: () => {
        run = null;
        setState("cancelled", t("Cancelled after {n} of {total} runs. Nothing is left running.", { n: done, total }));
      },
      error: (message) => {
        run = null;
        setState("error", `Error: ${message}`);
      },
      notice: (message) => {
        status.textContent = `${status.textContent} (${message})`;
      },
    });
  });

  // The best and the worst value again, a run of each at a time (a sweep of
  // the two, in the runner's shuffled order: each round is a pair), in a
  // sequential design: the runner judges the pairs at each planned look.
  untilButton.addEventListener("click", async () => {
    if (run || !judged) return;
    const planned = await pairedPlan(Math.round(Number(budget.value)), MAX_PAIRS, t("Pairs of runs at most"));
    if (!planned.plan) return setState("error", isErrorText(planned.message) ? planned.message : t("Error: {message}", { message: planned.message }));
    const plan = planned.plan;
    const secs = Number(seconds.value);
    const bw = { best: judged.best, worst: judged.worst };
    // A sweep's values go up (the runner refuses others), whichever won.
    const pair = [bw.best, bw.worst].sort((a, b) => a - b);
    const pairs = { best: [], worst: [] };
    let stopped = false;
    // From now on the card shows this sequence's looks, not the sweep's sets.
    series = { bw };
    const onePair = () =>
      new Promise((resolve) => {
        const got = new Map();
        setState("connecting", `${planSentence(plan, "pair")} ${t("Pair {n} of at most {most}…", { n: pairs.best.length + 1, most: plan.at.at(-1) })}`);
        run = startSweep(step, param, pair, 1, { seconds: secs, quiet: true }, {
          queued: (position) => setState("running", t("Waiting: place {position} in the queue.", { position })),
          started: () => setState("running", t("More runs of the best and the worst: pair {n} of at most {most} (quiet)…", { n: pairs.best.length + 1, most: plan.at.at(-1) })),
          point: (msg) => {
            const value = Number(msg.value);
            const rate = Number(msg.result?.gib_per_s);
            got.set(value, rate);
            if (!runs.has(value)) runs.set(value, []);
            runs.get(value).push(rate);
            redraw();
          },
          done: () => {
            run = null;
            if (!got.has(bw.best) || !got.has(bw.worst)) return resolve({ ok: false, message: t("Error: a pair came back without both values.") });
            pairs.best.push(got.get(bw.best));
            pairs.worst.push(got.get(bw.worst));
            resolve({ ok: true });
          },
          cancelled: () => {
            run = null;
            stopped = true;
            resolve({ ok: false, message: pairs.best.length === 1 ? t("Stopped after {n} pair. Nothing is left running.", { n: 1 }) : t("Stopped after {n} pairs. Nothing is left running.", { n: pairs.best.length }) });
          },
          error: (message) => {
            run = null;
            resolve({ ok: false, message: `Error: ${message}` });
          },
        });
      });
    const done = await runSequence(plan, {
      count: () => pairs.best.length,
      stopped: () => stopped,
      addOne: onePair,
      judgeAt: (look, looks) => judge({ paired: true, a: pairs.best, b: pairs.worst, look, looks }),
      onLook: (j) => {
        series = { bw, judgement: j };
        asked += 1;
        shown({ judgement: j });
      },
    });
    const text = endingSentence(done, "pair");
    setState(done.ending === "error" && isErrorText(text) ? "error" : done.ending === "error" ? "cancelled" : "done", text);
  });

  cancelButton.addEventListener("click", () => {
    if (run) {
      status.textContent = t("Cancelling…");
      run.cancel();
    }
  });
}
