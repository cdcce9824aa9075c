// Under the IPC matrix, .pipebook-ipc-versus states one mechanism against another from
// the quiet runs this page made of each (the matrix's and its own), as the runner
// judges the two sets, drawn as svg.pipebook-ipc-versus-interval, and
// button.pipebook-ipc-versus-until runs the two in pairs (A B, then B A, ...) in a
// sequential design until a look resolves or input.pipebook-ipc-versus-budget's pairs
// are spent; select.pipebook-ipc-versus-a/-b pick them; data-state and data-verdict
// on that element. The page judges nothing itself.

import { CardLife } from "../cardlife.js";
import { fill, h } from "../dom.js";
import { designNote, endingSentence, judge, pairedPlan, planSentence, runSequence } from "../judge.js";
import { showJudged } from "../runverdict.js";
import { judgedSentence } from "../verdict.js";
import { t } from "../i18n.js";
import { BUSY_OR_IDLE } from "./survey.js";

/** Most pairs one "Run until resolved" of two mechanisms may run: three looks of six. */
const MAX_VERSUS_PAIRS = 18;

/** The part's elements: the two pickers, the budget, Run until resolved, the judgement's text and picture, the status. */
function parts(mechanisms) {
  const id = "pipebook-ipc-versus";
  const pick = (cls, chosen) =>
    h(`select.${cls}`, { id: `${id}-${cls.slice(-1)}` }, mechanisms.map((m) => h("option", { value: m.id, selected: m.id === chosen }, m.id)));
  const ids = mechanisms.map((m) => m.id);
  const a = pick("pipebook-ipc-versus-a", ids.includes("pipe-rw") ? "pipe-rw" : ids[0]);
  const p = {
    a,
    b: pick("pipebook-ipc-versus-b", ids.includes("pipe-splice") ? "pipe-splice" : ids.find((x) => x !== a.value) ?? ids[0]),
    budget: h("input.pipebook-ipc-versus-budget", { id: `${id}-budget`, type: "number", min: 1, max: MAX_VERSUS_PAIRS, value: 12, size: 4 }),
    until: h("button.pipebook-cancel-button.pipebook-ipc-versus-until", { type: "button" }, t("Run until resolved")),
    text: h("p.pipebook-ipc-versus-text"),
    picture: h("div.pipebook-ipc-versus-picture"),
    status: h("p.pipebook-status.pipebook-ipc-versus-status", { role: "status", "aria-live": "polite" }),
  };
  const field = (input, label) => h("label.pipebook-field", { for: input.id }, h("span", null, label), input);
  p.el = h(
    "div.pipebook-ipc-versus",
    { "data-state": "idle" },
    h("p.pipebook-summary", null, t("One mechanism against another: the ratio of their medians over the quiet runs this page made (not watched: watching costs a run), as the runner judges them.")),
    h("div.pipebook-lab-row", null, field(p.a, t("Mechanism A")), field(p.b, t("Mechanism B")), field(p.budget, t("Pairs at most")), p.until),
    designNote(h),
    p.text,
    p.picture,
    p.status,
  );
  return p;
}

/** One quiet run of `mech` through the queue (`life`'s session), kept by `keep(mech, result)`: {ok, mib} or {ok: false, message}. */
async function oneRun(life, mech, params, keep) {
  const got = await life.session({ type: "ipc", mechanism: mech, params }, { result: (r) => keep(mech, r) });
  if (got.ended === "cancelled") return { ok: false, message: "Stopped." };
  if (got.ended === "error") return { ok: false, message: t("Error ({id}): {message}", { id: mech, message: got.message }) };
  return got.event.mib_per_s > 0 ? { ok: true, mib: got.event.mib_per_s } : { ok: false, message: t("Error ({id}): no figure.", { id: mech }) };
}

class Versus {
  constructor(mechanisms, keep, runs, read, holdMatrix) {
    Object.assign(this, parts(mechanisms), { keep, runs, read });
    // The matrix's own Run waits while these runs go.
    this.life = new CardLife({ status: this.status, marks: [this.el], states: BUSY_OR_IDLE, run: [this.until], words: { queued: () => null }, onPhase: (phase, busy) => holdMatrix(busy) });
    // The newest "Run until resolved"'s judgement, shown until the mechanisms change.
    this.series = null;
    this.asked = 0;
    this.held = false;
    for (const s of [this.a, this.b])
      s.addEventListener("change", () => {
        this.series = null;
        this.show();
      });
    this.until.addEventListener("click", () => this.runUntilResolved());
  }

