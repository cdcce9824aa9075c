// Runs Lighthouse once over one page in Debian's Chromium and prints a summary as
// JSON on stdout: the category scores, the layout shift, and every audit that did
// not pass (so a failing threshold says why). server/tests/it/lighthouse.rs runs it
// and judges the figures; it needs `npm ci` in book/tests (.ci/run does it).
//
//   node book/tests/lighthouse.mjs URL desktop|mobile [REPORT.json]
import { writeFileSync } from "node:fs";
import * as chromeLauncher from "chrome-launcher";
import lighthouse from "lighthouse";
import desktopConfig from "lighthouse/core/config/desktop-config.js";

const [url, profile, reportPath] = process.argv.slice(2);
if (!url || !["desktop", "mobile"].includes(profile)) {
  console.error("usage: node lighthouse.mjs URL desktop|mobile [REPORT.json]");
  process.exit(2);
}

const chrome = await chromeLauncher.launch({
  chromePath: process.env.CHROME_PATH || "/usr/bin/chromium",
  chromeFlags: [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
  ],
});
try {
  const flags = {
    port: chrome.port,
    output: "json",
    logLevel: "error",
    onlyCategories: ["performance", "accessibility", "best-practices", "seo"],
  };
  // Lighthouse's default profile is the mobile one (a mid-range phone, slow 4G).
  const result = await lighthouse(url, flags, profile === "desktop" ? desktopConfig : undefined);
  const lhr = result.lhr;
  if (reportPath) writeFileSync(reportPath, result.report);
  const failing = Object.values(lhr.audits)
    .filter((a) => a.score !== null && a.score < 1 && !["informative", "notApplicable", "manual"].includes(a.scoreDisplayMode))
    .map((a) => ({ id: a.id, score: a.score, value: a.displayValue || "" }));
  const summary = {
    url,
    profile,
    scores: Object.fromEntries(Object.entries(lhr.categories).map(([id, c]) => [id, c.score])),
    cls: lhr.audits["cumulative-layout-shift"].numericValue,
    lcp_ms: lhr.audits["largest-contentful-paint"].numericValue,
    tbt_ms: lhr.audits["total-blocking-time"].numericValue,
    runtime_error: lhr.runtimeError ? lhr.runtimeError.message : null,
    failing,
  };
  process.stdout.write(JSON.stringify(summary) + "\n");
} finally {
  await chrome.kill();
}
