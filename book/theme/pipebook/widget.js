// The "Run this step" card that replaces each <div class="pipebook-run">.
// Stable hooks for tests and styling: button.pipebook-run-button, button.pipebook-cancel-button,
// .pipebook-status[data-state], .pipebook-live-gibs, .pipebook-result-gibs and
// data-progress-count / data-state on the .pipebook-run root.

import { START_HINT } from "./api.js";
import { LiveChart } from "./chart.js";
import { EndStats, resultNotes } from "./details.js";
import { fill, h, offlineHint } from "./dom.js";
import * as fmt from "./format.js";
import { runControls } from "./controls.js";
import { mountProfile } from "./profile.js";
import { startRun } from "./runner.js";
import { allResults, record } from "./store.js";

const KIND_LABEL = {
  article: "Step from the article",
  variant: "Variant",
  experiment: "Experiment",
};

const STATUS_TEXT = {
  idle: "Ready. Runs on this machine: the writer and reader are pinned to two CPUs.",
  connecting: "Connecting to the runner…",
  done: "Done.",
  cancelled: "Cancelled. Nothing is left running.",
};

const BUTTON_TEXT = {
  connecting: "Connecting…",
  queued: "Queued…",
  running: "Running…",
};

let nextId = 0;

/** Reads what the preprocessor put on the placeholder. */
function describe(root, catalogEntry) {
  const d = root.dataset;
  const entry = catalogEntry || {};
  return {
    step: d.step,
    title: d.title || entry.title || d.step,
    summary: d.summary || entry.summary || "",
    kind: d.kind || entry.kind || "article",
    article: fmt.number(d.article) ?? fmt.number(entry.article_gib_s),
    reference: fmt.range(d.reference) ?? fmt.range(entry.reference_gib_s),
  };
}

