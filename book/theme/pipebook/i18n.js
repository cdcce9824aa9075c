// The page's words in the reader's language: t(msgid, vars) looks msgid up in
// the catalogue of the page's language and fills {name} placeholders from vars.
import { messages } from "./catalogue.js";
export function t(msgid, vars) {
  const text = messages[msgid] ?? msgid;
  return vars ? text.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m)) : text;
}
