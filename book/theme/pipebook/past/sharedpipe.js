// The shared-pipe card: <div class="pipebook-shared-pipe"> puts many writers and
// readers on one pipe, point by point (writers × readers × message sizes).
// Hooks for tests: button.pipebook-shared-button, input.pipebook-shared-profile,
// table.pipebook-shared-result, details.pipebook-shared-profile-point (a point's
// profile); on the root data-state, data-points, data-torn and data-profiles.

import { fill, h } from "../dom.js";
import { renderProfile } from "../profile.js";
import { runnerText, t } from "../i18n.js";
import { sharedParams, sharedRow } from "./figures.js";
import { buttons, cardControls, field, frame } from "./parts.js";

/** The form: writers, readers and message sizes as lists, and whether each point is profiled. */
function sharedForm(root) {
  const input = (cls, value) => h(`input.${cls}`, { id: cls, type: "text", value, size: 10, spellcheck: "false" });
  const f = {
    writers: input("pipebook-shared-writers", root.dataset.writers || "1,2,4"),
    readers: input("pipebook-shared-readers", root.dataset.readers || "1,2"),
    sizes: input("pipebook-shared-sizes", root.dataset.sizes || "4KiB,64KiB"),
    profile: h("input.pipebook-shared-profile", { id: "pipebook-shared-profile", type: "checkbox" }),
    ...buttons("pipebook-shared-button", t("Share the pipe")),
  };
  f.form = h(
    "form.pipebook-controls",
    { novalidate: true },
    field(f.writers, t("Writers")),
    field(f.readers, t("Readers")),
    field(f.sizes, t("Message sizes")),
    h("label.pipebook-field.pipebook-check", { for: f.profile.id }, f.profile, h("span", null, t("Profile each point (perf: where the writers' and readers' time goes)"))),
    h("div.pipebook-buttons", null, f.runButton, f.cancelButton),
  );
  return f;
}

/** The points so far as the table, and on `root` how many and how many messages were torn. */
function drawPoints(root, table, points) {
  const rows = points.map(sharedRow);
  root.dataset.points = String(points.length);
  // Torn messages where POSIX promises none: at or below PIPE_BUF.
  root.dataset.torn = String(points.filter((p) => p.atomic).reduce((n, p) => n + p.torn_messages, 0));
  fill(
    table,
    h("caption", null, t("Each point: {u_gibs} over all readers, what each writer got through, messages torn", { u_gibs: "GiB/s" })),
    h(
      "tr",
      null,
      [t("writers"), t("readers"), t("message"), "GiB/s", t("received per writer"), t("torn"), t("sleeps (writers / readers)"), t("context switches (writers / readers)"), t("wakeups issued (writers / readers)"), t("totals add up")].map((name) =>
        h("th", { scope: "col" }, name),
      ),
    ),
    rows.map((r) =>
      h("tr", null, h("td", null, r.writers), h("td", null, r.readers), h("td", null, r.size), h("td", null, r.gib), h("td", null, r.perWriter), h("td", null, r.torn), h("td", null, r.sleeps), h("td", null, r.switches), h("td", null, r.wakeups), h("td", null, r.addsUp ? t("yes") : t("no"))),
    ),
  );
}

/** A point's profile (or why there is none), folded under the table. */
function addProfile(root, profiles, point, outcome) {
  const body = h("div.pipebook-profile-out");
  if (outcome.report) renderProfile(body, outcome.report, { writer: "writers", reader: "readers" });
  else if (outcome.error) fill(body, h("p.pipebook-profile-note", { dataset: { kind: outcome.error.kind } }, outcome.error.message));
  const row = sharedRow(point);
  profiles.append(h("details.pipebook-shared-profile-point", { dataset: { profiled: outcome.report ? "yes" : "no" } }, h("summary", null, t("Profile: {writers} writers, {readers} readers, {size} messages", { writers: row.writers, readers: row.readers, size: row.size })), body));
  root.dataset.profiles = String(profiles.querySelectorAll("details[data-profiled='yes']").length);
}

/** The handlers of one job's session (runner.js), past what the card's life shows of it. */
function sharedHandlers(card, profiled) {
  const { root, out, life } = card;
  // A point's profile comes just before the point: kept until the point names it.
  let pendingProfile = null;
  return {
    started: (msg) => life.say(t("Running {points} points on {cpus} CPUs{profiled}…", { points: msg.points, cpus: msg.cpus, profiled: profiled ? t(", each profiled") : "" })),
    profile: (msg) => {
      // Before any point: the machine cannot profile at all, said once.
      if (!card.points.length && !pendingProfile && msg.error && !out.profiles.childElementCount) {
        out.profiles.append(h("p.pipebook-profile-note", { dataset: { kind: msg.error.kind } }, msg.error.message));
        return;
      }
      pendingProfile = msg;
    },
    sharedPoint: (point) => {
      card.points.push(point);
      drawPoints(root, out.table, card.points);
      if (pendingProfile) addProfile(root, out.profiles, point, pendingProfile);
      pendingProfile = null;
    },
    result: (res) => {
      card.points = res.points;
      drawPoints(root, out.table, card.points);
      // What the ends could not count here, said once for the sweep.
      const missing = (res.points.find((p) => p.counts)?.counts?.missing || []).map((m) => h("li", null, t("Not counted ({counts}): ", { counts: m.counts.join(", ") }), runnerText(h("span", null, m.message))));
      fill(out.notes, (res.warnings || []).map((w) => runnerText(h("li.pipebook-warning", null, w))), missing);
      life.say(t("Done: {points} points, {torn} torn messages at or below PIPE_BUF.", { points: res.points.length, torn: root.dataset.torn }));
    },
  };
}

/** The shared-pipe card: writers × readers × message sizes on one pipe. */
export function mountSharedPipe(root, { online }) {
  const title = t("Many writers and readers on one pipe: throughput and torn messages");
  const el = frame(root, online, { cls: "pipebook-shared-card", kind: t("Shared pipe"), title, offline: t("To share one pipe between many processes on your own machine"), command: "pipebench shared-pipe --writers 1,2,4 --readers 1,2 --msg-size 4KiB,64KiB" });
  if (!el) return;
  const f = sharedForm(root);
  // The done sentence counts the torn messages once the result's points are drawn (its handler says it).
  const { status, life } = cardControls(root, f.form, f.runButton, f.cancelButton, { cancelled: () => t("Cancelled: every writer and reader was stopped."), done: () => null });
  const out = { table: h("table.pipebook-shared-result"), notes: h("ul.pipebook-notes"), profiles: h("div.pipebook-shared-profiles") };
  el.append(f.form, status, out.table, out.notes, out.profiles);
  life.show("idle", t("Ready: every point runs its writers and readers as processes of their own."));
  const card = { root, out, life, points: [] };
  f.form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (life.busy) return;
    const asked = sharedParams({ writers: f.writers.value, readers: f.readers.value, sizes: f.sizes.value, profile: f.profile.checked });
    if (asked.error) return life.show("error", asked.error);
    card.points = [];
    drawPoints(root, out.table, card.points);
    fill(out.notes);
    fill(out.profiles);
    delete root.dataset.profiles;
    life.start({ type: "shared_pipe", ...asked.params }, sharedHandlers(card, f.profile.checked));
  });
}
