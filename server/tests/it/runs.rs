//! Real runs over the WebSocket: results, budgets, cancels, disconnects.
//! Runs pin both CPUs, so every test here holds `RUN_LOCK`.

use std::time::{Duration, Instant};

use crate::common::{
    holding_run, pids, recv, recv_until, run_message, send, start_holding_run, start_run,
    wait_gone, InProcess, RUN_LOCK,
};
use futures_util::SinkExt;
use serde_json::json;

const MIB: u64 = 1 << 20;

#[tokio::test]
async fn a_small_run_streams_progress_and_a_result() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let mut socket = server.socket().await;
    let started = start_run(
        &mut socket,
        run_message("vmsplice-splice", json!({"bytes":"64MiB"})),
    )
    .await;
    assert_eq!(started["step"], "vmsplice-splice");
    assert_eq!(started["params"]["bytes"], 64 * MIB);
    assert_eq!(started["params"]["buf_size"], 256 * 1024);
    assert!(started["params"]["seconds"].is_null());
    assert_eq!(pids(&started).len(), 2);
    assert!(started["warnings"].is_array());

    let (result, before) = recv_until(&mut socket, "result", Duration::from_secs(30)).await;
    assert!(!before.is_empty(), "at least one progress message");
    assert!(before.iter().all(|m| m["type"] == "progress"), "{before:?}");
    let last = before.last().unwrap();
    assert!(last["bytes"].as_u64().unwrap() <= 64 * MIB);
    assert!(last["elapsed_ms"].as_f64().unwrap() >= 0.0);
    assert_eq!(result["step"], "vmsplice-splice");
    assert_eq!(result["bytes"], 64 * MIB);
    assert!(result["gib_per_s"].as_f64().unwrap() > 0.0, "{result}");
    assert!(result["elapsed_ms"].as_f64().unwrap() > 0.0);
    assert_eq!(result["stopped_by_budget"], false);
    assert!(result["options"]["writer"]["vmsplice"].as_bool().unwrap());
    assert!(result["writer"].get("minor_faults").is_some());
    assert!(result["reader"].get("voluntary_ctx_switches").is_some());
    assert!(wait_gone(&pids(&started), Duration::from_secs(1))
        .await
        .is_some());

    // The result is in the history, and the connection can run again.
    let history = server.results_once(1).await;
    assert_eq!(history.len(), 1);
    assert_eq!(history[0]["bytes"], 64 * MIB);
    send(
        &mut socket,
        run_message("write-read", json!({"bytes":4194304})),
    )
    .await;
    let (result, _) = recv_until(&mut socket, "result", Duration::from_secs(30)).await;
    assert_eq!(result["bytes"], 4 * MIB);
    assert_eq!(server.results_once(2).await.len(), 2);
}

#[tokio::test]
async fn a_time_budget_stops_the_run() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let mut socket = server.socket().await;
    let asked = Instant::now();
    send(
        &mut socket,
        run_message(
            "write-read",
            json!({"seconds":0.5,"buf_size":"4KiB","pipe_size":"4KiB"}),
        ),
    )
    .await;
    let started = recv(&mut socket).await;
    assert_eq!(started["params"]["seconds"], 0.5);
    let (result, progress) = recv_until(&mut socket, "result", Duration::from_secs(10)).await;
    assert_eq!(result["stopped_by_budget"], true, "{result}");
    let elapsed = asked.elapsed();
    assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
    // About ten samples in half a second (20 a second, allowing a slow machine).
    assert!(progress.len() >= 5, "{} progress messages", progress.len());
}

