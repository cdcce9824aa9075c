// The "all mechanisms" card: <div class="pipebook-ipc-matrix"> runs every mechanism in
// turn, each its own queued run, always quiet (everything it compares must be), and
// charts them beside the survey; under it, one mechanism against another (versus.js).
// Hooks for tests: button.pipebook-ipc-button, button.pipebook-cancel-button,
// input.pipebook-ipc-bytes, input.pipebook-ipc-counts, .pipebook-status[data-state],
// and on the root data-state and data-rows.

import { statusLine } from "../announce.js";
import { START_HINT } from "../api.js";
import { fill, h, offlineHint } from "../dom.js";
import * as fmt from "../format.js";
import { figureSide, judge } from "../judge.js";
import { CardLife } from "../cardlife.js";
import { t, withNodes } from "../i18n.js";
import { IpcChart } from "./chart.js";
import { controls } from "./form.js";
import { surveyCell } from "./history.js";
import { QuietRuns, surveyRate } from "./model.js";
import { ipcProgress } from "./progress.js";
import { versusSection } from "./versus.js";
import { matrixCard } from "./view.js";

/** The ÷ survey cell of a row: the ratio at once, the runner's interval once the runs can have one. */
function surveyTd(r, mine) {
  const cell = fmt.isNumber(r.mine) ? surveyCell(mine, r.survey) : { text: "—", comparison: null };
  const td = h("td.pipebook-ipc-vs-survey", null, cell.text);
  if (fmt.isNumber(r.mine) && fmt.isNumber(r.survey) && mine.length) {
    judge({ paired: true, a: mine, b: figureSide(mine, r.survey) }).then((answer) => {
      const judged = surveyCell(mine, r.survey, answer.judgement ?? null);
      fill(td, judged.text);
      if (judged.comparison) td.dataset.verdict = judged.comparison.verdict;
    });
  }
  return td;
}

/** The matrix's table: a row per mechanism, this page's quiet runs of it at the matrix's size beside the survey. */
function fillTable(table, rows, runs) {
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
    rows.map((r) =>
      h("tr", { dataset: { mechanism: r.id } }, h("td", null, r.id), h("td", null, r.copies ?? "—"), h("td", null, fmt.figure(r.mine)), h("td", null, fmt.figure(r.survey)), surveyTd(r, runs.of(r.id))),
    ),
  );
}

/** Runs every mechanism of `card` in turn with `params`, each a queued run; a refusal says so and goes on. */
async function runAll(card, params) {
  const { mechanisms, life, versus } = card;
  for (const [index, m] of mechanisms.entries()) {
    const where = { id: m.id, n: index + 1, total: mechanisms.length };
    if (life.stopped) return life.show("cancelled", t("Cancelled at {id}. Nothing is left running.", { id: m.id }));
    life.show("running", t("Connecting for {id} ({n} of {total})…", where));
    let total = null;
    const label = t("{id} ({n} of {total})", where);
    const got = await life.session({ type: "ipc", mechanism: m.id, params }, {
      queued: (position) => life.say(t("{id}: waiting, place {position} in the queue.", { id: m.id, position })),
      started: (msg) => {
        total = msg.params?.bytes ?? null;
        life.say(t("Running {label}, quiet…", { label }));
      },
      progress: (msg) => life.say(`${label}: ${ipcProgress(msg, total).text}`),
    });
    if (got.ended === "cancelled") return life.show("cancelled", t("Cancelled at {id}. Nothing is left running.", { id: m.id }));
    if (got.ended === "error") {
      // One mechanism refused (e.g. a System V limit): say so and go on.
      card.rows[index].error = got.message;
      life.say(`${m.id}: ${got.message}`);
      continue;
    }
    card.rows[index].mine = got.event.mib_per_s;
    card.runs.keep(m.id, got.event);
    versus.show();
    card.redraw();
  }
  life.show("done", `Done: ${mechanisms.length} mechanisms.`);
}

/** The matrix's life: data-state on root, card and status, running from the first connection to the last result. */
function matrixLife(root, el, status, ui, versus) {
  return new CardLife({
    status,
    marks: [root, el, status],
    states: { connecting: "running", queued: "running" },
    run: [ui.runButton],
    cancel: ui.cancelButton,
    form: ui.form,
    // Each run says where it is in the queue with its mechanism.
    words: { queued: () => null },
    // One against another waits while the matrix runs.
    onPhase: (phase, busy) => versus.hold(busy),
  });
}

/** The "all mechanisms" card: one queued run per mechanism, in table order. */
export function mountIpcMatrix(root, { online, lab }) {
  root.classList.add("pipebook-enhanced");
  root.dataset.state = online && lab ? "idle" : "offline";
  root.dataset.rows = "0";
  const title = t("Every mechanism on this machine beside the survey");
  const el = matrixCard(title);
  root.append(el);
  if (!online || !lab) {
    el.append(offlineHint(t("To run every mechanism on your own machine"), START_HINT, withNodes(t(", or run {command}."), { command: h("code", null, "pipebench ipc") })));
    return;
  }
  const mechanisms = lab.mechanisms.filter((m) => m.pair);
  const ui = controls("pipebook-ipc-matrix", lab, { button: t("Run all mechanisms"), quiet: "always" });
  const status = statusLine({ state: "idle" });
  const chart = new IpcChart(title);
  chart.el.hidden = true; // until the first run starts
  const table = h("table.pipebook-sweep-table");
  const card = { mechanisms, rows: [], runs: new QuietRuns() };
  card.redraw = () => {
    chart.el.hidden = false;
    chart.draw(card.rows);
    root.dataset.rows = String(card.rows.filter((r) => fmt.isNumber(r.mine)).length);
    fillTable(table, card.rows, card.runs);
  };
  // A run of the part below adds to a row's ÷ survey too, once the matrix has rows.
  const keepAndRedraw = (id, r) => {
    card.runs.keep(id, r);
    if (card.rows.length) card.redraw();
  };
  card.versus = versusSection(mechanisms, keepAndRedraw, card.runs, () => ui.read(), (busy) => {
    ui.runButton.disabled = busy;
  });
  el.append(ui.form, status, chart.el, table, card.versus.el);
  card.life = matrixLife(root, el, status, ui, card.versus);
  card.life.show("idle", t("Ready: {n} producer/consumer mechanisms.", { n: mechanisms.length }));
  ui.form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (card.life.busy) return;
    const asked = ui.read();
    if (asked.error) return card.life.show("error", `Error: ${asked.error}.`);
    card.rows = mechanisms.map((m) => ({ id: m.id, copies: m.copies, mine: null, survey: surveyRate(m) }));
    card.redraw();
    card.life.begin("running");
    runAll(card, asked.params);
  });
}
