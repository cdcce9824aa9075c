//! Past the article over a real WebSocket: a tuning search on a small budget
//! streams a trial per run and ends with its best, which then runs as a step of
//! its own and is kept apart in the history; many writers and readers on one
//! pipe stream each point and tear no message of at most PIPE_BUF; bounds are
//! refused before anything runs; the tool table is published.
//! Runs pin both CPUs, so every test that runs holds `RUN_LOCK`.

use std::time::Duration;

use crate::common::{expect_error, recv, recv_saved, recv_until, send, InProcess, RUN_LOCK};
use serde_json::{json, Value};

#[tokio::test]
async fn a_search_streams_its_trials_and_its_best_runs_again_under_its_own_id() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let mut socket = server.socket().await;

    // Before any search, the tuned step does not exist on this runner.
    send(&mut socket, json!({"type":"run","step":"tuned-busy-loop"})).await;
    expect_error(&mut socket, "tune busy-loop first").await;

    send(
        &mut socket,
        json!({"type":"tune","step":"busy-loop","budget":1}),
    )
    .await;
    let started = recv(&mut socket).await;
    assert_eq!(started["type"], "started", "{started}");
    assert_eq!(started["kind"], "tune");
    let cells = started["cells"].as_array().unwrap().len();
    let runs = started["runs"].as_u64().unwrap() as usize;
    assert!(cells >= 1, "{started}");
    assert_eq!(
        runs,
        (cells + 1) * started["rounds"].as_u64().unwrap() as usize
    );

    let (result, before) = recv_until(&mut socket, "result", Duration::from_secs(120)).await;
    // One trial per run, in order, and nothing else of the inner runs.
    let trials: Vec<&Value> = before.iter().filter(|m| m["type"] == "trial").collect();
    assert!(
        before.iter().all(|m| m["type"] == "trial"),
        "only trials between started and result: {before:?}"
    );
    assert_eq!(trials.len(), runs);
    for (i, trial) in trials.iter().enumerate() {
        assert_eq!(trial["index"], i + 1, "{trial}");
        assert_eq!(trial["of"], runs);
        // A 0.1 s run on a busy machine may move nothing: 0, never negative.
        assert!(trial["gib_per_s"].as_f64().unwrap() >= 0.0, "{trial}");
        assert!(trial["median"].as_f64().unwrap() >= 0.0, "{trial}");
        assert_eq!(trial["run"], started["run"]);
    }
    // The best so far, once known, is the fastest median of the grid so far.
    let last = trials.last().unwrap();
    assert_eq!(
        last["best"]["buf_size"], result["best"]["buf_size"],
        "{last} vs {result}"
    );
    assert_eq!(result["kind"], "tune");
    assert!(
        result["best"]["summary"]["median"].as_f64().unwrap() > 0.0,
        "{result}"
    );
    let best = &result["best"];
    assert_eq!(best["id"], "tuned-busy-loop");
    assert_eq!(best["base"], "busy-loop");
    let argv: Vec<&str> = best["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(
        &argv[..3],
        ["pipebench", "run", "tuned-busy-loop"],
        "{argv:?}"
    );
    let gain = &result["gain"];
    let (ratio, low, high) = (
        gain["ratio"].as_f64().unwrap(),
        gain["low"].as_f64().unwrap(),
        gain["high"].as_f64().unwrap(),
    );
    assert!(low <= ratio && ratio <= high, "{gain}");
    // A search is not a pipe result: the page hears why it is not kept.
    let saved = recv(&mut socket).await;
    assert_eq!(saved["type"], "saved", "{saved}");
    assert_eq!(saved["ok"], false);
    assert_eq!(saved["error"]["kind"], "not_kept");

    let listed = server.get("/api/tuned").await.json();
    assert_eq!(listed[0]["id"], "tuned-busy-loop", "{listed}");
    assert_eq!(listed[0]["buf_size"], best["buf_size"]);

    // Other sizes than the search found are refused.
    send(
        &mut socket,
        json!({"type":"run","step":"tuned-busy-loop","params":{"pipe_size":"4KiB"}}),
    )
    .await;
    expect_error(&mut socket, "runs at the pipe_size its search found").await;

    // The best runs again under its own id, at its own sizes.
    send(
        &mut socket,
        json!({"type":"run","step":"tuned-busy-loop","params":{"seconds":0.5}}),
    )
    .await;
    let (again, _) = recv_until(&mut socket, "result", Duration::from_secs(30)).await;
    assert_eq!(again["step"], "tuned-busy-loop");
    assert_eq!(again["bytes_per_call"], best["buf_size"]);
    assert_eq!(again["argv"][2], "tuned-busy-loop");
    recv_saved(&mut socket).await;
    let history = server.results_once(1).await;
    assert_eq!(history.len(), 1, "only the tuned run is a pipe result");
    assert_eq!(history[0]["step"], "tuned-busy-loop");
}

