//! Test helpers: start the real server on a free port with a tiny book, either
//! in this process ([`InProcess`]: `pipebook::server::prepare` + `run`) or as the
//! `pipebook` binary ([`Server`], for signals, stdout, stderr and resource
//! limits), and talk to it with hyper-util's HTTP client and a real WebSocket
//! client ([`Endpoint`], which both dereference to).
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use hyper::body::Body as _;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// Runs pin both CPUs of a 2-core machine: tests that run steps take this lock.
pub static RUN_LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A WebSocket to the server.
pub type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Writes a tiny book (one chapter with a run widget, a diagram and placeholders).
pub fn write_tiny_book(root: &Path) {
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(
        root.join("book.toml"),
        "[book]\ntitle = \"tiny\"\nsrc = \"src\"\n\n[build]\nbuild-dir = \"out\"\ncreate-missing = false\n\n[output.html]\n",
    )
    .unwrap();
    std::fs::write(
        root.join("src/SUMMARY.md"),
        "# Summary\n\n[Intro](index.md)\n\n- [Chapter](chapter.md)\n",
    )
    .unwrap();
    std::fs::write(
        root.join("src/index.md"),
        "# Intro\n\n{{#system}}\n\nSee [the chapter](chapter.md).\n",
    )
    .unwrap();
    std::fs::write(
        root.join("src/chapter.md"),
        "# Chapter\n\n{{#run vmsplice-splice}}\n\n```mermaid\ngraph LR\n  W[writer] --> R[reader]\n```\n\n{{#results}}\n",
    )
    .unwrap();
}

/// A prepared server over a tiny book, not yet accepting: for [`InProcess`],
/// or for a test that calls the router itself (`oneshot`).
pub struct Tiny {
    pub prepared: pipebook::server::Prepared,
    pub book: tempfile::TempDir,
    pub state: tempfile::TempDir,
}

impl Tiny {
    /// Builds the tiny book and prepares a server whose Host check expects
    /// `port`, whose runs start the `pipebook` binary's ends.
    pub async fn prepare(port: u16) -> Tiny {
        Tiny::prepare_book(port, None).await
    }

    /// Like [`Tiny::prepare`], serving the book at `book_root` (built into a
    /// temporary folder) instead of the tiny one.
    pub async fn prepare_book(port: u16, book_root: Option<&Path>) -> Tiny {
        let book = tempfile::tempdir().unwrap();
        let (book_root, build_dir) = match book_root {
            Some(root) => (root.to_path_buf(), Some(book.path().join("out"))),
            None => {
                write_tiny_book(book.path());
                (book.path().to_path_buf(), None)
            }
        };
        let state = tempfile::tempdir().unwrap();
        let config = pipebook::config::Config {
            bind: std::net::Ipv4Addr::LOCALHOST.into(),
            port,
            book_root: Some(book_root),
            rebuild: false,
            build_dir,
            state_dir: state.path().to_path_buf(),
            allow_hosts: Vec::new(),
            allow_other_users: false,
            connections: pipebook::state::ConnectionLimits::default(),
        };
        let program = pipebench::process::launch::EndProgram {
            exe: env!("CARGO_BIN_EXE_pipebook").into(),
            prefix: vec!["end".into()],
        };
        let prepared = pipebook::server::prepare(&config, port, program)
            .await
            .expect("the server prepares");
        Tiny {
            prepared,
            book,
            state,
        }
    }
}

/// A server in this process, on a real loopback TCP socket: the same code as the
/// binary's (`prepare` + `run`), without a process to spawn and a line to parse.
/// Dropping it turns the server's stop switch on, which kills any run.
pub struct InProcess {
    endpoint: Endpoint,
    pub state_dir: PathBuf,
    stop: pipebook::shutdown::Shutdown,
    task: Option<tokio::task::JoinHandle<()>>,
    _book: tempfile::TempDir,
    _state: tempfile::TempDir,
}

impl InProcess {
    /// A server with a tiny book and a fresh state directory, whose runs start
    /// the `pipebook` binary's ends (`pipebook end write|read`).
    pub async fn start() -> InProcess {
        InProcess::start_book(None).await
    }

