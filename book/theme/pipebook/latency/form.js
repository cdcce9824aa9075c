// The form both latency cards share: (the waiting mode,) the message size and the
// round trips within the runner's bounds, Run / Cancel.

import { h } from "../dom.js";
import { t } from "../i18n.js";

/**
 * The form of ids `fid`-…: `R` the runner's bounds on round trips ({start, min,
 * max}); `opts.mode` a mode select to put first (or none), `opts.spellcheckOff`
 * whether the size field has spell checking off, `opts.button` the run
 * button's text and `opts.trips` the round trips' label. Returns {form, size,
 * trips, runButton, cancelButton}.
 */
export function latencyForm(fid, R, opts) {
  const size = h("input.pipebook-latency-size", { id: `${fid}-size`, type: "text", value: "64", size: 7, ...(opts.spellcheckOff ? { spellcheck: "false" } : {}) });
  const trips = h("input.pipebook-latency-trips", { id: `${fid}-trips`, type: "number", value: String(R.start), min: R.min, max: R.max });
  const field = (input, text) => h("label.pipebook-field", { for: input.id }, h("span", null, text), input);
  const runButton = h("button.pipebook-run-button.pipebook-latency-button", { type: "submit" }, opts.button);
  const cancelButton = h("button.pipebook-cancel-button", { type: "button", disabled: true }, t("Cancel"));
  const form = h(
    "form.pipebook-controls",
    { novalidate: true },
    opts.mode ? field(opts.mode, t("Waiting")) : null,
    field(size, t("Message size")),
    field(trips, opts.trips),
    h("div.pipebook-buttons", null, runButton, cancelButton),
  );
  return { form, size, trips, runButton, cancelButton };
}
