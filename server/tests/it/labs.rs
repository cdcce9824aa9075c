//! Labs against the real server: a prediction and lab-tagged runs and sweeps
//! over the real WebSocket, recorded in labs.jsonl and still there after a
//! restart; the exported report (JSON sealed with its digest, HTML that runs
//! nothing); and the instructor's merge with the real `pipebook report` binary,
//! with a tampered, a malformed and an impossible report among the files.
//! Runs pin both CPUs, so the test holds `RUN_LOCK`.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::common::{
    expect_refused, lab_run_message, merge_with_forgery, recv, recv_until, run_message, send,
    Server, Socket, RUN_LOCK,
};
use pipebook::labs::export;
use serde_json::{json, Value};

/// A lab test's start: the run lock (labs run steps), a server whose state
/// folder is the test's own, and a page's socket to it.
async fn lab_server() -> (
    tokio::sync::MutexGuard<'static, ()>,
    tempfile::TempDir,
    Server,
    Socket,
) {
    let lock = RUN_LOCK.lock().await;
    let state_dir = tempfile::tempdir().unwrap();
    let server = Server::start_with_state(state_dir.path());
    let socket = server.socket().await;
    (lock, state_dir, server, socket)
}

/// Sends `value` as the prediction for `lab` and expects it saved at once.
async fn predicted(socket: &mut Socket, lab: &str, value: Value) {
    send(socket, json!({"type":"predict","lab":lab,"value":value})).await;
    let reply = recv(socket).await;
    assert_eq!(reply["type"], "saved", "{lab}: {value}: {reply}");
}

const MIB: u64 = 1 << 20;

/// The lab report `student` exports from `server` (its body as served, and
/// parsed), and the index of lab `lab` in its `labs`.
async fn exported_lab(server: &Server, student: &str, lab: &str) -> (String, Value, usize) {
    let exported = server
        .get(&format!("/api/labs/report.json?student={student}"))
        .await;
    assert_eq!(exported.status, 200, "{}", exported.body);
    let report = exported.json();
    let index = report["labs"]
        .as_array()
        .unwrap()
        .iter()
        .position(|l| l["id"] == lab)
        .unwrap_or_else(|| panic!("no lab {lab} in the report: {report}"));
    (exported.body, report, index)
}

async fn lab_state(server: &Server, lab: &str) -> Value {
    let state = server.get("/api/labs").await;
    assert_eq!(state.status, 200, "{}", state.body);
    state.json()["labs"][lab].clone()
}

/// The first measurement of task `task` in a lab of an exported report.
fn report_measurement<'a>(lab: &'a Value, task: &str) -> &'a Value {
    lab["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["task"] == task)
        .unwrap_or_else(|| panic!("no {task} measurement in {lab}"))
}