    /// A server of the book at `book_root` (the tiny one if `None`).
    pub async fn start_book(book_root: Option<&Path>) -> InProcess {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let tiny = Tiny::prepare_book(port, book_root).await;
        let stop = tiny.prepared.state.shutdown.clone();
        let task = tokio::spawn(pipebook::server::run(
            vec![listener],
            tiny.prepared.state,
            std::future::pending(),
        ));
        InProcess {
            endpoint: Endpoint { port },
            state_dir: tiny.state.path().to_path_buf(),
            stop,
            task: Some(task),
            _book: tiny.book,
            _state: tiny.state,
        }
    }

    /// Stops it as a signal would and waits until it has stopped.
    pub async fn stop(mut self) {
        self.stop.trigger();
        if let Some(task) = self.task.take() {
            task.await.expect("the server task ends cleanly");
        }
    }
}

impl std::ops::Deref for InProcess {
    type Target = Endpoint;
    fn deref(&self) -> &Endpoint {
        &self.endpoint
    }
}

impl Drop for InProcess {
    fn drop(&mut self) {
        // Run threads watch the switch and kill their ends within a sample.
        self.stop.trigger();
    }
}

/// A `pipebook` process; killed (SIGKILL) when dropped if still running.
pub struct Server {
    pub child: Child,
    endpoint: Endpoint,
    pub state_dir: PathBuf,
    pub stderr_log: PathBuf,
    _book: tempfile::TempDir,
    _state: Option<tempfile::TempDir>,
}

impl Server {
    /// A server with its own book and state directory.
    pub fn start() -> Server {
        let state = tempfile::tempdir().unwrap();
        let dir = state.path().to_path_buf();
        let mut server = Server::start_with_state(&dir);
        server._state = Some(state);
        server
    }

    /// A server keeping its history in `state_dir`.
    pub fn start_with_state(state_dir: &Path) -> Server {
        Server::start_with_args(state_dir, &[]).expect("server starts")
    }

    /// Starts the binary with extra `args`; `Err(stderr)` if it exits instead.
    pub fn start_with_args(state_dir: &Path, args: &[&str]) -> Result<Server, String> {
        Server::start_limited(state_dir, args, None)
    }

    /// Like [`Server::start_with_args`], with the server's open-file limit
    /// (soft and hard) set to `max_open_files` before it starts, if given.
    pub fn start_limited(
        state_dir: &Path,
        args: &[&str],
        max_open_files: Option<u64>,
    ) -> Result<Server, String> {
        Server::start_full(state_dir, args, max_open_files, &[])
    }

    /// A server with its own state and extra environment variables.
    pub fn start_with_env(env: &[(&str, &str)]) -> Server {
        let state = tempfile::tempdir().unwrap();
        let mut server = Server::start_full(state.path(), &[], None, env).expect("server starts");
        server._state = Some(state);
        server
    }

    /// Like [`Server::start_with_args`], with `setup` run in the server's
    /// process just before it execs (e.g. a mount namespace of its own, or
    /// resource limits); `Err(stderr)` if it exits instead.
    pub fn start_with_setup(
        state_dir: &Path,
        args: &[&str],
        setup: impl FnMut() -> std::io::Result<()> + Send + Sync + 'static,
    ) -> Result<Server, String> {
        Server::start_command(state_dir, args, &[], |command| {
            use std::os::unix::process::CommandExt;
            // SAFETY: the callers' setups only make system calls (no allocation,
            // no locks) between fork and exec.
            unsafe {
                command.pre_exec(setup);
            }
        })
    }

