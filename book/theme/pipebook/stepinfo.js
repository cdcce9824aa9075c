// What a run card says about its step, before and after a run: the step's description
// from the placeholder and the catalog, and the sentences that compare the reader's
// figure with the article's and the C++ build's. Pure: no DOM, tested in Node.

import * as fmt from "./format.js";
import { t } from "./i18n.js";

/** The card's label for each kind of step. */
export const KIND_LABEL = {
  article: t("Step from the article"),
  variant: t("Variant"),
  experiment: t("Experiment"),
};

/**
 * The step as the card shows it: what the preprocessor put on the placeholder
 * (`dataset`) wins over the runner's catalog entry, which fills the gaps.
 */
export function describe(dataset, catalogEntry) {
  const d = dataset || {};
  const entry = catalogEntry || {};
  return {
    step: d.step,
    title: d.title || entry.title || d.step,
    summary: d.summary || entry.summary || "",
    kind: d.kind || entry.kind || "article",
    article: fmt.number(d.article) ?? fmt.number(entry.article_gib_s),
    reference: fmt.range(d.reference) ?? fmt.range(entry.reference_gib_s),
  };
}

/** Before any run of this step: what a run will be compared with ("" if nothing). */
export function inviteText(info) {
  const against = [];
  if (info.article !== null) against.push(t("the article's {figure} {u_gibs}", { u_gibs: "GiB/s", figure: fmt.figure(info.article) }));
  if (info.reference) against.push(t("the C++ build's {range} {u_gibs} on a 2-core VM", { u_gibs: "GiB/s", range: fmt.rangeText(info.reference) }));
  return against.length ? t("Run it to compare with {figures}.", { figures: against.join(t(" and ")) }) : "";
}

/**
 * The reader's best so far for this step among `results` (any steps):
 * `{best, text}`, or `{best: null, text: inviteText}` when there is none.
 */
export function bestSoFar(info, results) {
  const mine = results.filter((r) => r.step === info.step);
  if (!mine.length) return { best: null, text: inviteText(info) };
  const best = Math.max(...mine.map((r) => r.gib_per_s));
  // Said plainly: the best of any runs, live ones included, is no judged comparison.
  const vs = info.article !== null ? t(": {ratio} the article (watched runs included; the verdict below takes quiet runs only).", { ratio: fmt.ratio(best, info.article) }) : t(".");
  return { best, text: (mine.length === 1 ? t("Best of {n} run on this machine{vs}", { n: mine.length, vs }) : t("Best of {n} runs on this machine{vs}", { n: mine.length, vs })) };
}

/**
 * After a run: its GiB/s against the article and the C++ build ("" if neither is
 * known); a `watched` run says so, since watching it cost it some speed.
 */
export function comparison(info, gibPerS, watched = false) {
  const parts = [];
  const vsArticle = fmt.ratio(gibPerS, info.article);
  if (vsArticle) parts.push(t("{ratio} the article ({figure} {u_gibs})", { u_gibs: "GiB/s", ratio: vsArticle, figure: fmt.figure(info.article) }));
  if (info.reference) {
    const mid = (info.reference.low + info.reference.high) / 2;
    parts.push(t("{ratio} the C++ build on the project's VM", { ratio: fmt.ratio(gibPerS, mid) }));
  }
  if (!parts.length) return "";
  // One run says nothing of how sure: the card's verdict below does, from quiet runs.
  return watched
    ? t("{comparisons}, from one watched run (drawing it live cost it some speed; the verdict below takes quiet runs only).", { comparisons: parts.join(t(", ")) })
    : t("{comparisons}, from one quiet run (the verdict below says how sure, from two quiet runs on).", { comparisons: parts.join(t(", ")) });
}