/// The export's check `check` of lab `lab`: its status, value and interval.
async fn exported_check(server: &Server, lab: &str, check: &str) -> Value {
    let exported = server.get("/api/labs/report.json?student=Ada").await;
    assert_eq!(exported.status, 200, "{}", exported.body);
    let report = exported.json();
    let lab = report["labs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["id"] == lab)
        .unwrap()
        .clone();
    let found = lab["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == check)
        .unwrap();
    json!({"status": found["status"], "value": found["value"], "ci_low": found["ci_low"],
           "ci_high": found["ci_high"], "runs": lab["measurements"].as_array().unwrap().len()})
}

/// Real runs of a lab's sweep task, quiet and then watched: the watched ones are
/// recorded (and exported) but move no speed check, whose value and interval
/// stay those of the quiet runs.
#[tokio::test]
async fn a_watched_lab_run_is_kept_but_moves_no_speed_check() {
    let (_lock, _state_dir, server, mut socket) = lab_server().await;
    send(
        &mut socket,
        json!({"type":"predict","lab":"sizes","value":2}),
    )
    .await;
    recv_until(&mut socket, "saved", Duration::from_secs(10)).await;
    let sweep = |quiet: bool| {
        json!({"type":"sweep","step":"write-read","param":"buf_size","values":[4096, 65536, 262144],
               "repeats":5,"params":{"bytes":"4MiB","quiet":quiet},"lab":{"id":"sizes","task":"buf"}})
    };
    send(&mut socket, sweep(true)).await;
    recv_until(&mut socket, "done", Duration::from_secs(240)).await;
    let quiet = exported_check(&server, "sizes", "buf-helps").await;
    assert!(
        quiet["ci_low"].is_f64(),
        "fifteen quiet points give an interval: {quiet}"
    );
    send(&mut socket, sweep(false)).await;
    let (_, points) = recv_until(&mut socket, "done", Duration::from_secs(240)).await;
    assert!(points
        .iter()
        .filter(|m| m["type"] == "point")
        .all(|m| m["result"]["watched"] == true));
    let both = exported_check(&server, "sizes", "buf-helps").await;
    assert_eq!(both["runs"], 30, "{both}");
    for key in ["status", "value", "ci_low", "ci_high"] {
        assert_eq!(both[key], quiet[key], "{key}: {both} against {quiet}");
    }
}

#[tokio::test]
async fn a_lab_is_recorded_exported_and_merged() {
    let (_lock, state_dir, mut server, mut socket) = lab_server().await;

    // A prediction is checked against its question, then saved.
    expect_refused(
        &mut socket,
        json!({"type":"predict","lab":"vmsplice-safety","value":2}),
        "from 0 to 1",
    )
    .await;
    send(
        &mut socket,
        json!({"type":"predict","lab":"vmsplice-safety","value":0.3}),
    )
    .await;
    assert_eq!(
        recv(&mut socket).await,
        json!({"type":"saved","store":"labs","lab":"vmsplice-safety","ok":true})
    );

    // A lab run must be its task's step, and leaves the task's settings alone.
    let tag = json!({"id":"vmsplice-safety","task":"verified"});
    expect_refused(
        &mut socket,
        lab_run_message("busy-loop", json!({}), &tag),
        "runs step `vmsplice-read`, not step `busy-loop`",
    )
    .await;
    expect_refused(
        &mut socket,
        lab_run_message(
            "vmsplice-read",
            json!({"bytes":"8MiB","pipe_size":"1MiB"}),
            &tag,
        ),
        "`pipe_size` is fixed",
    )
    .await;
    // Nor may it be profiled: perf pauses the ends, the lab would record a
    // figure that is not one. Refused before anything runs.
    expect_refused(
        &mut socket,
        lab_run_message(
            "vmsplice-read",
            json!({"bytes":"8MiB","profile":true}),
            &tag,
        ),
        "`profile` is fixed by task `verified`",
    )
    .await;
    expect_refused(&mut socket, json!({"type":"sweep","step":"write-read","param":"buf_size","values":[4096, 65536, 262144],
               "repeats":5,"params":{"bytes":"4MiB","profile":true},"lab":{"id":"sizes","task":"buf"}}), "`profile` is fixed by task `buf`").await;

    // The task's own setting (verify) is applied by the server.
    send(
        &mut socket,
        lab_run_message("vmsplice-read", json!({"bytes":"16MiB"}), &tag),
    )
    .await;
    let (result, _) = recv_until(&mut socket, "result", Duration::from_secs(30)).await;
    assert_eq!(result["bytes"], 16 * MIB);
    assert_eq!(
        result["options"]["reader"]["verify"], true,
        "verified: {result}"
    );
    send(
        &mut socket,
        json!({"type":"run","step":"vmsplice-reuse","params":{"bytes":"16MiB"},
               "lab":{"id":"vmsplice-safety","task":"reuse"}}),
    )
    .await;
    let (reuse, _) = recv_until(&mut socket, "result", Duration::from_secs(30)).await;
    assert!(reuse["corrupted_bytes"].is_u64(), "{reuse}");

    // A sweep task records each point with its value; quiet, as the lab card
    // sends it, since its checks compare speeds and a watched run counts in
    // none of them. (The vmsplice-safety runs above are watched: their checks
    // read damaged bytes and counts, which watching does not move.)
    send(
        &mut socket,
        json!({"type":"sweep","step":"write-read","param":"buf_size","values":[4096, 65536, 262144],
               "repeats":5,"params":{"bytes":"4MiB","quiet":true},"lab":{"id":"sizes","task":"buf"}}),
    )
    .await;
    let (done, points) = recv_until(&mut socket, "done", Duration::from_secs(240)).await;
    assert_eq!(done["runs"], 15);
    assert_eq!(points.iter().filter(|m| m["type"] == "point").count(), 15);

    // Once the runs have started, the prediction is locked.
    expect_refused(
        &mut socket,
        json!({"type":"predict","lab":"vmsplice-safety","value":0.9}),
        "prediction is locked",
    )
    .await;

    let safety = lab_state(&server, "vmsplice-safety").await;
    assert_eq!(safety["prediction"]["value"], 0.3);
    let tasks: Vec<&str> = safety["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["task"].as_str().unwrap())
        .collect();
    assert_eq!(tasks, ["verified", "reuse"]);
    let mut values: Vec<u64> = lab_state(&server, "sizes").await["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["value"].as_u64().unwrap())
        .collect();
    values.sort_unstable();
    let expected: Vec<u64> = [4096u64, 65536, 262144]
        .iter()
        .flat_map(|v| [*v; 5])
        .collect();
    assert_eq!(values, expected);
    drop(socket);

    // A restart on the same state folder shows the same labs.
    assert!(server.terminate(Duration::from_secs(10)).is_some());
    let server = Server::start_with_state(state_dir.path());
    assert_eq!(lab_state(&server, "vmsplice-safety").await, safety);

    // The export: a download, sealed, every check judged.
    assert_eq!(server.get("/api/labs/report.json").await.status, 400);
    let exported = server.get("/api/labs/report.json?student=Ada%20L").await;
    assert_eq!(exported.status, 200, "{}", exported.body);
    assert!(exported
        .header("content-disposition")
        .unwrap()
        .starts_with("attachment"));
    let report = exported.json();
    assert_eq!(report["schema"], "pipebook-lab-report");
    assert_eq!(report["schema_version"], 1);
    assert_eq!(report["student"], "Ada L");
    assert!(
        report["system"]["kernel"].is_string(),
        "machine info from /api/system"
    );
    export::verify_digest(&report).expect("the digest matches");
    let lab = report["labs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["id"] == "vmsplice-safety")
        .unwrap();
    let clean = lab["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "double-buffer-clean")
        .unwrap();
    assert_eq!(clean["status"], "pass", "{clean}");
    // The lab run kept its counts through the restart and into the export, and
    // the check on them is judged from them: the writer's pages allocated per
    // GiB where the kernel let the run count them, else said unavailable.
    let measured = &report_measurement(lab, "verified")["result"];
    let counted = lab["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "vmsplice-allocates-nothing")
        .unwrap();
    assert!(
        measured["counts"]["writer"]["syscalls"]["vmsplice"]
            .as_u64()
            .is_some_and(|calls| calls > 0),
        "{measured}"
    );
    match measured["counts"]["writer"]["page_allocs"].as_f64() {
        Some(allocs) => {
            let faults = measured["counts"]["writer"]["page_faults"]
                .as_f64()
                .unwrap();
            let per_gib = (allocs - faults).max(0.0)
                / (measured["bytes"].as_f64().unwrap() / (1u64 << 30) as f64);
            let value = counted["value"].as_f64().unwrap();
            assert!(
                (value - per_gib).abs() < 1e-6 * per_gib.max(1.0),
                "{counted}"
            );
            assert!(
                counted["status"] == "pass" || counted["status"] == "fail",
                "{counted}"
            );
        }
        None => assert_eq!(counted["status"], "unavailable", "{counted}"),
    }
    assert!(lab["checks"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["status"] != "pending"));

    let html = server.get("/api/labs/report.html?student=Ada%20L").await;
    assert_eq!(html.status, 200);
    assert!(html
        .header("content-security-policy")
        .unwrap()
        .contains("default-src 'none'"));
    assert!(
        !html.body.to_ascii_lowercase().contains("<script"),
        "the report runs no script"
    );
    assert!(html.body.contains("<svg") && html.body.contains("Making vmsplice safe"));

    // The merge: the good report, a tampered copy, a malformed file, and one
    // with an impossible figure (resealed, so only the figure check can catch it).
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let good = write("ada.json", &exported.body);
    let mut tampered = report.clone();
    tampered["student"] = json!("Mallory");
    let tampered = write("mallory.json", &tampered.to_string());
    let malformed = write("broken.json", &exported.body[..exported.body.len() / 2]);
    let mut fast = report.clone();
    let safety_index = fast["labs"]
        .as_array()
        .unwrap()
        .iter()
        .position(|l| l["id"] == "vmsplice-safety")
        .unwrap();
    fast["labs"][safety_index]["measurements"][0]["result"]["gib_per_s"] = json!(5000.0);
    fast["student"] = json!("Flash");
    let fast = write("flash.json", &export::seal(fast).to_string());
    // A throughput check states its 95% interval around its ratio (the sweep
    // ran five runs a value); moved and resealed, the report is re-judged and
    // refused, since its measurements give another interval.
    let sizes_index = report["labs"]
        .as_array()
        .unwrap()
        .iter()
        .position(|l| l["id"] == "sizes")
        .unwrap();
    let buf_index = report["labs"][sizes_index]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .position(|c| c["id"] == "buf-helps")
        .unwrap();
    let buf = &report["labs"][sizes_index]["checks"][buf_index];
    let (low, value, high) = (
        buf["ci_low"]
            .as_f64()
            .unwrap_or_else(|| panic!("no interval: {buf}")),
        buf["value"].as_f64().unwrap(),
        buf["ci_high"].as_f64().unwrap(),
    );
    assert!(low <= value && value <= high, "{buf}");
    let mut moved = report.clone();
    moved["labs"][sizes_index]["checks"][buf_index]["ci_low"] = json!(low / 2.0);
    moved["student"] = json!("Moved");
    let moved = write("moved.json", &export::seal(moved).to_string());
    let html_out = dir.path().join("class.html");
    let csv_out = dir.path().join("class.csv");
    let merged = Command::new(env!("CARGO_BIN_EXE_pipebook"))
        .arg("report")
        .args([&good, &tampered, &malformed, &fast, &moved])
        .arg("--html")
        .arg(&html_out)
        .arg("--csv")
        .arg(&csv_out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&merged.stderr);
    assert_eq!(merged.status.code(), Some(3), "some were skipped: {stderr}");
    for (file, reason) in [
        (&tampered, "digest mismatch"),
        (&malformed, "malformed JSON"),
        (&fast, "beyond any machine"),
        (&moved, "interval"),
    ] {
        let line = stderr
            .lines()
            .find(|l| l.contains(&*file.display().to_string()))
            .unwrap_or_else(|| panic!("{} is not named: {stderr}", file.display()));
        assert!(line.contains(reason), "{line}");
    }
    assert!(!stderr.lines().any(|l| l.contains("ada.json")), "{stderr}");
    let csv = std::fs::read_to_string(&csv_out).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 2, "a header and one student: {csv}");
    assert!(
        rows[0].contains("check: vmsplice-safety/double-buffer-clean"),
        "{}",
        rows[0]
    );
    assert!(
        rows[0].contains("median GiB/s: write-read, buf_size 4 KiB")
            || rows[0].contains("median GiB/s: write-read, buf_size 4KiB"),
        "{}",
        rows[0]
    );
    assert!(rows[1].starts_with("Ada L,"), "{}", rows[1]);
    let class = std::fs::read_to_string(&html_out).unwrap();
    assert!(class.contains("Ada L") && class.contains("mallory.json") && class.contains("<svg"));
    assert!(!class.to_ascii_lowercase().contains("<script"));

    // Only good reports: exit status 0.
    let clean = Command::new(env!("CARGO_BIN_EXE_pipebook"))
        .args(["report".as_ref(), good.as_os_str()])
        .output()
        .unwrap();
    assert_eq!(
        clean.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&clean.stderr)
    );
    assert!(String::from_utf8_lossy(&clean.stdout).starts_with("student,file,"));
    assert!(Path::new(&good).exists());
}

#[tokio::test]
async fn lab_messages_are_checked() {
    let server = Server::start();
    let mut socket = server.socket().await;
    expect_refused(
        &mut socket,
        json!({"type":"predict","lab":"warp","value":1}),
        "unknown lab `warp`",
    )
    .await;
    send(&mut socket, json!({"type":"reset_lab","lab":"variance"})).await;
    assert_eq!(recv(&mut socket).await["type"], "saved");
    expect_refused(
        &mut socket,
        json!({"type":"run","step":"write-read","lab":{"id":"variance","task":"nope"}}),
        "has no task `nope`: its tasks are repeat",
    )
    .await;
    expect_refused(
        &mut socket,
        json!({"type":"sweep","step":"write-read","param":"pipe_size","values":[16384],
               "lab":{"id":"sizes","task":"pipe"}}),
        "a sweep of pipe_size over",
    )
    .await;
    assert_eq!(
        server.get("/api/labs/report.json?student=%0A").await.status,
        400
    );
}

/// Lab 6's tasks are IPC runs: a lab-tagged `ipc` message must be its task's
/// mechanism, its record lands in /api/labs, and the exported report with it
/// goes through `pipebook report` (which refuses it once its MiB/s is forged).
#[tokio::test]
async fn a_lab_ipc_task_is_recorded_and_reported() {
    let (_lock, _state_dir, server, mut socket) = lab_server().await;
    predicted(&mut socket, "choose-ipc", json!("posix-shm")).await;

    let tag = json!({"id":"choose-ipc","task":"posix-shm"});
    expect_refused(
        &mut socket,
        json!({"type":"ipc","mechanism":"pipe-rw","params":{"bytes":"4MiB"},"lab":tag}),
        "runs IPC mechanism `posix-shm`, not IPC mechanism `pipe-rw`",
    )
    .await;
    expect_refused(&mut socket, json!({"type":"ipc","mechanism":"posix-shm","params":{"bytes":"4MiB","chunk":"4KiB"},"lab":tag}), "`chunk` is fixed").await;
    expect_refused(
        &mut socket,
        lab_run_message("write-read", json!({"bytes":"4MiB"}), &tag),
        "runs IPC mechanism `posix-shm`, not step",
    )
    .await;
    // Refusals started nothing and recorded nothing.
    assert_eq!(
        lab_state(&server, "choose-ipc").await["measurements"],
        json!([])
    );

    send(
        &mut socket,
        json!({"type":"ipc","mechanism":"posix-shm","params":{"bytes":"4MiB"},"lab":tag}),
    )
    .await;
    let (result, _) = recv_until(&mut socket, "result", Duration::from_secs(60)).await;
    assert_eq!(result["kind"], "ipc", "{result}");
    assert_eq!(result["bytes"], 4 * MIB);
    assert_eq!(result["checksum_ok"], true, "{result}");

    let state = lab_state(&server, "choose-ipc").await;
    let ms = state["measurements"].as_array().unwrap();
    assert_eq!(ms.len(), 1, "{state}");
    assert_eq!(ms[0]["task"], "posix-shm");
    assert_eq!(ms[0]["result"]["kind"], "ipc");
    assert_eq!(ms[0]["result"]["mechanism"], "posix-shm");
    assert_eq!(ms[0]["result"]["mib_per_s"], result["mib_per_s"]);
    // An untagged IPC run afterwards is not the lab's.
    send(
        &mut socket,
        json!({"type":"ipc","mechanism":"posix-shm","params":{"bytes":"1MiB"}}),
    )
    .await;
    recv_until(&mut socket, "result", Duration::from_secs(60)).await;
    assert_eq!(
        lab_state(&server, "choose-ipc").await["measurements"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    drop(socket);

    // The report re-judges the IPC record and accepts it; a forged MiB/s is refused.
    let (exported, report, index) = exported_lab(&server, "Grace", "choose-ipc").await;
    assert!(report["labs"][index]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["status"] == "pending"));
    let (line, stdout) = merge_with_forgery(&exported, "grace.json", &report, |forged| {
        let result = &mut forged["labs"][index]["measurements"][0]["result"];
        let mib = result["mib_per_s"].as_f64().unwrap();
        result["mib_per_s"] = json!(mib * 3.0);
    });
    assert!(line.contains("MiB/s is not the"), "{line}");
    assert!(stdout.contains("ipc posix-shm"), "{stdout}");
}

/// Labs 7 and 8's tasks are latency runs: a lab-tagged `latency` message must
/// be its task's configuration (only the round trips free), its record lands in
/// /api/labs, the checks are judged on real runs, and the exported report goes
/// through `pipebook report` (which refuses it once a percentile is forged out
/// of order).
#[tokio::test]
async fn a_lab_latency_task_is_recorded_judged_and_reported() {
    let (_lock, _state_dir, server, mut socket) = lab_server().await;
    predicted(&mut socket, "latency-cpu", json!(3000)).await;

    let busy = json!({"id":"latency-cpu","task":"busy"});
    for (message, expect) in [
        (
            json!({"type":"latency","mechanism":"tcp","lab":busy}),
            "runs latency of `pipe` (busy, 64 B), not latency of `tcp`",
        ),
        (
            json!({"type":"latency","mechanism":"pipe","mode":"blocking","lab":busy}),
            "`mode` is fixed",
        ),
        (
            json!({"type":"latency","mechanism":"pipe","size":4096,"lab":busy}),
            "`size` is fixed",
        ),
        (
            json!({"type":"latency","mechanism":"pipe","cpus":[0,0],"lab":busy}),
            "`cpus` is fixed",
        ),
        (
            json!({"type":"ipc","mechanism":"pipe-rw","lab":busy}),
            "not IPC mechanism `pipe-rw`",
        ),
    ] {
        expect_refused(&mut socket, message, expect).await;
    }
    assert_eq!(
        lab_state(&server, "latency-cpu").await["measurements"],
        json!([])
    );

    // Six runs of each task (what a compared task takes), 500 round trips each
    // (the student's count).
    let blocking = json!({"id":"latency-cpu","task":"blocking"});
    for tag in [&blocking, &busy] {
        for _ in 0..6 {
            send(
                &mut socket,
                json!({"type":"latency","mechanism":"pipe","round_trips":500,"lab":tag}),
            )
            .await;
            let (result, _) = recv_until(&mut socket, "result", Duration::from_secs(60)).await;
            assert_eq!(result["kind"], "latency", "{result}");
            assert_eq!(result["count"], 500, "{result}");
            assert_eq!(result["size"], 64, "{result}");
        }
    }
    let state = lab_state(&server, "latency-cpu").await;
    let ms = state["measurements"].as_array().unwrap();
    assert_eq!(ms.len(), 12, "{state}");
    assert!(ms[..6]
        .iter()
        .all(|m| m["task"] == "blocking" && m["result"]["mode"] == "blocking"));
    assert!(ms[6..]
        .iter()
        .all(|m| m["task"] == "busy" && m["result"]["mode"] == "busy"));
    drop(socket);

    // The report judges every check on these runs; on two CPUs busy-polling
    // has the lower median.
    let (exported, report, index) = exported_lab(&server, "Ada", "latency-cpu").await;
    let checks = report["labs"][index]["checks"].as_array().unwrap().clone();
    assert_eq!(checks.len(), 4, "{checks:?}");
    for check in &checks {
        assert!(
            check["status"] == "pass" || check["status"] == "fail",
            "judged on twelve runs: {check}"
        );
    }
    let cpus = pipebench::process::cpu::allowed_cpus();
    if cpus.len() >= 2 {
        let faster = checks.iter().find(|c| c["id"] == "busy-faster").unwrap();
        assert_eq!(faster["status"], "pass", "{faster}");
    }

    // The readable report draws the latency runs' medians, not an empty lab.
    let html = server.get("/api/labs/report.html?student=Ada").await;
    assert_eq!(html.status, 200);
    assert!(
        html.body.contains("Median round trip (p50)"),
        "{}",
        html.body
    );

    let (line, _) = merge_with_forgery(&exported, "ada.json", &report, |forged| {
        let result = &mut forged["labs"][index]["measurements"][0]["result"];
        let p50 = result["p50"].as_u64().unwrap();
        result["p99"] = json!(p50 / 2);
    });
    assert!(line.contains("below a lower percentile"), "{line}");
}

/// Runs `message` and reads what follows its `result` up to the history's
/// `saved`: the result, then every `saved` of that run, in order.
async fn run_until_kept(socket: &mut crate::common::Socket, message: Value) -> (Value, Vec<Value>) {
    send(socket, message).await;
    let (result, _) = recv_until(socket, "result", Duration::from_secs(30)).await;
    let mut saved = Vec::new();
    loop {
        let next = recv(socket).await;
        assert_eq!(next["type"], "saved", "after the result: {next}");
        assert_eq!(next["run"], result["run"], "{next}");
        let last = next["store"] == "history";
        saved.push(next);
        if last {
            return (result, saved);
        }
    }
}

/// A lab run's result is kept by the same path as a plain run's: the history
/// has both, the lab's record is that same result, and when the history
/// refuses a save both hear the same typed error in the same place, while the
/// lab still records its measurement first.
#[tokio::test]
async fn a_lab_run_and_a_plain_run_are_saved_by_the_same_path() {
    let (_lock, state_dir, server, mut socket) = lab_server().await;
    let plain = run_message("vmsplice-read", json!({"bytes":"8MiB","quiet":true}));
    let tag = json!({"id":"vmsplice-safety","task":"verified"});
    let lab = lab_run_message("vmsplice-read", json!({"bytes":"8MiB"}), &tag);

    let (plain_result, plain_saved) = run_until_kept(&mut socket, plain.clone()).await;
    assert_eq!(
        plain_saved,
        vec![json!({"type":"saved","run":plain_result["run"],"store":"history","ok":true})]
    );
    let (lab_result, lab_saved) = run_until_kept(&mut socket, lab.clone()).await;
    assert_eq!(
        lab_saved,
        vec![
            json!({"type":"saved","run":lab_result["run"],"store":"labs","lab":"vmsplice-safety","ok":true}),
            json!({"type":"saved","run":lab_result["run"],"store":"history","ok":true}),
        ]
    );
    let history = server.get("/api/results").await.json();
    let history = history.as_array().unwrap();
    assert_eq!(history.len(), 2, "{history:?}");
    let stamps: Vec<&Value> = history.iter().map(|r| &r["finished_at_ms"]).collect();
    assert_eq!(
        stamps,
        [
            &plain_result["finished_at_ms"],
            &lab_result["finished_at_ms"]
        ]
    );
    let recorded = lab_state(&server, "vmsplice-safety").await;
    assert_eq!(
        recorded["measurements"][0]["result"], history[1],
        "the lab keeps the very result the history keeps: {recorded}"
    );
    // Recorded under the current rule: its checks judge at planned looks.
    assert_eq!(recorded["measurements"][0]["planned_looks"], true);

    // The history refuses (a link where results.jsonl was): both runs hear it
    // as the same `unsafe_file`, after the lab's own record for the lab run.
    let elsewhere = tempfile::tempdir().unwrap();
    let results = state_dir.path().join("results.jsonl");
    std::fs::remove_file(&results).unwrap();
    std::os::unix::fs::symlink(elsewhere.path().join("x"), &results).unwrap();
    let (_, plain_saved) = run_until_kept(&mut socket, plain).await;
    let (_, lab_saved) = run_until_kept(&mut socket, lab).await;
    assert_eq!(plain_saved.len(), 1, "{plain_saved:?}");
    assert_eq!(lab_saved.len(), 2, "{lab_saved:?}");
    assert_eq!(lab_saved[0]["store"], "labs");
    assert_eq!(lab_saved[0]["ok"], true, "{lab_saved:?}");
    for saved in [&plain_saved[0], &lab_saved[1]] {
        assert_eq!(saved["store"], "history", "{saved}");
        assert_eq!(saved["ok"], false, "{saved}");
        assert_eq!(saved["error"]["kind"], "unsafe_file", "{saved}");
    }
    assert!(!elsewhere.path().join("x").exists());
    let recorded = lab_state(&server, "vmsplice-safety").await;
    assert_eq!(recorded["measurements"].as_array().unwrap().len(), 2);
}

/// The check of the vmsplice-safety lab judged from an export made now.
async fn vmsplice_check(server: &Server) -> Value {
    let exported = server.get("/api/labs/report.json?student=T").await;
    assert_eq!(exported.status, 200, "{}", exported.body);
    let report = exported.json();
    let lab = report["labs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["id"] == "vmsplice-safety")
        .cloned()
        .unwrap();
    lab["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "vmsplice-allocates-nothing")
        .cloned()
        .unwrap()
}

/// At a lab's size (16 MiB) the writer's start-up faults in its buffers (128
/// pages of 4 KiB, about 0.03 per 4 KiB moved) outweigh what vmsplice
/// allocates: the check judges what is left beyond the faults, and so holds
/// run after run, each run on its own and the median of them all.
#[tokio::test]
async fn the_vmsplice_allocation_check_holds_on_lab_sized_runs_every_time() {
    let (_lock, _state_dir, server, mut socket) = lab_server().await;
    let tag = json!({"id":"vmsplice-safety","task":"verified"});
    for run in 0..5 {
        send(
            &mut socket,
            lab_run_message("vmsplice-read", json!({"bytes":"16MiB"}), &tag),
        )
        .await;
        let (result, _) = recv_until(&mut socket, "result", Duration::from_secs(30)).await;
        assert_eq!(result["bytes"], 16 * MIB);
        let check = vmsplice_check(&server).await;
        let writer = &result["counts"]["writer"];
        match writer["page_allocs"].as_f64() {
            Some(allocs) => {
                // Without the allowance the start-up alone breaks the bound.
                let pages = (16 * MIB / 4096) as f64;
                let faults = writer["page_faults"].as_f64().unwrap();
                if result["page_size"] == 4096 {
                    assert!(allocs / pages > 0.01, "run {run}: {writer}");
                }
                assert!(
                    (allocs - faults).max(0.0) / pages < 0.01,
                    "run {run}: {writer}"
                );
                assert_eq!(check["status"], "pass", "run {run}: {check}");
            }
            None => assert_eq!(check["status"], "unavailable", "run {run}: {check}"),
        }
    }
}

/// A `labs.jsonl` line of a run of `task` in the busy-cost lab at `gibs`, as
/// a runner from before planned looks wrote it (no `planned_looks`).
fn older_busy_cost_line(task: &str, gibs: f64) -> String {
    use pipebench::engine::result::RunResult;
    let step = if task == "busy" {
        "busy-loop"
    } else {
        "write-read"
    };
    let result = RunResult {
        elapsed_ms: 1000.0 / gibs,
        gib_per_s: gibs,
        watched: Some(false),
        ..RunResult::forged(step).unwrap()
    };
    json!({"kind": "measurement", "lab": "busy-cost", "task": task, "result": result, "at_ms": 1})
        .to_string()
}

/// Runs a student recorded before the lab checks judged at planned looks are
/// read from the store and judged again under the current rule: the
/// throughput check is judged at its first look (its share of the 5%), and
/// `/api/labs` says it was judged again (`rejudged`), which the lab card puts
/// in a sentence; a check on a count was never judged on an interval and says
/// nothing of it.
#[tokio::test]
async fn runs_recorded_before_planned_looks_are_judged_again_and_the_api_says_so() {
    let state_dir = tempfile::tempdir().unwrap();
    let lines: Vec<String> = [3.0, 3.1, 2.9, 3.05, 2.95, 3.02]
        .iter()
        .flat_map(|g| {
            [
                older_busy_cost_line("busy", *g),
                older_busy_cost_line("blocking", g / 1.5),
            ]
        })
        .collect();
    std::fs::write(state_dir.path().join("labs.jsonl"), lines.join("\n") + "\n").unwrap();
    let server = Server::start_with_state(state_dir.path());
    let lab = lab_state(&server, "busy-cost").await;
    assert_eq!(lab["measurements"].as_array().unwrap().len(), 12, "{lab}");
    let checks = lab["checks"].as_array().unwrap();
    let find = |id: &str| checks.iter().find(|c| c["id"] == id).unwrap().clone();
    let speed = find("busy-not-slower");
    assert_eq!(speed["status"], "pass", "{speed}");
    assert_eq!(speed["rejudged"], true, "{speed}");
    assert_eq!(speed["judged"]["design"], "sequential", "{speed}");
    assert_eq!(
        (
            speed["judged"]["look"].as_u64(),
            speed["judged"]["looks"].as_u64()
        ),
        (Some(1), Some(3))
    );
    assert!(
        speed["detail"].as_str().unwrap().contains("look 1 of 3"),
        "{speed}"
    );
    let sleeps = find("busy-sleeps-rarely");
    assert!(sleeps.get("rejudged").is_none(), "{sleeps}");
}
