// The page's one way to a verdict: it asks the runner (/api/judge) and shows
// what the runner judged. The page computes no interval and takes no decision
// of its own, so a card, the CLI and a lab check say the same of the same runs.
// Without a runner (a static copy of the book) a card shows its figures and
// says that judging needs the runner.
// Also here: the plan of a sequential "Run until resolved" (a fixed number of
// looks, planned before the first run; the runner spends the 5% across them)
// and its loop, which every card's "Run until resolved" uses.

import { judgement } from "./api.js";
import { t, withNodes } from "./i18n.js";

/** Where the book explains what a verdict promises (the chapter on comparing runs). */
export const CHAPTER = "comparing-runs.html";

/** Most looks one "Run until resolved" plans. */
export const MAX_LOOKS = 3;

/** Said where a verdict would be, on a page no runner serves. */
export const OFFLINE_SENTENCE = t("Judging these figures needs the runner: start it ({command}) and open the book from it.", { command: "cargo run --release" });

/**
 * The query /api/judge reads: `paired` (a[i] and b[i] ran as a pair), the two
 * sets of positive figures (higher is better), and for a look of a sequential
 * design its number and the planned count. Figures keep every digit.
 */
export function judgeQuery({ paired, a, b, look, looks }) {
  const q = new URLSearchParams({ paired: paired ? "true" : "false", a: a.map(String).join(","), b: b.map(String).join(",") });
  if (look !== undefined && looks !== undefined) {
    q.set("look", String(look));
    q.set("looks", String(looks));
  }
  return q.toString();
}

/**
 * The runner's judgement of A against B: {judgement} | {offline: true} | {error}.
 * Runs against a published figure (which has no spread) are pairs of each run
 * with the figure: the signed-rank interval of the runs' log-ratio to it.
 */
export function judge(request) {
  return judgement(judgeQuery(request));
}

/** The same figure as many times as there are runs: the other side of runs against a figure. */
export function figureSide(runs, figure) {
  return runs.map(() => figure);
}

/** Whether a judgement is one the page can draw: an interval and a verdict past too_few. */
export function resolvedOrNot(j) {
  return Boolean(j) && j.verdict !== "too_few" && Number.isFinite(j.ci_low) && Number.isFinite(j.ci_high);
}

/** Whether a judgement claims a difference. */
export function claims(j) {
  return j?.verdict === "faster" || j?.verdict === "slower";
}

/** `n` `unit`s (one pair, 2 pairs). */
export function plural(n, unit) {
  if (UNIT_WORDS[unit]) return UNIT_WORDS[unit][n === 1 ? 0 : 1].replace("{n}", String(n));
  if (n === 1) return `${n} ${unit}`;
  return `${n} ${unit.endsWith("y") && !/[aeiou]y$/.test(unit) ? `${unit.slice(0, -1)}ies` : `${unit}s`}`;
}

// The units the cards count in, in the page's language (t leaves {n} for plural to fill).
const UNIT_WORDS = {
  pair: [t("{n} pair"), t("{n} pairs")],
  run: [t("{n} run"), t("{n} runs")],
  "quiet run": [t("{n} quiet run"), t("{n} quiet runs")],
  look: [t("{n} look"), t("{n} looks")],
  try: [t("{n} try"), t("{n} tries")],
  "false claim": [t("{n} false claim"), t("{n} false claims")],
};

/**
 * Why a judgement of too few figures has no verdict, in one sentence: "5 pairs
 * cannot resolve at 95%: at least 6 are needed." `unit` names a figure ("pair",
 * "quiet run"); unpaired runs count a side.
 */
export function tooFewSentence(j, unit = undefined) {
  const side = j.method === "rank_sum";
  const name = unit ?? (side ? "run" : "pair");
  const n = side ? Math.min(j.n_a, j.n_b) : j.n_a;
  // A look of a sequential design cannot resolve at its own, stricter level.
  const own = Number.isFinite(j.level_this_look) ? j.level_this_look : (j.level ?? 0.95);
  const level = Number((own * 100).toFixed(1));
  const each = side ? t(" a side") : "";
  return t("{figures}{each} cannot resolve at {level}%: at least {n}{each} are needed.", { figures: plural(n, name), each, level, n: j.min_n });
}

/**
 * Which design a judgement is, in words: a fixed one says nothing more; a look
 * of a sequential one says which look and why its level is stricter.
 */
export function designSentence(j) {
  if (j?.design !== "sequential") return "";
  const level = Number.isFinite(j.level_this_look) ? t(" at {level}%", { level: (100 * j.level_this_look).toFixed(1) }) : "";
  return t("Look {look} of {looks} of a sequential design: each look judges{level}, so all looks together keep the 95% promise.", { look: j.look, looks: j.looks, level });
}

/**
 * The plan of a sequential "Run until resolved" of `looks` looks on `budget`
 * figures (pairs, or runs a side) at most: looks evenly spread up to the
 * budget. {looks, every, at: [figures at each look]}, or null without a look.
 */
export function planLooks(looks, budget) {
  if (!(Number.isInteger(looks) && looks > 0 && Number.isInteger(budget) && budget >= looks)) return null;
  const at = Array.from({ length: looks }, (_, i) => Math.floor(((i + 1) * budget) / looks));
  return { looks, every: at[0], at };
}

/**
 * The fewest figures a look of a `looks`-look design can resolve with, as the
 * runner states it (its judgement of one figure a side carries `min_n`):
 * {min} | {offline: true} | {error}.
 */
export async function fewestAt(paired, looks) {
  const asked = await judge({ paired, a: [1], b: [1], look: 1, looks });
  if (!asked.judgement) return asked;
  return Number.isInteger(asked.judgement.min_n) ? { min: asked.judgement.min_n } : { error: t("the runner gave no fewest figures") };
}

