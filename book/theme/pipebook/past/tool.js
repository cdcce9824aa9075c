// The tool card: <div class="pipebook-tool"> runs a program of the runner's tool table
// against pipebench's end.
// Hooks for tests: select.pipebook-tool-select, select.pipebook-tool-side,
// button.pipebook-tool-button, table.pipebook-tool-result; on the root data-state and
// data-bytes.

import { toolTable } from "../api.js";
import { fill, h } from "../dom.js";
import * as fmt from "../format.js";
import { parseSize } from "../sizes.js";
import { runnerText, t } from "../i18n.js";
import { toolRows } from "./figures.js";
import { buttons, cardControls, field, frame } from "./parts.js";

/** The form: the program (those installed), the side it takes, the bytes; the side follows the program. */
function toolForm(root, present, table) {
  const choice = h("select.pipebook-tool-select", { id: "pipebook-tool-select" }, present.map((tool) => h("option", { value: tool.id }, tool.title)));
  const side = h("select.pipebook-tool-side", { id: "pipebook-tool-side" }, h("option", { value: "writer" }, t("writes into the pipe")), h("option", { value: "reader" }, t("reads from the pipe")));
  const size = h("input.pipebook-tool-bytes", { id: "pipebook-tool-bytes", type: "text", value: root.dataset.bytes || "64MiB", size: 8, spellcheck: "false" });
  const { runButton, cancelButton } = buttons("pipebook-tool-button", t("Run the tool"));
  const form = h("form.pipebook-controls", { novalidate: true }, field(choice, t("Program")), field(side, t("It")), field(size, t("Bytes")), h("div.pipebook-buttons", null, runButton, cancelButton));
  const sidesOf = () => table.find((tool) => tool.id === choice.value)?.sides || [];
  const syncSide = () => {
    for (const option of side.options) option.disabled = !sidesOf().includes(option.value);
    if (side.selectedOptions[0]?.disabled) side.value = sidesOf()[0] || "writer";
  };
  choice.addEventListener("change", syncSide);
  syncSide();
  return { choice, side, size, form, runButton, cancelButton };
}

/** The handlers of one tool run's session (runner.js), past what the card's life shows of it. */
function toolHandlers(root, result, life) {
  return {
    progress: (msg) => life.say(`${fmt.bytes(msg.bytes)} so far…`),
    result: (r) => {
      fill(result, h("caption", null, r.title), toolRows(r).map(([label, value]) => h("tr", null, h("th", { scope: "row" }, label), h("td", null, value))));
      for (const w of r.warnings || []) result.append(h("tr", null, h("th", { scope: "row" }, t("Note")), runnerText(h("td.pipebook-warning", null, w))));
      root.dataset.bytes = String(r.bytes);
    },
  };
}

/** The tool run's words where they are its own. */
const TOOL_WORDS = {
  cancelled: () => t("Cancelled: the tool and pipebench's end were stopped."),
  done: (r) => t("Done: {gib} {u_gibs}, {bytes} verified by pipebench's end.", { u_gibs: "GiB/s", gib: fmt.gib(r.gib_per_s), bytes: fmt.bytes(r.bytes) }),
};

/** The tool card: one program of the runner's table against pipebench's end. */
export async function mountTool(root, { online }) {
  const title = t("A program you pipe through, measured against pipebench's end");
  const el = frame(root, online, { cls: "pipebook-tool-card", kind: t("Tool"), title, offline: t("To measure yes, cat, dd and others on your own machine"), command: "pipebench tool cat" });
  if (!el) return;
  const table = (await toolTable()) || [];
  const present = table.filter((tool) => tool.present);
  const missing = table.filter((tool) => !tool.present);
  const { choice, side, size, form, runButton, cancelButton } = toolForm(root, present, table);
  const { status, life } = cardControls(root, form, runButton, cancelButton, TOOL_WORDS);
  const result = h("table.pipebook-tool-result");
  const note = h("p.pipebook-tool-missing", null, missing.length ? t("Not installed here, so not offered: {programs}.", { programs: missing.map((tool) => tool.program).join(", ") }) : "");
  el.append(form, status, result, note);
  life.show("idle", present.length ? t("Ready: the tool and pipebench's end take two CPUs, after any run ahead of them.") : t("No program of the table is installed here."));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (life.busy || !choice.value) return;
    const bytes = parseSize(size.value);
    if (bytes === null || bytes < 1) return life.show("error", t("Error: “{value}” is not a size such as {example}.", { value: size.value, example: "64MiB" }));
    fill(result);
    delete root.dataset.bytes;
    life.start({ type: "tool", tool: choice.value, as: side.value, bytes }, toolHandlers(root, result, life));
  });
}
