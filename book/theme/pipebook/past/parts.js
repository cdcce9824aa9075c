// What the cards past the article (tune, tool, shared pipe) share: their frame, a
// labelled field, Run / Cancel, and the card's life around its job.

import { statusLine } from "../announce.js";
import { CardLife } from "../cardlife.js";
import { START_HINT } from "../api.js";
import { h, offlineHint } from "../dom.js";
import { t, withNodes } from "../i18n.js";

/** A card's head: its kind, its step (if any) and its title. */
function head(kind, title, id) {
  return h(
    "div.pipebook-card-head",
    null,
    h("span.pipebook-kind", { dataset: { kind: "past" } }, kind),
    id ? h("span.pipebook-step-id", null, id) : null,
    h("p.pipebook-title", null, title),
  );
}

/**
 * The card's frame: the root marked enhanced and idle (or offline), the card
 * (`div.pipebook-card.CLS`, a group named `title`) with its head; offline, a hint
 * how to `offline` on one's own machine or run `command`, and null.
 */
export function frame(root, online, { cls, kind, title, id, offline, command }) {
  root.classList.add("pipebook-enhanced");
  root.dataset.state = online ? "idle" : "offline";
  const el = h(`div.pipebook-card.${cls}`, { role: "group", "aria-label": title }, head(kind, title, id));
  root.append(el);
  if (online) return el;
  el.append(offlineHint(offline, START_HINT, withNodes(t(", or run {command}."), { command: h("code", null, command) })));
  return null;
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
