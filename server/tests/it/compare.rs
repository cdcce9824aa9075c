//! The compare card's message over a real WebSocket: two steps run in quiet
//! interleaved pairs through the queue, a `leg` per run and a `verdict` at the
//! end; "run until resolved" takes its looks, fixed in advance, only while the
//! verdict is open. "More pairs" takes up only pairs this server measured, at
//! the next look of their plan, and none after its last.
//! `/api/judge` answers the same judgement for figures the page holds. Runs
//! pin both CPUs, so every test here that runs holds `RUN_LOCK`.

use std::time::Duration;

use crate::common::{http_get, recv, recv_until, send, InProcess, RUN_LOCK};
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
        json!({"type":"compare","a":"busy-loop","b":"write-read","pairs":6,
               "params":{"bytes":"16MiB"}}),
    )
    .await;
    let legs: Vec<&Value> = before.iter().filter(|m| m["type"] == "leg").collect();
    assert_eq!(legs.len(), 12, "{before:?}");
    // The balanced order, every run quiet (no progress), each result a real run.
    let sides: Vec<&str> = legs.iter().map(|l| l["side"].as_str().unwrap()).collect();
    assert_eq!(
        sides,
        ["a", "b", "b", "a", "a", "b", "b", "a", "a", "b", "b", "a"]
    );
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
    // The judgement rides on the leg of its only look, the last; no earlier
    // leg carries one (only looks decide).
    assert!(legs[11]["comparison"]["ratio"].is_number(), "{}", legs[11]);
    assert!(legs[..11].iter().all(|l| l.get("comparison").is_none()));
    assert_eq!(verdict["a"], "busy-loop");
    assert_eq!(verdict["b"], "write-read");
    assert_eq!(verdict["pairs"], 6);
    assert_eq!(verdict["method"], "signed_rank");
    assert_eq!(verdict["design"], "fixed");
    assert!(
        verdict["series"].as_str().is_some_and(|s| s.len() == 32),
        "{verdict}"
    );
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
    assert_eq!(server.results_once(12).await.len(), 12);
}