/**
 * The most looks (at most MAX_LOOKS) a budget affords with every look able to
 * resolve (each at least the runner's fewest for that design), planned by
 * planLooks: {plan} | {tooSmall: fewest for one look} | {offline} | {error}.
 * `fewest(looks)` is fewestAt bound to the comparison's kind.
 */
export async function planFor(budget, fewest) {
  let one = null;
  for (let looks = MAX_LOOKS; looks >= 1; looks -= 1) {
    const got = await fewest(looks);
    if (got.min === undefined) return got;
    if (looks === 1) one = got.min;
    if (Number.isInteger(budget) && Math.floor(budget / looks) >= got.min) return { plan: planLooks(looks, budget) };
  }
  return { tooSmall: one };
}

/**
 * The plan for a "Run until resolved" of pairs (or runs against a figure) on
 * `budget` at most (a whole number up to `most`, typed in the field `field`):
 * {plan} or {message} saying why there is none.
 */
export async function pairedPlan(budget, most, field) {
  if (!Number.isInteger(budget) || budget < 1 || budget > most) return { message: t("{field}: enter a whole number up to {most}.", { field, most }) };
  const got = await planFor(budget, (looks) => fewestAt(true, looks));
  if (got.plan) return got;
  if (got.offline) return { message: OFFLINE_SENTENCE };
  if (got.tooSmall) return { message: t("{field}: {budget} cannot resolve at 95%; enter at least {least}.", { field, budget, least: got.tooSmall }) };
  return { message: t("Error: {message}", { message: got.error }) };
}

/** The plan in one sentence, said before the first run. */
export function planSentence(plan, unit) {
  const when = plan.looks === 1 ? t("one look, after {figures}", { figures: plural(plan.at[0], unit) }) : t("{looks} looks, after {at} {unit}", { looks: plan.looks, at: plan.at.join(", "), unit: plural(2, unit).replace(/^2 /, "") });
  return t("Sequential design: {when}; it stops at the first look that resolves, or after the last.", { when });
}

/**
 * Runs a planned sequence: before look I it adds figures with `addOne()` ({ok}
 * or {ok: false, message}) until `count()` reaches the look's figure, then asks
 * `judgeAt(I, K)` (the runner's judgement of this look, or {error}/{offline})
 * and hands it to `onLook`. It stops at the first look that claims a
 * difference, at the last look, when `stopped()`, or on an error. Returns
 * {ending: "resolved"|"spent"|"stopped"|"offline"|"error", message?, judgement?, look}.
 */
export async function runSequence(plan, { count, addOne, judgeAt, onLook = () => {}, stopped = () => false }) {
  let last = null;
  for (let look = 1; look <= plan.looks; look += 1) {
    while (count() < plan.at[look - 1]) {
      if (stopped()) return { ending: "stopped", judgement: last, look: look - 1 };
      const added = await addOne();
      if (!added.ok) return { ending: "error", message: added.message, judgement: last, look: look - 1 };
    }
    const asked = await judgeAt(look, plan.looks);
    if (asked.offline) return { ending: "offline", message: OFFLINE_SENTENCE, judgement: last, look };
    if (!asked.judgement) return { ending: "error", message: asked.error, judgement: last, look };
    last = asked.judgement;
    onLook(last, look);
    if (claims(last)) return { ending: "resolved", judgement: last, look };
  }
  return { ending: "spent", judgement: last, look: plan.looks };
}

/** How a sequence ended, in the words the cards' status lines use. */
export function endingSentence(done, unit) {
  const n = (j) => (j ? (j.method === "rank_sum" ? Math.min(j.n_a, j.n_b) : j.n_a) : 0);
  const j = done.judgement;
  if (done.ending === "resolved") return t("Resolved at look {look}, after {figures}.", { look: done.look, figures: plural(n(j), unit) });
  if (done.ending === "spent") return t("Budget spent: {figures} in {looks}, not resolved.", { figures: plural(n(j), unit), looks: plural(done.look, "look") });
  if (done.ending === "stopped") return t("Stopped after {looks}.", { looks: plural(done.look, "look") });
  if (done.ending === "offline") return OFFLINE_SENTENCE;
  return isErrorText(done.message) || STOP_WORDS.some((w) => String(done.message ?? "").startsWith(w)) ? done.message : t("Error: {message}", { message: done.message });
}

// How the page's own error and stop sentences start, in English and in the page's
// language (a msgid up to its first placeholder): such a message is shown as it is.
const prefixes = (words) => words.map((w) => w.split("{")[0].trim()).filter(Boolean);
const ERROR_WORDS = prefixes(["Error", t("Error: {message}"), t("Error ({id}): {message}"), t("Error: a pair came back without both values."), t("Error: a run came back without a verified figure.")]);
const STOP_WORDS = prefixes(["Stopped", t("Stopped after {n} quiet run."), t("Stopped after {n} quiet runs."), t("Stopped after {n} pair. Nothing is left running."), t("Stopped after {n} pairs. Nothing is left running.")]);

/** Whether `text` is one of the page's error sentences, in English or the page's language. */
export function isErrorText(text) {
  return ERROR_WORDS.some((w) => String(text ?? "").startsWith(w));
}

/**
 * The one short note every "Run until resolved" shows beside its button: which
 * design it uses, linked to the chapter that explains it. `h` is dom.js's.
 */
export function designNote(h) {
  return h(
    "p.pipebook-design-note",
    null,
    withNodes(t("Run until resolved uses a sequential design: a few looks planned in advance share the 5%, so stopping early keeps the 95% promise ({link})."), { link: h("a", { href: CHAPTER }, t("how comparing runs works")) }),
  );
}