  draw(answer) {
    const [a, b] = [this.a.value, this.b.value];
    // A sequence's judgement is over pairs; this page's runs of each, two sets.
    const words = (j) => judgedSentence(j, { a, b, unit: j.method === "signed_rank" ? "pair" : "quiet run", won: t("{id} is faster here", { id: a }), lost: t("{id} is slower here", { id: a }) });
    showJudged(answer, { text: this.text, picture: this.picture, el: this.el, cls: "pipebook-ipc-versus-interval", words, unit: "quiet run" });
  }

  show() {
    const mine = (this.asked += 1);
    if (this.el.dataset.state === "busy") return;
    const [a, b] = [this.a.value, this.b.value];
    const [ra, rb] = [this.runs.of(a), this.runs.of(b)];
    if (a === b) fill(this.text, t("Pick two different mechanisms."));
    else if (this.series) return this.draw({ judgement: this.series });
    else if (!ra.length || !rb.length) fill(this.text, t("{a} has {na} quiet runs here and {b} {nb}: with quiet runs of each, the runner judges how they compare.", { a, na: ra.length, b, nb: rb.length }));
    else {
      judge({ paired: false, a: ra, b: rb }).then((answer) => {
        if (mine === this.asked) this.draw(answer);
      });
      return;
    }
    fill(this.picture);
    delete this.el.dataset.verdict;
  }

  hold(busy) {
    this.held = busy;
    this.until.disabled = busy;
  }

  async runUntilResolved() {
    if (this.held || this.el.dataset.state === "busy") return;
    if (this.a.value === this.b.value) return fill(this.status, t("Pick two different mechanisms."));
    const planned = await pairedPlan(Math.round(Number(this.budget.value)), MAX_VERSUS_PAIRS, t("Pairs at most"));
    if (!planned.plan) return fill(this.status, planned.message);
    const plan = planned.plan;
    const form = this.read();
    if (form.error) return fill(this.status, `Error: ${form.error}.`);
    const [ma, mb] = [this.a.value, this.b.value];
    this.life.begin("running");
    const pairs = { a: [], b: [] };
    const params = { ...form.params, quiet: true };
    const done = await runSequence(plan, {
      count: () => pairs.a.length,
      // A B, then B A: the order balances what drifts over the runs.
      addOne: async () => {
        const n = pairs.a.length;
        this.life.say(`${planSentence(plan, "pair")} ${t("Pair {n} of at most {most}, quiet…", { n: n + 1, most: plan.at.at(-1) })}`);
        const got = {};
        for (const mech of n % 2 === 0 ? [ma, mb] : [mb, ma]) {
          const one = await oneRun(this.life, mech, params, this.keep);
          if (!one.ok) return one;
          got[mech] = one.mib;
        }
        pairs.a.push(got[ma]);
        pairs.b.push(got[mb]);
        return { ok: true };
      },
      judgeAt: (look, looks) => judge({ paired: true, a: pairs.a, b: pairs.b, look, looks }),
      onLook: (j) => {
        this.series = j;
        this.draw({ judgement: j });
      },
    });
    this.life.show("idle", endingSentence(done, "pair"));
  }
}

/**
 * One mechanism against another, from `runs` (a QuietRuns, model.js, which
 * `keep(id, result)` adds to): the runner's judgement of the two sets, and "Run
 * until resolved" (quiet runs in pairs, A B then B A, in a sequential design
 * judged by the runner at each planned look). `read()` gives the matrix's
 * parameters; `holdMatrix(busy)` keeps the matrix's own button off while these
 * runs go. Returns {el, show(), hold(busy)}.
 */
export function versusSection(mechanisms, keep, runs, read, holdMatrix) {
  const part = new Versus(mechanisms, keep, runs, read, holdMatrix);
  part.show();
  return { el: part.el, show: () => part.show(), hold: (busy) => part.hold(busy) };
}
