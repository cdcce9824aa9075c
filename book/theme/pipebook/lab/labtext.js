// The lab card's own words, in the page's language, in one place for lab.js and
// labchecks.js: fixed words, sentences as functions of their figures, and what a
// task, a result and a check's status say (pure). The lab's
// own texts (title, question, checks) come translated with the lab's definition, and
// the runner's outcomes stay as the runner words them.

import * as fmt from "../format.js";
import { t } from "../i18n.js";
import { nsText } from "../latency/dist.js";

/** Fixed words of the lab card: its sections, buttons, fields and states. */
export const LAB_WORDS = {
  kind: t("Lab"),
  predict: t("1. Predict"),
  run: t("2. Run"),
  check: t("3. Check"),
  handIn: t("4. Hand in"),
  offline: t("To do this lab on your own machine"),
  comeBack: t(" and come back to this page."),
  choose: t("choose…"),
  save: t("Save my prediction"),
  yourPrediction: t("Your prediction"),
  noCap: t("no cap"),
  startOver: t("Start this lab over"),
  machineCheck: t("Machine check: looking at the runner's CPUs…"),
  secondsPerRun: t("Seconds per run"),
  byteCap: t("Byte cap per run"),
  yourName: t("your name"),
  exportJson: t("Export my lab report (JSON)"),
  exportHtml: t("Export my lab report (HTML)"),
  reportHolds: t("The report holds every lab's prediction, runs and checks, with this machine's description, sealed with a SHA-256 digest."),
  nameOnReport: t("Name on the report"),
  savedPrediction: t("Saved prediction: "),
  locked: t(" (locked: the runs have started)."),
  saveFirst: t("Save a prediction first: the runs unlock once it is saved."),
  runAgain: t("Run again"),
  runRest: t("Run the rest"),
  runButton: t("Run"),
  cancel: t("Cancel"),
  cancelled: t("Cancelled. Nothing is left running."),
  secondsMissing: t("give the seconds per run"),
  predictionSaved: t("Prediction saved. Now run the tasks."),
  startsOver: t("The lab starts over: its earlier prediction and runs no longer count."),
  notResolved: t("not resolved"),
  unavailableHelp: t("This machine did not let the runner count it, so the check is left open and does not count against you."),
  waitingCheck: t("waiting: the runner judges this check once its tasks have their runs."),
  offlineCheck: t("Judging this check needs the runner: start it ({command}) and open the book from it.", { command: "cargo run --release" }),
  enterNumber: t("enter a number"),
  runnersDefault: t("the runner's default size"),
  everyByte: t(", every byte verified"),
  watchedLeftOut: t(" (watched: left out of speed checks)"),
};

/** Sentences of the lab card, each from its figures. */
export const labSay = {
  ariaLabel: (title) => t("Lab: {title}", { title }),
  predictionUnit: (unit) => t("Your prediction ({unit})", { unit }),
  runsOf: (done, needed) => (needed === 1 ? t("{done} of {needed} run", { done, needed }) : t("{done} of {needed} runs", { done, needed })),
  progressUnread: (message) => t("Could not read the lab's progress from the runner: {message}", { message }),
  notASize: (text) => t("“{text}” is not a size such as {example}", { text, example: "64MiB" }),
  error: (message) => t("Error: {message}", { message }),
  connectingFor: (title) => t("Connecting to the runner for “{title}”…", { title }),
  waitingPlace: (position) => t("Waiting for place {position} in the runner's queue…", { position }),
  running: (what) => t("Running {what}…", { what }),
  point: (index, of, value, gib) => t("Point {index} of {of}: {value}, {gib} {u_gibs}.", { u_gibs: "GiB/s", index, of, value, gib }),
  notRecorded: (why) => t("Not recorded for the lab: {why}.", { why: why ?? t("the runner could not save it") }),
  notSaved: (why) => t("Not saved: {why}.", { why: why ?? t("the runner could not save it") }),
  sweepDone: (title) => t("Sweep done: {title}.", { title }),
  runDone: (figure, left) => t("Run done ({figure}); {left} to go…", { figure, left }),
  done: (title, figure) => t("Done: {title}, last run {figure}.", { title, figure }),
  yourPredictionError: (error) => t("Your prediction: {error}.", { error }),
  latencyFigure: (p50, p99) => t("median {p50}, 99th percentile {p99}", { p50, p99 }),
  latencyTask: (mechanism, mode, size, trips) => t("latency {mechanism}, {mode}, {size} messages, {trips} round trips on the runner's two CPUs", { mechanism, mode, size, trips }),
  ipcTask: (mechanism, size) => t("IPC {mechanism}, {size} unless capped", { mechanism, size }),
  sweepTask: (step, param, values) => t("{step}, {param} over {values}", { step, param, values }),
  whyTry: (explain, tryThis) => t("Why: {explain} What to try: {try}", { explain, try: tryThis }),
  chooseOneOf: (options) => t("choose one of {options}", { options }),
  numberFromTo: (min, max) => t("enter a number from {min} to {max}", { min, max }),
};

