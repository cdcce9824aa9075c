//! "Probe again": the behaviour probes as a job in the one queue. The answers
//! come back on the socket and replace `/api/system`'s; a probe asked for while
//! a run holds the machine waits its turn, so it never measures beside a run.

use std::time::Duration;

use crate::common::{recv, recv_until, send, start_holding_run, InProcess, RUN_LOCK};
use serde_json::{json, Value};

/// The probe ids of a `behaviour` list.
fn ids(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn asking_to_probe_again_brings_fresh_answers_that_api_system_then_serves() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let before = server.get("/api/system").await.json();
    let started_at = before["behaviour_probed_at_ms"].as_u64().unwrap();
    assert_eq!(ids(&before["behaviour"]).len(), 7, "{before}");

    let mut socket = server.socket().await;
    send(&mut socket, json!({"type":"probe","extra":1})).await;
    let refused = recv(&mut socket).await;
    assert_eq!(refused["type"], "error", "{refused}");
    assert!(
        refused["message"].as_str().unwrap().contains("probe"),
        "{refused}"
    );
    send(&mut socket, json!({"type":"probe"})).await;
    let (answer, _) = recv_until(&mut socket, "behaviour", Duration::from_secs(30)).await;
    assert!(answer["run"].as_u64().is_some(), "{answer}");
    let probed_at = answer["probed_at_ms"].as_u64().unwrap();
    assert!(probed_at > started_at, "{probed_at} after {started_at}");
    assert_eq!(ids(&answer["behaviour"]), ids(&before["behaviour"]));
    for probe in answer["behaviour"].as_array().unwrap() {
        let answered = probe["answer"] != "unknown";
        assert!(
            answered || probe["why_unknown"].is_string(),
            "an unanswered probe says why: {probe}"
        );
    }

    let after = server.get("/api/system").await.json();
    assert_eq!(after["behaviour_probed_at_ms"], probed_at, "{after}");
    assert_eq!(after["behaviour"], answer["behaviour"]);
    assert_eq!(after["kernel"], before["kernel"], "the rest stays");
}

#[tokio::test]
async fn a_probe_asked_for_during_a_run_waits_its_turn() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let mut holder = server.socket().await;
    start_holding_run(&mut holder, 30).await;

    let mut prober = server.socket().await;
    send(&mut prober, json!({"type":"probe"})).await;
    let queued = recv(&mut prober).await;
    assert_eq!(queued["type"], "queued", "{queued}");
    assert_eq!(queued["position"], 1, "{queued}");
    // Nothing of the probe while the run holds the machine.
    let early = tokio::time::timeout(Duration::from_millis(500), recv(&mut prober)).await;
    assert!(early.is_err(), "the probe ran beside a run: {early:?}");

    send(&mut holder, json!({"type":"cancel"})).await;
    recv_until(&mut holder, "cancelled", Duration::from_secs(5)).await;
    let (answer, _) = recv_until(&mut prober, "behaviour", Duration::from_secs(30)).await;
    assert_eq!(ids(&answer["behaviour"]).len(), 7, "{answer}");
    let health = server.get("/api/health").await.json();
    assert_eq!(health["running"], false, "{health}");
}

/// The status a check that assumes `answer` of a probe must have, when this
/// machine's probe answered `measured` and the check's tasks have no runs yet.
fn expected_status(answer: &str, measured: &str, article: &str) -> &'static str {
    let applies = measured == answer || (measured == "unknown" && answer == article);
    if applies {
        "pending"
    } else {
        "not_this_kernel"
    }
}

#[tokio::test]
async fn the_labs_judge_by_what_this_kernels_probes_answered() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let system = server.get("/api/system").await.json();
    let answer_of = |id: &str| {
        system["behaviour"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == id)
            .map(|p| p["answer"].as_str().unwrap().to_string())
            .unwrap()
    };
    let mut socket = server.socket().await;
    for (lab, value) in [("vmsplice-safety", 0.5), ("huge-pages", 2.0)] {
        send(
            &mut socket,
            json!({"type":"predict","lab":lab,"value":value}),
        )
        .await;
        recv_until(&mut socket, "saved", Duration::from_secs(10)).await;
    }
    let labs = server.get("/api/labs").await.json();
    let cases = [
        (
            "vmsplice-safety",
            "early-reuse-breaks",
            "vmsplice",
            "maps",
            "maps",
        ),
        (
            "vmsplice-safety",
            "early-reuse-harmless",
            "vmsplice",
            "copies",
            "maps",
        ),
        (
            "vmsplice-safety",
            "vmsplice-allocates-nothing",
            "vmsplice",
            "maps",
            "maps",
        ),
        ("huge-pages", "got-huge-pages", "thp", "given", "given"),
    ];
    for (lab, check, probe, answer, article) in cases {
        let outcome = labs["labs"][lab]["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == check)
            .unwrap_or_else(|| panic!("{lab}/{check} in {labs}"))
            .clone();
        let measured = answer_of(probe);
        assert_eq!(
            outcome["assumes"]["measured"],
            measured.as_str(),
            "{outcome}"
        );
        assert_eq!(outcome["assumes"]["answer"], answer, "{outcome}");
        assert_eq!(
            outcome["status"],
            expected_status(answer, &measured, article),
            "{lab}/{check} with {probe} answering {measured}: {outcome}"
        );
    }
    // A check that assumes nothing says nothing of the kernel.
    let plain = labs["labs"]["vmsplice-safety"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "double-buffer-clean")
        .unwrap()
        .clone();
    assert!(plain.get("assumes").is_none(), "{plain}");
}
