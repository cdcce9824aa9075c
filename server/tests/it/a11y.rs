//! Accessibility: axe-core, the rules web developers audit pages with, run in
//! Debian's headless Chromium over every page the book serves (every chapter,
//! the table of contents frame, the print view, the 404 page), at a desktop's and
//! a phone's width, and over the cards
//! in each state a reader meets: idle, running, done, error, and offline (no
//! runner). Any violation fails, with the rule, the element and axe's reason.
//!
//! axe-core is not served to readers: it comes from the npm registry
//! (`book/tests/package.json`, pinned by its lockfile; the tests run `npm ci`
//! themselves when it is missing, see `setup`)
//! and is injected into each page through WebDriver, never from a CDN.

use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::time::Duration;

use fantoccini::Client;
use futures_util::FutureExt as _;
use serde_json::{json, Value};

use crate::browser::queries;
use crate::browser::{
    cdp, chapters, click, connect_browser, js, open, screenshot, start_chromedriver,
    workspace_root, TestResult, RECORDER,
};

/// axe-core as `npm ci` in book/tests installs it (the first test to need it installs it).
pub(crate) fn axe_source() -> String {
    let path: PathBuf = crate::setup::npm_tools().join("axe-core/axe.min.js");
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; npm ci installed no axe-core", path.display()))
}

/// Runs axe over the whole current page; `Err` lists every violation.
pub(crate) async fn audit(client: &Client, axe: &str, what: &str) -> TestResult {
    let loaded = js(client, &queries::axe_loaded()).await?;
    if loaded != json!(true) {
        js(client, &queries::load_axe(axe)).await?;
    }
    // Every rule axe runs by default (WCAG A and AA, and its best practices).
    let violations = js(client, &queries::axe_violations()).await?;
    let list = violations.as_array().cloned().unwrap_or_default();
    if list.is_empty() {
        return Ok(());
    }
    let shot = screenshot(
        client,
        &format!("a11y-{}", what.replace([' ', '/', ':'], "-")),
    )
    .await;
    Err(format!(
        "{what}: {} axe-core violation(s) (screenshot {:?}):\n{}",
        list.len(),
        shot.ok(),
        serde_json::to_string_pretty(&Value::Array(list)).unwrap_or_default()
    ))
}

/// The card of the baseline chapter's step.
const RUN_CARD: &str = ".pipebook-run[data-step=\"write-read\"]";

/// Waits until the run card's status is `state`.
async fn run_card_reaches(client: &Client, state: &str, timeout: Duration) -> TestResult {
    queries::card_in_state(RUN_CARD, state)
        .wait(client, timeout, &format!("the run card to be {state}"))
        .await
        .map(drop)
}

