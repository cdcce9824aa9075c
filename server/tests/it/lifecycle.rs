//! Start-up and shutdown: history across restarts, SIGTERM mid-run, busy ports.

use std::time::Duration;

use crate::common::{
    holding_run, pids, recv, recv_until, run_message, send, wait_gone, Server, RUN_LOCK,
};
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;

#[tokio::test]
async fn history_survives_a_restart() {
    let _lock = RUN_LOCK.lock().await;
    let state = tempfile::tempdir().unwrap();
    let mut server = Server::start_with_state(state.path());
    let mut socket = server.socket().await;
    send(
        &mut socket,
        run_message("vmsplice-read", json!({"bytes":"8MiB"})),
    )
    .await;
    let (result, _) = recv_until(&mut socket, "result", Duration::from_secs(10)).await;
    drop(socket);
    let status = server.terminate(Duration::from_secs(5)).expect("exits");
    assert!(status.success(), "{status:?}");
    let saved = std::fs::read_to_string(state.path().join("results.jsonl")).unwrap();
    assert_eq!(saved.lines().count(), 1, "{saved}");

    let server = Server::start_with_state(state.path());
    let history = server.get("/api/results").await.json();
    assert_eq!(history.as_array().unwrap().len(), 1);
    assert_eq!(history[0]["step"], "vmsplice-read");
    assert_eq!(history[0]["finished_at_ms"], result["finished_at_ms"]);
    assert_eq!(history[0]["gib_per_s"], result["gib_per_s"]);
    // The kernel's counts are kept as the run reported them, both ends and
    // what was missing with why.
    let counts = &result["counts"];
    assert!(
        counts["writer"]["syscalls"]["vmsplice"].as_u64().unwrap() > 0,
        "{counts}"
    );
    assert!(
        counts["reader"]["syscalls"]["read"].as_u64().unwrap() > 0,
        "{counts}"
    );
    assert_eq!(history[0]["counts"], *counts);
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
    send(&mut waiting, run_message("write-read", json!({}))).await;
    assert_eq!(recv(&mut waiting).await["type"], "queued");
    let status = server
        .terminate(Duration::from_secs(3))
        .expect("exits within 3 s");
    assert!(status.success(), "{status:?}\n{}", server.stderr());
    assert!(
        wait_gone(&pids(&started), Duration::from_secs(1))
            .await
            .is_some(),
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
    // ...and says what lets a LAN host name in.
    assert!(
        server.stderr().contains("--allow-host NAME"),
        "{}",
        server.stderr()
    );
    // Loopback names still work on a wildcard bind.
    assert_eq!(server.get("/api/health").await.status, 200);
}

#[tokio::test]
async fn two_servers_on_one_state_folder_keep_every_result() {
    let _lock = RUN_LOCK.lock().await;
    let state = tempfile::tempdir().unwrap();
    let a = Server::start_with_state(state.path());
    let b = Server::start_with_state(state.path());
    let mut sockets = [a.socket().await, b.socket().await];
    let mut finished = Vec::new();
    for turn in 0..4 {
        let socket = &mut sockets[turn % 2];
        send(socket, run_message("write-read", json!({"bytes":"4MiB"}))).await;
        let (result, _) = recv_until(socket, "result", Duration::from_secs(20)).await;
        finished.push(result["finished_at_ms"].clone());
    }
    for server in [&a, &b] {
        let results = server.results_once(4).await;
        let stamps: Vec<Value> = results
            .iter()
            .map(|r| r["finished_at_ms"].clone())
            .collect();
        assert_eq!(stamps, finished, "port {}", server.port);
    }
    let saved = std::fs::read_to_string(state.path().join("results.jsonl")).unwrap();
    assert_eq!(saved.lines().count(), 4, "{saved}");
}

#[tokio::test]
async fn a_bad_history_line_is_set_aside_and_the_others_kept() {
    let _lock = RUN_LOCK.lock().await;
    let state = tempfile::tempdir().unwrap();
    let mut server = Server::start_with_state(state.path());
    let mut socket = server.socket().await;
    for _ in 0..2 {
        send(
            &mut socket,
            run_message("write-read", json!({"bytes":"1MiB"})),
        )
        .await;
        recv_until(&mut socket, "result", Duration::from_secs(10)).await;
    }
    drop(socket);
    assert!(server.terminate(Duration::from_secs(5)).unwrap().success());
    // One entry loses a required field, between the two good ones.
    let file = state.path().join("results.jsonl");
    let saved = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = saved.lines().collect();
    assert_eq!(lines.len(), 2);
    let mut bad: Value = serde_json::from_str(lines[0]).unwrap();
    bad.as_object_mut().unwrap().remove("step");
    std::fs::write(&file, format!("{}\n{bad}\n{}\n", lines[0], lines[1])).unwrap();

    let server = Server::start_with_state(state.path());
    assert_eq!(
        server
            .get("/api/results")
            .await
            .json()
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let log = server.stderr();
    assert!(
        log.contains("1 line(s)") && log.contains("set aside"),
        "{log}"
    );
    let rejected = std::fs::read_to_string(state.path().join("results.rejected.jsonl")).unwrap();
    assert_eq!(rejected.lines().count(), 1);
    assert!(!rejected.contains("\"step\""), "{rejected}");
}

#[tokio::test]
async fn sighup_stops_gracefully() {
    let mut server = Server::start();
    assert_eq!(server.get("/api/health").await.status, 200);
    let status = server
        .signal(libc::SIGHUP, Duration::from_secs(3))
        .expect("exits within 3 s");
    assert!(status.success(), "{status:?}\n{}", server.stderr());
    assert!(server.stderr().contains("stopped"), "{}", server.stderr());
}

#[tokio::test]
async fn a_half_sent_request_does_not_delay_shutdown() {
    let mut server = Server::start();
    let mut half = tokio::net::TcpStream::connect(("127.0.0.1", server.port))
        .await
        .unwrap();
    half.write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1")
        .await
        .unwrap();
    let mut silent = tokio::net::TcpStream::connect(("127.0.0.1", server.port))
        .await
        .unwrap();
    silent.flush().await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let asked = std::time::Instant::now();
    let status = server
        .terminate(Duration::from_secs(5))
        .expect("exits within 5 s");
    assert!(status.success(), "{status:?}");
    assert!(
        asked.elapsed() < Duration::from_secs(1),
        "took {:?} to stop",
        asked.elapsed()
    );
}

#[tokio::test]
async fn a_start_up_error_names_its_cause_once() {
    let state = tempfile::tempdir().unwrap();
    // The history's file is a directory: nothing can be read or saved.
    std::fs::create_dir(state.path().join("results.json")).unwrap();
    let stderr = Server::start_with_args(state.path(), &[])
        .err()
        .expect("the server must not start");
    let error = stderr
        .lines()
        .find(|l| l.starts_with("pipebook: error:"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(error.contains("results history"), "{error}");
    // The reason, once: a folder where a state file should be is refused.
    assert_eq!(error.matches("is a folder").count(), 1, "{error}");
    assert_eq!(error.matches("results.json ").count(), 1, "{error}");
}
