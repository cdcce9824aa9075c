//! Every step pipes real data between two real processes and gets every byte right.

use std::process::Command;

use crate::common::{assert_exits_saying, cpus, exe, pipebench, pipeline, stderr, stdout};
use serde_json::Value;

const MIB: u64 = 1 << 20;

fn run_json(step: &str, extra: &[&str]) -> Value {
    let mut args = vec!["run", step, "--json"];
    args.extend_from_slice(extra);
    let output = pipebench(&args);
    assert!(
        output.status.success(),
        "pipebench {args:?} failed: {}",
        stderr(&output)
    );
    serde_json::from_str(&stdout(&output)).expect("run --json prints JSON")
}

fn assert_verified_run(step: &str) {
    let _cpus = cpus();
    let result = run_json(step, &["--bytes", "24MiB", "--verify"]);
    assert_eq!(result["step"], step);
    assert_eq!(result["bytes"], 24 * MIB, "{result}");
    assert_eq!(result["options"]["reader"]["verify"], true);
    assert_eq!(result["options"]["writer"]["verify"], true);
    assert!(result["gib_per_s"].as_f64().unwrap() > 0.0);
    assert!(result["elapsed_ms"].as_f64().unwrap() > 0.0);
    assert!(result["iterations"].as_u64().unwrap() > 0);
    for end in ["writer", "reader"] {
        for field in [
            "minor_faults",
            "major_faults",
            "voluntary_ctx_switches",
            "involuntary_ctx_switches",
        ] {
            assert!(
                result[end][field].is_u64(),
                "{end}.{field} missing in {result}"
            );
        }
    }
    // With two CPUs allowed the ends are pinned to different ones; with one they
    // share it, and the result says what that does to the figures.
    if pipebench::process::cpu::allowed_cpus().len() >= 2 {
        assert_ne!(result["writer"]["cpu"], result["reader"]["cpu"], "{result}");
    } else {
        let warnings = result["warnings"].as_array().unwrap();
        assert!(
            warnings
                .iter()
                .any(|w| w.as_str().unwrap().contains("only 1 CPU available")),
            "{result}"
        );
    }
}

#[test]
fn write_read_gets_every_byte_right() {
    assert_verified_run("write-read");
}

#[test]
fn vmsplice_read_gets_every_byte_right() {
    assert_verified_run("vmsplice-read");
}

#[test]
fn vmsplice_splice_gets_every_byte_right() {
    assert_verified_run("vmsplice-splice");
}

#[test]
fn huge_pages_gets_every_byte_right() {
    assert_verified_run("huge-pages");
}

#[test]
fn busy_loop_gets_every_byte_right() {
    assert_verified_run("busy-loop");
}

#[test]
fn variants_get_every_byte_right() {
    for step in [
        "write-read-busy",
        "vmsplice-read-busy",
        "vmsplice-splice-busy",
        "untouched-pages",
        "same-buffer",
    ] {
        assert_verified_run(step);
    }
}

#[test]
fn a_byte_the_verifier_does_not_expect_is_caught() {
    let _cpus = cpus();
    // A plain file of zeros is not the pattern: the reader must stop at byte 0.
    let zeros = tempfile::tempfile().unwrap();
    zeros.set_len(MIB).unwrap();
    let output = Command::new(exe())
        .args(["read", "--verify", "--bytes", "1MiB"])
        .stdin(zeros)
        .output()
        .unwrap();
    assert_exits_saying(&output, 1, "corrupted data at byte 0", "");
}

#[test]
fn huge_pages_are_verified_where_thp_allows() {
    let _cpus = cpus();
    let mode = pipebench::ends::hugepage::thp_mode().unwrap_or_default();
    if mode == "never" {
        eprintln!("THP is `never` here: checking the refusal instead");
        let output = pipebench(&["run", "huge-pages", "--bytes", "8MiB"]);
        assert!(!output.status.success());
        assert!(
            stderr(&output).contains("transparent_hugepage"),
            "{}",
            stderr(&output)
        );
        return;
    }
    let result = run_json("huge-pages", &["--bytes", "32MiB"]);
    let huge = &result["huge_pages"];
    assert_eq!(huge["thp_mode"], mode.as_str(), "{result}");
    let checked = huge["checked_bytes"].as_u64().unwrap();
    // Two halves, each in its own 2 MiB-aligned allocation.
    assert_eq!(checked, 4 * MIB, "{result}");
    assert_eq!(
        huge["huge_bytes"].as_u64().unwrap(),
        checked,
        "no huge pages behind the buffers: {result}"
    );
    // Without the flag nothing is checked.
    let plain = run_json("vmsplice-splice", &["--bytes", "8MiB"]);
    assert!(plain["huge_pages"].is_null());
}