// The lab's figures by name, as labchecks.js words them in English (a name it adds
// later shows in English until it is added here).
const METRIC_WORDS = {
  throughput: t("throughput"),
  "CPU time per wall second": t("CPU time per wall second"),
  "share of corrupted bytes": t("share of corrupted bytes"),
  "share of huge pages": t("share of huge pages"),
  "writer's page allocations per GiB": t("writer's page allocations per GiB"),
  "writer's page allocations beyond its page faults, per GiB": t("writer's page allocations beyond its page faults, per GiB"),
  "sleeps per GiB": t("sleeps per GiB"),
  "writer's page faults": t("writer's page faults"),
  "median round trip": t("median round trip"),
  "99th percentile round trip": t("99th percentile round trip"),
  "CPU time per round trip": t("CPU time per round trip"),
  "sleeps per round trip": t("sleeps per round trip"),
  "producer's page faults per page": t("producer's page faults per page"),
  "bytes through data calls per byte moved": t("bytes through data calls per byte moved"),
  figure: t("figure"),
};

/** A figure's English name (labchecks.js's) in the page's language. */
export function metricWord(name) {
  return METRIC_WORDS[name] ?? name;
}

/** Sentences of the lab's checks and prediction (labchecks.js), each from its figures. */
export const checkSay = {
  noCountsEnd: t("an end of the run carries no counts (a runner from before the counts)"),
  noTally: t("the run carries no tally of its data calls (a runner from before the tally)"),
  countingOff: t("the run carries no kernel counts (counting was off)"),
  countsLack: t("the run's kernel counts lack it"),
  leftOut: (n) => (n === 1 ? t(" (1 watched run left out: watching costs a run)") : t(" ({n} watched runs left out: watching costs a run)", { n })),
  at: (size) => t(" at {size}", { size }),
  pending: (task, at, runs, need, left) => t("task “{task}”{at} has {runs} of its {need} runs{left}", { task, at, runs, need, left }),
  uncounted: (task, at, why) => t("task “{task}”{at}: {why}", { task, at, why }),
  missingFigure: (task, at, metric) => t("task “{task}”{at} has a run without its {metric}", { task, at, metric: metricWord(metric) }),
  zero: (metric, task) => t("the {metric} of task “{task}” is zero", { metric: metricWord(metric), task }),
  noCandidates: t("no candidates"),
  marginTooFew: (runnerUp, n, least) => t("Against the runner-up, {runnerUp}: {n} runs a side cannot resolve at 95%; at least {least} a side are needed before the order is clear.", { runnerUp, n, least }),
  marginFigures: (winner, ratio, runnerUp, low, high) => t("{winner} is {ratio}× {runnerUp}, the runner-up (95% interval {low} to {high})", { winner, ratio, runnerUp, low, high }),
  marginClear: (figures) => t("Against the runner-up: {figures}, so the order is clear.", { figures }),
  marginTurned: (figures) => t("Against the runner-up: {figures}; the runner-up is ahead beyond doubt, so look at the medians again.", { figures }),
  marginOpen: (figures) => t("Not resolved against the runner-up: {figures}; the interval holds 1.0, so run more of both before you call it.", { figures }),
  lowestOf: (metric) => t("had the lowest {metric}", { metric: metricWord(metric) }),
  fastest: t("was fastest"),
  predictedRight: (predicted, choice, won) => t("You predicted {predicted}, and {choice} {won}.", { predicted, choice, won }),
  predictedOther: (predicted, choice, won) => t("You predicted {predicted}; {choice} {won} here.", { predicted, choice, won }),
  measured: (measured, unit) => t("Measured: {measured}{unit}.", { measured, unit }),
  closeness: { close: t("close"), "within 2x": t("within 2x"), "far off": t("far off") },
  predictedMeasured: (predicted, measured, unit, closeness) => t("You predicted {predicted}{unit}; you measured {measured}{unit} ({closeness}).", { predicted, measured, unit, closeness }),
};

/** A finished run's headline figure: a latency run's median and 99th percentile, else its GiB/s. */
export function resultFigure(result) {
  if (result?.kind === "latency") return labSay.latencyFigure(nsText(result.p50), nsText(result.p99));
  return `${fmt.gib(result.gib_per_s)} GiB/s`;
}

/** What a task runs, in a line of code text. */
export function taskText(task) {
  if (task.latency) {
    const l = task.latency;
    return labSay.latencyTask(l.mechanism, l.mode, fmt.bytes(l.size), l.round_trips);
  }
  // Without bytes of its own, a task moves the runner's default (published at /api/ipc).
  if (task.mechanism) return labSay.ipcTask(task.mechanism, task.bytes ? fmt.bytes(task.bytes) : LAB_WORDS.runnersDefault);
  if (task.sweep) {
    const values = task.sweep.values.map((v) => fmt.bytes(v)).join(", ");
    return labSay.sweepTask(task.step, task.sweep.param, values);
  }
  return `${task.step}${task.params?.verify ? LAB_WORDS.everyByte : ""}`;
}

/** A check's status as the card shows it. */
export function statusWord(status) {
  if (status === "not_resolved") return LAB_WORDS.notResolved;
  if (status === "not_this_kernel") return t("not this kernel");
  return status;
}

/**
 * Which kernel behaviour a check assumed (`check.when`), and what the runner's
 * probe said here (`outcome.assumes`); null for a check that assumes nothing.
 */
export function assumesText(check, outcome) {
  const when = check?.when;
  if (!when) return null;
  const measured = outcome?.assumes?.measured;
  if (!measured) return t("Assumes {probe}: {answer}.", { probe: when.probe, answer: when.answer });
  if (measured === "unknown") {
    return t("Assumes {probe}: {answer}, as on the article's kernel; this machine's probe could not tell.", { probe: when.probe, answer: when.answer });
  }
  return t("Assumes {probe}: {answer}. This machine's probe says: {measured}.", { probe: when.probe, answer: when.answer, measured });
}
