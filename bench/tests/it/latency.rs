//! The latency lab on real ends: every mechanism's round trips, what busy
//! polling buys, input refused with exit 2, and a killed run that leaves nothing.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{
    alive, assert_exits_saying, children_of, cmdline, cpus, exe, gone_within, pipebench, stderr,
    stdout,
};

fn run_json(args: &[&str]) -> Value {
    let output = pipebench(args);
    assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    serde_json::from_str(&stdout(&output)).expect("latency --json prints JSON")
}

fn figure(result: &Value, name: &str) -> u64 {
    result[name]
        .as_u64()
        .unwrap_or_else(|| panic!("{name} in {result}"))
}

#[test]
fn every_mechanism_completes_a_small_run_with_sane_percentiles() {
    let _cpus = cpus();
    let report = run_json(&["latency", "--sizes", "64", "--round-trips", "200", "--json"]);
    let results = report["results"].as_array().unwrap();
    let mut seen = BTreeSet::new();
    for r in results {
        let p = ["min", "p50", "p90", "p99", "p999", "max"].map(|n| figure(r, n));
        assert!(
            p.windows(2).all(|w| w[0] <= w[1]),
            "percentiles out of order: {r}"
        );
        assert!(p[0] > 0, "a round trip of 0 ns: {r}");
        assert_eq!(figure(r, "count"), 200, "{r}");
        assert_eq!(figure(r, "size"), 64);
        assert!(
            r["ping_cpu_ns"].as_f64().unwrap() > 0.0 && r["pong_cpu_ns"].as_f64().unwrap() > 0.0,
            "{r}"
        );
        assert_eq!(r["cpus"].as_array().unwrap().len(), 2);
        let [ping, pong] = ends_counted(r);
        // A spin on shared memory makes no call; every other way makes some.
        let calls = |end: &Value| end["syscalls"].as_object().unwrap().len();
        match (
            r["mechanism"].as_str().unwrap(),
            r["mode"].as_str().unwrap(),
        ) {
            ("shm-ring", _) | ("futex", "busy") => {
                assert_eq!((calls(ping), calls(pong)), (0, 0), "{r}")
            }
            _ => assert!(calls(ping) > 0 && calls(pong) > 0, "{r}"),
        }
        seen.insert(format!(
            "{} {}",
            r["mechanism"].as_str().unwrap(),
            r["mode"].as_str().unwrap()
        ));
    }
    for mechanism in [
        "pipe",
        "fifo",
        "eventfd",
        "futex",
        "unix-stream",
        "unix-dgram",
        "tcp",
        "posix-mq",
        "sysv-mq",
    ] {
        for mode in ["blocking", "busy"] {
            assert!(
                seen.contains(&format!("{mechanism} {mode}")),
                "{mechanism} {mode} missing: {seen:?}"
            );
        }
    }
    assert!(seen.contains("shm-ring busy"));
    // The ring has no blocking mode and says why instead of failing.
    let skipped = report["skipped"].as_array().unwrap();
    assert!(skipped.iter().any(|s| s["configuration"]
        .as_str()
        .unwrap()
        .starts_with("shm-ring blocking")));
    // The clock's cost is measured and set against the fastest median.
    let clock = &report["clock"];
    assert!(clock["clock_ns"].as_f64().unwrap().is_finite(), "{clock}");
    assert!(clock["share_of_fastest_p50"].as_f64().unwrap().is_finite());
    assert!(clock["clock_read_ns"].as_f64().unwrap() > 0.0, "{clock}");
}