#[test]
fn early_reuse_corrupts_exactly_when_vmsplice_maps_pages() {
    let _cpus = cpus();
    let output = pipebench(&["reuse", "--bytes", "64MiB", "--json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let corrupted = report["corrupted_bytes"].as_u64().unwrap();
    match report["vmsplice"].as_str().unwrap() {
        "maps-pages" => assert!(
            corrupted > 0,
            "vmsplice maps pages, yet reuse did no harm: {report}"
        ),
        "copies-pages" => assert_eq!(
            corrupted, 0,
            "vmsplice copies, yet data was corrupted: {report}"
        ),
        other => panic!("unexpected probe answer {other}: {report}"),
    }
    // The same writer with a proper double buffer is clean.
    assert_eq!(report["run"]["bytes"], 64 * MIB);
}

#[test]
fn write_piped_into_read_works_by_hand_like_the_article() {
    let _cpus = cpus();
    let (writer, output) = pipeline(
        &["--vmsplice", "--bytes", "32MiB", "--verify"],
        &["--splice", "--bytes", "32MiB", "--verify", "--json"],
    );
    assert!(writer.status.success());
    assert!(output.status.success(), "{}", stderr(&output));
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["bytes"], 32 * MIB);
    assert_eq!(report["role"], "reader");

    // And the human summary, as a person would see it.
    let (writer, output) = pipeline(&["--bytes", "8MiB"], &["--bytes", "8MiB"]);
    assert!(writer.status.success());
    let text = stdout(&output);
    assert!(
        text.starts_with("8MiB in ") && text.contains("GiB/s"),
        "{text}"
    );
}

#[test]
fn all_prints_a_table_csv_json_and_a_chart() {
    let _cpus = cpus();
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("chart.svg");
    let steps = "write-read,vmsplice-splice";
    let common = [
        "all",
        "--steps",
        steps,
        "--repeats",
        "2",
        "--bytes",
        "8MiB",
        "--seed",
        "7",
    ];

    let mut args = common.to_vec();
    args.extend(["--svg", svg.to_str().unwrap()]);
    let output = pipebench(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.contains("median") && text.contains("article"),
        "{text}"
    );
    assert!(
        text.contains("vmsplice-splice") && text.contains("1.0x"),
        "{text}"
    );
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert!(
        chart.starts_with("<svg") && chart.contains("vmsplice-splice"),
        "{chart}"
    );

    let mut args = common.to_vec();
    args.push("--csv");
    let csv = stdout(&pipebench(&args));
    let lines: Vec<_> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "{csv}");
    assert!(lines[0].starts_with("step,runs,median_gib_s"));
    assert!(lines[1].starts_with("write-read,2,"));

    let mut args = common.to_vec();
    args.push("--json");
    let json: Value = serde_json::from_str(&stdout(&pipebench(&args))).unwrap();
    assert_eq!(json["runs"].as_array().unwrap().len(), 4);
    assert_eq!(json["table"][0]["summary"]["runs"], 2);
    assert!(json["system"]["kernel"].is_string());
}

/// `pipebench list`: every catalog step on a line of its own, first its id;
/// `--json`, the catalog as the server publishes it, each step with its run
/// parameters and their defaults, in the catalog's order.
#[test]
fn list_names_every_step_and_publishes_its_parameters() {
    let plain = pipebench(&["list"]);
    assert!(plain.status.success(), "{}", stderr(&plain));
    let text = stdout(&plain);
    let ids: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let catalog = pipebench::steps::catalog::catalog();
    let expected: Vec<&str> = catalog.iter().map(|s| s.id).collect();
    assert_eq!(ids, expected, "{text}");
    let json = pipebench(&["list", "--json"]);
    assert!(json.status.success(), "{}", stderr(&json));
    let published: Value = serde_json::from_str(&stdout(&json)).unwrap();
    let steps = published.as_array().expect("a list of steps");
    let ids: Vec<&str> = steps.iter().filter_map(|s| s["id"].as_str()).collect();
    assert_eq!(ids, expected);
    for step in steps {
        let names: Vec<&str> = step["params"]
            .as_array()
            .unwrap_or_else(|| panic!("no params: {step}"))
            .iter()
            .filter_map(|p| p["name"].as_str())
            .collect();
        for name in ["bytes", "seconds", "buf_size", "pipe_size"] {
            assert!(names.contains(&name), "{}: {names:?}", step["id"]);
        }
    }
}