#[tokio::test]
async fn progress_comes_at_least_ten_times_a_second() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let mut socket = server.socket().await;
    send(&mut socket, holding_run(1)).await;
    assert_eq!(recv(&mut socket).await["type"], "started");
    let mut last = Instant::now();
    let mut longest = Duration::ZERO;
    let mut count = 0;
    loop {
        let message = recv(&mut socket).await;
        longest = longest.max(last.elapsed());
        last = Instant::now();
        match message["type"].as_str().unwrap() {
            // The first sample goes out as soon as the ends run, not a whole
            // sampling interval (50 ms) later: the run's own clock says so.
            "progress" if count == 0 => {
                let at = message["elapsed_ms"].as_f64().unwrap();
                assert!(at < 50.0, "first progress at {at} ms into the run");
                count += 1;
            }
            "progress" => count += 1,
            "result" => break,
            other => panic!("{other}"),
        }
    }
    assert!(count >= 10, "{count}");
    assert!(
        longest < Duration::from_millis(100),
        "longest gap {longest:?}"
    );
}

#[tokio::test]
async fn cancel_while_running_kills_the_ends() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let mut socket = server.socket().await;
    let started = start_holding_run(&mut socket, 20).await;
    let asked = Instant::now();
    send(&mut socket, json!({"type":"cancel"})).await;
    let (_, _) = recv_until(&mut socket, "cancelled", Duration::from_secs(1)).await;
    assert!(asked.elapsed() < Duration::from_secs(1));
    assert!(
        wait_gone(&pids(&started), Duration::from_secs(1))
            .await
            .is_some(),
        "ends still alive"
    );
    assert_eq!(server.get("/api/health").await.json()["running"], false);
    // Nothing more arrives for the cancelled run; the connection works on.
    send(&mut socket, json!({"type":"cancel"})).await;
    crate::common::expect_error(&mut socket, "no run to cancel").await;
}

#[tokio::test]
async fn cancel_while_queued() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let mut first = server.socket().await;
    let mut second = server.socket().await;
    send(&mut first, holding_run(20)).await;
    let started = recv(&mut first).await;
    assert_eq!(started["type"], "started");
    send(
        &mut second,
        run_message("busy-loop", json!({"bytes":"1MiB"})),
    )
    .await;
    let queued = recv(&mut second).await;
    let run = queued["run"].as_u64().expect("a run id");
    assert_eq!(queued, json!({"type":"queued","position":1,"run":run}));
    assert_ne!(json!(run), started["run"], "each run has its own id");
    assert_eq!(server.get("/api/health").await.json()["queued"], 1);
    send(&mut second, json!({"type":"cancel"})).await;
    assert_eq!(
        recv(&mut second).await,
        json!({"type":"cancelled","run":run})
    );
    assert_eq!(server.get("/api/health").await.json()["queued"], 0);
    send(&mut first, json!({"type":"cancel"})).await;
    recv_until(&mut first, "cancelled", Duration::from_secs(1)).await;
    assert!(wait_gone(&pids(&started), Duration::from_secs(1))
        .await
        .is_some());
    // The cancelled queued run never starts.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let health = server.get("/api/health").await.json();
    assert_eq!(
        (health["running"].as_bool(), health["queued"].as_u64()),
        (Some(false), Some(0))
    );
}

#[tokio::test]
async fn a_disconnect_mid_run_kills_the_ends() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let mut socket = server.socket().await;
    let started = start_holding_run(&mut socket, 20).await;
    drop(socket);
    let gone = wait_gone(&pids(&started), Duration::from_secs(1)).await;
    assert!(gone.is_some(), "ends outlived their page by a second");
    // The next page can run at once.
    let mut next = server.socket().await;
    send(
        &mut next,
        run_message("write-read", json!({"bytes":"1MiB"})),
    )
    .await;
    assert_eq!(recv(&mut next).await["type"], "started");
    recv_until(&mut next, "result", Duration::from_secs(10)).await;
}

