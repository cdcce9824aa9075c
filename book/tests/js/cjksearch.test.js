import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import vm from "node:vm";

import { cjkTeaser, cjkTokens, installCjkSearch, searchHeader } from "../../theme/pipebook/cjksearch.js";

const fixture = JSON.parse(readFileSync(new URL("../fixtures/cjk-tokens.json", import.meta.url), "utf8"));

/** mdBook's own copy of elasticlunr, from cargo's registry (the build's mdbook-html). */
function elasticlunrSource() {
  const registry = join(process.env.CARGO_HOME || join(homedir(), ".cargo"), "registry", "src");
  for (const index of existsSync(registry) ? readdirSync(registry) : []) {
    const file = join(registry, index, "mdbook-html-0.5.4", "front-end", "searcher", "elasticlunr.min.js");
    if (existsSync(file)) return readFileSync(file, "utf8");
  }
  assert.fail(`no mdbook-html-0.5.4 in ${registry}: run \`cargo fetch\` in the workspace first`);
}

/** Arrays made in the page's realm (the vm), as this realm's, to compare them. */
const plain = (x) => JSON.parse(JSON.stringify(x));

/** A page in `lang` with mdBook's elasticlunr loaded after installCjkSearch ran, as on a real page. */
function pageWithSearch(lang, results = [], header = null) {
  const win = {
    document: {
      documentElement: { lang },
      querySelectorAll: () => results,
      getElementById: (id) => (id === "mdbook-searchresults-header" ? header : null),
    },
  };
  installCjkSearch(win);
  const context = vm.createContext(win);
  vm.runInContext(elasticlunrSource(), context);
  return win;
}

test("the shared fixture's texts give exactly their tokens", () => {
  assert.ok(fixture.length >= 10);
  for (const { text, tokens } of fixture) assert.deepEqual(cjkTokens(text), tokens, text);
});

test("on a Chinese page the tokenizer is in place as soon as elasticlunr is defined", () => {
  const win = pageWithSearch("zh-CN");
  assert.deepEqual(plain(win.elasticlunr.tokenizer("零拷贝 Splice")), ["零拷", "拷贝", "splice"]);
  assert.deepEqual(plain(win.elasticlunr.tokenizer(["管道", null, "大页"])), ["管道", "大页"]);
  assert.deepEqual(plain(win.elasticlunr.tokenizer()), []);
  // What mdBook or a plugin may still ask of the tokenizer it replaced.
  assert.equal(String(win.elasticlunr.tokenizer.seperator), String(/[\s\-]+/));
});

test("an English page keeps elasticlunr's own tokenizer", () => {
  const win = pageWithSearch("en");
  assert.deepEqual(plain(win.elasticlunr.tokenizer("零拷贝 Splice")), ["零拷贝", "splice"]);
});

test("an index built by the same rule with an empty pipeline finds 零拷贝, 管道 and 大页", () => {
  const win = pageWithSearch("zh-CN");
  const lunr = win.elasticlunr;
  const built = lunr(function build() {
    this.addField("title");
    this.addField("body");
    this.setRef("id");
    this.saveDocument(true);
    this.pipeline.reset();
  });
  built.addDoc({ id: "zero", title: "零拷贝", body: "用 vmsplice 把页面交给管道，不必复制。" });
  built.addDoc({ id: "huge", title: "大页", body: "2 MiB 的大页让页表更短。" });
  built.addDoc({ id: "loop", title: "忙循环", body: "Busy loop: 读者不睡，一直等待。" });
  // The page loads the index the build wrote, as JSON, through Index.load.
  const index = lunr.Index.load(JSON.parse(JSON.stringify(built.toJSON())));
  const options = { bool: "AND", expand: true, fields: { title: { boost: 1 }, body: { boost: 1 } } };
  const found = (query) => plain(index.search(query, options).map((r) => r.ref).sort());
  assert.deepEqual(found("零拷贝"), ["zero"]);
  assert.deepEqual(found("管道"), ["zero"]);
  assert.deepEqual(found("大页"), ["huge"]);
  assert.deepEqual(found("页"), ["huge", "zero"]);
  assert.deepEqual(found("busy"), ["loop"]);
  assert.deepEqual(found("vmsplice 管道"), ["zero"]);
  assert.deepEqual(found("大页 管道"), []);
});

test("a Chinese result's teaser is cut around the query and marks each occurrence", () => {
  const body = `${"前言。".repeat(40)}零拷贝让管道不再复制：vmsplice 把页面交给管道 <b>`;
  const html = cjkTeaser(body, "管道", 60);
  assert.ok(html.startsWith("…"), html);
  assert.match(html, /^…零拷贝让<em>管道<\/em>不再复制：vmsplice 把页面交给<em>管道<\/em> &lt;b&gt;$/);
  // Overlapping bigrams make one mark, not two.
  assert.match(cjkTeaser("我们用零拷贝。", "零拷贝"), /^我们用<em>零拷贝<\/em>。$/);
  // No occurrence: the start of the body, plainly.
  assert.equal(cjkTeaser("甲乙丙丁", "大页", 2), "甲乙…");
});

test("after a search on a Chinese page each listed result's teaser is cut around the query", async () => {
  const teasers = [{ innerHTML: "mdBook's teaser" }, { innerHTML: "mdBook's teaser" }];
  const items = teasers.map((teaser) => ({ querySelector: (css) => (css === ".teaser" ? teaser : null) }));
  const header = { textContent: "2 search results for '管道':" };
  const win = pageWithSearch("zh-CN", items, header);
  const lunr = win.elasticlunr;
  const built = lunr(function build() {
    this.addField("body");
    this.setRef("id");
    this.saveDocument(true);
    this.pipeline.reset();
  });
  built.addDoc({ id: "a", body: "第一段。管道把数据从写者交给读者。" });
  built.addDoc({ id: "b", body: "零拷贝的管道：vmsplice 把页面交给管道。" });
  const index = lunr.Index.load(JSON.parse(JSON.stringify(built.toJSON())));
  const results = index.search("管道", { bool: "AND", expand: true, fields: { body: { boost: 1 } } });
  assert.equal(results.length, 2);
  await Promise.resolve();
  for (const [i, teaser] of teasers.entries()) {
    assert.equal(teaser.innerHTML, cjkTeaser(results[i].doc.body, "管道"));
    assert.match(teaser.innerHTML, /<em>管道<\/em>/);
  }
  assert.equal(header.textContent, searchHeader(2, "管道"));
});

test("the line that counts the results has a sentence for none, one and many", () => {
  // Node has no catalogue of another language: these are the English msgids.
  assert.equal(searchHeader(0, "管道"), "No search results for “管道”.");
  assert.equal(searchHeader(1, "管道"), "1 search result for “管道”:");
  assert.equal(searchHeader(7, "管道"), "7 search results for “管道”:");
});