#[test]
fn a_corrupting_run_reports_the_readers_finding_not_the_writers_echo() {
    let _cpus = cpus();
    // The early-reuse writer with a strict reader: the reader stops at the first
    // bad byte and the writer then sees a closed pipe. The cause must be shown.
    use pipebench::engine::pipe_run::RunHandle;
    use pipebench::machine::vmsplice_probe::VmspliceBehaviour;
    use pipebench::process::launch::EndProgram;
    use pipebench::steps::plan::{Limits, RunParams, RunPlan};
    let params = RunParams {
        bytes: Some(pipebench::size::ByteSize(64 * MIB)),
        ..Default::default()
    };
    let mut plan = RunPlan::for_step_id("vmsplice-reuse", &params, &Limits::default()).unwrap();
    plan.reader.count_corrupt = false;
    assert!(plan.reader.common.verify, "the reader checks every byte");
    let behaviour = pipebench::machine::vmsplice_probe::probe().unwrap();
    let program = EndProgram {
        exe: exe(),
        prefix: Vec::new(),
    };
    let mut handle = RunHandle::start(&plan, &program).unwrap();
    let outcome = handle.wait_with(std::time::Duration::from_millis(10), |_| {});
    let expect_readers_finding = |err: pipebench::engine::pipe_run::RunError| {
        let message = err.to_string();
        assert!(
            message.contains("reader") && message.contains("corrupted data at byte"),
            "{message}"
        );
        let (role, failure) = err.end_failure().expect("an end failed");
        assert_eq!(role, "reader");
        assert_eq!(failure.kind, pipebench::ends::error::EndErrorKind::Corrupt);
    };
    // A run that checked every byte and found none bad.
    let expect_clean = |result: pipebench::engine::result::RunResult| {
        assert_eq!(result.bytes, 64 * MIB, "{result:?}");
        assert!(
            matches!(result.corrupted_bytes, None | Some(0)),
            "{result:?}"
        );
    };
    match behaviour {
        // The pipe holds the writer's pages: the rewrite races the reader.
        VmspliceBehaviour::MapsPages => expect_readers_finding(outcome.unwrap_err()),
        // This kernel copies at vmsplice time, as the probe found: early reuse is
        // harmless, so the same strict run must get through clean.
        VmspliceBehaviour::CopiesPages => expect_clean(
            outcome
                .unwrap_or_else(|err| panic!("{}, yet the run failed: {err}", behaviour.explain())),
        ),
        // Neither clean: whichever way the run went, it must be told rightly.
        VmspliceBehaviour::Mixed => match outcome {
            Ok(result) => expect_clean(result),
            Err(err) => expect_readers_finding(err),
        },
    }
}

/// An end that fails tells the harness why as a typed kind over its report fd:
/// here the writer is asked for a pipe over pipe-max-size (the planner is told
/// the limit is higher than it is, so only the end itself can refuse).
#[test]
fn an_end_failure_reaches_the_harness_as_a_typed_kind() {
    let _cpus = cpus();
    use pipebench::ends::error::EndErrorKind;
    use pipebench::engine::pipe_run::RunHandle;
    use pipebench::process::launch::EndProgram;
    use pipebench::steps::plan::{Limits, RunParams, RunPlan};
    let real = Limits::default();
    let limits = Limits {
        max_pipe_size: real.max_pipe_size * 4,
        ..real.clone()
    };
    let params = RunParams {
        bytes: Some(pipebench::size::ByteSize(8 * MIB)),
        pipe_size: Some(pipebench::size::ByteSize(real.max_pipe_size * 2)),
        ..Default::default()
    };
    let plan = RunPlan::for_step_id("write-read", &params, &limits).unwrap();
    let program = EndProgram {
        exe: exe(),
        prefix: Vec::new(),
    };
    let mut handle = RunHandle::start(&plan, &program).unwrap();
    let err = handle
        .wait_with(std::time::Duration::from_millis(10), |_| {})
        .unwrap_err();
    let (role, failure) = err.end_failure().expect("an end failed");
    assert_eq!(
        (role, failure.kind),
        ("writer", EndErrorKind::PipeSizeOverLimit),
        "{err}"
    );
    assert!(failure.message.contains("pipe-max-size"), "{err}");
}

