//! The book in a real browser: Debian's headless Chromium, driven through chromedriver,
//! against the real `pipebook` server running real steps.
//!
//! It opens the baseline chapter, runs a step for one second with the widget's own
//! controls, and checks that progress streamed in live and the result landed in the
//! page; that every chapter loads nothing from anywhere but the server (Chromium runs
//! with every host name but 127.0.0.1 unresolvable, and the page's own record of what
//! it fetched is checked); that the Content-Security-Policy blocked nothing; and that
//! the Mermaid diagrams rendered. It saves a full-page screenshot of every chapter in
//! `target/screenshots/` (light theme, plus a few in navy) for people to look at.
//!
//! Needs `/usr/bin/chromium` and `/usr/bin/chromedriver`
//! (`apt-get install chromium chromium-driver`); without them it fails, it does not skip.

use std::net::{TcpListener, TcpStream};
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use fantoccini::wd::WebDriverCompatibleCommand;
use fantoccini::{Client, ClientBuilder, Locator};
use futures_util::FutureExt as _;
use serde_json::{json, Value};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const INSTALL_HINT: &str = "the browser test needs Debian's Chromium and ChromeDriver: \
     run `apt-get install chromium chromium-driver` (CI installs them)";

/// The chapter whose widget the test runs, and the step it runs there.
const RUN_CHAPTER: &str = "baseline";
const RUN_STEP: &str = "write-read";

/// The lab the test completes end to end, from its page.
const LAB_CHAPTER: &str = "lab-vmsplice-safety";

/// The lab whose tasks are IPC runs: the test sees its card mount.
const IPC_LAB_CHAPTER: &str = "lab-choose-ipc";

/// The chapter whose IPC card the test runs, the mechanism, and the bytes it moves.
const IPC_CHAPTER: &str = "zero-copy-shared";
const IPC_MECHANISM: &str = "posix-shm";
const IPC_BYTES: &str = "8MiB";

/// Chapters also shot in mdBook's navy theme.
const DARK_CHAPTERS: &[&str] = &["baseline", "inside-a-pipe"];

type TestResult<T = ()> = Result<T, String>;

/// A child process that is stopped (SIGTERM, then SIGKILL) when dropped.
struct Process {
    name: &'static str,
    child: Child,
}

impl Process {
    fn stop(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        // SAFETY: kill(2) on the pid of a child we spawned and have not reaped.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        eprintln!("{} did not stop on SIGTERM; killing it", self.name);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.stop();
    }
}

