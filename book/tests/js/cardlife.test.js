import { test } from "node:test";
import assert from "node:assert/strict";

import { PHASES, WORDS, isBusy, outcomeOf, phaseAfter, sayAfter, wordsOf } from "../../theme/pipebook/cardstate.js";
import { LAST_MESSAGE, byName, lastMessageOf, handlerName } from "../../theme/pipebook/runner.js";

const fold = (phase, ends, whole, ...events) => events.reduce((p, e) => phaseAfter(p, e, ends, whole), phase);

test("a job goes connecting, queued, running, done, and only the first three hold the card busy", () => {
  let p = phaseAfter("idle", { type: "connecting" }, "result");
  assert.equal(p, "connecting");
  p = phaseAfter(p, { type: "queued", position: 2 }, "result");
  assert.equal(p, "queued");
  p = phaseAfter(p, { type: "started" }, "result");
  assert.equal(p, "running");
  p = phaseAfter(p, { type: "progress" }, "result");
  assert.equal(p, "running");
  p = phaseAfter(p, { type: "result" }, "result");
  assert.equal(p, "done");
  assert.deepEqual(PHASES.filter(isBusy), ["connecting", "queued", "running"]);
});

test("after its end a job's saved leaves the card done, and a notice changes no phase", () => {
  assert.equal(fold("idle", "result", true, { type: "connecting" }, { type: "result" }, { type: "saved", store: "history" }), "done");
  assert.equal(phaseAfter("queued", { type: "notice", message: "refused" }, "result"), "queued");
});

test("a session that ends with its saved (a prediction) is done at the saved", () => {
  assert.equal(fold("idle", lastMessageOf({ type: "predict" }), true, { type: "connecting" }, { type: "saved", ok: true }), "done");
});

test("cancelled and error end a whole job but leave a sequence's phase to the card", () => {
  assert.equal(fold("idle", "verdict", true, { type: "connecting" }, { type: "cancelled" }), "cancelled");
  assert.equal(fold("idle", "verdict", true, { type: "connecting" }, { type: "error", message: "x" }), "error");
  assert.equal(fold("idle", "verdict", false, { type: "connecting" }, { type: "leg" }, { type: "cancelled" }), "running");
  assert.equal(fold("idle", "verdict", false, { type: "connecting" }, { type: "verdict" }), "connecting");
});

test("the common words say each phase, and a card's own replace them", () => {
  const words = wordsOf({ cancelled: () => "Cancelled. Nothing is left running." });
  assert.equal(sayAfter(words, { type: "connecting" }, "result"), "Connecting to the runner…");
  assert.equal(sayAfter(words, { type: "queued", position: 3 }, "result"), "Waiting: place 3 in the queue.");
  assert.equal(sayAfter(words, { type: "cancelled" }, "result"), "Cancelled. Nothing is left running.");
  assert.equal(sayAfter(words, { type: "error", message: "no CPU" }, "result"), "Error: no CPU");
  assert.equal(sayAfter(words, { type: "result" }, "result"), "Done.");
  assert.equal(sayAfter(words, { type: "progress" }, "result"), null);
  assert.equal(WORDS.running(), null);
  assert.equal(WORDS.cancelling(), "Cancelling…");
});

test("a sequence's session says its queue place but leaves connecting and the endings to the card", () => {
  assert.equal(sayAfter(WORDS, { type: "connecting" }, "done", false), null);
  assert.equal(sayAfter(WORDS, { type: "queued", position: 1 }, "done", false), "Waiting: place 1 in the queue.");
  assert.equal(sayAfter(WORDS, { type: "done" }, "done", false), null);
  assert.equal(sayAfter(WORDS, { type: "cancelled" }, "done", false), null);
});

test("a session ends with its kind's message, a cancel or an error, and nothing else", () => {
  assert.deepEqual(outcomeOf({ type: "verdict", pairs: 5 }, "verdict"), { ended: "done", event: { type: "verdict", pairs: 5 } });
  assert.deepEqual(outcomeOf({ type: "cancelled" }, "verdict"), { ended: "cancelled" });
  assert.deepEqual(outcomeOf({ type: "error", message: "m" }, "verdict"), { ended: "error", message: "m" });
  assert.equal(outcomeOf({ type: "leg" }, "verdict"), null);
});

test("each kind's session ends with the message its table names, a result otherwise", () => {
  assert.equal(lastMessageOf({ type: "run" }), "result");
  assert.equal(lastMessageOf({ type: "ipc" }), "result");
  assert.equal(lastMessageOf({ type: "sweep" }), "done");
  assert.equal(lastMessageOf({ type: "compare" }), "verdict");
  assert.equal(lastMessageOf({ type: "probe" }), "behaviour");
  assert.ok(Object.values(LAST_MESSAGE).every((type) => typeof type === "string"));
});

test("a card's handlers are called by the message type in camelCase, with what each takes", () => {
  const got = [];
  const on = byName({
    queued: (position) => got.push(["queued", position]),
    error: (message) => got.push(["error", message]),
    latencyProgress: (msg) => got.push(["latencyProgress", msg.done]),
    cancelled: (...args) => got.push(["cancelled", args.length]),
  });
  on({ type: "queued", position: 4 });
  on({ type: "error", message: "m" });
  on({ type: "latency_progress", done: 7 });
  on({ type: "cancelled" });
  on({ type: "point" });
  assert.deepEqual(got, [["queued", 4], ["error", "m"], ["latencyProgress", 7], ["cancelled", 0]]);
  assert.equal(handlerName("shared_point"), "sharedPoint");
});