async fn scenario(client: &Client, base: &str) -> TestResult {
    cdp(
        client,
        "Page.addScriptToEvaluateOnNewDocument",
        json!({ "source": RECORDER }),
    )
    .await?;
    let axe = axe_source();
    // Every page, with its cards idle (the runner is there).
    let mut pages = vec!["index".to_string()];
    pages.extend(chapters());
    pages.extend(["toc", "print", "no-such-page"].map(String::from));
    // The Chinese edition: every page again under /zh-CN/.
    let chinese: Vec<String> = pages.iter().map(|p| format!("zh-CN/{p}")).collect();
    pages.extend(chinese);
    for page in &pages {
        open(client, base, page).await?;
        audit(client, &axe, page).await?;
        if page.starts_with("zh-CN/")
            && !["zh-CN/print", "zh-CN/no-such-page"].contains(&page.as_str())
        {
            screenshot(client, &page.replace('/', "-")).await?;
        }
    }
    println!("axe-core: no violation on {} pages", pages.len());
    // The same pages on a phone's width: the sidebar hidden, tables and code scrolling.
    client
        .set_window_size(412, 900)
        .await
        .map_err(|e| format!("resizing the window: {e}"))?;
    for page in &pages {
        open(client, base, page).await?;
        audit(client, &axe, &format!("{page}, phone width")).await?;
        // A chapter as a phone shows it, for a reader of the screenshots.
        if !page.ends_with("print") && !page.ends_with("no-such-page") {
            screenshot(client, &format!("phone-{}", page.replace('/', "-"))).await?;
        }
    }
    client
        .set_window_size(1280, 900)
        .await
        .map_err(|e| format!("resizing the window: {e}"))?;
    println!(
        "axe-core: no violation on {} pages at a phone's width",
        pages.len()
    );

    // A run card running, done, and refusing a bad value (error).
    open(client, base, "baseline").await?;
    js(client, &queries::run_card_seconds(RUN_CARD)).await?;
    click(client, &format!("{RUN_CARD} button.pipebook-run-button")).await?;
    run_card_reaches(client, "running", Duration::from_secs(30)).await?;
    audit(client, &axe, "baseline, a run running").await?;
    run_card_reaches(client, "done", Duration::from_secs(60)).await?;
    audit(client, &axe, "baseline, a run done").await?;
    js(client, &queries::run_card_too_long(RUN_CARD)).await?;
    click(client, &format!("{RUN_CARD} button.pipebook-run-button")).await?;
    run_card_reaches(client, "error", Duration::from_secs(10)).await?;
    audit(client, &axe, "baseline, a run refused (error)").await?;

    // An IPC card running and done.
    open(client, base, "zero-copy-shared").await?;
    let ipc = ".pipebook-ipc[data-mechanism=\"posix-shm\"]";
    js(client, &queries::ipc_bytes_64(ipc)).await?;
    click(client, &format!("{ipc} button.pipebook-ipc-button")).await?;
    let seen = queries::card_left_idle(ipc)
        .wait(client, Duration::from_secs(30), "the IPC card to start")
        .await?;
    if seen == json!("running") {
        audit(client, &axe, "zero-copy-shared, an IPC run running").await?;
    }
    queries::card_ended(ipc)
        .wait(client, Duration::from_secs(60), "the IPC run to finish")
        .await?;
    audit(client, &axe, "zero-copy-shared, an IPC run done").await?;

    // A lab card before its prediction (its form, its locked tasks).
    open(client, base, "lab-variance").await?;
    audit(client, &axe, "lab-variance").await?;

    // Without a runner (the API unreachable) every card shows the article's figures.
    cdp(client, "Network.enable", json!({})).await?;
    cdp(
        client,
        "Network.setBlockedURLs",
        json!({ "urls": ["*/api/*"] }),
    )
    .await?;
    for page in [
        "baseline",
        "zero-copy-shared",
        "lab-variance",
        "your-machine",
    ] {
        open(client, base, page).await?;
        let ready = js(client, &queries::ready_state()).await?;
        if ready != json!("offline") {
            return Err(format!(
                "{page}: with the API blocked the cards should be offline, not {ready}"
            ));
        }
        audit(client, &axe, &format!("{page}, offline")).await?;
    }
    cdp(client, "Network.setBlockedURLs", json!({ "urls": [] })).await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_and_card_state_passes_axe_core() {
    // It runs steps: nothing else may run meanwhile.
    let _lock = crate::common::RUN_LOCK.lock().await;
    let profile = tempfile::tempdir().expect("chromium profile dir");
    let server = crate::common::InProcess::start_book(Some(&workspace_root())).await;
    let base = format!("{}/", server.origin());
    let (mut driver, port) = start_chromedriver().unwrap_or_else(|e| panic!("{e}"));
    let client = connect_browser(port, profile.path())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let outcome = AssertUnwindSafe(scenario(&client, &base))
        .catch_unwind()
        .await;
    let _ = client.close().await;
    driver.stop();
    server.stop().await;
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(message)) => panic!("{message}"),
        Err(panic) => std::panic::resume_unwind(panic),
    }
}
