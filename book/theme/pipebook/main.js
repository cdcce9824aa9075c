// pipebook's page code: finds the placeholders the book's preprocessor left and mounts
// the widgets. Diagrams are started by diagrams.js (a classic script, so they also
// render when the book is opened from files).

import { catalog, runnerAvailable } from "./api.js";
import { mountPages } from "./pages.js";
import { mountResults } from "./results.js";
import { mountSweep } from "./sweep.js";
import { mountSystem } from "./system.js";
import { mountWalk } from "./walkview.js";
import { mountWidget } from "./widget.js";

async function main() {
  document.documentElement.classList.add("pipebook-js");
  const runs = [...document.querySelectorAll(".pipebook-run[data-step]")];
  const results = [...document.querySelectorAll(".pipebook-results")];
  const systems = [...document.querySelectorAll(".pipebook-system")];
  const sweeps = [...document.querySelectorAll(".pipebook-sweep[data-step][data-param]")];
  const pages = [...document.querySelectorAll(".pipebook-pages[data-specs]")];
  // The walk is arithmetic only: drawn whether or not the runner is there.
  for (const el of document.querySelectorAll(".pipebook-walk")) {
    try {
      mountWalk(el);
    } catch (err) {
      console.error("pipebook: walk", err);
    }
  }
  if (!runs.length && !results.length && !systems.length && !sweeps.length && !pages.length) return;

  const online = await runnerAvailable();
  const steps = online ? (await catalog()) || [] : [];
  const byId = new Map(steps.map((s) => [String(s.id), s]));

  for (const el of runs) {
    try {
      mountWidget(el, { online, catalogEntry: byId.get(el.dataset.step) });
    } catch (err) {
      console.error("pipebook: widget", el.dataset.step, err);
    }
  }
  for (const el of pages) {
    try {
      mountPages(el, { online });
    } catch (err) {
      console.error("pipebook: pages", err);
    }
  }
  for (const el of sweeps) {
    try {
      mountSweep(el, { online, catalogEntry: byId.get(el.dataset.step) });
    } catch (err) {
      console.error("pipebook: sweep", el.dataset.step, err);
    }
  }
  await Promise.all([
    ...results.map((el) => mountResults(el).catch((err) => console.error("pipebook: results", err))),
    ...systems.map((el) => mountSystem(el).catch((err) => console.error("pipebook: system", err))),
  ]);
  document.documentElement.dataset.pipebookReady = online ? "online" : "offline";
}

if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", main, { once: true });
} else {
  main();
}
