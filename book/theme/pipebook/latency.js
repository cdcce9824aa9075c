// The latency lab's cards. <div class="pipebook-latency" data-mechanism=ID> becomes a
// card that runs round trips of one message of that mechanism through the runner's
// queue and draws their distribution as it fills; <div class="pipebook-latency-matrix"
// data-mechanisms=JSON> runs every mechanism at one size, blocking and busy, and sets
// p50, p99 and CPU per message side by side.
// Hooks for tests: button.pipebook-latency-button, button.pipebook-cancel-button,
// select.pipebook-latency-mode, input.pipebook-latency-size, input.pipebook-latency-trips,
// svg.pipebook-latency-dist (rect.pipebook-latency-bar), table.pipebook-latency-result,
// and on the root data-state, data-bars, data-p50, data-p99, data-progress-samples
// (data-rows on the matrix).

import { statusLine } from "./announce.js";
import { START_HINT } from "./api.js";
import { fill, h, offlineHint, svg } from "./dom.js";
import { clockPercent, describeResult, timingText, layoutHistogram, matrixRows, nsText, placementText, sane } from "./latency/dist.js";
import { startLatency } from "./runner.js";
import { parseSize } from "./sizes.js";
import { t, withNodes } from "./i18n.js";

const W = 600;
const H = 160;

/** The live distribution: an SVG redrawn from the bucket counts. */
function distChart(label) {
  const el = svg("svg", { class: "pipebook-latency-dist", viewBox: `0 0 ${W} ${H + 30}`, role: "img", "aria-label": label });
  const draw = (buckets, mode) => {
    const out = layoutHistogram(buckets, W, H);
    el.replaceChildren();
    el.dataset.mode = mode;
    const title = svg("title");
    title.textContent = out.total
      ? t("{label}: {n} round trips from {low} to {high}", { label, n: out.total, low: nsText(out.lo), high: nsText(out.hi) })
      : t("{label}: no round trips yet", { label });
    el.append(title);
    for (const b of out.bars) {
      if (!b.h) continue;
      const bar = svg("rect", { class: "pipebook-latency-bar", x: b.x.toFixed(1), y: b.y.toFixed(1), width: Math.max(1, b.w - 1).toFixed(1), height: b.h.toFixed(1) });
      const tip = svg("title");
      tip.textContent = t("{n} round trips of {from} to {to}", { n: b.count, from: nsText(b.from), to: nsText(b.to) });
      bar.append(tip);
      el.append(bar);
    }
    el.append(svg("line", { x1: 0, y1: H, x2: W, y2: H }));
    if (out.total) {
      const lo = svg("text", { x: 0, y: H + 16 });
      lo.textContent = nsText(out.lo);
      const hi = svg("text", { x: W, y: H + 16, "text-anchor": "end" });
      hi.textContent = t("{high} (log scale, {u_ns} per round trip)", { u_ns: "ns", high: nsText(out.hi) });
      el.append(lo, hi);
    }
    return out.bars.filter((b) => b.h).length;
  };
  return { el, draw };
}

function resultTable(r) {
  const row = (label, value) => h("tr", null, h("th", null, label), h("td", null, value));
  return [
    row("p50 (median)", nsText(r.p50)),
    row("p90", nsText(r.p90)),
    row("p99", nsText(r.p99)),
    row("p99.9", nsText(r.p999)),
    row("max", nsText(r.max)),
    row(t("round trips timed"), String(r.count)),
    row(t("CPU per round trip"), t("ping {ping}, pong {pong}", { ping: nsText(r.ping_cpu_ns), pong: nsText(r.pong_cpu_ns) })),
    row(t("sleeps per round trip"), t("ping {ping}, pong {pong}", { ping: r.ping_sleeps.toFixed(2), pong: r.pong_sleeps.toFixed(2) })),
    row(t("CPUs (ping, pong)"), `${r.cpus.join(", ")}: ${placementText(r.placement)}`),
    row(t("timing's cost per round trip"), t("{ns} {u_ns}, {share}% of this median (timed blocks against untimed ones beside them)", { u_ns: "ns", ns: r.clock_ns.toFixed(1), share: clockPercent(r)?.toFixed(1) ?? "—" })),
    row(t("timing's cost on the mean"), timingText(r)),
  ];
}

function modesOf(root) {
  return (root.dataset.modes || "blocking busy").split(" ").filter(Boolean);
}

