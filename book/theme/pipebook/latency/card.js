// One latency card: <div class="pipebook-latency" data-mechanism=ID> runs round trips
// of one message of that mechanism through the runner's queue and draws their
// distribution as it fills.
// Hooks for tests: button.pipebook-latency-button, button.pipebook-cancel-button,
// select.pipebook-latency-mode, input.pipebook-latency-size, input.pipebook-latency-trips,
// svg.pipebook-latency-dist (rect.pipebook-latency-bar), table.pipebook-latency-result,
// and on the root data-state, data-bars, data-p50, data-p99, data-progress-samples.

import { statusLine } from "../announce.js";
import { START_HINT } from "../api.js";
import { CardLife } from "../cardlife.js";
import { fill, h, offlineHint } from "../dom.js";
import { parseSize } from "../sizes.js";
import { t, withNodes } from "../i18n.js";
import { distChart, resultTable } from "./chart.js";
import { describeResult, nsText, sane } from "./dist.js";
import { latencyForm } from "./form.js";

function modesOf(root) {
  return (root.dataset.modes || "blocking busy").split(" ").filter(Boolean);
}

/** The handlers of one run's session (runner.js), past what the card's life shows of it. */
function latencyHandlers(card, mode) {
  const { root, out, life } = card;
  let samples = 0;
  root.dataset.progressSamples = "0";
  return {
    started: (msg) => life.say(t("Timing {n} round trips of {size} {u_b}, {mode}, on CPUs {cpus}…", { u_b: "B", n: msg.round_trips, size: msg.size, mode: msg.mode, cpus: msg.cpus.join(t(" and ")) })),
    latencyProgress: (msg) => {
      samples += 1;
      root.dataset.progressSamples = String(samples);
      root.dataset.bars = String(out.chart.draw(msg.buckets, mode));
      if (!out.chart.el.isConnected) out.bar.after(out.chart.el);
      life.progress(msg.of ? msg.done / msg.of : 0);
      life.say(t("{done} of {of} round trips timed…", { done: msg.done, of: msg.of }));
    },
    result: (r) => {
      fill(out.table, resultTable(r));
      out.summary.textContent = describeResult(r);
      root.dataset.p50 = String(r.p50);
      root.dataset.p99 = String(r.p99);
      if (!sane(r)) life.show("error", t("The result's percentiles are out of order."));
    },
  };
}

/** One mechanism's card. */
export function mountLatency(root, { online, params }) {
  const id = root.dataset.mechanism;
  const title = root.dataset.title || id;
  root.classList.add("pipebook-enhanced");
  root.dataset.state = online ? "idle" : "offline";
  const el = h(
    "div.pipebook-card.pipebook-latency-card",
    { role: "group", "aria-label": t("Latency: {title}", { title }) },
    h("div.pipebook-card-head", null, h("span.pipebook-kind", { dataset: { kind: "latency" } }, t("Latency")), h("span.pipebook-step-id", null, id), h("p.pipebook-title", null, title)),
  );
  root.append(el);
  if (!online) {
    el.append(offlineHint(t("To time this mechanism on your own machine"), START_HINT, withNodes(t(", or run {command}."), { command: h("code", null, `pipebench latency ${id}`) })));
    return;
  }
  // The runner's bounds on round trips (/api/params).
  const R = params.latency.round_trips;
  const mode = h("select.pipebook-latency-mode", { id: `pipebook-latency-${id}-mode` }, modesOf(root).map((m) => h("option", { value: m }, m === "busy" ? t("busy-polling") : t("blocking"))));
  const f = latencyForm(`pipebook-latency-${id}`, R, { mode, spellcheckOff: true, button: t("Time round trips"), trips: t("Round trips") });
  const status = statusLine({ state: "idle" });
  const out = {
    bar: h("progress.pipebook-ipc-progress", { max: 1, hidden: true }),
    chart: distChart(t("Distribution of {title} round trips", { title })),
    table: h("table.pipebook-latency-result"),
    summary: h("p.pipebook-latency-summary"),
    command: h("p.pipebook-sweep-command"),
  };
  // The chart joins the card with its first bars: an empty box would print as one.
  el.append(f.form, status, out.bar, out.table, out.summary, out.command);
  const life = new CardLife({
    status,
    marks: [root, status],
    states: { queued: "running" },
    run: [f.runButton],
    cancel: f.cancelButton,
    form: f.form,
    bar: out.bar,
    words: {
      cancelled: () => t("Cancelled. Both ends were stopped and what they shared removed."),
      done: (r) => t("Done: median {p50}, p99 {p99}.", { p50: nsText(r.p50), p99: nsText(r.p99) }),
    },
  });
  life.show("idle", t("Ready: the run takes two CPUs for itself, after any run ahead of it."));
  const card = { root, out, life };
  f.form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (life.busy) return;
    const bytes = parseSize(f.size.value);
    const n = Number(f.trips.value);
    if (bytes === null || bytes < 1) return life.show("error", t("Error: “{value}” is not a message size such as {example}.", { value: f.size.value, example: "64, 4KiB" }));
    if (!Number.isInteger(n) || n < R.min || n > R.max) return life.show("error", t("Error: round trips must be {min} to {max}.", { min: R.min, max: R.max }));
    fill(out.command, t("Same on the command line: "), h("code", null, `pipebench latency ${id} --mode ${mode.value} --sizes ${bytes} --round-trips ${n}`));
    life.start({ type: "latency", mechanism: id, mode: mode.value, size: bytes, round_trips: n }, latencyHandlers(card, mode.value));
  });
}