#[tokio::test]
async fn a_queued_page_that_leaves_frees_its_place() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let mut first = server.socket().await;
    send(&mut first, holding_run(20)).await;
    let started = recv(&mut first).await;
    let mut second = server.socket().await;
    let mut third = server.socket().await;
    send(
        &mut second,
        run_message("write-read", json!({"bytes":"1MiB"})),
    )
    .await;
    assert_eq!(recv(&mut second).await["position"], 1);
    send(
        &mut third,
        run_message("write-read", json!({"bytes":"1MiB"})),
    )
    .await;
    assert_eq!(recv(&mut third).await["position"], 2);
    drop(second);
    let moved_up = recv(&mut third).await;
    assert_eq!(
        (&moved_up["type"], &moved_up["position"]),
        (&json!("queued"), &json!(1))
    );
    drop(first);
    assert!(wait_gone(&pids(&started), Duration::from_secs(1))
        .await
        .is_some());
    assert_eq!(recv(&mut third).await["type"], "started");
    recv_until(&mut third, "result", Duration::from_secs(10)).await;
}

#[tokio::test]
async fn run_messages_carry_their_run_id_and_refusals_none() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let mut socket = server.socket().await;
    let started = start_holding_run(&mut socket, 20).await;
    let run = started["run"].as_u64().expect("started carries the run id");
    // Refusals of a message belong to no run: no `run` field.
    send(&mut socket, run_message("write-read", json!({}))).await;
    let (refusal, progress) = recv_until(&mut socket, "error", Duration::from_secs(5)).await;
    assert!(refusal.get("run").is_none(), "{refusal}");
    assert!(progress.iter().all(|m| m["run"] == run), "{progress:?}");
    socket
        .send(tokio_tungstenite::tungstenite::Message::Text(
            "{oops".into(),
        ))
        .await
        .unwrap();
    let (refusal, _) = recv_until(&mut socket, "error", Duration::from_secs(5)).await;
    assert!(refusal.get("run").is_none(), "{refusal}");
    send(&mut socket, json!({"type":"cancel"})).await;
    let (cancelled, progress) = recv_until(&mut socket, "cancelled", Duration::from_secs(2)).await;
    assert_eq!(cancelled["run"], run);
    assert!(progress.iter().all(|m| m["run"] == run), "{progress:?}");
    assert!(wait_gone(&pids(&started), Duration::from_secs(1))
        .await
        .is_some());
    send(&mut socket, json!({"type":"cancel"})).await;
    let nothing = recv(&mut socket).await;
    assert_eq!(nothing["type"], "error");
    assert!(nothing.get("run").is_none(), "{nothing}");
    // The next run gets a new id, on every message up to its result.
    send(
        &mut socket,
        run_message("write-read", json!({"bytes":"1MiB"})),
    )
    .await;
    let (result, before) = recv_until(&mut socket, "result", Duration::from_secs(10)).await;
    let next = result["run"].as_u64().expect("result carries the run id");
    assert_ne!(next, run);
    assert!(before.iter().all(|m| m["run"] == next), "{before:?}");
    // The result is still pipebench's, fields at the top level.
    assert_eq!(result["bytes"], 1 << 20);
}

/// Messages of a sweep until `done` (or an end of the sweep), at most `timeout`.
async fn sweep_messages(
    socket: &mut crate::common::Socket,
    timeout: Duration,
) -> Vec<serde_json::Value> {
    let deadline = Instant::now() + timeout;
    let mut messages = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let message = crate::common::recv_within(socket, left).await;
        let kind = message["type"].as_str().unwrap_or_default().to_string();
        messages.push(message);
        if matches!(kind.as_str(), "done" | "cancelled" | "error") {
            return messages;
        }
    }
}

