// The sweep card that replaces each <div class="pipebook-sweep">: one step run at
// several values of one parameter, each value a queued run on the server, the curve
// growing point by point. Hooks for tests: button.pipebook-sweep-button,
// button.pipebook-cancel-button, .pipebook-status[data-state], svg[data-points],
// table.pipebook-sweep-table, and data-state / data-points on the root.

import { statusLine } from "./announce.js";
import { START_HINT } from "./api.js";
import { fill, h, offlineHint } from "./dom.js";
import * as fmt from "./format.js";
import { secondsInput } from "./controls.js";
import { spec, sweepDefaults } from "./params.js";
import { savedText } from "./runlife.js";
import { startSweep } from "./runner.js";
import { SweepChart, summarize } from "./sweepchart.js";
import { parseSizeList } from "./sizes.js";

const REPEATS = { min: 1, max: 5, value: 1 };

export function mountSweep(root, { online, catalogEntry }) {
  const step = root.dataset.step;
  const param = root.dataset.param;
  const s = spec(catalogEntry, param);
  const label = s ? s.label.toLowerCase() : param;
  root.classList.add("pipebook-enhanced");
  root.dataset.state = online ? "idle" : "offline";
  root.dataset.points = "0";
  const title = `${root.dataset.title || step}: GiB/s against ${label}`;
  const card = h(
    "div.pipebook-card.pipebook-sweep-card",
    { role: "group", "aria-label": `Sweep: ${title}` },
    h(
      "div.pipebook-card-head",
      null,
      h("span.pipebook-kind", { dataset: { kind: "sweep" } }, "Sweep"),
      h("span.pipebook-step-id", null, `${step} · ${param}`),
      h("p.pipebook-title", null, title),
      h("p.pipebook-summary", null, s ? s.help : ""),
    ),
  );
  root.append(card);
  if (!online || !s) {
    card.append(
      offlineHint(
        "To draw this curve on your own machine",
        START_HINT,
        ", or run ",
        h("code", null, `pipebench sweep ${step} --${param.replace("_", "-")} 16KiB,64KiB,256KiB,1MiB`),
        ".",
      ),
    );
    return;
  }

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
    value: REPEATS.value,
  });
  const field = (input, text, unit) =>
    h("label.pipebook-field", { for: input.id }, h("span", null, text), unit ? h("span.pipebook-input-unit", null, input, h("span", null, unit)) : input);
  const runButton = h("button.pipebook-sweep-button", { type: "submit" }, "Run the sweep");
  const cancelButton = h("button.pipebook-cancel-button", { type: "button", disabled: true }, "Cancel");
  const form = h(
    "form.pipebook-controls",
    { novalidate: true },
    field(values, `Values of ${label}`),
    field(seconds, "Seconds per run", "s"),
    field(repeats, "Runs per value"),
    h("div.pipebook-buttons", null, runButton, cancelButton),
  );
  const status = statusLine({ state: "idle" });
  const chart = new SweepChart(title);
  const table = h("table.pipebook-sweep-table");
  const command = h("p.pipebook-sweep-command");
  card.append(form, status, chart.el, table, command);

  let run = null;
  let runs = new Map();
  let swept = [];

  const setState = (state, text) => {
    root.dataset.state = state;
    status.dataset.state = state;
    status.textContent = text;
    const busy = state === "connecting" || state === "running";
    runButton.disabled = busy;
    cancelButton.disabled = !busy;
    for (const el of form.querySelectorAll("input")) el.disabled = busy;
  };
  setState("idle", "Ready: each value runs as its own queued run, one after another.");

  const redraw = () => {
    const points = summarize(runs);
    chart.draw(points, swept);
    root.dataset.points = String(points.length);
    fill(
      table,
      h("tr", null, h("th", null, label), h("th", null, "runs"), h("th", null, "median GiB/s"), h("th", null, "min–max")),
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
    if (!(secs >= sec.min && secs <= sec.max)) return setState("error", `Error: seconds per run must be ${sec.min} to ${sec.max}.`);
    if (!(reps >= REPEATS.min && reps <= REPEATS.max)) return setState("error", `Error: runs per value must be ${REPEATS.min} to ${REPEATS.max}.`);
    swept = parsed.values;
    runs = new Map(swept.map((v) => [v, []]));
    redraw();
    const total = swept.length * reps;
    let done = 0;
    // The first point the runner's history could not keep, and why.
    let unsaved = "";
    fill(command, "Same on the command line: ", h("code", null, `pipebench sweep ${step} --${param.replace("_", "-")} ${swept.map(fmt.sizeArg).join(",")} --seconds ${secs} --repeats ${reps}`));
    setState("connecting", "Connecting to the runner…");
    run = startSweep(step, param, swept, reps, { seconds: secs }, {
      queued: (position) => setState("running", `Waiting: place ${position} in the queue.`),
      started: (msg) => setState("running", `Running ${param} = ${fmt.bytes(Number(msg.params?.[param] ?? NaN))} (${done + 1} of ${total})…`),
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
        setState("done", unsaved ? `Done: ${done} runs. ${unsaved}` : `Done: ${done} runs.`);
      },
      cancelled: () => {
        run = null;
        setState("cancelled", `Cancelled after ${done} of ${total} runs. Nothing is left running.`);
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

  cancelButton.addEventListener("click", () => {
    if (run) {
      status.textContent = "Cancelling…";
      run.cancel();
    }
  });
}
