//! The IPC lab over the real WebSocket: runs of real producer and consumer
//! processes (the server re-executing itself as `pipebook end ipc-end`), the
//! history, cancels that leave nothing behind, and refusals that keep the
//! connection usable. Runs take the machine, so every test holds `RUN_LOCK`.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::common::{recv, recv_until, run_message, send, Server, Socket, RUN_LOCK};
use serde_json::{json, Value};

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// Runs `mechanism` over `socket` and returns its `started` and `result`.
async fn run(socket: &mut Socket, mechanism: &str, bytes: u64) -> (Value, Value) {
    send(
        socket,
        json!({"type":"ipc","mechanism":mechanism,"params":{"bytes":bytes}}),
    )
    .await;
    let started = recv(socket).await;
    assert_eq!(started["type"], "started", "{started}");
    let (result, before) = recv_until(socket, "result", Duration::from_secs(60)).await;
    assert!(
        before.iter().all(|m| m["type"] == "progress"),
        "only progress between started and result: {before:?}"
    );
    // Then whether the history has it, for the same run.
    let saved = crate::common::recv_saved(socket).await;
    assert_eq!(saved["run"], result["run"]);
    (started, result)
}

/// The bytes and elapsed milliseconds of each `progress` message in `messages`,
/// after checking that they only grow and never pass `total`.
fn progress_of(messages: &[Value], total: u64) -> Vec<(u64, f64)> {
    let samples: Vec<(u64, f64)> = messages
        .iter()
        .filter(|m| m["type"] == "progress")
        .map(|m| {
            let bytes = m["bytes"].as_u64().unwrap_or_else(|| panic!("{m}"));
            let elapsed = m["elapsed_ms"].as_f64().unwrap_or_else(|| panic!("{m}"));
            assert!(m["gib_per_s"].as_f64().unwrap() >= 0.0, "{m}");
            assert!(bytes <= total, "{m} passes {total}");
            (bytes, elapsed)
        })
        .collect();
    for pair in samples.windows(2) {
        assert!(pair[0].0 <= pair[1].0, "bytes went back: {samples:?}");
        assert!(pair[0].1 < pair[1].1, "time went back: {samples:?}");
    }
    samples
}

/// A run that lasts (8-byte calls: about a million system calls for 4 MiB)
/// streams `progress` like a pipe step, at least ten a second, and the page can
/// watch the bytes climb.
#[tokio::test]
async fn a_lasting_run_streams_progress() {
    let _lock = RUN_LOCK.lock().await;
    let server = Server::start();
    let mut socket = server.socket().await;
    send(
        &mut socket,
        json!({"type":"ipc","mechanism":"pipe-rw","params":{"bytes":"4MiB","chunk":8}}),
    )
    .await;
    assert_eq!(recv(&mut socket).await["type"], "started");
    let (result, before) = recv_until(&mut socket, "result", Duration::from_secs(60)).await;
    assert_eq!(result["checksum_ok"], true, "{result}");
    // Its progress was streamed, and it says so.
    assert_eq!(result["watched"], true, "{result}");
    let samples = progress_of(&before, 4 * MIB);
    let midway = samples
        .iter()
        .filter(|(b, _)| *b > 0 && *b < 4 * MIB)
        .count();
    assert!(midway > 0, "no sample between 0 and the total: {samples:?}");
    // At least ten a second over the run (the first comes at once).
    let span_ms = samples.last().unwrap().1 - samples[0].1;
    assert!(
        samples.len() as f64 >= (span_ms / 100.0).floor(),
        "{} samples over {span_ms:.0} ms",
        samples.len()
    );
}

