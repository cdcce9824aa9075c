//! Connections that hold the server's slots without using them: a WebSocket
//! message that never ends, WebSockets that say nothing, more idle TCP
//! connections than the server has descriptors. A new page must still get in,
//! a page watching a long run must not be cut, and the server must take every
//! descriptor its user may have.

use std::time::{Duration, Instant};

use crate::common::{
    close_code, recv, recv_until, send, start_holding_run, Server, Socket, RUN_LOCK,
};
use futures_util::StreamExt;
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;

/// The TCP stream under a client WebSocket.
fn raw(socket: &mut Socket) -> &mut TcpStream {
    match socket.get_mut() {
        tokio_tungstenite::MaybeTlsStream::Plain(stream) => stream,
        _ => unreachable!("plain ws://"),
    }
}

/// Starts a text frame announcing 1000 bytes, masked as a client's must be,
/// and sends its first byte: a message that has begun.
async fn begin_message(socket: &mut Socket) {
    let mut header = vec![0x81, 0x80 | 126];
    header.extend_from_slice(&1000u16.to_be_bytes());
    header.extend_from_slice(&[1, 2, 3, 4, b'{']);
    raw(socket).write_all(&header).await.unwrap();
}

/// Sends one more byte of the message every 200 ms until the server closes
/// the socket; returns the close code it sent.
async fn trickle(mut socket: Socket) -> Option<(u16, String)> {
    let stop = Instant::now() + Duration::from_secs(20);
    while Instant::now() < stop {
        let _ = raw(&mut socket).write_all(b" ").await;
        match tokio::time::timeout(Duration::from_millis(200), socket.next()).await {
            Err(_) => {}
            Ok(Some(Ok(Message::Close(frame)))) => {
                return frame.map(|f| (u16::from(f.code), f.reason.to_string()))
            }
            Ok(None | Some(Err(_))) => return None,
            Ok(Some(Ok(_))) => {}
        }
    }
    panic!("a message trickling for 20 s is still being read");
}

#[tokio::test]
async fn a_message_that_never_ends_and_a_silent_socket_are_closed_but_a_watched_run_is_not() {
    let _lock = RUN_LOCK.lock().await;
    let state = tempfile::tempdir().unwrap();
    let server = Server::start_with_args(
        state.path(),
        &["--ws-message-timeout", "1", "--ws-idle-timeout", "2"],
    )
    .unwrap();
    let mut watching = server.socket().await;
    start_holding_run(&mut watching, 4).await;
    let mut trickling = server.socket().await;
    begin_message(&mut trickling).await;
    let mut silent = server.socket().await;

    let started = Instant::now();
    let (code, reason) = trickle(trickling).await.expect("a close frame");
    assert_eq!(code, 1008, "{reason}");
    assert!(reason.contains("took more than 1 s"), "{reason}");
    assert!(started.elapsed() < Duration::from_secs(8));
    let (code, reason) = tokio::time::timeout(Duration::from_secs(8), close_code(&mut silent))
        .await
        .unwrap()
        .expect("a close frame");
    assert_eq!(code, 1000, "{reason}");
    assert!(reason.contains("idle for 2 s with no run"), "{reason}");

    // Longer than the idle timeout, but it has a run: it gets its result.
    let (result, _) = recv_until(&mut watching, "result", Duration::from_secs(20)).await;
    assert!(result["bytes"].as_u64().unwrap() > 0);
    let (saved, _) = recv_until(&mut watching, "saved", Duration::from_secs(10)).await;
    assert_eq!(saved["run"], result["run"]);
}

#[tokio::test]
async fn at_the_websocket_cap_stale_sockets_make_room_and_busy_ones_are_kept() {
    let _lock = RUN_LOCK.lock().await;
    let state = tempfile::tempdir().unwrap();
    let server = Server::start_with_args(state.path(), &["--max-websockets", "3"]).unwrap();
    let token = server.token().await;
    // Every slot held: a page watching a run, a socket stuck mid-message and
    // a silent one.
    let mut watching = server.socket().await;
    start_holding_run(&mut watching, 30).await;
    let mut stuck = server.socket().await;
    begin_message(&mut stuck).await;
    let mut silent = server.socket().await;
    // Long enough for the server to see the message has begun.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    // A new page gets in at once: the stuck socket made room first...
    let mut newcomer = server
        .socket_with(Some(&server.origin()), Some(&token), None)
        .await
        .expect("a new page gets in");
    send(&mut newcomer, json!({"type":"cancel"})).await;
    assert_eq!(recv(&mut newcomer).await["type"], "error");
    let (code, reason) = close_code(&mut stuck).await.expect("a close frame");
    assert_eq!(code, 1013, "{reason}");
    assert!(reason.contains("made room for a newer page"), "{reason}");
    // ...then the silent one, for the next page.
    let mut second = server
        .socket_with(Some(&server.origin()), Some(&token), None)
        .await
        .expect("another new page gets in");
    assert_eq!(close_code(&mut silent).await.map(|c| c.0), Some(1013));
    // Now every socket has a run (one running, two queued): nobody is
    // dropped, and the next page is told why it must wait.
    send(&mut newcomer, crate::common::holding_run(30)).await;
    assert_eq!(recv(&mut newcomer).await["type"], "queued");
    send(&mut second, crate::common::holding_run(30)).await;
    assert_eq!(recv(&mut second).await["type"], "queued");
    let refused = server
        .socket_with(Some(&server.origin()), Some(&token), None)
        .await;
    assert_eq!(refused.err(), Some(503));
    let raw = crate::common::http_request(
        server.port,
        "GET",
        &format!("/api/run?token={token}"),
        &crate::common::upgrade_headers(&server.host(), &server.origin()),
    )
    .await;
    assert_eq!(raw.status, 503);
    assert!(raw.body.contains("each with a run"), "{}", raw.body);
    // The busy ones were never closed: each can still cancel its run.
    for socket in [&mut watching, &mut newcomer, &mut second] {
        send(socket, json!({"type":"cancel"})).await;
        recv_until(socket, "cancelled", Duration::from_secs(10)).await;
    }
}

/// The soft and hard open-file limits of a running process.
fn open_file_limits(pid: u32) -> (u64, u64) {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    let mut numbers = line
        .split_whitespace()
        .filter_map(|word| word.parse::<u64>().ok());
    (numbers.next().unwrap(), numbers.next().unwrap())
}

#[tokio::test]
async fn the_descriptor_limit_is_raised_to_the_hard_limit_at_start() {
    let state = tempfile::tempdir().unwrap();
    let server = Server::start_with_setup(state.path(), &[], || {
        let rlimit = libc::rlimit {
            rlim_cur: 64,
            rlim_max: 4096,
        };
        // SAFETY: setrlimit is async-signal-safe.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &rlimit) } == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    })
    .expect("the server starts");
    assert_eq!(open_file_limits(server.pid()), (4096, 4096));
    // With 64 descriptors the caps would have been one connection; now many
    // clients are served at once.
    let mut clients = Vec::new();
    for _ in 0..100 {
        clients.push(
            TcpStream::connect(("127.0.0.1", server.port))
                .await
                .unwrap(),
        );
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let asked = Instant::now();
    assert_eq!(server.get("/api/health").await.status, 200);
    assert!(asked.elapsed() < Duration::from_secs(5));
    assert!(
        !server.stderr().contains("serving at most"),
        "{}",
        server.stderr()
    );
}
