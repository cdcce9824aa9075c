// /api/system on the page: the findings (what explains this machine's figures)
// and a definition list of the facts behind them.

import { system } from "./api.js";
import { fill, h } from "./dom.js";
import * as fmt from "./format.js";
import { behaviourPanel } from "./kernel.js";
import { findingsOf, gapText, historyGaps, topologyLines, wakeupText } from "./machine.js";
import { CardLife } from "./cardlife.js";
import { allResults } from "./store.js";
import { runnerText, t, withNodes } from "./i18n.js";

const LABELS = {
  kernel: t("Kernel"),
  cpu_model: t("CPU"),
  cpus_online: t("CPUs online"),
  virtualization: t("Virtualisation"),
  thp_mode: t("Transparent huge pages"),
  pipe_max_size: "pipe-max-size",
  perf: "perf",
  pagemap: "pagemap",
  vmsplice: "vmsplice",
  mitigations: t("CPU mitigations"),
  cpus_allowed: t("CPUs allowed"),
  thp_defrag: t("THP defrag"),
  gigantic_pages: t("1 GiB pages"),
  cpu_topology: t("CPU topology"),
};

/** Fields shown otherwise than in the list. */
const NOT_LISTED = new Set(["findings", "behaviour", "behaviour_probed_at_ms"]);

function show(key, value) {
  if (value === null || value === undefined || value === "") return "—";
  if (key === "cpu_topology") return topologyLines(value).map((line) => h("div", null, line));
  if (key === "pipe_max_size" && fmt.isNumber(value)) return t("{size} ({bytes} bytes)", { size: fmt.bytes(value), bytes: fmt.count(value) });
  if (key === "vmsplice") {
    if (value === "maps-pages") return t("maps the writer's pages into the pipe (zero copy)");
    if (value === "copies-pages") return t("copies the data (newer kernels)");
  }
  if (typeof value === "boolean") return value ? t("yes") : t("no");
  if (Array.isArray(value)) {
    if (!value.length) return t("none reported");
    if (value.every((v) => typeof v === "number")) return value.join(", ");
    return value.map((v) => h("div", null, String(v)));
  }
  if (typeof value === "object") {
    if ("available" in value) {
      const rest = Object.entries(value)
        .filter(([k, v]) => k !== "available" && v !== null && v !== "")
        .map(([, v]) => (typeof v === "object" ? JSON.stringify(v) : String(v)));
      return `${value.available ? t("available") : t("not available")}${rest.length ? ` (${rest.join("; ")})` : ""}`;
    }
    return Object.entries(value)
      .map(([k, v]) => `${k.replaceAll("_", " ")}: ${typeof v === "object" ? JSON.stringify(v) : show(k, v)}`)
      .join("; ");
  }
  return String(value);
}

/** The findings as a list (null when there are none). */
function findingsList(findings) {
  if (!findings.length) return null;
  return h(
    "ul.pipebook-findings",
    { "aria-label": t("What explains this machine's figures") },
    findings.map((f) =>
      h(
        "li.pipebook-finding",
        { dataset: { id: f.id } },
        runnerText(h("strong.pipebook-finding-title", null, f.title)),
        h("span.pipebook-finding-evidence", null, t("Seen: "), runnerText(h("span", null, f.evidence)), "."),
        runnerText(h("span.pipebook-finding-effect", null, f.effect)),
      ),
    ),
  );
}

/**
 * The wakeup probe: a button that queues `pipebench wakeup` on the runner (like a
 * run, so never beside one), then shows the round trips next to the reader's own
 * blocking-vs-busy gap, and replaces `findingsBox`'s list with the findings the
 * measurement adds to. Hooks: .pipebook-wakeup[data-state].
 */
function wakeupPanel(findingsBox) {
  const button = h("button.pipebook-wakeup-button", { type: "button" }, t("Measure a wakeup"));
  const status = h("p.pipebook-wakeup-result", { role: "status", "aria-live": "polite" });
  const gap = h("p.pipebook-wakeup-gap");
  const panel = h("div.pipebook-wakeup", { dataset: { state: "idle" } }, button, status, gap);
  const life = new CardLife({
    status,
    marks: [panel],
    states: { connecting: "running", queued: "running" },
    run: [button],
    words: {
      connecting: () => t("Measuring: two processes bounce one byte, blocking and then busy-polling…"),
      queued: (position) => t("Waiting for the run ahead (place {position} in the queue)…", { position }),
    },
  });
  button.addEventListener("click", () =>
    life.start({ type: "wakeup" }, {
      wakeup: async (msg) => {
        life.say(wakeupText(msg.wakeup));
        const findings = findingsOf(msg);
        if (findings.length) fill(findingsBox, findingsList(findings));
        const gaps = historyGaps(await allResults());
        fill(gap, gaps.length ? gaps.map(gapText).join(" ") : t("Run huge-pages and busy-loop to see what blocking costs you here, next to this figure."));
      },
    }),
  );
  return panel;
}

export async function mountSystem(el) {
  el.classList.add("pipebook-enhanced");
  let info = null;
  try {
    info = await system();
  } catch {
    info = null;
  }
  if (!info || typeof info !== "object") {
    fill(
      el,
      h(
        "p.pipebook-offline",
        null,
        withNodes(t("Start the runner ({command}) and open the book from it to see this machine's kernel, CPU and settings here."), { command: h("code", null, "cargo run --release") }),
      ),
    );
    return;
  }
  const keys = [...Object.keys(LABELS).filter((k) => k in info), ...Object.keys(info).filter((k) => !(k in LABELS))].filter(
    (k) => !NOT_LISTED.has(k),
  );
  const findingsBox = h("div.pipebook-findings-box", null, findingsList(findingsOf(info)));
  fill(
    el,
    findingsBox,
    wakeupPanel(findingsBox),
    behaviourPanel(info),
    h(
      "dl.pipebook-system-list",
      null,
      keys.flatMap((k) => [h("dt", null, LABELS[k] || k.replaceAll("_", " ")), h("dd", null, show(k, info[k]))]),
    ),
  );
}
