// Search that finds Chinese. mdBook's searcher splits the query on spaces and '-'
// (elasticlunr.tokenizer), which leaves a Chinese sentence one long word that matches
// nothing. On a Chinese page this module puts a CJK-aware tokenizer in its place
// before the first search; the book's build indexes the Chinese edition with exactly
// the same rule (cjkTokens) and an empty pipeline (elasticlunr's trimmer would strip
// every non-ASCII character), so query and index agree. The English edition is left
// as mdBook makes it.

import { t } from "./i18n.js";

// A letter of a CJK script: its runs are cut into overlapping bigrams.
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
// Punctuation of CJK text (general punctuation such as “ ” — …, the CJK symbols and
// punctuation block, vertical and compatibility forms, full-width punctuation): a
// separator, unless the character is itself of a CJK script (〇 々 are Han).
const CJK_PUNCTUATION = /[\u2000-\u206f\u3000-\u303f\ufe10-\ufe1f\ufe30-\ufe4f\uff00-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65]/u;
// What elasticlunr (and so mdBook) splits words on: white space and '-'. The white
// space is Unicode's White_Space, spelled out so the build (Rust's char::is_whitespace)
// splits on exactly the same characters as this page.
const SEPARATOR = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000-]+/u;
// What a word that is not CJK is trimmed of at both ends (what the trimmer did for
// English: "splice," and "splice" are one word).
const EDGE = /^[^\p{Alphabetic}\p{N}_]+|[^\p{Alphabetic}\p{N}_]+$/gu;

/** The bigrams of one run of CJK letters (a run of one letter is that letter). */
function bigrams(run) {
  const chars = [...run];
  if (chars.length === 1) return chars;
  const out = [];
  for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i] + chars[i + 1]);
  return out;
}

/**
 * The search tokens of `text`, in order (duplicates kept, as term frequency counts
 * them): lowercased, split on whitespace and '-', each maximal run of CJK letters
 * as its bigrams, CJK punctuation a separator, other words trimmed of punctuation
 * at their ends and dropped when nothing is left.
 */
export function cjkTokens(text) {
  const tokens = [];
  for (const word of String(text).toLowerCase().split(SEPARATOR)) {
    let run = "";
    let other = "";
    const flushOther = () => {
      const trimmed = other.replace(EDGE, "");
      if (trimmed) tokens.push(trimmed);
      other = "";
    };
    const flushRun = () => {
      if (run) tokens.push(...bigrams(run));
      run = "";
    };
    for (const ch of word) {
      if (CJK.test(ch)) {
        flushOther();
        run += ch;
      } else if (CJK_PUNCTUATION.test(ch)) {
        flushOther();
        flushRun();
      } else {
        flushRun();
        other += ch;
      }
    }
    flushOther();
    flushRun();
  }
  return tokens;
}

/** elasticlunr's tokenizer contract: a string, or an array of strings, or nothing. */
function tokenizer(input) {
  if (input === undefined || input === null) return [];
  if (Array.isArray(input)) return input.filter((x) => x !== undefined && x !== null).flatMap((x) => cjkTokens(x));
  return cjkTokens(input);
}

const escapes = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&#34;", "'": "&#39;" };
const escapeHTML = (s) => s.replace(/[&<>'"]/g, (c) => escapes[c]);

/**
 * A result's teaser for a Chinese page, as HTML: about `width` characters of `body`
 * around the first place a token of `query` occurs, every occurrence in <em>.
 * (mdBook's own teaser counts words between spaces, and a Chinese paragraph is one.)
 */
export function cjkTeaser(body, query, width = 120) {
  const text = String(body);
  const lower = text.toLowerCase();
  const hit = new Array(text.length).fill(false);
  for (const token of new Set(cjkTokens(query))) {
    for (let at = lower.indexOf(token); at !== -1; at = lower.indexOf(token, at + 1)) {
      for (let i = at; i < at + token.length; i++) hit[i] = true;
    }
  }
  const first = hit.indexOf(true);
  let start = first === -1 ? 0 : Math.max(0, first - Math.floor(width / 4));
  // Begin at a sentence's or clause's start when one is near, not mid-word.
  const cut = text.slice(start, first === -1 ? start : first).search(/[。！？；，.!?;,\s][^。！？；，.!?;,\s]*$/u);
  if (start > 0 && cut !== -1) start += cut + 1;
  const end = Math.min(text.length, start + width);
  let html = start > 0 ? "…" : "";
  let open = false;
  for (let i = start; i < end; i++) {
    if (hit[i] !== open) {
      html += open ? "</em>" : "<em>";
      open = hit[i];
    }
    html += escapeHTML(text[i]);
  }
  if (open) html += "</em>";
  return end < text.length ? `${html}…` : html;
}

/**
 * The line above the results, in the page's language: mdBook's searcher writes it in
 * English ("3 search results for 'x':"), and its count is the number of results it
 * listed.
 */
export function searchHeader(count, query) {
  if (count === 0) return t("No search results for “{query}”.", { query });
  if (count === 1) return t("1 search result for “{query}”:", { query });
  return t("{count} search results for “{query}”:", { count, query });
}

/** Whether this page is in a language written without spaces between words. */
function pageIsChinese(doc) {
  return /^zh\b/i.test(doc.documentElement.lang || "");
}

/**
 * Puts the CJK tokenizer into `lunr` (elasticlunr) and, once mdBook's searcher loads
 * its index, rewrites each result's teaser around the query's Chinese and the line
 * that counts the results in the page's words.
 */
function patch(lunr, win) {
  if (!lunr || lunr.tokenizer?.pipebookCjk) return;
  const old = lunr.tokenizer;
  Object.assign(tokenizer, old, { pipebookCjk: true });
  lunr.tokenizer = tokenizer;
  const load = lunr.Index.load;
  lunr.Index.load = function loadIndex(data) {
    const index = load.call(this, data);
    const search = index.search;
    index.search = function searchAndTease(query, options) {
      const results = search.call(this, query, options);
      // mdBook's searcher lists the results right after this returns, in this order.
      queueMicrotask(() => {
        const items = win.document.querySelectorAll("#mdbook-searchresults > li");
        items.forEach((li, i) => {
          const teaser = li.querySelector(".teaser");
          const body = results[i]?.doc?.body;
          if (teaser && typeof body === "string") teaser.innerHTML = cjkTeaser(body, query);
        });
        const header = win.document.getElementById?.("mdbook-searchresults-header");
        if (header) header.textContent = searchHeader(items.length, query);
      });
      return results;
    };
    return index;
  };
}

/**
 * On a Chinese page, makes mdBook's search tokenize for CJK. Called when main.js is
 * evaluated, which is before the deferred elasticlunr script runs: the tokenizer is put
 * in as that script defines `elasticlunr`, so no search can come first.
 */
export function installCjkSearch(win = globalThis.window) {
  if (!win?.document || !pageIsChinese(win.document)) return;
  if (win.elasticlunr) {
    patch(win.elasticlunr, win);
    return;
  }
  let lunr;
  Object.defineProperty(win, "elasticlunr", {
    configurable: true,
    enumerable: true,
    get: () => lunr,
    set: (value) => {
      lunr = value;
      patch(value, win);
    },
  });
}
