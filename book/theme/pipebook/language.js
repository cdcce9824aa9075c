// The reader's language: a picker in the menu bar that leads to the same page in the
// other edition, and, on an English page, a suggestion of the Chinese one when the
// reader chose it before or the browser prefers Chinese. It never redirects: a link
// shared in one language opens in that language.
//
// Its words are in both languages, each marked with its own `lang`, so they are not
// in the catalogue: a reader who cannot read this edition still finds the way out.

import { h } from "./dom.js";
import { pageLanguage } from "./i18n.js";

/** The editions the book is built in: the English at the root, the others under their tag. */
export const EDITIONS = [
  { tag: "en", name: "English", dir: "" },
  { tag: "zh-CN", name: "简体中文", dir: "zh-CN/" },
];

const STORAGE_KEY = "pipebook-language";

/** The edition of a page whose `<html lang>` is `lang` (by its primary subtag; English if none). */
export function editionOf(lang) {
  const primary = (tag) => tag.toLowerCase().split("-")[0];
  return (
    EDITIONS.find((e) => e.tag.toLowerCase() === String(lang).toLowerCase()) ||
    EDITIONS.find((e) => primary(e.tag) === primary(String(lang))) ||
    EDITIONS[0]
  );
}

/**
 * The same page in every edition: `href` is the page's address, `pathToRoot` what mdBook
 * says leads from it to its edition's root ("" at the root, "../" one folder down),
 * `lang` the page's language. Each edition is {tag, name, href, current}.
 */
export function editionLinks({ href, pathToRoot, lang }) {
  const page = new URL(href);
  const current = editionOf(lang);
  const editionRoot = new URL(pathToRoot || "./", page);
  const rest = page.pathname.startsWith(editionRoot.pathname) ? page.pathname.slice(editionRoot.pathname.length) : "";
  // The English edition is the book's root; every other edition is one folder under it.
  const bookRoot = current.dir ? new URL("../", editionRoot) : editionRoot;
  // The section too: every edition's headings carry the English ids (the build
  // gives a translated heading the English one), so #the-loop is the same place.
  return EDITIONS.map((e) => ({ ...e, href: new URL(e.dir + rest, bookRoot).href + page.hash, current: e === current }));
}

/** Whether the first of the browser's languages that the book has an edition in is Chinese. */
export function prefersChinese(languages) {
  for (const lang of languages || []) {
    const primary = String(lang).toLowerCase().split("-")[0];
    if (primary === "zh") return true;
    if (primary === "en") return false;
  }
  return false;
}

/**
 * Whether an English page suggests its Chinese edition: the reader chose Chinese
 * before, or never chose and the browser prefers Chinese.
 */
export function suggestsChinese({ lang, stored, languages }) {
  if (editionOf(lang).tag !== "en") return false;
  if (stored) return stored === "zh-CN";
  return prefersChinese(languages);
}

function readChoice(storage) {
  try {
    return storage?.getItem(STORAGE_KEY) || null;
  } catch {
    return null; // storage refused (private mode, a policy): the reader is asked afresh
  }
}

function storeChoice(storage, tag) {
  try {
    storage?.setItem(STORAGE_KEY, tag);
  } catch {
    // Not remembered; the picker still works.
  }
}

/** The picker: one link per edition, each name in its own language, the current one marked. */
function picker(links, storage) {
  const label = h(
    "span.pipebook-visually-hidden",
    { id: "pipebook-language-label" },
    h("span", { lang: "en" }, "Language"),
    " / ",
    h("span", { lang: "zh-CN" }, "语言"),
  );
  const items = links.map((e) =>
    h(
      "li",
      { class: e.current ? "pipebook-language-current" : null },
      h(
        "a.pipebook-language-link",
        {
          href: e.href,
          hreflang: e.tag,
          lang: e.tag,
          "aria-current": e.current ? "page" : null,
          onclick: () => storeChoice(storage, e.tag),
        },
        e.name,
      ),
    ),
  );
  return h("nav.pipebook-language", { "aria-labelledby": "pipebook-language-label" }, label, h("ul", null, items));
}

/** The suggestion of the Chinese page, in Chinese; dismissing it means staying in English. */
function suggestion(chinese, storage, picker) {
  const box = h("div.pipebook-language-suggest", { lang: "zh-CN" });
  const dismiss = () => {
    storeChoice(storage, "en");
    box.remove();
    picker.querySelector("a[hreflang='zh-CN']")?.focus();
  };
  box.append(
    h(
      "p",
      null,
      "本书有简体中文版。",
      h("a", { href: chinese.href, hreflang: "zh-CN", onclick: () => storeChoice(storage, "zh-CN") }, "阅读本页的中文版"),
    ),
    h("button.pipebook-language-dismiss", { type: "button", onclick: dismiss }, "不用了，继续读英文"),
  );
  return box;
}

/**
 * Puts the picker into the menu bar of `doc` and, where suggestsChinese says so, the
 * suggestion above the chapter. `pathToRoot` is mdBook's (a global of every page); without
 * it, the folder above this module's (each edition carries its own copy of the modules).
 */
export function mountLanguagePicker(doc = document, { pathToRoot = new URL("../", import.meta.url).href, storage = globalThis.localStorage, languages = globalThis.navigator?.languages } = {}) {
  const bar = doc.querySelector("#mdbook-menu-bar .right-buttons");
  if (!bar || bar.querySelector(".pipebook-language")) return;
  const lang = pageLanguage();
  const links = editionLinks({ href: doc.location.href, pathToRoot, lang });
  const nav = picker(links, storage);
  bar.prepend(nav);
  // A reader who moves to another section (a heading's link, the back button)
  // is taken to that section in the other edition.
  globalThis.addEventListener?.("hashchange", () => {
    const now = editionLinks({ href: doc.location.href, pathToRoot, lang });
    for (const e of now) {
      const a = nav.querySelector(`a[hreflang="${e.tag}"]`);
      if (a) a.href = e.href;
    }
  });
  const main = doc.querySelector("#mdbook-content main");
  if (main && suggestsChinese({ lang, stored: readChoice(storage), languages })) {
    main.prepend(suggestion(links.find((e) => e.tag === "zh-CN"), storage, nav));
  }
}