/// The same lasting run asked quiet: not one `progress` between `started` and
/// `result`, and the result says it was not watched, on the wire and in the
/// history (the page's comparisons take only such runs). A watched one beside
/// it says the opposite, in the history too.
#[tokio::test]
async fn a_quiet_run_streams_no_progress_and_says_it_was_not_watched() {
    let _lock = RUN_LOCK.lock().await;
    let server = Server::start();
    let mut socket = server.socket().await;
    send(
        &mut socket,
        json!({"type":"ipc","mechanism":"pipe-rw","params":{"bytes":"4MiB","chunk":8,"quiet":true}}),
    )
    .await;
    assert_eq!(recv(&mut socket).await["type"], "started");
    let (quiet, before) = recv_until(&mut socket, "result", Duration::from_secs(60)).await;
    assert!(before.is_empty(), "a quiet run streams nothing: {before:?}");
    assert_eq!(quiet["checksum_ok"], true, "{quiet}");
    assert_eq!(quiet["bytes"], 4 * MIB);
    assert_eq!(quiet["watched"], false, "{quiet}");
    let saved = crate::common::recv_saved(&mut socket).await;
    assert_eq!(saved["run"], quiet["run"]);
    let (_, watched) = run(&mut socket, "pipe-rw", 2 * MIB).await;
    assert_eq!(watched["watched"], true, "{watched}");
    let history = server.results_once(2).await;
    assert_eq!(history.len(), 2, "{history:?}");
    assert_eq!(history[0]["watched"], false, "{history:?}");
    assert_eq!(history[1]["watched"], true, "{history:?}");
    // A flag is a flag: anything else is refused, naming the field.
    send(
        &mut socket,
        json!({"type":"ipc","mechanism":"pipe-rw","params":{"quiet":"yes"}}),
    )
    .await;
    let refused = recv(&mut socket).await;
    assert_eq!(refused["type"], "error", "{refused}");
    assert!(refused.get("run").is_none(), "{refused}");
    // /api/ipc publishes the switch for the card, off unless asked.
    let lab = server.get("/api/ipc").await.json();
    let quiet = lab["params"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "quiet")
        .unwrap_or_else(|| panic!("no quiet switch: {lab}"));
    assert_eq!(
        (quiet["unit"].clone(), quiet["default"].clone()),
        (json!("flag"), json!(0))
    );
}

#[tokio::test]
async fn two_mechanisms_run_verify_and_are_kept_in_the_history() {
    let _lock = RUN_LOCK.lock().await;
    let server = Server::start();
    let mut socket = server.socket().await;

    let (started, result) = run(&mut socket, "posix-shm", 4 * MIB).await;
    assert_eq!(started["kind"], "ipc");
    assert_eq!(started["mechanism"], "posix-shm");
    assert_eq!(started["params"]["bytes"], 4 * MIB);
    assert_eq!(started["params"]["chunk"], 64 * 1024);
    assert!(started["run"].as_u64().is_some(), "{started}");
    assert_eq!(result["kind"], "ipc");
    assert_eq!(result["mechanism"], "posix-shm");
    assert_eq!(result["bytes"], 4 * MIB);
    assert_eq!(result["checksum_ok"], true, "{result}");
    assert_eq!(result["copies"], 0);
    assert_eq!(result["survey_ms"], 1373.0);
    assert!(result["elapsed_ms"].as_f64().unwrap() > 0.0, "{result}");
    assert!(result["mib_per_s"].as_f64().unwrap() > 0.0, "{result}");
    let roles: Vec<&str> = result["ends"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles.len(), 2, "{result}");
    assert!(roles.contains(&"producer") && roles.contains(&"consumer"));
    // Both ends were real processes: the consumer faulted the shared pages in.
    let consumer = &result["ends"][roles.iter().position(|r| *r == "consumer").unwrap()];
    assert!(
        consumer["usage"]["minor_faults"].as_u64().unwrap() > 0,
        "{result}"
    );

    // The same connection runs a second mechanism, with a chunk of its own.
    send(
        &mut socket,
        json!({"type":"ipc","mechanism":"pipe-splice","params":{"bytes":"3MiB","chunk":"16KiB"}}),
    )
    .await;
    assert_eq!(recv(&mut socket).await["params"]["chunk"], 16 * 1024);
    let (result, _) = recv_until(&mut socket, "result", Duration::from_secs(60)).await;
    assert_eq!(result["mechanism"], "pipe-splice");
    assert_eq!(result["bytes"], 3 * MIB);
    assert_eq!(result["chunk"], 16 * 1024);
    assert_eq!(result["checksum_ok"], true, "{result}");

    // Both are in the history, tagged, and a pipe run beside them still reads.
    send(
        &mut socket,
        run_message("write-read", json!({"bytes":"4MiB"})),
    )
    .await;
    let (pipe, _) = recv_until(&mut socket, "result", Duration::from_secs(30)).await;
    assert_eq!(pipe["step"], "write-read");
    assert!(pipe.get("kind").is_none(), "{pipe}");
    let history = server.results_once(3).await;
    assert_eq!(history.len(), 3, "{history:?}");
    assert_eq!(history[0]["kind"], "ipc");
    assert_eq!(history[0]["mechanism"], "posix-shm");
    assert_eq!(history[1]["mechanism"], "pipe-splice");
    // The counts are kept as the run reported them, once, keyed by the ends'
    // roles: none inside `ends`.
    for end in result["ends"].as_array().unwrap() {
        assert!(end.get("counts").is_none(), "{end}");
        let role = end["role"].as_str().unwrap();
        assert!(result["counts"][role]["page_faults"].is_u64(), "{result}");
    }
    assert!(result["counts"]["missing"].is_array(), "{result}");
    assert_eq!(history[1]["ends"], result["ends"]);
    assert_eq!(history[1]["counts"], result["counts"]);
    assert!(history[0]["finished_at_ms"].as_u64().unwrap() > 0);
    assert_eq!(history[2]["step"], "write-read");
}

