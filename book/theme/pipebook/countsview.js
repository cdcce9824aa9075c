// "What the kernel did" under a run card: the counts per GiB and per call for each
// end, the book's model beside them with this run's verdict, and why anything is
// missing. Laid out by counts.js; this module only builds the tables.

import { countTable, countText, machineThp } from "./counts.js";
import { fill, h } from "./dom.js";

const title = (name) => name.charAt(0).toUpperCase() + name.slice(1);

/** A table's box: it scrolls sideways on a narrow screen, so it takes the keyboard's focus. */
const scroller = (label, table) =>
  h("div.pipebook-table-scroll", { tabindex: "0", role: "group", "aria-label": `${label} (scrolls sideways)` }, table);

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
          "What the kernel did: this run carries no counts (counting was off, or the runner predates them).",
        ),
      );
      return;
    }
    const head = h(
      "tr",
      null,
      h("th", { scope: "col" }, "Count"),
      table.ends.flatMap((end) => [
        h("th", { scope: "col" }, `${title(end)} per GiB`),
        h("th", { scope: "col" }, `${title(end)} per call`),
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
      h("caption", null, "What the kernel did, per GiB moved and per data call of each end"),
      h("thead", null, head),
      h("tbody", null, rows),
    );
    const parts = [scroller("What the kernel did", counts)];
    if (table.model.length) {
      parts.push(
        scroller(
          "The book's explanation beside this run",
          h(
            "table.pipebook-model",
            null,
            h("caption", null, "The book's explanation beside this run"),
            h(
              "thead",
              null,
              h(
                "tr",
                null,
                h("th", { scope: "col" }, "Measured"),
                h("th", { scope: "col" }, "This run"),
                h("th", { scope: "col" }, "The book predicts"),
                h("th", { scope: "col" }, "Verdict"),
              ),
            ),
            h(
              "tbody",
              null,
              table.model.map((j) =>
                h(
                  "tr",
                  { dataset: { model: j.id, verdict: j.verdict } },
                  h("th", { scope: "row" }, `${title(j.end)}: ${j.what}`),
                  h("td.pipebook-num", null, countText(j.measured)),
                  h("td", null, j.model),
                  h("td.pipebook-verdict", null, j.verdictText),
                ),
              ),
            ),
          ),
        ),
      );
    }
    const thp = machineThp(result);
    // Shown where huge pages are the point (or where any moved): elsewhere an
    // empty machine-wide line says nothing about the run.
    const hugeStep = result?.options?.writer?.huge_pages === true;
    if (thp && (thp.length || hugeStep)) {
      parts.push(
        h(
          "p.pipebook-kernel-thp",
          null,
          thp.length
            ? `Machine-wide over this run (any process and khugepaged, not only these ends), from /proc/vmstat: ${thp
                .map((t) => `${t.label} ${countText(t.moved)}`)
                .join("; ")}.`
            : "Machine-wide over this run, from /proc/vmstat: no transparent huge page counter moved.",
        ),
      );
    }
    if (table.missing.length) {
      parts.push(
        h(
          "ul.pipebook-kernel-missing",
          null,
          table.missing.map((m) =>
            h(
              "li",
              { dataset: { reason: m.kind } },
              m.counts.length ? `Not counted (${m.counts.join(", ")}): ${m.message}.` : `${m.message}.`,
            ),
          ),
        ),
      );
    }
    fill(this.el, parts);
  }
}