#[tokio::test]
async fn many_writers_share_a_pipe_without_tearing_small_messages() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let mut socket = server.socket().await;
    send(
        &mut socket,
        json!({"type":"shared_pipe","writers":[1,3],"readers":[2],"msg_sizes":[4096,"64KiB"],"bytes":"4MiB"}),
    )
    .await;
    let started = recv(&mut socket).await;
    assert_eq!(started["type"], "started", "{started}");
    assert_eq!(started["kind"], "shared_pipe");
    assert_eq!(started["points"], 4);
    let (result, before) = recv_until(&mut socket, "result", Duration::from_secs(120)).await;
    let streamed: Vec<&Value> = before
        .iter()
        .filter(|m| m["type"] == "shared_point")
        .collect();
    assert_eq!(streamed.len(), 4, "{before:?}");
    assert!(before.iter().any(|m| m["type"] == "progress"), "{before:?}");
    let points = result["points"].as_array().unwrap();
    assert_eq!(points.len(), 4);
    for point in points {
        let sum = |field: &str| -> u64 {
            point[field]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n.as_u64().unwrap())
                .sum()
        };
        assert_eq!(sum("written"), point["bytes"].as_u64().unwrap(), "{point}");
        assert_eq!(sum("received"), sum("written"), "{point}");
        assert_eq!(sum("per_reader"), sum("written"), "{point}");
        assert_eq!(
            point["written"].as_array().unwrap().len(),
            point["writers"].as_u64().unwrap() as usize
        );
        if point["msg_size"].as_u64().unwrap() <= 4096 {
            assert_eq!(point["atomic"], true);
            assert_eq!(point["torn_messages"], 0, "{point}");
        }
    }
    let saved = recv(&mut socket).await;
    assert_eq!(saved["error"]["kind"], "not_kept", "{saved}");
}

#[tokio::test]
async fn out_of_bounds_searches_and_sweeps_are_refused_before_anything_runs() {
    let server = InProcess::start().await;
    let mut socket = server.socket().await;
    for (message, fragment) in [
        (
            json!({"type":"tune","step":"busy-loop","budget":500}),
            "budget = 500 is out of range",
        ),
        (
            json!({"type":"tune","step":"busy-loop","budget":0}),
            "budget = 0 is out of range",
        ),
        (json!({"type":"tune","step":"nope"}), "unknown step `nope`"),
        (
            json!({"type":"tune","step":"busy-loop","command":"sh"}),
            "unknown field `command`",
        ),
        (
            json!({"type":"shared_pipe","writers":[0],"readers":[1],"msg_sizes":[4096]}),
            "writers = [0] is out of range",
        ),
        (
            json!({"type":"shared_pipe","writers":[1],"readers":[99],"msg_sizes":[4096]}),
            "readers = [99] is out of range",
        ),
        (
            json!({"type":"shared_pipe","writers":[1],"readers":[1],"msg_sizes":[100]}),
            "msg_sizes = [100] is out of range",
        ),
        (
            json!({"type":"shared_pipe","writers":[1],"readers":[1],"msg_sizes":[4096],"bytes":"1GiB"}),
            "bytes = 1073741824 is out of range",
        ),
        (
            json!({"type":"shared_pipe","writers":[1,2,3,4],"readers":[1,2],"msg_sizes":[64,4096]}),
            "points (writers × readers × msg_sizes) = 16 is out of range",
        ),
    ] {
        send(&mut socket, message.clone()).await;
        let error = recv(&mut socket).await;
        assert_eq!(error["type"], "error", "{message}: {error}");
        assert!(error.get("run").is_none(), "a refusal belongs to no run");
        let text = error["message"].as_str().unwrap();
        assert!(text.contains(fragment), "{message}: {text}");
    }
    // Still healthy: nothing was queued.
    let health = server.get("/api/health").await.json();
    assert_eq!(health["queued"], 0, "{health}");
}

#[tokio::test]
async fn the_tool_table_names_every_tool_and_what_is_installed() {
    let server = InProcess::start().await;
    let table = server.get("/api/tools").await.json();
    let tools = table.as_array().unwrap();
    let find = |id: &str| tools.iter().find(|t| t["id"] == id).cloned().unwrap();
    // cat and head come with coreutils, as the tests' own machine has them.
    assert_eq!(find("cat")["present"], true);
    assert_eq!(find("yes")["sides"], json!(["writer"]));
    assert_eq!(find("pipebench")["present"], true);
    for tool in tools {
        let program = tool["program"].as_str().unwrap();
        let on_path = std::env::var_os("PATH")
            .map(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
            .unwrap_or(false);
        if program != "pipebench" {
            assert_eq!(tool["present"], on_path, "{tool}");
        }
    }
}
