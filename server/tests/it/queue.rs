//! Many pages at once: one run at a time, a bounded queue, clear refusals,
//! and the book is still served meanwhile.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::{holding_run, recv, recv_until, run_message, send, InProcess, RUN_LOCK};
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_pages_at_once_get_a_bounded_queue() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let token = server.token().await;
    let origin = server.origin();
    // One page holds the machine until told to stop, so the others pile up
    // whatever this machine's speed.
    let mut holder = server.socket().await;
    send(&mut holder, holding_run(30)).await;
    assert_eq!(recv(&mut holder).await["type"], "started");

    let mut sockets = Vec::new();
    for _ in 0..50 {
        sockets.push(
            server
                .socket_with(Some(&origin), Some(&token), None)
                .await
                .unwrap(),
        );
    }
    let run = run_message("write-read", json!({"bytes":"16MiB"}));
    for socket in &mut sockets {
        send(socket, run.clone()).await;
    }
    let refused = Arc::new(AtomicUsize::new(0));
    let clients: Vec<_> = sockets
        .into_iter()
        .map(|mut socket| {
            let refused = Arc::clone(&refused);
            tokio::spawn(async move {
                let mut seen: Vec<Value> = Vec::new();
                loop {
                    let message = recv_within_a_minute(&mut socket).await;
                    let kind = message["type"].as_str().unwrap().to_string();
                    if kind != "progress" {
                        seen.push(message);
                    }
                    if kind == "error" {
                        refused.fetch_add(1, Ordering::SeqCst);
                    }
                    if kind == "result" || kind == "error" || kind == "cancelled" {
                        return seen;
                    }
                }
            })
        })
        .collect();

    let deadline = Instant::now() + Duration::from_secs(10);
    while refused.load(Ordering::SeqCst) < 42 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let health = server.get("/api/health").await.json();
    assert_eq!(health["running"], true, "{health}");
    assert_eq!(health["queued"], 8, "{health}");
    // While they wait, the book is still served promptly.
    let asked = Instant::now();
    let page = server.get("/chapter.html").await;
    assert_eq!(page.status, 200);
    assert!(
        asked.elapsed() < Duration::from_secs(1),
        "{:?}",
        asked.elapsed()
    );

    send(&mut holder, json!({"type":"cancel"})).await;
    recv_until(&mut holder, "cancelled", Duration::from_secs(2)).await;

    let (mut finished, mut busy, mut max_position) = (0, 0, 0);
    for client in clients {
        let seen = client.await.unwrap();
        for message in &seen {
            if message["type"] == "queued" {
                max_position = max_position.max(message["position"].as_u64().unwrap());
            }
        }
        let last = seen.last().unwrap();
        match last["type"].as_str().unwrap() {
            "result" => {
                finished += 1;
                assert!(seen.iter().any(|m| m["type"] == "started"));
                assert_eq!(last["bytes"], 16 << 20);
            }
            "error" => {
                assert_eq!(
                    last["message"],
                    "busy: 8 runs are already waiting; try again in a moment"
                );
                busy += 1;
            }
            other => panic!("{other}: {seen:?}"),
        }
    }
    assert_eq!(finished, 8, "the eight waiting runs all finish");
    assert_eq!(busy, 42, "past the bound, pages are told to come back");
    assert_eq!(max_position, 8);
    assert_eq!(server.results_once(8).await.len(), 8);
}

async fn recv_within_a_minute(socket: &mut crate::common::Socket) -> Value {
    crate::common::recv_within(socket, Duration::from_secs(60)).await
}
