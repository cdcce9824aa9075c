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
import { CardLife } from "./cardlife.js";
import { parseSize } from "./sizes.js";
import { compareSentence, precheckSentence, ratioText } from "./verdict.js";

let nextId = 0;

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
  new CompareCard(root, card, id, steps.length ? steps : [{ id: a0 }, { id: b0 }], params.compare);
}

const field = (input, text) => h("label.pipebook-field", { for: input.id }, h("span", null, text), input);

/** A compare card online: its fields, its verdict, and "More pairs" after one that can be taken up. */
class CompareCard {
  constructor(root, card, id, list, bounds) {
    this.root = root;
    // The runner's bounds (/api/params): the pairs asked, and the pairs in all.
    this.P = bounds.pairs;
    this.B = bounds.budget;
    this.fields(id, list, root.dataset.a, root.dataset.b);
    this.start = h("button.pipebook-run-button.pipebook-compare-start", { type: "button" }, t("Compare"));
    this.more = h("button.pipebook-cancel-button.pipebook-compare-more", { type: "button", hidden: true }, t("More pairs"));
    const cancel = h("button.pipebook-cancel-button", { type: "button", hidden: true }, t("Cancel"));
    const machine = h("p.pipebook-precheck", null, t("Machine check: looking at the runner's CPUs…"));
    this.status = h("p.pipebook-status.pipebook-compare-status", { role: "status", "aria-live": "polite" }, t("Ready."));
    this.verdict = h("p.pipebook-compare-verdict");
    this.final = h("p.pipebook-compare-final", { hidden: true });
    this.picture = h("div.pipebook-compare-picture");
    card.append(
      h("div.pipebook-lab-row", null, field(this.a, t("Step A")), field(this.b, t("Step B")), field(this.pairs, t("Pairs")), field(this.bytes, t("Bytes per run"))),
      h("div.pipebook-lab-row", null, h("label.pipebook-field.pipebook-check", { for: this.until.id }, this.until, h("span", null, t("Run until resolved"))), field(this.budget, t("Budget (pairs in all)")), this.start, this.more, cancel),
      designNote(h),
      machine,
      this.status,
      this.verdict,
      this.final,
      this.picture,
    );
    precheck().then((advice) => fill(machine, precheckSentence(advice)));
    this.life = new CardLife({
      status: this.status,
      marks: [root],
      states: { connecting: "busy", queued: "busy", running: "busy", cancelled: "idle", error: "idle" },
      run: [this.start, this.more],
      cancel,
      cancelShows: "hidden",
      words: { queued: (position) => t("Waiting for place {position} in the runner's queue…", { position }), cancelling: () => null },
    });
    // The last verdict and what it compared: "More pairs" takes it up while the
    // reader has not changed the steps or the bytes since.
    this.last = null;
    for (const input of [this.a, this.b, this.bytes]) input.addEventListener("change", () => this.forget());
    this.start.addEventListener("click", () => this.begin(false));
    this.more.addEventListener("click", () => this.last && this.begin(true));
  }

  fields(id, list, a0, b0) {
    const { P, B } = this;
    const stepSelect = (cls, suffix, chosen) => h(`select.${cls}`, { id: `${id}-${suffix}` }, list.map((s) => h("option", { value: s.id, selected: s.id === chosen }, s.id)));
    this.a = stepSelect("pipebook-compare-a", "a", a0);
    this.b = stepSelect("pipebook-compare-b", "b", b0);
    this.pairs = h("input.pipebook-compare-pairs", { id: `${id}-pairs`, type: "number", min: P.min, max: P.max, value: P.start, size: 4 });
    this.bytes = h("input.pipebook-compare-bytes", { id: `${id}-bytes`, type: "text", value: "256MiB", size: 8 });
    this.until = h("input.pipebook-compare-until", { id: `${id}-until`, type: "checkbox" });
    this.budget = h("input.pipebook-compare-budget", { id: `${id}-budget`, type: "number", min: B.min, max: B.max, value: B.start, size: 4 });
  }

  forget() {
    this.last = null;
    this.more.hidden = true;
    this.final.hidden = true;
  }

