//! The book in a real browser: Debian's headless Chromium, driven through
//! chromedriver, against the real `pipebook` server running real steps.
//!
//! One test per widget family, each on a fresh tab, so that one family's failure
//! hides nothing of another's. They share one Chromium session and one server
//! ([`fixture`], started by the first test and stopped when the test binary
//! exits), and they hold `common::RUN_LOCK` for their whole length: they run
//! steps, time page loads, and take turns at the one browser.
//!
//! Each test ends by checking the page it is on: nothing fetched from anywhere but
//! the server (Chromium runs with every host name but 127.0.0.1 unresolvable, and
//! the page's own record of what it fetched is checked), no Content-Security-Policy
//! violation and no error in the browser console. Screenshots land in
//! `target/screenshots/` (every chapter in the light theme, a few in navy, each
//! widget at its key moments, and `failure-TEST.png` when a test fails).
//!
//! Needs `/usr/bin/chromium` and `/usr/bin/chromedriver`
//! (`apt-get install chromium chromium-driver`); without them the tests fail, they
//! do not skip.

mod fixture;
pub(crate) mod queries;

mod bfcache;
mod bounds;
mod chapters;
mod compare;
mod counts;
mod editions;
mod intervals;
mod ipc;
mod ipc_counts_off;
mod ipc_files;
mod ipc_model;
mod kernel;
mod labs;
mod language;
mod latency;
mod latency_lab;
mod latency_tail_lab;
mod machine;
mod pages;
mod past;
mod profile;
mod run_card;
mod self_compare;
mod shared_pipe;
mod sweep;
mod taken;
mod tuned_row;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use base64::Engine as _;
use fantoccini::wd::WebDriverCompatibleCommand;
use fantoccini::{Client, Locator};
use serde_json::{json, Value};

pub(crate) use fixture::{connect_browser, in_fresh_page, start_chromedriver, Page};
use queries::Query;

/// The chapter whose run widget, sweep and profile the tests use, and the step.
const RUN_CHAPTER: &str = "baseline";
const RUN_STEP: &str = "write-read";

pub(crate) type TestResult<T = ()> = Result<T, String>;

pub(crate) fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("server/ has a parent")
        .to_path_buf()
}

/// `target/screenshots`, next to the binary under test (so CARGO_TARGET_DIR is honoured).
fn screenshot_dir() -> PathBuf {
    let exe = Path::new(env!("CARGO_BIN_EXE_pipebook"));
    let target = exe
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| workspace_root().join("target"));
    target.join("screenshots")
}

/// Chapter names (file stems) in SUMMARY.md order.
pub(crate) fn chapters() -> Vec<String> {
    let summary = workspace_root().join("book/src/SUMMARY.md");
    let text = std::fs::read_to_string(&summary)
        .unwrap_or_else(|e| panic!("reading {}: {e}", summary.display()));
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(start) = line.find("](") else {
            continue;
        };
        let rest = &line[start + 2..];
        let Some(end) = rest.find(')') else { continue };
        let link = rest[..end].trim();
        if let Some(stem) = link.strip_suffix(".md") {
            if !stem.is_empty() && !out.iter().any(|c| c == stem) {
                out.push(stem.to_string());
            }
        }
    }
    assert!(!out.is_empty(), "no chapter found in {}", summary.display());
    out
}

/// Fails unless SUMMARY.md lists `chapter`: a test of a chapter's widget must
/// not pass because the chapter went away.
fn require_chapter(chapter: &str) -> TestResult {
    if chapters().iter().any(|c| c == chapter) {
        Ok(())
    } else {
        Err(format!("SUMMARY.md has no {chapter}.md"))
    }
}

/// `session/{id}/{path}` under chromedriver's base URL, for its vendor commands.
fn session_url(
    base_url: &url::Url,
    session_id: Option<&str>,
    path: &str,
) -> Result<url::Url, url::ParseError> {
    base_url.join(&format!(
        "session/{}/{path}",
        session_id.unwrap_or_default()
    ))
}

/// A Chrome DevTools command sent through chromedriver's `goog/cdp/execute`.
#[derive(Debug)]
struct Cdp {
    cmd: &'static str,
    params: Value,
}