export function mountWidget(root, { online, catalogEntry }) {
  const info = describe(root, catalogEntry);
  const id = `pipebook-${++nextId}`;
  root.classList.add("pipebook-enhanced");
  root.dataset.progressCount = "0";
  root.dataset.state = online ? "idle" : "offline";

  const yours = h("span.pipebook-result-gibs", null, "—");
  const live = h("span.pipebook-live-gibs", { hidden: true }, "0.00");
  const yoursLabel = h("span.pipebook-figure-label", null, "This machine");
  const figure = (cls, label, title, value) =>
    h(
      `div.pipebook-figure.${cls}`,
      { title },
      h("span.pipebook-figure-label", null, label),
      h("span.pipebook-figure-value", null, value, h("span.pipebook-unit", null, " GiB/s")),
    );
  const figures = h(
    "div.pipebook-figures",
    null,
    h(
      "div.pipebook-figure.pipebook-figure-yours",
      null,
      yoursLabel,
      h("span.pipebook-figure-value", null, yours, live, h("span.pipebook-unit", null, " GiB/s")),
    ),
    info.article !== null
      ? figure(
          "pipebook-figure-article",
          "The article",
          "Intel i7-8550U laptop, Linux 5.17, 10 GiB piped (the article)",
          h("span.pipebook-article-gibs", null, fmt.figure(info.article)),
        )
      : null,
    info.reference
      ? figure(
          "pipebook-figure-reference",
          "C++ on a 2-core VM",
          "The article's C++ programs built and run on the project's 2-core AMD EPYC KVM guest, Linux 6.18",
          h("span.pipebook-reference-gibs", null, fmt.rangeText(info.reference)),
        )
      : null,
  );

  const head = h(
    "div.pipebook-card-head",
    null,
    h("span.pipebook-kind", { dataset: { kind: info.kind } }, KIND_LABEL[info.kind] || info.kind),
    h("span.pipebook-step-id", null, info.step),
    h("p.pipebook-title", null, info.title),
    info.summary ? h("p.pipebook-summary", null, info.summary) : null,
  );

  const card = h("div.pipebook-card", { role: "group", "aria-label": `Run step: ${info.title}` }, head);
  root.append(card);

  if (!online) {
    figures.querySelector(".pipebook-figure-yours").remove();
    card.append(
      figures,
      offlineHint("To measure this on your own machine", START_HINT, " and press “Run this step”."),
    );
    return;
  }

  const { form, sec, runButton, cancelButton, readParams } = runControls(catalogEntry, id);
  const status = h("p.pipebook-status", { role: "status", "aria-live": "polite", dataset: { state: "idle" } });
  const chart = new LiveChart();
  chart.reset({ article: info.article, reference: info.reference, seconds: sec.value });
  const compare = h("p.pipebook-compare");
  const stats = new EndStats();
  const notes = h("ul.pipebook-notes");
  card.append(form, status, h("div.pipebook-body", null, chart.el, figures), compare, stats.el, notes);
  mountProfile(card, { step: info.step, readParams });

  stats.show(null);

  // Before a run: the reader's best so far for this step (this browser and the runner's
  // history), and what to compare with.
  const showBest = async () => {
    const mine = (await allResults()).filter((r) => r.step === info.step);
    // A run started meanwhile owns the figures now.
    if (run) return;
    const best = mine.length ? Math.max(...mine.map((r) => r.gib_per_s)) : null;
    yours.textContent = best === null ? "—" : fmt.gib(best);
    yoursLabel.textContent = best === null ? "This machine" : "Your best so far";
    if (best === null) {
      const against = [];
      if (info.article !== null) against.push(`the article's ${fmt.figure(info.article)} GiB/s`);
      if (info.reference) against.push(`the C++ build's ${fmt.rangeText(info.reference)} GiB/s on a 2-core VM`);
      fill(compare, against.length ? `Run it to compare with ${against.join(" and ")}.` : "");
      return;
    }
    fill(
      compare,
      `Best of ${mine.length} run${mine.length === 1 ? "" : "s"} on this machine`,
      info.article !== null ? `: ${fmt.ratio(best, info.article)} the article.` : ".",
    );
  };
  showBest();

  let run = null;
  let progressCount = 0;
  let budget = sec.value;
  let lastSample = null;
  let warnings = [];

  const setState = (state, text) => {
    root.dataset.state = state;
    status.dataset.state = state;
    card.dataset.state = state;
    status.textContent = text ?? STATUS_TEXT[state] ?? "";
    const busy = state === "connecting" || state === "queued" || state === "running";
    runButton.disabled = busy;
    cancelButton.disabled = !busy;
    for (const el of form.querySelectorAll("input, select")) el.disabled = busy;
    runButton.textContent = BUTTON_TEXT[state] ?? "Run this step";
    live.hidden = state !== "running";
    yours.hidden = state === "running";
    if (state === "running") yoursLabel.textContent = "So far";
    else if (busy || state === "done" || state === "error") yoursLabel.textContent = "This machine";
  };
  setState("idle");

  const onProgress = (msg) => {
    progressCount += 1;
    root.dataset.progressCount = String(progressCount);
    if (root.dataset.state !== "running") setState("running");
    const t = Number(msg.elapsed_ms) / 1000;
    const b = Number(msg.bytes);
    // The big figure is the average so far (it settles on the result); the chart shows
    // the rate sample by sample.
    live.textContent = fmt.gib(t > 0 ? b / 2 ** 30 / t : Number(msg.gib_per_s));
    // Chart the rate over the last stretch (≥150 ms) rather than the running average.
    if (!lastSample) {
      chart.push(t, Number(msg.gib_per_s));
      lastSample = { t, b };
    } else if (t - lastSample.t >= 0.15 && b >= lastSample.b) {
      chart.push(t, (b - lastSample.b) / 2 ** 30 / (t - lastSample.t));
      lastSample = { t, b };
    }
    status.textContent = `Running: ${t.toFixed(1)} s of ${budget} s, ${fmt.bytes(b)} through the pipe.`;
  };

  const onResult = (result) => {
    run = null;
    const corrupted = result.corrupted_bytes;
    if (info.kind === "experiment" && fmt.isNumber(corrupted)) {
      // The experiment is about damage, not speed: lead with the corrupted share.
      yoursLabel.textContent = "Bytes corrupted";
      yours.textContent = result.bytes > 0 ? `${((100 * corrupted) / result.bytes).toFixed(1)}%` : "—";
      root.dataset.corrupted = String(corrupted);
      figures.querySelector(".pipebook-figure-yours .pipebook-unit").textContent = "";
    } else {
      yours.textContent = fmt.gib(result.gib_per_s);
    }
    chart.finish(Number(result.elapsed_ms) / 1000);
    setState("done", `Done: ${fmt.bytes(result.bytes)} in ${fmt.ms(result.elapsed_ms)}.`);
    const parts = [];
    const vsArticle = fmt.ratio(result.gib_per_s, info.article);
    if (vsArticle) parts.push(`${vsArticle} the article (${fmt.figure(info.article)} GiB/s)`);
    if (info.reference) {
      const mid = (info.reference.low + info.reference.high) / 2;
      parts.push(`${fmt.ratio(result.gib_per_s, mid)} the C++ build on the project's VM`);
    }
    fill(compare, parts.length ? h("strong", null, `${parts.join(", ")}.`) : "");
    stats.show(result);
    const items = resultNotes(result, { budget, warnings });
    fill(notes, items.map((item) => h("li", null, item)));
    record(result);
  };

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (run) return;
    const read = readParams();
    if (read.errors) {
      setState("error", `Error: ${read.errors.join("; ")}.`);
      return;
    }
    const params = read.params;
    budget = params.seconds;
    progressCount = 0;
    lastSample = null;
    warnings = [];
    root.dataset.progressCount = "0";
    live.textContent = "0.00";
    yours.textContent = "—";
    fill(notes);
    stats.show(null);
    fill(compare, "");
    chart.reset({ article: info.article, reference: info.reference, seconds: budget });
    card.classList.add("pipebook-used");
    setState("connecting");
    run = startRun(info.step, params, {
      queued: (position) =>
        setState(
          "queued",
          position > 0
            ? `Waiting: another run goes first (place ${position} in the queue). Benchmarks share the CPUs, so they run one at a time.`
            : "Queued…",
        ),
      started: (msg) => {
        setState("running", params.quiet ? `Quiet run: up to ${budget} s, the result comes at the end…` : `Running for up to ${budget} s…`);
        warnings = Array.isArray(msg.warnings) ? msg.warnings.map(String) : [];
        fill(notes, warnings.map((w) => h("li.pipebook-warning", null, w)));
      },
      progress: onProgress,
      result: onResult,
      cancelled: () => {
        run = null;
        setState("cancelled");
        showBest();
      },
      error: (message) => {
        run = null;
        setState("error", `Error: ${message}`);
      },
      notice: (message) => {
        notes.append(h("li.pipebook-warning", null, message));
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
