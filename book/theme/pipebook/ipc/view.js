// What an IPC card shows of its mechanism before anything runs: the head, the
// survey's figure with its source, and the kernel functions on the mechanism's path.

import { h } from "../dom.js";
import * as fmt from "../format.js";
import { t, withNodes } from "../i18n.js";
import { rate } from "./chart.js";
import { copiesText } from "./model.js";

/** The survey most cards' figures come from. */
export const SURVEY_SOURCE =
  t("BiscuitOS zero-copy survey, Linux 6.10 x86_64, measured in an emulator on hardware it does not name");

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

/** A single mechanism's card, head to kernel functions; `root` is its placeholder. */
export function mechanismCard(root, m) {
  return h(
    "div.pipebook-card.pipebook-ipc-card",
    { role: "group", "aria-label": t("IPC mechanism: {title}", { title: m.title }) },
    h(
      "div.pipebook-card-head",
      null,
      h("span.pipebook-kind", { dataset: { kind: "ipc" } }, "IPC"),
      h("span.pipebook-step-id", null, m.id),
      h("p.pipebook-title", null, m.title),
      h("p.pipebook-summary", null, [copiesText(m.copies), m.copy_path].filter(Boolean).join(": ")),
    ),
    surveyLine(m, surveySource(root)),
    kernelLine(m),
  );
}

/** The matrix's card: its head, and what the rows compare. */
export function matrixCard(title) {
  return h(
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
}
