//! The HTTP side of the real server: API, pages, headers, Host checks.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::common::{
    http_get, http_request, http_request_to, send_request, InProcess, Server, Tiny,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[tokio::test]
async fn api_endpoints_answer_json() {
    let server = InProcess::start().await;
    let health = server.get("/api/health").await;
    assert_eq!(health.status, 200);
    assert_eq!(health.header("content-type"), Some("application/json"));
    let health = health.json();
    assert_eq!(health["status"], "ok");
    assert_eq!(health["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(health["running"], false);
    assert_eq!(health["queued"], 0);

    let steps = server.get("/api/steps").await.json();
    let ids: Vec<&str> = steps
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        &ids[..5],
        [
            "write-read",
            "vmsplice-read",
            "vmsplice-splice",
            "huge-pages",
            "busy-loop"
        ]
    );
    assert_eq!(steps[0]["article_gib_s"], 3.7);

    let system = server.get("/api/system").await.json();
    assert!(!system["kernel"].as_str().unwrap().is_empty());
    assert!(system["cpus_online"].as_u64().unwrap() >= 1);
    assert!(system.get("thp_mode").is_some() && system.get("pipe_max_size").is_some());
    // The findings come with the facts, each with its evidence.
    let findings = system["findings"].as_array().expect("findings are listed");
    assert!(findings.len() >= 3, "{findings:?}");
    for f in findings {
        for key in ["id", "title", "evidence", "effect"] {
            assert!(!f[key].as_str().unwrap_or("").is_empty(), "{key} in {f}");
        }
    }
    assert!(findings
        .iter()
        .any(|f| f["id"].as_str().unwrap().starts_with("kernel-")));
    assert!(system["cpu_topology"]
        .as_array()
        .is_some_and(|t| !t.is_empty()));

    let results = server.get("/api/results").await;
    assert_eq!(results.status, 200);
    assert_eq!(results.json(), serde_json::json!([]));
}

#[tokio::test]
async fn pages_carry_token_csp_and_no_cors() {
    let server = InProcess::start().await;
    let page = server.get("/chapter.html").await;
    assert_eq!(page.status, 200);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert!(
        page.body
            .contains("<head><meta name=\"pipebook-token\" content=\""),
        "token right after <head>"
    );
    assert!(page.body.contains("data-step=\"vmsplice-splice\""));
    let csp = page
        .header("content-security-policy")
        .expect("CSP on pages");
    for directive in [
        "default-src 'self'",
        "script-src 'self' 'sha256-",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
    ] {
        assert!(csp.contains(directive), "{directive} missing from {csp}");
    }
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
    // Never reused without asking, never kept by a shared cache; not no-store,
    // which would keep the back/forward cache from restoring a page.
    assert_eq!(page.header("cache-control"), Some("no-cache, private"));

    // The token is the same on every page of one start.
    let token = server.token().await;
    assert!(page.body.contains(&token));

    // A cross-origin request gets no CORS permission, anywhere.
    for path in ["/", "/api/health", "/api/results", "/css/", "/nope"] {
        let response = http_request(
            server.port,
            "GET",
            path,
            &[("host", &server.host()), ("origin", "http://evil.example")],
        )
        .await;
        assert!(
            !response
                .headers
                .keys()
                .any(|k| k.starts_with("access-control-")),
            "{path}: {:?}",
            response.headers
        );
        assert_eq!(
            response.header("x-content-type-options"),
            Some("nosniff"),
            "{path}"
        );
    }
    let preflight = http_request(
        server.port,
        "OPTIONS",
        "/api/results",
        &[
            ("host", &server.host()),
            ("origin", "http://evil.example"),
            ("access-control-request-method", "GET"),
        ],
    )
    .await;
    assert!(!preflight
        .headers
        .keys()
        .any(|k| k.starts_with("access-control-")));
}

#[tokio::test]
async fn static_files_directories_and_missing_pages() {
    let server = InProcess::start().await;
    // mdBook fingerprints its static files: find the stylesheet's name in a page
    // (the print sheet: screen sheets are inlined into the pages).
    let root = server.get("/").await;
    assert_eq!(root.status, 200);
    assert!(root.body.contains("pipebook-system"));
    let start = root.body.find("href=\"css/print").expect("stylesheet link") + 6;
    let href = &root.body[start..start + root.body[start..].find('"').unwrap()];
    let css = server.get(&format!("/{href}")).await;
    assert_eq!(css.status, 200);
    assert_eq!(css.header("content-type"), Some("text/css; charset=utf-8"));
    assert!(css.header("content-security-policy").is_none());
    let css_dir = server.get("/css").await;
    assert_eq!(css_dir.status, 308);
    assert_eq!(css_dir.header("location"), Some("/css/"));
    let missing = server.get("/no/such/page.html").await;
    assert_eq!(missing.status, 404);
    assert!(missing.header("content-security-policy").is_some());
    for sneaky in [
        "/../Cargo.toml",
        "/%2e%2e/book.toml",
        "/css/..%2f..%2fbook.toml",
        "//etc/passwd",
    ] {
        let response = server.get(sneaky).await;
        assert_eq!(response.status, 404, "{sneaky}");
    }
}

#[tokio::test]
async fn foreign_host_names_are_refused() {
    let server = InProcess::start().await;
    for host in [
        "localhost",
        "localhost:PORT",
        "127.0.0.1:PORT",
        "[::1]:PORT",
    ] {
        let host = host.replace("PORT", &server.port.to_string());
        let response = http_get(server.port, "/api/health", &host).await;
        assert_eq!(response.status, 200, "{host}");
    }
    for host in [
        "evil.example:PORT",
        "evil.example",
        "localhost:1",
        "127.0.0.1.evil.example:PORT",
    ] {
        let host = host.replace("PORT", &server.port.to_string());
        for path in ["/", "/chapter.html", "/api/health", "/api/results"] {
            let response = http_get(server.port, path, &host).await;
            assert_eq!(response.status, 403, "{host}{path}");
            assert!(response.body.contains("DNS rebinding"), "{}", response.body);
            assert!(!response.body.contains("pipebook-token"));
        }
    }
    // HTTP/1.0 allows a request without a Host: the rule refuses it all the same.
    let no_host = send_request(
        http::Request::get(format!("http://127.0.0.1:{}/", server.port))
            .version(http::Version::HTTP_10)
            .body(String::new())
            .unwrap(),
    )
    .await;
    assert_eq!(no_host.status, 403);
}

/// The router alone, as axum's testing example calls it: the Host rule and the
/// page's headers hold without a socket in between.
#[tokio::test]
async fn the_router_alone_checks_the_host_and_sets_page_headers() {
    use tower::ServiceExt;
    let tiny = Tiny::prepare(8000).await;
    let app = pipebook::http::app::router(tiny.prepared.state);
    let request = |host: &str, path: &str| {
        http::Request::get(path)
            .header("host", host)
            .body(axum::body::Body::empty())
            .unwrap()
    };
    let foreign = app
        .clone()
        .oneshot(request("evil.example:8000", "/api/health"))
        .await
        .unwrap();
    assert_eq!(foreign.status(), 403);
    let page = app
        .oneshot(request("127.0.0.1:8000", "/chapter.html"))
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    let csp = page.headers()["content-security-policy"].to_str().unwrap();
    assert!(csp.contains("script-src"), "{csp}");
    assert!(page.headers().get("access-control-allow-origin").is_none());
}

#[tokio::test]
async fn idle_memory_is_small() {
    let server = Server::start();
    let _ = server.get("/").await;
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.pid())).unwrap();
    let rss_kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    // Debug builds are bigger than release; this only catches gross regressions.
    assert!(rss_kib < 60 * 1024, "idle RSS {rss_kib} KiB");
}

