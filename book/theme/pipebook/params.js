// Run parameters as the runner publishes them (GET /api/steps: each step's `params`,
// with name, unit, default, min, max and multiple_of). The page never keeps bounds or
// defaults of its own: controls are built from these specs and values are checked
// against them before they are sent. Pure functions: no DOM here, so Node can test them.

import { bytes as formatBytes, isNumber } from "./format.js";
import { t } from "./i18n.js";

/** The spec named `name` in a catalog entry, or null. */
export function spec(entry, name) {
  const specs = Array.isArray(entry?.params) ? entry.params : [];
  return specs.find((s) => s && s.name === name) || null;
}

/** Powers of two from `min` to `max`, both rounded inward to a power of two. */
export function powersOfTwo(min, max) {
  const out = [];
  if (!(min > 0) || !(max >= min)) return out;
  let v = 2 ** Math.ceil(Math.log2(min));
  while (v <= max) {
    out.push(v);
    v *= 2;
  }
  return out;
}

/**
 * Choices for a size control: the step's own value first (as ""), then powers of two
 * within the spec's bounds. `own` names the default when the spec has none (the
 * kernel's pipe).
 */
export function sizeChoices(s, { own = t("step's own"), limit = Infinity } = {}) {
  if (!s) return [];
  const first = isNumber(s.default) ? t("{own} ({size})", { own, size: formatBytes(s.default) }) : own;
  const choices = [["", first]];
  for (const v of powersOfTwo(s.min, Math.min(s.max, limit))) {
    if (!s.multiple_of || v % s.multiple_of === 0) choices.push([v, formatBytes(v)]);
  }
  return choices;
}

/** The seconds control: the spec's bounds, its default, half-second steps. */
export function secondsControl(s) {
  const fallback = { min: 0.5, max: 60, value: 4, sweep: 1 };
  if (!s) return fallback;
  const value = isNumber(s.default) ? s.default : fallback.value;
  return {
    min: Math.max(s.min, 0.5),
    max: s.max,
    value,
    // A sweep's runs are shorter: the runner publishes their default too.
    sweep: isNumber(s.sweep_default) ? s.sweep_default : value,
  };
}

/**
 * Checks one value against its spec. Returns {value} or {error} with a sentence that
 * names the value and the bounds, as the runner would.
 */
export function check(s, raw) {
  if (!s) return { error: t("unknown parameter") };
  const value = Number(raw);
  if (!isNumber(value)) return { error: t("{label}: “{value}” is not a number", { label: s.label, value: raw }) };
  const show = (v) => (s.unit === "bytes" ? formatBytes(v) : String(v));
  if (value < s.min || value > s.max) {
    return { error: t("{label}: {value} is out of range ({min} to {max})", { label: s.label, value: show(value), min: show(s.min), max: show(s.max) }) };
  }
  if (s.multiple_of && value % s.multiple_of !== 0) {
    return { error: t("{label}: {value} bytes is not a multiple of {multiple} bytes", { label: s.label, value, multiple: s.multiple_of }) };
  }
  return { value };
}

/**
 * Builds run params from raw control values ({name: string}), leaving out the ones
 * left at "" (the step's own). Returns {params} or {errors: [sentence]}.
 */
export function collect(entry, raw) {
  const params = {};
  const errors = [];
  for (const [name, value] of Object.entries(raw)) {
    if (value === "" || value === undefined || value === null) continue;
    const s = spec(entry, name);
    if (!s) {
      errors.push(t("unknown parameter {name}", { name }));
      continue;
    }
    if (s.unit === "flag") {
      if (value === true || value === "true" || value === 1) params[name] = true;
      continue;
    }
    const checked = check(s, value);
    if (checked.error) errors.push(checked.error);
    else params[name] = checked.value;
  }
  return errors.length ? { errors } : { params };
}

/** Sensible default values for a sweep of `param` within the spec's bounds. */
export function sweepDefaults(s, param) {
  if (!s) return [];
  const wanted =
    param === "pipe_size"
      ? [16, 64, 256, 1024].map((k) => k * 1024)
      : [16, 64, 256, 1024, 4096].map((k) => k * 1024);
  return wanted.filter((v) => v >= s.min && v <= s.max && (!s.multiple_of || v % s.multiple_of === 0));
}
