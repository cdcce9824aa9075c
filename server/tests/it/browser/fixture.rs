//! The one browser and the one server the browser tests share.
//!
//! A `#[tokio::test]` runs on its own runtime, dropped when the test ends, and
//! whatever it spawned dies with it: the in-process server's accept loop and
//! fantoccini's WebDriver session are tasks. So the first browser test starts a
//! thread that owns a runtime of its own, and on it the server (the real book),
//! chromedriver and one Chromium session; tests reach them through a `Client`
//! (a channel to that session) and over TCP, from any runtime. The thread lives
//! until the test binary exits: an `atexit` hook asks it to close the session
//! (Chromium quits), stop chromedriver and the server, and remove the profile.
//!
//! Each test gets a fresh tab ([`in_fresh_page`]) with its own CSP recorder, a
//! cleared localStorage and the light theme, and gives it back closed.

use std::net::{TcpListener, TcpStream};
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use fantoccini::wd::WindowHandle;
use fantoccini::{Client, ClientBuilder};
use futures_util::FutureExt as _;
use serde_json::{json, Value};
use tokio::sync::oneshot;

use super::queries;
use super::{browser_log, cdp, check_page, js, screenshot, set_theme, workspace_root};
use super::{TestResult, RECORDER};
use crate::common::{InProcess, RUN_LOCK};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const INSTALL_HINT: &str = "the browser tests need Debian's Chromium and ChromeDriver: \
     run `apt-get install chromium chromium-driver` (CI installs them)";

/// What a test works with: the shared browser, on its own fresh tab, and the
/// server's base URL (`http://127.0.0.1:PORT/`).
pub(crate) struct Page {
    pub(crate) client: Client,
    pub(crate) base: String,
}

/// The shared browser session and server, as the fixture thread hands them out.
struct Shared {
    client: Client,
    base: String,
    /// The session's first tab, kept open (closing a session's last tab ends
    /// the session) and returned to between tests.
    home: WindowHandle,
}

/// Started once, by whichever browser test comes first; an error is kept so
/// that every test reports the same cause.
static SHARED: tokio::sync::OnceCell<Result<Shared, String>> = tokio::sync::OnceCell::const_new();

/// Asks the fixture thread to stop everything; it answers on the channel it is sent.
static STOP: std::sync::Mutex<Option<oneshot::Sender<mpsc::Sender<()>>>> =
    std::sync::Mutex::new(None);

/// Runs `body` on a fresh tab of the shared browser, then checks the page it
/// ended on (no foreign request, CSP violation or console error), and closes the
/// tab whatever happened. Panics with the first failure, after saving a
/// screenshot as `failure-NAME.png`.
pub(crate) async fn in_fresh_page<F>(name: &str, body: F)
where
    F: AsyncFnOnce(&Page) -> TestResult,
{
    // Browser tests run steps and time page loads, and take turns at one browser.
    let _lock = RUN_LOCK.lock().await;
    let shared = match SHARED.get_or_init(start).await {
        Ok(shared) => shared,
        Err(message) => panic!("{message}"),
    };
    let page = Page {
        client: shared.client.clone(),
        base: shared.base.clone(),
    };
    let outcome = AssertUnwindSafe(async {
        fresh_tab(&page).await?;
        body(&page).await?;
        let url = page
            .client
            .current_url()
            .await
            .map_err(|e| format!("the current URL: {e}"))?;
        let name = url.path().trim_start_matches('/').to_string();
        check_page(&page.client, &page.base, &name).await
    })
    .catch_unwind()
    .await;
    if !matches!(outcome, Ok(Ok(()))) {
        match screenshot(&page.client, &format!("failure-{name}")).await {
            Ok(path) => eprintln!("screenshot of the failure: {}", path.display()),
            Err(e) => eprintln!("no screenshot of the failure: {e}"),
        }
    }
    // The next test must find the browser as the first one did, even after a
    // failure here: if this fails, that test says so.
    if let Err(e) = close_tab(&page, &shared.home).await {
        eprintln!("{name}: closing its tab: {e}");
    }
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(message)) => panic!("{name}: {message}"),
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// Opens a tab and readies it: what an earlier test left in the console is read
/// away (and shown), the CSP recorder is installed, localStorage is emptied (the
/// results cache, the theme) and the theme set to light whatever the host prefers.
async fn fresh_tab(page: &Page) -> TestResult {
    let client = &page.client;
    let tab = client
        .new_window(true)
        .await
        .map_err(|e| format!("opening a tab: {e}"))?;
    client
        .switch_to_window(tab.handle)
        .await
        .map_err(|e| format!("switching to the new tab: {e}"))?;
    for entry in browser_log(client).await? {
        println!("console, before this test: {entry}");
    }
    cdp(
        client,
        "Page.addScriptToEvaluateOnNewDocument",
        json!({ "source": RECORDER }),
    )
    .await?;
    client
        .goto(&page.base)
        .await
        .map_err(|e| format!("opening {}: {e}", page.base))?;
    js(client, &queries::clear_storage()).await?;
    set_theme(client, "light").await
}

/// Closes the current tab and goes back to the session's first one.
async fn close_tab(page: &Page, home: &WindowHandle) -> TestResult {
    let client = &page.client;
    if client.window().await.ok().as_ref() != Some(home) {
        client
            .close_window()
            .await
            .map_err(|e| format!("closing the tab: {e}"))?;
    }
    client
        .switch_to_window(home.clone())
        .await
        .map_err(|e| format!("back to the first tab: {e}"))
}

