// A ratio's 95% interval drawn against 1.0 on a log axis, the picture every
// card that states a ratio with its interval shows (the compare card, the run
// card against the article, the sweep's best against its worst). Its sentence
// is its accessible name, so the picture and the words never disagree. A
// judgement of too few figures has no interval: the picture says so in words.

import { svg } from "./dom.js";
import { tooFewSentence } from "./judge.js";
import { intervalAxis } from "./verdict.js";
import { t } from "./i18n.js";

const WIDTH = 360;
const HEIGHT = 64;

/**
 * The interval of `c` (the runner's judgement: {ratio, ci_low, ci_high,
 * verdict}) as an SVG named by `sentence`, with the class `cls` (tests find
 * it by that). A `too_few` judgement (no interval) gives a sentence instead:
 * how many figures there are and how many the level needs.
 */
export function intervalPicture(c, sentence, cls = "pipebook-compare-interval", unit = undefined) {
  if (c.verdict === "too_few" || !Number.isFinite(c.ci_low) || !Number.isFinite(c.ci_high)) return tooFewPicture(c, cls, unit);
  const axis = intervalAxis(c.ci_low, c.ci_high, c.ratio, WIDTH - 20);
  const x = (v) => 10 + axis.x(v);
  const picture = svg("svg", {
    class: `pipebook-interval ${cls}`,
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    role: "img",
    "aria-label": sentence,
  });
  picture.append(svg("line", { x1: 10, x2: WIDTH - 10, y1: 40, y2: 40, class: "pipebook-compare-axis" }));
  for (const tick of axis.ticks) {
    picture.append(svg("line", { x1: x(tick), x2: x(tick), y1: 37, y2: 43, class: "pipebook-compare-axis" }));
    const label = svg("text", { x: x(tick), y: 58, "text-anchor": "middle", class: "pipebook-compare-tick" });
    label.textContent = `${tick}×`;
    picture.append(label);
  }
  picture.append(svg("line", { x1: x(1), x2: x(1), y1: 6, y2: 44, class: "pipebook-compare-one" }));
  picture.append(svg("rect", { x: x(c.ci_low), y: 14, width: Math.max(x(c.ci_high) - x(c.ci_low), 2), height: 14, class: `pipebook-compare-bar pipebook-compare-${c.verdict}` }));
  picture.append(svg("circle", { cx: x(c.ratio), cy: 21, r: 4, class: "pipebook-compare-dot" }));
  return picture;
}

/**
 * The same axis with 1.0 and no bar: too few figures have no interval. The
 * picture says so in words (and is named by them), so nobody reads a bar
 * that was never drawn.
 */
function tooFewPicture(c, cls, unit) {
  const words = c.verdict === "too_few" ? tooFewSentence(c, unit) : t("No interval: the runner gave none.");
  const axis = intervalAxis(0.5, 2, 1, WIDTH - 20);
  const x = (v) => 10 + axis.x(v);
  const picture = svg("svg", { class: `pipebook-interval pipebook-interval-too-few ${cls}`, viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", "aria-label": words });
  picture.append(svg("line", { x1: 10, x2: WIDTH - 10, y1: 40, y2: 40, class: "pipebook-compare-axis" }));
  picture.append(svg("line", { x1: x(1), x2: x(1), y1: 6, y2: 44, class: "pipebook-compare-one" }));
  const one = svg("text", { x: x(1), y: 58, "text-anchor": "middle", class: "pipebook-compare-tick" });
  one.textContent = "1×";
  const said = svg("text", { x: WIDTH / 2, y: 24, "text-anchor": "middle", class: "pipebook-compare-tick pipebook-interval-too-few-text" });
  said.textContent = words;
  // A long sentence is squeezed to the picture's width rather than cut off.
  if (words.length > 55) {
    said.setAttribute("textLength", String(WIDTH - 20));
    said.setAttribute("lengthAdjust", "spacingAndGlyphs");
  }
  picture.append(one, said);
  return picture;
}
