//! Another local user (`nobody`) reaching the loopback port of a server run by
//! root: a page would hand them the token that makes root run programs, and the
//! lab report export another student's work under their own name. They get a
//! 403 page that says whose server it is and how to start their own, on every
//! path (pages, `/api/*`, the WebSocket); the server's own user is served as
//! before, and `--allow-other-users` opens it on purpose.

use std::process::Command;

use crate::common::{InProcess, Server, NOBODY};

/// `curl` as nobody: the status and body of `path` on `port`, with our Host
/// header and `headers` more.
async fn get_as_nobody(port: u16, path: &str, headers: &[&str]) -> (u16, String) {
    get_as_nobody_at("127.0.0.1", port, path, headers).await
}

/// [`get_as_nobody`] to `ip` (`[::1]` for IPv6).
async fn get_as_nobody_at(ip: &str, port: u16, path: &str, headers: &[&str]) -> (u16, String) {
    let mut command = Command::new("setpriv");
    command
        .args([
            "--reuid",
            &NOBODY.to_string(),
            "--regid",
            &NOBODY.to_string(),
        ])
        .args([
            "--clear-groups",
            "--",
            "curl",
            "-q",
            "-sS",
            "--max-time",
            "10",
        ])
        .args(["-g", "-H", &format!("Host: {ip}:{port}")]);
    for header in headers {
        command.args(["-H", header]);
    }
    command
        .args(["-w", "\n%{http_code}"])
        .arg(format!("http://{ip}:{port}{path}"));
    let output = tokio::task::spawn_blocking(move || command.output().expect("setpriv runs"))
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let (body, status) = text.rsplit_once('\n').expect("curl printed the status");
    (status.trim().parse().expect("a status"), body.to_string())
}

#[tokio::test]
async fn another_local_user_gets_no_page_no_api_no_runner_and_is_told_why() {
    let server = InProcess::start().await;
    let token = server.token().await;
    let port = server.port;
    let upgrade = [
        "Connection: Upgrade",
        "Upgrade: websocket",
        "Sec-WebSocket-Version: 13",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
    ];
    let origin = format!("Origin: http://127.0.0.1:{port}");
    let mut upgrade_headers = upgrade.to_vec();
    upgrade_headers.push(&origin);
    let run_path = format!("/api/run?token={token}");
    let attempts: [(&str, &[&str]); 6] = [
        ("/", &[]),
        ("/chapter.html", &[]),
        ("/api/health", &[]),
        ("/api/results", &[]),
        ("/api/labs/report.json?student=Someone%20Else", &[]),
        (&run_path, &upgrade_headers),
    ];
    for (path, headers) in attempts {
        let (status, body) = get_as_nobody(port, path, headers).await;
        assert_eq!(status, 403, "{path} as nobody: {body}");
        assert!(
            !body.contains(&token),
            "{path}: the refusal leaks the token"
        );
        assert!(body.contains("root (uid 0)"), "{path}: {body}");
        assert!(body.contains("uid 65534"), "{path}: {body}");
        assert!(
            body.contains("cargo run --release -- --port 0"),
            "{path}: {body}"
        );
    }
    // The server's own user (root, as the suite runs) is served as before.
    assert_eq!(server.get("/").await.status, 200);
    assert_eq!(
        server.get("/api/labs/report.json?student=Me").await.status,
        200
    );
    let mut socket = server.socket().await;
    crate::common::send(&mut socket, serde_json::json!({"type": "cancel"})).await;
    drop(socket);
    server.stop().await;
}

#[tokio::test]
async fn allow_other_users_serves_every_local_user_and_says_so_at_start() {
    let state = tempfile::tempdir().unwrap();
    let server =
        Server::start_with_args(state.path(), &["--allow-other-users"]).expect("server starts");
    let (status, body) = get_as_nobody(server.port, "/", &[]).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("pipebook-token"), "{body}");
    assert!(
        server.stderr().contains("--allow-other-users"),
        "{}",
        server.stderr()
    );
}

#[tokio::test]
async fn over_ipv6_loopback_another_user_is_refused_and_the_owner_served() {
    let state = tempfile::tempdir().unwrap();
    let server = Server::start_with_args(state.path(), &[]).expect("server starts");
    if !server.stderr().contains("also listening on http://[::1]") {
        // No IPv6 loopback on this machine: nothing listens there to attack.
        return;
    }
    let (status, body) = get_as_nobody_at("[::1]", server.port, "/api/health", &[]).await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("root (uid 0)"), "{body}");
    let owner = crate::common::http_request_to(
        std::net::SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, server.port)),
        "GET",
        "/api/health",
        &[("host", &format!("[::1]:{}", server.port))],
    )
    .await;
    assert_eq!(owner.status, 200, "{}", owner.body);
}
