//! The edges of the HTTP API and of the shared pipe's message, pushed by a
//! client that is allowed in: a URL of 70,000 characters, Range headers
//! (valid, past the end, several at once) on the API and the book's files,
//! HEAD on both, and a shared-pipe sweep of long lists (writers x readers x
//! sizes: every combination would run). Each is answered with a bounded,
//! clear status or refusal; nothing is queued and the server keeps serving.

use serde_json::json;

use crate::common::{http_request, recv, send, InProcess};

/// The status of `GET path` sent as raw bytes (the HTTP client refuses to
/// build a URL this long, which is the point).
async fn raw_status(port: u16, path: &str, host: &str) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    // The server may answer and close before it has read the whole line.
    let _ = stream.write_all(request.as_bytes()).await;
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        stream.read_to_end(&mut answer),
    )
    .await
    .expect("answered within 10 s");
    let text = String::from_utf8_lossy(&answer);
    text.split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status in {text:?}"))
}

#[tokio::test]
async fn long_urls_ranges_and_head_get_bounded_answers_and_harm_nothing() {
    let server = InProcess::start().await;
    let port = server.port;
    let host = server.host();
    let long = format!("/api/health?x={}", "a".repeat(70_000));
    assert_eq!(raw_status(port, &long, &host).await, 414);
    let deep = format!("/{}", "a/".repeat(40_000));
    assert_eq!(raw_status(port, &deep, &host).await, 414);
    // The API ignores Range: the whole answer, as JSON.
    let ranged = http_request(
        port,
        "GET",
        "/api/steps",
        &[("host", &host), ("range", "bytes=0-5")],
    )
    .await;
    assert_eq!(ranged.status, 200);
    assert!(ranged.json().is_array() || ranged.json().is_object());
    // A book file honours one range, refuses what it cannot give.
    // A script the page loads (its name carries a hash of its content).
    let page = server.get("/").await.body;
    let at = page
        .find("src=\"elasticlunr")
        .expect("the page loads a script")
        + 5;
    let name = &page[at..at + page[at..].find('"').unwrap()];
    let file = &format!("/{name}");
    let whole = http_request(port, "GET", file, &[("host", &host)]).await;
    assert_eq!(whole.status, 200, "{file}");
    let part = http_request(
        port,
        "GET",
        file,
        &[("host", &host), ("range", "bytes=0-5")],
    )
    .await;
    assert_eq!((part.status, part.body.len()), (206, 6));
    for bad in [
        "bytes=99999999999999999999-",
        "bytes=0-1,2-3",
        "bytes=9-2",
        "lines=1-2",
    ] {
        let answer = http_request(port, "GET", file, &[("host", &host), ("range", bad)]).await;
        assert!(
            answer.status == 416 || (answer.status == 200 && answer.body == whole.body),
            "{bad}: {}",
            answer.status
        );
    }
    // HEAD: the status and headers, no body.
    for path in ["/api/health", "/api/results", "/", file] {
        let head = http_request(port, "HEAD", path, &[("host", &host)]).await;
        assert_eq!(head.status, 200, "{path}");
        assert!(head.body.is_empty(), "{path}");
    }
    assert_eq!(server.get("/api/health").await.status, 200);
}

#[tokio::test]
async fn a_shared_pipe_sweep_of_long_lists_is_refused_before_it_runs() {
    let server = InProcess::start().await;
    let mut socket = server.socket().await;
    let many: Vec<u64> = vec![1; 5_000];
    let cases = [
        (
            json!({"type":"shared_pipe","writers":many,"readers":[1],"msg_sizes":[64]}),
            "= 5000 is out of range",
        ),
        (
            json!({"type":"shared_pipe","writers":[1,2,3,4,5,6,7,8],"readers":[1,2,3,4],"msg_sizes":[64,128,256]}),
            "= 96 is out of range",
        ),
        (
            json!({"type":"shared_pipe","writers":[17],"readers":[1],"msg_sizes":[64]}),
            "counts from 1 to",
        ),
        (
            json!({"type":"shared_pipe","writers":[1],"readers":[0],"msg_sizes":[64]}),
            "counts from 1 to",
        ),
        (
            json!({"type":"shared_pipe","writers":[1],"readers":[1],"msg_sizes":["1GiB"]}),
            "multiples of 8",
        ),
    ];
    for (message, says) in cases {
        send(&mut socket, message.clone()).await;
        let reply = recv(&mut socket).await;
        assert_eq!(reply["type"], "error", "{reply}");
        let text = reply["message"].as_str().unwrap();
        assert!(text.contains(says), "{says:?} in {text:?}");
        assert!(text.len() < 400, "a refusal a page long: {}", text.len());
    }
    let health = server.get("/api/health").await.json();
    assert_eq!(health["queued"], 0, "{health}");
    assert!(
        health
            .get("running")
            .is_none_or(|r| r.is_null() || r == false),
        "{health}"
    );
}