/** One mechanism's card. */
export function mountLatency(root, { online, params }) {
  const id = root.dataset.mechanism;
  const title = root.dataset.title || id;
  root.classList.add("pipebook-enhanced");
  root.dataset.state = online ? "idle" : "offline";
  const card = h(
    "div.pipebook-card.pipebook-latency-card",
    { role: "group", "aria-label": t("Latency: {title}", { title }) },
    h("div.pipebook-card-head", null, h("span.pipebook-kind", { dataset: { kind: "latency" } }, t("Latency")), h("span.pipebook-step-id", null, id), h("p.pipebook-title", null, title)),
  );
  root.append(card);
  if (!online) {
    card.append(offlineHint(t("To time this mechanism on your own machine"), START_HINT, withNodes(t(", or run {command}."), { command: h("code", null, `pipebench latency ${id}`) })));
    return;
  }
  const fid = `pipebook-latency-${id}`;
  // The runner's bounds on round trips (/api/params).
  const R = params.latency.round_trips;
  const mode = h("select.pipebook-latency-mode", { id: `${fid}-mode` }, modesOf(root).map((m) => h("option", { value: m }, m === "busy" ? t("busy-polling") : t("blocking"))));
  const size = h("input.pipebook-latency-size", { id: `${fid}-size`, type: "text", value: "64", size: 7, spellcheck: "false" });
  const trips = h("input.pipebook-latency-trips", { id: `${fid}-trips`, type: "number", value: String(R.start), min: R.min, max: R.max });
  const field = (input, text) => h("label.pipebook-field", { for: input.id }, h("span", null, text), input);
  const runButton = h("button.pipebook-run-button.pipebook-latency-button", { type: "submit" }, t("Time round trips"));
  const cancelButton = h("button.pipebook-cancel-button", { type: "button", disabled: true }, t("Cancel"));
  const form = h("form.pipebook-controls", { novalidate: true }, field(mode, t("Waiting")), field(size, t("Message size")), field(trips, t("Round trips")), h("div.pipebook-buttons", null, runButton, cancelButton));
  const status = statusLine({ state: "idle" });
  const bar = h("progress.pipebook-ipc-progress", { max: 1, hidden: true });
  const chart = distChart(t("Distribution of {title} round trips", { title }));
  const table = h("table.pipebook-latency-result");
  const summary = h("p.pipebook-latency-summary");
  const command = h("p.pipebook-sweep-command");
  // The chart joins the card with its first bars: an empty box would print as one.
  card.append(form, status, bar, table, summary, command);
  const setState = (state, text) => {
    root.dataset.state = state;
    status.dataset.state = state;
    status.textContent = text;
    const busy = state === "connecting" || state === "running";
    runButton.disabled = busy;
    cancelButton.disabled = !busy;
    for (const el of form.querySelectorAll("input, select")) el.disabled = busy;
  };
  setState("idle", t("Ready: the run takes two CPUs for itself, after any run ahead of it."));
  let run = null;
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (run) return;
    const bytes = parseSize(size.value);
    const n = Number(trips.value);
    if (bytes === null || bytes < 1) return setState("error", t("Error: “{value}” is not a message size such as {example}.", { value: size.value, example: "64, 4KiB" }));
    if (!Number.isInteger(n) || n < R.min || n > R.max) return setState("error", t("Error: round trips must be {min} to {max}.", { min: R.min, max: R.max }));
    const params = { mechanism: id, mode: mode.value, size: bytes, round_trips: n };
    fill(command, t("Same on the command line: "), h("code", null, `pipebench latency ${id} --mode ${mode.value} --sizes ${bytes} --round-trips ${n}`));
    let samples = 0;
    root.dataset.progressSamples = "0";
    setState("connecting", t("Connecting to the runner…"));
    run = startLatency(params, {
      queued: (position) => setState("running", t("Waiting: place {position} in the queue.", { position })),
      started: (msg) => setState("running", t("Timing {n} round trips of {size} {u_b}, {mode}, on CPUs {cpus}…", { u_b: "B", n: msg.round_trips, size: msg.size, mode: msg.mode, cpus: msg.cpus.join(t(" and ")) })),
      latencyProgress: (msg) => {
        samples += 1;
        root.dataset.progressSamples = String(samples);
        root.dataset.bars = String(chart.draw(msg.buckets, mode.value));
        if (!chart.el.isConnected) bar.after(chart.el);
        bar.hidden = false;
        bar.value = msg.of ? msg.done / msg.of : 0;
        status.textContent = t("{done} of {of} round trips timed…", { done: msg.done, of: msg.of });
      },
      result: (r) => {
        run = null;
        bar.hidden = true;
        fill(table, resultTable(r));
        summary.textContent = describeResult(r);
        root.dataset.p50 = String(r.p50);
        root.dataset.p99 = String(r.p99);
        setState(sane(r) ? "done" : "error", sane(r) ? t("Done: median {p50}, p99 {p99}.", { p50: nsText(r.p50), p99: nsText(r.p99) }) : t("The result's percentiles are out of order."));
      },
      cancelled: () => {
        run = null;
        bar.hidden = true;
        setState("cancelled", t("Cancelled. Both ends were stopped and what they shared removed."));
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

/** The matrix: every mechanism at one size, blocking then busy, each a queued run. */
export function mountLatencyMatrix(root, { online, params }) {
  const mechanisms = JSON.parse(root.dataset.mechanisms || "[]");
  root.classList.add("pipebook-enhanced");
  root.dataset.state = online ? "idle" : "offline";
  root.dataset.rows = "0";
  const title = t("Every mechanism, one message size: median, tail and CPU per message");
  const card = h(
    "div.pipebook-card.pipebook-latency-card",
    { role: "group", "aria-label": title },
    h("div.pipebook-card-head", null, h("span.pipebook-kind", { dataset: { kind: "latency" } }, t("Latency matrix")), h("p.pipebook-title", null, title)),
  );
  root.append(card);
  if (!online) {
    card.append(offlineHint(t("To time every mechanism on your own machine"), START_HINT, withNodes(t(", or run {command}."), { command: h("code", null, "pipebench latency --sizes 64") })));
    return;
  }
  // The runner's bounds on round trips (/api/params), and the matrix's first value.
  const R = params.latency.matrix_round_trips;
  const size = h("input.pipebook-latency-size", { id: "pipebook-latency-matrix-size", type: "text", value: "64", size: 7 });
  const trips = h("input.pipebook-latency-trips", { id: "pipebook-latency-matrix-trips", type: "number", value: String(R.start), min: R.min, max: R.max });
  const field = (input, text) => h("label.pipebook-field", { for: input.id }, h("span", null, text), input);
  const runButton = h("button.pipebook-run-button.pipebook-latency-button", { type: "submit" }, t("Time every mechanism"));
  const cancelButton = h("button.pipebook-cancel-button", { type: "button", disabled: true }, t("Cancel"));
  const form = h("form.pipebook-controls", { novalidate: true }, field(size, t("Message size")), field(trips, t("Round trips each")), h("div.pipebook-buttons", null, runButton, cancelButton));
  const status = statusLine({ state: "idle" });
  const chart = distChart(t("Distribution of the configuration running now"));
  const table = h("table.pipebook-latency-result");
  // The order is one run of each: say how little that settles.
  const note = h(
    "p.pipebook-summary.pipebook-latency-matrix-note",
    null,
    t("One run of each configuration, sorted by p99: rows with figures close together can swap places from one run to the next, so the order says nothing sure about them. Labs 7 and 8 set two configurations against each other over six runs each and judge the ratio on its interval at looks planned in advance. Every latency run streams its progress alike (there is no quiet one), so both sides of a comparison paid the same for being watched."),
  );
  card.append(form, status, table, note);
  const jobs = mechanisms.flatMap((m) => m.modes.map((mode) => ({ id: m.id, mode })));
  const setState = (state, text) => {
    root.dataset.state = state;
    status.dataset.state = state;
    status.textContent = text;
    const busy = state === "running";
    runButton.disabled = busy;
    cancelButton.disabled = !busy;
  };
  setState("idle", t("Ready: {n} configurations, one after another.", { n: jobs.length }));
  let results = [];
  const redraw = () => {
    const rows = matrixRows(results);
    root.dataset.rows = String(rows.length);
    fill(
      table,
      h("tr", null, h("th", null, t("mechanism")), h("th", null, t("waiting")), h("th", null, "p50"), h("th", null, "p99"), h("th", null, t("CPU per message, each end"))),
      rows.map((r) => h("tr", null, h("td", null, r.id), h("td", null, r.mode), h("td", null, nsText(r.p50)), h("td", null, nsText(r.p99)), h("td", null, nsText(r.cpu)))),
    );
  };
  let run = null;
  let stopped = false;
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (run) return;
    const bytes = parseSize(size.value);
    const n = Number(trips.value);
    if (bytes === null || bytes < 1 || !Number.isInteger(n) || n < R.min || n > R.max) return setState("error", t("Error: a size such as {example} and {min} to {max} round trips.", { example: "64", min: R.min, max: R.max }));
    stopped = false;
    results = [];
    redraw();
    const next = (index) => {
      if (stopped) return;
      if (index >= jobs.length) {
        run = null;
        return setState("done", t("Done: {n} configurations.", { n: results.length }));
      }
      const job = jobs[index];
      const label = `${job.id} ${job.mode} (${index + 1} of ${jobs.length})`;
      setState("running", t("{label}: connecting…", { label }));
      run = startLatency({ mechanism: job.id, mode: job.mode, size: bytes, round_trips: n }, {
        latencyProgress: (msg) => {
          root.dataset.bars = String(chart.draw(msg.buckets, job.mode));
          if (!chart.el.isConnected) status.after(chart.el);
          status.textContent = t("{label}: {done} of {of} round trips…", { label, done: msg.done, of: msg.of });
        },
        result: (r) => {
          results.push(r);
          redraw();
          next(index + 1);
        },
        cancelled: () => {
          run = null;
          setState("cancelled", t("Cancelled at {label}. Nothing is left running.", { label }));
        },
        error: (message) => {
          // A configuration this machine cannot run (a queue limit): say so, go on.
          status.textContent = `${label}: ${message}`;
          next(index + 1);
        },
      });
    };
    next(0);
  });
  cancelButton.addEventListener("click", () => {
    if (run) {
      stopped = true;
      status.textContent = t("Cancelling…");
      run.cancel();
    }
  });
}
