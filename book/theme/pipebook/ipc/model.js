// What the IPC cards decide without a page (pure, tested in Node): the mechanism
// a card shows, the sizes a reader types checked against the runner's bounds, the
// command line of a run, and the quiet runs the matrix keeps by mechanism.

import * as fmt from "../format.js";
import { parseSize } from "../sizes.js";
import { t } from "../i18n.js";
import { rate } from "./chart.js";
import { ipcConfigOf } from "./history.js";

/**
 * The mechanism `id` as a card shows it: from /api/ipc (`lab`), else from the
 * placeholder's static attributes (`data`: its dataset).
 */
export function describe(data, lab) {
  const id = data.mechanism;
  const m = lab?.mechanisms?.find((x) => x.id === id);
  if (m) return m;
  const ms = fmt.number(data.surveyMs);
  return {
    id,
    title: data.title || id,
    copies: fmt.number(data.copies),
    copy_path: "",
    kernel_functions: [],
    survey: ms === null ? null : { ms, bytes: fmt.number(data.surveyBytes) },
  };
}

/** The survey's rate of mechanism `m` in MiB/s, or null when the survey gives none. */
export function surveyRate(m) {
  return m.survey ? rate(m.survey.ms, m.survey.bytes) : null;
}

/** "N copies per byte" for the card's head, "" when the copies are unknown. */
export function copiesText(copies) {
  if (copies === null || copies === undefined) return "";
  return copies === 1 ? t("{n} copy per byte", { n: copies }) : t("{n} copies per byte", { n: copies });
}

/** The runner's bounds of parameter `name` (/api/ipc), or null. */
export function bound(lab, name) {
  return lab?.params?.find((p) => p.name === name) || null;
}

/** Bytes from a text field, checked against the server's bounds: {value} or {error}. */
export function readSize(text, b, label, optional) {
  if (optional && String(text).trim() === "") return { value: null };
  const value = parseSize(text);
  if (value === null) return { error: t("{label}: “{text}” is not a size such as {example}", { label, text, example: "200MiB" }) };
  if (b && (value < b.min || value > b.max)) {
    return { error: t("{label} must be {min} to {max}, not {value}", { label, min: fmt.bytes(b.min), max: fmt.bytes(b.max), value: fmt.bytes(value) }) };
  }
  return { value };
}

/**
 * A run's parameters from what the form holds (`form`: the texts `bytes` and
 * `chunk`, whether kernel events are `counted` and the run is `quiet`), checked
 * against `lab`'s bounds: {params} or {error}.
 */
export function ipcParams(form, lab) {
  const b = readSize(form.bytes, bound(lab, "bytes"), "bytes", false);
  if (b.error) return b;
  const c = readSize(form.chunk, bound(lab, "chunk"), t("bytes per call"), true);
  if (c.error) return c;
  const params = { bytes: b.value };
  if (c.value !== null) params.chunk = c.value;
  // Sent only when off: the runner counts by default.
  if (form.counted === false) params.counts = false;
  if (form.quiet) params.quiet = true;
  return { params };
}

/** The same run on the command line. */
export function commandLine(id, bytes, chunk, counts) {
  return `pipebench ipc ${id} --bytes ${fmt.sizeArg(bytes)}${chunk ? ` --chunk ${fmt.sizeArg(chunk)}` : ""}${counts === false ? " --no-counts" : ""} --repeats 1`;
}

/**
 * Every MiB/s of a quiet run this page made, by mechanism: what "one against
 * another" reads. A run that does not say it was quiet is left out. All of one
 * size (bytes moved, kernel events counted or not): a run at another size starts
 * the set afresh, so no ratio mixes two sizes. (Bytes per call are each
 * mechanism's own default unless typed, so they are not keyed.)
 */
export class QuietRuns {
  constructor() {
    this.runs = new Map();
    this.at = null;
  }

  /** Keeps result `r` of mechanism `id` when it is a quiet run with a figure. */
  keep(id, r) {
    const mib = r.mib_per_s;
    if (!(mib > 0) || r.watched !== false) return;
    const c = ipcConfigOf(r);
    const at = c ? `${c.bytes}/${c.counted}` : "";
    if (at !== this.at) {
      this.runs.clear();
      this.at = at;
    }
    if (!this.runs.has(id)) this.runs.set(id, []);
    this.runs.get(id).push(mib);
  }

  /** The MiB/s of mechanism `id`'s quiet runs kept so far. */
  of(id) {
    return this.runs.get(id) ?? [];
  }
}