  /** The message the fields ask for ({request} or {error}); `takeUp` continues the last verdict. */
  request(takeUp) {
    const { P, B } = this;
    const n = Number(this.pairs.value);
    const size = parseSize(this.bytes.value);
    if (!Number.isInteger(n) || n < P.min || n > P.max) return { error: t("Pairs: enter a whole number from {min} to {max}.", { min: P.min, max: P.max }) };
    if (size === null) return { error: t("Bytes per run: write a size such as {example}.", { example: "256MiB, 1GiB" }) };
    // The runner keeps the pairs it measured under the verdict's series id,
    // with their plan of looks: more pairs run to its next look, not to a number asked.
    const request = takeUp ? { a: this.a.value, b: this.b.value, params: { bytes: size }, more_of: this.last.series } : { a: this.a.value, b: this.b.value, pairs: n, params: { bytes: size } };
    if (!takeUp && this.until.checked) {
      const m = Number(this.budget.value);
      if (!Number.isInteger(m) || m < n || m > B.max) return { error: t("Budget: enter a whole number from {min} (the pairs in all) to {max}.", { min: n, max: B.max }) };
      request.budget = m;
    }
    return { request };
  }

  begin(takeUp) {
    const asked = this.request(takeUp);
    if (asked.error) return this.life.say(asked.error);
    const request = asked.request;
    const earlier = takeUp ? this.last.pairs : 0;
    fill(this.verdict);
    fill(this.picture);
    this.final.hidden = true;
    delete this.root.dataset.verdict;
    const [la, lb] = [request.a, request.b];
    this.life.start({ type: "compare", ...request }, {
      leg: (msg) => {
        // The runner's interval so far, once it has one (from the fewest pairs that can resolve).
        const so = Number.isFinite(msg.comparison?.ci_low) && Number.isFinite(msg.comparison?.ci_high) ? t(" So far (not a verdict): {a} is {ratio}× {b} ({low} to {high}).", { a: la, ratio: ratioText(msg.comparison.ratio), b: lb, low: ratioText(msg.comparison.ci_low), high: ratioText(msg.comparison.ci_high) }) : "";
        this.life.say(t("Run {index} of {of} ({step}, quiet): {gib} {u_gibs}.{so}", { u_gibs: "GiB/s", index: msg.index, of: msg.of, step: msg.side === "a" ? la : lb, gib: fmt.gib(msg.result.gib_per_s), so }));
      },
      verdict: (msg) => this.showVerdict(msg, la, lb, earlier),
      cancelled: () => this.forget(),
      error: () => this.forget(),
      notice: (message) => this.life.say(runnerText(h("span", null, message))),
    });
  }

  showVerdict(msg, la, lb, earlier) {
    const sentence = compareSentence(msg, la, lb);
    fill(this.verdict, sentence);
    fill(this.picture, intervalPicture(msg, sentence));
    this.root.dataset.verdict = msg.verdict;
    const taken = earlier ? t(" ({earlier} taken up, {fresh} new)", { earlier, fresh: msg.pairs - earlier }) : "";
    this.life.say(t("Done: {pairs} pairs of quiet runs{taken}.", { pairs: msg.pairs, taken }), msg.warnings?.length ? [t(" Warnings: "), runnerText(h("span", null, msg.warnings.join("; ")))] : "");
    this.last = msg;
    // Only a verdict the runner keeps the pairs of, with a planned look
    // left, can be taken up; otherwise it is final.
    const open = typeof msg.series === "string" && Number.isInteger(msg.next_look);
    this.more.hidden = !open;
    this.more.textContent = open ? t("More pairs (to {pairs}, look {look} of {looks})", { pairs: msg.next_look, look: (msg.look ?? 1) + 1, looks: msg.looks ?? 1 }) : t("More pairs");
    const planned = msg.design === "sequential" ? t("This verdict is final: it took the last of its {looks} planned looks, and another look would spend more than the 5%.", { looks: msg.looks }) : t("This verdict is final: its one look spent the whole 5%. To be able to add pairs later, tick Run until resolved before you compare: it plans several looks.");
    fill(this.final, open ? "" : planned);
    this.final.hidden = open;
  }
}
