//! Figures to report, not to assert (the machine decides them):
//!
//! ```text
//! cargo build --release -p pipebench
//! cargo test --release -p pipebook --test measure -- --ignored --nocapture
//! ```
//!
//! - throughput of a run through the server vs `pipebench run` of the same step,
//!   alternating, medians;
//! - time from a `run` message to its first `progress`;
//! - the server's idle resident memory, right after start and after the runs.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{recv, recv_until, send, Server};
use serde_json::json;

/// Runs per step and way; `PIPEBOOK_MEASURE_REPEATS` overrides (and
/// `PIPEBOOK_MEASURE_STEPS=a,b` picks the steps).
fn repeats() -> usize {
    std::env::var("PIPEBOOK_MEASURE_REPEATS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(7)
}
const BYTES: &str = "4GiB";

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values[values.len() / 2]
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

fn cli_run(pipebench: &Path, step: &str) -> f64 {
    let output = Command::new(pipebench)
        .args(["run", step, "--bytes", BYTES, "--json"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let result: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    result["gib_per_s"].as_f64().unwrap()
}

#[tokio::test]
#[ignore = "measurement: run with --release --ignored --nocapture"]
async fn measure_server_against_the_cli() {
    let pipebench = Path::new(env!("CARGO_BIN_EXE_pipebook")).with_file_name("pipebench");
    assert!(
        pipebench.is_file(),
        "build the CLI of the same profile first: cargo build --release -p pipebench"
    );
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    let state = tempfile::tempdir().unwrap();
    let book_root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let book_root = book_root.to_str().unwrap();
    let build_dir = tempfile::tempdir().unwrap();
    let server = Server::start_with_args(
        state.path(),
        &[
            "--book-root",
            book_root,
            "--build-dir",
            build_dir.path().to_str().unwrap(),
        ],
    )
    .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let _ = server.get("/").await;
    let rss_start = rss_kib(server.pid());
    let mut socket = server.socket().await;
    let mut first_progress_ms = Vec::new();
    let repeats = repeats();
    println!("profile: {profile}; {repeats} alternating runs of {BYTES} per step and way");
    let steps = std::env::var("PIPEBOOK_MEASURE_STEPS")
        .unwrap_or_else(|_| "busy-loop,write-read,vmsplice-splice".into());
    for step in steps.split(',') {
        let (mut via_server, mut via_cli) = (Vec::new(), Vec::new());
        for round in 0..repeats {
            // ABBA order, so a drift in the machine's speed hits both ways alike.
            if round % 2 == 0 {
                via_cli.push(cli_run(&pipebench, step));
            }
            let asked = Instant::now();
            send(
                &mut socket,
                json!({"type":"run","step":step,"params":{"bytes":BYTES}}),
            )
            .await;
            assert_eq!(recv(&mut socket).await["type"], "started");
            assert_eq!(recv(&mut socket).await["type"], "progress");
            first_progress_ms.push(asked.elapsed().as_secs_f64() * 1000.0);
            let (result, _) = recv_until(&mut socket, "result", Duration::from_secs(120)).await;
            via_server.push(result["gib_per_s"].as_f64().unwrap());
            if round % 2 == 1 {
                via_cli.push(cli_run(&pipebench, step));
            }
        }
        let (s, c) = (median(&mut via_server), median(&mut via_cli));
        println!(
            "{step:16} server {s:7.2} GiB/s   pipebench run {c:7.2} GiB/s   server/cli {:5.1}%   (server {via_server:.2?}, cli {via_cli:.2?})",
            100.0 * s / c
        );
    }
    let worst = first_progress_ms.iter().cloned().fold(0.0, f64::max);
    println!(
        "run -> first progress: median {:.1} ms, worst {worst:.1} ms over {} runs",
        median(&mut first_progress_ms),
        first_progress_ms.len()
    );
    drop(socket);
    tokio::time::sleep(Duration::from_millis(500)).await;
    println!(
        "idle RSS: {} KiB after start, {} KiB after the runs",
        rss_start,
        rss_kib(server.pid())
    );
}
