// Words for the machine report (/api/system): the CPU topology as a line per CPU,
// and the findings list checked before it is shown. Pure, tested in Node.

/** "CPU 0: core 0, package 0, SMT siblings 0, 2" per CPU the runner may use. */
export function topologyLines(places) {
  if (!Array.isArray(places)) return [];
  return places
    .filter((p) => p && Number.isInteger(p.cpu))
    .map((p) => {
      const parts = [];
      if (Number.isInteger(p.core)) parts.push(`core ${p.core}`);
      if (Number.isInteger(p.package)) parts.push(`package ${p.package}`);
      const siblings = Array.isArray(p.siblings) ? p.siblings.filter((s) => s !== p.cpu) : [];
      parts.push(siblings.length ? `shares its core with CPU ${siblings.join(", ")}` : "no SMT sibling");
      return `CPU ${p.cpu}: ${parts.join(", ")}`;
    });
}

/** The findings that have every field as text; anything else is left out. */
export function findingsOf(info) {
  const list = info && Array.isArray(info.findings) ? info.findings : [];
  return list.filter((f) => f && ["id", "title", "evidence", "effect"].every((k) => typeof f[k] === "string"));
}