/// The capacity in force, read back from the kernel, is the reference's for every
/// article step: the kernel's default 64 KiB ring for write(2) (write.cpp sizes the
/// pipe only when asked), half of one 256 KiB buffer for vmsplice (write.cpp forces
/// buf_size / 2); and the variants change it only where they say so.
#[test]
fn every_step_runs_the_pipe_capacity_of_its_configuration() {
    let _cpus = cpus();
    let expected: &[(&str, u64, u64)] = &[
        ("write-read", 64 << 10, 256 << 10),
        ("vmsplice-read", 128 << 10, 256 << 10),
        ("vmsplice-splice", 128 << 10, 256 << 10),
        ("huge-pages", 128 << 10, 256 << 10),
        ("busy-loop", 128 << 10, 256 << 10),
        ("write-read-big-pipe", 256 << 10, 256 << 10),
        ("vmsplice-read-halves", 128 << 10, 128 << 10),
        ("vmsplice-read-aligned", 128 << 10, 256 << 10),
    ];
    for &(step, capacity, per_call) in expected {
        let result = run_json(step, &["--bytes", "8MiB"]);
        assert_eq!(result["pipe_capacity"], capacity, "{step}: {result}");
        assert_eq!(result["bytes_per_call"], per_call, "{step}: {result}");
        assert_eq!(result["options"]["reader"]["buf_size"], per_call, "{step}");
        // The result says how to run it again, and that command runs it again.
        let argv: Vec<String> = serde_json::from_value(result["argv"].clone()).unwrap();
        assert_eq!(&argv[..3], ["pipebench", "run", step], "{step}");
        let mut again: Vec<&str> = argv[1..].iter().map(String::as_str).collect();
        again.push("--json");
        let output = pipebench(&again);
        assert!(output.status.success(), "{again:?}: {}", stderr(&output));
        let repeat: Value = serde_json::from_str(&stdout(&output)).unwrap();
        assert_eq!(repeat["pipe_capacity"], capacity, "{step} again");
        assert_eq!(repeat["options"], result["options"], "{step} again");
    }
}