/// Starts the fixture thread and waits until the browser is ready.
async fn start() -> Result<Shared, String> {
    for tool in [CHROMIUM, CHROMEDRIVER] {
        if !Path::new(tool).exists() {
            return Err(format!("{tool} not found: {INSTALL_HINT}"));
        }
    }
    let (ready_tx, ready_rx) = oneshot::channel();
    let (stop_tx, stop_rx) = oneshot::channel();
    std::thread::Builder::new()
        .name("browser-fixture".into())
        .spawn(move || fixture_thread(ready_tx, stop_rx))
        .map_err(|e| format!("starting the browser fixture's thread: {e}"))?;
    let shared = ready_rx
        .await
        .map_err(|_| "the browser fixture's thread died while starting".to_string())??;
    *STOP.lock().unwrap_or_else(|e| e.into_inner()) = Some(stop_tx);
    // SAFETY: registers a plain function; it runs once, at exit, on the thread
    // that calls exit(3), while the fixture thread still runs.
    unsafe {
        libc::atexit(stop_at_exit);
    }
    Ok(shared)
}

/// At exit: the fixture thread closes the browser and stops the server; waited
/// for at most 30 s. Must not panic (it is called from C).
extern "C" fn stop_at_exit() {
    let Some(stop) = STOP.lock().ok().and_then(|mut stop| stop.take()) else {
        return;
    };
    let (done_tx, done_rx) = mpsc::channel();
    if stop.send(done_tx).is_ok() {
        let _ = done_rx.recv_timeout(Duration::from_secs(30));
    }
}

/// Owns the runtime the server and the WebDriver session live on, from the
/// first browser test to the binary's exit.
fn fixture_thread(
    ready: oneshot::Sender<Result<Shared, String>>,
    stop: oneshot::Receiver<mpsc::Sender<()>>,
) {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            let _ = ready.send(Err(format!("the browser fixture's runtime: {e}")));
            return;
        }
    };
    runtime.block_on(async move {
        let profile = match tempfile::tempdir() {
            Ok(dir) => dir,
            Err(e) => {
                let _ = ready.send(Err(format!("a Chromium profile folder: {e}")));
                return;
            }
        };
        let server = InProcess::start_book(Some(&workspace_root())).await;
        let base = format!("{}/", server.origin());
        let (mut driver, port) = match start_chromedriver() {
            Ok(started) => started,
            Err(e) => {
                let _ = ready.send(Err(e));
                server.stop().await;
                return;
            }
        };
        let started = async {
            let client = connect_browser(port, profile.path()).await?;
            let home = client
                .window()
                .await
                .map_err(|e| format!("the browser's first tab: {e}"))?;
            Ok::<_, String>((client, home))
        }
        .await;
        let client = match started {
            Ok((client, home)) => {
                let shared = Shared {
                    client: client.clone(),
                    base,
                    home,
                };
                if ready.send(Ok(shared)).is_err() {
                    eprintln!("the browser test that started the browser is gone");
                }
                client
            }
            Err(e) => {
                let _ = ready.send(Err(e));
                driver.stop();
                server.stop().await;
                return;
            }
        };
        // Until the binary exits (or nobody can ask any more).
        let done = stop.await;
        let _ = client.close().await;
        driver.stop();
        server.stop().await;
        drop(profile);
        if let Ok(done) = done {
            let _ = done.send(());
        }
    });
}

/// chromedriver in a process group of its own, with the Chromium it starts:
/// stopped (SIGTERM, then SIGKILL), and then whatever is left of its group killed.
pub(crate) struct Driver {
    child: Child,
}

impl Driver {
    pub(crate) fn stop(&mut self) {
        let pid = self.child.id() as libc::pid_t;
        if !matches!(self.child.try_wait(), Ok(Some(_))) {
            // SAFETY: kill(2) on the pid of a child we spawned and have not reaped.
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
            let deadline = Instant::now() + Duration::from_secs(10);
            while !matches!(self.child.try_wait(), Ok(Some(_))) {
                if Instant::now() > deadline {
                    eprintln!("chromedriver did not stop on SIGTERM; killing it");
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        // A Chromium the session close did not end would outlive chromedriver:
        // it is in the group chromedriver leads.
        // SAFETY: kill(2) on the process group we created for chromedriver.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        self.stop();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

pub(crate) fn start_chromedriver() -> Result<(Driver, u16), String> {
    use std::os::unix::process::CommandExt;
    if let Some(install) = crate::setup::missing_chromium() {
        return Err(install);
    }
    let port = free_port();
    let mut command = Command::new(CHROMEDRIVER);
    command
        .arg(format!("--port={port}"))
        .arg("--allowed-ips=127.0.0.1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .process_group(0);
    // SAFETY: prctl is async-signal-safe; nothing else runs in the child. The
    // signal comes when this (the fixture) thread ends, i.e. if the test binary
    // dies before its exit hook could stop chromedriver.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    let child = command
        .spawn()
        .map_err(|e| format!("starting {CHROMEDRIVER}: {e}; {INSTALL_HINT}"))?;
    let mut driver = Driver { child };
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            driver.stop();
            return Err(format!(
                "chromedriver did not listen on port {port} within 30 s"
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok((driver, port))
}

pub(crate) async fn connect_browser(driver_port: u16, profile: &Path) -> TestResult<Client> {
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
    let Value::Object(caps) = caps else {
        unreachable!("a JSON object literal")
    };
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{driver_port}"))
        .await
        .map_err(|e| format!("starting {CHROMIUM} through chromedriver: {e}; {INSTALL_HINT}"))
}
