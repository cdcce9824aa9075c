//! The page inspector over the WebSocket: a real child allocates the step's
//! writer buffers, and the answer waits its turn behind a running benchmark.

use std::time::Duration;

use crate::common::{
    expect_error, expect_refused, recv_until, send, start_holding_run, Server, RUN_LOCK,
};
use serde_json::json;

#[tokio::test]
async fn pages_of_a_steps_buffers_come_back_touched_or_not() {
    let _lock = RUN_LOCK.lock().await;
    let server = Server::start();
    let mut socket = server.socket().await;
    send(&mut socket, json!({"type":"pages","step":"huge-pages"})).await;
    let (pages, _) = recv_until(&mut socket, "pages", Duration::from_secs(20)).await;
    assert_eq!(pages["step"], "huge-pages");
    assert_eq!(pages["touch"], true);
    assert!(pages["run"].is_u64(), "tagged with its job id: {pages}");
    let report = &pages["report"];
    assert_eq!(report["huge_pages"], true);
    let buffers = report["buffers"].as_array().unwrap();
    assert_eq!(buffers.len(), 2, "the vmsplice double buffer");
    let thp_never = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
        .unwrap()
        .contains("[never]");
    let kinds: Vec<&str> = report["limitations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["kind"].as_str().unwrap())
        .collect();
    if thp_never {
        assert!(kinds.contains(&"thp_disabled"), "{kinds:?}");
    } else if report["frames_visible"] != true {
        // Frames are root's to see: the report must say they are hidden.
        assert!(kinds.contains(&"frames_hidden"), "{kinds:?}");
    } else if kinds.contains(&"no_huge_pages") {
        // THP allowed, but the kernel had no free 2 MiB block: said, and true.
        for buffer in buffers {
            assert_eq!(buffer["huge_pages"]["huge_bytes"], 0, "{buffer}");
        }
    } else {
        for buffer in buffers {
            assert_eq!(buffer["pages"].as_array().unwrap().len(), 512);
            assert_eq!(
                (buffer["heads"].as_u64(), buffer["tails"].as_u64()),
                (Some(1), Some(511))
            );
            assert_eq!(buffer["pages"][0]["flags"]["head"], true);
            assert_eq!(buffer["pages"][1]["flags"]["tail"], true);
        }
    }

    // The same socket asks again, untouched this time: nothing is mapped yet.
    send(
        &mut socket,
        json!({"type":"pages","step":"huge-pages","touch":false}),
    )
    .await;
    let (pages, _) = recv_until(&mut socket, "pages", Duration::from_secs(20)).await;
    assert_eq!(pages["touch"], false);
    let report = &pages["report"];
    assert_eq!(report["touched"], false);
    let buffers = report["buffers"].as_array().unwrap();
    assert_eq!(buffers.len(), 2, "the vmsplice double buffer");
    for buffer in buffers {
        assert_eq!(buffer["present"], 0, "{buffer}");
    }
    assert_eq!(report["limitations"][0]["kind"], "nothing_present");
    // Inspections are not results: the history stays empty.
    assert!(server.results_once(0).await.is_empty());
}

#[tokio::test]
async fn an_inspection_waits_for_the_running_benchmark() {
    let _lock = RUN_LOCK.lock().await;
    let server = Server::start();
    let mut running = server.socket().await;
    start_holding_run(&mut running, 20).await;
    let mut looking = server.socket().await;
    send(
        &mut looking,
        json!({"type":"pages","step":"vmsplice-splice"}),
    )
    .await;
    let (queued, _) = recv_until(&mut looking, "queued", Duration::from_secs(5)).await;
    assert_eq!(queued["position"], 1);
    send(&mut running, json!({"type":"cancel"})).await;
    recv_until(&mut running, "cancelled", Duration::from_secs(5)).await;
    let (pages, _) = recv_until(&mut looking, "pages", Duration::from_secs(20)).await;
    let buffers = pages["report"]["buffers"].as_array().unwrap();
    assert_eq!(
        buffers[0]["offset_in_page"], 16,
        "malloc's place for 256 KiB"
    );
    assert_eq!(buffers[0]["present"], 65);
}

#[tokio::test]
async fn bad_pages_messages_are_refused_and_the_socket_carries_on() {
    let server = Server::start();
    let mut socket = server.socket().await;
    expect_refused(
        &mut socket,
        json!({"type":"pages","step":"warp-drive"}),
        "unknown step `warp-drive`",
    )
    .await;
    send(
        &mut socket,
        json!({"type":"pages","step":"huge-pages","touch":"yes"}),
    )
    .await;
    // The refusal names the field and what it takes.
    expect_error(&mut socket, "`touch`: invalid type").await;
    send(&mut socket, json!({"type":"pages","step":"write-read"})).await;
    let (pages, _) = recv_until(&mut socket, "pages", Duration::from_secs(20)).await;
    assert_eq!(pages["report"]["buffers"].as_array().unwrap().len(), 1);
}
