// "Your machine vs the article": one row per catalog step, filled from the runner's
// history (store.js), updated live as steps finish.

import { catalog } from "./api.js";
import { compareSteps, countText } from "./counts.js";
import { fill, h } from "./dom.js";
import * as fmt from "./format.js";
import { tunedRows } from "./past/figures.js";
import { allResults, RESULT_EVENT } from "./store.js";
import { figureSide, judge } from "./judge.js";
import { articleColumn, ratioText } from "./verdict.js";
import { t } from "./i18n.js";

/** Steps from the catalog, or (without a runner) from the widgets on this page. */
async function stepList() {
  const steps = await catalog();
  if (steps && steps.length) {
    return steps.map((s) => ({
      id: String(s.id),
      title: s.title || s.id,
      chapter: s.chapter,
      kind: s.kind,
      article: fmt.number(s.article_gib_s),
      reference: fmt.range(s.reference_gib_s),
    }));
  }
  return [...document.querySelectorAll(".pipebook-run[data-step]")].map((el) => ({
    id: el.dataset.step,
    title: el.dataset.title || el.dataset.step,
    kind: el.dataset.kind,
    article: fmt.number(el.dataset.article),
    reference: fmt.range(el.dataset.reference),
  }));
}

function chapterLink(chapter) {
  if (typeof chapter !== "string" || !/^[\w./-]+\.(md|html)$/.test(chapter)) return null;
  const root = document.querySelector('script[type="module"][src$="pipebook/main.js"]');
  const base = root ? new URL("..", root.src) : new URL(".", location.href);
  return new URL(chapter.replace(/\.md$/, ".html"), base).href;
}

/** The article's steps side by side: the kernel's counts per GiB from the reader's own
 * runs (medians), so the mechanisms each chapter names can be followed from step to step. */
function showKernel(el, steps, results) {
  const article = steps.filter((s) => s.kind === "article");
  const chosen = article.length ? article : steps;
  const { steps: columns, rows } = compareSteps(results, chosen.map((s) => s.id));
  const titles = new Map(chosen.map((s) => [s.id, s.title]));
  const counted = columns.reduce((n, c) => n + c.runs, 0);
  const table = h(
    "table.pipebook-kernel-compare",
    { dataset: { runs: String(counted) } },
    h("caption", null, t("What the kernel did in each step, per GiB moved (medians of your runs that counted it)")),
    h(
      "thead",
      null,
      h(
        "tr",
        null,
        h("th", { scope: "col" }, t("Count")),
        columns.map((c) =>
          h("th", { scope: "col", dataset: { step: c.id } }, titles.get(c.id) ?? c.id, h("span.pipebook-kernel-runs", null, c.runs === 1 ? t("{n} run", { n: c.runs }) : t("{n} runs", { n: c.runs }))),
        ),
      ),
    ),
    h(
      "tbody",
      null,
      rows.map((row) =>
        h(
          "tr",
          { dataset: { count: row.key } },
          h("th", { scope: "row" }, row.label),
          row.values.map((v, i) => h("td.pipebook-num", { dataset: { step: columns[i].id } }, countText(v))),
        ),
      ),
    ),
  );
  fill(
    el,
    h("div.pipebook-table-scroll", { tabindex: "0", role: "group", "aria-label": t("Kernel counts by step (scrolls sideways)") }, table),
    h(
      "p.pipebook-results-note",
      null,
      counted
        ? t("A dash: no run of that step counted it (older runs, --no-counts, or counts the kernel did not permit).")
        : t("No run with kernel counts yet: run the article's steps in their chapters and this table fills in."),
    ),
  );
}

/**
 * The "÷ article" cell: the quiet runs' median over the article's figure, and
 * which runs it used; the runner's 95% interval of the runs against the figure
 * (each run paired with it) follows when it answers, or how many runs it needs.
 */
function articleCell(col) {
  if (!col) return h("td.pipebook-num.pipebook-vs-article", null, "—");
  const sizes = [
    Number.isFinite(col.config?.bytes_per_call) ? t("{bytes} a call", { bytes: fmt.bytes(col.config.bytes_per_call) }) : "",
    Number.isFinite(col.config?.pipe_capacity) ? t("a {bytes} pipe", { bytes: fmt.bytes(col.config.pipe_capacity) }) : "",
  ].filter(Boolean);
  const left = col.left ? (col.left === 1 ? t("; {n} other run (watched, traced or other sizes) left out", { n: col.left }) : t("; {n} other runs (watched, traced or other sizes) left out", { n: col.left })) : "";
  const used = col.quiet
    ? (col.quiet === 1 ? t("{n} quiet run{sizes}{left}", { n: col.quiet, sizes: sizes.length ? t(" at {sizes}", { sizes: sizes.join(t(", ")) }) : "", left }) : t("{n} quiet runs{sizes}{left}", { n: col.quiet, sizes: sizes.length ? t(" at {sizes}", { sizes: sizes.join(t(", ")) }) : "", left }))
    : t("no quiet run yet{left}", { left });
  const data = { quiet: String(col.quiet) };
  let figure = "—";
  if (col.ratio !== null && Number.isFinite(col.ratio)) {
    figure = ratioText(col.ratio);
  }
  const shown = h("span.pipebook-results-figure", null, figure);
  const cell = h("td.pipebook-num.pipebook-vs-article", { dataset: data }, shown, h("span.pipebook-results-used", null, used));
  if (col.quiet) {
    judge({ paired: true, a: col.runs, b: figureSide(col.runs, col.article) }).then((answer) => {
      const c = answer.judgement;
      if (c?.verdict === "too_few") fill(shown, t("{ratio} (an interval needs {n} quiet runs)", { ratio: ratioText(col.ratio), n: c.min_n }));
      if (!c || !Number.isFinite(c.ci_low) || !Number.isFinite(c.ci_high)) return;
      fill(shown, `${ratioText(c.ratio)} (${ratioText(c.ci_low)} to ${ratioText(c.ci_high)})`);
      Object.assign(cell.dataset, { verdict: c.verdict, ciLow: String(c.ci_low), ciHigh: String(c.ci_high) });
    });
  }
  return cell;
}