fn workspace_root() -> PathBuf {
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
fn chapters() -> Vec<String> {
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

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

fn start_chromedriver() -> (Process, u16) {
    let port = free_port();
    let child = Command::new(CHROMEDRIVER)
        .arg(format!("--port={port}"))
        .arg("--allowed-ips=127.0.0.1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {CHROMEDRIVER}: {e}; {INSTALL_HINT}"));
    let driver = Process {
        name: "chromedriver",
        child,
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "chromedriver did not listen on port {port} within 30 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    (driver, port)
}

async fn connect_browser(driver_port: u16, profile: &Path) -> Client {
    let args = vec![
        "--headless=new".to_string(),
        "--no-sandbox".to_string(),
        "--disable-gpu".to_string(),
        "--disable-dev-shm-usage".to_string(),
        "--disable-quic".to_string(),
        "--no-first-run".to_string(),
        "--no-default-browser-check".to_string(),
        "--disable-background-networking".to_string(),
        "--disable-component-update".to_string(),
        "--disable-sync".to_string(),
        "--disable-extensions".to_string(),
        "--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication"
            .to_string(),
        "--metrics-recording-only".to_string(),
        "--hide-scrollbars".to_string(),
        "--force-device-scale-factor=1".to_string(),
        "--lang=en-US".to_string(),
        "--window-size=1280,900".to_string(),
        // Every name but 127.0.0.1 fails to resolve: the book must need nothing else.
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1".to_string(),
        format!("--user-data-dir={}", profile.display()),
    ];
    let caps = json!({
        "browserName": "chrome",
        "goog:chromeOptions": { "binary": CHROMIUM, "args": args },
        "goog:loggingPrefs": { "browser": "ALL" },
    });
    let caps = match caps {
        Value::Object(map) => map,
        _ => unreachable!(),
    };
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{driver_port}"))
        .await
        .unwrap_or_else(|e| panic!("starting {CHROMIUM} through chromedriver: {e}; {INSTALL_HINT}"))
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

async fn cdp(client: &Client, cmd: &'static str, params: Value) -> TestResult<Value> {
    client
        .issue_cmd(Cdp { cmd, params })
        .await
        .map_err(|e| format!("CDP {cmd}: {e}"))
}

async fn js(client: &Client, script: &str) -> TestResult<Value> {
    client
        .execute(script, vec![])
        .await
        .map_err(|e| format!("script failed: {e}\n{script}"))
}

/// Polls `script` (which returns a truthy value when ready) until `timeout`.
async fn wait_js(
    client: &Client,
    script: &str,
    timeout: Duration,
    what: &str,
) -> TestResult<Value> {
    let deadline = Instant::now() + timeout;
    loop {
        let value = js(client, script).await?;
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
            return Err(format!("timed out after {timeout:?} waiting for {what}"));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Runs in every page before its own scripts: records CSP violations.
const RECORDER: &str = r#"
window.__pipebookCsp = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__pipebookCsp.push(`${e.violatedDirective} blocked ${e.blockedURI || "inline"} (${e.sourceFile}:${e.lineNumber})`);
});
"#;

/// Waits until the page is fully set up: widgets mounted and diagrams rendered.
const READY: &str = r#"
if (document.readyState !== "complete") return false;
const needsWidgets = document.querySelector(".pipebook-run, .pipebook-lab, .pipebook-sweep, .pipebook-ipc, .pipebook-ipc-matrix, .pipebook-results, .pipebook-system");
if (needsWidgets && !document.documentElement.dataset.pipebookReady) return false;
const diagrams = document.querySelectorAll("pre.mermaid");
if (diagrams.length && !document.documentElement.dataset.pipebookDiagrams) return false;
return true;
"#;

/// Everything the page fetched or refers to as a subresource.
const REQUESTS: &str = r#"
const urls = new Set([location.href]);
for (const e of performance.getEntriesByType("resource")) urls.add(e.name);
for (const el of document.querySelectorAll("script[src], img[src], iframe[src], source[src], video[src], audio[src]")) urls.add(el.src);
for (const el of document.querySelectorAll("link[href]")) {
  if (!["prev", "next", "canonical"].some((r) => el.relList.contains(r))) urls.add(el.href);
}
for (const el of document.querySelectorAll("[style*='url(']")) urls.add(el.getAttribute("style"));
return [...urls];
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
    let urls = js(client, REQUESTS).await?;
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
    let csp = js(client, "return window.__pipebookCsp || []").await?;
    if csp.as_array().is_some_and(|a| !a.is_empty()) {
        return Err(format!("{page}: Content-Security-Policy violations: {csp}"));
    }
    let log = client
        .issue_cmd(BrowserLog)
        .await
        .map_err(|e| format!("reading the browser log: {e}"))?;
    let mut errors = Vec::new();
    for entry in log.as_array().into_iter().flatten() {
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
async fn screenshot(client: &Client, name: &str) -> TestResult<PathBuf> {
    let metrics = cdp(client, "Page.getLayoutMetrics", json!({})).await?;
    let size = &metrics["cssContentSize"];
    let width = size["width"].as_f64().unwrap_or(1280.0).max(1.0);
    let height = size["height"].as_f64().unwrap_or(900.0).clamp(1.0, 16000.0);
    let clip = json!({ "x": 0, "y": 0, "width": width, "height": height, "scale": 1 });
    save_png(client, name, clip).await
}

/// Saves the element `css` (with a small margin) as `target/screenshots/NAME.png`.
async fn screenshot_element(client: &Client, css: &str, name: &str) -> TestResult<PathBuf> {
    let clip = js(
        client,
        &format!(
            "const r = document.querySelector('{css}').getBoundingClientRect();
             return {{ x: Math.max(0, r.left + scrollX - 12), y: Math.max(0, r.top + scrollY - 12),
                       width: r.width + 24, height: r.height + 24, scale: 1 }};"
        ),
    )
    .await?;
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

async fn open(client: &Client, base: &str, chapter: &str) -> TestResult {
    let url = format!("{base}{chapter}.html");
    client
        .goto(&url)
        .await
        .map_err(|e| format!("opening {url}: {e}"))?;
    wait_js(
        client,
        READY,
        Duration::from_secs(30),
        &format!("{chapter} to be ready"),
    )
    .await?;
    Ok(())
}

async fn set_theme(client: &Client, theme: &str) -> TestResult {
    js(
        client,
        &format!("localStorage.setItem('mdbook-theme', '{theme}'); return true;"),
    )
    .await?;
    Ok(())
}

/// Runs the step with the widget's own controls and checks what the page shows.
async fn run_step(client: &Client) -> TestResult {
    let root = format!(".pipebook-run[data-step=\"{RUN_STEP}\"]");
    let online = js(
        client,
        "return document.documentElement.dataset.pipebookReady",
    )
    .await?;
    if online != json!("online") {
        return Err(format!(
            "the widgets say the runner is {online}, not online: is the token meta injected and /api/health up?"
        ));
    }
    // Clear of mdBook's sticky menu bar, as a reader would have it on screen.
    js(
        client,
        &format!(
            "document.querySelector('{root}').scrollIntoView({{ block: 'center' }}); return true;"
        ),
    )
    .await?;
    let seconds = client
        .find(Locator::Css(&format!("{root} input.pipebook-seconds")))
        .await
        .map_err(|e| format!("{RUN_CHAPTER}.html has no widget for {RUN_STEP}: {e}"))?;
    seconds.clear().await.map_err(|e| e.to_string())?;
    seconds.send_keys("1").await.map_err(|e| e.to_string())?;
    let button = client
        .find(Locator::Css(&format!("{root} button.pipebook-run-button")))
        .await
        .map_err(|e| e.to_string())?;
    if button
        .attr("disabled")
        .await
        .map_err(|e| e.to_string())?
        .is_some()
    {
        return Err("the run button is disabled before a run".into());
    }
    button.click().await.map_err(|e| e.to_string())?;

    let probe = format!(
        r#"const root = document.querySelector('{root}');
           return {{
             state: root.querySelector('.pipebook-status').dataset.state,
             progress: Number(root.dataset.progressCount),
             live: root.querySelector('.pipebook-live-gibs').textContent,
             result: root.querySelector('.pipebook-result-gibs').textContent,
             status: root.querySelector('.pipebook-status').textContent,
             runDisabled: root.querySelector('button.pipebook-run-button').disabled,
             cancelDisabled: root.querySelector('button.pipebook-cancel-button').disabled,
           }};"#
    );
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut saw_running = false;
    let mut max_live = 0.0f64;
    let mut shot_running = false;
    let last = loop {
        let s = js(client, &probe).await?;
        let state = s["state"].as_str().unwrap_or("").to_string();
        if state == "running" {
            saw_running = true;
            if !shot_running && s["progress"].as_f64().unwrap_or(0.0) >= 4.0 {
                shot_running = true;
                screenshot_element(client, &root, "widget-running").await?;
            }
            if s["runDisabled"] != json!(true) || s["cancelDisabled"] != json!(false) {
                return Err(format!(
                    "while running, Run should be disabled and Cancel enabled: {s}"
                ));
            }
            if let Some(v) = s["live"].as_str().and_then(|t| t.parse::<f64>().ok()) {
                max_live = max_live.max(v);
            }
        }
        if matches!(state.as_str(), "done" | "error" | "cancelled") {
            break s;
        }
        if Instant::now() > deadline {
            return Err(format!(
                "the run did not finish within 90 s; last seen: {s}"
            ));
        }
        tokio::time::sleep(Duration::from_millis(40)).await;
    };
    println!("run finished: {last}");
    if last["state"] != json!("done") {
        return Err(format!(
            "the run ended as {}: {}",
            last["state"], last["status"]
        ));
    }
    if !saw_running {
        return Err("the widget never showed the running state".into());
    }
    let progress = last["progress"].as_f64().unwrap_or(0.0);
    if progress < 1.0 {
        return Err(format!("no progress message reached the page: {last}"));
    }
    if max_live <= 0.0 {
        return Err("the live GiB/s never showed a positive figure".into());
    }
    let text = last["result"].as_str().unwrap_or("");
    let decimals = text.split('.').nth(1).map(str::len);
    let gibs: f64 = text
        .parse()
        .map_err(|_| format!("`.pipebook-result-gibs` is not a number: {text:?}"))?;
    if gibs <= 0.0 || decimals != Some(2) {
        return Err(format!(
            "`.pipebook-result-gibs` should be a positive figure with 2 decimals: {text:?}"
        ));
    }
    if last["runDisabled"] != json!(false) || last["cancelDisabled"] != json!(true) {
        return Err(format!(
            "after the run, Run should be enabled and Cancel disabled: {last}"
        ));
    }
    // The result is followed by whether the runner's history kept it.
    let saved_probe = format!(
        "const note = document.querySelector('{root} .pipebook-saved');
         if (!note.dataset.saved) return null;
         return {{ saved: note.dataset.saved, hidden: note.hidden, text: note.textContent }};"
    );
    let saved = wait_js(
        client,
        &saved_probe,
        Duration::from_secs(10),
        "the card's saved note",
    )
    .await?;
    if saved["saved"] != json!("yes") || saved["hidden"] != json!(false) {
        return Err(format!("the card should say the result was saved: {saved}"));
    }
    let path = screenshot_element(client, &root, "widget-done").await?;
    println!(
        "{RUN_STEP}: {gibs} GiB/s after {progress} progress messages (live peak {max_live}); {}",
        path.display()
    );
    check_occupancy(client, &root).await
}

/// After a live run the card draws the pipe's occupancy: a band with points, the
/// capacity line named in slots, the legend and the summary.
async fn check_occupancy(client: &Client, root: &str) -> TestResult {
    let occ = js(
        client,
        &format!(
            r#"const fig = document.querySelector('{root} figure.pipebook-occupancy');
               if (!fig) return null;
               const band = fig.querySelector('polygon.pipebook-occupancy-band');
               const box = fig.querySelector('svg').getBoundingClientRect();
               return {{
                 state: fig.dataset.state,
                 points: Number(fig.dataset.points),
                 bandPoints: band ? band.getAttribute('points').trim().split(/\s+/).length : 0,
                 capacity: fig.querySelector('.pipebook-occupancy-caplabel')?.textContent ?? '',
                 legend: fig.querySelectorAll('.pipebook-occupancy-legend li').length,
                 note: fig.querySelector('.pipebook-occupancy-note').textContent,
                 height: box.height,
               }};"#
        ),
    )
    .await?;
    if occ.is_null() {
        return Err("the run card has no occupancy chart".into());
    }
    if occ["state"] != json!("done") || occ["points"].as_f64().unwrap_or(0.0) < 1.0 {
        return Err(format!(
            "the occupancy chart has no points after the run: {occ}"
        ));
    }
    if occ["bandPoints"].as_f64().unwrap_or(0.0) < 2.0
        || occ["height"].as_f64().unwrap_or(0.0) < 40.0
    {
        return Err(format!("the occupancy band is not drawn: {occ}"));
    }
    let capacity = occ["capacity"].as_str().unwrap_or("");
    if !capacity.contains("16 slots") {
        return Err(format!(
            "the capacity line should name the 16 slots of {RUN_STEP}'s pipe: {occ}"
        ));
    }
    if occ["legend"] != json!(3) || !occ["note"].as_str().unwrap_or("").starts_with("Full in ") {
        return Err(format!("the occupancy legend or summary is missing: {occ}"));
    }
    let path = screenshot_element(
        client,
        &format!("{root} figure.pipebook-occupancy"),
        "widget-occupancy",
    )
    .await?;
    println!("occupancy: {} points; {}", occ["points"], path.display());
    Ok(())
}

/// Runs a small sweep from the page and watches the curve grow point by point.
async fn run_sweep(client: &Client) -> TestResult {
    let root = ".pipebook-sweep[data-step=\"write-read\"][data-param=\"pipe_size\"]";
    js(
        client,
        &format!(
            "const r = document.querySelector('{root}');
             if (!r) return false;
             r.scrollIntoView({{ block: 'center' }});
             r.querySelector('input.pipebook-sweep-values').value = '16KiB,64KiB,256KiB';
             r.querySelector('input.pipebook-seconds').value = '0.5';
             r.querySelector('input.pipebook-sweep-repeats').value = '1';
             return true;"
        ),
    )
    .await?
    .as_bool()
    .filter(|found| *found)
    .ok_or_else(|| format!("{RUN_CHAPTER}.html has no pipe_size sweep of write-read"))?;
    client
        .find(Locator::Css(&format!(
            "{root} button.pipebook-sweep-button"
        )))
        .await
        .map_err(|e| e.to_string())?
        .click()
        .await
        .map_err(|e| e.to_string())?;
    let probe = format!(
        "const r = document.querySelector('{root}');
         return {{ state: r.dataset.state, points: Number(r.dataset.points),
                  drawn: Number(r.querySelector('svg.pipebook-sweep-plot').dataset.points),
                  dots: r.querySelectorAll('circle.pipebook-sweep-dot').length,
                  rows: r.querySelectorAll('table.pipebook-sweep-table tr').length,
                  status: r.querySelector('.pipebook-status').textContent }};"
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen = Vec::new();
    let last = loop {
        let s = js(client, &probe).await?;
        let points = s["points"].as_u64().unwrap_or(0);
        if seen.last() != Some(&points) {
            seen.push(points);
            if points == 1 {
                screenshot_element(client, root, "sweep-growing").await?;
            }
        }
        let state = s["state"].as_str().unwrap_or("").to_string();
        if matches!(state.as_str(), "done" | "error" | "cancelled") {
            break s;
        }
        if Instant::now() > deadline {
            return Err(format!("the sweep did not finish within 60 s: {s}"));
        }
        tokio::time::sleep(Duration::from_millis(30)).await;
    };
    if last["state"] != json!("done") {
        return Err(format!(
            "the sweep ended as {}: {}",
            last["state"], last["status"]
        ));
    }
    // The curve grew one point at a time, to one point per value, all drawn.
    if seen != [0, 1, 2, 3] {
        return Err(format!(
            "the curve should grow 0, 1, 2, 3 points; it went {seen:?}"
        ));
    }
    if last["drawn"] != json!(3) || last["dots"] != json!(3) || last["rows"] != json!(4) {
        return Err(format!(
            "the finished sweep should draw 3 points and list 3 rows: {last}"
        ));
    }
    let path = screenshot_element(client, root, "sweep-done").await?;
    println!("sweep: points {seen:?}; {}", path.display());
    Ok(())
}

/// Clicks the element `css`.
async fn click(client: &Client, css: &str) -> TestResult {
    client
        .find(Locator::Css(css))
        .await
        .map_err(|e| format!("{css}: {e}"))?
        .click()
        .await
        .map_err(|e| format!("clicking {css}: {e}"))
}

/// Fills a lab card's prediction (and any run fields) with `fill`, JavaScript
/// run with the card as `r`, saves it, and waits until the card shows `shown` as
/// the saved prediction and unlocks its runs.
async fn save_prediction(client: &Client, root: &str, fill: &str, shown: &str) -> TestResult {
    js(
        client,
        &format!("const r = document.querySelector('{root}'); {fill} return true;"),
    )
    .await?;
    click(client, &format!("{root} .pipebook-prediction-save")).await?;
    wait_js(
        client,
        &format!(
            "const r = document.querySelector('{root}');
             return r.querySelector('.pipebook-lab-predicted').textContent.includes('{shown}')
                 && !r.querySelector('button.pipebook-lab-run').disabled;"
        ),
        Duration::from_secs(10),
        "the saved prediction",
    )
    .await?;
    Ok(())
}

/// Clicks a lab task's run button and waits until the card is idle again with
/// `measurements` runs recorded in all (or says the error it showed).
async fn run_lab_task(client: &Client, root: &str, task: &str, measurements: usize) -> TestResult {
    click(
        client,
        &format!("{root} button.pipebook-lab-run[data-task=\"{task}\"]"),
    )
    .await?;
    let state = wait_js(
        client,
        &format!(
            "const r = document.querySelector('{root}');
             const status = r.querySelector('.pipebook-lab-status').textContent;
             if (status.startsWith('Error')) return 'error: ' + status;
             return r.dataset.state === 'idle' && r.dataset.measurements === '{measurements}';"
        ),
        Duration::from_secs(60),
        &format!("the lab's {task} runs"),
    )
    .await?;
    match state.as_str() {
        Some(err) => Err(err.to_string()),
        None => Ok(()),
    }
}

/// A lab card's checks as shown: the raw list, and (id, status) pairs.
async fn lab_checks(client: &Client, root: &str) -> Result<(Value, Vec<(String, String)>), String> {
    let checks = js(
        client,
        &format!(
            "return [...document.querySelectorAll('{root} li[data-check]')]
               .map((li) => [li.dataset.check, li.dataset.status]);"
        ),
    )
    .await?;
    let statuses = serde_json::from_value(checks.clone()).map_err(|e| format!("{e}: {checks}"))?;
    Ok((checks, statuses))
}

/// Lab 6 from its page: its four IPC tasks, locked until a prediction (a
/// choice) is saved; then every task's runs (real IPC runs, capped at 8 MiB),
/// the checks judged and the choice compared with the fastest mechanism.
async fn do_ipc_lab(client: &Client, base: &str) -> TestResult {
    let root = ".pipebook-lab[data-lab=\"choose-ipc\"]";
    open(client, base, IPC_LAB_CHAPTER).await?;
    let idle = format!("return document.querySelector('{root}')?.dataset.state === 'idle';");
    wait_js(client, &idle, Duration::from_secs(10), "lab 6's card").await?;
    let tasks = js(
        client,
        &format!(
            "const r = document.querySelector('{root}');
             r.scrollIntoView({{ block: 'start' }});
             return [...r.querySelectorAll('.pipebook-lab-tasks li[data-task]')].map((li) => ({{
               task: li.dataset.task,
               text: li.querySelector('code').textContent,
               locked: li.querySelector('button.pipebook-lab-run').disabled,
             }}));"
        ),
    )
    .await?;
    let expected = ["pipe-rw", "unix-stream", "posix-shm", "memfd-scm"];
    let list = tasks.as_array().cloned().unwrap_or_default();
    let ids: Vec<&str> = list.iter().filter_map(|t| t["task"].as_str()).collect();
    if ids != expected {
        return Err(format!("lab 6's tasks are {ids:?}, expected {expected:?}"));
    }
    for t in &list {
        let text = t["text"].as_str().unwrap_or("");
        if !text.starts_with(&format!("IPC {}", t["task"].as_str().unwrap_or("?"))) {
            return Err(format!("lab 6's task reads {text:?}: {t}"));
        }
        if t["locked"] != json!(true) {
            return Err(format!("lab 6's run waits for a prediction: {t}"));
        }
    }
    let path = screenshot_element(client, root, "lab-choose-ipc").await?;
    println!("lab 6: tasks {ids:?}; {}", path.display());

    save_prediction(
        client,
        root,
        "r.querySelector('select.pipebook-prediction-input').value = 'posix-shm';
         r.querySelector('.pipebook-lab-bytes').value = '8MiB';",
        "posix-shm",
    )
    .await?;
    for (index, task) in expected.iter().enumerate() {
        // Three runs a task, one after another.
        run_lab_task(client, root, task, 3 * (index + 1)).await?;
    }
    // Judged on this machine's runs, pass or fail: none left waiting.
    let (checks, statuses) = lab_checks(client, root).await?;
    if statuses.len() != 2 || statuses.iter().any(|(_, s)| s != "pass" && s != "fail") {
        return Err(format!("lab 6's checks should both be judged: {checks}"));
    }
    let verdict = js(
        client,
        &format!("return document.querySelector('{root} .pipebook-lab-verdict').textContent;"),
    )
    .await?;
    let verdict = verdict.as_str().unwrap_or("");
    if !verdict.contains("You predicted posix-shm") || !verdict.contains("fastest") {
        return Err(format!(
            "lab 6 should compare the choice with the fastest mechanism: {verdict}"
        ));
    }
    js(client, "window.scrollTo(0, 0); return true;").await?;
    let path = screenshot_element(client, root, "lab-choose-ipc-done").await?;
    println!("lab 6: checks {checks}, {verdict}; {}", path.display());
    Ok(())
}

/// Completes one lab from its page: a prediction, its two runs (small), the
/// checks judged, progress kept across a reload, and the export fetched from the
/// page and checked (schema and digest) by the same code `pipebook report` uses.
async fn do_lab(client: &Client, base: &str) -> TestResult {
    let root = ".pipebook-lab[data-lab=\"vmsplice-safety\"]";
    open(client, base, LAB_CHAPTER).await?;
    let idle = format!("return document.querySelector('{root}')?.dataset.state === 'idle';");
    wait_js(client, &idle, Duration::from_secs(10), "the lab card").await?;
    // Runs stay locked until a prediction is saved.
    let locked = js(
        client,
        &format!("return document.querySelector('{root} button.pipebook-lab-run').disabled;"),
    )
    .await?;
    if locked != json!(true) {
        return Err("the lab's runs should wait for a prediction".into());
    }
    save_prediction(
        client,
        root,
        "r.scrollIntoView({ block: 'start' });
         r.querySelector('.pipebook-prediction-input').value = '0.3';
         r.querySelector('.pipebook-lab-bytes').value = '16MiB';
         r.querySelector('input.pipebook-seconds').value = '1';",
        "0.3",
    )
    .await?;
    for (task, count) in [("verified", 1), ("reuse", 2)] {
        run_lab_task(client, root, task, count).await?;
    }
    let (checks, statuses) = lab_checks(client, root).await?;
    if !statuses.contains(&("double-buffer-clean".into(), "pass".into()))
        || statuses.iter().any(|(_, s)| s == "pending")
    {
        return Err(format!(
            "the checks should be judged, double buffering clean: {checks}"
        ));
    }
    let verdict = js(
        client,
        &format!("return document.querySelector('{root} .pipebook-lab-verdict').textContent;"),
    )
    .await?;
    if !verdict.as_str().unwrap_or("").contains("You predicted 0.3") {
        return Err(format!(
            "the prediction should be compared with the measurement: {verdict}"
        ));
    }
    // From the top, so mdBook's sticky bar does not cover the card.
    js(client, "window.scrollTo(0, 0); return true;").await?;
    let path = screenshot_element(client, root, "lab-done").await?;
    println!("lab: checks {checks}, {verdict}; {}", path.display());

    // A reload shows the same lab, from the runner.
    open(client, base, LAB_CHAPTER).await?;
    wait_js(
        client,
        &format!(
            "const r = document.querySelector('{root}');
             return r.dataset.measurements === '2' && r.querySelector('.pipebook-prediction-input').disabled
                 && r.dataset.checks === '{}';",
            statuses.iter().map(|(_, s)| s.as_str()).collect::<Vec<_>>().join(",")
        ),
        Duration::from_secs(10),
        "the lab's progress after a reload",
    )
    .await?;

    // The export, fetched by the page from the link it offers.
    js(
        client,
        &format!(
            "const input = document.querySelector('{root} .pipebook-lab-student');
             input.value = 'Test Student';
             input.dispatchEvent(new Event('input'));
             return true;"
        ),
    )
    .await?;
    let fetched = client
        .execute_async(
            &format!(
                "const done = arguments[arguments.length - 1];
                 const a = document.querySelector('{root} a.pipebook-lab-export-json');
                 fetch(a.href).then(async (r) => done({{ status: r.status, href: a.getAttribute('href'),
                   disposition: r.headers.get('content-disposition'), text: await r.text() }}))
                   .catch((e) => done({{ error: String(e) }}));"
            ),
            vec![],
        )
        .await
        .map_err(|e| format!("fetching the export: {e}"))?;
    if fetched["status"] != json!(200) {
        return Err(format!("the export failed: {fetched}"));
    }
    let report: Value = serde_json::from_str(fetched["text"].as_str().unwrap_or(""))
        .map_err(|e| format!("the export is not JSON: {e}"))?;
    if report["schema"] != json!("pipebook-lab-report")
        || report["schema_version"] != json!(1)
        || report["student"] != json!("Test Student")
    {
        return Err(format!(
            "the export's schema and name: {} {} {}",
            report["schema"], report["schema_version"], report["student"]
        ));
    }
    pipebook::labs::export::verify_digest(&report)
        .map_err(|e| format!("the export's digest: {e}"))?;
    let html = js(
        client,
        &format!("return document.querySelector('{root} a.pipebook-lab-export-html').href;"),
    )
    .await?;
    println!(
        "lab export: {} bytes, digest ok, HTML at {html}",
        fetched["text"].as_str().unwrap_or("").len()
    );
    Ok(())
}

/// Runs one IPC mechanism from its card, with a small size typed into the card's
/// own control, and reads the result the card shows.
async fn run_ipc(client: &Client) -> TestResult {
    let root = format!(".pipebook-ipc[data-mechanism=\"{IPC_MECHANISM}\"]");
    js(
        client,
        &format!(
            "const r = document.querySelector('{root}');
             if (!r || !r.querySelector('input.pipebook-ipc-bytes')) return false;
             r.scrollIntoView({{ block: 'center' }});
             r.querySelector('input.pipebook-ipc-bytes').value = '{IPC_BYTES}';
             return true;"
        ),
    )
    .await?
    .as_bool()
    .filter(|found| *found)
    .ok_or_else(|| format!("{IPC_CHAPTER}.html has no runnable {IPC_MECHANISM} card"))?;
    client
        .find(Locator::Css(&format!("{root} button.pipebook-ipc-button")))
        .await
        .map_err(|e| e.to_string())?
        .click()
        .await
        .map_err(|e| e.to_string())?;
    let probe = format!(
        "const r = document.querySelector('{root}');
         const cells = [...r.querySelectorAll('table.pipebook-ipc-result tr')]
           .map((tr) => [...tr.children].map((c) => c.textContent));
         return {{ state: r.dataset.state, mibs: Number(r.dataset.mibPerS),
                  checksum: r.dataset.checksum ?? null, cells,
                  progress: Number(r.dataset.progressSamples ?? 0),
                  barHidden: r.querySelector('progress.pipebook-ipc-progress').hidden,
                  status: r.querySelector('.pipebook-status').textContent }};"
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    let last = loop {
        let s = js(client, &probe).await?;
        if matches!(s["state"].as_str(), Some("done" | "error" | "cancelled")) {
            break s;
        }
        if Instant::now() > deadline {
            return Err(format!("the IPC run did not finish within 60 s: {s}"));
        }
        tokio::time::sleep(Duration::from_millis(30)).await;
    };
    if last["state"] != json!("done") || last["checksum"] != json!("ok") {
        return Err(format!("the IPC card ended as {last}"));
    }
    if !last["mibs"].as_f64().is_some_and(|m| m > 0.0) {
        return Err(format!("the IPC card shows no rate: {last}"));
    }
    // The runner's progress reached the card while the run lasted (the first
    // sample comes as the harness starts), and the bar went away at the end.
    if last["progress"].as_u64().is_none_or(|n| n < 1) || last["barHidden"] != json!(true) {
        return Err(format!(
            "the IPC card showed no progress, or kept its bar: {last}"
        ));
    }
    // The table names the bytes moved, the checksum, and both ends' counters,
    // beside the survey's 1373 ms.
    let cells = last["cells"].to_string();
    for needle in [
        "8 MiB",
        "OK",
        "producer",
        "consumer",
        "faults",
        "1.37 s for 200 MiB",
    ] {
        if !cells.contains(needle) {
            return Err(format!("the IPC result table lacks {needle:?}: {cells}"));
        }
    }
    // The card then lists the run among the earlier ones, from the history.
    wait_js(
        client,
        &format!(
            "const r = document.querySelector('{root}');
             return Number(r.dataset.earlierRuns) >= 1 ? r.dataset.earlierRuns : null;"
        ),
        Duration::from_secs(10),
        "the IPC card to list the run from the history",
    )
    .await?;
    let path = screenshot_element(client, &root, "ipc-done").await?;
    println!(
        "ipc: {IPC_MECHANISM} at {} MiB/s; {}",
        last["mibs"],
        path.display()
    );
    Ok(())
}

/// Runs every IPC mechanism in turn from the matrix card, small, and checks the
/// chart got a bar of this machine for each beside the survey's.
async fn run_ipc_matrix(client: &Client) -> TestResult {
    let root = ".pipebook-ipc-matrix";
    js(
        client,
        &format!(
            "const r = document.querySelector('{root}');
             if (!r || !r.querySelector('input.pipebook-ipc-bytes')) return false;
             r.scrollIntoView({{ block: 'center' }});
             r.querySelector('input.pipebook-ipc-bytes').value = '2MiB';
             return true;"
        ),
    )
    .await?
    .as_bool()
    .filter(|found| *found)
    .ok_or("zero-copy.html has no runnable matrix card")?;
    client
        .find(Locator::Css(&format!("{root} button.pipebook-ipc-button")))
        .await
        .map_err(|e| e.to_string())?
        .click()
        .await
        .map_err(|e| e.to_string())?;
    let probe = format!(
        "const r = document.querySelector('{root}');
         return {{ state: r.dataset.state, rows: Number(r.dataset.rows),
                  mine: r.querySelectorAll('rect.pipebook-ipc-bar-mine').length,
                  survey: r.querySelectorAll('rect.pipebook-ipc-bar-survey').length,
                  table: r.querySelectorAll('table tr').length,
                  status: r.querySelector('.pipebook-status').textContent }};"
    );
    let deadline = Instant::now() + Duration::from_secs(120);
    let last = loop {
        let s = js(client, &probe).await?;
        if matches!(s["state"].as_str(), Some("done" | "error" | "cancelled")) {
            break s;
        }
        if Instant::now() > deadline {
            return Err(format!("the IPC matrix did not finish within 120 s: {s}"));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    // Fourteen producer/consumer mechanisms; the survey has figures for thirteen
    // of them (not the Unix domain socket).
    if last["state"] != json!("done")
        || last["rows"] != json!(14)
        || last["mine"] != json!(14)
        || last["survey"] != json!(13)
        || last["table"] != json!(15)
    {
        return Err(format!("the IPC matrix ended as {last}"));
    }
    let path = screenshot_element(client, root, "ipc-matrix-done").await?;
    println!("ipc matrix: {last}; {}", path.display());
    Ok(())
}

/// "Profile this step" on the baseline: a flame graph drawn as an image and the
/// article's profile beside this one (or, without perf, the reason).
async fn profile_step(client: &Client) -> TestResult {
    let root = format!(".pipebook-run[data-step=\"{RUN_STEP}\"]");
    js(
        client,
        &format!(
            "const r = document.querySelector('{root}');
             r.querySelector('input.pipebook-seconds').value = '0.5';
             r.querySelector('.pipebook-profile').scrollIntoView({{ block: 'start' }});
             r.querySelector('button.pipebook-profile-button').click();
             return true;"
        ),
    )
    .await?;
    let probe = format!(
        "const p = document.querySelector('{root} .pipebook-profile');
         const state = p.dataset.state;
         if (state === 'running' || state === 'idle') return null;
         const imgs = [...p.querySelectorAll('img.pipebook-flamegraph')];
         return {{ state, status: p.querySelector('.pipebook-profile-status').textContent,
                  images: imgs.map((i) => ({{ role: i.dataset.role, loaded: i.complete && i.naturalWidth > 0 }})),
                  compare: p.querySelectorAll('table.pipebook-profile-compare tbody tr').length,
                  notes: [...p.querySelectorAll('.pipebook-profile-note')].map((n) => n.dataset.kind) }};"
    );
    wait_js(client, &probe, Duration::from_secs(60), "the profile").await?;
    // Let the images decode before the picture is taken.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let seen = js(client, &probe).await?;
    let path = screenshot_element(client, &format!("{root} .pipebook-profile"), "profile").await?;
    println!("profile: {seen}; {}", path.display());
    if !pipebench::profile::perf_installed() {
        return match seen["state"].as_str() {
            Some("unavailable") if seen["notes"] == json!(["not_installed"]) => Ok(()),
            _ => Err(format!("without perf the card must say why: {seen}")),
        };
    }
    if seen["state"] != json!("done") {
        return Err(format!("the profile did not come: {seen}"));
    }
    let images = seen["images"].as_array().cloned().unwrap_or_default();
    if images.len() != 2 || images.iter().any(|i| i["loaded"] != json!(true)) {
        return Err(format!("both flame graphs should load as images: {seen}"));
    }
    if seen["compare"] != json!(6) {
        return Err(format!(
            "the article's six write-read functions should be listed: {seen}"
        ));
    }
    Ok(())
}

/// The paging chapter's walk: the article's address by default (57 bits, so five
/// levels), a refusal for a non-canonical address, four levels for a user address.
async fn check_walk(client: &Client) -> TestResult {
    let root = ".pipebook-walk";
    let probe = format!(
        "const r = document.querySelector('{root}');
         const s = r && r.querySelector('svg.pipebook-walk-svg');
         const e = r && r.querySelector('.pipebook-walk-error');
         return r && {{ state: r.dataset.state, levels: s ? s.dataset.levels : null,
                  indices: s ? s.dataset.indices : null, error: e ? e.textContent : null }};"
    );
    let first = wait_js(client, &probe, Duration::from_secs(10), "the walk drawing").await?;
    if first["levels"] != json!("5") || first["indices"] != json!("0,484,449,215,405") {
        return Err(format!(
            "the article's address should walk 5 levels, 0,484,449,215,405: {first}"
        ));
    }
    js(
        client,
        &format!("document.querySelector('{root}').scrollIntoView({{ block: 'start' }});"),
    )
    .await?;
    screenshot_element(client, root, "walk-article").await?;
    let typed = |text: &str| {
        format!(
            "const i = document.querySelector('{root} input.pipebook-walk-input');
             i.value = '{text}'; i.dispatchEvent(new Event('input')); return true;"
        )
    };
    js(client, &typed("0x0100000000000000")).await?;
    let refused = js(client, &probe).await?;
    let message = refused["error"].as_str().unwrap_or_default();
    if refused["state"] != json!("error") || !message.contains("not canonical") {
        return Err(format!(
            "a non-canonical address should be refused: {refused}"
        ));
    }
    screenshot_element(client, root, "walk-refused").await?;
    js(client, &typed("0x00007f705af953c0")).await?;
    let user = js(client, &probe).await?;
    if user["levels"] != json!("4") || user["indices"] != json!("254,449,215,405") {
        return Err(format!("a user address should walk 4 levels: {user}"));
    }
    Ok(())
}

/// Waits for the page inspector's panels and returns each one's grid counts.
async fn check_pages(client: &Client, name: &str) -> TestResult<Value> {
    let root = ".pipebook-pages";
    let probe = format!(
        "const panels = [...document.querySelectorAll('{root} .pipebook-pages-panel')];
         if (!panels.length || panels.some((p) => p.dataset.state !== 'done' && p.dataset.state !== 'error')) return null;
         return panels.map((p) => {{
           const g = p.querySelector('svg.pipebook-pages-grid');
           return {{ step: p.dataset.step, state: p.dataset.state,
                    cells: g ? g.querySelectorAll('rect').length : 0,
                    present: g ? Number(g.dataset.present) : null,
                    heads: g ? Number(g.dataset.heads) : null, tails: g ? Number(g.dataset.tails) : null,
                    limits: [...p.querySelectorAll('.pipebook-pages-limit')].map((l) => l.dataset.kind),
                    text: p.textContent.slice(0, 300) }};
         }});"
    );
    let panels = wait_js(
        client,
        &probe,
        Duration::from_secs(30),
        "the page inspector",
    )
    .await?;
    js(
        client,
        &format!("document.querySelector('{root}').scrollIntoView({{ block: 'start' }});"),
    )
    .await?;
    let path = screenshot_element(client, root, name).await?;
    println!("{name}: {panels}; {}", path.display());
    for panel in panels.as_array().into_iter().flatten() {
        if panel["state"] != json!("done") {
            return Err(format!("{name}: a panel failed: {panel}"));
        }
    }
    Ok(panels)
}

/// The inspector in the paging chapter (4 KiB pages against one huge page) and in
/// the huge-pages chapter (written against untouched).
async fn inspect_pages(client: &Client, base: &str) -> TestResult {
    let thp =
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
    let root = rustix::process::geteuid().is_root();
    open(client, base, "paging").await?;
    check_walk(client).await?;
    let panels = check_pages(client, "pages-small-vs-huge").await?;
    let (small, huge) = (&panels[0], &panels[1]);
    if small["step"] != json!("vmsplice-splice")
        || small["cells"] != json!(65)
        || small["present"] != json!(65)
    {
        return Err(format!(
            "step 3's buffer is 65 present small pages: {small}"
        ));
    }
    if huge["cells"] != json!(512) {
        return Err(format!(
            "step 4's buffer is one 2 MiB page, 512 squares: {huge}"
        ));
    }
    if thp.contains("[never]") {
        if !huge["limits"]
            .as_array()
            .is_some_and(|l| l.contains(&json!("thp_disabled")))
        {
            return Err(format!("with THP off the panel must say so: {huge}"));
        }
    } else if root
        && !huge["limits"]
            .as_array()
            .is_some_and(|l| l.contains(&json!("no_huge_pages")))
        && (huge["heads"] != json!(1) || huge["tails"] != json!(511))
    {
        return Err(format!(
            "a touched huge page is 1 head and 511 tails: {huge}"
        ));
    }
    // "Walk this address" hands the huge buffer's address to the walk: 2 MiB, three tables.
    let walked = js(
        client,
        "document.querySelectorAll('.pipebook-pages-panel')[1].querySelector('button.pipebook-pages-walk').click();
         const s = document.querySelector('.pipebook-walk svg.pipebook-walk-svg');
         return { input: document.querySelector('.pipebook-walk-input').value,
                  where: document.querySelectorAll('.pipebook-pages-where code')[1].textContent,
                  levels: s.dataset.levels, tables: s.dataset.indices.split(',').length };",
    )
    .await?;
    if walked["input"] != walked["where"]
        || walked["tables"] != json!(3)
        || walked["levels"] != json!("4")
    {
        return Err(format!(
            "the huge buffer's address should walk 3 tables: {walked}"
        ));
    }
    screenshot_element(client, ".pipebook-walk", "walk-buffer").await?;
    open(client, base, "huge-pages").await?;
    let panels = check_pages(client, "pages-touched-vs-untouched").await?;
    if panels[1]["present"] != json!(0)
        || !panels[1]["limits"]
            .as_array()
            .is_some_and(|l| l.contains(&json!("nothing_present")))
    {
        return Err(format!(
            "an untouched buffer has nothing present: {}",
            panels[1]
        ));
    }
    Ok(())
}

async fn scenario(client: &Client, base: &str, chapters: &[String]) -> TestResult {
    cdp(
        client,
        "Page.addScriptToEvaluateOnNewDocument",
        json!({ "source": RECORDER }),
    )
    .await?;
    // Start from the light theme whatever the host prefers.
    client
        .goto(base)
        .await
        .map_err(|e| format!("opening {base}: {e}"))?;
    set_theme(client, "light").await?;

    // 1. Run a step from its chapter.
    if !chapters.iter().any(|c| c == RUN_CHAPTER) {
        return Err(format!("SUMMARY.md has no {RUN_CHAPTER}.md"));
    }
    open(client, base, RUN_CHAPTER).await?;
    run_step(client).await?;
    run_sweep(client).await?;
    profile_step(client).await?;
    check_page(client, base, RUN_CHAPTER).await?;
    inspect_pages(client, base).await?;
    if !chapters.iter().any(|c| c == IPC_CHAPTER) {
        return Err(format!("SUMMARY.md has no {IPC_CHAPTER}.md"));
    }
    open(client, base, IPC_CHAPTER).await?;
    run_ipc(client).await?;
    check_page(client, base, IPC_CHAPTER).await?;
    open(client, base, "zero-copy").await?;
    run_ipc_matrix(client).await?;

    // 1b. Complete a lab from its page.
    if !chapters.iter().any(|c| c == LAB_CHAPTER) {
        return Err(format!("SUMMARY.md has no {LAB_CHAPTER}.md"));
    }
    do_lab(client, base).await?;
    check_page(client, base, LAB_CHAPTER).await?;
    if !chapters.iter().any(|c| c == IPC_LAB_CHAPTER) {
        return Err(format!("SUMMARY.md has no {IPC_LAB_CHAPTER}.md"));
    }
    do_ipc_lab(client, base).await?;

    // 2. Every chapter: local only, no CSP violation, no console error, diagrams drawn.
    let mut diagrams = 0;
    for chapter in chapters {
        open(client, base, chapter).await?;
        check_page(client, base, chapter).await?;
        let counts = js(
            client,
            r#"const pres = [...document.querySelectorAll("pre.mermaid")];
               const drawn = pres.filter((p) => {
                 const svg = p.querySelector("svg");
                 return svg && svg.getAttribute("aria-roledescription") !== "error";
               });
               return { total: pres.length, drawn: drawn.length,
                        errors: pres.filter((p) => p.dataset.error).map((p) => p.dataset.error) };"#,
        )
        .await?;
        let total = counts["total"].as_u64().unwrap_or(0);
        // The 3.5 MB Mermaid bundle is fetched by pages with a diagram, and only them.
        let fetched_mermaid = js(
            client,
            r#"return performance.getEntriesByType("resource").some((e) => e.name.endsWith("/mermaid.min.js"));"#,
        )
        .await?;
        if fetched_mermaid != json!(total > 0) {
            return Err(format!(
                "{chapter}: {total} diagram(s), but Mermaid fetched: {fetched_mermaid}"
            ));
        }
        if counts["drawn"].as_u64() != Some(total) {
            return Err(format!(
                "{chapter}: Mermaid did not draw every diagram ({} of {total}); errors: {}",
                counts["drawn"], counts["errors"]
            ));
        }
        diagrams += total;
        let path = screenshot(client, chapter).await?;
        println!(
            "{chapter}: {total} diagram(s), screenshot {}",
            path.display()
        );
    }
    if diagrams == 0 {
        return Err("no chapter has a Mermaid diagram (pre.mermaid) to check".into());
    }

    // 3. A second visit to a page with diagrams is fast: nothing large comes again.
    let page = "inside-a-pipe";
    open(client, base, page).await?;
    open(client, base, page).await?;
    let timing = js(
        client,
        r#"const nav = performance.getEntriesByType("navigation")[0];
           const mermaid = performance.getEntriesByType("resource")
             .find((e) => e.name.endsWith("/mermaid.min.js"));
           return { load_ms: nav.loadEventEnd - nav.startTime,
                    dom_ms: nav.domContentLoadedEventEnd - nav.startTime,
                    mermaid_end_ms: mermaid ? mermaid.responseEnd : null,
                    slowest: performance.getEntriesByType("resource")
                      .map((e) => [e.name.split("/").pop(), Math.round(e.responseEnd)])
                      .sort((a, b) => b[1] - a[1]).slice(0, 4),
                    transferred: performance.getEntriesByType("resource")
                      .reduce((sum, e) => sum + (e.transferSize || 0), nav.transferSize || 0),
                    mermaid_bytes: mermaid ? mermaid.transferSize : null };"#,
    )
    .await?;
    println!("{page}, second visit: {timing}");
    let load_ms = timing["load_ms"].as_f64().unwrap_or(f64::MAX);
    let mermaid_bytes = timing["mermaid_bytes"].as_f64().unwrap_or(f64::MAX);
    if load_ms >= 1000.0 || mermaid_bytes > 10_000.0 {
        return Err(format!(
            "{page}: a second visit should load in under 1 s without fetching Mermaid again: {timing}"
        ));
    }

    // 4. The results table saw the run (local storage merged with the server's history).
    if let Some(page) = chapters.iter().find(|c| c.as_str() == "your-machine") {
        open(client, base, page).await?;
        let runs = wait_js(
            client,
            &format!(
                "const row = document.querySelector('.pipebook-results tr[data-step=\"{RUN_STEP}\"]');
                 return row && Number(row.dataset.runs) > 0 ? row.dataset.runs : null;"
            ),
            Duration::from_secs(10),
            "the results table to list the run",
        )
        .await?;
        println!("results table: {RUN_STEP} has {runs} run(s)");
        // The machine report leads with its findings, each with its evidence.
        let findings = wait_js(
            client,
            "const items = [...document.querySelectorAll('.pipebook-system .pipebook-finding')];
             const full = items.filter((li) => li.dataset.id
               && li.querySelector('.pipebook-finding-title').textContent
               && li.querySelector('.pipebook-finding-evidence').textContent.startsWith('Seen: ')
               && li.querySelector('.pipebook-finding-effect').textContent);
             return full.length >= 3 && full.length === items.length
               ? items.map((li) => li.dataset.id) : null;",
            Duration::from_secs(10),
            "the machine's findings to be listed",
        )
        .await?;
        let ids = findings.to_string();
        if !ids.contains("kernel-") || !(ids.contains("virtualised") || ids.contains("bare-metal"))
        {
            return Err(format!(
                "the findings should cover the kernel and virtualisation: {ids}"
            ));
        }
        js(
            client,
            "document.querySelector('.pipebook-findings').scrollIntoView({ block: 'start' }); return true;",
        )
        .await?;
        // Measure a wakeup from the page: it queues like a run and adds its finding.
        js(
            client,
            "document.querySelector('.pipebook-wakeup-button').click(); return true;",
        )
        .await?;
        let measured = wait_js(
            client,
            "const panel = document.querySelector('.pipebook-wakeup');
             if (panel.dataset.state === 'error') return panel.textContent;
             return panel.dataset.state === 'done'
               && document.querySelector('.pipebook-finding[data-id=\"wakeup-cost\"]')
               ? panel.querySelector('.pipebook-wakeup-result').textContent : null;",
            Duration::from_secs(60),
            "the wakeup measurement to finish",
        )
        .await?;
        let text = measured.as_str().unwrap_or("");
        if !text.starts_with("Round trip between CPUs") {
            return Err(format!(
                "the wakeup measurement did not report round trips: {measured}"
            ));
        }
        let path = screenshot_element(client, ".pipebook-system", "machine-findings").await?;
        println!("findings: {ids}; wakeup: {text}; {}", path.display());
    }

    // 5. A few pages in a dark theme.
    set_theme(client, "navy").await?;
    for chapter in DARK_CHAPTERS
        .iter()
        .filter(|c| chapters.iter().any(|x| x == *c))
    {
        open(client, base, chapter).await?;
        let theme = js(
            client,
            "return document.documentElement.classList.contains('navy') && document.documentElement.dataset.pipebookDiagrams",
        )
        .await?;
        let has_diagrams = js(client, "return !!document.querySelector('pre.mermaid')").await?;
        if has_diagrams == json!(true) && theme != json!("dark") {
            return Err(format!(
                "{chapter}: in navy, diagrams should use Mermaid's dark theme: {theme}"
            ));
        }
        check_page(client, base, chapter).await?;
        let path = screenshot(client, &format!("{chapter}-navy")).await?;
        println!("{chapter} (navy): screenshot {}", path.display());
    }
    set_theme(client, "light").await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn book_runs_steps_in_a_real_browser() {
    // It runs steps and times page loads: nothing else may run meanwhile.
    let _lock = crate::common::RUN_LOCK.lock().await;
    for tool in [CHROMIUM, CHROMEDRIVER] {
        assert!(Path::new(tool).exists(), "{tool} not found: {INSTALL_HINT}");
    }
    let chapters = chapters();
    let profile = tempfile::tempdir().expect("chromium profile dir");
    let server = crate::common::InProcess::start_book(Some(&workspace_root())).await;
    let base = format!("{}/", server.origin());
    let (mut driver, port) = start_chromedriver();
    let client = connect_browser(port, profile.path()).await;

    let outcome = AssertUnwindSafe(scenario(&client, &base, &chapters))
        .catch_unwind()
        .await;
    if !matches!(outcome, Ok(Ok(()))) {
        if let Ok(path) = screenshot(&client, "failure").await {
            eprintln!("screenshot of the failure: {}", path.display());
        }
    }
    let _ = client.close().await;
    driver.stop();
    server.stop().await;
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(message)) => panic!("{message}"),
        Err(panic) => std::panic::resume_unwind(panic),
    }
}
