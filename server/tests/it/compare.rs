//! The compare card's message over a real WebSocket: two steps run in quiet
//! interleaved pairs through the queue, a `leg` per run and a `verdict` at the
//! end; "run until resolved" adds pairs only while the verdict is open and the
//! budget lasts. Runs pin both CPUs, so every test here holds `RUN_LOCK`.

use std::time::Duration;

use crate::common::{recv, recv_until, send, InProcess, RUN_LOCK};
use serde_json::{json, Value};

/// The messages of one comparison up to its verdict.
async fn compare(server: &InProcess, message: Value) -> (Value, Vec<Value>) {
    let mut socket = server.socket().await;
    send(&mut socket, message).await;
    recv_until(&mut socket, "verdict", Duration::from_secs(120)).await
}

#[tokio::test]
async fn busy_loop_against_write_read_resolves_as_faster() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let (verdict, before) = compare(
        &server,
        json!({"type":"compare","a":"busy-loop","b":"write-read","pairs":3,
               "params":{"bytes":"16MiB"}}),
    )
    .await;
    let legs: Vec<&Value> = before.iter().filter(|m| m["type"] == "leg").collect();
    assert_eq!(legs.len(), 6, "{before:?}");
    // The balanced order, every run quiet (no progress), each result a real run.
    let sides: Vec<&str> = legs.iter().map(|l| l["side"].as_str().unwrap()).collect();
    assert_eq!(sides, ["a", "b", "b", "a", "a", "b"]);
    assert!(before.iter().all(|m| m["type"] != "progress"), "{before:?}");
    for leg in &legs {
        let step = if leg["side"] == "a" {
            "busy-loop"
        } else {
            "write-read"
        };
        assert_eq!(leg["result"]["step"], step);
        assert_eq!(leg["result"]["watched"], false, "{leg}");
        assert_eq!(leg["result"]["bytes"], 16u64 << 20);
        assert!(leg["result"]["gib_per_s"].as_f64().unwrap() > 0.0);
    }
    // The comparison so far rides on every leg from the second whole pair on.
    assert!(legs[3]["comparison"]["ratio"].is_number(), "{}", legs[3]);
    assert_eq!(verdict["a"], "busy-loop");
    assert_eq!(verdict["b"], "write-read");
    assert_eq!(verdict["pairs"], 3);
    assert_eq!(verdict["verdict"], "faster", "{verdict}");
    let (low, ratio, high) = (
        verdict["ci_low"].as_f64().unwrap(),
        verdict["ratio"].as_f64().unwrap(),
        verdict["ci_high"].as_f64().unwrap(),
    );
    assert!(1.0 < low && low <= ratio && ratio <= high, "{verdict}");
    assert!(verdict["sentence"]
        .as_str()
        .unwrap()
        .contains("busy-loop is faster"));
    // Each leg's run is in the history like any other run.
    assert_eq!(server.results_once(6).await.len(), 6);
}

#[tokio::test]
async fn run_until_resolved_stops_at_the_verdict_or_the_budget() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let (verdict, before) = compare(
        &server,
        json!({"type":"compare","a":"write-read","b":"write-read","pairs":2,"budget":4,
               "params":{"bytes":"8MiB"}}),
    )
    .await;
    let legs = before.iter().filter(|m| m["type"] == "leg").count();
    let pairs = verdict["pairs"].as_u64().unwrap() as usize;
    assert_eq!(legs, pairs * 2, "{verdict}");
    assert!((2..=4).contains(&pairs), "{verdict}");
    // Open at the end means the budget was spent; resolved (the same step
    // against itself, so by chance) may stop early.
    if verdict["verdict"] == "not_resolved" {
        assert_eq!(pairs, 4, "{verdict}");
    }
    let of: Vec<u64> = before
        .iter()
        .filter(|m| m["type"] == "leg")
        .map(|m| m["of"].as_u64().unwrap())
        .collect();
    assert!(of.windows(2).all(|w| w[0] <= w[1]), "{of:?}");
}

