//! Past the article over a real WebSocket: a tuning search on a small budget
//! streams a trial per run and ends with its best, which then runs as a step of
//! its own and is kept apart in the history; many writers and readers on one
//! pipe stream each point and tear no message of at most PIPE_BUF; bounds are
//! refused before anything runs; the tool table is published.
//! Runs pin both CPUs, so every test that runs holds `RUN_LOCK`.

use std::time::Duration;

use std::os::unix::fs::PermissionsExt;

use crate::common::{
    children, expect_refused, open_tempdir, recv, recv_saved, recv_until, run_message, send,
    write_as_nobody, InProcess, Server, RUN_LOCK,
};
use serde_json::{json, Value};

/// The smallest budget a search may have, seconds (the engine's least).
const MIN_BUDGET: f64 = 2.0;

#[tokio::test]
async fn a_search_streams_its_trials_and_its_best_runs_again_under_its_own_id() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let mut socket = server.socket().await;

    // Before any search, the tuned step does not exist on this runner.
    expect_refused(
        &mut socket,
        run_message("tuned-busy-loop", json!({})),
        "tune busy-loop first",
    )
    .await;
    // Nor may a head-to-head name it.
    expect_refused(
        &mut socket,
        json!({"type":"compare","a":"tuned-busy-loop","b":"busy-loop","pairs":6}),
        "side A: ",
    )
    .await;

    send(
        &mut socket,
        json!({"type":"tune","step":"busy-loop","budget":MIN_BUDGET}),
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
        // Runs of at least 0.3 s move something even on a loaded machine.
        assert!(trial["gib_per_s"].as_f64().unwrap() > 0.0, "{trial}");
        assert!(trial["median"].as_f64().unwrap() > 0.0, "{trial}");
        assert_eq!(trial["run"], started["run"]);
    }
    // Interleaved repeats: each round (a block of cells + 1 trials) runs every
    // configuration of the grid and the step's own exactly once.
    let grid: std::collections::BTreeSet<String> = started["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| format!("{}/{}", c["buf_size"], c["pipe_size"]))
        .chain(["own".to_string()])
        .collect();
    for round in trials.chunks(cells + 1) {
        let seen: std::collections::BTreeSet<String> = round
            .iter()
            .map(|t| match t["own"].as_bool() {
                Some(true) => "own".to_string(),
                _ => format!("{}/{}", t["buf_size"], t["pipe_size"]),
            })
            .collect();
        assert_eq!(seen, grid, "a round that is not the whole grid: {round:?}");
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
    // The signed-rank interval of the best cell against the step's own runs,
    // round by round, when the search ran enough rounds to reach 95% (6);
    // else none.
    if let (Some(ci_low), Some(ci_high)) = (gain["ci_low"].as_f64(), gain["ci_high"].as_f64()) {
        assert!(
            low <= ci_low && ci_low <= ci_high && ci_high <= high,
            "{gain}"
        );
    } else {
        assert!(
            gain["ci_low"].is_null() && gain["ci_high"].is_null(),
            "{gain}"
        );
    }
    // Its best is kept for the next start, and the page hears so first...
    let kept = recv(&mut socket).await;
    assert_eq!(
        kept,
        json!({"type":"saved","run":result["run"],"store":"tuned","ok":true})
    );
    // ...then, a search not being a pipe result, why the history has none of it.
    let saved = recv(&mut socket).await;
    assert_eq!(saved["type"], "saved", "{saved}");
    assert_eq!(saved["store"], "history", "{saved}");
    assert_eq!(saved["ok"], false);
    assert_eq!(saved["error"]["kind"], "not_kept");

    let listed = server.get("/api/tuned").await.json();
    assert_eq!(listed[0]["id"], "tuned-busy-loop", "{listed}");
    assert_eq!(listed[0]["buf_size"], best["buf_size"]);

    // Other sizes than the search found are refused.
    expect_refused(
        &mut socket,
        run_message("tuned-busy-loop", json!({"pipe_size":"4KiB"})),
        "runs at the pipe_size its search found",
    )
    .await;

    // The best runs again under its own id, at its own sizes.
    send(
        &mut socket,
        run_message("tuned-busy-loop", json!({"seconds":0.5})),
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

    // Its card sets it against its own step head to head: the tuned side runs
    // at its search's sizes, the step at its own, in the balanced order.
    send(
        &mut socket,
        json!({"type":"compare","a":"tuned-busy-loop","b":"busy-loop","pairs":6,
               "budget":6,"params":{"seconds":0.3}}),
    )
    .await;
    let (verdict, before) = recv_until(&mut socket, "verdict", Duration::from_secs(60)).await;
    let legs: Vec<&Value> = before.iter().filter(|m| m["type"] == "leg").collect();
    assert_eq!(legs.len(), 12, "{before:?}");
    for leg in &legs {
        let r = &leg["result"];
        if leg["side"] == "a" {
            assert_eq!(r["step"], "tuned-busy-loop", "{leg}");
            assert_eq!(r["bytes_per_call"], best["buf_size"], "{leg}");
        } else {
            assert_eq!(r["step"], "busy-loop", "{leg}");
        }
        assert_eq!(r["watched"], false, "a head-to-head runs quiet: {leg}");
    }
    assert_eq!(verdict["pairs"], 6, "{verdict}");
    assert!(verdict["ci_low"].as_f64().unwrap() <= verdict["ci_high"].as_f64().unwrap());
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
async fn a_profiled_shared_pipe_sends_each_points_profile_before_it() {
    let _lock = RUN_LOCK.lock().await;
    let server = InProcess::start().await;
    let mut socket = server.socket().await;
    send(
        &mut socket,
        json!({"type":"shared_pipe","writers":[2],"readers":[1,2],"msg_sizes":[4096],"bytes":"8MiB","profile":true}),
    )
    .await;
    let (result, before) = recv_until(&mut socket, "result", Duration::from_secs(120)).await;
    let kinds: Vec<&str> = before
        .iter()
        .filter_map(|m| m["type"].as_str())
        .filter(|t| matches!(*t, "profile" | "shared_point"))
        .collect();
    if !pipebench::profile::perf_installed() {
        // Said once, before any point, and the sweep runs unprofiled.
        assert_eq!(
            kinds,
            ["profile", "shared_point", "shared_point"],
            "{before:?}"
        );
        let error = before.iter().find(|m| m["type"] == "profile").unwrap();
        assert_eq!(error["error"]["kind"], "not_installed", "{error}");
        return;
    }
    // Each point's profile comes just before it.
    assert_eq!(
        kinds,
        ["profile", "shared_point", "profile", "shared_point"],
        "{before:?}"
    );
    for profile in before.iter().filter(|m| m["type"] == "profile") {
        let report = &profile["report"];
        if !crate::common::perf_can_sample() {
            assert_eq!(profile["error"]["kind"], "failed", "{profile}");
            continue;
        }
        for (side, call) in [("writer", "pipe_write"), ("reader", "pipe_read")] {
            let functions = report[side]["functions"].as_array().unwrap();
            assert!(
                functions
                    .iter()
                    .any(|f| f["kernel"] == true && f["symbol"].as_str().unwrap().contains(call)),
                "{side}: {functions:?}"
            );
            let svg = report[side]["flamegraph_svg"].as_str().unwrap();
            assert!(svg.contains(&format!("{side}s: where")), "{side}");
            assert!(!svg.contains("<script"), "{side}");
        }
    }
    for point in result["points"].as_array().unwrap() {
        assert_eq!(point["torn_messages"], 0, "{point}");
        for side in ["writers", "readers"] {
            assert!(
                point["counts"][side]["context_switches"].is_u64(),
                "{point}"
            );
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

/// A search's best outlives the server: a restart on the same state folder
/// still lists it and runs it at its sizes, and its run is kept under its own id.
#[tokio::test]
async fn a_tuned_variant_outlives_a_restart_and_runs_again() {
    let _lock = RUN_LOCK.lock().await;
    let state = tempfile::tempdir().unwrap();
    let mut server = Server::start_with_state(state.path());
    let mut socket = server.socket().await;
    send(
        &mut socket,
        json!({"type":"tune","step":"busy-loop","budget":MIN_BUDGET}),
    )
    .await;
    let (result, _) = recv_until(&mut socket, "result", Duration::from_secs(120)).await;
    let best = result["best"].clone();
    assert_eq!(best["id"], "tuned-busy-loop", "{result}");
    // On disk before the page heard of it, private like the history.
    let file = state.path().join("tuned.jsonl");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    let before = server.get("/api/tuned").await.json();
    drop(socket);
    assert!(server.terminate(Duration::from_secs(10)).is_some());

    let server = Server::start_with_state(state.path());
    let after = server.get("/api/tuned").await.json();
    assert_eq!(after, before, "the same variant, found by the same search");
    assert_eq!(after[0]["buf_size"], best["buf_size"]);
    assert_eq!(after[0]["pipe_size"], best["pipe_size"]);
    let mut socket = server.socket().await;
    send(
        &mut socket,
        run_message("tuned-busy-loop", json!({"seconds":0.5})),
    )
    .await;
    let (again, _) = recv_until(&mut socket, "result", Duration::from_secs(30)).await;
    assert_eq!(again["step"], "tuned-busy-loop");
    assert_eq!(again["bytes_per_call"], best["buf_size"]);
    assert_eq!(again["pipe_capacity"], best["pipe_size"]);
    recv_saved(&mut socket).await;
    let history = server.results_once(1).await;
    assert_eq!(history.len(), 1, "{history:?}");
    assert_eq!(history[0]["step"], "tuned-busy-loop");
}

/// `tuned.jsonl` is state like the history: a planted link or another user's
/// file stops the start with a message naming it; lines a search could not
/// have written here are refused one by one, each said in the log, and only
/// the rest are offered, with a command line the server makes itself.
#[tokio::test]
async fn a_hostile_tuned_file_is_refused_with_a_clear_message() {
    let root = open_tempdir();
    let state = root.path().join("state");
    std::fs::create_dir(&state).unwrap();
    let file = state.join("tuned.jsonl");
    let secret = root.path().join("secret");
    std::fs::write(&secret, "not for the page\n").unwrap();

    std::os::unix::fs::symlink(&secret, &file).unwrap();
    let stderr = Server::start_with_args(&state, &[])
        .err()
        .expect("a linked tuned.jsonl is refused");
    assert!(
        stderr.contains("tuned.jsonl is a symbolic link"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(&secret).unwrap(),
        "not for the page\n"
    );
    std::fs::remove_file(&file).unwrap();

    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o777)).unwrap();
    write_as_nobody(&file, b"");
    let stderr = Server::start_with_args(&state, &[])
        .err()
        .expect("another user's tuned.jsonl is refused");
    assert!(stderr.contains("tuned.jsonl belongs to uid"), "{stderr}");
    std::fs::remove_file(&file).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();

    let line = |fields: Value| format!("{fields}\n");
    let good = json!({"id":"tuned-write-read","base":"write-read","buf_size":1048576,
                      "pipe_size":1048576,"median":3.5,"found_at_ms":1});
    let with = |key: &str, value: Value| {
        let mut v = good.clone();
        v[key] = value;
        line(v)
    };
    let mut text = line(good.clone());
    text += &with("id", json!("tuned-../../etc/passwd")); // 2
    text += &with("base", json!("busy-loop")); // 3
    text += &with("pipe_size", json!(1u64 << 40)); // 4
    text += &with("buf_size", json!(12345)); // 5
    text += &with("median", json!(1e300)); // 6
    text += &with("argv", json!(["sh", "-c", "rm -rf /"])); // 7
    text += "not json at all\n"; // 8
    std::fs::write(&file, text).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let server = Server::start_with_state(&state);
    let listed = server.get("/api/tuned").await.json();
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["id"], "tuned-write-read");
    let argv: Vec<&str> = listed[0]["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(&argv[..3], ["pipebench", "run", "tuned-write-read"]);
    assert!(
        argv.windows(2).any(|w| w == ["--pipe-size", "1MiB"]),
        "{argv:?}"
    );
    let log = server.stderr();
    for (n, why) in [
        (2, "is not `tuned-` followed by a step of the catalog"),
        (3, "varies write-read, but the line says \"busy-loop\""),
        (4, "pipe_size = 1099511627776 is not a size a search tries"),
        (5, "buf_size = 12345 is not a size a search tries"),
        (6, "is not a figure a run gives"),
        (7, "unknown field `argv`"),
        (8, "is not a tuned variant's record"),
    ] {
        let said = log
            .lines()
            .any(|l| l.contains(&format!("tuned.jsonl line {n} is refused")) && l.contains(why));
        assert!(said, "line {n} should be refused with {why:?}:\n{log}");
    }
}

/// Entries of `dir` named like a run folder.
fn run_folders(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("pipebook-run-"))
        .collect()
}

/// A cancel while a search runs one of its runs ends the whole search: the
/// page hears `cancelled` (no result), the run's ends are gone, no run folder
/// is left, and the queue takes the next job at once.
#[tokio::test]
async fn a_search_cancelled_mid_way_leaves_nothing_and_frees_the_queue() {
    let _lock = RUN_LOCK.lock().await;
    let root = tempfile::tempdir().unwrap();
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let base = root.path().to_str().unwrap();
    // Run folders of this server, if it made any, would be here and nowhere else.
    let server = Server::start_with_env(&[("TMPDIR", base), ("XDG_RUNTIME_DIR", base)]);
    let mut socket = server.socket().await;
    send(
        &mut socket,
        json!({"type":"tune","step":"write-read","budget":60}),
    )
    .await;
    let started = recv(&mut socket).await;
    assert_eq!(started["kind"], "tune", "{started}");
    let (trial, _) = recv_until(&mut socket, "trial", Duration::from_secs(60)).await;
    assert_eq!(trial["index"], 1, "{trial}");
    // Now in its second run (of seconds): its two ends are the server's children.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let ends = loop {
        let ends = children(server.pid());
        if ends.len() >= 2 {
            break ends;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the search's next run never started: {ends:?}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    send(&mut socket, json!({"type":"cancel"})).await;
    let (cancelled, between) = recv_until(&mut socket, "cancelled", Duration::from_secs(10)).await;
    assert_eq!(cancelled["run"], started["run"], "{cancelled}");
    assert!(
        between.iter().all(|m| m["type"] != "result"),
        "a cancelled search has no result: {between:?}"
    );
    let ends: Vec<u64> = ends.into_iter().map(u64::from).collect();
    assert!(
        crate::common::wait_gone(&ends, Duration::from_secs(5))
            .await
            .is_some(),
        "the cancelled run's ends {ends:?} are still there"
    );
    assert!(
        children(server.pid()).is_empty(),
        "{:?}",
        children(server.pid())
    );
    assert_eq!(run_folders(root.path()), Vec::<String>::new());
    let health = server.get("/api/health").await.json();
    assert_eq!(health["running"], false, "{health}");
    assert_eq!(health["queued"], 0, "{health}");
    // Nothing found is offered: the search did not finish.
    assert_eq!(server.get("/api/tuned").await.json(), json!([]));

    // The queue is free: the next job starts at once and finishes.
    send(
        &mut socket,
        run_message("write-read", json!({"bytes":"4MiB","quiet":true})),
    )
    .await;
    let next = recv(&mut socket).await;
    assert_eq!(next["type"], "started", "{next}");
    let (result, _) = recv_until(&mut socket, "result", Duration::from_secs(30)).await;
    assert_eq!(result["bytes"], 4 << 20, "{result}");
}
