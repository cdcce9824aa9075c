// "Profile this step" in a run card: the same step with `profile: true`, so the runner
// records both ends with perf (call graphs) and sends `profile {report | error}` before the
// result. Shows the notes (what the machine allowed), the article's writer profile next to
// this one, each end's hottest functions (inclusive and self) and its flame graph, drawn as
// an <img> from a data: URL (the server already removed the SVG's scripts; as an image it
// could not run them anyway, and the page's CSP allows no inline script).
// Hooks for tests: button.pipebook-profile-button, .pipebook-profile[data-state],
// table.pipebook-profile-compare, img.pipebook-flamegraph[data-role].

import { fill, h } from "./dom.js";
import { CardLife } from "./cardlife.js";
import { runnerText, t } from "./i18n.js";

/** The flame graph as an image URL. */
export function flameUrl(svg) {
  return `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
}

/** "12.34%" or "—". */
export function pct(value) {
  return typeof value === "number" && Number.isFinite(value) ? `${value.toFixed(2)}%` : "—";
}

/** Rows of the comparison table: [article name, article %, name here, inclusive %, self %]. */
export function compareRows(comparison) {
  return (comparison || []).map((r) => [
    r.article_function,
    pct(r.article_percent),
    r.measured_function ? (r.measured_function === r.article_function ? t("same name") : r.measured_function) : t("not sampled"),
    pct(r.children_percent),
    pct(r.self_percent),
  ]);
}

function table(cls, head, rows) {
  return h(
    `table.${cls}`,
    null,
    h("thead", null, h("tr", null, ...head.map((c) => h("th", null, c)))),
    h("tbody", null, ...rows.map((row) => h("tr", null, ...row.map((c) => h("td", null, c))))),
  );
}

/** A side's name in the page's language (the role itself stays the data attribute). */
const ROLE_WORDS = { writer: t("writer"), reader: t("reader"), writers: t("writers"), readers: t("readers") };

function endSection(role, end) {
  const who = ROLE_WORDS[role] ?? role;
  const top = end.functions.slice(0, 12).map((f) => [f.symbol + (f.kernel ? " [k]" : ""), pct(f.children_percent), pct(f.self_percent)]);
  return h(
    "div.pipebook-profile-end",
    { dataset: { role } },
    h("p.pipebook-profile-role", null, t("{role}: {n} samples", { role: who, n: end.samples })),
    end.flamegraph_svg
      ? h("img.pipebook-flamegraph", {
          src: flameUrl(end.flamegraph_svg),
          alt: t("flame graph of the {role}: the width of each box is its share of the samples", { role: who }),
          dataset: { role },
        })
      : h("p", null, t("No samples: the run was too short.")),
    h("details", null, h("summary", null, role.endsWith("s") ? t("The {role}' hottest functions", { role: who }) : t("The {role}'s hottest functions", { role: who })), table("pipebook-profile-top", [t("function"), t("inclusive"), t("self")], top)),
  );
}

/** Fills `out` with a profile report: how it was sampled, its notes, the article's
 * comparison when there is one, and each side's flame graph and hottest functions.
 * `names` says what the two sides are ("writers" and "readers" for a shared pipe). */
export function renderProfile(out, report, names = { writer: "writer", reader: "reader" }) {
  const parts = [h("p.pipebook-profile-how", null, t("Sampled with {event} at {frequency} Hz; the ends were paused while perf attached, so this run's {u_gibs} is not a clean figure.", { u_gibs: "GiB/s", event: report.event, frequency: report.frequency }))];
  for (const note of report.notes) parts.push(runnerText(h("p.pipebook-profile-note", { dataset: { kind: note.kind } }, note.message)));
  if (report.comparison) {
    parts.push(
      h("p.pipebook-profile-caption", null, t("The article's writer profile (perf report, Linux 5.17, i7-8550U) beside this one; a 5.17 name is matched to what the function is called in this kernel. Inclusive shares: the function and everything it called.")),
      table("pipebook-profile-compare", [t("article's function"), t("article"), t("name here"), t("inclusive here"), t("self here")], compareRows(report.comparison)),
    );
  }
  parts.push(endSection(names.writer, report.writer), endSection(names.reader, report.reader));
  fill(out, ...parts);
}

/** Adds the "Profile this step" button and its output to a run card. */
export function mountProfile(card, { step, readParams }) {
  const button = h("button.pipebook-profile-button", { type: "button" }, t("Profile this step"));
  const status = h("p.pipebook-profile-status", { role: "status" });
  const out = h("div.pipebook-profile-out");
  const section = h("div.pipebook-profile", { dataset: { state: "idle" } }, button, status, out);
  card.append(section);
  const life = new CardLife({
    status,
    marks: [section],
    states: { connecting: "running", queued: "running", cancelled: "idle" },
    run: [button],
    words: {
      connecting: () => t("Running the step with perf attached to both ends…"),
      queued: (position) => t("Waiting for the run ahead (place {position})…", { position }),
    },
  });
  button.addEventListener("click", () => {
    const read = readParams();
    if (read.errors) return life.say(t("Error: {errors}.", { errors: read.errors.join(t("; ")) }));
    // At most 1 GiB: enough samples, and the profile comes back in seconds.
    const params = { ...read.params, profile: true, quiet: true };
    if (!params.bytes || params.bytes > 2 ** 30) params.bytes = 2 ** 30;
    let profiled = false;
    fill(out);
    life.start({ type: "run", step, params }, {
      profile: (msg) => {
        if (msg.report) {
          profiled = true;
          renderProfile(out, msg.report);
        } else if (msg.error) {
          fill(out, runnerText(h("p.pipebook-profile-note", { dataset: { kind: msg.error.kind } }, msg.error.message)));
        }
      },
      result: () => life.show(profiled ? "done" : "unavailable", profiled ? t("Profiled.") : t("The step ran, but without a profile: see why above.")),
    });
  });
}
