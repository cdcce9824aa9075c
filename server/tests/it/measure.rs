//! Figures to report, not to assert (the machine decides them):
//!
//! ```text
//! cargo build --release -p pipebench
//! cargo test --release -p pipebook --test it measure:: -- --ignored --nocapture
//! ```
//!
//! - throughput of a run through the server, live (a client reading progress, the
//!   pipe's occupancy sampled every 2 ms) and quiet (neither), vs `pipebench run` of
//!   the same step, and vs `pipebench run --occupancy` (`cli-occupancy`: the CLI
//!   sampling like a live run), in rotating order, medians;
//! - time from a `run` message to its first `progress`;
//! - the server's idle resident memory, right after start and after the runs;
//! - what counting the kernel's events costs: `pipebench run STEP` with counts and
//!   with `--no-counts`, in alternating pairs, medians and the median pair ratio
//!   (`measure_counting_overhead`; `PIPEBOOK_MEASURE_PAIRS`, default 11;
//!   `PIPEBOOK_MEASURE_TRACE=1` puts `--trace-syscalls` on the counted side).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::{recv, recv_until, send, Server};
use serde_json::json;

/// Runs per step and way; `PIPEBOOK_MEASURE_REPEATS` overrides (and
/// `PIPEBOOK_MEASURE_STEPS=a,b` picks the steps, `PIPEBOOK_MEASURE_BYTES` the size).
fn repeats() -> usize {
    std::env::var("PIPEBOOK_MEASURE_REPEATS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(9)
}

/// The ways a run can be made, by index.
const WAYS: [&str; 4] = ["cli", "live", "quiet", "cli-occupancy"];

/// Which ways to compare: `PIPEBOOK_MEASURE_WAYS=cli,quiet` (default cli, live, quiet).
fn ways() -> Vec<usize> {
    let names = std::env::var("PIPEBOOK_MEASURE_WAYS").unwrap_or_else(|_| "cli,live,quiet".into());
    let mut ways: Vec<usize> = names
        .split(',')
        .filter_map(|w| WAYS.iter().position(|n| *n == w))
        .collect();
    ways.dedup();
    ways
}

fn bytes() -> String {
    std::env::var("PIPEBOOK_MEASURE_BYTES").unwrap_or_else(|_| "4GiB".into())
}

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

fn cli_run(pipebench: &Path, step: &str, occupancy: bool) -> f64 {
    let output = Command::new(pipebench)
        .args(["run", step, "--bytes", &bytes(), "--json"])
        .args(occupancy.then_some("--occupancy"))
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
    let bytes = bytes();
    println!("profile: {profile}; {repeats} rounds of {bytes} per step and way, order rotating");
    let steps = std::env::var("PIPEBOOK_MEASURE_STEPS")
        .unwrap_or_else(|_| "busy-loop,write-read,vmsplice-splice".into());
    for step in steps.split(',') {
        let (mut live, mut quiet, mut via_cli) = (Vec::new(), Vec::new(), Vec::new());
        let mut cli_watched = Vec::new();
        for round in 0..repeats {
            // Rotate the order of the three ways, so a drift in the machine's speed
            // hits each alike.
            let ways = ways();
            for way in (0..ways.len()).map(|k| ways[(k + round) % ways.len()]) {
                match way {
                    0 => via_cli.push(cli_run(&pipebench, step, false)),
                    3 => cli_watched.push(cli_run(&pipebench, step, true)),
                    _ => {
                        let is_quiet = way == 2;
                        let asked = Instant::now();
                        send(
                            &mut socket,
                            json!({"type":"run","step":step,
                                   "params":{"bytes":bytes,"quiet":is_quiet}}),
                        )
                        .await;
                        // The previous run may still be saving its result (its
                        // `saved` comes after its `result`): a moment in the queue
                        // is fine.
                        let mut first = recv(&mut socket).await;
                        while first["type"] == "queued" || first["type"] == "saved" {
                            first = recv(&mut socket).await;
                        }
                        assert_eq!(first["type"], "started", "{first}");
                        if !is_quiet {
                            // The previous run's `saved` may still come after
                            // this run's `started`.
                            let mut next = recv(&mut socket).await;
                            while next["type"] == "saved" {
                                next = recv(&mut socket).await;
                            }
                            assert_eq!(next["type"], "progress", "{next}");
                            first_progress_ms.push(asked.elapsed().as_secs_f64() * 1000.0);
                        }
                        let (result, _) =
                            recv_until(&mut socket, "result", Duration::from_secs(120)).await;
                        let gibs = result["gib_per_s"].as_f64().unwrap();
                        if is_quiet {
                            quiet.push(gibs);
                        } else {
                            live.push(gibs);
                        }
                    }
                }
            }
        }
        // Each round ran every way once, side by side: the rounds are pairs, and
        // a machine that swings between modes (busy-loop on a VM) swings both
        // sides of a pair alike, which a ratio of medians over all runs cannot see.
        for (name, way) in [
            ("quiet", &quiet),
            ("live", &live),
            ("cli-occupancy", &cli_watched),
        ] {
            if way.len() == via_cli.len() && way.len() >= 2 {
                let pair_ratios: Vec<f64> = way.iter().zip(&via_cli).map(|(s, c)| s / c).collect();
                let fixed = pipebench::stats::verdict::Design::Fixed;
                match pipebench::stats::verdict::judge_paired(way, &via_cli, fixed) {
                    Ok(c) => println!(
                        "{step:16} {name}/cli by rounds: {}, median round ratio {:.3}, round ratios {pair_ratios:.3?}",
                        c.sentence,
                        pipebench::stats::median(&pair_ratios).unwrap_or(f64::NAN)
                    ),
                    Err(err) => println!("{step:16} {name}/cli: {err}"),
                }
            }
        }
        let median_or_nan = |v: &mut Vec<f64>| if v.is_empty() { f64::NAN } else { median(v) };
        let (l, q, c, w) = (
            median_or_nan(&mut live),
            median_or_nan(&mut quiet),
            median_or_nan(&mut via_cli),
            median_or_nan(&mut cli_watched),
        );
        println!(
            "{step:16} cli {c:7.2}  quiet {q:7.2} ({:5.1}%)  live {l:7.2} ({:5.1}%)  cli-occupancy {w:7.2} ({:5.1}%)   cli {via_cli:.2?} quiet {quiet:.2?} live {live:.2?} cli-occupancy {cli_watched:.2?}",
            100.0 * q / c,
            100.0 * l / c,
            100.0 * w / c
        );
    }
    if !first_progress_ms.is_empty() {
        let worst = first_progress_ms.iter().cloned().fold(0.0, f64::max);
        println!(
            "run -> first progress: median {:.1} ms, worst {worst:.1} ms over {} runs",
            median(&mut first_progress_ms),
            first_progress_ms.len()
        );
    }
    drop(socket);
    tokio::time::sleep(Duration::from_millis(500)).await;
    println!(
        "idle RSS: {} KiB after start, {} KiB after the runs",
        rss_start,
        rss_kib(server.pid())
    );
}

/// Pairs of the counting measurement; `PIPEBOOK_MEASURE_PAIRS` overrides (at least 11).
fn pairs() -> usize {
    std::env::var("PIPEBOOK_MEASURE_PAIRS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(11)
        .max(11)
}

/// Whether the counted side of the counting measurement traces the kernel's
/// events (`PIPEBOOK_MEASURE_TRACE=1`: what `--trace-syscalls` costs) rather
/// than counting as a plain run does.
fn trace() -> bool {
    std::env::var("PIPEBOOK_MEASURE_TRACE").is_ok_and(|v| v == "1")
}

/// One CLI run's GiB/s, counting the kernel's events or not.
fn cli_counted(pipebench: &Path, step: &str, counts: bool) -> f64 {
    let output = Command::new(pipebench)
        .args(["run", step, "--bytes", &bytes(), "--json"])
        .args((!counts).then_some("--no-counts"))
        .args((counts && trace()).then_some("--trace-syscalls"))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let result: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    // The run counted what it said it would: with --no-counts only what costs
    // nothing (rusage, faults, the calls it makes anyway) is kept, and the
    // kernel's event counts are missing as turned off.
    let turned_off = result["counts"]["missing"]
        .as_array()
        .is_some_and(|m| m.iter().any(|r| r["reason"]["kind"] == "turned_off"));
    assert_eq!(turned_off, !counts, "{}", result["counts"]);
    result["gib_per_s"].as_f64().unwrap()
}

#[test]
#[ignore = "measurement: run with --release --ignored --nocapture"]
fn measure_counting_overhead() {
    let pipebench = Path::new(env!("CARGO_BIN_EXE_pipebook")).with_file_name("pipebench");
    assert!(
        pipebench.is_file(),
        "build the CLI of the same profile first: cargo build --release -p pipebench"
    );
    let pairs = pairs();
    let steps =
        std::env::var("PIPEBOOK_MEASURE_STEPS").unwrap_or_else(|_| "write-read,busy-loop".into());
    println!(
        "{pairs} alternating pairs of {} per step, counts {} then off, the order swapped every pair",
        bytes(),
        if trace() { "traced (--trace-syscalls)" } else { "as a plain run takes them" }
    );
    for step in steps.split(',') {
        let (mut on, mut off, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for pair in 0..pairs {
            // Which goes first alternates, so a drift in the machine's speed
            // favours neither.
            let (a, b) = if pair % 2 == 0 {
                let a = cli_counted(&pipebench, step, true);
                (a, cli_counted(&pipebench, step, false))
            } else {
                let b = cli_counted(&pipebench, step, false);
                (cli_counted(&pipebench, step, true), b)
            };
            on.push(a);
            off.push(b);
            ratios.push(a / b);
        }
        // The same judgement `pipebench compare` states: the pairs' signed-rank
        // interval says whether 11 pairs resolve a cost of a few percent here.
        let fixed = pipebench::stats::verdict::Design::Fixed;
        match pipebench::stats::verdict::judge_paired(&on, &off, fixed) {
            Ok(c) => println!("{step:16} on/off by pairs: {}", c.sentence),
            Err(err) => println!("{step:16} on/off: {err}"),
        }
        println!(
            "{step:16} counts on {:7.2}  off {:7.2}  on/off: ratio of medians {:.3}, median pair ratio {:.3}   on {on:.2?} off {off:.2?}",
            median(&mut on.clone()),
            median(&mut off.clone()),
            median(&mut on) / median(&mut off),
            median(&mut ratios)
        );
    }
}
