// Sizes as people type them: "256KiB", "1 MiB", "4096"; lists "16KiB,64KiB" and
// doubling ranges "4KiB..1MiB", as `pipebench sweep` reads them. The runner checks
// every value again; this only lets the page draw the axis before the first run.

import { t } from "./i18n.js";

const UNITS = { "": 1, b: 1, k: 2 ** 10, ki: 2 ** 10, kib: 2 ** 10, m: 2 ** 20, mi: 2 ** 20, mib: 2 ** 20, g: 2 ** 30, gi: 2 ** 30, gib: 2 ** 30 };

/** Bytes in `text`, or null when it is not a size. */
export function parseSize(text) {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(String(text));
  if (!m) return null;
  const unit = UNITS[m[2].toLowerCase()];
  if (unit === undefined) return null;
  const bytes = Number(m[1]) * unit;
  return Number.isSafeInteger(bytes) ? bytes : null;
}

/** {values: [bytes, ...]} increasing, or {error: sentence}. At most `max` values. */
export function parseSizeList(text, max = 24) {
  const list = String(text).trim();
  if (!list) return { error: t("give at least one value, e.g. {list} or {range}", { list: "16KiB,64KiB,256KiB", range: "4KiB..1MiB" }) };
  let values;
  if (list.includes("..")) {
    const [a, b] = list.split("..");
    const low = parseSize(a);
    const high = parseSize(b);
    if (low === null || high === null) return { error: t("“{text}” is not a range of sizes such as {example}", { text: list, example: "4KiB..1MiB" }) };
    if (low === 0) return { error: t("a range must start above 0 bytes") };
    if (high < low) return { error: t("the range must go up: {high} is below {low}", { high: b.trim(), low: a.trim() }) };
    values = [];
    for (let v = low; v <= high && values.length <= max; v *= 2) values.push(v);
  } else {
    values = [];
    for (const part of list.split(",").map((p) => p.trim()).filter(Boolean)) {
      const v = parseSize(part);
      if (v === null) return { error: t("“{text}” is not a size such as {example}", { text: part, example: "64KiB" }) };
      values.push(v);
    }
  }
  if (values.length > max) return { error: t("{n} values is more than a sweep may have ({max})", { n: values.length, max }) };
  for (let i = 1; i < values.length; i += 1) {
    if (values[i] <= values[i - 1]) return { error: t("the values must go up, smallest first") };
  }
  if (values.some((v) => v === 0)) return { error: t("0 bytes is not a size a pipe can have") };
  return { values };
}