impl WebDriverCompatibleCommand for Cdp {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        session_url(base_url, session_id, "goog/cdp/execute")
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        let body = json!({ "cmd": self.cmd, "params": self.params });
        (http::Method::POST, Some(body.to_string()))
    }
}

/// The browser console since the last call (chromedriver's `se/log`).
#[derive(Debug)]
struct BrowserLog;

impl WebDriverCompatibleCommand for BrowserLog {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        session_url(base_url, session_id, "se/log")
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (
            http::Method::POST,
            Some(json!({ "type": "browser" }).to_string()),
        )
    }
}

pub(crate) async fn cdp(client: &Client, cmd: &'static str, params: Value) -> TestResult<Value> {
    client
        .issue_cmd(Cdp { cmd, params })
        .await
        .map_err(|e| format!("CDP {cmd}: {e}"))
}

/// The browser console's entries since the last call.
async fn browser_log(client: &Client) -> TestResult<Vec<Value>> {
    let log = client
        .issue_cmd(BrowserLog)
        .await
        .map_err(|e| format!("reading the browser log: {e}"))?;
    Ok(log.as_array().cloned().unwrap_or_default())
}

/// Runs `query` in the page and returns what it read; a script that throws
/// fails naming the query (and showing its script).
pub(crate) async fn js(client: &Client, query: &Query) -> TestResult<Value> {
    client
        .execute(query.script(), vec![])
        .await
        .map_err(|e| format!("query {} failed: {e}\n{}", query.name(), query.script()))
}

/// Runs the asynchronous `query` (it calls `done`, its last argument, with
/// what it read) and returns that; a script that fails names the query.
pub(crate) async fn js_async(client: &Client, query: &Query) -> TestResult<Value> {
    client
        .execute_async(query.script(), vec![])
        .await
        .map_err(|e| format!("query {} failed: {e}", query.name()))
}

impl Query {
    /// Polls the query (which returns a truthy value when ready) until
    /// `timeout`; running out names `what` the test waited for and the query.
    pub(crate) async fn wait(
        &self,
        client: &Client,
        timeout: Duration,
        what: &str,
    ) -> TestResult<Value> {
        let query = self;
        let deadline = Instant::now() + timeout;
        loop {
            let value = js(client, query).await?;
            let ready = match &value {
                Value::Null => false,
                Value::Bool(b) => *b,
                Value::String(s) => !s.is_empty(),
                _ => true,
            };
            if ready {
                return Ok(value);
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "timed out after {timeout:?} waiting for {what} (query {})",
                    query.name()
                ));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// Runs in every page before its own scripts: records CSP violations.
pub(crate) const RECORDER: &str = r#"
window.__pipebookCsp = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__pipebookCsp.push(`${e.violatedDirective} blocked ${e.blockedURI || "inline"} (${e.sourceFile}:${e.lineNumber})`);
});
"#;

fn is_local(url: &str, base: &str) -> bool {
    if url.starts_with("data:") || url.starts_with("blob:") || url.starts_with("about:") {
        return true;
    }
    let Ok(parsed) = url::Url::parse(url) else {
        // Inline style text: only a url() pointing nowhere else is fine.
        return !url.contains("://");
    };
    let host_ok = matches!(parsed.host_str(), Some("127.0.0.1" | "localhost" | "[::1]"));
    host_ok && url.starts_with(base)
}

/// Checks the current page fetched nothing from elsewhere, broke no CSP rule and logged
/// no error.
async fn check_page(client: &Client, base: &str, page: &str) -> TestResult {
    let urls = js(client, &queries::page_requests()).await?;
    let foreign: Vec<&str> = urls
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|u| !is_local(u, base))
        .collect();
    if !foreign.is_empty() {
        return Err(format!(
            "{page}: requests that leave the server: {foreign:?}"
        ));
    }
    let csp = js(client, &queries::csp_violations()).await?;
    if csp.as_array().is_some_and(|a| !a.is_empty()) {
        return Err(format!("{page}: Content-Security-Policy violations: {csp}"));
    }
    let mut errors = Vec::new();
    for entry in browser_log(client).await? {
        let level = entry["level"].as_str().unwrap_or("");
        let message = entry["message"].as_str().unwrap_or("");
        if level == "SEVERE" {
            errors.push(message.to_string());
        } else if level == "WARNING" {
            println!("{page}: console warning: {message}");
        }
    }
    if !errors.is_empty() {
        return Err(format!(
            "{page}: errors in the browser console: {errors:#?}"
        ));
    }
    Ok(())
}

