// The page's words in the reader's language: t(msgid, vars) looks msgid up in
// the catalogue of the page's language and fills {name} placeholders from vars.
import { messages } from "./catalogue.js";
export function t(msgid, vars) {
  const text = messages[msgid] ?? msgid;
  return vars ? text.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m)) : text;
}

// Every call of t() has one double-quoted string literal on one line as its first
// argument (escapes only \" \\ \n): the book's build reads the msgids out of these
// files by that rule, so a msgid built at run time would never be translated.

/** The page's language, from `<html lang>` ("en" when there is none, as in node). */
export function pageLanguage() {
  return globalThis.document?.documentElement?.lang || "en";
}

/** Whether the page is the English edition (the source every other edition follows). */
export function pageIsEnglish() {
  return /^en\b/i.test(pageLanguage());
}

/**
 * Marks `el` as holding text the runner sent (its errors, its notes): those are in
 * English and the page does not translate them, so on a page in another language
 * the element says `lang="en"` (screen readers then read it as English). Returns `el`.
 */
export function runnerText(el) {
  if (el && !pageIsEnglish()) el.setAttribute("lang", "en");
  return el;
}

/**
 * One of the runner's fixed sentences (what a kernel probe's answer means, for
 * example) in the page's language: an edition's build puts those sentences into
 * its catalogue, read from the runner's own table, so the page can word them.
 * `translated` says whether it found one (else the runner's English stays, and
 * its element should go through runnerText).
 */
export function runnerSentence(text) {
  const found = typeof text === "string" ? messages[text] : undefined;
  return found === undefined ? { text, translated: false } : { text: found, translated: true };
}

/**
 * `text` (a t() result whose placeholders were left unfilled) as a list of strings and
 * nodes: each {name} becomes vars[name], a node (a link, a <code>) or a string, so a
 * translation can put them where its grammar wants them. Unknown names stay as text.
 */
export function withNodes(text, vars) {
  return String(text)
    .split(/(\{\w+\})/)
    .filter((part) => part !== "")
    .map((part) => {
      const name = /^\{(\w+)\}$/.exec(part)?.[1];
      return name !== undefined && name in vars ? vars[name] : part;
    });
}
