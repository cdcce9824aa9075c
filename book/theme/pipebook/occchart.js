// The occupancy chart under a run card's throughput chart: how many bytes sat in the
// pipe over the run (layout from occupancy.js), with the full and empty stretches
// shaded and the capacity line named in slots. While a run is live it shows the
// latest fill; the series comes with the result. Colours come from CSS.
// Hooks for tests: figure.pipebook-occupancy[data-state][data-points].

import { h, svg, yGrid } from "./dom.js";
import { H, PAD, W, capacityLabel, fillText, layout, slotOf, summary, usable } from "./occupancy.js";
import { t } from "./i18n.js";

const IDLE_TEXT = t("How full the pipe was, sample by sample, appears here after a run.");

export class OccupancyChart {
  constructor() {
    this.plot = svg("svg", {
      viewBox: `0 0 ${W} ${H}`,
      class: "pipebook-occupancy-plot",
      role: "img",
      "aria-label": t("Bytes in the pipe over the run"),
    });
    this.now = h("span.pipebook-occupancy-now");
    this.note = h("p.pipebook-occupancy-note");
    const swatch = (cls, text) => h("li", null, h(`span.pipebook-swatch.${cls}`, { "aria-hidden": "true" }), text);
    this.legend = h(
      "ul.pipebook-occupancy-legend",
      null,
      swatch("pipebook-swatch-band", t("bytes in the pipe (lowest to highest per point)")),
      swatch("pipebook-swatch-full", t("full: the writer waits for a free slot")),
      swatch("pipebook-swatch-empty", t("empty: the reader waits for data")),
    );
    this.el = h(
      "figure.pipebook-occupancy",
      null,
      h("figcaption.pipebook-occupancy-head", null, h("span", null, t("Bytes in the pipe")), this.now),
      this.plot,
      this.legend,
      this.note,
    );
    this.reset({});
  }

  /** Before a run (quiet runs are not sampled, so they say so). */
  reset({ quiet } = {}) {
    this.capacity = null;
    this.slot = undefined;
    this.plot.replaceChildren();
    this.el.dataset.points = "0";
    this.el.dataset.state = quiet ? "quiet" : "idle";
    this.now.textContent = "";
    this.note.textContent = quiet ? t("A quiet run is not watched, so there is no occupancy to show.") : IDLE_TEXT;
  }

  /** The latest sample while the run is live. */
  live(pipeBytes) {
    this.el.dataset.state = "live";
    // The slot size is known once the result names it; 4 KiB until then.
    this.now.textContent = t("now: {fill}", { fill: fillText(pipeBytes, this.capacity, this.slot) });
  }

  /** A finished run: draws its `occupancy`, or says why there is none. */
  show(result) {
    const occ = result?.occupancy;
    this.now.textContent = "";
    if (!usable(occ)) {
      const quiet = this.el.dataset.state === "quiet";
      this.plot.replaceChildren();
      this.el.dataset.points = "0";
      this.el.dataset.state = quiet ? "quiet" : "none";
      this.note.textContent = quiet
        ? t("A quiet run is not watched, so there is no occupancy to show.")
        : t("No occupancy was sampled in this run (it ended before a sample saw data).");
      return;
    }
    this.capacity = occ.capacity;
    this.slot = slotOf(occ);
    this.draw(occ);
    this.el.dataset.state = "done";
    this.note.textContent = summary(occ);
  }

  draw(occ) {
    const g = layout(occ);
    this.plot.replaceChildren();
    const axis = svg("g", { class: "pipebook-occupancy-axis" });
    yGrid(axis, g.yTicks, { x1: PAD.left, x2: W - PAD.right, gridClass: "pipebook-occupancy-grid" });
    for (const tick of g.xTicks) {
      const label = svg("text", { x: tick.x, y: H - PAD.bottom + 17, "text-anchor": tick.x === PAD.left ? "start" : "middle" });
      label.textContent = tick.label;
      axis.append(label);
    }
    const shading = svg("g", { class: "pipebook-occupancy-phases" });
    for (const p of g.phases) {
      shading.append(
        svg("rect", {
          class: `pipebook-occupancy-${p.kind}`,
          x: p.x,
          y: g.plotTop,
          width: p.w,
          height: g.plotBottom - g.plotTop,
        }),
      );
    }
    const band = svg("polygon", { class: "pipebook-occupancy-band", points: g.band });
    const capacity = svg("line", {
      class: "pipebook-occupancy-capacity",
      x1: PAD.left,
      y1: g.capacityY,
      x2: W - PAD.right,
      y2: g.capacityY,
    });
    const capText = svg("text", { class: "pipebook-occupancy-caplabel", x: W - PAD.right - 4, y: g.capacityY - 4, "text-anchor": "end" });
    capText.textContent = t("capacity {capacity}", { capacity: capacityLabel(occ.capacity, slotOf(occ)) });
    this.plot.append(shading, axis, band, capacity, capText);
    this.el.dataset.points = String(g.points);
  }
}