#[tokio::test]
async fn a_sweep_runs_every_value_as_a_queued_run_and_ends_with_done() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let mut socket = server.socket().await;
    send(
        &mut socket,
        json!({"type":"sweep","step":"write-read","param":"pipe_size",
               "values":["16KiB","32KiB",65536],"repeats":2,"params":{"bytes":"4MiB"}}),
    )
    .await;
    let messages = sweep_messages(&mut socket, Duration::from_secs(60)).await;
    let done = messages.last().unwrap();
    assert_eq!(done["type"], "done", "{messages:?}");
    assert_eq!(done["runs"], 6);
    let points: Vec<_> = messages.iter().filter(|m| m["type"] == "point").collect();
    assert_eq!(points.len(), 6, "{messages:?}");
    let mut runs = std::collections::HashSet::new();
    for (n, point) in points.iter().enumerate() {
        assert_eq!(point["index"], n as u64 + 1, "{point}");
        assert_eq!(point["of"], 6);
        // Each point is its own queued run, with its own id, at its own value.
        assert!(runs.insert(point["run"].as_u64().unwrap()), "{point}");
        assert_eq!(point["result"]["pipe_capacity"], point["value"], "{point}");
        assert_eq!(point["result"]["bytes"], 4 * MIB);
    }
    let mut values: Vec<u64> = points
        .iter()
        .map(|p| p["value"].as_u64().unwrap())
        .collect();
    values.sort();
    assert_eq!(values, [16, 16, 32, 32, 64, 64].map(|k| k << 10));
    // No `result` message: a sweep's results travel inside its points.
    assert!(messages.iter().all(|m| m["type"] != "result"));
    assert_eq!(server.results_once(6).await.len(), 6);
}

/// The scheduler steps a sweep: each run's `saved` comes right after its
/// `point`, before anything of the next run, and the next run re-enters the
/// queue at the back, so another page's run waiting meanwhile goes first.
#[tokio::test]
async fn a_sweeps_next_run_queues_behind_another_pages_run_and_follows_its_saved() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let mut sweeper = server.socket().await;
    let mut other = server.socket().await;
    send(
        &mut sweeper,
        json!({"type":"sweep","step":"write-read","param":"pipe_size",
               "values":["16KiB","32KiB"],
               "params":{"seconds":0.4,"buf_size":"4KiB"}}),
    )
    .await;
    let started = recv(&mut sweeper).await;
    assert_eq!(started["type"], "started", "{started}");
    // While the sweep's first run goes, another page asks for a run.
    send(
        &mut other,
        run_message("write-read", json!({"bytes":"4MiB"})),
    )
    .await;
    let queued = recv(&mut other).await;
    assert_eq!(queued["type"], "queued", "{queued}");
    let (result, _) = recv_until(&mut other, "result", Duration::from_secs(30)).await;
    let messages = sweep_messages(&mut sweeper, Duration::from_secs(30)).await;
    let mut all = vec![started];
    all.extend(messages);
    let kinds: Vec<&str> = all.iter().map(|m| m["type"].as_str().unwrap()).collect();
    let points: Vec<usize> = (0..all.len()).filter(|&i| kinds[i] == "point").collect();
    assert_eq!(points.len(), 2, "{kinds:?}");
    for &at in &points {
        let saved = &all[at + 1];
        assert_eq!(saved["type"], "saved", "{kinds:?}");
        assert_eq!(saved["run"], all[at]["run"], "{saved}");
    }
    // The last `saved` is followed by `done`, and nothing of the first run's
    // comes after its `saved`.
    assert_eq!(kinds[points[1] + 2..], ["done"], "{kinds:?}");
    let first = all[points[0]]["run"].as_u64().unwrap();
    assert!(all[points[0] + 2..points[1]]
        .iter()
        .all(|m| m["run"].as_u64() != Some(first)));
    // Run ids are handed out as runs enter the queue, and it is first in,
    // first out: the other page's run went between the sweep's two runs.
    let second = all[points[1]]["run"].as_u64().unwrap();
    let between = result["run"].as_u64().unwrap();
    assert!(
        first < between && between < second,
        "{first} {between} {second}"
    );
}

