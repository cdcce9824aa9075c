// pipebook's page code: finds the placeholders the book's preprocessor left and mounts
// the widgets. Diagrams are started by diagrams.js (a classic script, so they also
// render when the book is opened from files).

import { catalog, ipcLab, runnerAvailable } from "./api.js";
import { mountCompare } from "./compare.js";
import { mountIpc, mountIpcMatrix } from "./ipcwidget.js";
import { mountLab } from "./lab.js";
import { mountLatency, mountLatencyMatrix } from "./latency.js";
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
  const labCards = [...document.querySelectorAll(".pipebook-lab[data-lab][data-def]")];
  const ipcs = [...document.querySelectorAll(".pipebook-ipc[data-mechanism]")];
  const matrices = [...document.querySelectorAll(".pipebook-ipc-matrix")];
  const pages = [...document.querySelectorAll(".pipebook-pages[data-specs]")];
  const latencies = [...document.querySelectorAll(".pipebook-latency[data-mechanism]")];
  const latencyMatrices = [...document.querySelectorAll(".pipebook-latency-matrix[data-mechanisms]")];
  const compares = [...document.querySelectorAll(".pipebook-compare[data-a][data-b]")];
  const cards = [runs, results, systems, sweeps, labCards, ipcs, matrices, pages, latencies, latencyMatrices, compares];
  // The walk is arithmetic only: drawn whether or not the runner is there.
  for (const el of document.querySelectorAll(".pipebook-walk")) {
    try {
      mountWalk(el);
    } catch (err) {
      console.error("pipebook: walk", err);
    }
  }
  if (cards.every((list) => !list.length)) return;

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
  for (const el of compares) {
    try {
      mountCompare(el, { online, steps });
    } catch (err) {
      console.error("pipebook: compare", err);
    }
  }
  for (const el of labCards) {
    try {
      // The time budget's bounds are the same for every step: take the first task's.
      const def = JSON.parse(el.dataset.def);
      mountLab(el, { online, catalogEntry: byId.get(def.tasks?.[0]?.step) });
    } catch (err) {
      console.error("pipebook: lab", el.dataset.lab, err);
    }
  }
  const lab = online && (ipcs.length || matrices.length) ? await ipcLab() : null;
  for (const el of ipcs) {
    try {
      mountIpc(el, { online, lab });
    } catch (err) {
      console.error("pipebook: ipc", el.dataset.mechanism, err);
    }
  }
  for (const el of matrices) {
    try {
      mountIpcMatrix(el, { online, lab });
    } catch (err) {
      console.error("pipebook: ipc matrix", err);
    }
  }
  for (const el of latencies) {
    try {
      mountLatency(el, { online });
    } catch (err) {
      console.error("pipebook: latency", el.dataset.mechanism, err);
    }
  }
  for (const el of latencyMatrices) {
    try {
      mountLatencyMatrix(el, { online });
    } catch (err) {
      console.error("pipebook: latency matrix", err);
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
