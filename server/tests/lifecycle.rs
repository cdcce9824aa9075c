//! Start-up and shutdown: history across restarts, SIGTERM mid-run, busy ports.

mod common;

use std::time::Duration;

use common::{holding_run, pids, recv, recv_until, send, wait_gone, Server, RUN_LOCK};
use serde_json::json;

#[tokio::test]
async fn history_survives_a_restart() {
    let _lock = RUN_LOCK.lock().await;
    let state = tempfile::tempdir().unwrap();
    let mut server = Server::start_with_state(state.path());
    let mut socket = server.socket().await;
    send(
        &mut socket,
        json!({"type":"run","step":"vmsplice-read","params":{"bytes":"8MiB"}}),
    )
    .await;
    let (result, _) = recv_until(&mut socket, "result", Duration::from_secs(10)).await;
    drop(socket);
    let status = server.terminate(Duration::from_secs(5)).expect("exits");
    assert!(status.success(), "{status:?}");
    assert!(state.path().join("results.json").is_file());

    let server = Server::start_with_state(state.path());
    let history = server.get("/api/results").await.json();
    assert_eq!(history.as_array().unwrap().len(), 1);
    assert_eq!(history[0]["step"], "vmsplice-read");
    assert_eq!(history[0]["finished_at_ms"], result["finished_at_ms"]);
    assert_eq!(history[0]["gib_per_s"], result["gib_per_s"]);
}

#[tokio::test]
async fn sigterm_during_a_run_stops_the_ends_and_exits_cleanly() {
    let _lock = RUN_LOCK.lock().await;
    let mut server = Server::start();
    let mut socket = server.socket().await;
    let mut waiting = server.socket().await;
    send(&mut socket, holding_run(30)).await;
    let started = recv(&mut socket).await;
    assert_eq!(started["type"], "started");
    send(&mut waiting, json!({"type":"run","step":"write-read"})).await;
    assert_eq!(recv(&mut waiting).await["type"], "queued");
    let status = server
        .terminate(Duration::from_secs(3))
        .expect("exits within 3 s");
    assert!(status.success(), "{status:?}\n{}", server.stderr());
    assert!(
        wait_gone(&pids(&started), Duration::from_secs(1)).is_some(),
        "ends outlived the server"
    );
    // Both pages were told why.
    for page in [&mut waiting, &mut socket] {
        let (error, _) = recv_until(page, "error", Duration::from_secs(2)).await;
        assert!(error["message"].as_str().unwrap().contains("shutting down"));
    }
}

#[tokio::test]
async fn a_busy_port_is_explained() {
    let first = Server::start();
    let state = tempfile::tempdir().unwrap();
    let port = first.port.to_string();
    let stderr = Server::start_with_args(state.path(), &["--port", &port])
        .err()
        .expect("the second server must not start");
    assert!(stderr.contains("already in use"), "{stderr}");
    assert!(stderr.contains("--port"), "{stderr}");
}

#[tokio::test]
async fn a_non_loopback_bind_warns() {
    let state = tempfile::tempdir().unwrap();
    let server = Server::start_with_args(state.path(), &["--bind", "0.0.0.0"]).unwrap();
    assert!(
        server.stderr().contains("not a loopback address"),
        "{}",
        server.stderr()
    );
    // Loopback names still work on a wildcard bind.
    assert_eq!(server.get("/api/health").await.status, 200);
}