export async function mountResults(el) {
  el.classList.add("pipebook-enhanced");
  const body = h("tbody");
  const table = h(
    "table.pipebook-results-table",
    null,
    h(
      "thead",
      null,
      h(
        "tr",
        null,
        h("th", { scope: "col" }, t("Step")),
        h("th", { scope: "col", title: t("Runs recorded on this machine") }, t("Runs")),
        h("th", { scope: "col", title: t("Your best run, {u_gibs}", { u_gibs: "GiB/s" }) }, t("Best")),
        h("th", { scope: "col", title: t("The median of your runs, {u_gibs}", { u_gibs: "GiB/s" }) }, t("Median")),
        h("th", { scope: "col", title: t("The article, {u_gibs}: i7-8550U laptop, Linux 5.17", { u_gibs: "GiB/s" }) }, t("Article")),
        h("th", { scope: "col", title: t("{u_gibs} of the article's C++ programs on the project's 2-core EPYC VM", { u_gibs: "GiB/s" }) }, t("C++ on VM")),
        h("th", { scope: "col", title: t("The median of your quiet runs divided by the article's figure, with its 95% interval") }, t("÷ article")),
      ),
    ),
    body,
  );
  const caption = h("p.pipebook-results-note");
  const kernel = h("div.pipebook-kernel-steps");
  fill(el, h("div.pipebook-table-scroll", null, table), caption, kernel);

  const steps = await stepList();

  const render = async () => {
    const results = await allResults();
    const byStep = new Map();
    for (const r of results) {
      if (!byStep.has(r.step)) byStep.set(r.step, []);
      byStep.get(r.step).push(r.gib_per_s);
    }
    // A tuned variant's runs get a row of their own, after the catalog's.
    const rows = [...steps, ...tunedRows(steps, results)].map((s) => {
      const mine = byStep.get(s.id) || [];
      const best = mine.length ? Math.max(...mine) : null;
      const med = fmt.median(mine);
      const href = chapterLink(s.chapter);
      const name = href ? h("a", { href }, s.title) : s.title;
      return h(
        "tr",
        { dataset: { step: s.id, runs: String(mine.length) } },
        h("th", { scope: "row" }, name, h("span.pipebook-step-id", null, s.id)),
        h("td.pipebook-num.pipebook-runs", null, String(mine.length)),
        h("td.pipebook-num.pipebook-mine.pipebook-best", null, best === null ? "—" : fmt.gib(best)),
        h("td.pipebook-num.pipebook-mine", null, med === null ? "—" : fmt.gib(med)),
        h("td.pipebook-num", null, fmt.figure(s.article)),
        h("td.pipebook-num", null, fmt.rangeText(s.reference)),
        articleCell(articleColumn(results, s.id, s.article)),
      );
    });
    if (!rows.length) {
      rows.push(
        h(
          "tr",
          null,
          h("td", { colspan: 7 }, t("Start the runner ({command}) to list every step and fill this table.", { command: "cargo run --release" })),
        ),
      );
    }
    fill(body, rows);
    showKernel(kernel, steps, results);
    const total = results.length;
    fill(
      caption,
      total
        ? (total === 1 ? t("{n} run recorded on this machine. {u_gibs} is 2³⁰ bytes per second. Best and median take every run, watched or quiet. ÷ article takes only quiet runs (watching a run costs it) that were not traced, at the sizes of the step's newest quiet run, and says how many; from six such runs on the runner gives the 95% interval, as on the run cards.", { u_gibs: "GiB/s", n: total }) : t("{n} runs recorded on this machine. {u_gibs} is 2³⁰ bytes per second. Best and median take every run, watched or quiet. ÷ article takes only quiet runs (watching a run costs it) that were not traced, at the sizes of the step's newest quiet run, and says how many; from six such runs on the runner gives the 95% interval, as on the run cards.", { u_gibs: "GiB/s", n: total }))
        : t("No runs yet: press “Run this step” in any chapter and the row fills in. {u_gibs} is 2³⁰ bytes per second.", { u_gibs: "GiB/s" }),
    );
  };

  await render();
  document.addEventListener(RESULT_EVENT, () => render());
}
