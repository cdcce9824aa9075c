import { test } from "node:test";
import assert from "node:assert/strict";

import {
  claims,
  designSentence,
  endingSentence,
  figureSide,
  judge,
  judgeQuery,
  planFor,
  planLooks,
  planSentence,
  runSequence,
  tooFewSentence,
} from "../../theme/pipebook/judge.js";

test("the query the runner reads keeps every figure and names a look only with its plan", () => {
  const q = new URLSearchParams(judgeQuery({ paired: true, a: [1.5, 1.6000000000000001], b: [1.4, 1.45] }));
  assert.deepEqual([q.get("paired"), q.get("a"), q.get("b"), q.has("look"), q.has("looks")], ["true", "1.5,1.6", "1.4,1.45", false, false]);
  const look = new URLSearchParams(judgeQuery({ paired: false, a: [3], b: [4], look: 2, looks: 3 }));
  assert.deepEqual([look.get("paired"), look.get("look"), look.get("looks")], ["false", "2", "3"]);
  // Runs against a published figure are each paired with that figure.
  assert.deepEqual(figureSide([5, 6, 7], 17.5), [17.5, 17.5, 17.5]);
});

test("without a runner the page gets no verdict, only that judging needs the runner", async () => {
  // A copy of the book opened from files: no runner answers, and nothing is judged here.
  globalThis.location = { protocol: "file:" };
  try {
    assert.deepEqual(await judge({ paired: true, a: [1, 2, 3, 4, 5, 6], b: [1, 1, 1, 1, 1, 1] }), { offline: true });
  } finally {
    delete globalThis.location;
  }
});

test("too few figures say how many there are and how many the level needs", () => {
  const pairs = { method: "signed_rank", level: 0.95, n_a: 5, n_b: 5, min_n: 6, verdict: "too_few" };
  assert.equal(tooFewSentence(pairs), "5 pairs cannot resolve at 95%: at least 6 are needed.");
  assert.equal(tooFewSentence({ ...pairs, n_a: 1, n_b: 1 }, "quiet run"), "1 quiet run cannot resolve at 95%: at least 6 are needed.");
  const sides = { method: "rank_sum", level: 0.95, n_a: 3, n_b: 5, min_n: 4, verdict: "too_few" };
  assert.equal(tooFewSentence(sides), "3 runs a side cannot resolve at 95%: at least 4 a side are needed.");
});

test("a look of a sequential design says which look and its level; a fixed design says nothing more", () => {
  assert.equal(designSentence({ design: "fixed" }), "");
  assert.equal(designSentence({ design: "sequential", look: 1, looks: 3, level_this_look: 0.9995 }), "Look 1 of 3 of a sequential design: each look judges at 100.0%, so all looks together keep the 95% promise.");
  assert.match(designSentence({ design: "sequential", look: 3, looks: 3, level_this_look: 0.978 }), /^Look 3 of 3 .* at 97\.8%/);
});

test("looks are planned before the first run, evenly up to the budget", () => {
  assert.deepEqual(planLooks(1, 6), { looks: 1, every: 6, at: [6] });
  assert.deepEqual(planLooks(2, 18), { looks: 2, every: 9, at: [9, 18] });
  assert.deepEqual(planLooks(3, 20), { looks: 3, every: 6, at: [6, 13, 20] });
  assert.equal(planLooks(2, 1), null, "a budget below its looks plans nothing");
  assert.equal(planLooks(1, 6.5), null);
  assert.equal(planSentence(planLooks(2, 14), "pair"), "Sequential design: 2 looks, after 7, 14 pairs; it stops at the first look that resolves, or after the last.");
  assert.equal(planSentence(planLooks(1, 6), "quiet run"), "Sequential design: one look, after 6 quiet runs; it stops at the first look that resolves, or after the last.");
});