#[tokio::test]
async fn run_until_resolved_stops_at_the_verdict_or_the_budget() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let (verdict, before) = compare(
        &server,
        json!({"type":"compare","a":"write-read","b":"write-read","pairs":6,"budget":10,
               "params":{"bytes":"8MiB"}}),
    )
    .await;
    let legs = before.iter().filter(|m| m["type"] == "leg").count();
    let pairs = verdict["pairs"].as_u64().unwrap() as usize;
    assert_eq!(legs, pairs * 2, "{verdict}");
    // Three looks fixed in advance, at 6, 8 and 10 pairs, each at 1 - 5%/3.
    assert!([6, 8, 10].contains(&pairs), "{verdict}");
    assert_eq!(verdict["design"], "sequential", "{verdict}");
    assert_eq!(verdict["looks"], 3, "{verdict}");
    let level = verdict["level_this_look"].as_f64().unwrap();
    assert!((level - (1.0 - 0.05 / 3.0)).abs() < 1e-12, "{verdict}");
    // Open at the end means the last look was taken; resolved (the same step
    // against itself, so by chance) may stop early.
    if verdict["verdict"] == "not_resolved" {
        assert_eq!(
            (pairs, verdict["look"].as_u64()),
            (10, Some(3)),
            "{verdict}"
        );
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
            json!({"type":"compare","a":"busy-loop","b":"write-read","pairs":5}),
            "pairs = 5",
        ),
        (
            json!({"type":"compare","a":"busy-loop","b":"write-read","pairs":6,"budget":500}),
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

/// "More pairs" takes up the same comparison at the next look of the plan it
/// had from its first run, judged at that look's share of the 5%, and once
/// the plan's last look is spent the verdict says it is final and more pairs
/// are refused; a plain comparison's single look is final at once.
#[tokio::test]
async fn more_pairs_take_up_the_same_comparison_at_its_next_planned_look() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    // Looks planned at 7, 9 and 11 pairs; busy-loop against write-read
    // resolves before the last, which leaves a look to take up.
    let (first, _) = compare(
        &server,
        json!({"type":"compare","a":"busy-loop","b":"write-read","pairs":7,"budget":11,
               "params":{"bytes":"8MiB"}}),
    )
    .await;
    let done = first["pairs"].as_u64().unwrap();
    assert!([7, 9].contains(&done), "{first}");
    assert_eq!(first["look"].as_u64(), Some((done - 7) / 2 + 1), "{first}");
    assert_eq!(first["looks"], 3, "{first}");
    assert_eq!(first["next_look"], done + 2, "{first}");
    // A fresh socket, as the page's "More pairs" opens: the verdict's series
    // names the pairs, which the server kept; the pairs are the plan's.
    let take_up = json!({"type":"compare","a":"busy-loop","b":"write-read",
                         "params":{"bytes":"8MiB"},"more_of":first["series"]});
    let (more, before) = compare(&server, take_up.clone()).await;
    let legs: Vec<&Value> = before.iter().filter(|m| m["type"] == "leg").collect();
    // Only the new pairs run, and they carry on the balanced order A B B A.
    let places: Vec<(u64, &str)> = legs
        .iter()
        .map(|l| (l["index"].as_u64().unwrap(), l["side"].as_str().unwrap()))
        .take(4)
        .collect();
    let order = |index: u64| {
        if matches!((index - 1) % 4, 0 | 3) {
            "a"
        } else {
            "b"
        }
    };
    let expected: Vec<(u64, &str)> = (2 * done + 1..=2 * done + 4)
        .map(|i| (i, order(i)))
        .collect();
    assert_eq!(places, expected, "{before:?}");
    // The verdict is over the earlier pairs and the new, at the next look of
    // the same 3, each at 1 - 5%/3.
    let pairs = more["pairs"].as_u64().unwrap();
    assert!(pairs > done, "{more}");
    assert_eq!(more["look"].as_u64(), Some((pairs - 7) / 2 + 1), "{more}");
    assert_eq!(more["looks"], 3, "{more}");
    let level = more["level_this_look"].as_f64().unwrap();
    assert!((level - (1.0 - 0.05 / 3.0)).abs() < 1e-12, "{more}");
    assert_eq!(more["series"], first["series"], "{more}");
    let a = more["a_gib_per_s"].as_array().unwrap();
    let kept = done as usize;
    assert_eq!(
        &a[..kept],
        first["a_gib_per_s"].as_array().unwrap().as_slice()
    );
    // Up to the last look, then final: no next look, and more is refused.
    let last = match more.get("next_look") {
        Some(_) => compare(&server, take_up.clone()).await.0,
        None => more,
    };
    assert_eq!(
        (last["pairs"].as_u64(), last["look"].as_u64()),
        (Some(11), Some(3)),
        "{last}"
    );
    assert!(last.get("next_look").is_none(), "{last}");
    let mut socket = server.socket().await;
    send(&mut socket, take_up).await;
    let refused = recv(&mut socket).await;
    assert_eq!(refused["type"], "error", "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("its verdict is final"),
        "{refused}"
    );
    // Pairs asked with more pairs are refused: the plan sets them.
    send(
        &mut socket,
        json!({"type":"compare","a":"busy-loop","b":"write-read","pairs":2,
               "params":{"bytes":"8MiB"},"more_of":first["series"]}),
    )
    .await;
    let refused = recv(&mut socket).await;
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("leave out `pairs`"),
        "{refused}"
    );
    // The earlier runs are not run again: the history has 22 runs.
    assert_eq!(server.results_once(22).await.len(), 22);
}

