import { test } from "node:test";
import assert from "node:assert/strict";

import { editionLinks, editionOf, prefersChinese, suggestsChinese } from "../../theme/pipebook/language.js";

const hrefs = (links) => Object.fromEntries(links.map((e) => [e.tag, e.href]));

test("an English chapter links to the same chapter and section under /zh-CN/", () => {
  const links = editionLinks({ href: "http://127.0.0.1:8000/vmsplice.html#the-loop", pathToRoot: "", lang: "en" });
  assert.deepEqual(hrefs(links), { en: "http://127.0.0.1:8000/vmsplice.html#the-loop", "zh-CN": "http://127.0.0.1:8000/zh-CN/vmsplice.html#the-loop" });
  assert.deepEqual(
    links.map((e) => e.current),
    [true, false],
  );
});

test("a Chinese chapter in a folder links back to the same English chapter", () => {
  const links = editionLinks({ href: "http://127.0.0.1:8000/zh-CN/labs/ipc.html?x=1", pathToRoot: "../", lang: "zh-CN" });
  assert.deepEqual(hrefs(links), { en: "http://127.0.0.1:8000/labs/ipc.html", "zh-CN": "http://127.0.0.1:8000/zh-CN/labs/ipc.html" });
  assert.equal(links.find((e) => e.current).tag, "zh-CN");
});

test("the book's front page and a copy opened from files keep their place too", () => {
  assert.deepEqual(hrefs(editionLinks({ href: "http://localhost/", pathToRoot: "", lang: "en" })), {
    en: "http://localhost/",
    "zh-CN": "http://localhost/zh-CN/",
  });
  assert.deepEqual(hrefs(editionLinks({ href: "file:///home/r/book/zh-CN/print.html", pathToRoot: "", lang: "zh-CN" })), {
    en: "file:///home/r/book/print.html",
    "zh-CN": "file:///home/r/book/zh-CN/print.html",
  });
  // The root as an absolute address (the fallback when mdBook's path_to_root is missing).
  assert.deepEqual(hrefs(editionLinks({ href: "http://h/zh-CN/a/b.html", pathToRoot: "http://h/zh-CN/", lang: "zh-CN" })), {
    en: "http://h/a/b.html",
    "zh-CN": "http://h/zh-CN/a/b.html",
  });
});

test("a page's edition is found by its language's primary tag, English when unknown", () => {
  assert.equal(editionOf("zh-CN").tag, "zh-CN");
  assert.equal(editionOf("zh").tag, "zh-CN");
  assert.equal(editionOf("en-GB").tag, "en");
  assert.equal(editionOf("fr").tag, "en");
});

test("the browser prefers Chinese when Chinese comes before English in its languages", () => {
  assert.equal(prefersChinese(["zh-CN", "en-US"]), true);
  assert.equal(prefersChinese(["fr", "zh-TW", "en"]), true);
  assert.equal(prefersChinese(["en-US", "zh-CN"]), false);
  assert.equal(prefersChinese(["de"]), false);
  assert.equal(prefersChinese(undefined), false);
});

test("the Chinese page is suggested on English pages only, and a choice made wins over the browser", () => {
  assert.equal(suggestsChinese({ lang: "en", stored: null, languages: ["zh-CN"] }), true);
  assert.equal(suggestsChinese({ lang: "en", stored: null, languages: ["en-US"] }), false);
  assert.equal(suggestsChinese({ lang: "en", stored: "en", languages: ["zh-CN"] }), false);
  assert.equal(suggestsChinese({ lang: "en", stored: "zh-CN", languages: ["en-US"] }), true);
  assert.equal(suggestsChinese({ lang: "zh-CN", stored: null, languages: ["zh-CN"] }), false);
});