/// The ticket follows the series: a sweep whose next run waits behind another
/// page's run is cancelled there, as a whole, and the other page's run goes on.
#[tokio::test]
async fn a_sweep_cancelled_while_its_next_run_waits_in_the_queue_stops_whole() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let mut sweeper = server.socket().await;
    let mut other = server.socket().await;
    send(
        &mut sweeper,
        json!({"type":"sweep","step":"write-read","param":"pipe_size",
               "values":["16KiB","32KiB","64KiB"],
               "params":{"seconds":0.3,"buf_size":"4KiB"}}),
    )
    .await;
    let started = recv(&mut sweeper).await;
    assert_eq!(started["type"], "started", "{started}");
    send(
        &mut other,
        run_message("write-read", json!({"seconds":1.5,"buf_size":"4KiB"})),
    )
    .await;
    // The sweep's first run ends; its second enters the queue behind the other page's.
    let (waiting, _) = recv_until(&mut sweeper, "queued", Duration::from_secs(10)).await;
    assert_ne!(waiting["run"], started["run"], "{waiting}");
    send(&mut sweeper, json!({"type":"cancel"})).await;
    let cancelled = recv(&mut sweeper).await;
    assert_eq!(cancelled["type"], "cancelled", "{cancelled}");
    assert_eq!(cancelled["run"], waiting["run"], "{cancelled}");
    let after = crate::common::maybe_recv(&mut sweeper, Duration::from_millis(700)).await;
    assert!(
        after.is_none(),
        "nothing of the sweep after its cancel: {after:?}"
    );
    let (result, _) = recv_until(&mut other, "result", Duration::from_secs(30)).await;
    assert_eq!(result["type"], "result", "{result}");
}

#[tokio::test]
async fn a_cancelled_sweep_stops_whole_and_leaves_nothing_running() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let mut socket = server.socket().await;
    send(
        &mut socket,
        json!({"type":"sweep","step":"write-read","param":"pipe_size",
               "values":["4KiB","8KiB","16KiB"],
               "params":{"seconds":20,"buf_size":"4KiB"}}),
    )
    .await;
    let started = recv(&mut socket).await;
    assert_eq!(started["type"], "started", "{started}");
    send(&mut socket, json!({"type":"cancel"})).await;
    let asked = Instant::now();
    let messages = sweep_messages(&mut socket, Duration::from_secs(2)).await;
    assert_eq!(
        messages.last().unwrap()["type"],
        "cancelled",
        "{messages:?}"
    );
    assert!(asked.elapsed() < Duration::from_secs(1));
    assert!(wait_gone(&pids(&started), Duration::from_secs(1))
        .await
        .is_some());
    // Nothing else of the sweep starts afterwards.
    let after = crate::common::maybe_recv(&mut socket, Duration::from_millis(700)).await;
    assert!(after.is_none(), "{after:?}");
    assert_eq!(server.get("/api/health").await.json()["running"], false);
}

#[tokio::test]
async fn bad_sweeps_are_refused_before_anything_runs() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let mut socket = server.socket().await;
    for (values, needle) in [
        (json!(["64KiB", "16KiB"]), "must go up"),
        (json!([0, 4096]), "0 bytes"),
        (
            json!(["64KiB", "1TiB"]),
            "pipe_size = 1099511627776 bytes (1TiB) is out of range",
        ),
        (json!([]), "at least one value"),
    ] {
        send(
            &mut socket,
            json!({"type":"sweep","step":"write-read","param":"pipe_size","values":values}),
        )
        .await;
        let error = recv(&mut socket).await;
        assert_eq!(error["type"], "error", "{error}");
        assert!(
            error.get("run").is_none(),
            "a refusal belongs to no run: {error}"
        );
        assert!(
            error["message"].as_str().unwrap().contains(needle),
            "{values}: {error}"
        );
    }
    assert_eq!(server.get("/api/health").await.json()["running"], false);
    assert!(server.results_once(0).await.is_empty());
}

#[tokio::test]
async fn a_quiet_run_sends_no_progress_only_its_result() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let mut socket = server.socket().await;
    let started = start_run(
        &mut socket,
        run_message("vmsplice-splice", json!({"bytes":"256MiB","quiet":true})),
    )
    .await;
    assert_eq!(started["params"]["quiet"], true);
    let (result, before) = recv_until(&mut socket, "result", Duration::from_secs(30)).await;
    assert!(before.is_empty(), "a quiet run sent {before:?}");
    assert_eq!(result["bytes"], 256 * MIB);
    assert_eq!(result["pipe_capacity"], 128 * 1024);
    assert!(
        result.get("occupancy").is_none(),
        "a quiet run is not watched"
    );
    // It says so, and the history keeps it: comparisons take only such runs.
    assert_eq!(result["watched"], false, "{result}");
    assert_eq!(server.results_once(1).await[0]["watched"], false);
}