/// A latency result's counts: one object per end, keyed `ping` and `pong` as
/// the result names them, each with the counts every end carries, and why
/// the kernel events are missing; returns the two ends.
fn ends_counted(r: &Value) -> [&Value; 2] {
    let counts = r["counts"].as_object().unwrap_or_else(|| panic!("{r}"));
    let ends: Vec<&String> = counts.keys().filter(|k| *k != "missing").collect();
    assert_eq!(ends, ["ping", "pong"], "{r}");
    let missing = counts["missing"].to_string();
    assert!(missing.contains("costs_the_round_trip"), "{missing}");
    for end in ["ping", "pong"] {
        let c = &counts[end];
        assert!(
            c["syscalls"].is_object() && c["page_faults"].is_u64(),
            "{c}"
        );
        assert_eq!(
            c["context_switches"].as_u64(),
            Some(figure(c, "voluntary_switches") + figure(c, "involuntary_switches")),
            "{c}"
        );
        // Migrations are counted, or said missing, never both.
        assert_ne!(
            c["cpu_migrations"].is_u64(),
            missing.contains("\"cpu_migrations\""),
            "{r}"
        );
    }
    [&counts["ping"], &counts["pong"]]
}

#[test]
fn a_latency_run_counts_both_ends_and_their_switches_are_its_sleeps() {
    let _cpus = cpus();
    let report = run_json(&[
        "latency",
        "pipe",
        "--sizes",
        "1",
        "--round-trips",
        "300",
        "--json",
    ]);
    let results = report["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{report}");
    for r in results {
        let [ping, pong] = ends_counted(r);
        // A one-byte message on a pipe is one write and one read at each end
        // per round trip of the window (untimed blocks included), blocking or
        // busy: the pipe is never full, and a busy end's empty reads are
        // calls too.
        let write = |end: &Value| figure(&end["syscalls"], "write");
        let read = |end: &Value| figure(&end["syscalls"], "read");
        let window = write(ping);
        assert!(window > figure(r, "count"), "{r}");
        assert_eq!(write(pong), window, "{r}");
        let sleeps = |end: &Value, per_trip: &str| {
            let counted = figure(end, "voluntary_switches") as f64 / window as f64;
            let given = r[per_trip].as_f64().unwrap();
            // The counts and the per-round-trip sleeps are the same reading.
            assert!(
                (counted - given).abs() < 1e-9,
                "{per_trip}: {counted} {given}: {r}"
            );
            counted
        };
        let slept = sleeps(ping, "ping_sleeps") + sleeps(pong, "pong_sleeps");
        match r["mode"].as_str().unwrap() {
            "blocking" => {
                assert_eq!((read(ping), read(pong)), (window, window), "{r}");
                // Each end sleeps about once a round trip.
                assert!(slept >= 1.5, "{r}");
            }
            _ => {
                assert!(read(ping) >= window && read(pong) >= window, "{r}");
                assert!(slept < 0.5, "{r}");
            }
        }
    }
}

#[test]
fn a_blocking_end_sleeps_every_message_and_a_busy_one_never() {
    let _cpus = cpus();
    let report = run_json(&[
        "latency",
        "pipe",
        "--sizes",
        "1",
        "--round-trips",
        "300",
        "--json",
    ]);
    for r in report["results"].as_array().unwrap() {
        let sleeps = r["ping_sleeps"].as_f64().unwrap() + r["pong_sleeps"].as_f64().unwrap();
        match r["mode"].as_str().unwrap() {
            // Each end sleeps once per round trip waiting for the other (a
            // little more when preempted mid-way).
            "blocking" => assert!(sleeps >= 1.5, "{r}"),
            _ => assert!(sleeps < 0.5, "{r}"),
        }
    }
}

