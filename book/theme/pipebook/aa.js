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
import { startCompare } from "./runner.js";
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
  const tries = h("input.pipebook-aa-tries", { id: `${id}-tries`, type: "number", min: 1, max: MAX_TRIES, value: 20, size: 4 });
  const bytes = h("input.pipebook-aa-bytes", { id: `${id}-bytes`, type: "text", value: "64MiB", size: 8 });
  const start = h("button.pipebook-run-button.pipebook-aa-start", { type: "button" }, t("Count false claims"));
  const stop = h("button.pipebook-cancel-button.pipebook-aa-stop", { type: "button", hidden: true }, t("Stop"));
  const count = h("p.pipebook-aa-count", null, countSentence(0, 0));
  const status = h("p.pipebook-status.pipebook-aa-status", { role: "status", "aria-live": "polite" }, t("Ready."));
  const list = h("ol.pipebook-aa-list", { "aria-label": t("Each try's verdict") });
  const field = (input, text) => h("label.pipebook-field", { for: input.id }, h("span", null, text), input);
  card.append(
    h("p.pipebook-summary", null, t("Each try is {step} against {step} in the fewest quiet pairs that can resolve at 95%, judged once by the runner. Both sides are the same program, so any “faster” or “slower” is a false claim.", { step })),
    h("div.pipebook-lab-row", null, field(tries, t("Tries")), field(bytes, t("Bytes per run")), start, stop),
    status,
    count,
    list,
  );
  root.dataset.state = "idle";

  let session = null;
  let stopped = false;
  const show = (done, claimed) => {
    root.dataset.tries = String(done);
    root.dataset.claims = String(claimed);
    fill(count, countSentence(done, claimed));
  };
  // One try through the queue: {ok, verdict} or {ok: false, message}.
  const oneTry = (n, of, size, pairs) =>
    new Promise((resolve) => {
      const where = (text) => fill(status, t("Try {n} of {of}: {text}", { n, of, text }));
      session = startCompare({ a: step, b: step, pairs, params: { bytes: size } }, {
        connecting: () => where("connecting…"),
        queued: (position) => where(t("waiting for place {position} in the queue…", { position })),
        leg: (msg) => where(t("run {index} of {of} (quiet).", { index: msg.index, of: msg.of })),
        verdict: (msg) => resolve({ ok: true, verdict: msg }),
        cancelled: () => resolve({ ok: false, stopped: true }),
        error: (message) => resolve({ ok: false, message: `Error: ${message}` }),
        notice: (message) => where(message),
      });
    });

  let starting = false;
  start.addEventListener("click", async () => {
    if (session || starting || root.dataset.state === "busy") return;
    starting = true;
    try {
      await begin();
    } finally {
      starting = false;
    }
  });
  const begin = async () => {
    const n = Number(tries.value);
    const size = parseSize(bytes.value);
    if (!Number.isInteger(n) || n < 1 || n > MAX_TRIES) return fill(status, t("Tries: enter a whole number from 1 to {max}.", { max: MAX_TRIES }));
    if (size === null) return fill(status, t("Bytes per run: write a size such as {example}.", { example: "64MiB" }));
    // Pairs a try: the fewest that can resolve at 95% (the runner says), within the runner's bounds.
    const fewest = await fewestAt(true, 1);
    if (fewest.min === undefined) return fill(status, fewest.offline ? OFFLINE_SENTENCE : `Error: ${fewest.error}`);
    const pairs = Math.max(fewest.min, params?.compare?.pairs?.min ?? 1);
    stopped = false;
    root.dataset.state = "busy";
    start.disabled = true;
    stop.hidden = false;
    fill(list);
    let claimed = 0;
    let done = 0;
    show(0, 0);
    let ending = "";
    while (done < n && !ending) {
      if (stopped) {
        ending = t("Stopped after {tries}.", { tries: plural(done, "try") });
        break;
      }
      const got = await oneTry(done + 1, n, size, pairs);
      session = null;
      if (!got.ok) {
        ending = got.stopped ? t("Stopped after {tries}.", { tries: plural(done, "try") }) : got.message;
        break;
      }
      done += 1;
      const claim = claims(got.verdict);
      if (claim) claimed += 1;
      list.append(h("li", { dataset: { verdict: got.verdict.verdict } }, `${claim ? t("False claim. ") : ""}${compareSentence(got.verdict, "A", "B")}`));
      show(done, claimed);
    }
    fill(status, ending || `Done: ${countSentence(done, claimed)}`);
    root.dataset.state = ending ? "idle" : "done";
    start.disabled = false;
    stop.hidden = true;
  };
  stop.addEventListener("click", () => {
    stopped = true;
    session?.cancel();
  });
}
