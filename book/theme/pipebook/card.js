// The static part of a run card: the step's head (kind, id, title, summary) and the
// figures beside the chart (this machine, the article, the C++ build). widget.js
// adds the run's life around them.

import { h } from "./dom.js";
import * as fmt from "./format.js";
import { KIND_LABEL } from "./stepinfo.js";
import { t } from "./i18n.js";

/** The head of the card for `info` (from stepinfo.describe). */
export function cardHead(info) {
  return h(
    "div.pipebook-card-head",
    null,
    h("span.pipebook-kind", { dataset: { kind: info.kind } }, KIND_LABEL[info.kind] || info.kind),
    h("span.pipebook-step-id", null, info.step),
    h("p.pipebook-title", null, info.title),
    info.summary ? h("p.pipebook-summary", null, info.summary) : null,
  );
}

/**
 * The figures box: `el`, and the parts a run changes (`yours`, the settled figure;
 * `live`, the figure while running; `label`, what `yours` is; `unit`, its unit).
 */
export function cardFigures(info) {
  const yours = h("span.pipebook-result-gibs", null, "—");
  const live = h("span.pipebook-live-gibs", { hidden: true }, "0.00");
  const label = h("span.pipebook-figure-label", null, t("This machine"));
  const unit = h("span.pipebook-unit", null, " GiB/s");
  const yoursBox = h(
    "div.pipebook-figure.pipebook-figure-yours",
    null,
    label,
    h("span.pipebook-figure-value", null, yours, live, unit),
  );
  const figure = (cls, title, text, value) =>
    h(
      `div.pipebook-figure.${cls}`,
      { title },
      h("span.pipebook-figure-label", null, text),
      h("span.pipebook-figure-value", null, value, h("span.pipebook-unit", null, " GiB/s")),
    );
  const el = h(
    "div.pipebook-figures",
    null,
    yoursBox,
    info.article !== null
      ? figure(
          "pipebook-figure-article",
          t("Intel i7-8550U laptop, Linux 5.17, 10 GiB piped (the article)"),
          t("The article"),
          h("span.pipebook-article-gibs", null, fmt.figure(info.article)),
        )
      : null,
    info.reference
      ? figure(
          "pipebook-figure-reference",
          t("The article's C++ programs built and run on the project's 2-core AMD EPYC KVM guest, Linux 6.18"),
          t("C++ on a 2-core VM"),
          h("span.pipebook-reference-gibs", null, fmt.rangeText(info.reference)),
        )
      : null,
  );
  return { el, yoursBox, yours, live, label, unit };
}
