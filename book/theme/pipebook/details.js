// What a finished run reports beyond its GiB/s: per-end counters, and notes on the
// budget, huge pages, corrupted bytes and the command line that reproduces the run.

import { fill, h } from "./dom.js";
import * as fmt from "./format.js";
import { runnerText, t, withNodes } from "./i18n.js";

/** Writer and reader counters; dashes until a result arrives (so the card keeps its size). */
export class EndStats {
  constructor() {
    this.body = h("tbody");
    const col = (title, text) => h("th", { scope: "col", title }, text);
    this.el = h(
      "table.pipebook-stats",
      null,
      h(
        "thead",
        null,
        h(
          "tr",
          null,
          h("th", { scope: "col" }, h("span.pipebook-visually-hidden", null, t("end"))),
          col(t("CPU the end was pinned to"), "CPU"),
          col(t("Minor page faults"), t("Minor faults")),
          col(t("Voluntary context switches (the end slept)"), t("Vol. switches")),
          col(t("Involuntary context switches (the end was preempted)"), t("Invol. switches")),
          col(t("Calls that returned EAGAIN and were retried (busy loop)"), t("EAGAIN retries")),
          col(t("CPU time in user space / in the kernel"), t("User / kernel")),
        ),
      ),
      this.body,
    );
  }

  show(result) {
    const row = (name, end) =>
      h(
        "tr",
        null,
        h("th", { scope: "row" }, name),
        h("td", null, end ? (end.cpu ?? "—") : "—"),
        h("td", null, fmt.count(end?.minor_faults)),
        h("td", null, fmt.count(end?.voluntary_ctx_switches)),
        h("td", null, fmt.count(end?.involuntary_ctx_switches)),
        h("td", null, fmt.count(end?.retries)),
        h(
          "td",
          null,
          end && (fmt.isNumber(end.user_ms) || fmt.isNumber(end.system_ms))
            ? `${fmt.ms(end.user_ms)} / ${fmt.ms(end.system_ms)}`
            : "—",
        ),
      );
    fill(this.body, row(t("Writer"), result?.writer), row(t("Reader"), result?.reader));
  }
}

/** Fields of an ends' options that are plumbing, not command-line flags. */
const INTERNAL_OPTIONS = new Set(["control_fd", "report_fd"]);
const SIZE_OPTIONS = new Set(["buf_size", "pipe_size", "bytes"]);

/** Options as the words of the `pipebench write|read` command line that reproduces them. */
function optionWords(options) {
  if (options === undefined || options === null) return [];
  if (typeof options === "string") return options.split(/\s+(?=--)/).filter(Boolean);
  if (Array.isArray(options)) return options.map(String);
  if (typeof options !== "object") return [String(options)];
  return Object.entries(options)
    .filter(([k, v]) => !INTERNAL_OPTIONS.has(k) && v !== false && v !== null && v !== undefined)
    .map(([k, v]) => {
      const flag = `--${k.replaceAll("_", "-")}`;
      if (v === true) return flag;
      return `${flag} ${SIZE_OPTIONS.has(k) ? fmt.sizeArg(v) : v}`;
    });
}

/** A command line that wraps between options, never inside one. */
function commandLine(program, options) {
  const words = [program, ...optionWords(options)];
  return h(
    "code.pipebook-command",
    null,
    words.flatMap((w, i) => [i ? " " : null, h("span", null, w)]),
  );
}

function percent(part, whole) {
  const p = (100 * part) / whole;
  return `${p.toFixed(p < 1 ? 2 : 0)}%`;
}

/** "64 KiB (16 slots of one 4 KiB page)": a pipe capacity as the ring it is, with slots
 * of `slot` bytes, the machine's page size the result carries; without it, the bytes. */
export function capacityText(bytes, slot) {
  if (!fmt.isNumber(bytes)) return t("unknown");
  // A result from before the page size was kept says nothing of slots: a page is 4 KiB
  // on x86-64 but 16 or 64 KiB on some arm64 kernels, so it is never assumed.
  if (!fmt.isNumber(slot) || slot <= 0) return fmt.bytes(bytes);
  return t("{bytes} ({slots} slots of one {page} page)", { bytes: fmt.bytes(bytes), slots: bytes / slot, page: fmt.bytes(slot) });
}

/** List items for a finished run: warnings first, then what the figures need said. */
export function resultNotes(result, { budget, warnings = [] }) {
  // The plan's warnings came with `started` and return in the result: show each once.
  const all = [...new Set([...warnings, ...(Array.isArray(result.warnings) ? result.warnings.map(String) : [])])];
  const items = all.map((w) => runnerText(h("span.pipebook-warning", null, w)));
  if (fmt.isNumber(result.bytes_per_call) || fmt.isNumber(result.pipe_capacity)) {
    items.push(
      h(
        "span.pipebook-config",
        null,
        t("{bytes} per call, into a pipe of {capacity}.", { bytes: fmt.bytes(result.bytes_per_call), capacity: capacityText(result.pipe_capacity, result.page_size ?? result.occupancy?.slot_bytes) }),
      ),
    );
  }
  if (result.stopped_by_budget) {
    items.push(t("Stopped by the {seconds} {u_s} budget after {bytes}; the figure is the rate until then.", { u_s: "s", seconds: budget, bytes: fmt.bytes(result.bytes) }));
  }
  const hp = result.huge_pages;
  if (hp && typeof hp === "object") {
    const share =
      fmt.isNumber(hp.checked_bytes) && hp.checked_bytes > 0 && fmt.isNumber(hp.huge_bytes)
        ? t("{share} of {bytes} checked sat in huge pages", { share: percent(hp.huge_bytes, hp.checked_bytes), bytes: fmt.bytes(hp.checked_bytes) })
        : t("huge pages were not checked");
    const how = [hp.method && t("via {method}", { method: hp.method }), hp.thp_mode && t("THP mode “{mode}”", { mode: hp.thp_mode })].filter(Boolean);
    items.push(h("span", null, t("Huge pages: {share}{how}.", { share, how: how.length ? t(" ({how})", { how: how.join(t(", ")) }) : "" }), hp.note ? [" ", runnerText(h("span", null, hp.note))] : null));
  }
  const bad = result.corrupted_bytes;
  if (bad !== null && bad !== undefined) {
    const of = fmt.isNumber(result.bytes) && result.bytes > 0 ? t(" of {bytes} ({share})", { bytes: fmt.count(result.bytes), share: percent(bad, result.bytes) }) : "";
    items.push(
      bad > 0
        ? h(
            "span.pipebook-corrupted",
            null,
            t("{count} bytes{of} arrived corrupted: the writer rewrote pages the pipe still referenced.", { count: fmt.count(bad), of }),
          )
        : t("Verified: no byte arrived corrupted."),
    );
  }
  if (Array.isArray(result.argv) && result.argv.length) {
    items.push(h("span", null, withNodes(t("Again from a terminal: {command}"), { command: commandLine(result.argv[0], result.argv.slice(1)) })));
  }
  if (result.options?.writer || result.options?.reader) {
    items.push(
      h(
        "span",
        null,
        withNodes(t("Ran {writer} | {reader}"), { writer: commandLine("pipebench write", result.options?.writer), reader: commandLine("pipebench read", result.options?.reader) }),
      ),
    );
  }
  return items;
}