#[tokio::test]
async fn a_comparison_out_of_bounds_is_refused() {
    let server = InProcess::start().await;
    let mut socket = server.socket().await;
    for (message, says) in [
        (
            json!({"type":"compare","a":"busy-loop","b":"write-read","pairs":1}),
            "pairs = 1",
        ),
        (
            json!({"type":"compare","a":"busy-loop","b":"write-read","pairs":5,"budget":500}),
            "budget = 500",
        ),
        (
            json!({"type":"compare","a":"busy-loop","b":"nope"}),
            "side B",
        ),
        (
            json!({"type":"compare","a":"busy-loop","b":"write-read","colour":"red"}),
            "unknown field `colour`",
        ),
    ] {
        send(&mut socket, message).await;
        let reply = recv(&mut socket).await;
        assert_eq!(reply["type"], "error", "{reply}");
        assert!(reply["message"].as_str().unwrap().contains(says), "{reply}");
        assert!(reply.get("run").is_none(), "{reply}");
    }
}

#[tokio::test]
async fn more_pairs_take_up_the_same_comparison() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let (first, _) = compare(
        &server,
        json!({"type":"compare","a":"busy-loop","b":"write-read","pairs":2,
               "params":{"bytes":"8MiB"}}),
    )
    .await;
    assert_eq!(first["pairs"], 2, "{first}");
    // A fresh socket, as the page's "More pairs" opens: the verdict's pairs go back.
    let (more, before) = compare(
        &server,
        json!({"type":"compare","a":"busy-loop","b":"write-read","pairs":2,
               "params":{"bytes":"8MiB"},
               "prior":{"a":first["a_gib_per_s"],"b":first["b_gib_per_s"]}}),
    )
    .await;
    let legs: Vec<&Value> = before.iter().filter(|m| m["type"] == "leg").collect();
    // Only the new pairs run, and they carry on the balanced order: runs 5 to 8.
    let places: Vec<(u64, &str)> = legs
        .iter()
        .map(|l| (l["index"].as_u64().unwrap(), l["side"].as_str().unwrap()))
        .collect();
    assert_eq!(
        places,
        [(5, "a"), (6, "b"), (7, "b"), (8, "a")],
        "{before:?}"
    );
    assert!(legs.iter().all(|l| l["of"] == 8), "{before:?}");
    // The verdict is over all four pairs, the earlier ones first.
    assert_eq!(more["pairs"], 4, "{more}");
    let a = more["a_gib_per_s"].as_array().unwrap();
    assert_eq!(&a[..2], first["a_gib_per_s"].as_array().unwrap().as_slice());
    assert_eq!(a.len(), 4);
    // The earlier runs are not run again: the history has 4 + 4 runs.
    assert_eq!(server.results_once(8).await.len(), 8);
}

#[tokio::test]
async fn more_pairs_out_of_bounds_or_uneven_are_refused() {
    let server = InProcess::start().await;
    let mut socket = server.socket().await;
    let many = vec![json!(10.0); 39];
    for (message, says) in [
        (
            json!({"type":"compare","a":"busy-loop","b":"write-read","pairs":2,
                   "prior":{"a":many,"b":many}}),
            "39 earlier pairs",
        ),
        (
            json!({"type":"compare","a":"busy-loop","b":"write-read","pairs":2,
                   "prior":{"a":[10.0, 11.0],"b":[3.0]}}),
            "do not pair up",
        ),
        (
            json!({"type":"compare","a":"busy-loop","b":"write-read","pairs":2,
                   "prior":{"a":[10.0, -1.0],"b":[3.0, 3.0]}}),
            "positive",
        ),
        (
            json!({"type":"compare","a":"busy-loop","b":"write-read","pairs":2,
                   "prior":{"a":[10.0],"b":[3.0],"c":[1.0]}}),
            "unknown field `c`",
        ),
    ] {
        send(&mut socket, message).await;
        let reply = recv(&mut socket).await;
        assert_eq!(reply["type"], "error", "{reply}");
        assert!(reply["message"].as_str().unwrap().contains(says), "{reply}");
    }
}
