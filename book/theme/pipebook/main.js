// pipebook's page code: finds the placeholders the book's preprocessor left and mounts
// the widgets. Diagrams are started by diagrams.js (a classic script, so they also
// render when the book is opened from files).
//
// Each kind of card is fetched only by a page that has one (a dynamic import): most
// chapters carry one or two kinds, and a phone then downloads, compiles and runs only
// those, not the forty modules of every card in the book.

import { catalog, ipcLab, pageParams, runnerAvailable, tokenIsCurrent } from "./api.js";
import { installCjkSearch } from "./cjksearch.js";
import { mountLanguagePicker } from "./language.js";

// Now, while the page's deferred scripts wait for this module: elasticlunr is not yet
// defined, and a Chinese page's search must tokenize for CJK from its first query.
installCjkSearch();

// What the mount functions get besides their element: `online` (a runner answers),
// `byId` (the runner's step catalogue by id), `steps` (the catalogue as a list), `lab`
// (the IPC lab's table, or null) and `params` (the bounds of the cards' own fields,
// /api/params; a card that needs them is offline without them).
// `needsParams`: the kind types bounds the server checks (its fields read /api/params).
// One row per kind of card: where it sits, the module that draws it, how to mount it.
// `drawnOffline`: drawn without asking the runner (the walk is arithmetic only).
// `settles`: mount returns a promise the page waits for before it says it is ready.
const KINDS = [
  { name: "walk", selector: ".pipebook-walk", drawnOffline: true, load: () => import("./walkview.js"), mount: (m, el) => m.mountWalk(el) },
  { name: "widget", selector: ".pipebook-run[data-step]", load: () => import("./widget.js"), mount: (m, el, ctx) => m.mountWidget(el, { online: ctx.online, catalogEntry: ctx.byId.get(el.dataset.step) }) },
  { name: "pages", selector: ".pipebook-pages[data-specs]", load: () => import("./pages.js"), mount: (m, el, ctx) => m.mountPages(el, { online: ctx.online }) },
  { name: "sweep", selector: ".pipebook-sweep[data-step][data-param]", needsParams: true, load: () => import("./sweep.js"), mount: (m, el, ctx) => m.mountSweep(el, { online: ctx.online && !!ctx.params, catalogEntry: ctx.byId.get(el.dataset.step), params: ctx.params }) },
  {
    name: "lab",
    selector: ".pipebook-lab[data-lab][data-def]",
    load: () => import("./lab/lab.js"),
    // The time budget's bounds are the same for every step: take the first task's.
    mount: (m, el, ctx) => m.mountLab(el, { online: ctx.online, catalogEntry: ctx.byId.get(JSON.parse(el.dataset.def).tasks?.[0]?.step) }),
  },
  { name: "ipc", selector: ".pipebook-ipc[data-mechanism]", needsLab: true, load: () => import("./ipc/card.js"), mount: (m, el, ctx) => m.mountIpc(el, { online: ctx.online, lab: ctx.lab }) },
  { name: "ipc matrix", selector: ".pipebook-ipc-matrix", needsLab: true, load: () => import("./ipc/matrix.js"), mount: (m, el, ctx) => m.mountIpcMatrix(el, { online: ctx.online, lab: ctx.lab }) },
  { name: "latency", selector: ".pipebook-latency[data-mechanism]", needsParams: true, load: () => import("./latency/card.js"), mount: (m, el, ctx) => m.mountLatency(el, { online: ctx.online && !!ctx.params, params: ctx.params }) },
  { name: "latency matrix", selector: ".pipebook-latency-matrix[data-mechanisms]", needsParams: true, load: () => import("./latency/matrix.js"), mount: (m, el, ctx) => m.mountLatencyMatrix(el, { online: ctx.online && !!ctx.params, params: ctx.params }) },
  { name: "tune", selector: ".pipebook-tune[data-step]", load: () => import("./past/tune.js"), mount: (m, el, ctx) => m.mountTune(el, { online: ctx.online, catalogEntry: ctx.byId.get(el.dataset.step) }) },
  { name: "shared pipe", selector: ".pipebook-shared-pipe", load: () => import("./past/sharedpipe.js"), mount: (m, el, ctx) => m.mountSharedPipe(el, { online: ctx.online }) },
  { name: "tool", selector: ".pipebook-tool", settles: true, load: () => import("./past/tool.js"), mount: (m, el, ctx) => m.mountTool(el, { online: ctx.online }) },
  { name: "compare", selector: ".pipebook-compare[data-a][data-b]", needsParams: true, load: () => import("./compare.js"), mount: (m, el, ctx) => m.mountCompare(el, { online: ctx.online && !!ctx.params, steps: ctx.steps, params: ctx.params }) },
  { name: "aa", selector: ".pipebook-aa[data-step]", needsParams: true, load: () => import("./aa.js"), mount: (m, el, ctx) => m.mountSelfCompare(el, { online: ctx.online && !!ctx.params, params: ctx.params }) },
  { name: "results", selector: ".pipebook-results", settles: true, load: () => import("./results.js"), mount: (m, el) => m.mountResults(el) },
  { name: "kernel", selector: ".pipebook-kernel[data-probe]", settles: true, load: () => import("./kernel.js"), mount: (m, el) => m.mountKernel(el) },
  { name: "system", selector: ".pipebook-system", settles: true, load: () => import("./system.js"), mount: (m, el) => m.mountSystem(el) },
];

