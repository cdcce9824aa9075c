//! Who may open the runner's WebSocket.

use crate::common::{http_request, recv, send, upgrade_headers, InProcess};
use serde_json::json;

#[tokio::test]
async fn only_our_pages_with_the_token_may_connect() {
    let server = InProcess::start().await;
    let token = server.token().await;
    let ours = server.origin();
    let localhost = format!("http://localhost:{}", server.port);

    // Our own origin (any of our names) with the right token: accepted.
    for origin in [ours.as_str(), localhost.as_str()] {
        let mut socket = server
            .socket_with(Some(origin), Some(&token), None)
            .await
            .unwrap();
        send(&mut socket, json!({"type": "cancel"})).await;
        assert_eq!(recv(&mut socket).await["type"], "error");
    }

    // Foreign or missing Origin: 403, even with the token.
    for origin in [
        Some("http://evil.example"),
        Some(&*format!("http://evil.example:{}", server.port)),
        Some("null"),
        Some(&*format!("https://127.0.0.1:{}", server.port)),
        Some("http://127.0.0.1:1"),
        None,
    ] {
        let refused = server.socket_with(origin, Some(&token), None).await;
        assert_eq!(refused.err(), Some(403), "{origin:?}");
    }

    // Missing or wrong token: 403, even from our origin.
    let wrong = "0".repeat(64);
    for token in [None, Some(""), Some(wrong.as_str()), Some(&token[..63])] {
        let refused = server.socket_with(Some(&ours), token, None).await;
        assert_eq!(refused.err(), Some(403), "{token:?}");
    }

    // A rebinding attack's Host (with a matching Origin): 403.
    let evil = format!("evil.example:{}", server.port);
    let refused = server
        .socket_with(Some(&format!("http://{evil}")), Some(&token), Some(&evil))
        .await;
    assert_eq!(refused.err(), Some(403));

    // The same over raw HTTP, to see the plain reason.
    let raw = http_request(
        server.port,
        "GET",
        &format!("/api/run?token={token}"),
        &upgrade_headers(&server.host(), "http://evil.example"),
    )
    .await;
    assert_eq!(raw.status, 403);
    assert!(raw.body.contains("Origin"), "{}", raw.body);
}

#[tokio::test]
async fn the_token_changes_on_every_start() {
    let first = InProcess::start().await;
    let second = InProcess::start().await;
    let (a, b) = (first.token().await, second.token().await);
    assert_ne!(a, b);
    let refused = second
        .socket_with(Some(&second.origin()), Some(&a), None)
        .await;
    assert_eq!(refused.err(), Some(403));
}
