// The compare card, mounted on each <div class="pipebook-compare" data-a data-b>
// the `{{#compare A B}}` directive leaves: two steps run head to head through
// the runner's queue in quiet interleaved pairs (A B B A ...), the comparison so
// far after every run, then the verdict in words and its 95% interval drawn
// against 1.0, all as the runner judged them (the page judges nothing). "Run
// until resolved" lets the runner add pairs in its sequential design (looks
// planned in advance, each at a stricter level) up to a budget. Hooks for tests: select.pipebook-compare-a/-b,
// input.pipebook-compare-pairs/-bytes/-budget, input.pipebook-compare-until,
// button.pipebook-compare-start, .pipebook-compare-status, .pipebook-compare-verdict,
// svg.pipebook-compare-interval, data-state (offline, idle, busy, done) and
// data-verdict on the root. After a verdict that has a planned look left
// (`next_look`), button.pipebook-compare-more takes the same comparison up: the
// runner is sent the verdict's series id (`more_of`; it keeps the pairs it
// measured and the plan of looks they ran under) and continues the balanced
// order to the next look, judged at that look's share of the 5%, never at a
// fresh 95%. After the plan's last look (at once after a one-look comparison)
// .pipebook-compare-final says the verdict is final.

import { START_HINT, precheck } from "./api.js";
import { fill, h, offlineHint } from "./dom.js";
import * as fmt from "./format.js";
import { intervalPicture } from "./interval.js";
import { runnerText, t } from "./i18n.js";
import { designNote } from "./judge.js";
import { startCompare } from "./runner.js";
import { parseSize } from "./sizes.js";
import { compareSentence, precheckSentence, ratioText } from "./verdict.js";

let nextId = 0;

function stepSelect(cls, id, steps, chosen) {
  return h(
    `select.${cls}`,
    { id },
    steps.map((s) => h("option", { value: s.id, selected: s.id === chosen }, s.id)),
  );
}

