import { test } from "node:test";
import assert from "node:assert/strict";

import { compareRows, flameUrl, pct } from "../../theme/pipebook/profile.js";

test("the comparison table says where a 5.17 name went", () => {
  const rows = compareRows([
    { article_function: "pipe_write", article_percent: 47.23, measured_function: "anon_pipe_write", children_percent: 99.34, self_percent: 2.11 },
    { article_function: "copy_page_from_iter", article_percent: 24.08, measured_function: "copy_page_from_iter", children_percent: 51, self_percent: 0.97 },
    { article_function: "write", article_percent: 48.05, measured_function: null, children_percent: null, self_percent: null },
  ]);
  assert.deepEqual(rows, [
    ["pipe_write", "47.23%", "anon_pipe_write", "99.34%", "2.11%"],
    ["copy_page_from_iter", "24.08%", "same name", "51.00%", "0.97%"],
    ["write", "48.05%", "not sampled", "—", "—"],
  ]);
  assert.deepEqual(compareRows(null), []);
  assert.equal(pct(undefined), "—");
});

test("a flame graph becomes an image URL that survives any character", () => {
  const url = flameUrl('<svg a="1"># 100%</svg>');
  assert.ok(url.startsWith("data:image/svg+xml;charset=utf-8,"));
  assert.equal(decodeURIComponent(url.split(",")[1]), '<svg a="1"># 100%</svg>');
});