/// Figures sent back by the page (issue 37 found forged ones folded into a
/// verdict, extreme ones giving a null ratio) are refused, as is a series id
/// this server never gave; nothing runs.
#[tokio::test]
async fn forged_or_foreign_earlier_pairs_are_refused() {
    let server = InProcess::start().await;
    let mut socket = server.socket().await;
    for (message, says) in [
        (
            json!({"type":"compare","a":"busy-loop","b":"write-read","pairs":2,
                   "prior":{"a":[1e300, 1e300],"b":[1e-300, 1e-300]}}),
            "only pairs this server measured",
        ),
        (
            json!({"type":"compare","a":"busy-loop","b":"write-read","pairs":6,
                   "prior":{"a":[10.0, 11.0],"b":[3.0, 3.1]}}),
            "only pairs this server measured",
        ),
        (
            json!({"type":"compare","a":"busy-loop","b":"write-read",
                   "more_of":"00000000000000000000000000000000"}),
            "no comparison `00000000000000000000000000000000`",
        ),
    ] {
        send(&mut socket, message).await;
        let reply = recv(&mut socket).await;
        assert_eq!(reply["type"], "error", "{reply}");
        assert!(reply["message"].as_str().unwrap().contains(says), "{reply}");
        assert!(reply.get("run").is_none(), "{reply}");
    }
}

/// `/api/judge`: the runner's judgement of figures the page holds, paired or
/// not, at a fixed size or one look of a sequential design; bad input is a
/// 400 naming the field, and a foreign Host is refused as on every route.
#[tokio::test]
async fn the_judge_endpoint_answers_the_runners_judgement() {
    let server = InProcess::start().await;
    let got = server
        .get("/api/judge?paired=true&a=2,2.1,2.05,1.95,2,2.02&b=1,1.1,1.05,0.95,1,1.02")
        .await;
    assert_eq!(got.status, 200, "{}", got.body);
    let j = got.json();
    assert_eq!(j["method"], "signed_rank", "{j}");
    assert_eq!(
        (j["design"].as_str(), j["verdict"].as_str()),
        (Some("fixed"), Some("faster"))
    );
    assert_eq!(
        (j["n_a"].as_u64(), j["min_n"].as_u64()),
        (Some(6), Some(6)),
        "{j}"
    );
    assert!(j["ci_low"].as_f64().unwrap() > 1.0, "{j}");
    let few = server
        .get("/api/judge?paired=false&a=2,2,2&b=1,1,1")
        .await
        .json();
    assert_eq!(
        (few["verdict"].as_str(), few["min_n"].as_u64()),
        (Some("too_few"), Some(4))
    );
    assert!(few["ratio"].is_null() && few["ci_low"].is_null(), "{few}");
    assert!(
        few["sentence"]
            .as_str()
            .unwrap()
            .contains("cannot resolve at 95%"),
        "{few}"
    );
    let look = server
        .get("/api/judge?paired=false&a=2,2.1,2,1.9,2&b=1,1.1,1,0.9,1&look=2&looks=3")
        .await
        .json();
    assert_eq!(
        (look["design"].as_str(), look["look"].as_u64()),
        (Some("sequential"), Some(2))
    );
    for (path, field) in [
        ("/api/judge?paired=maybe&a=1&b=1", "paired"),
        ("/api/judge?paired=true&a=1,nan&b=1,1", "a"),
        ("/api/judge?paired=true&a=1&b=-3", "b"),
        ("/api/judge?paired=true&a=1&b=1&look=4&looks=3", "look"),
    ] {
        let refused = server.get(path).await;
        assert_eq!(refused.status, 400, "{path}: {}", refused.body);
        assert_eq!(refused.json()["field"], field, "{path}");
        assert!(
            refused.json()["error"].as_str().unwrap().starts_with(field),
            "{path}"
        );
    }
    let foreign = http_get(
        server.port,
        "/api/judge?paired=true&a=1&b=1",
        "evil.example",
    )
    .await;
    assert_eq!(foreign.status, 403, "{}", foreign.body);
}