/** Mounts one compare card. */
export function mountCompare(root, { online, steps, params }) {
  const id = `pipebook-compare-${(nextId += 1)}`;
  const a0 = root.dataset.a;
  const b0 = root.dataset.b;
  const card = h("div.pipebook-card", null, h("h3.pipebook-card-title", null, t("Compare two steps head to head")));
  root.replaceChildren(card);
  if (!online) {
    root.dataset.state = "offline";
    card.append(offlineHint(t("To compare {a} with {b} on your machine", { a: a0, b: b0 }), START_HINT, t(" and come back to this page.")));
    return;
  }
  root.dataset.state = "idle";
  // The runner's bounds (/api/params): the pairs asked, and the pairs in all.
  const P = params.compare.pairs;
  const B = params.compare.budget;
  const list = steps.length ? steps : [{ id: a0 }, { id: b0 }];
  const a = stepSelect("pipebook-compare-a", `${id}-a`, list, a0);
  const b = stepSelect("pipebook-compare-b", `${id}-b`, list, b0);
  const pairs = h("input.pipebook-compare-pairs", { id: `${id}-pairs`, type: "number", min: P.min, max: P.max, value: P.start, size: 4 });
  const bytes = h("input.pipebook-compare-bytes", { id: `${id}-bytes`, type: "text", value: "256MiB", size: 8 });
  const until = h("input.pipebook-compare-until", { id: `${id}-until`, type: "checkbox" });
  const budget = h("input.pipebook-compare-budget", { id: `${id}-budget`, type: "number", min: B.min, max: B.max, value: B.start, size: 4 });
  const start = h("button.pipebook-run-button.pipebook-compare-start", { type: "button" }, t("Compare"));
  const more = h("button.pipebook-cancel-button.pipebook-compare-more", { type: "button", hidden: true }, t("More pairs"));
  const cancel = h("button.pipebook-cancel-button", { type: "button", hidden: true }, t("Cancel"));
  const machine = h("p.pipebook-precheck", null, t("Machine check: looking at the runner's CPUs…"));
  const status = h("p.pipebook-status.pipebook-compare-status", { role: "status", "aria-live": "polite" }, t("Ready."));
  const verdict = h("p.pipebook-compare-verdict");
  const final = h("p.pipebook-compare-final", { hidden: true });
  const picture = h("div.pipebook-compare-picture");
  const field = (input, text) => h("label.pipebook-field", { for: input.id }, h("span", null, text), input);
  card.append(
    h("div.pipebook-lab-row", null, field(a, t("Step A")), field(b, t("Step B")), field(pairs, t("Pairs")), field(bytes, t("Bytes per run"))),
    h(
      "div.pipebook-lab-row",
      null,
      h("label.pipebook-field.pipebook-check", { for: until.id }, until, h("span", null, t("Run until resolved"))),
      field(budget, t("Budget (pairs in all)")),
      start,
      more,
      cancel,
    ),
    designNote(h),
    machine,
    status,
    verdict,
    final,
    picture,
  );
  precheck().then((advice) => fill(machine, precheckSentence(advice)));

  let busy = null;
  // The last verdict and what it compared: "More pairs" takes it up while the
  // reader has not changed the steps or the bytes since.
  let last = null;
  const idle = (state) => {
    busy = null;
    start.disabled = false;
    more.disabled = false;
    cancel.hidden = true;
    root.dataset.state = state;
  };
  const forget = () => {
    last = null;
    more.hidden = true;
    final.hidden = true;
  };
  for (const input of [a, b, bytes]) input.addEventListener("change", forget);
  cancel.addEventListener("click", () => busy?.cancel());

  const begin = (takeUp) => {
    const n = Number(pairs.value);
    const size = parseSize(bytes.value);
    if (!Number.isInteger(n) || n < P.min || n > P.max) return fill(status, t("Pairs: enter a whole number from {min} to {max}.", { min: P.min, max: P.max }));
    if (size === null) return fill(status, t("Bytes per run: write a size such as {example}.", { example: "256MiB, 1GiB" }));
    // The runner keeps the pairs it measured under the verdict's series id,
    // with their plan of looks: more pairs run to its next look, not to a number asked.
    const request = takeUp ? { a: a.value, b: b.value, params: { bytes: size }, more_of: last.series } : { a: a.value, b: b.value, pairs: n, params: { bytes: size } };
    const earlier = takeUp ? last.pairs : 0;
    if (!takeUp && until.checked) {
      const m = Number(budget.value);
      if (!Number.isInteger(m) || m < n || m > B.max) return fill(status, t("Budget: enter a whole number from {min} (the pairs in all) to {max}.", { min: n, max: B.max }));
      request.budget = m;
    }
    fill(verdict);
    fill(picture);
    final.hidden = true;
    delete root.dataset.verdict;
    start.disabled = true;
    more.disabled = true;
    cancel.hidden = false;
    root.dataset.state = "busy";
    const [la, lb] = [request.a, request.b];
    busy = startCompare(request, {
      connecting: () => fill(status, t("Connecting to the runner…")),
      queued: (position) => fill(status, t("Waiting for place {position} in the runner's queue…", { position })),
      leg: (msg) => {
        // The runner's interval so far, once it has one (from the fewest pairs that can resolve).
        const so = Number.isFinite(msg.comparison?.ci_low) && Number.isFinite(msg.comparison?.ci_high) ? t(" So far (not a verdict): {a} is {ratio}× {b} ({low} to {high}).", { a: la, ratio: ratioText(msg.comparison.ratio), b: lb, low: ratioText(msg.comparison.ci_low), high: ratioText(msg.comparison.ci_high) }) : "";
        fill(status, t("Run {index} of {of} ({step}, quiet): {gib} {u_gibs}.{so}", { u_gibs: "GiB/s", index: msg.index, of: msg.of, step: msg.side === "a" ? la : lb, gib: fmt.gib(msg.result.gib_per_s), so }));
      },
      verdict: (msg) => {
        const sentence = compareSentence(msg, la, lb);
        fill(verdict, sentence);
        fill(picture, intervalPicture(msg, sentence));
        root.dataset.verdict = msg.verdict;
        const taken = earlier ? t(" ({earlier} taken up, {fresh} new)", { earlier, fresh: msg.pairs - earlier }) : "";
        fill(status, t("Done: {pairs} pairs of quiet runs{taken}.", { pairs: msg.pairs, taken }), msg.warnings?.length ? [t(" Warnings: "), runnerText(h("span", null, msg.warnings.join("; ")))] : "");
        last = msg;
        // Only a verdict the runner keeps the pairs of, with a planned look
        // left, can be taken up; otherwise it is final.
        const open = typeof msg.series === "string" && Number.isInteger(msg.next_look);
        more.hidden = !open;
        more.textContent = open ? t("More pairs (to {pairs}, look {look} of {looks})", { pairs: msg.next_look, look: (msg.look ?? 1) + 1, looks: msg.looks ?? 1 }) : t("More pairs");
        const planned = msg.design === "sequential" ? t("This verdict is final: it took the last of its {looks} planned looks, and another look would spend more than the 5%.", { looks: msg.looks }) : t("This verdict is final: its one look spent the whole 5%. To be able to add pairs later, tick Run until resolved before you compare: it plans several looks.");
        fill(final, open ? "" : planned);
        final.hidden = open;
        idle("done");
      },
      cancelled: () => {
        fill(status, t("Cancelled."));
        forget();
        idle("idle");
      },
      error: (message) => {
        fill(status, t("Error: {message}", { message }));
        forget();
        idle("idle");
      },
      notice: (message) => fill(status, runnerText(h("span", null, message))),
    });
  };
  start.addEventListener("click", () => begin(false));
  more.addEventListener("click", () => last && begin(true));
}
