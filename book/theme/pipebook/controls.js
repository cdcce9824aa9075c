// The controls of a "Run this step" card, built from the runner's parameter specs
// (see params.js): time budget, bytes per call, pipe, byte cap, quiet run, and the
// Run / Cancel buttons. Hooks for tests: input.pipebook-seconds, .pipebook-buf-size,
// .pipebook-pipe-size, .pipebook-bytes, input.pipebook-quiet.

import { h } from "./dom.js";
import * as fmt from "./format.js";
import { collect, secondsControl, sizeChoices, spec } from "./params.js";
import { runnerText, t } from "./i18n.js";

// Caps offered for the bytes a run may pipe: none, or what the article piped, both
// as the runner publishes them. No small caps: the time budget decides, so every
// run lasts long enough to settle (a 1 GiB cap would end a busy-loop run after ~20 ms).
function byteCaps(bytesSpec) {
  const article = bytesSpec?.article;
  const caps = [["", t("no cap")]];
  if (fmt.isNumber(article) && article <= bytesSpec.max) caps.push([article, t("{size} (the article's)", { size: fmt.bytes(article) })]);
  return caps;
}

// Chunks beyond this are allowed by the runner but make no sense as a menu entry.
const LARGEST_BUFFER_CHOICE = 16 * (1 << 20);

function select(cls, label, choices, id) {
  const el = h(
    `select.${cls}`,
    { id },
    choices.map(([value, text]) => h("option", { value: String(value) }, text)),
  );
  return h("label.pipebook-field", { for: id }, h("span", null, label), el);
}

/**
 * The time-budget input, bounded by the runner's `seconds` spec; `value` overrides
 * the spec's default. Returns the spec's bounds too.
 */
export function secondsInput(catalogEntry, id, value) {
  const sec = secondsControl(spec(catalogEntry, "seconds"));
  // "sweep": the runner's default for a sweep's runs.
  if (value === "sweep") value = sec.sweep;
  const input = h("input.pipebook-seconds", {
    id: `${id}-seconds`,
    type: "number",
    min: sec.min,
    max: sec.max,
    step: 0.5,
    value: value ?? sec.value,
    inputmode: "decimal",
    required: true,
  });
  return { sec, input };
}

/**
 * The form for `catalogEntry`'s step; `id` prefixes element ids.
 * @returns {{form, sec, runButton, cancelButton, readParams: () => ({params}|{errors})}}
 */
export function runControls(catalogEntry, id) {
  const { sec, input: seconds } = secondsInput(catalogEntry, id);
  const pipeSpec = spec(catalogEntry, "pipe_size");
  const bufField = select(
    "pipebook-buf-size",
    t("Bytes per call"),
    sizeChoices(spec(catalogEntry, "buf_size"), { limit: LARGEST_BUFFER_CHOICE }),
    `${id}-buf`,
  );
  const pipeField = select(
    "pipebook-pipe-size",
    t("Pipe"),
    sizeChoices(pipeSpec, { own: fmt.isNumber(pipeSpec?.default) ? t("step's own") : t("kernel's default") }),
    `${id}-pipe`,
  );
  const bytesSpec = spec(catalogEntry, "bytes");
  const bytesField = select(
    "pipebook-bytes",
    t("Bytes"),
    byteCaps(bytesSpec),
    `${id}-bytes`,
  );
  const quiet = h("input.pipebook-quiet", { id: `${id}-quiet`, type: "checkbox" });
  const quietField = h(
    "label.pipebook-field.pipebook-check",
    { for: quiet.id, title: t("No live chart: the page and the runner stay out of the benchmark's way, and only the result is shown.") },
    quiet,
    h("span", null, t("Quiet run")),
  );
  // Tracing the kernel's events: its label and help are the runner's own spec.
  const traceSpec = spec(catalogEntry, "trace_syscalls");
  const trace = h("input.pipebook-trace", { id: `${id}-trace`, type: "checkbox" });
  const traceField = traceSpec
    ? h(
        "label.pipebook-field.pipebook-check",
        { for: trace.id, title: traceSpec.help ?? "" },
        trace,
        traceSpec.label ? runnerText(h("span", null, traceSpec.label)) : h("span", null, t("Trace kernel events")),
      )
    : null;
  const runButton = h("button.pipebook-run-button", { type: "submit" }, t("Run this step"));
  const cancelButton = h("button.pipebook-cancel-button", { type: "button", disabled: true }, t("Cancel"));
  const form = h(
    "form.pipebook-controls",
    { novalidate: true },
    h(
      "label.pipebook-field",
      { for: seconds.id },
      h("span", null, t("Time budget")),
      h("span.pipebook-input-unit", null, seconds, h("span", null, "s")),
    ),
    bufField,
    pipeField,
    bytesField,
    quietField,
    traceField,
    h("div.pipebook-buttons", null, runButton, cancelButton),
  );

  // Values as the controls hold them; checked against the runner's own specs.
  const readParams = () =>
    collect(catalogEntry, {
      seconds: seconds.value,
      buf_size: bufField.querySelector("select").value,
      pipe_size: pipeField.querySelector("select").value,
      bytes: bytesField.querySelector("select").value,
      quiet: quiet.checked,
      ...(traceField ? { trace_syscalls: trace.checked } : {}),
    });

  return { form, sec, runButton, cancelButton, readParams };
}