#[test]
fn busy_polling_beats_blocking_for_the_pipe_on_two_cpus() {
    let allowed = pipebench::process::cpu::allowed_cpus();
    assert!(
        allowed.len() >= 2,
        "this test needs two CPUs, has {allowed:?}"
    );
    let _cpus = cpus();
    let pair = format!("{},{}", allowed[0], allowed[1]);
    let report = run_json(&[
        "latency",
        "pipe",
        "--sizes",
        "1",
        "--cpus",
        &pair,
        "--round-trips",
        "3000",
        "--json",
    ]);
    let p50 = |mode: &str| {
        report["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["mode"] == mode)
            .map(|r| figure(r, "p50"))
            .unwrap()
    };
    let (blocking, busy) = (p50("blocking"), p50("busy"));
    assert!(
        busy < blocking,
        "busy p50 {busy} ns, blocking {blocking} ns"
    );
}

#[test]
fn bad_sizes_cpus_modes_and_mechanisms_are_refused_with_exit_2() {
    for (args, names) in [
        (vec!["--sizes", "0"], "0 bytes"),
        (vec!["--sizes", "lots"], "lots"),
        (vec!["--sizes", "32MiB"], "16 MiB"),
        (vec!["--cpus", "0,4095"], "4095"),
        (vec!["--cpus", "zero"], "zero"),
        (vec!["--mode", "spin"], "spin"),
        (vec!["--round-trips", "1"], "1 round trips"),
        (vec!["carrier-pigeon"], "carrier-pigeon"),
        (vec!["posix-mq", "--sizes", "16MiB"], "msgsize_max"),
    ] {
        let mut all = vec!["latency"];
        all.extend(&args);
        let output = pipebench(&all);
        assert_exits_saying(&output, 2, names, &format!("{args:?}"));
    }
}

/// What `pid` holds: what its descriptors refer to (`socket:[...]`,
/// `anon_inode:[io_uring]`, `/memfd:... (deleted)`, paths) and the files it
/// has mapped.
fn held_by(pid: u32) -> Vec<String> {
    let mut held: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .map(|target| target.display().to_string())
        .collect();
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
    held.extend(
        maps.lines()
            .filter_map(|l| l.split_whitespace().nth(5))
            .map(str::to_string),
    );
    held
}

/// Everything a latency run could leave: System V queues, run folders in this
/// test's runtime and temporary folders.
fn leftovers(dirs: &[&Path]) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let text = std::fs::read_to_string("/proc/sysvipc/msg").unwrap();
    for line in text.lines().skip(1) {
        found.insert(format!(
            "sysv msg {}",
            line.split_whitespace().nth(1).unwrap_or("?")
        ));
    }
    for dir in dirs {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            found.insert(entry.path().display().to_string());
        }
    }
    found
}