/// The kernel's events an IPC result left out as turned off (its `counts`,
/// one entry per reason for all its ends).
fn turned_off(result: &Value) -> Vec<String> {
    let mut off = Vec::new();
    for m in result["counts"]["missing"].as_array().unwrap() {
        if m["reason"]["kind"] == "turned_off" {
            assert!(!m["message"].as_str().unwrap().is_empty(), "{m}");
            for c in m["counts"].as_array().unwrap() {
                off.push(c.as_str().unwrap().to_string());
            }
        }
    }
    off.sort();
    off
}

/// The page turns an IPC run's counting off as `pipebench ipc --no-counts` does:
/// the ends keep what costs nothing (calls, faults, switches) and say the
/// kernel's events were turned off; the default, and `counts: true`, count them.
#[tokio::test]
async fn the_page_can_turn_an_ipc_runs_counting_off() {
    let _lock = RUN_LOCK.lock().await;
    let server = Server::start();
    let mut socket = server.socket().await;
    let mut results = Vec::new();
    for counts in [Some(false), None, Some(true)] {
        let mut params = json!({"bytes": 4 * MIB});
        if let Some(on) = counts {
            params["counts"] = json!(on);
        }
        send(
            &mut socket,
            json!({"type":"ipc","mechanism":"pipe-rw","params":params}),
        )
        .await;
        assert_eq!(recv(&mut socket).await["type"], "started");
        let (result, _) = recv_until(&mut socket, "result", Duration::from_secs(60)).await;
        assert_eq!(result["checksum_ok"], true, "{result}");
        crate::common::recv_saved(&mut socket).await;
        results.push(result);
    }
    let off = &results[0];
    let said = turned_off(off);
    for event in ["wakeups", "ipis", "tlb_flushes"] {
        assert!(said.contains(&event.to_string()), "{said:?}");
    }
    for end in off["ends"].as_array().unwrap() {
        let counts = &off["counts"][end["role"].as_str().unwrap()];
        for event in ["wakeups", "ipis", "tlb_flushes"] {
            assert!(counts.get(event).is_none(), "{event}: {end}");
        }
        // What costs nothing is kept: the producer's one write per 64 KiB.
        assert!(counts["page_faults"].is_u64(), "{end}");
        if end["role"] == "producer" {
            assert_eq!(counts["syscalls"]["write"], 4 * MIB / (64 << 10), "{end}");
        }
    }
    for on in &results[1..] {
        assert_eq!(turned_off(on), Vec::<String>::new(), "{on}");
    }
    // The history keeps the run as it was counted.
    let history = server.results_once(3).await;
    assert_eq!(turned_off(&history[0]), said);
    // A flag that is not one is refused, typed as the page's own mistake.
    send(
        &mut socket,
        json!({"type":"ipc","mechanism":"pipe-rw","params":{"counts":"no"}}),
    )
    .await;
    let reply = recv(&mut socket).await;
    assert_eq!(reply["type"], "error", "{reply}");
    assert!(reply.get("run").is_none(), "{reply}");
    // /api/ipc publishes the switch for the card.
    let lab = server.get("/api/ipc").await.json();
    let flag = lab["params"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "counts")
        .unwrap_or_else(|| panic!("{lab}"));
    assert_eq!(
        (flag["unit"].as_str(), flag["default"].as_u64()),
        (Some("flag"), Some(1))
    );
}

