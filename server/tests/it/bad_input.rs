//! Whatever a page sends, it gets a clear `error` and the connection and the
//! server stay usable.

use std::time::Duration;

use crate::common::{
    close_code, expect_error, expect_refused, holding_run, recv, recv_until, run_message, send,
    Endpoint, InProcess, RUN_LOCK,
};
use futures_util::{SinkExt, StreamExt};
use serde_json::json;
use tokio_tungstenite::tungstenite::Message;

async fn a_tiny_run_still_works(socket: &mut crate::common::Socket) {
    send(socket, run_message("write-read", json!({"bytes":"1MiB"}))).await;
    let (result, _) = recv_until(socket, "result", Duration::from_secs(10)).await;
    assert_eq!(result["bytes"], 1 << 20);
}

#[tokio::test]
async fn bad_messages_get_errors_and_the_connection_survives() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let mut socket = server.socket().await;
    let cases = [
        (
            json!({"type":"run","step":"rm -rf /"}),
            "unknown step `rm -rf /`; known steps: write-read",
        ),
        (
            run_message("write-read", json!({"bytes":"1TiB"})),
            "bytes = 1099511627776 bytes (1TiB) is out of range",
        ),
        (
            run_message("write-read", json!({"bytes":0})),
            "bytes = 0 bytes is out of range",
        ),
        (
            run_message("write-read", json!({"buf_size":1})),
            "buf_size = 1 bytes is out of range",
        ),
        (
            run_message("write-read", json!({"buf_size":"1GiB"})),
            "buf_size = 1073741824 bytes (1GiB) is out of range",
        ),
        (
            run_message("write-read", json!({"buf_size":12345})),
            "buf_size = 12345 bytes (12.056KiB) must be a multiple of 4096 bytes",
        ),
        (
            run_message("write-read", json!({"buf_size":"10KiB"})),
            "buf_size = 10240 bytes (10KiB) must be a multiple of 4096 bytes",
        ),
        // The exact value sent, never rounded onto 4 KiB.
        (
            run_message("write-read", json!({"buf_size":4095})),
            "buf_size = 4095 bytes (3.999KiB) is out of range",
        ),
        (
            run_message("write-read", json!({"buf_size":4097})),
            "buf_size = 4097 bytes (4.001KiB) must be a multiple of 4096 bytes",
        ),
        (
            run_message("write-read", json!({"pipe_size":"1TiB"})),
            "pipe_size = 1099511627776 bytes (1TiB) is out of range",
        ),
        (
            run_message("write-read", json!({"seconds":0})),
            "seconds = 0 is out of range",
        ),
        (
            run_message("write-read", json!({"seconds":1e9})),
            "out of range",
        ),
        (
            run_message("write-read", json!({"seconds":-1})),
            "out of range",
        ),
        (
            run_message("write-read", json!({"writer_cpu":4096})),
            "writer_cpu = 4096",
        ),
        (
            run_message("write-read", json!({"bytes":"lots"})),
            "`params.bytes`",
        ),
        (
            run_message("write-read", json!({"bytes":true})),
            "expected a number of bytes",
        ),
        (
            run_message("write-read", json!({"bytes":-5})),
            "`params.bytes`",
        ),
        (
            run_message("write-read", json!({"seconds":"soon"})),
            "`params.seconds`",
        ),
        (
            run_message("write-read", json!({"verify":"yes"})),
            "`params.verify`",
        ),
        (
            run_message("write-read", json!({"command":"sh"})),
            "unknown field `command`",
        ),
        (run_message("write-read", json!([1, 2])), "`params`"),
        (json!({"type":"run","step":42}), "`step`"),
        (json!({"type":"run"}), "`step`"),
        (json!({"type":"explode"}), "unknown message type `explode`"),
        (json!({"step":"write-read"}), "missing `type`"),
        (json!([1, 2, 3]), "JSON object"),
        (json!("run"), "JSON object"),
        (json!({"type":"cancel"}), "no run to cancel"),
    ];
    for (message, expected) in cases {
        expect_refused(&mut socket, message, expected).await;
    }
    socket
        .send(Message::Text("{not json".into()))
        .await
        .unwrap();
    expect_error(&mut socket, "not valid JSON").await;
    socket
        .send(Message::Binary(vec![0u8; 100].into()))
        .await
        .unwrap();
    expect_error(&mut socket, "binary messages are not understood").await;
    let big = format!(
        r#"{{"type":"run","step":"write-read","pad":"{}"}}"#,
        "x".repeat(40_000)
    );
    socket.send(Message::Text(big.into())).await.unwrap();
    expect_error(&mut socket, "message too large").await;
    a_tiny_run_still_works(&mut socket).await;
}

#[tokio::test]
async fn a_flood_of_runs_gets_one_run_and_errors_for_the_rest() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let mut socket = server.socket().await;
    let run = holding_run(10).to_string();
    for _ in 0..300 {
        socket
            .feed(Message::Text(run.clone().into()))
            .await
            .unwrap();
    }
    socket.flush().await.unwrap();
    let mut started = None;
    let mut errors = 0;
    while errors < 299 || started.is_none() {
        let message = recv(&mut socket).await;
        match message["type"].as_str().unwrap() {
            "started" => started = Some(message),
            "progress" => {}
            "error" => {
                assert!(
                    message["message"]
                        .as_str()
                        .unwrap()
                        .contains("already has a run"),
                    "{message}"
                );
                errors += 1;
            }
            other => panic!("{other}: {message}"),
        }
    }
    assert_eq!(
        server.get("/api/health").await.json()["queued"],
        0,
        "a flood queues nothing"
    );
    send(&mut socket, json!({"type":"cancel"})).await;
    recv_until(&mut socket, "cancelled", Duration::from_secs(2)).await;
    let pids = crate::common::pids(&started.unwrap());
    assert!(crate::common::wait_gone(&pids, Duration::from_secs(1))
        .await
        .is_some());
    a_tiny_run_still_works(&mut socket).await;
}