#[tokio::test]
async fn idle_connections_cannot_lock_others_out_under_a_low_fd_limit() {
    let state = tempfile::tempdir().unwrap();
    // A header timeout far longer than the wait below: health must not wait
    // for idle connections to time out, the oldest idle ones make room.
    let server = Server::start_limited(state.path(), &["--header-timeout", "60"], Some(256))
        .expect("server starts with 256 open files");
    // More idle sockets than the server has descriptors.
    let mut idle = Vec::new();
    for _ in 0..300 {
        idle.push(
            TcpStream::connect(("127.0.0.1", server.port))
                .await
                .unwrap(),
        );
    }
    let asked = Instant::now();
    let health = server.get("/api/health").await;
    assert_eq!(health.status, 200);
    assert!(
        asked.elapsed() < Duration::from_secs(8),
        "answered after {:?}",
        asked.elapsed()
    );
    assert_eq!(server.get("/").await.status, 200);
    drop(idle);
    assert!(
        !server.stderr().contains("Too many open files"),
        "{}",
        server.stderr()
    );
}

/// Whether the server closes `stream` within `within`.
async fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
    let mut buf = [0u8; 4096];
    tokio::time::timeout(within, async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await
    .is_ok()
}

#[tokio::test]
async fn idle_and_slow_connections_are_closed_after_the_header_timeout() {
    let state = tempfile::tempdir().unwrap();
    let server = Server::start_with_args(state.path(), &["--header-timeout", "1"]).unwrap();
    // Sends nothing at all.
    let mut silent = TcpStream::connect(("127.0.0.1", server.port))
        .await
        .unwrap();
    // Sends a header a byte at a time, never finishing it.
    let mut slow = TcpStream::connect(("127.0.0.1", server.port))
        .await
        .unwrap();
    let dripping = tokio::spawn(async move {
        for byte in b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: aaaaaaaaaaaaaaaa".iter() {
            if slow.write_all(&[*byte]).await.is_err() {
                // The server hung up mid-header.
                return true;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        closed_within(&mut slow, Duration::from_secs(3)).await
    });
    // Asks once, keeps the connection alive, then says nothing more.
    let mut kept = TcpStream::connect(("127.0.0.1", server.port))
        .await
        .unwrap();
    let request = format!(
        "GET /api/health HTTP/1.1\r\nHost: {}\r\n\r\n",
        server.host()
    );
    kept.write_all(request.as_bytes()).await.unwrap();
    let mut buf = [0u8; 4096];
    let n = kept.read(&mut buf).await.unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 200"));

    assert!(
        closed_within(&mut silent, Duration::from_secs(3)).await,
        "silent socket kept open"
    );
    assert!(
        closed_within(&mut kept, Duration::from_secs(3)).await,
        "idle keep-alive kept open"
    );
    assert!(dripping.await.unwrap(), "slow header kept open");
    // Nobody else is affected.
    assert_eq!(server.get("/api/health").await.status, 200);
}

#[tokio::test]
async fn loopback_ipv6_answers_too() {
    // The binary: it is `serve` that also listens on [::1].
    let server = Server::start();
    let v6 = SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, server.port));
    for host in ["[::1]:PORT", "localhost:PORT"] {
        let host = host.replace("PORT", &server.port.to_string());
        let response = http_request_to(v6, "GET", "/api/health", &[("host", &host)]).await;
        assert_eq!(response.status, 200, "{host}");
        assert_eq!(response.json()["status"], "ok");
    }
    // The same Host checks hold on IPv6.
    let foreign = http_request_to(v6, "GET", "/api/health", &[("host", "evil.example")]).await;
    assert_eq!(foreign.status, 403);
}
