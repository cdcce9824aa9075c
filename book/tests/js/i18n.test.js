import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";

import { pageIsEnglish, pageLanguage, runnerText, t, withNodes } from "../../theme/pipebook/i18n.js";
import { messages } from "../../theme/pipebook/catalogue.js";

const moduleDir = new URL("../../theme/pipebook/", import.meta.url);
const fixture = JSON.parse(readFileSync(new URL("../fixtures/i18n-extract.json", import.meta.url), "utf8"));

// A call of t: the identifier t on its own (not x.t, not first() or at(), not its
// definition) and its "(".
const CALL = /(?<![\w$.])(?<!function )t\(/g;
// A comment line: its t(...) are prose, not calls.
const COMMENT = /^\s*(\/\/|\/\*|\*)/;
// The one form the build's extractor reads: a literal on one line, escapes \" \\ \n only.
const LITERAL = /^"((?:[^"\\\n]|\\["\\n])*)"\s*[,)]/;

/** The msgids of `source` in order of first call, each once, and its calls that break the rule. */
function extract(text) {
  const source = text
    .split("\n")
    .map((line) => (COMMENT.test(line) ? "" : line))
    .join("\n");
  const msgids = [];
  const broken = [];
  for (const m of source.matchAll(CALL)) {
    const rest = source.slice(m.index + 2);
    const lit = LITERAL.exec(rest);
    if (!lit) {
      const line = source.slice(0, m.index).split("\n").length;
      broken.push(`line ${line}: ${source.slice(m.index, m.index + 60).split("\n")[0]}`);
      continue;
    }
    const msgid = JSON.parse(`"${lit[1]}"`);
    if (!msgids.includes(msgid)) msgids.push(msgid);
  }
  return { msgids, broken };
}

test("the shared fixture's samples give exactly their msgids", () => {
  for (const sample of fixture.samples) {
    const { msgids, broken } = extract(sample.source);
    assert.deepEqual(broken, [], sample.source);
    assert.deepEqual(msgids, sample.msgids, sample.source);
  }
});

test("a call whose first argument is not one plain literal is found as broken", () => {
  for (const source of ["t(`Run ${n}`)", 't("Run " + n)', "t(label)", 't(\'Run\')', 't("two\nlines")', 't("\\u00e9")']) {
    assert.equal(extract(source).broken.length, 1, source);
  }
});

// Every page module, as a path under the page's folder (a card's folder included).
const pageModules = () => readdirSync(moduleDir, { recursive: true }).filter((f) => f.endsWith(".js"));

test("every call of t in every page module follows the extraction rule", () => {
  const files = pageModules();
  assert.ok(files.length > 10);
  const broken = [];
  for (const file of files) {
    const source = readFileSync(new URL(file, moduleDir), "utf8");
    for (const b of extract(source).broken) broken.push(`${file} ${b}`);
  }
  assert.deepEqual(broken, []);
});

test("every module that calls t imports it from i18n.js", () => {
  for (const file of pageModules().filter((f) => f !== "i18n.js")) {
    const source = readFileSync(new URL(file, moduleDir), "utf8");
    if (extract(source).msgids.length) {
      assert.match(source, /import \{[^}]*\bt\b[^}]*\} from "(\.|\.\.)\/i18n\.js";/, file);
    }
  }
});

test("t fills placeholders and leaves unknown ones as they are", () => {
  assert.equal(t("{n} of {total} runs", { n: 2, total: 6 }), "2 of 6 runs");
  assert.equal(t("{n} runs, {missing}", { n: 0 }), "0 runs, {missing}");
  assert.equal(t("no placeholders"), "no placeholders");
});

test("t answers from the catalogue when it has the msgid", () => {
  messages["Run this step"] = "运行这一步";
  messages["{n} runs"] = "{n} 次运行";
  try {
    assert.equal(t("Run this step"), "运行这一步");
    assert.equal(t("{n} runs", { n: 6 }), "6 次运行");
  } finally {
    delete messages["Run this step"];
    delete messages["{n} runs"];
  }
});

/** A stand-in for the one part of the DOM the language helpers read and write. */
function withPage(lang, fn) {
  const attrs = new Map();
  const el = { setAttribute: (k, v) => attrs.set(k, v) };
  globalThis.document = { documentElement: { lang } };
  try {
    return fn(el, attrs);
  } finally {
    delete globalThis.document;
  }
}

test("the runner's text is marked English on a Chinese page and left alone on an English one", () => {
  withPage("zh-CN", (el, attrs) => {
    assert.equal(pageLanguage(), "zh-CN");
    assert.equal(pageIsEnglish(), false);
    assert.equal(runnerText(el), el);
    assert.equal(attrs.get("lang"), "en");
  });
  withPage("en", (el, attrs) => {
    assert.equal(pageIsEnglish(), true);
    runnerText(el);
    assert.equal(attrs.has("lang"), false);
  });
  assert.equal(pageLanguage(), "en");
});

test("withNodes puts nodes and strings where the translation has their placeholders", () => {
  const code = { node: "code" };
  assert.deepEqual(withNodes("{what}, run {command}.", { what: "To see it", command: code }), ["To see it", ", run ", code, "."]);
  assert.deepEqual(withNodes("运行 {command}，{what}", { what: "看看", command: code }), ["运行 ", code, "，", "看看"]);
  assert.deepEqual(withNodes("{unknown} stays", {}), ["{unknown}", " stays"]);
});

test("no module that calls t hides it behind a variable or parameter of the same name", () => {
  // const/let/var t, (t) or (t, …) or (…, t) as parameters, t =>, [t, …] destructured.
  const declares = /\b(?:const|let|var)\s+t\b|\(\s*t\s*[,)]|\bt\s*=>|\[\s*t\s*[,\]]|,\s*t\s*\)\s*(?:=>|\{)/;
  for (const file of readdirSync(moduleDir).filter((f) => f.endsWith(".js") && f !== "i18n.js")) {
    const source = readFileSync(new URL(file, moduleDir), "utf8");
    if (!extract(source).msgids.length) continue;
    const lines = source.split("\n").filter((line) => !COMMENT.test(line));
    const hiding = lines.filter((line) => declares.test(line.replace(/"(?:[^"\\]|\\.)*"/g, '""')));
    assert.deepEqual(hiding, [], file);
  }
});

test("no msgid spells a unit: units reach the sentence as placeholders, never to be translated", () => {
  const unit = /GiB\/s|MiB\/s|\}\s(?:s|ns|[µμ]s|B)\b/;
  const spelled = [];
  for (const file of readdirSync(moduleDir).filter((f) => f.endsWith(".js"))) {
    const source = readFileSync(new URL(file, moduleDir), "utf8");
    for (const msgid of extract(source).msgids) if (unit.test(msgid)) spelled.push(`${file}: ${msgid}`);
  }
  assert.deepEqual(spelled, []);
});
