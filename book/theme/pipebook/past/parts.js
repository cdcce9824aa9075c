// What the cards past the article (tune, tool, shared pipe) share: their head, a
// labelled field, Run / Cancel, and the busy state.

import { statusLine } from "../announce.js";
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

/** Buttons, status and the busy state every card of this family shares. */
export function cardControls(root, form, runButton, cancelButton) {
  const status = statusLine({ state: "idle" });
  const setState = (state, text) => {
    root.dataset.state = state;
    status.dataset.state = state;
    status.textContent = text;
    const busy = state === "connecting" || state === "running";
    runButton.disabled = busy;
    cancelButton.disabled = !busy;
    for (const el of form.querySelectorAll("input, select")) el.disabled = busy;
  };
  return { status, setState };
}

/** The one Cancel: stops the card's job under way (`card.run`), saying so. */
export function cancelOnClick(cancelButton, status, card) {
  cancelButton.addEventListener("click", () => {
    if (card.run) {
      status.textContent = t("Cancelling…");
      card.run.cancel();
    }
  });
}