    fn start_full(
        state_dir: &Path,
        args: &[&str],
        max_open_files: Option<u64>,
        env: &[(&str, &str)],
    ) -> Result<Server, String> {
        Server::start_command(state_dir, args, env, |command| {
            if let Some(limit) = max_open_files {
                use std::os::unix::process::CommandExt;
                // SAFETY: setrlimit is async-signal-safe; nothing else runs in the child.
                unsafe {
                    command.pre_exec(move || {
                        let rlimit = libc::rlimit {
                            rlim_cur: limit,
                            rlim_max: limit,
                        };
                        if libc::setrlimit(libc::RLIMIT_NOFILE, &rlimit) == 0 {
                            Ok(())
                        } else {
                            Err(std::io::Error::last_os_error())
                        }
                    });
                }
            }
        })
    }

    fn start_command(
        state_dir: &Path,
        args: &[&str],
        env: &[(&str, &str)],
        prepare: impl FnOnce(&mut Command),
    ) -> Result<Server, String> {
        let book = tempfile::tempdir().unwrap();
        write_tiny_book(book.path());
        let stderr_log = book.path().join("stderr.log");
        let port: &[&str] = if args.contains(&"--port") {
            &[]
        } else {
            &["--port", "0"]
        };
        let book_root: Vec<&std::ffi::OsStr> = if args.contains(&"--book-root") {
            Vec::new()
        } else {
            vec!["--book-root".as_ref(), book.path().as_os_str()]
        };
        let mut command = Command::new(env!("CARGO_BIN_EXE_pipebook"));
        command
            .args(port)
            .args(book_root)
            .arg("--state-dir")
            .arg(state_dir)
            .args(args)
            .env("RUST_LOG", "info")
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr_log).unwrap());
        prepare(&mut command);
        let mut child = command.spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let Some(port) = parse_port(&line) else {
            let _ = child.wait();
            return Err(std::fs::read_to_string(&stderr_log).unwrap_or_default());
        };
        assert!(line.contains("book built in"), "{line}");
        Ok(Server {
            child,
            endpoint: Endpoint { port },
            state_dir: state_dir.to_path_buf(),
            stderr_log,
            _book: book,
            _state: None,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends SIGTERM and waits for the exit status (at most `timeout`).
    pub fn terminate(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        self.signal(libc::SIGTERM, timeout)
    }

    /// Sends `signal` and waits for the exit status (at most `timeout`).
    pub fn signal(
        &mut self,
        signal: libc::c_int,
        timeout: Duration,
    ) -> Option<std::process::ExitStatus> {
        unsafe {
            libc::kill(self.child.id() as i32, signal);
        }
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_log).unwrap_or_default()
    }
}

/// How a test reaches a server, in-process or not: its port and the calls a
/// page makes (HTTP with our Host, the token, a WebSocket with our Origin).
pub struct Endpoint {
    pub port: u16,
}

impl Endpoint {
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// GET `path` with our own Host header.
    pub async fn get(&self, path: &str) -> HttpResponse {
        http_get(self.port, path, &self.host()).await
    }

    /// The token from a served page's meta tag.
    pub async fn token(&self) -> String {
        let page = self.get("/").await;
        assert_eq!(page.status, 200);
        let marker = r#"<meta name="pipebook-token" content=""#;
        let start = page.body.find(marker).expect("token meta") + marker.len();
        page.body[start..start + 64].to_string()
    }

    /// A WebSocket with the right Origin and token.
    pub async fn socket(&self) -> Socket {
        let token = self.token().await;
        self.socket_with(Some(&self.origin()), Some(&token), None)
            .await
            .expect("websocket opens")
    }