// Gives the browser its thread back between two cards: each card is mounted in a task
// of its own, so a chapter with many cards never holds a phone's main thread for long.
function nextTask() {
  if (globalThis.scheduler?.yield) return globalThis.scheduler.yield();
  return new Promise((resolve) => setTimeout(resolve, 0));
}

// Mounts every element of one kind; a card that fails is logged and the others go on.
async function mountKind(kind, elements, modulePromise, ctx) {
  let module;
  try {
    module = await modulePromise;
  } catch (err) {
    console.error("pipebook: loading", kind.name, err);
    return;
  }
  const settling = [];
  for (const el of elements) {
    await nextTask();
    try {
      const done = kind.mount(module, el, ctx);
      if (kind.settles) settling.push(Promise.resolve(done).catch((err) => console.error("pipebook:", kind.name, err)));
    } catch (err) {
      console.error("pipebook:", kind.name, el.dataset.step || el.dataset.mechanism || el.dataset.lab || "", err);
    }
  }
  await Promise.all(settling);
}

async function main() {
  document.documentElement.classList.add("pipebook-js");
  try {
    // mdBook declares path_to_root in a classic script: a global binding, not a property of window.
    mountLanguagePicker(document, { pathToRoot: typeof path_to_root === "string" ? path_to_root : undefined });
  } catch (err) {
    console.error("pipebook: language picker", err);
  }
  const present = KINDS.map((kind) => ({ kind, elements: [...document.querySelectorAll(kind.selector)] })).filter(
    (p) => p.elements.length,
  );
  // Fetch the modules at once, while the runner is asked whether it is there.
  const loading = present.map((p) => p.kind.load());

  const offline = { online: false, byId: new Map(), steps: [], lab: null, params: null };
  const drawnOffline = present.map((p, i) => (p.kind.drawnOffline ? mountKind(p.kind, p.elements, loading[i], offline) : null));
  const cards = present.filter((p) => !p.kind.drawnOffline);
  if (!cards.length) {
    await Promise.all(drawnOffline);
    // Said on every page, so whoever waits for the page (a test, a script) never has
    // to know which kinds of card need the runner.
    document.documentElement.dataset.pipebookReady = "no-cards";
    return;
  }

  const online = await runnerAvailable();
  const steps = online ? (await catalog()) || [] : [];
  const byId = new Map(steps.map((s) => [String(s.id), s]));
  const lab = online && cards.some((p) => p.kind.needsLab) ? await ipcLab() : null;
  const params = online && cards.some((p) => p.kind.needsParams) ? await pageParams() : null;
  const ctx = { online, byId, steps, lab, params };
  await Promise.all(present.map((p, i) => (p.kind.drawnOffline ? drawnOffline[i] : mountKind(p.kind, p.elements, loading[i], ctx))));
  document.documentElement.dataset.pipebookReady = online ? "online" : "offline";
}

// A page restored from the back/forward cache carries the token of the server that
// served it; a server restarted since refuses that token, and every card would fail.
// Such a page is loaded again (its results are kept by the runner and the browser).
window.addEventListener("pageshow", async (event) => {
  if (event.persisted && (await tokenIsCurrent()) === false) location.reload();
});

if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", main, { once: true });
} else {
  main();
}