/// What System V IPC and /dev/shm hold right now (`ipcs` output without its
/// headers, and the names in /dev/shm).
fn ipc_snapshot() -> (String, BTreeSet<String>) {
    let ipcs = std::process::Command::new("ipcs")
        .args(["-q", "-m"])
        .output()
        .expect("ipcs runs");
    let shm = std::fs::read_dir("/dev/shm")
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    (String::from_utf8_lossy(&ipcs.stdout).into_owned(), shm)
}

/// The pids of the server's child processes.
fn children(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
    {
        let path = task.path().join("children");
        for child in std::fs::read_to_string(path)
            .unwrap_or_default()
            .split_whitespace()
        {
            found.extend(child.parse::<u32>().ok());
        }
    }
    found
}

/// Waits until the server has no children left.
fn wait_childless(pid: u32, timeout: Duration) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < timeout {
        if children(pid).is_empty() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

#[tokio::test]
async fn a_cancelled_run_leaves_no_queue_segment_file_or_process() {
    let _lock = RUN_LOCK.lock().await;
    let server = Server::start();
    let mut socket = server.socket().await;
    let before = ipc_snapshot();
    // 8-byte calls make a 1 GiB run take minutes: long enough to cancel in the
    // middle. One System V object and one /dev/shm object.
    for mechanism in ["sysv-msgqueue", "posix-shm"] {
        send(
            &mut socket,
            json!({"type":"ipc","mechanism":mechanism,"params":{"bytes":"1GiB","chunk":8}}),
        )
        .await;
        let started = recv(&mut socket).await;
        assert_eq!(started["type"], "started", "{started}");
        // Wait until both ends run, so the cancel hits a run in full flight.
        let start = std::time::Instant::now();
        while children(server.pid()).len() < 2 {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "{mechanism}: the ends never started"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let ends = children(server.pid());
        tokio::time::sleep(Duration::from_millis(300)).await;
        let during = ipc_snapshot();
        if mechanism == "posix-shm" {
            // Its name went as soon as both ends had mapped the object.
            assert_eq!(
                during.1, before.1,
                "{mechanism}: the name outlived the set-up"
            );
        } else {
            assert_ne!(during, before, "{mechanism}: the run's queue is visible");
        }
        send(&mut socket, json!({"type":"cancel"})).await;
        let (_, before_cancel) =
            recv_until(&mut socket, "cancelled", Duration::from_secs(10)).await;
        // Only progress came first, and it showed the run moving.
        let samples = progress_of(&before_cancel, GIB);
        assert!(
            samples.iter().any(|(bytes, _)| *bytes > 0),
            "{mechanism}: {samples:?}"
        );
        assert!(
            wait_childless(server.pid(), Duration::from_secs(2)),
            "{mechanism}: children left: {:?}",
            children(server.pid())
        );
        assert!(
            ends.iter().all(|&p| crate::common::is_gone(p.into())),
            "{ends:?}"
        );
        assert_eq!(ipc_snapshot(), before, "{mechanism}: something was left");
    }
    // Closing the page mid-run stops the run the same way.
    send(
        &mut socket,
        json!({"type":"ipc","mechanism":"sysv-msgqueue","params":{"bytes":"1GiB","chunk":8}}),
    )
    .await;
    assert_eq!(recv(&mut socket).await["type"], "started");
    tokio::time::sleep(Duration::from_millis(300)).await;
    drop(socket);
    assert!(wait_childless(server.pid(), Duration::from_secs(5)));
    let start = std::time::Instant::now();
    while ipc_snapshot() != before && start.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(ipc_snapshot(), before);
}

#[tokio::test]
async fn bad_requests_get_typed_errors_and_the_connection_stays_usable() {
    let _lock = RUN_LOCK.lock().await;
    let server = Server::start();
    let mut socket = server.socket().await;
    for (message, kind, fragment) in [
        (
            json!({"type":"ipc","mechanism":"carrier-pigeon"}),
            Some("unknown_mechanism"),
            "known: sysv-msgqueue",
        ),
        (
            json!({"type":"ipc","mechanism":"posix-shm","params":{"bytes":"2GiB"}}),
            Some("out_of_range"),
            "bytes = 2GiB is out of range: allowed 1B to 1GiB",
        ),
        (
            json!({"type":"ipc","mechanism":"pipe-rw","params":{"chunk":3}}),
            Some("out_of_range"),
            "chunk",
        ),
        (
            json!({"type":"ipc","mechanism":"posix-shm","params":{"dir":"/etc"}}),
            None,
            "unknown field `dir`",
        ),
    ] {
        send(&mut socket, message.clone()).await;
        let reply = recv(&mut socket).await;
        assert_eq!(reply["type"], "error", "{message}: {reply}");
        assert!(reply.get("run").is_none(), "a refusal belongs to no run");
        let text = reply["message"].as_str().unwrap();
        assert!(text.contains(fragment), "{message}: {text}");
        match kind {
            Some(kind) => assert_eq!(reply["reason"]["kind"], kind, "{reply}"),
            None => assert!(reply.get("reason").is_none(), "{reply}"),
        }
    }
    // Still usable: a good run goes through.
    let (_, result) = run(&mut socket, "unix-stream", 2 * MIB).await;
    assert_eq!(result["checksum_ok"], true, "{result}");
    // And /api/ipc publishes what the page needs.
    let lab = server.get("/api/ipc").await.json();
    let mechanisms = lab["mechanisms"].as_array().unwrap();
    assert!(mechanisms.len() >= 14, "{lab}");
    let shm = mechanisms.iter().find(|m| m["id"] == "posix-shm").unwrap();
    assert_eq!(shm["copies"], 0);
    assert_eq!(shm["survey"]["ms"], 1373.0);
    assert!(shm["kernel_functions"].as_array().unwrap().len() > 1);
    assert_eq!(lab["params"][0]["name"], "bytes");
    assert_eq!(lab["params"][0]["max"], 1u64 << 30);
}

#[tokio::test]
async fn ipc_runs_share_the_queue_and_stop_with_the_server() {
    let _lock = RUN_LOCK.lock().await;
    let mut server = Server::start();
    let before = ipc_snapshot();
    let mut socket = server.socket().await;
    let mut waiting = server.socket().await;
    send(
        &mut socket,
        json!({"type":"ipc","mechanism":"sysv-msgqueue","params":{"bytes":"1GiB","chunk":8}}),
    )
    .await;
    assert_eq!(recv(&mut socket).await["type"], "started");
    // A pipe run waits behind the IPC run: one run at a time, machine-wide.
    send(
        &mut waiting,
        run_message("write-read", json!({"bytes":"4MiB"})),
    )
    .await;
    let queued = recv(&mut waiting).await;
    assert_eq!(queued["type"], "queued", "{queued}");
    assert_eq!(queued["position"], 1);
    let start = std::time::Instant::now();
    while children(server.pid()).len() < 2 {
        assert!(start.elapsed() < Duration::from_secs(10), "no ends");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let ends = children(server.pid());
    let status = server
        .terminate(Duration::from_secs(5))
        .expect("exits within 5 s");
    assert!(status.success(), "{status:?}\n{}", server.stderr());
    assert!(
        ends.iter().all(|&p| crate::common::is_gone(p.into())),
        "{ends:?}"
    );
    for page in [&mut waiting, &mut socket] {
        let (error, _) = recv_until(page, "error", Duration::from_secs(2)).await;
        assert!(
            error["message"].as_str().unwrap().contains("shutting down"),
            "{error}"
        );
    }
    assert_eq!(ipc_snapshot(), before, "the stopped run left something");
}
