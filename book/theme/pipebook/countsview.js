// "What the kernel did" under a run card: the counts per GiB and per call for each
// end, the book's model beside them with this run's verdict, and why anything is
// missing. Laid out by counts.js; this module only builds the tables.

import { countTable, countText, machineThp } from "./counts.js";
import { fill, h } from "./dom.js";
import { runnerText, t } from "./i18n.js";

const title = (name) => (name === "writer" ? t("Writer") : name === "reader" ? t("Reader") : name.charAt(0).toUpperCase() + name.slice(1));

/** A table's box: it scrolls sideways on a narrow screen, so it takes the keyboard's focus. */
const scroller = (label, table) =>
  h("div.pipebook-table-scroll", { tabindex: "0", role: "group", "aria-label": t("{label} (scrolls sideways)", { label }) }, table);

/** The counts table: per GiB and per call for each end. */
function countsTable(table) {
  const head = h(
    "tr",
    null,
    h("th", { scope: "col" }, t("Count")),
    table.ends.flatMap((end) => [
      h("th", { scope: "col" }, t("{end} per GiB", { end: title(end) })),
      h("th", { scope: "col" }, t("{end} per call", { end: title(end) })),
    ]),
  );
  const rows = table.rows.map((row) =>
    h(
      "tr",
      { dataset: { count: row.key } },
      h("th", { scope: "row" }, row.label),
      table.ends.flatMap((end) => [
        h("td.pipebook-num", { dataset: { end, per: "gib" } }, countText(row.cells[end].perGib)),
        h("td.pipebook-num", { dataset: { end, per: "call" } }, countText(row.cells[end].perCall)),
      ]),
    ),
  );
  const counts = h(
    "table.pipebook-counts",
    null,
    h("caption", null, t("What the kernel did, per GiB moved and per data call of each end")),
    h("thead", null, head),
    h("tbody", null, rows),
  );
  return scroller(t("What the kernel did"), counts);
}

/** The head row of a table of predictions beside a run; `predicts` names the column of what the text predicts. */
export function modelHead(predicts) {
  const col = (text) => h("th", { scope: "col" }, text);
  return h("tr", null, col(t("Measured")), col(t("This run")), col(predicts), col(t("Verdict")));
}

/** The book's explanation beside this run: each prediction, what was measured, the verdict. */
function modelTable(model) {
  return scroller(
    t("The book's explanation beside this run"),
    h(
      "table.pipebook-model",
      null,
      h("caption", null, t("The book's explanation beside this run")),
      h("thead", null, modelHead(t("The book predicts"))),
      h(
        "tbody",
        null,
        model.map((j) =>
          h(
            "tr",
            { dataset: { model: j.id, verdict: j.verdict } },
            h("th", { scope: "row" }, `${title(j.end)}: `, runnerText(h("span", null, j.what))),
            h("td.pipebook-num", null, countText(j.measured)),
            runnerText(h("td", null, j.model)),
            h("td.pipebook-verdict", null, j.verdictText),
          ),
        ),
      ),
    ),
  );
}

/** The machine-wide transparent huge page counters over the run, or null where they say nothing of it. */
function thpLine(result) {
  const thp = machineThp(result);
  // Shown where huge pages are the point (or where any moved): elsewhere an
  // empty machine-wide line says nothing about the run.
  const hugeStep = result?.options?.writer?.huge_pages === true;
  if (!thp || !(thp.length || hugeStep)) return null;
  return h(
    "p.pipebook-kernel-thp",
    null,
    thp.length
      ? t("Machine-wide over this run (any process and khugepaged, not only these ends), from /proc/vmstat: {moved}.", { moved: thp
          .map((c) => `${c.label} ${countText(c.moved)}`)
          .join(t("; ")) })
      : t("Machine-wide over this run, from /proc/vmstat: no transparent huge page counter moved."),
  );
}

/** Why some counts are missing, one item per reason. */
function missingList(missing) {
  return h(
    "ul.pipebook-kernel-missing",
    null,
    missing.map((m) =>
      h(
        "li",
        { dataset: { reason: m.kind } },
        m.counts.length ? [t("Not counted ({counts}): ", { counts: m.counts.join(t(", ")) }), runnerText(h("span", null, m.message)), "."] : [runnerText(h("span", null, m.message)), "."],
      ),
    ),
  );
}

/** The card's counts section: empty until a result arrives. */
export class KernelCounts {
  constructor() {
    this.el = h("div.pipebook-kernel", { hidden: true });
  }

  show(result) {
    const table = result ? countTable(result) : null;
    if (!result) {
      this.el.hidden = true;
      fill(this.el);
      return;
    }
    this.el.hidden = false;
    if (!table) {
      fill(
        this.el,
        h(
          "p.pipebook-kernel-missing",
          null,
          t("What the kernel did: this run carries no counts (counting was off, or the runner predates them)."),
        ),
      );
      return;
    }
    const parts = [countsTable(table)];
    if (table.model.length) parts.push(modelTable(table.model));
    const thp = thpLine(result);
    if (thp) parts.push(thp);
    if (table.missing.length) parts.push(missingList(table.missing));
    fill(this.el, parts);
  }
}