test("a budget buys the most looks whose every look can resolve, by the runner's fewest figures", async () => {
  // What the runner says a look needs: 6 pairs alone, 7 when two or three looks share the 5%.
  const fewest = async (looks) => ({ min: looks === 1 ? 6 : 7 });
  assert.deepEqual(await planFor(6, fewest), { plan: { looks: 1, every: 6, at: [6] } });
  assert.deepEqual(await planFor(13, fewest), { plan: { looks: 1, every: 13, at: [13] } });
  assert.deepEqual(await planFor(14, fewest), { plan: { looks: 2, every: 7, at: [7, 14] } });
  assert.deepEqual(await planFor(21, fewest), { plan: { looks: 3, every: 7, at: [7, 14, 21] } });
  assert.deepEqual(await planFor(5, fewest), { tooSmall: 6 });
  assert.deepEqual(await planFor(12, async () => ({ offline: true })), { offline: true });
});

/** A sequence over figures handed in order, each look answered from `answers` (what the runner would say). */
function sequence(plan, answers, { failAt = Infinity, stopAt = Infinity } = {}) {
  const figures = [];
  const asked = [];
  const seen = [];
  const run = runSequence(plan, {
    count: () => figures.length,
    stopped: () => figures.length >= stopAt,
    addOne: async () => {
      if (figures.length + 1 === failAt) return { ok: false, message: "Error: the runner went away" };
      figures.push(figures.length + 1);
      return { ok: true };
    },
    judgeAt: async (look, looks) => {
      asked.push({ look, looks, n: figures.length });
      const answer = answers[look - 1];
      return answer.judgement ? { judgement: { ...answer.judgement, n_a: figures.length, n_b: figures.length, look, looks } } : answer;
    },
    onLook: (j, look) => seen.push([look, j.verdict]),
  });
  return run.then((done) => ({ done, asked, seen, figures }));
}

const open = { judgement: { method: "signed_rank", verdict: "not_resolved", design: "sequential" } };
const clear = { judgement: { method: "signed_rank", verdict: "slower", design: "sequential" } };

test("a sequence asks the runner only at its planned looks and stops at the first that claims a difference", async () => {
  const plan = planLooks(3, 18);
  const { done, asked, seen } = await sequence(plan, [open, clear, open]);
  assert.deepEqual(asked, [{ look: 1, looks: 3, n: 6 }, { look: 2, looks: 3, n: 12 }]);
  assert.deepEqual(seen, [[1, "not_resolved"], [2, "slower"]]);
  assert.deepEqual([done.ending, done.look], ["resolved", 2]);
  assert.ok(claims(done.judgement));
  assert.equal(endingSentence(done, "pair"), "Resolved at look 2, after 12 pairs.");
});

test("a sequence that never resolves ends at its last look, with the budget spent", async () => {
  const { done, asked } = await sequence(planLooks(2, 12), [open, open]);
  assert.deepEqual(asked.map((a) => a.n), [6, 12]);
  assert.equal(done.ending, "spent");
  assert.equal(endingSentence(done, "quiet run"), "Budget spent: 12 quiet runs in 2 looks, not resolved.");
});

test("a stopped, failed or unanswered sequence says so and claims nothing", async () => {
  const stopped = await sequence(planLooks(2, 12), [open, open], { stopAt: 8 });
  assert.deepEqual([stopped.done.ending, stopped.figures.length], ["stopped", 8]);
  assert.equal(endingSentence(stopped.done, "pair"), "Stopped after 1 look.");
  const failed = await sequence(planLooks(2, 12), [open, open], { failAt: 3 });
  assert.deepEqual([failed.done.ending, failed.asked.length], ["error", 0]);
  assert.equal(endingSentence(failed.done, "pair"), "Error: the runner went away");
  const offline = await sequence(planLooks(2, 12), [{ offline: true }]);
  assert.equal(offline.done.ending, "offline");
  assert.match(endingSentence(offline.done, "pair"), /^Judging these figures needs the runner/);
});

import { countSentence } from "../../theme/pipebook/aa.js";
import { plural } from "../../theme/pipebook/judge.js";

test("the A/A card counts the runner's claims in words", () => {
  assert.equal(countSentence(0, 0), "No try yet.");
  assert.equal(countSentence(1, 0), "0 false claims in 1 try (0%). The promise: at most 5% in the long run.");
  assert.equal(countSentence(20, 1), "1 false claim in 20 tries (5%). The promise: at most 5% in the long run.");
  assert.deepEqual([plural(2, "try"), plural(2, "day"), plural(1, "try"), plural(3, "pair")], ["2 tries", "2 days", "1 try", "3 pairs"]);
});
