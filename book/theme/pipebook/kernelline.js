// What this kernel does, in one line per chapter claim: the runner's behaviour
// probes (/api/system's `behaviour`) read into the text a `{{#kernel PROBE}}`
// line shows. Pure: no DOM, no network (kernel.js draws it).

import { runnerSentence, t } from "./i18n.js";

/** The probe named `id` in a system report, when it is well formed; else null. */
export function probeOf(report, id) {
  const list = Array.isArray(report?.behaviour) ? report.behaviour : [];
  const found = list.find((p) => p && p.id === id);
  if (!found || typeof found.line !== "string" || typeof found.answer !== "string") return null;
  return found;
}

/**
 * The words of one line: `text` (what the kernel does), `expect` (what it means
 * for the book's figures), `evidence` (what was measured, or why it could not
 * be) and `state` (`measured`, `unknown` or `offline`).
 */
export function kernelLine(report, id) {
  if (!report) {
    return {
      state: "offline",
      text: t("On your machine: start the runner ({command}) to measure what your kernel does here.", { command: "cargo run --release" }),
      expect: "",
      evidence: "",
    };
  }
  const probe = probeOf(report, id);
  if (!probe) {
    return {
      state: "unknown",
      text: t("On this machine: the runner did not report this behaviour, so the chapter cannot tell what your kernel does."),
      expect: t("The chapter describes the article's kernel; yours may differ."),
      evidence: t("No probe named {id} in the runner's report.", { id }),
    };
  }
  const unknown = probe.answer === "unknown";
  // The probe's own words: the runner's, in the page's language where the
  // edition's catalogue has them, else in English (and marked so).
  const line = runnerSentence(probe.line);
  const expect = runnerSentence(typeof probe.expect === "string" ? probe.expect : "");
  return {
    state: unknown ? "unknown" : "measured",
    fromRunner: !(line.translated && (expect.translated || !expect.text)),
    text: line.text,
    expect: expect.text,
    evidence: unknown ? t("Why: {why}", { why: probe.why_unknown ?? t("not said") }) : t("Seen: {evidence}", { evidence: probe.evidence ?? "" }),
  };
}

/**
 * Which way a chapter's aside for one answer of a probe is shown: `this` (the
 * probe gave this answer), `not-this` (another answer, and this aside is the
 * chapter's default explanation: kept, marked as not this machine's), `hidden`
 * (another answer, and the aside is an alternative), `unknown` (the probe could
 * not tell: every aside stays) or `offline` (no runner: every aside stays).
 */
export function branchState(report, id, answer, isDefault) {
  if (!report) return "offline";
  const probe = probeOf(report, id);
  if (!probe || probe.answer === "unknown") return "unknown";
  if (probe.answer === answer) return "this";
  return isDefault ? "not-this" : "hidden";
}
