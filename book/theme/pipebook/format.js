// Number and size formatting shared by the widgets. GiB/s is 2^30 bytes per second.

const KIB = 1024;
const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];

export function isNumber(x) {
  return typeof x === "number" && Number.isFinite(x);
}

/** "3.70" — the contract for `.pipebook-result-gibs`. */
export function gib(x) {
  return isNumber(x) ? x.toFixed(2) : "—";
}

/** Short figure for prose: 62.5, 3.7, 0.83. */
export function figure(x) {
  if (!isNumber(x)) return "—";
  if (x >= 10) return x.toFixed(1);
  if (x >= 1) return x.toFixed(1);
  return x.toFixed(2);
}

export function bytes(n) {
  if (!isNumber(n)) return "—";
  let unit = 0;
  let value = n;
  while (value >= KIB && unit < UNITS.length - 1) {
    value /= KIB;
    unit += 1;
  }
  const digits = unit === 0 || Number.isInteger(value) ? 0 : value >= 100 ? 0 : value >= 10 ? 1 : 2;
  return `${value.toFixed(digits)} ${UNITS[unit]}`;
}

export function count(n) {
  return isNumber(n) ? Math.round(n).toLocaleString("en-US") : "—";
}

export function ms(n) {
  if (!isNumber(n)) return "—";
  return n >= 10000 ? `${(n / 1000).toFixed(1)} s` : n >= 1000 ? `${(n / 1000).toFixed(2)} s` : `${Math.round(n)} ms`;
}

/** "0.8-0.8" or "3.1-4.0" -> {low, high}; also accepts {low, high} objects. */
export function range(value) {
  if (value && typeof value === "object") {
    const low = Number(value.low);
    const high = Number(value.high ?? value.low);
    return isNumber(low) && isNumber(high) ? { low, high } : null;
  }
  if (typeof value !== "string" || value.trim() === "") return null;
  const parts = value.split(/\s*[-–]\s*/).map(Number);
  const low = parts[0];
  const high = parts.length > 1 ? parts[1] : parts[0];
  return isNumber(low) && isNumber(high) ? { low, high } : null;
}

export function rangeText(r) {
  if (!r) return "—";
  return r.low === r.high ? figure(r.low) : `${figure(r.low)}–${figure(r.high)}`;
}

export function number(value) {
  if (value === undefined || value === null || value === "") return null;
  const n = Number(value);
  return isNumber(n) ? n : null;
}

/** "1.3×" — how many times `mine` is of `theirs`. */
export function ratio(mine, theirs) {
  if (!isNumber(mine) || !isNumber(theirs) || theirs <= 0) return null;
  const r = mine / theirs;
  return r >= 10 ? `${r.toFixed(0)}×` : r >= 1 ? `${r.toFixed(1)}×` : `${r.toFixed(2)}×`;
}

export function median(values) {
  const sorted = values.filter(isNumber).sort((a, b) => a - b);
  if (!sorted.length) return null;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** A size as pipebench spells it on the command line: 256KiB, 10GiB, 1000 (bytes). */
export function sizeArg(n) {
  if (!isNumber(n)) return String(n);
  for (const [unit, factor] of [["GiB", 2 ** 30], ["MiB", 2 ** 20], ["KiB", 2 ** 10]]) {
    if (n >= factor && n % factor === 0) return `${n / factor}${unit}`;
  }
  return String(n);
}