/// Kill -9 of `pipebench latency` mid-run, for the kinds of thing a run makes:
/// a FIFO pair in a run folder, System V and POSIX queues, the futex region,
/// the TCP pair, io_uring rings (and the message ring's pair of them, each
/// end holding both). Both ends die with the harness, and after the next
/// start nothing is left; where io_uring is switched off the run is refused
/// first, with nothing made.
#[test]
fn a_killed_latency_run_leaves_no_end_and_nothing_named_after_the_next_start() {
    let _cpus = cpus();
    let (tmp, xdg) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let dirs = [tmp.path(), xdg.path()];
    let start = |args: &[&str]| {
        Command::new(exe())
            .args(args)
            .env("TMPDIR", tmp.path())
            .env("XDG_RUNTIME_DIR", xdg.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    for mechanism in [
        "fifo",
        "sysv-mq",
        "posix-mq",
        "futex",
        "tcp",
        "io-uring",
        "io-uring-msg-ring",
    ] {
        let before = leftovers(&dirs);
        let mut harness = start(&[
            "latency",
            mechanism,
            "--mode",
            "blocking",
            "--sizes",
            "64",
            "--round-trips",
            "10000000",
        ]);
        // Both ends running mid-run.
        let deadline = Instant::now() + Duration::from_secs(20);
        let ends = loop {
            let ends: Vec<u32> = children_of(harness.id())
                .into_iter()
                .filter(|pid| cmdline(*pid).contains("latency-end"))
                .collect();
            if ends.len() == 2 {
                break Some(ends);
            }
            if harness.try_wait().unwrap().is_some() {
                break None;
            }
            assert!(
                Instant::now() < deadline,
                "{mechanism}: the ends never started"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let Some(ends) = ends else {
            // io_uring switched off or missing here: refused (exit 2) before
            // anything was made.
            let output = harness.wait_with_output().unwrap();
            assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
            assert!(mechanism.starts_with("io-uring"), "{}", stderr(&output));
            continue;
        };
        std::thread::sleep(Duration::from_millis(200));
        // Mid-run, the ends hold what the run made without a name: the shared
        // region (a memfd), and here the rings or the connection. Once they
        // are gone, so is all of it: nothing else ever held those descriptors.
        let held: Vec<String> = ends.iter().flat_map(|&pid| held_by(pid)).collect();
        let holds = |what: &str| held.iter().filter(|f| f.contains(what)).count();
        assert!(holds("memfd:") >= 2, "{mechanism}: {held:?}");
        match mechanism {
            "io-uring" | "io-uring-msg-ring" => {
                assert!(holds("[io_uring]") >= 2, "{mechanism}: {held:?}")
            }
            "tcp" => assert!(holds("socket:") >= 2, "{mechanism}: {held:?}"),
            _ => {}
        }
        harness.kill().unwrap();
        harness.wait().unwrap();
        for pid in ends {
            assert!(
                gone_within(pid, Duration::from_secs(5)),
                "{mechanism}: end {pid} outlived its harness"
            );
            assert!(!alive(pid));
        }
        // The next start sweeps what the killed run still had named.
        let next = start(&["latency", "pipe", "--sizes", "1", "--round-trips", "10"])
            .wait_with_output()
            .unwrap();
        assert!(next.status.success(), "{}", stderr(&next));
        assert_eq!(
            leftovers(&dirs),
            before,
            "{mechanism} left something behind"
        );
    }
}

/// The result names how its two CPUs sit, as the kernel's topology says; the
/// default pair is two cores wherever the machine has two; `--pair` chooses
/// by placement, or says (exit 2) that no two allowed CPUs sit so.
#[test]
fn the_cpu_pair_is_chosen_on_purpose_and_named_in_the_result() {
    use pipebench::latency::pair::{Placement, Topology};
    let _cpus = cpus();
    let allowed = pipebench::process::cpu::allowed_cpus();
    let topology = Topology::read(&allowed);
    let one = |extra: &[&str]| {
        let mut args = vec![
            "latency",
            "pipe",
            "--mode",
            "blocking",
            "--sizes",
            "64",
            "--round-trips",
            "50",
            "--json",
        ];
        args.extend(extra);
        run_json(&args)["results"][0].clone()
    };
    let placed = |r: &Value| -> ([usize; 2], String) {
        let cpus: Vec<usize> = serde_json::from_value(r["cpus"].clone()).unwrap();
        (
            [cpus[0], cpus[1]],
            r["placement"]
                .as_str()
                .unwrap_or_else(|| panic!("no placement in {r}"))
                .to_string(),
        )
    };
    // The default is the pair a pipe step runs on, named as it sits (two SMT
    // threads of one core where those are the first two CPUs).
    let (cpus, placement) = placed(&one(&[]));
    assert_eq!(placement, topology.placement(cpus).as_str(), "{cpus:?}");
    let step = pipebench(&["run", "write-read", "--bytes", "16MiB", "--json"]);
    assert!(step.status.success(), "{}", stderr(&step));
    let step: Value = serde_json::from_str(&stdout(&step)).unwrap();
    let end_cpu = |end: &str| step[end]["cpu"].as_u64().map(|c| c as usize);
    match (end_cpu("writer"), end_cpu("reader")) {
        (Some(writer), Some(reader)) => assert_eq!(cpus, [writer, reader], "{step}"),
        // One CPU: the pipe step pins nothing, the latency run takes it twice.
        _ => assert_eq!((cpus, allowed.len()), ([allowed[0]; 2], 1), "{step}"),
    }
    let (cpus, placement) = placed(&one(&["--pair", "same-cpu"]));
    assert_eq!((cpus[0] == cpus[1], placement.as_str()), (true, "same-cpu"));
    for want in [Placement::SmtSiblings, Placement::SeparateCores] {
        let mut args = vec![
            "latency",
            "pipe",
            "--mode",
            "blocking",
            "--sizes",
            "64",
            "--round-trips",
            "50",
            "--json",
            "--pair",
        ];
        args.push(want.as_str());
        match topology.pair(&allowed, want) {
            Some(pair) => {
                let (cpus, placement) = placed(&run_json(&args)["results"][0]);
                assert_eq!((cpus, placement.as_str()), (pair, want.as_str()));
            }
            None => {
                let output = pipebench(&args);
                assert_exits_saying(&output, 2, want.words(), "");
            }
        }
    }
    for bad in [
        vec!["latency", "--pair", "sideways"],
        vec!["latency", "--pair", "same-cpu", "--cpus", "0,0"],
    ] {
        let output = pipebench(&bad);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{bad:?}: {}",
            stderr(&output)
        );
    }
}

/// io_uring's two message paths: reads and writes of two pipes through each
/// end's ring (`io-uring`), and IORING_OP_MSG_RING, one end posting a
/// completion straight into the other's ring, both rings made before the ends
/// start and inherited (`io-uring-msg-ring`). Where the kernel lets this
/// process make a ring with the opcodes, both modes time sane round trips of
/// several sizes, blocking ends sleep and busy ones never do; where it does
/// not, every configuration is skipped with a reason that names io_uring, and
/// nothing runs.
#[test]
fn io_uring_times_round_trips_where_the_kernel_allows_and_says_why_not() {
    let _cpus = cpus();
    for (mechanism, opcodes) in [
        (
            "io-uring",
            &[io_uring::opcode::Read::CODE, io_uring::opcode::Write::CODE][..],
        ),
        (
            "io-uring-msg-ring",
            &[io_uring::opcode::MsgRingData::CODE][..],
        ),
    ] {
        uring_path(mechanism, opcodes);
    }
}

fn uring_path(mechanism: &str, opcodes: &[u8]) {
    let output = pipebench(&[
        "latency",
        mechanism,
        "--sizes",
        "64,64KiB",
        "--round-trips",
        "200",
        "--json",
    ]);
    let allowed = io_uring::IoUring::new(2).is_ok_and(|ring| {
        let mut probe = io_uring::register::Probe::new();
        ring.submitter().register_probe(&mut probe).is_ok()
            && opcodes.iter().all(|&code| probe.is_supported(code))
    });
    if !allowed {
        // Nothing left to run: it fails and says why.
        assert!(!output.status.success(), "{}", stdout(&output));
        assert!(stderr(&output).contains("io_uring"), "{}", stderr(&output));
        return;
    }
    assert!(output.status.success(), "{mechanism}: {}", stderr(&output));
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let results = report["results"].as_array().unwrap();
    let mut seen = BTreeSet::new();
    for r in results {
        let p = ["min", "p50", "p90", "p99", "p999", "max"].map(|n| figure(r, n));
        assert!(p.windows(2).all(|w| w[0] <= w[1]), "{r}");
        assert!(p[0] > 0, "{r}");
        assert_eq!(figure(r, "count"), 200, "{r}");
        assert_eq!(r["mechanism"], mechanism, "{r}");
        seen.insert((r["mode"].as_str().unwrap().to_string(), figure(r, "size")));
    }
    for mode in ["blocking", "busy"] {
        for size in [64, 65536] {
            assert!(
                seen.contains(&(mode.to_string(), size)),
                "{mechanism} {mode} {size}: {seen:?}"
            );
        }
    }
    // Blocking, each end waits in io_uring_enter and sleeps; busy, it never does.
    let sleeps = |mode: &str| {
        results
            .iter()
            .filter(|r| r["mode"] == mode && r["size"] == 64)
            .map(|r| r["ping_sleeps"].as_f64().unwrap() + r["pong_sleeps"].as_f64().unwrap())
            .sum::<f64>()
    };
    if pipebench::process::cpu::allowed_cpus().len() >= 2 {
        assert!(
            sleeps("blocking") > 0.5,
            "{mechanism} blocking {}",
            sleeps("blocking")
        );
        assert!(sleeps("busy") < 0.05, "{mechanism} busy {}", sleeps("busy"));
    } else {
        // One CPU: the ends take turns on it, which each result names.
        assert!(
            results.iter().all(|r| r["placement"] == "same-cpu"),
            "{results:?}"
        );
    }
}

/// What timing costs is measured where it is paid: blocks of round trips timed
/// one by one against untimed blocks beside them, the median of the pairs'
/// difference. For the fastest mechanism, a busy shared-memory ring, that is
/// under 5% of its median, and the command prints the figure it holds.
#[test]
fn timing_adds_under_five_percent_of_the_fastest_median_measured_and_printed() {
    let allowed = pipebench::process::cpu::allowed_cpus();
    assert!(
        allowed.len() >= 2,
        "busy-polling needs two CPUs, has {allowed:?}"
    );
    let _cpus = cpus();
    // 200 000 round trips of a few hundred ns: 782 pairs of blocks in well
    // under a second.
    let args = [
        "latency",
        "pipe",
        "shm-ring",
        "--mode",
        "busy",
        "--sizes",
        "64",
        "--round-trips",
        "200000",
    ];
    let report = run_json(&[&args[..], &["--json"]].concat());
    let results = report["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{report}");
    let real = |r: &Value, name: &str| r[name].as_f64().unwrap_or_else(|| panic!("{name}: {r}"));
    for r in results {
        let untimed = real(r, "batch_mean_ns");
        // An untimed round trip is a real one: no slower than the slowest.
        assert!(untimed > 0.0 && untimed <= figure(r, "max") as f64, "{r}");
        assert!(
            (real(r, "clock_ns") / untimed - real(r, "timing_overhead")).abs() < 1e-9,
            "{r}"
        );
        assert!(real(r, "clock_read_ns") > 0.0, "{r}");
    }
    let fastest = results.iter().min_by_key(|r| figure(r, "p50")).unwrap();
    let clock = &report["clock"];
    assert_eq!(
        clock["fastest"]["mechanism"], fastest["mechanism"],
        "{clock}"
    );
    assert_eq!(clock["clock_ns"], fastest["clock_ns"], "{clock}");
    let share = real(clock, "share_of_fastest_p50");
    assert!(
        (share - real(fastest, "clock_ns") / figure(fastest, "p50") as f64).abs() < 1e-9,
        "{clock}"
    );
    assert!(
        share < 0.05,
        "timing costs {:.2}% of the fastest median: {clock}",
        share * 100.0
    );
    // In words, the same kind of figure, under 5% too.
    let text = pipebench(&args);
    assert!(text.status.success(), "{}", stderr(&text));
    let out = stdout(&text);
    let line = out
        .lines()
        .find(|l| l.starts_with("clock: timing a round trip added "))
        .unwrap_or_else(|| panic!("no clock line in {out}"));
    let percent: f64 = line
        .split(", ")
        .nth(1)
        .and_then(|rest| rest.split('%').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no share in {line}"));
    assert!(percent < 5.0, "{line}");
    assert!(out.contains("timing each round trip added"), "{out}");
}

/// Starts `pipebench ARGS` with `prepare` run in the child before it execs.
fn pipebench_with(args: &[&str], prepare: fn() -> std::io::Result<()>) -> std::process::Output {
    use std::os::unix::process::CommandExt;
    let mut command = Command::new(exe());
    command.args(args).stdin(Stdio::null());
    // SAFETY: `prepare` makes only async-signal-safe system calls.
    unsafe { command.pre_exec(prepare) };
    command.output().unwrap()
}

/// CPUs this process may not use are refused by name, with the ones it may:
/// the child is confined to its first allowed CPU and asked for two.
#[test]
fn cpus_outside_the_allowed_set_are_refused_naming_the_allowed_ones() {
    let _cpus = cpus();
    let allowed = pipebench::process::cpu::allowed_cpus();
    if allowed.len() < 2 {
        println!("one CPU: nothing to confine the run to");
        return;
    }
    fn first_cpu_only() -> std::io::Result<()> {
        // SAFETY: a cpu_set_t we own, zeroed then given one CPU.
        unsafe {
            let mut current: libc::cpu_set_t = std::mem::zeroed();
            let size = std::mem::size_of::<libc::cpu_set_t>();
            if libc::sched_getaffinity(0, size, &mut current) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let first = (0..libc::CPU_SETSIZE as usize)
                .find(|&cpu| libc::CPU_ISSET(cpu, &current))
                .unwrap_or(0);
            let mut one: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(first, &mut one);
            if libc::sched_setaffinity(0, size, &one) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }
    let (a, b) = (allowed[0].to_string(), allowed[1].to_string());
    let pair = format!("{a},{b}");
    let output = pipebench_with(
        &["latency", "pipe", "--cpus", &pair, "--round-trips", "100"],
        first_cpu_only,
    );
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let said = stderr(&output);
    assert!(
        said.contains(&format!("CPU {b} is not one this process may use"))
            && said.contains(&format!("allowed: [{a}]")),
        "{said}"
    );
    // The CPU it may use, twice over, still runs.
    let same = format!("{a},{a}");
    let output = pipebench_with(
        &[
            "latency",
            "pipe",
            "--cpus",
            &same,
            "--round-trips",
            "100",
            "--mode",
            "blocking",
            "--sizes",
            "64",
            "--json",
        ],
        first_cpu_only,
    );
    assert!(output.status.success(), "{}", stderr(&output));
}

/// A mechanism this kernel will not give is skipped with the reason, and the
/// rest of the session runs: io_uring_setup is made to fail with ENOSYS, as on
/// a kernel built without io_uring, by a seccomp filter on the run (its ends
/// inherit it).
#[cfg(target_arch = "x86_64")]
#[test]
fn a_mechanism_the_kernel_lacks_is_skipped_with_why_and_the_rest_runs() {
    let _cpus = cpus();
    fn no_io_uring() -> std::io::Result<()> {
        const LD_NR: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS: seccomp_data.nr
        const JEQ: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
        const RET: u16 = 0x06; // BPF_RET | BPF_K
        const ALLOW: u32 = 0x7fff_0000; // SECCOMP_RET_ALLOW
        const ERRNO: u32 = 0x0005_0000; // SECCOMP_RET_ERRNO
        let filter = [
            libc::sock_filter {
                code: LD_NR,
                jt: 0,
                jf: 0,
                k: 0,
            },
            libc::sock_filter {
                code: JEQ,
                jt: 0,
                jf: 1,
                k: libc::SYS_io_uring_setup as u32,
            },
            libc::sock_filter {
                code: RET,
                jt: 0,
                jf: 0,
                k: ERRNO | libc::ENOSYS as u32,
            },
            libc::sock_filter {
                code: RET,
                jt: 0,
                jf: 0,
                k: ALLOW,
            },
        ];
        let program = libc::sock_fprog {
            len: filter.len() as u16,
            filter: filter.as_ptr() as *mut libc::sock_filter,
        };
        // SAFETY: the program outlives the call, which copies it.
        unsafe {
            // prctl's arguments are unsigned longs, the unused ones zero.
            const ON: libc::c_ulong = 1;
            const NONE: libc::c_ulong = 0;
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, ON, NONE, NONE, NONE) != 0
                || libc::prctl(
                    libc::PR_SET_SECCOMP,
                    libc::SECCOMP_MODE_FILTER as libc::c_ulong,
                    &program as *const libc::sock_fprog as libc::c_ulong,
                ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }
    let args = [
        "latency",
        "pipe",
        "io-uring",
        "io-uring-msg-ring",
        "--mode",
        "blocking",
        "--sizes",
        "64",
        "--round-trips",
        "100",
    ];
    let output = pipebench_with(&[&args[..], &["--json"]].concat(), no_io_uring);
    assert!(output.status.success(), "{}", stderr(&output));
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let ran: Vec<&str> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["mechanism"].as_str().unwrap())
        .collect();
    assert_eq!(ran, ["pipe"], "{report}");
    let skipped = report["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 2, "{report}");
    for (skip, mechanism) in skipped.iter().zip(["io-uring ", "io-uring-msg-ring "]) {
        assert!(
            skip["configuration"]
                .as_str()
                .unwrap()
                .starts_with(mechanism)
                && skip["reason"]
                    .as_str()
                    .unwrap()
                    .contains("this kernel has no io_uring"),
            "{report}"
        );
    }
    // Asked for alone, there is nothing to run: it fails and says why.
    let output = pipebench_with(
        &args[..1]
            .iter()
            .chain(&args[2..3])
            .chain(&args[4..])
            .copied()
            .collect::<Vec<_>>(),
        no_io_uring,
    );
    assert!(!output.status.success(), "{}", stdout(&output));
    assert!(
        stderr(&output).contains("io-uring is not available here: this kernel has no io_uring"),
        "{}",
        stderr(&output)
    );
}

/// `--csv` is one row per configuration (a doubling range of sizes gives each
/// size), `--svg` draws each one, and on a terminal the bar follows the round
/// trips as they are timed.
#[test]
fn csv_svg_and_the_terminal_bar_are_usable() {
    let _cpus = cpus();
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("latency.svg");
    let args = [
        "latency",
        "pipe",
        "--mode",
        "busy",
        "--sizes",
        "64..256",
        "--round-trips",
        "100",
    ];
    let output = pipebench(&[&args[..], &["--csv"]].concat());
    assert!(output.status.success(), "{}", stderr(&output));
    let csv = stdout(&output);
    let lines: Vec<&str> = csv.lines().collect();
    assert!(
        lines[0].starts_with("mechanism,mode,size,cpus,placement,count,p50,p90,p99,p999,max"),
        "{csv}"
    );
    let columns = lines[0].split(',').count();
    let sizes: Vec<&str> = lines[1..]
        .iter()
        .map(|line| {
            let cells: Vec<&str> = line.split(',').collect();
            assert_eq!(cells.len(), columns, "{line}");
            assert_eq!(&cells[..2], ["pipe", "busy"], "{line}");
            assert_eq!(cells[5], "100", "{line}");
            cells[2]
        })
        .collect();
    assert_eq!(sizes, ["64", "128", "256"], "{csv}");

    let output = pipebench(&[&args[..], &["--svg", svg.to_str().unwrap()]].concat());
    assert!(output.status.success(), "{}", stderr(&output));
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert!(
        chart.starts_with("<svg") && chart.contains("pipe"),
        "{chart:.200}"
    );
    assert!(chart.contains("busy"), "the mode is labelled: {chart:.400}");

    // Long enough (blocking round trips of a few µs) for several redraws.
    let command = format!(
        "{} latency pipe --mode blocking --sizes 64 --round-trips 50000",
        exe().display()
    );
    let output = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .expect("`script` (util-linux) runs a command on a pseudo-terminal");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{text}");
    let midway = text
        .split(['\r', '\n'])
        .filter(|line| line.contains("round trips [") && line.contains("/50000"))
        .filter(|line| !line.contains(" 0/50000") && !line.contains("50000/50000"))
        .count();
    assert!(midway > 0, "no update between 0 and 50000 in: {text}");
}