    /// Tries to open a WebSocket; `Err(status)` when refused.
    pub async fn socket_with(
        &self,
        origin: Option<&str>,
        token: Option<&str>,
        host: Option<&str>,
    ) -> Result<Socket, u16> {
        let query = token.map_or(String::new(), |t| format!("?token={t}"));
        let url = format!("ws://127.0.0.1:{}/api/run{query}", self.port);
        let mut request = url.into_client_request().unwrap();
        if let Some(origin) = origin {
            request
                .headers_mut()
                .insert("Origin", HeaderValue::from_str(origin).unwrap());
        }
        if let Some(host) = host {
            request
                .headers_mut()
                .insert("Host", HeaderValue::from_str(host).unwrap());
        }
        match tokio_tungstenite::connect_async(request).await {
            Ok((socket, _)) => Ok(socket),
            Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
                Err(response.status().as_u16())
            }
            Err(other) => panic!("websocket failed: {other}"),
        }
    }

    /// The history once it holds at least `count` results: a result reaches the
    /// page before it is saved, so a fresh one may take a moment to show.
    pub async fn results_once(&self, count: usize) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let results = self.get("/api/results").await.json();
            let results = results.as_array().unwrap().clone();
            if results.len() >= count || Instant::now() > deadline {
                return results;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl std::ops::Deref for Server {
    type Target = Endpoint;
    fn deref(&self) -> &Endpoint {
        &self.endpoint
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether perf may sample a process here at all (checked apart from the code
/// under test, so a test knows which outcome to hold a profiled run to).
pub fn perf_can_sample() -> bool {
    std::process::Command::new("perf")
        .args(["stat", "-e", "cpu-clock", "--", "true"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The port in `pipebook: serving http://127.0.0.1:PORT/ (book built in 0.8 s)`.
pub fn parse_port(line: &str) -> Option<u16> {
    let rest = line.strip_prefix("pipebook: serving http://")?;
    let authority = rest.split('/').next()?;
    authority.rsplit(':').next()?.parse().ok()
}

/// A parsed HTTP response.
#[derive(Debug)]
pub struct HttpResponse {
    pub status: u16,
    /// Lower-cased names.
    pub headers: HashMap<String, String>,
    pub body: String,
}

impl HttpResponse {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

/// GET `path` with `host` as its Host header.
pub async fn http_get(port: u16, path: &str, host: &str) -> HttpResponse {
    http_request(port, "GET", path, &[("host", host)]).await
}

/// `method path` to 127.0.0.1:`port` with exactly `headers` (no Host unless
/// given: the tests choose what the server sees).
pub async fn http_request(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> HttpResponse {
    http_request_to(
        SocketAddr::from(([127, 0, 0, 1], port)),
        method,
        path,
        headers,
    )
    .await
}

/// [`http_request`] to any address, e.g. `[::1]:PORT`.
pub async fn http_request_to(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> HttpResponse {
    let mut request = http::Request::builder()
        .method(method)
        .uri(format!("http://{addr}{path}"));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    send_request(request.body(String::new()).expect("a valid request")).await
}

/// Sends `request` with hyper-util's client over a fresh connection and reads
/// the whole response (hyper decodes chunked bodies). The client adds no Host
/// header of its own: the Host rule is what many tests are about.
pub async fn send_request(request: http::Request<String>) -> HttpResponse {
    let client = hyper_util::client::legacy::Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(0)
        .set_host(false)
        .build_http::<String>();
    let exchange = async {
        let response = client.request(request).await.expect("an HTTP response");
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .map(|(name, value)| {
                let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                (name.as_str().to_string(), value)
            })
            .collect();
        let mut body = std::pin::pin!(response.into_body());
        let mut bytes = Vec::new();
        while let Some(frame) = std::future::poll_fn(|cx| body.as_mut().poll_frame(cx)).await {
            if let Ok(data) = frame.expect("the body reads to its end").into_data() {
                bytes.extend_from_slice(&data);
            }
        }
        HttpResponse {
            status,
            headers,
            body: String::from_utf8_lossy(&bytes).into_owned(),
        }
    };
    tokio::time::timeout(Duration::from_secs(10), exchange)
        .await
        .expect("response within 10 s")
}

/// The page's message for one run of `step` with `params` (a JSON object of
/// run parameters, as the run card sends them).
pub fn run_message(step: &str, params: Value) -> Value {
    serde_json::json!({"type": "run", "step": step, "params": params})
}

/// [`run_message`] for a lab's task: `lab` is its `{"id": LAB, "task": TASK}`.
pub fn lab_run_message(step: &str, params: Value, lab: &Value) -> Value {
    let mut message = run_message(step, params);
    message["lab"] = lab.clone();
    message
}

/// `pipebook report GOOD FORGED`: an instructor's merge of a student's exported
/// report (`good`, its body as exported, saved as `good_name`) and a forgery of
/// it (`report` altered by `forge`, then sealed again as an export would be).
/// The merge must refuse the forgery alone: exit 3, the forged file named on
/// stderr and the good one not. Returns the forged file's line on stderr and
/// the merge's stdout (the class CSV of what it kept).
pub fn merge_with_forgery(
    good: &str,
    good_name: &str,
    report: &Value,
    forge: impl FnOnce(&mut Value),
) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let good_path = dir.path().join(good_name);
    std::fs::write(&good_path, good).unwrap();
    let mut forged = report.clone();
    forge(&mut forged);
    let forged_path = dir.path().join("forged.json");
    let sealed = pipebook::labs::export::seal(forged).to_string();
    std::fs::write(&forged_path, sealed).unwrap();
    let merged = Command::new(env!("CARGO_BIN_EXE_pipebook"))
        .arg("report")
        .args([&good_path, &forged_path])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&merged.stderr);
    assert_eq!(merged.status.code(), Some(3), "{stderr}");
    assert!(!stderr.contains(good_name), "{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.contains("forged.json"))
        .unwrap_or_else(|| panic!("forged.json is not named: {stderr}"));
    (
        line.to_string(),
        String::from_utf8_lossy(&merged.stdout).into_owned(),
    )
}

/// Sends a JSON text message.
pub async fn send(socket: &mut Socket, value: Value) {
    socket
        .send(Message::Text(value.to_string().into()))
        .await
        .unwrap();
}

/// The next JSON text message (pings skipped); panics after `timeout`.
pub async fn recv_within(socket: &mut Socket, timeout: Duration) -> Value {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let message = tokio::time::timeout_at(deadline, socket.next())
            .await
            .expect("a message in time")
            .expect("connection open")
            .expect("no transport error");
        match message {
            Message::Text(text) => return serde_json::from_str(&text).unwrap(),
            Message::Ping(_) | Message::Pong(_) => continue,
            other => panic!("unexpected message {other:?}"),
        }
    }
}

/// The next text message if one comes within `timeout`, else `None`.
pub async fn maybe_recv(socket: &mut Socket, timeout: Duration) -> Option<Value> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let message = tokio::time::timeout_at(deadline, socket.next())
            .await
            .ok()??;
        match message.ok()? {
            Message::Text(text) => return serde_json::from_str(&text).ok(),
            Message::Ping(_) | Message::Pong(_) => continue,
            _ => return None,
        }
    }
}

/// The next message, within 10 s.
pub async fn recv(socket: &mut Socket) -> Value {
    recv_within(socket, Duration::from_secs(10)).await
}

/// Reads until a message of type `kind`, returning it and everything before.
pub async fn recv_until(socket: &mut Socket, kind: &str, timeout: Duration) -> (Value, Vec<Value>) {
    let deadline = Instant::now() + timeout;
    let mut seen = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let message = recv_within(socket, left).await;
        if message["type"] == kind {
            return (message, seen);
        }
        seen.push(message);
    }
}

/// The close code and reason the server sends next, skipping anything else;
/// `None` if the connection ends without a Close frame.
pub async fn close_code(socket: &mut Socket) -> Option<(u16, String)> {
    tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match socket.next().await {
                Some(Ok(Message::Close(Some(frame)))) => {
                    return Some((u16::from(frame.code), frame.reason.to_string()))
                }
                Some(Ok(Message::Close(None))) | None | Some(Err(_)) => return None,
                Some(Ok(_)) => {}
            }
        }
    })
    .await
    .expect("closed within 5 s")
}

/// The nobody user and group: the second, unprivileged user of attacks.
pub const NOBODY: u32 = 65534;

/// Runs `program args` as nobody (no supplementary groups), as a local
/// attacker would; panics unless it succeeds.
pub fn as_nobody(program: &str, args: &[&std::ffi::OsStr]) {
    let output = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(program)
        .args(args)
        .output()
        .expect("setpriv runs");
    assert!(
        output.status.success(),
        "{program} {args:?} as nobody: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Writes `bytes` to `path` as nobody (the file is nobody's).
pub fn write_as_nobody(path: &Path, bytes: &[u8]) {
    use std::io::Write;
    let mut child = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .args(["sh", "-c", "cat > \"$1\"", "sh"])
        .arg(path)
        .stdin(Stdio::piped())
        .spawn()
        .expect("setpriv runs");
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    assert!(
        child.wait().unwrap().success(),
        "writing {path:?} as nobody"
    );
}

/// A temporary folder others may enter (0755), for an attacker to reach
/// what the test puts in it.
pub fn open_tempdir() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// The `saved` that follows a result in the history (skipping anything
/// before it, e.g. a lab record's `saved`); panics if it says the save failed.
pub async fn recv_saved(socket: &mut Socket) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let message = recv_within(socket, left).await;
        if message["type"] == "saved" && message["store"] == "history" {
            assert_eq!(message["ok"], true, "{message}");
            return message;
        }
    }
}

/// Expects an `error` whose message contains `fragment`.
/// A run that keeps the runner busy until cancelled: a long time budget, but
/// one wakeup per 4 KiB page holds it to tens of MiB a second.
pub fn holding_run(seconds: u32) -> Value {
    serde_json::json!({
        "type": "run",
        "step": "write-read",
        "params": {"seconds": seconds, "buf_size": "4KiB", "pipe_size": "4KiB"},
    })
}

/// Sends a run message and expects it to start at once; returns `started`.
pub async fn start_run(socket: &mut Socket, run: Value) -> Value {
    send(socket, run).await;
    let started = recv(socket).await;
    assert_eq!(started["type"], "started", "{started}");
    started
}

/// Sends a holding run and waits until it is running; returns `started`.
pub async fn start_holding_run(socket: &mut Socket, seconds: u32) -> Value {
    let started = start_run(socket, holding_run(seconds)).await;
    assert_eq!(recv(socket).await["type"], "progress");
    started
}

/// Sends `message` and expects an `error` saying `fragment`: a failure names
/// the message that was not refused as it should have been.
pub async fn expect_refused(socket: &mut Socket, message: Value, fragment: &str) {
    send(socket, message.clone()).await;
    let reply = recv(socket).await;
    assert_eq!(reply["type"], "error", "{message} got {reply}");
    let text = reply["message"].as_str().unwrap();
    assert!(
        text.contains(fragment),
        "{message}: expected {fragment:?} in {text:?}"
    );
}

pub async fn expect_error(socket: &mut Socket, fragment: &str) {
    let message = recv(socket).await;
    assert_eq!(message["type"], "error", "{message}");
    let text = message["message"].as_str().unwrap();
    assert!(text.contains(fragment), "expected {fragment:?} in {text:?}");
}

/// Whether a process is gone (or a zombie about to be reaped).
pub fn is_gone(pid: u64) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // The state follows the parenthesised command name.
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// Waits until every pid is gone from /proc, returning how long that took. It
/// sleeps the async way: an in-process server shares this thread.
pub async fn wait_gone(pids: &[u64], timeout: Duration) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < timeout {
        if pids
            .iter()
            .all(|&p| std::fs::metadata(format!("/proc/{p}")).is_err())
        {
            return Some(start.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    None
}

/// The writer and reader pids of a `started` message.
pub fn pids(started: &Value) -> Vec<u64> {
    started["pids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_u64().unwrap())
        .collect()
}

/// The headers of a WebSocket upgrade from `origin`, as a browser sends them.
pub fn upgrade_headers<'a>(host: &'a str, origin: &'a str) -> [(&'static str, &'a str); 6] {
    [
        ("host", host),
        ("origin", origin),
        ("connection", "Upgrade"),
        ("upgrade", "websocket"),
        ("sec-websocket-version", "13"),
        ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
    ]
}

/// Children of `pid`, any of its threads'.
pub fn children(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let text = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        found.extend(
            text.split_whitespace()
                .filter_map(|c| c.parse::<u32>().ok()),
        );
    }
    found
}
