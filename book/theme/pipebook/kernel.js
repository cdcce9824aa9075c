// The `{{#kernel PROBE}}` line: what this reader's kernel does where the
// chapter depends on it, measured by the runner at its start, with the evidence
// one click away (a <details>, with a button that asks the runner to probe again
// (a `probe` job, queued like a run)). The chapter's asides for each answer
// (div.pipebook-kernel-branch[data-probe][data-answer], data-default on the
// article's) are shown, marked or hidden to match. The words come from
// kernelline.js.
// Hooks for tests: div.pipebook-kernel[data-state="measured"|"unknown"|"offline"],
// .pipebook-kernel-text, details.pipebook-kernel-evidence,
// button.pipebook-kernel-probe, .pipebook-kernel-status,
// div.pipebook-kernel-branch[data-kernel="this"|"not-this"|"hidden"|"unknown"|"offline"].

import { system } from "./api.js";
import { fill, h } from "./dom.js";
import { runnerText, t } from "./i18n.js";
import { branchState, kernelLine } from "./kernelline.js";
import { CardLife } from "./cardlife.js";

/** The report the page's lines and asides were last drawn from. */
let current = null;

/** When the probes ran, as a sentence (empty when the report does not say). */
function probedAt(report) {
  const ms = report?.behaviour_probed_at_ms;
  if (typeof ms !== "number") return "";
  return t("Probed at {time}.", { time: new Date(ms).toLocaleTimeString() });
}

/** Draws the line for `report` (a system report, or null without a runner). */
export function drawKernelLine(el, report) {
  const line = kernelLine(report, el.dataset.probe);
  el.dataset.state = line.state;
  const parts = [h("p.pipebook-kernel-text", null, line.text)].map((p) => (line.fromRunner ? runnerText(p) : p));
  if (line.expect || line.evidence) {
    const when = probedAt(report);
    parts.push(
      h(
        "details.pipebook-kernel-evidence",
        null,
        h("summary", null, t("What this means here, and how it was measured")),
        line.expect ? (line.fromRunner ? runnerText(h("p", null, line.expect)) : h("p", null, line.expect)) : null,
        line.evidence ? (line.fromRunner ? runnerText(h("p", null, line.evidence)) : h("p", null, line.evidence)) : null,
        when ? h("p.pipebook-kernel-when", null, when) : null,
        report ? probeAgain(() => el) : null,
      ),
    );
  }
  fill(el, ...parts);
}

/** Shows, marks or hides every chapter aside on the page to match `report`. */
export function drawBranches(root, report) {
  const labels = {
    this: t("On this machine (measured):"),
    "not-this": t("Not this machine: its kernel answers otherwise."),
    unknown: t("This machine's probe could not tell which case applies."),
    offline: t("Start the runner to see which case is yours."),
  };
  for (const aside of root.querySelectorAll("div.pipebook-kernel-branch[data-probe][data-answer]")) {
    const state = branchState(report, aside.dataset.probe, aside.dataset.answer, aside.hasAttribute("data-default"));
    aside.dataset.kernel = state;
    aside.hidden = state === "hidden";
    aside.querySelector(".pipebook-kernel-branch-label")?.remove();
    if (labels[state]) aside.prepend(h("p.pipebook-kernel-branch-label", null, labels[state]));
  }
}

/** Redraws every line and aside of the page from `report`. */
function redrawAll(report) {
  current = report;
  for (const el of document.querySelectorAll(".pipebook-kernel[data-probe]")) drawKernelLine(el, report);
  drawBranches(document, report);
}

/**
 * The "Probe again" button and its status line: queues the probes on the runner
 * (never beside a run) and redraws the page from their answers. `host()` is the
 * element the status belongs to (a line is redrawn, so it is looked up late).
 */
export function probeAgain(host, onFresh = redrawAll) {
  const button = h("button.pipebook-kernel-probe", { type: "button" }, t("Probe again"));
  const status = h("p.pipebook-kernel-status", { role: "status", "aria-live": "polite" });
  const life = new CardLife({
    status,
    run: [button],
    words: {
      connecting: () => t("Probing the kernel…"),
      queued: (position) => t("Waiting for the run ahead (place {position} in the queue)…", { position }),
      error: (message) => t("Could not probe: {message}", { message }),
      done: () => null,
    },
  });
  button.addEventListener("click", () =>
    life.start({ type: "probe" }, {
      behaviour: (msg) => {
        const report = { ...(current ?? {}), behaviour: msg.behaviour, behaviour_probed_at_ms: msg.probed_at_ms };
        onFresh(report);
        const el = host();
        const fresh = el?.querySelector(".pipebook-kernel-status");
        if (fresh) fresh.textContent = t("Probed again: the answers above are fresh.");
      },
    }),
  );
  return h("div.pipebook-kernel-again", null, button, status);
}

/** Mounts a `{{#kernel PROBE}}` line (and, once per page, the chapter's asides). */
export async function mountKernel(el) {
  let report = null;
  try {
    report = await system();
  } catch {
    report = null;
  }
  current = report;
  drawKernelLine(el, report);
  drawBranches(document, report);
}

/**
 * The machine panel's part (the your-machine chapter): every probe's line, when
 * they ran, and "Probe again", which also redraws the page's lines and asides.
 */
export function behaviourPanel(report) {
  const list = h("ul.pipebook-system-behaviour");
  const when = h("p.pipebook-kernel-when");
  const draw = (fresh) => {
    const probes = Array.isArray(fresh?.behaviour) ? fresh.behaviour : [];
    fill(
      list,
      probes.map((p) => h("li", { dataset: { probe: p.id, answer: p.answer } }, kernelLine(fresh, p.id).text)),
    );
    when.textContent = probedAt(fresh);
  };
  current = current ?? report;
  draw(report);
  const panel = h(
    "div.pipebook-system-kernel",
    null,
    h("h3", null, t("What this kernel does")),
    list,
    when,
  );
  panel.append(
    probeAgain(
      () => panel,
      (fresh) => {
        draw(fresh);
        redrawAll(fresh);
      },
    ),
  );
  return panel;
}
