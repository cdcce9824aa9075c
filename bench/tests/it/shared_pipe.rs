//! `pipebench shared-pipe`: real writer and reader processes on one real pipe.

use crate::common::{assert_exits_saying, cpus, pipebench, stderr, stdout};
use serde_json::Value;

#[test]
fn no_message_up_to_pipe_buf_is_torn_and_every_writers_bytes_arrive() {
    let _cpus = cpus();
    let output = pipebench(&[
        "shared-pipe",
        "--writers",
        "1,4",
        "--readers",
        "1,2",
        "--msg-size",
        "512,4KiB,64KiB",
        "--bytes",
        "8MiB",
        "--json",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let result: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let points = result["points"].as_array().unwrap();
    assert_eq!(points.len(), 12, "{result}");
    let numbers = |v: &Value| -> Vec<u64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect()
    };
    for p in points {
        let msg = p["msg_size"].as_u64().unwrap();
        let writers = p["writers"].as_u64().unwrap() as usize;
        let written = numbers(&p["written"]);
        let received = numbers(&p["received"]);
        let per_reader = numbers(&p["per_reader"]);
        assert_eq!(written.len(), writers, "{p}");
        assert_eq!(per_reader.len() as u64, p["readers"].as_u64().unwrap());
        // Each writer's bytes all arrived, and the totals add up.
        assert_eq!(written, received, "{p}");
        let total: u64 = written.iter().sum();
        assert_eq!(total, p["bytes"].as_u64().unwrap(), "{p}");
        assert_eq!(per_reader.iter().sum::<u64>(), total, "{p}");
        // Whole messages, split evenly between the writers.
        let each = (8u64 << 20) / writers as u64 / msg * msg;
        assert!(written.iter().all(|&w| w == each), "{p}");
        if msg <= 4096 {
            assert_eq!(p["atomic"], true);
            assert_eq!(p["torn_messages"], 0, "{p}");
        }
        assert!(p["gib_per_s"].as_f64().unwrap() > 0.0, "{p}");
    }
    // 4 writers and 2 readers are more processes than this machine's CPUs when
    // it has fewer than 6: the result says so.
    let cpus = result["cpus"].as_u64().unwrap();
    let warned = !result["warnings"].as_array().unwrap().is_empty();
    assert_eq!(warned, cpus < 6, "{result}");
}

#[test]
fn bad_counts_and_sizes_exit_2() {
    for args in [
        ["shared-pipe", "--writers", "0", "--msg-size", "4KiB"],
        ["shared-pipe", "--writers", "x", "--msg-size", "4KiB"],
        ["shared-pipe", "--writers", "1", "--msg-size", "100"],
    ] {
        let output = pipebench(&args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
    }
}

/// Whether this process may count the kernel's wakeup tracepoints: a reason
/// other than "only on request" names `wakeups` as missing when it may not.
fn wakeups_refused(counts: &Value) -> bool {
    counts["missing"].as_array().unwrap().iter().any(|m| {
        m["counts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c == "wakeups")
            && m["reason"]["kind"] != "on_request"
    })
}

fn shared_json(args: &[&str], nobody: bool) -> Value {
    let output = if nobody {
        let exe = crate::common::exe();
        crate::common::as_nobody(exe.to_str().unwrap(), args, "")
    } else {
        pipebench(args)
    };
    assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    serde_json::from_str(&stdout(&output)).unwrap()
}

#[test]
fn every_point_carries_its_writers_and_readers_counts() {
    let _cpus = cpus();
    let args = [
        "shared-pipe",
        "--writers",
        "2",
        "--readers",
        "1,2",
        "--msg-size",
        "4KiB",
        "--bytes",
        "8MiB",
        "--json",
    ];
    let result = shared_json(&args, false);
    for p in result["points"].as_array().unwrap() {
        let counts = &p["counts"];
        // Each side's calls are its data calls: every writer's 4 KiB writes
        // (one whole message each, atomic), every reader's reads up to the
        // last one that sees the end.
        assert_eq!(counts["writers"]["syscalls"]["write"], 2048, "{counts}");
        let reads = counts["readers"]["syscalls"]["read"].as_u64().unwrap();
        let readers = p["readers"].as_u64().unwrap();
        assert!(reads >= 2048 + readers, "{counts}");
        for side in ["writers", "readers"] {
            let c = &counts[side];
            assert_eq!(
                c["context_switches"].as_u64().unwrap(),
                c["voluntary_switches"].as_u64().unwrap()
                    + c["involuntary_switches"].as_u64().unwrap(),
                "{side}: {c}"
            );
        }
        // Readers that find the pipe empty sleep, and a writer wakes them: where
        // the machine lets this user count wakeups the writers issued some.
        if wakeups_refused(counts) {
            assert!(counts["writers"]["wakeups"].is_null(), "{counts}");
        } else {
            assert!(
                counts["writers"]["wakeups"].as_u64().unwrap() > 0,
                "{counts}"
            );
        }
    }
    // An unprivileged user counts what costs nothing and is told why the
    // wakeups are missing; an absent count is never 0.
    let result = shared_json(&args, true);
    let counts = &result["points"][0]["counts"];
    assert!(counts["writers"]["context_switches"].is_u64(), "{counts}");
    if pipebench::process::counts::perf_paranoid().unwrap_or(2) > -1 {
        assert!(wakeups_refused(counts), "{counts}");
        assert!(counts["writers"]["wakeups"].is_null(), "{counts}");
        assert!(counts["readers"]["wakeups"].is_null(), "{counts}");
    }
}

#[test]
fn a_profiled_sweep_says_where_the_writers_and_readers_time_goes() {
    let _cpus = cpus();
    let dir = tempfile::tempdir().unwrap();
    let output = pipebench(&[
        "shared-pipe",
        "--writers",
        "2",
        "--readers",
        "2",
        "--msg-size",
        "4KiB,64KiB",
        "--bytes",
        "32MiB",
        "--profile",
        "--profile-dir",
        dir.path().to_str().unwrap(),
        "--json",
    ]);
    if !pipebench::profile::perf_installed() {
        crate::common::refused_for_want_of_perf(&output);
        return;
    }
    assert!(output.status.success(), "{}", stderr(&output));
    let result: Value = serde_json::from_str(&stdout(&output)).unwrap();
    for p in result["points"].as_array().unwrap() {
        // Profiled, the ends still move every byte whole.
        assert_eq!(p["torn_messages"], 0, "{p}");
        let folder = dir
            .path()
            .join(format!("2w-2r-{}", p["msg_size"].as_u64().unwrap()));
        assert_eq!(p["profile"]["data"], folder.to_str().unwrap(), "{p}");
        for (role, call) in [("writer", "pipe_write"), ("reader", "pipe_read")] {
            let functions = p["profile"][role]["functions"].as_array().unwrap();
            // Every writer's and every reader's calls go through the pipe's own
            // code in the kernel (anon_pipe_write in 6.x, pipe_write before).
            assert!(
                functions
                    .iter()
                    .any(|f| f["kernel"] == true && f["symbol"].as_str().unwrap().contains(call)),
                "{role}: {functions:?}"
            );
            let svg = std::fs::read_to_string(folder.join(format!("{role}s.svg"))).unwrap();
            assert!(
                svg.contains("<svg") && svg.contains(&format!("{role}s: where")),
                "{role}s.svg"
            );
            assert!(!svg.contains("<script"), "{role}s.svg");
            assert!(folder.join(format!("{role}s.perf.data")).exists());
        }
    }
}

#[test]
fn a_profile_without_perf_is_refused_before_anything_runs() {
    let _cpus = cpus();
    let output = std::process::Command::new(crate::common::exe())
        .args([
            "shared-pipe",
            "--writers",
            "1",
            "--readers",
            "1",
            "--msg-size",
            "4KiB",
            "--profile",
        ])
        .env(pipebench::profile::PERF_ENV, "/nonexistent/perf")
        .output()
        .unwrap();
    assert_exits_saying(&output, 1, "`/nonexistent/perf`", "");
    assert!(
        stdout(&output).is_empty(),
        "nothing ran: {}",
        stdout(&output)
    );
}
