// The A/A card, mounted on each <div class="pipebook-aa" data-step> the
// `{{#aa STEP}}` directive leaves: the step against itself, N times, each try
// one compare job of quiet pairs through the runner's queue, judged once by
// the runner (fixed design). Both sides are the same, so every "faster" or
// "slower" is a false claim: the card counts them live, and the reader sees a
// false-claim rate measured on their own machine. The page judges nothing: it
// counts the runner's verdicts. Hooks for tests: input.pipebook-aa-tries,
// input.pipebook-aa-bytes, button.pipebook-aa-start, button.pipebook-aa-stop,
// .pipebook-aa-status (aria-live), .pipebook-aa-count, ol.pipebook-aa-list,
// and on the root data-state (offline, idle, busy, done), data-tries, data-claims.

import { START_HINT } from "./api.js";
import { fill, h, offlineHint } from "./dom.js";
import { OFFLINE_SENTENCE, claims, fewestAt, plural } from "./judge.js";
import { CardLife } from "./cardlife.js";
import { parseSize } from "./sizes.js";
import { compareSentence } from "./verdict.js";
import { t } from "./i18n.js";

/** Most tries one press may run. */
export const MAX_TRIES = 40;

let nextId = 0;

/** The count so far in words: "1 false claim in 7 tries (14%)". */
export function countSentence(tries, claimed) {
  if (!tries) return t("No try yet.");
  const share = Math.round((100 * claimed) / tries);
  return t("{claims} in {tries} ({share}%). The promise: at most 5% in the long run.", { claims: plural(claimed, "false claim"), tries: plural(tries, "try"), share });
}

/** Mounts one A/A card. */
export function mountSelfCompare(root, { online, params }) {
  const step = root.dataset.step;
  const id = `pipebook-aa-${(nextId += 1)}`;
  const title = t("{step} against itself: how often does a verdict fool you?", { step });
  const card = h("div.pipebook-card", { role: "group", "aria-label": title }, h("h3.pipebook-card-title", null, title));
  root.replaceChildren(card);
  if (!online) {
    root.dataset.state = "offline";
    card.append(offlineHint(t("To count false claims on your own machine"), START_HINT, t(" and come back to this page.")));
    return;
  }
  new SelfCompare(root, card, id, step, params);
  root.dataset.state = "idle";
}

/** An A/A card online: its fields, its tries one after another, and their count. */
class SelfCompare {
  constructor(root, card, id, step, params) {
    Object.assign(this, { root, step, params });
    this.tries = h("input.pipebook-aa-tries", { id: `${id}-tries`, type: "number", min: 1, max: MAX_TRIES, value: 20, size: 4 });
    this.bytes = h("input.pipebook-aa-bytes", { id: `${id}-bytes`, type: "text", value: "64MiB", size: 8 });
    const start = h("button.pipebook-run-button.pipebook-aa-start", { type: "button" }, t("Count false claims"));
    const stop = h("button.pipebook-cancel-button.pipebook-aa-stop", { type: "button", hidden: true }, t("Stop"));
    this.count = h("p.pipebook-aa-count", null, countSentence(0, 0));
    this.status = h("p.pipebook-status.pipebook-aa-status", { role: "status", "aria-live": "polite" }, t("Ready."));
    this.list = h("ol.pipebook-aa-list", { "aria-label": t("Each try's verdict") });
    const field = (input, text) => h("label.pipebook-field", { for: input.id }, h("span", null, text), input);
    card.append(
      h("p.pipebook-summary", null, t("Each try is {step} against {step} in the fewest quiet pairs that can resolve at 95%, judged once by the runner. Both sides are the same program, so any “faster” or “slower” is a false claim.", { step })),
      h("div.pipebook-lab-row", null, field(this.tries, t("Tries")), field(this.bytes, t("Bytes per run")), start, stop),
      this.status,
      this.count,
      this.list,
    );
    this.life = new CardLife({
      status: this.status,
      marks: [root],
      states: { connecting: "busy", queued: "busy", running: "busy" },
      run: [start],
      cancel: stop,
      cancelShows: "hidden",
      words: { cancelling: () => null },
    });
    let starting = false;
    start.addEventListener("click", async () => {
      if (this.life.busy || starting) return;
      starting = true;
      try {
        await this.begin();
      } finally {
        starting = false;
      }
    });
  }

  show(done, claimed) {
    this.root.dataset.tries = String(done);
    this.root.dataset.claims = String(claimed);
    fill(this.count, countSentence(done, claimed));
  }

  /** One try through the queue: {ok, verdict} or {ok: false, message}. */
  async oneTry(n, of, size, pairs) {
    const where = (text) => this.life.say(t("Try {n} of {of}: {text}", { n, of, text }));
    const step = this.step;
    const got = await this.life.session({ type: "compare", a: step, b: step, pairs, params: { bytes: size } }, {
      connecting: () => where("connecting…"),
      queued: (position) => where(t("waiting for place {position} in the queue…", { position })),
      leg: (msg) => where(t("run {index} of {of} (quiet).", { index: msg.index, of: msg.of })),
      notice: (message) => where(message),
    });
    if (got.ended === "done") return { ok: true, verdict: got.event };
    if (got.ended === "cancelled") return { ok: false, stopped: true };
    return { ok: false, message: t("Error: {message}", { message: got.message }) };
  }

  /** The fields read, the tries run until they are all done, one fails or the reader stops them. */
  async begin() {
    const n = Number(this.tries.value);
    const size = parseSize(this.bytes.value);
    if (!Number.isInteger(n) || n < 1 || n > MAX_TRIES) return this.life.say(t("Tries: enter a whole number from 1 to {max}.", { max: MAX_TRIES }));
    if (size === null) return this.life.say(t("Bytes per run: write a size such as {example}.", { example: "64MiB" }));
    // Pairs a try: the fewest that can resolve at 95% (the runner says), within the runner's bounds.
    const fewest = await fewestAt(true, 1);
    if (fewest.min === undefined) return this.life.say(fewest.offline ? OFFLINE_SENTENCE : t("Error: {message}", { message: fewest.error }));
    const pairs = Math.max(fewest.min, this.params?.compare?.pairs?.min ?? 1);
    this.life.begin("running");
    fill(this.list);
    let claimed = 0;
    let done = 0;
    this.show(0, 0);
    let ending = "";
    while (done < n && !ending) {
      if (this.life.stopped) {
        ending = t("Stopped after {tries}.", { tries: plural(done, "try") });
        break;
      }
      const got = await this.oneTry(done + 1, n, size, pairs);
      if (!got.ok) {
        ending = got.stopped ? t("Stopped after {tries}.", { tries: plural(done, "try") }) : got.message;
        break;
      }
      done += 1;
      const claim = claims(got.verdict);
      if (claim) claimed += 1;
      this.list.append(h("li", { dataset: { verdict: got.verdict.verdict } }, `${claim ? t("False claim. ") : ""}${compareSentence(got.verdict, "A", "B")}`));
      this.show(done, claimed);
    }
    this.life.show(ending ? "idle" : "done", ending || `Done: ${countSentence(done, claimed)}`);
  }
}
