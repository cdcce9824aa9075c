//! One self-contained binary: `pipebook` carries the book (chapters, theme, labs and
//! the sources its listings include), so a copy of the binary alone, started in an
//! empty folder, serves the whole book; and the JSON API is gzipped for clients
//! that accept it.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tower::ServiceExt;

use crate::common::{http_get, parse_port, Tiny};

/// The copied server, killed if the test ends before it stopped it (a panic must
/// not leave it running: it would hold whatever it inherited, the CPU lock included).
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

#[tokio::test]
async fn a_copied_binary_serves_the_whole_book_from_an_empty_folder() {
    let folder = tempfile::tempdir().unwrap();
    let exe = folder.path().join("pipebook");
    std::fs::copy(env!("CARGO_BIN_EXE_pipebook"), &exe).unwrap();
    // Its own temporary folder, to see that the unpacked book goes away with it.
    let tmp = tempfile::tempdir().unwrap();
    let mut running = Running(
        Command::new(&exe)
            .args(["--port", "0", "--state-dir", "state"])
            .current_dir(folder.path())
            .env("TMPDIR", tmp.path())
            // Run folders go to $XDG_RUNTIME_DIR when it is ours: here, to TMPDIR.
            .env_remove("XDG_RUNTIME_DIR")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let child = &mut running.0;
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let Some(port) = parse_port(&line) else {
        let _ = child.kill();
        let mut err = String::new();
        let _ = child.stderr.take().unwrap().read_to_string(&mut err);
        panic!("the copied binary did not start: {line}{err}");
    };
    let host = format!("127.0.0.1:{port}");

    let chapter = http_get(port, "/baseline.html", &host).await;
    assert_eq!(chapter.status, 200, "{}", chapter.body);
    // The chapter's widget, its listing (included from bench/src) and a diagram.
    assert!(chapter.body.contains("pipebook-run"), "no run widget");
    assert!(
        chapter.body.contains("language-rust"),
        "no Rust listing included from bench/src"
    );
    for path in [
        "/pipebook/main.js",
        "/vendor/mermaid.min.js",
        "/print.html",
        "/api/steps",
    ] {
        let response = http_get(port, path, &host).await;
        assert_eq!(response.status, 200, "{path}");
    }
    // The book and its sources were unpacked into a private folder...
    let unpacked: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(unpacked.len(), 1, "{unpacked:?}");
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&unpacked[0]).unwrap().permissions(),
    );
    assert_eq!(mode & 0o777, 0o700, "{}", unpacked[0].display());
    // ... and nothing was written in the folder it ran from but the state asked for.
    let mut here: Vec<String> = std::fs::read_dir(folder.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    here.sort();
    assert_eq!(here, ["pipebook", "state"]);

    // SAFETY: kill(2) on our own child, not yet reaped.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "no exit within 10 s of SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status:?}");
    assert!(
        is_empty(tmp.path()),
        "the unpacked book was left behind in {}",
        tmp.path().display()
    );
}

fn is_empty(dir: &Path) -> bool {
    std::fs::read_dir(dir).unwrap().next().is_none()
}

#[tokio::test]
async fn api_json_is_gzipped_when_the_client_accepts_it() {
    let tiny = Tiny::prepare(8000).await;
    let app = pipebook::http::app::router(tiny.prepared.state);
    let get = |path: &str, gzip: bool| {
        let mut request = http::Request::get(path).header("host", "127.0.0.1:8000");
        if gzip {
            request = request.header("accept-encoding", "gzip");
        }
        request.body(axum::body::Body::empty()).unwrap()
    };
    for path in ["/api/steps", "/api/ipc", "/api/system"] {
        let plain = app.clone().oneshot(get(path, false)).await.unwrap();
        assert_eq!(plain.status(), 200);
        assert!(plain.headers().get("content-encoding").is_none(), "{path}");
        let plain = axum::body::to_bytes(plain.into_body(), usize::MAX)
            .await
            .unwrap();

        let zipped = app.clone().oneshot(get(path, true)).await.unwrap();
        assert_eq!(zipped.status(), 200);
        assert_eq!(
            zipped.headers()["content-encoding"],
            "gzip",
            "{path} is not gzipped"
        );
        assert!(zipped.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json"));
        let zipped = axum::body::to_bytes(zipped.into_body(), usize::MAX)
            .await
            .unwrap();
        let mut unzipped = Vec::new();
        flate2::read::GzDecoder::new(&zipped[..])
            .read_to_end(&mut unzipped)
            .unwrap();
        assert_eq!(unzipped, plain, "{path}: the same JSON once unzipped");
        assert!(
            zipped.len() < plain.len(),
            "{path}: {} bytes gzipped, {} plain",
            zipped.len(),
            plain.len()
        );
    }
}

#[tokio::test]
async fn watch_rebuilds_the_book_when_a_chapter_changes() {
    let book = tempfile::tempdir().unwrap();
    crate::common::write_tiny_book(book.path());
    let state = tempfile::tempdir().unwrap();
    let mut running = Running(
        Command::new(env!("CARGO_BIN_EXE_pipebook"))
            .arg("--book-root")
            .arg(book.path())
            .arg("--state-dir")
            .arg(state.path())
            .args(["--port", "0", "--watch"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    BufReader::new(running.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = parse_port(&line).unwrap_or_else(|| panic!("not serving: {line}"));
    let host = format!("127.0.0.1:{port}");
    let before = http_get(port, "/chapter.html", &host).await;
    assert_eq!(before.status, 200);
    assert!(!before.body.contains("Edited while serving"));

    let chapter = book.path().join("src/chapter.md");
    let text = std::fs::read_to_string(&chapter).unwrap();
    std::fs::write(
        &chapter,
        text.replace("# Chapter", "# Edited while serving"),
    )
    .unwrap();
    // Alone it takes a few seconds; beside the rest of the suite (browsers, runs on
    // both CPUs) a rebuild has taken over 20.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let page = http_get(port, "/chapter.html", &host).await;
        if page.status == 200 && page.body.contains("Edited while serving") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the edited chapter was not served within 60 s"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // A chapter that breaks the build leaves the last good book served.
    std::fs::write(&chapter, "# Broken\n\n{{#run no-such-step}}\n").unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let page = http_get(port, "/chapter.html", &host).await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("Edited while serving"), "{}", page.body);
}