/// Saves the whole page as `target/screenshots/NAME.png`.
pub(crate) async fn screenshot(client: &Client, name: &str) -> TestResult<PathBuf> {
    let metrics = cdp(client, "Page.getLayoutMetrics", json!({})).await?;
    let size = &metrics["cssContentSize"];
    let width = size["width"].as_f64().unwrap_or(1280.0).max(1.0);
    let height = size["height"].as_f64().unwrap_or(900.0).clamp(1.0, 16000.0);
    let clip = json!({ "x": 0, "y": 0, "width": width, "height": height, "scale": 1 });
    save_png(client, name, clip).await
}

/// Types `bytes` into the IPC card of `mechanism` on the open page (of
/// `chapter`, for the error) and clicks its Run button; returns the card's
/// selector, to probe it with.
async fn start_ipc_card(
    client: &Client,
    chapter: &str,
    mechanism: &str,
    bytes: &str,
) -> TestResult<String> {
    let root = format!(".pipebook-ipc[data-mechanism=\"{mechanism}\"]");
    start_ipc_at(client, &root, bytes)
        .await
        .map_err(|_| format!("{chapter}.html has no runnable {mechanism} card"))?;
    Ok(root)
}

/// Types `bytes` into the IPC card or matrix at `root` and clicks its Run
/// button. `Err` with nothing clicked where the page has no such card.
async fn start_ipc_at(client: &Client, root: &str, bytes: &str) -> TestResult {
    js(client, &queries::ipc_fill_bytes(root, bytes))
        .await?
        .as_bool()
        .filter(|found| *found)
        .ok_or_else(|| format!("no runnable IPC card at {root}"))?;
    client
        .find(Locator::Css(&format!("{root} button.pipebook-ipc-button")))
        .await
        .map_err(|e| e.to_string())?
        .click()
        .await
        .map_err(|e| e.to_string())
}

/// Reads an IPC card with `probe` (JavaScript returning an object with the
/// card's `state`) until its run has ended (done, error or cancelled), for at
/// most 60 s; returns the last reading, for the caller to check.
async fn ipc_card_finished(client: &Client, probe: &Query) -> TestResult<Value> {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let s = js(client, probe).await?;
        if matches!(s["state"].as_str(), Some("done" | "error" | "cancelled")) {
            return Ok(s);
        }
        if std::time::Instant::now() > deadline {
            return Err(format!("the IPC run did not finish within 60 s: {s}"));
        }
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
}

/// Saves the element `css` (with a small margin) as `target/screenshots/NAME.png`.
async fn screenshot_element(client: &Client, css: &str, name: &str) -> TestResult<PathBuf> {
    let clip = js(client, &queries::element_clip(css)).await?;
    save_png(client, name, clip).await
}

async fn save_png(client: &Client, name: &str, clip: Value) -> TestResult<PathBuf> {
    let shot = cdp(
        client,
        "Page.captureScreenshot",
        json!({ "format": "png", "captureBeyondViewport": true, "clip": clip }),
    )
    .await?;
    let data = shot["data"].as_str().ok_or("screenshot without data")?;
    let png = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| format!("screenshot base64: {e}"))?;
    let dir = screenshot_dir();
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join(format!("{name}.png"));
    std::fs::write(&path, png).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

pub(crate) async fn open(client: &Client, base: &str, chapter: &str) -> TestResult {
    let url = format!("{base}{chapter}.html");
    client
        .goto(&url)
        .await
        .map_err(|e| format!("opening {url}: {e}"))?;
    queries::page_ready()
        .wait(
            client,
            Duration::from_secs(30),
            &format!("{chapter} to be ready"),
        )
        .await?;
    Ok(())
}

async fn set_theme(client: &Client, theme: &str) -> TestResult {
    js(client, &queries::store_theme(theme)).await?;
    Ok(())
}

/// Clicks the element `css`.
pub(crate) async fn click(client: &Client, css: &str) -> TestResult {
    client
        .find(Locator::Css(css))
        .await
        .map_err(|e| format!("{css}: {e}"))?
        .click()
        .await
        .map_err(|e| format!("clicking {css}: {e}"))
}
