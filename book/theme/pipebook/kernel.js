// The `{{#kernel PROBE}}` line: what this reader's kernel does where the
// chapter depends on it, measured by the runner at its start, with the evidence
// one click away (a <details>). The words come from kernelline.js.
// Hooks for tests: div.pipebook-kernel[data-state="measured"|"unknown"|"offline"],
// .pipebook-kernel-text, details.pipebook-kernel-evidence.

import { system } from "./api.js";
import { fill, h } from "./dom.js";
import { kernelLine } from "./kernelline.js";

/** Draws the line for `report` (a system report, or null without a runner). */
export function drawKernelLine(el, report) {
  const line = kernelLine(report, el.dataset.probe);
  el.dataset.state = line.state;
  const parts = [h("p.pipebook-kernel-text", null, line.text)];
  if (line.expect || line.evidence) {
    parts.push(
      h(
        "details.pipebook-kernel-evidence",
        null,
        h("summary", null, "What this means here, and how it was measured"),
        line.expect ? h("p", null, line.expect) : null,
        line.evidence ? h("p", null, line.evidence) : null,
      ),
    );
  }
  fill(el, ...parts);
}

/** Mounts a `{{#kernel PROBE}}` line. */
export async function mountKernel(el) {
  let report = null;
  try {
    report = await system();
  } catch {
    report = null;
  }
  drawKernelLine(el, report);
}