/// A child killed and reaped when dropped (a failed assertion included).
struct Spinner(std::process::Child);

impl Drop for Spinner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A run from the page carries the machine's state over the run, on the wire
/// and in the history; with a busy loop pinned beside its writer, the state
/// says its CPUs were taken and a warning says how much.
#[tokio::test]
async fn a_run_from_the_page_carries_the_machine_state_and_says_when_its_cpus_were_taken() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let mut socket = server.socket().await;
    let message = json!({"type":"run","step":"write-read",
                         "params":{"bytes":"64MiB","writer_cpu":0,"reader_cpu":1,"quiet":true}});
    start_run(&mut socket, message.clone()).await;
    let (calm, _) = recv_until(&mut socket, "result", Duration::from_secs(30)).await;
    crate::common::recv_saved(&mut socket).await;
    let machine = &calm["machine"];
    assert_eq!(machine["cpus"], json!([0, 1]), "{calm}");
    for field in [
        "governors",
        "boost",
        "window_ms",
        "steal_ms",
        "other_ms",
        "throttle_events",
        "taken",
    ] {
        assert!(machine.get(field).is_some(), "no {field}: {machine}");
    }
    let spinner = Spinner(
        std::process::Command::new("taskset")
            .args(["-c", "0", "sh", "-c", "while :; do :; done"])
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("taskset runs"),
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    start_run(&mut socket, message).await;
    let (taken, _) = recv_until(&mut socket, "result", Duration::from_secs(30)).await;
    drop(spinner);
    assert_eq!(taken["machine"]["taken"], true, "{taken}");
    let other = taken["machine"]["other_ms"].as_f64().unwrap();
    assert!(other > 0.0, "{taken}");
    // A warning the page shows says how much was taken: the state's own figure.
    let how_much = format!("{other:.0} ms");
    assert!(
        taken["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains(&how_much)),
        "no warning says {how_much} were taken: {taken}"
    );
    let history = server.results_once(2).await;
    assert_eq!(history.len(), 2, "{history:?}");
    assert_eq!(history[1]["machine"]["taken"], true);
}

/// A live run watches its pipe: progress carries the bytes in the pipe and the
/// result the occupancy series, which the history keeps too.
#[tokio::test]
async fn a_live_run_carries_the_pipes_occupancy() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let mut socket = server.socket().await;
    start_run(
        &mut socket,
        run_message("write-read", json!({"bytes":"32MiB"})),
    )
    .await;
    let (result, before) = recv_until(&mut socket, "result", Duration::from_secs(30)).await;
    assert!(
        before.iter().any(|m| m["pipe_bytes"].as_u64().is_some()),
        "no progress message carried pipe_bytes: {before:?}"
    );
    assert!(before
        .iter()
        .filter_map(|m| m["pipe_bytes"].as_u64())
        .all(|b| b <= 65536));
    let o = &result["occupancy"];
    assert_eq!(o["capacity"], 65536, "{result}");
    assert!(o["samples"].as_u64().unwrap() > 0, "{o}");
    assert!(o["full_share"].as_f64().unwrap() + o["empty_share"].as_f64().unwrap() <= 1.0 + 1e-9);
    let n = o["series"]["t_ms"].as_array().unwrap().len();
    assert!(n > 0, "{o}");
    assert_eq!(o["series"]["max"].as_array().unwrap().len(), n);
    let history = server.results_once(1).await;
    assert_eq!(history[0]["occupancy"]["samples"], o["samples"]);
    assert_eq!(result["watched"], true, "{result}");
    assert_eq!(history[0]["watched"], true);
}

/// Restores /proc/sys/fs/pipe-max-size when dropped, even if the test fails.
struct PipeMaxSize(String);

impl Drop for PipeMaxSize {
    fn drop(&mut self) {
        let _ = std::fs::write("/proc/sys/fs/pipe-max-size", &self.0);
    }
}

