//! Lighthouse, the audit web developers run, over three kinds of page: a chapter
//! with diagrams (`inside-a-pipe`), a lab (`lab-vmsplice-safety`) and an IPC chapter
//! (`zero-copy-shared`), each in Lighthouse's desktop and mobile (a mid-range phone
//! on a slow 4G link, simulated) profiles. It fails under: accessibility 100, best
//! practices 95, performance 95 on desktop and 90 on a phone, or a cumulative layout
//! shift of 0.05 or more.
//!
//! Lighthouse (npm, pinned in `book/tests/package-lock.json`; the tests run `npm ci`
//! themselves when it is missing) drives Debian's Chromium itself through `book/tests/lighthouse.mjs`. A
//! performance score depends on how busy the machine is (other tests of the suite
//! run meanwhile), so a page and profile are run again, up to three times, while a
//! run misses a threshold; every run's figures are printed.

use std::process::Command;

use serde_json::Value;

use crate::browser::workspace_root;
use crate::common::InProcess;

/// The pages audited, as a chapter name.
const PAGES: [&str; 4] = [
    "inside-a-pipe",
    "lab-vmsplice-safety",
    "zero-copy-shared",
    // The Chinese edition's page, held to the same thresholds.
    "zh-CN/vmsplice",
];

/// Runs per page and profile at most.
const ATTEMPTS: usize = 3;

/// Runs `book/tests/lighthouse.mjs` once; its one line of JSON.
fn lighthouse(url: &str, profile: &str) -> Value {
    let tests = workspace_root().join("book/tests");
    let installed = crate::setup::npm_tools().join("lighthouse");
    assert!(
        installed.is_dir(),
        "npm ci installed no {}",
        installed.display()
    );
    let output = Command::new("node")
        .arg(tests.join("lighthouse.mjs"))
        .args([url, profile])
        .env("CHROME_PATH", "/usr/bin/chromium")
        .output()
        .unwrap_or_else(|e| panic!("running node (Node.js 18 or later): {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "lighthouse {url} {profile} failed: {}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("lighthouse printed no JSON summary ({e}): {stdout}"))
}

/// What in `summary` misses a threshold (empty when it passes).
fn misses(summary: &Value, profile: &str) -> Vec<String> {
    let score = |category: &str| summary["scores"][category].as_f64().unwrap_or(0.0);
    let mut missed = Vec::new();
    if let Some(err) = summary["runtime_error"].as_str() {
        missed.push(format!("Lighthouse could not audit the page: {err}"));
    }
    if score("accessibility") < 1.0 {
        missed.push(format!("accessibility {}", score("accessibility")));
    }
    if score("best-practices") < 0.95 {
        missed.push(format!("best practices {}", score("best-practices")));
    }
    let performance = if profile == "desktop" { 0.95 } else { 0.90 };
    if score("performance") < performance {
        missed.push(format!(
            "performance {} (at least {performance})",
            score("performance")
        ));
    }
    let cls = summary["cls"].as_f64().unwrap_or(f64::MAX);
    if cls >= 0.05 {
        missed.push(format!("cumulative layout shift {cls:.3}"));
    }
    missed
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lighthouse_scores_three_kinds_of_page_in_both_profiles() {
    // Scores depend on the CPU: nothing else of ours may run meanwhile.
    let _lock = crate::common::RUN_LOCK.lock().await;
    crate::setup::need("/usr/bin/chromium", "chromium");
    let server = InProcess::start_book(Some(&workspace_root())).await;
    let origin = server.origin();
    let mut failures = Vec::new();
    for page in PAGES {
        for profile in ["desktop", "mobile"] {
            let url = format!("{origin}/{page}.html");
            let mut last = Vec::new();
            for attempt in 1..=ATTEMPTS {
                let (u, p) = (url.clone(), profile.to_string());
                let summary = tokio::task::spawn_blocking(move || lighthouse(&u, &p))
                    .await
                    .unwrap();
                println!(
                    "{page} {profile} (run {attempt}): scores {} CLS {:.3} LCP {:.0} ms TBT {:.0} ms",
                    summary["scores"],
                    summary["cls"].as_f64().unwrap_or(f64::NAN),
                    summary["lcp_ms"].as_f64().unwrap_or(f64::NAN),
                    summary["tbt_ms"].as_f64().unwrap_or(f64::NAN),
                );
                last = misses(&summary, profile);
                if last.is_empty() {
                    break;
                }
                println!("  missed: {last:?}; failing audits: {}", summary["failing"]);
            }
            if !last.is_empty() {
                failures.push(format!("{page} ({profile}): {}", last.join(", ")));
            }
        }
    }
    server.stop().await;
    assert!(
        failures.is_empty(),
        "Lighthouse thresholds missed:\n{}",
        failures.join("\n")
    );
}