#[tokio::test]
async fn a_huge_message_closes_only_its_own_connection() {
    let server = InProcess::start().await;
    let mut bystander = server.socket().await;
    let mut socket = server.socket().await;
    let huge = "x".repeat(1 << 20);
    let _ = socket.send(Message::Text(huge.into())).await;
    // The server drops the connection instead of buffering a megabyte...
    let closed = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match socket.next().await {
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return true,
                Some(Ok(_)) => {}
            }
        }
    })
    .await;
    assert_eq!(closed, Ok(true));
    // ...and everyone else carries on.
    assert_eq!(server.get("/api/health").await.json()["status"], "ok");
    expect_refused(&mut bystander, json!({"type":"cancel"}), "no run to cancel").await;
}

/// A socket whose own limits let it send (and read) messages of any size.
async fn unlimited_socket(server: &Endpoint) -> crate::common::Socket {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
    let token = server.token().await;
    let mut request = format!("ws://127.0.0.1:{}/api/run?token={token}", server.port)
        .into_client_request()
        .unwrap();
    request
        .headers_mut()
        .insert("Origin", server.origin().parse().unwrap());
    let config = WebSocketConfig::default()
        .max_message_size(Some(64 << 20))
        .max_frame_size(Some(64 << 20));
    tokio_tungstenite::connect_async_with_config(request, Some(config), false)
        .await
        .expect("websocket opens")
        .0
}

#[tokio::test]
async fn a_message_over_64_kib_gets_close_1009() {
    let server = InProcess::start().await;
    // The whole message, 65,537 bytes.
    let mut socket = unlimited_socket(&server).await;
    let too_big = "x".repeat(64 * 1024 + 1);
    let _ = socket.send(Message::Text(too_big.into())).await;
    let (code, reason) = close_code(&mut socket).await.expect("a close frame");
    assert_eq!(code, 1009, "{reason}");
    assert!(reason.contains("65536"), "{reason}");

    // Only a frame header claiming 65,537 bytes: refused before the payload.
    let mut socket = unlimited_socket(&server).await;
    let mut header = vec![0x81, 0x80 | 127];
    header.extend_from_slice(&(64 * 1024 + 1u64).to_be_bytes());
    header.extend_from_slice(&[1, 2, 3, 4]);
    let raw = match socket.get_mut() {
        tokio_tungstenite::MaybeTlsStream::Plain(stream) => stream,
        _ => unreachable!("plain ws://"),
    };
    tokio::io::AsyncWriteExt::write_all(raw, &header)
        .await
        .unwrap();
    let (code, reason) = close_code(&mut socket).await.expect("a close frame");
    assert_eq!(code, 1009, "{reason}");

    // Everyone else carries on.
    assert_eq!(server.get("/api/health").await.json()["status"], "ok");
}

/// The bounds `/api/params` publishes for the cards' own fields are the ones the
/// runner holds the messages to: one past either end is refused before anything
/// runs, and the largest is taken (its run is cancelled at once).
#[tokio::test]
async fn the_cards_published_bounds_are_the_runners_own() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let params = server.get("/api/params").await.json();
    type Message = fn(u64) -> serde_json::Value;
    let cases: [(&str, Message); 5] = [
        (
            "/compare/pairs",
            |n| json!({"type":"compare","a":"busy-loop","b":"write-read","pairs":n,"params":{"bytes":"1MiB"}}),
        ),
        (
            "/compare/budget",
            |n| json!({"type":"compare","a":"busy-loop","b":"write-read","pairs":6,"budget":n,"params":{"bytes":"1MiB"}}),
        ),
        (
            "/latency/round_trips",
            |n| json!({"type":"latency","mechanism":"pipe","round_trips":n}),
        ),
        (
            "/latency/matrix_round_trips",
            |n| json!({"type":"latency","mechanism":"pipe","round_trips":n}),
        ),
        ("/sweep/repeats", |n| {
            json!({"type":"sweep","step":"write-read","param":"pipe_size","values":[65536],
                   "repeats":n,"params":{"bytes":"1MiB"}})
        }),
    ];
    for (path, message) in cases {
        let bound = params
            .pointer(path)
            .unwrap_or_else(|| panic!("{path} in {params}"));
        let (min, max) = (
            bound["min"].as_u64().unwrap(),
            bound["max"].as_u64().unwrap(),
        );
        let start = bound["start"].as_u64().unwrap();
        assert!((min..=max).contains(&start), "{path}: {bound}");
        let mut socket = server.socket().await;
        for refused in [min - 1, max + 1] {
            send(&mut socket, message(refused)).await;
            let reply = recv(&mut socket).await;
            assert_eq!(reply["type"], "error", "{path} = {refused}: {reply}");
            assert!(reply.get("run").is_none(), "{path} = {refused}: {reply}");
        }
        send(&mut socket, message(max)).await;
        let reply = recv(&mut socket).await;
        assert_ne!(reply["type"], "error", "{path} = {max}: {reply}");
        assert!(reply["run"].is_u64(), "{path} = {max}: {reply}");
        send(&mut socket, json!({"type":"cancel"})).await;
        recv_until(&mut socket, "cancelled", Duration::from_secs(30)).await;
    }
}