/// An end that fails reaches the page as a typed reason: the system's pipe limit
/// is lowered after the server started, so the planner (which read the old limit)
/// lets a 1 MiB pipe through and the writer itself refuses it.
#[tokio::test]
async fn an_end_failure_reaches_the_page_with_its_role_and_kind() {
    let _lock = RUN_LOCK.lock().await;
    let path = "/proc/sys/fs/pipe-max-size";
    let before = std::fs::read_to_string(path).unwrap();
    let server = InProcess::start().await;
    let limit: u64 = before.trim().parse().unwrap();
    assert!(
        limit >= 1 << 20,
        "this test needs pipe-max-size >= 1MiB, found {limit}"
    );
    let _restore = PipeMaxSize(before.clone());
    if std::fs::write(path, "262144").is_err() {
        panic!("this test changes {path} and must run as root (CI does)");
    }
    let mut socket = server.socket().await;
    send(
        &mut socket,
        run_message("write-read", json!({"bytes":"4MiB","pipe_size":"1MiB"})),
    )
    .await;
    let (error, _) = recv_until(&mut socket, "error", Duration::from_secs(10)).await;
    assert!(error["run"].is_u64(), "the error ends a run: {error}");
    assert_eq!(error["reason"]["role"], "writer", "{error}");
    assert_eq!(error["reason"]["kind"], "pipe-size-over-limit", "{error}");
    assert!(error["message"].as_str().unwrap().contains("pipe-max-size"));
}

/// A page that hears its result finds the runner free: its next run starts at
/// once (the result is saved after it is sent, and nothing waits for that).
#[tokio::test]
async fn the_next_run_after_a_result_starts_without_queueing() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let mut socket = server.socket().await;
    for round in 0..3 {
        send(
            &mut socket,
            run_message("write-read", json!({"bytes":"4MiB"})),
        )
        .await;
        let first = recv(&mut socket).await;
        assert_eq!(first["type"], "started", "round {round}: {first}");
        let (result, _) = recv_until(&mut socket, "result", Duration::from_secs(30)).await;
        // After the result, whether the history has it: then the run is over.
        let saved = crate::common::recv_saved(&mut socket).await;
        assert_eq!(saved["run"], result["run"]);
        assert_eq!(server.get("/api/health").await.json()["running"], false);
    }
    assert_eq!(server.results_once(3).await.len(), 3);
}

/// The page can measure a wakeup: the probe queues like a run (never beside one)
/// and answers with both round trips and the findings they feed.
#[tokio::test]
async fn a_wakeup_probe_queues_like_a_run_and_returns_figures_and_findings() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let mut socket = server.socket().await;
    send(&mut socket, json!({"type":"wakeup","extra":1})).await;
    let refused = recv(&mut socket).await;
    assert_eq!(refused["type"], "error", "{refused}");
    assert!(refused.get("run").is_none());
    send(&mut socket, json!({"type":"wakeup"})).await;
    let (answer, before) = recv_until(&mut socket, "wakeup", Duration::from_secs(60)).await;
    assert!(before.iter().all(|m| m["type"] == "queued"), "{before:?}");
    assert!(answer["run"].as_u64().is_some(), "{answer}");
    let w = &answer["wakeup"];
    let (blocking, busy) = (
        w["blocking_us"].as_f64().unwrap(),
        w["busy_us"].as_f64().unwrap(),
    );
    assert!(blocking > 0.0 && busy > 0.0, "{w}");
    let findings = answer["findings"].as_array().unwrap();
    assert!(
        findings.iter().any(|f| f["id"] == "wakeup-cost"),
        "{findings:?}"
    );
    // The connection is free again for a run.
    send(
        &mut socket,
        run_message("write-read", json!({"bytes":"4MiB"})),
    )
    .await;
    let (result, _) = recv_until(&mut socket, "result", Duration::from_secs(30)).await;
    assert_eq!(result["bytes"], 4 * MIB);
}
