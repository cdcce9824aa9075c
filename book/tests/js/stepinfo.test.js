import { test } from "node:test";
import assert from "node:assert/strict";

import { bestSoFar, comparison, describe, inviteText } from "../../theme/pipebook/stepinfo.js";

const entry = { title: "From the catalog", summary: "s", kind: "variant", article_gib_s: 3.7, reference_gib_s: { low: 0.38, high: 0.38 } };

test("the placeholder's data wins over the catalog, which fills the gaps", () => {
  const info = describe({ step: "write-read", title: "From the page" }, entry);
  assert.deepEqual(info, {
    step: "write-read",
    title: "From the page",
    summary: "s",
    kind: "variant",
    article: 3.7,
    reference: { low: 0.38, high: 0.38 },
  });
  const bare = describe({ step: "x" }, undefined);
  assert.equal(bare.title, "x");
  assert.equal(bare.kind, "article");
  assert.equal(bare.article, null);
  assert.equal(bare.reference, null);
  assert.equal(describe({ step: "x", article: "62.5", reference: "3.1-4.0" }).reference.high, 4);
});

test("before a run: the best of this step's runs, or what a run will be compared with", () => {
  const info = describe({ step: "write-read" }, entry);
  assert.equal(inviteText(describe({ step: "x" })), "");
  assert.match(inviteText(info), /article's 3\.7 GiB\/s and the C\+\+ build's 0\.38 GiB\/s/);
  assert.deepEqual(bestSoFar(info, [{ step: "busy-loop", gib_per_s: 9 }]), { best: null, text: inviteText(info) });
  const best = bestSoFar(info, [
    { step: "write-read", gib_per_s: 0.4 },
    { step: "write-read", gib_per_s: 0.5 },
    { step: "busy-loop", gib_per_s: 9 },
  ]);
  assert.equal(best.best, 0.5);
  assert.equal(best.text, "Best of 2 runs on this machine: 0.14× the article (watched runs included; the verdict below takes quiet runs only).");
});

test("after a run: its rate against the article and the C++ build", () => {
  const info = describe({ step: "write-read" }, entry);
  assert.equal(comparison(info, 0.76), "0.21× the article (3.7 GiB/s), 2.0× the C++ build on the project's VM, from one quiet run (the verdict below says how sure, from two quiet runs on).");
  assert.equal(comparison(describe({ step: "x" }), 1), "");
  // A watched run's comparison says it was watched, and that the verdict takes quiet runs.
  assert.equal(
    comparison(info, 0.76, true),
    "0.21× the article (3.7 GiB/s), 2.0× the C++ build on the project's VM, from one watched run (drawing it live cost it some speed; the verdict below takes quiet runs only).",
  );
  assert.equal(comparison(describe({ step: "x" }), 1, true), "");
});