/// Runs under half a second carry a warning, in the JSON and on stderr.
#[test]
fn a_short_run_is_flagged_as_unreliable() {
    let _cpus = cpus();
    let output = pipebench(&["run", "busy-loop", "--bytes", "16MiB"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("under 500 ms"),
        "{}",
        stderr(&output)
    );
    let result = run_json("busy-loop", &["--bytes", "16MiB"]);
    let warnings = result["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("under 500 ms")),
        "{result}"
    );
}

/// A sweep returns one point per value, in increasing order, each from runs at
/// that value; its chart is an SVG with a label per value.
#[test]
fn a_sweep_returns_one_point_per_value_in_order() {
    let _cpus = cpus();
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("sweep.svg");
    let output = pipebench(&[
        "sweep",
        "write-read",
        "--pipe-size",
        "16KiB..64KiB",
        "--bytes",
        "4MiB",
        "--repeats",
        "2",
        "--json",
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let sweep: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(sweep["param"], "pipe_size");
    let points = sweep["points"].as_array().unwrap();
    let values: Vec<u64> = points
        .iter()
        .map(|p| p["value"].as_u64().unwrap())
        .collect();
    assert_eq!(values, [16 << 10, 32 << 10, 64 << 10]);
    for point in points {
        let runs = point["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2, "{point}");
        for run in runs {
            assert_eq!(run["pipe_capacity"], point["value"], "{run}");
        }
        assert_eq!(point["summary"]["runs"], 2);
    }
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert!(chart.starts_with("<svg"), "{chart:.80}");
    for label in ["16KiB", "32KiB", "64KiB"] {
        assert!(chart.contains(label), "no {label} label");
    }
}

#[test]
fn bad_sweep_values_are_refused_with_a_reason() {
    for (args, needle) in [
        (vec!["--pipe-size", "1MiB..4KiB"], "must go up"),
        (vec!["--pipe-size", "64KiB,16KiB"], "must go up"),
        (vec!["--pipe-size", "0,4KiB"], "0 bytes"),
        (vec!["--pipe-size", "64KiB,1TiB"], "out of range"),
        (vec!["--buf-size", "10000"], "10000 bytes"),
        (vec!["--buf-size", "4KiB,lots"], "lots"),
    ] {
        let mut argv = vec!["sweep", "write-read"];
        argv.extend(args.iter().copied());
        let output = pipebench(&argv);
        assert_exits_saying(&output, 2, needle, &format!("{argv:?}"));
    }
    let neither = pipebench(&["sweep", "write-read"]);
    assert_eq!(neither.status.code(), Some(2));
}

/// The baseline's 16-slot ring both fills (the writer waits) and drains (the reader
/// waits) within a few tens of MiB, and the harness sees both through FIONREAD.
/// Where the ends take every CPU the sampler shares their CPUs, and when it gets
/// to run is not independent of what they do: one run can see only one side, and
/// at 20 ms a 64 MiB run gives only a few samples. So runs are of 128 MiB, up to
/// five are made, and one must see both.
#[test]
fn occupancy_of_a_baseline_run_shows_the_ring_full_and_empty() {
    let _cpus = cpus();
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("occupancy.svg");
    let mut shares = Vec::new();
    for _ in 0..5 {
        let result = run_json(
            "write-read",
            &[
                "--bytes",
                "128MiB",
                "--occupancy",
                "--svg",
                svg.to_str().unwrap(),
            ],
        );
        assert_eq!(result["bytes"], 128 * MIB, "{result}");
        let o = &result["occupancy"];
        assert_eq!(o["capacity"], 65536, "{o}");
        assert!(o["samples"].as_u64().unwrap() >= 1, "{o}");
        let full = o["full_share"].as_f64().unwrap();
        let empty = o["empty_share"].as_f64().unwrap();
        assert!(full + empty <= 1.0 + 1e-9);
        let s = &o["series"];
        let n = s["t_ms"].as_array().unwrap().len();
        assert!(n > 0 && n <= pipebench::engine::occupancy::MAX_POINTS);
        for key in ["min", "max", "writer_sleeps", "reader_sleeps"] {
            assert_eq!(s[key].as_array().unwrap().len(), n, "{key}");
        }
        assert!(s["max"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m.as_u64().unwrap() <= 65536));
        // A blocking pair sleeps on both sides of a ring that fills and drains:
        // about once per 64 KiB each, by the ends' own count.
        for end in ["writer", "reader"] {
            let sleeps = result[end]["voluntary_ctx_switches"].as_u64().unwrap();
            assert!(
                sleeps >= 128 * MIB / 65536 / 2,
                "{end} slept {sleeps} times"
            );
        }
        let drawn = std::fs::read_to_string(&svg).unwrap();
        assert!(
            drawn.contains("16 slots of 4 KiB"),
            "the capacity line names its slots"
        );
        // On a machine whose ends take every CPU the sampler takes turns beside
        // them, and the result says so.
        let crowded = pipebench::process::cpu::allowed_cpus().len() <= 2;
        assert_eq!(o["alternating"], crowded, "{o}");
        shares.push((full, empty));
        if full > 0.0 && empty > 0.0 {
            break;
        }
    }
    assert!(
        shares
            .iter()
            .any(|&(full, empty)| full > 0.0 && empty > 0.0),
        "no run saw the ring both full and empty: (full, empty) shares {shares:?}"
    );
    // Without --occupancy the result has no series.
    let plain = run_json("write-read", &["--bytes", "8MiB"]);
    assert!(plain.get("occupancy").is_none(), "{plain}");
}

/// Watching adds a reader-side duplicate of the pipe to the harness. A budget stop
/// goes writer first (it sees the flag and closes; the reader reads to EOF), so the
/// duplicate must not change how a watched run ends: at its budget, with a series.
#[test]
fn a_watched_run_still_stops_at_its_budget() {
    let _cpus = cpus();
    use pipebench::engine::pipe_run::RunHandle;
    use pipebench::process::launch::EndProgram;
    use pipebench::steps::plan::{Limits, RunParams, RunPlan};
    let params = RunParams {
        seconds: Some(0.4),
        ..Default::default()
    };
    let plan = RunPlan::for_step_id("write-read", &params, &Limits::default()).unwrap();
    let program = EndProgram {
        exe: exe(),
        prefix: Vec::new(),
    };
    let started = std::time::Instant::now();
    let mut handle = RunHandle::start_watched(
        &plan,
        &program,
        pipebench::engine::occupancy::SAMPLE_INTERVAL,
    )
    .unwrap();
    let result = handle
        .wait_with(std::time::Duration::from_millis(50), |_| {})
        .unwrap();
    let took = started.elapsed();
    assert!(result.stopped_by_budget, "{result:?}");
    assert!(took < std::time::Duration::from_secs(3), "took {took:?}");
    let o = result
        .occupancy
        .expect("a watched run has an occupancy series");
    assert!(o.samples > 0);
}
