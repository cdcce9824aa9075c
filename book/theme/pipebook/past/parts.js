// What the cards past the article (tune, tool, shared pipe) share: their head, a
// labelled field, Run / Cancel, and the card's life around its job.

import { statusLine } from "../announce.js";
import { CardLife } from "../cardlife.js";
import { h } from "../dom.js";
import { t } from "../i18n.js";

/** A card's head: its kind, its step (if any) and its title. */
export function head(kind, title, id) {
  return h(
    "div.pipebook-card-head",
    null,
    h("span.pipebook-kind", { dataset: { kind: "past" } }, kind),
    id ? h("span.pipebook-step-id", null, id) : null,
    h("p.pipebook-title", null, title),
  );
}

/** An input in its label. */
export function field(input, text) {
  return h("label.pipebook-field", { for: input.id }, h("span", null, text), input);
}

/** The card's Run (`cls`, saying `text`) and Cancel buttons. */
export function buttons(cls, text) {
  return {
    runButton: h(`button.pipebook-run-button.${cls}`, { type: "submit" }, text),
    cancelButton: h("button.pipebook-cancel-button", { type: "button", disabled: true }, t("Cancel")),
  };
}

/**
 * The status line and the life (cardlife.js) every card of this family shares:
 * `data-state` on the root and the status (queued shows as running), the form
 * locked while a job runs, Cancel, the bar (if any) and the card's own `words`.
 */
export function cardControls(root, form, runButton, cancelButton, words, bar = null) {
  const status = statusLine({ state: "idle" });
  const life = new CardLife({ status, marks: [root, status], states: { queued: "running" }, run: [runButton], cancel: cancelButton, form, bar, words });
  return { status, life };
}
