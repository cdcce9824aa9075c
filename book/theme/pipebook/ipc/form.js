// The run form both IPC cards share: bytes, bytes per call, whether the kernel's
// events are counted and (on a single card) whether the run is quiet, with the
// runner's bounds (/api/ipc), and Run / Cancel.

import { h } from "../dom.js";
import * as fmt from "../format.js";
import { runnerText, t } from "../i18n.js";
import { bound, ipcParams } from "./model.js";

const textInput = (cls, id, value, extra = {}) => h(`input.${cls}`, { id, type: "text", value, ...extra, size: 9, spellcheck: "false" });

/** A checkbox in its label: the runner's label for it when it has one, else `fallback`. */
function check(input, b, fallback) {
  return h("label.pipebook-field.pipebook-check", { for: input.id, title: b.help || "" }, input, b.label ? runnerText(h("span", null, b.label)) : h("span", null, fallback));
}

/**
 * The run/cancel form: `defaults.button` is the run button's text, `defaults.quiet`
 * "choice" (the single card offers the switch) or "always" (the matrix runs quiet,
 * as everything it compares must be). Returns {form, runButton, cancelButton,
 * read()}, `read()` giving {params} or {error}.
 */
export function controls(id, lab, defaults) {
  const bytesBound = bound(lab, "bytes");
  const chunkBound = bound(lab, "chunk");
  const countsBound = bound(lab, "counts");
  const quietBound = defaults.quiet === "choice" ? bound(lab, "quiet") : null;
  // The runner publishes its default size (the survey's); without a runner nothing runs anyway.
  const value = fmt.isNumber(bytesBound?.default) ? fmt.sizeArg(bytesBound.default) : "";
  const bytes = textInput("pipebook-ipc-bytes", `${id}-bytes`, value);
  const chunk = textInput("pipebook-ipc-chunk", `${id}-chunk`, "", { placeholder: t("default") });
  const field = (input, text, help) => h("label.pipebook-field", { for: input.id, title: help || "" }, h("span", null, text), input);
  // Only where the runner takes the switch (it publishes it in /api/ipc).
  const counts = countsBound ? h("input.pipebook-ipc-counts", { id: `${id}-counts`, type: "checkbox", checked: countsBound.default !== 0 }) : null;
  const quiet = quietBound ? h("input.pipebook-ipc-quiet", { id: `${id}-quiet`, type: "checkbox" }) : null;
  const runButton = h("button.pipebook-run-button.pipebook-ipc-button", { type: "submit" }, defaults.button);
  const cancelButton = h("button.pipebook-cancel-button", { type: "button", disabled: true }, t("Cancel"));
  const form = h(
    "form.pipebook-controls",
    { novalidate: true },
    field(bytes, t("Bytes (at most {max})", { max: fmt.bytes(bytesBound?.max) }), bytesBound?.help),
    field(chunk, t("Bytes per call"), chunkBound?.help),
    counts ? check(counts, countsBound, t("Count kernel events")) : null,
    quiet ? check(quiet, quietBound, t("Quiet run")) : null,
    h("div.pipebook-buttons", null, runButton, cancelButton),
  );
  const read = () =>
    ipcParams({ bytes: bytes.value, chunk: chunk.value, counted: counts ? counts.checked : true, quiet: defaults.quiet === "always" || !!quiet?.checked }, lab);
  return { form, runButton, cancelButton, read };
}
