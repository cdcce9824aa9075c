// The latency matrix: <div class="pipebook-latency-matrix" data-mechanisms=JSON> runs
// every mechanism at one size, blocking and busy, each a queued run, and sets p50, p99
// and CPU per message side by side.
// Hooks for tests: button.pipebook-latency-button, button.pipebook-cancel-button,
// input.pipebook-latency-size, input.pipebook-latency-trips, svg.pipebook-latency-dist,
// table.pipebook-latency-result, and on the root data-state, data-bars and data-rows.

import { statusLine } from "../announce.js";
import { START_HINT } from "../api.js";
import { CardLife } from "../cardlife.js";
import { fill, h, offlineHint } from "../dom.js";
import { parseSize } from "../sizes.js";
import { t, withNodes } from "../i18n.js";
import { distChart } from "./chart.js";
import { matrixRows, nsText } from "./dist.js";
import { latencyForm } from "./form.js";

/** The matrix's table, sorted by p99; `root` says how many rows. */
function drawRows(root, table, results) {
  const rows = matrixRows(results);
  root.dataset.rows = String(rows.length);
  fill(
    table,
    h("tr", null, h("th", null, t("mechanism")), h("th", null, t("waiting")), h("th", null, "p50"), h("th", null, "p99"), h("th", null, t("CPU per message, each end"))),
    rows.map((r) => h("tr", null, h("td", null, r.id), h("td", null, r.mode), h("td", null, nsText(r.p50)), h("td", null, nsText(r.p99)), h("td", null, nsText(r.cpu)))),
  );
}

/** Runs every configuration of `card` in turn at `bytes` and `n` round trips; one this machine cannot run says so and goes on. */
async function runAll(card, bytes, n) {
  const { root, jobs, status, chart, life } = card;
  for (const [index, job] of jobs.entries()) {
    const label = `${job.id} ${job.mode} (${index + 1} of ${jobs.length})`;
    if (life.stopped) return life.show("cancelled", t("Cancelled at {label}. Nothing is left running.", { label }));
    life.show("running", t("{label}: connecting…", { label }));
    const got = await life.session({ type: "latency", mechanism: job.id, mode: job.mode, size: bytes, round_trips: n }, {
      latencyProgress: (msg) => {
        root.dataset.bars = String(chart.draw(msg.buckets, job.mode));
        if (!chart.el.isConnected) status.after(chart.el);
        life.say(t("{label}: {done} of {of} round trips…", { label, done: msg.done, of: msg.of }));
      },
    });
    if (got.ended === "cancelled") return life.show("cancelled", t("Cancelled at {label}. Nothing is left running.", { label }));
    // A configuration this machine cannot run (a queue limit): say so, go on.
    if (got.ended === "error") life.say(`${label}: ${got.message}`);
    else {
      card.results.push(got.event);
      card.redraw();
    }
  }
  life.show("done", t("Done: {n} configurations.", { n: card.results.length }));
}

/** The matrix: every mechanism at one size, blocking then busy, each a queued run. */
export function mountLatencyMatrix(root, { online, params }) {
  const mechanisms = JSON.parse(root.dataset.mechanisms || "[]");
  root.classList.add("pipebook-enhanced");
  root.dataset.state = online ? "idle" : "offline";
  root.dataset.rows = "0";
  const title = t("Every mechanism, one message size: median, tail and CPU per message");
  const el = h(
    "div.pipebook-card.pipebook-latency-card",
    { role: "group", "aria-label": title },
    h("div.pipebook-card-head", null, h("span.pipebook-kind", { dataset: { kind: "latency" } }, t("Latency matrix")), h("p.pipebook-title", null, title)),
  );
  root.append(el);
  if (!online) {
    el.append(offlineHint(t("To time every mechanism on your own machine"), START_HINT, withNodes(t(", or run {command}."), { command: h("code", null, "pipebench latency --sizes 64") })));
    return;
  }
  // The runner's bounds on round trips (/api/params), and the matrix's first value.
  const R = params.latency.matrix_round_trips;
  const f = latencyForm("pipebook-latency-matrix", R, { button: t("Time every mechanism"), trips: t("Round trips each") });
  const status = statusLine({ state: "idle" });
  const table = h("table.pipebook-latency-result");
  // The order is one run of each: say how little that settles.
  const note = h(
    "p.pipebook-summary.pipebook-latency-matrix-note",
    null,
    t("One run of each configuration, sorted by p99: rows with figures close together can swap places from one run to the next, so the order says nothing sure about them. Labs 7 and 8 set two configurations against each other over six runs each and judge the ratio on its interval at looks planned in advance. Every latency run streams its progress alike (there is no quiet one), so both sides of a comparison paid the same for being watched."),
  );
  el.append(f.form, status, table, note);
  const jobs = mechanisms.flatMap((m) => m.modes.map((mode) => ({ id: m.id, mode })));
  // The matrix leaves its fields free while it runs (no form to lock), and each run is
  // "running" from its connection on; where a run waits in the queue goes unsaid.
  const life = new CardLife({ status, marks: [root, status], states: { connecting: "running", queued: "running" }, run: [f.runButton], cancel: f.cancelButton, words: { queued: () => null } });
  life.show("idle", t("Ready: {n} configurations, one after another.", { n: jobs.length }));
  const card = { root, jobs, status, life, chart: distChart(t("Distribution of the configuration running now")), results: [] };
  card.redraw = () => drawRows(root, table, card.results);
  f.form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (life.busy) return;
    const bytes = parseSize(f.size.value);
    const n = Number(f.trips.value);
    if (bytes === null || bytes < 1 || !Number.isInteger(n) || n < R.min || n > R.max) return life.show("error", t("Error: a size such as {example} and {min} to {max} round trips.", { example: "64", min: R.min, max: R.max }));
    card.results = [];
    card.redraw();
    life.begin("running");
    runAll(card, bytes, n);
  });
}
