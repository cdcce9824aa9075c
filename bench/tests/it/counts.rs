//! What the kernel did in real runs: the counts each end takes of itself, against
//! the book's explanation of each step.

use serde_json::Value;

use crate::common::{as_nobody, cpus, exe, pipebench, stderr, stdout};

const MIB: u64 = 1 << 20;

fn run_json(step: &str, bytes: &str, extra: &[&str]) -> Value {
    let mut args = vec!["run", step, "--json", "--bytes", bytes];
    args.extend_from_slice(extra);
    let output = pipebench(&args);
    assert!(
        output.status.success(),
        "pipebench {args:?} failed: {}",
        stderr(&output)
    );
    serde_json::from_str(&stdout(&output)).expect("run --json prints JSON")
}

/// Whether this process may count kernel tracepoints (root, or paranoid -1, with
/// tracefs mounted): the runs it starts then carry page allocations.
fn traced(result: &Value) -> bool {
    !result["counts"]["missing"]
        .as_array()
        .expect("counts carry a missing list")
        .iter()
        .any(|m| {
            m["counts"]
                .as_array()
                .is_some_and(|c| c.iter().any(|c| c == "page_allocs"))
        })
}

/// Where this process may not count kernel tracepoints (neither root nor
/// paranoid -1, or no tracefs): `count` is absent for both ends, never 0, and
/// `missing` lists it with the reason, which is not "only on request".
fn untraced_and_said_why(result: &Value, count: &str) {
    let counts = &result["counts"];
    for end in ["writer", "reader"] {
        assert!(counts[end][count].is_null(), "{end}'s {count}: {counts}");
    }
    let missing = counts["missing"]
        .as_array()
        .expect("counts carry a missing list")
        .iter()
        .find(|m| {
            m["counts"]
                .as_array()
                .is_some_and(|c| c.iter().any(|c| c == count))
        })
        .unwrap_or_else(|| panic!("{count} is not listed as missing: {counts}"));
    assert!(
        matches!(
            missing["reason"]["kind"].as_str(),
            Some("not_permitted" | "no_tracefs" | "no_such_event" | "blocked")
        ),
        "{missing}"
    );
    assert!(!missing["message"].as_str().unwrap_or_default().is_empty());
}

/// Pages the run moved, of the kernel's size: the unit the pipe allocates in.
fn pages(result: &Value) -> f64 {
    result["bytes"].as_f64().unwrap() / pipebench::ends::buffer::page_size() as f64
}

#[test]
fn write_read_makes_one_write_per_256_kib_and_allocates_a_page_per_4_kib() {
    let _cpus = cpus();
    // Page allocations are counted only when asked: they fire on every page.
    let result = run_json("write-read", "64MiB", &["--trace-syscalls"]);
    let counts = &result["counts"];
    let bytes = result["bytes"].as_u64().unwrap();
    assert_eq!(bytes, 64 * MIB, "{result}");
    // The writer counts its own calls: exactly one write per 256 KiB buffer.
    assert_eq!(
        counts["writer"]["syscalls"]["write"].as_u64(),
        Some(bytes / (256 * 1024)),
        "{counts}"
    );
    let capacity = result["pipe_capacity"].as_u64().unwrap();
    let reads = counts["reader"]["syscalls"]["read"].as_u64().unwrap();
    assert!(
        reads >= bytes / capacity,
        "a read returns at most a pipe-full: {reads} reads for {bytes} bytes through {capacity}"
    );
    if traced(&result) {
        let per_page = counts["writer"]["page_allocs"].as_f64().unwrap() / pages(&result);
        assert!(
            (0.5..=1.0).contains(&per_page),
            "the writer should allocate at most one page per page moved, most of the time: {per_page}"
        );
        let verdict = counts["model"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["id"] == "writer_page_allocs")
            .map(|j| j["verdict"].clone());
        assert_eq!(verdict, Some("agrees".into()), "{counts}");
    } else {
        untraced_and_said_why(&result, "page_allocs");
    }
}

#[test]
fn a_plain_run_leaves_the_kernels_events_out_and_says_how_to_ask() {
    let _cpus = cpus();
    // Any user, any machine: a plain run asks the kernel for nothing (its
    // tracepoints fire on the hot path), so they are missing as on request.
    let result = run_json("write-read", "16MiB", &[]);
    let counts = &result["counts"];
    for end in ["writer", "reader"] {
        for event in [
            "page_allocs",
            "page_frees",
            "wakeups",
            "ipis",
            "tlb_flushes",
        ] {
            assert!(counts[end][event].is_null(), "{end}.{event}: {counts}");
        }
        // What costs nothing is there.
        for always in ["context_switches", "voluntary_switches", "page_faults"] {
            assert!(counts[end][always].is_u64(), "{end}.{always}: {counts}");
        }
    }
    let asked = counts["missing"].as_array().unwrap().iter().find(|m| {
        m["counts"].as_array().is_some_and(|c| {
            [
                "page_allocs",
                "page_frees",
                "wakeups",
                "ipis",
                "tlb_flushes",
            ]
            .iter()
            .all(|event| c.iter().any(|c| c == event))
        })
    });
    let asked = asked.expect("the kernel's events are listed as missing together");
    assert_eq!(asked["reason"]["kind"], "on_request", "{counts}");
    assert!(
        asked["message"]
            .as_str()
            .unwrap()
            .contains("--trace-syscalls"),
        "{asked}"
    );
}

#[test]
fn vmsplice_allocates_next_to_nothing() {
    let _cpus = cpus();
    let result = run_json("vmsplice-splice", "64MiB", &["--trace-syscalls"]);
    if !traced(&result) {
        untraced_and_said_why(&result, "page_allocs");
        return;
    }
    let allocs = result["counts"]["writer"]["page_allocs"].as_f64().unwrap();
    assert!(
        allocs / pages(&result) < 0.01,
        "vmsplice should allocate under 0.01 pages per page moved: {allocs} for {} pages",
        pages(&result)
    );
}

#[test]
fn busy_loop_ends_hardly_ever_sleep() {
    let _cpus = cpus();
    let result = run_json("busy-loop", "256MiB", &[]);
    if pipebench::process::cpu::allowed_cpus().len() < 2 {
        // One CPU: the busy ends take turns, which the result says.
        let warnings = result["warnings"].as_array().expect("a warnings list");
        assert!(
            warnings
                .iter()
                .any(|w| w.as_str().is_some_and(|w| w.contains("share it"))),
            "{result}"
        );
        return;
    }
    let counts = &result["counts"];
    // A blocking end sleeps about once per pipe-full; 256 MiB through a 128 KiB
    // pipe is 2048 of them. Spinning ends retry instead.
    let fills = result["bytes"].as_u64().unwrap() / result["pipe_capacity"].as_u64().unwrap();
    for end in ["writer", "reader"] {
        let sleeps = counts[end]["voluntary_switches"].as_u64().unwrap();
        assert!(
            sleeps * 20 < fills,
            "the busy {end} slept {sleeps} times in {fills} pipe-fulls: {counts}"
        );
    }
}

#[test]
fn an_unprivileged_run_has_the_always_counts_and_says_why_the_rest_are_missing() {
    let _cpus = cpus();
    let exe = exe();
    let output = as_nobody(
        exe.to_str().unwrap(),
        // Asked to trace, so that what is refused is the privilege's doing.
        &[
            "run",
            "write-read",
            "--json",
            "--bytes",
            "16MiB",
            "--trace-syscalls",
        ],
        "",
    );
    assert!(output.status.success(), "as nobody: {}", stderr(&output));
    let result: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let counts = &result["counts"];
    for end in ["writer", "reader"] {
        for always in [
            "context_switches",
            "voluntary_switches",
            "involuntary_switches",
            "page_faults",
            "major_faults",
        ] {
            assert!(counts[end][always].is_u64(), "{end}.{always}: {counts}");
        }
        // CPU migrations come from /proc/PID/sched, which any user may read
        // of their own processes: counted wherever the kernel reports them.
        let reported = std::path::Path::new("/proc/self/sched").exists();
        assert_eq!(
            counts[end]["cpu_migrations"].is_u64(),
            reported,
            "{end}: {counts}"
        );
        assert!(counts[end]["syscalls"].is_object(), "{counts}");
        // Unknown is absent, never 0.
        assert!(counts[end]["page_allocs"].is_null(), "{counts}");
    }
    assert_eq!(counts["writer"]["syscalls"]["write"], 64, "{counts}");
    let missing = counts["missing"].as_array().unwrap();
    let allocs = missing
        .iter()
        .find(|m| {
            m["counts"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c == "page_allocs")
        })
        .unwrap_or_else(|| panic!("no reason for the missing page allocations: {counts}"));
    let kind = allocs["reason"]["kind"].as_str().unwrap();
    assert!(
        matches!(kind, "not_permitted" | "no_tracefs"),
        "an unprivileged user is refused tracepoints: {allocs}"
    );
    assert!(!allocs["message"].as_str().unwrap().is_empty());
    let unknown = counts["model"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["id"] == "writer_page_allocs")
        .unwrap();
    assert_eq!(unknown["verdict"], "unknown", "{unknown}");
}

/// Whether transparent huge pages may be had on advice (`madvise` or `always`).
fn thp_on_advice() -> bool {
    std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
        .is_ok_and(|t| !t.contains("[never]"))
}

/// The one `missing` entry naming `count`.
fn missing_for<'a>(result: &'a Value, count: &str) -> Option<&'a Value> {
    result["counts"]["missing"].as_array()?.iter().find(|m| {
        m["counts"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c == count))
    })
}

#[test]
fn huge_pages_are_counted_in_the_writers_faults_and_the_machine_wide_counters_named_so() {
    let _cpus = cpus();
    let huge = run_json("huge-pages", "32MiB", &["--trace-syscalls"]);
    let small = run_json("vmsplice-splice", "32MiB", &["--trace-syscalls"]);
    // The THP tracepoints never fire in an end: said once, typed, naming those
    // this kernel has, on the run that uses huge pages.
    let thp = missing_for(&huge, "thp_events").expect("the THP tracepoints are said missing");
    assert_eq!(thp["reason"]["kind"], "not_per_end", "{thp}");
    let have = |category: &str| {
        std::path::Path::new("/sys/kernel/tracing/events")
            .join(category)
            .is_dir()
    };
    let events = thp["reason"]["events"].as_array().unwrap();
    for category in ["huge_memory", "thp"] {
        if have(category) {
            let prefix = format!("{category}:");
            assert!(
                events
                    .iter()
                    .any(|e| e.as_str().unwrap().starts_with(&prefix)),
                "{category} events unnamed: {thp}"
            );
        }
    }
    assert!(thp["message"].as_str().unwrap().contains("machine.thp"));
    // The machine-wide counters: present, only those that moved.
    for result in [&huge, &small] {
        let moved = result["machine"]["thp"]
            .as_object()
            .expect("machine.thp is carried where /proc/vmstat is readable");
        assert!(moved.values().all(|v| v.as_u64().unwrap() > 0), "{moved:?}");
    }
    if !traced(&huge) {
        untraced_and_said_why(&huge, "huge_page_allocs");
        return;
    }
    // Per end, where the tracepoint is counted: the writer's own faults take one
    // huge page per buffer (two buffers of 256 KiB, each aligned to its own), the
    // reader none; without huge pages, none at either end.
    let writer_huge = huge["counts"]["writer"]["huge_page_allocs"]
        .as_u64()
        .unwrap();
    assert_eq!(
        huge["counts"]["reader"]["huge_page_allocs"].as_u64(),
        Some(0)
    );
    for end in ["writer", "reader"] {
        assert_eq!(
            small["counts"][end]["huge_page_allocs"].as_u64(),
            Some(0),
            "{end}: {}",
            small["counts"]
        );
    }
    assert!(missing_for(&small, "thp_events").is_none());
    let judged = huge["counts"]["model"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["id"] == "writer_huge_pages")
        .expect("the model judges the writer's huge pages");
    if thp_on_advice() {
        assert_eq!(writer_huge, 2, "{}", huge["counts"]);
        assert_eq!(judged["verdict"], "agrees", "{judged}");
        // The machine saw at least the writer's own.
        let machine = huge["machine"]["thp"]["thp_fault_alloc"]
            .as_u64()
            .unwrap_or(0);
        assert!(machine >= writer_huge, "{}", huge["machine"]);
    } else {
        assert_eq!(writer_huge, 0);
        assert_eq!(judged["verdict"], "disagrees", "{judged}");
    }
    // A plain run leaves the per-end count out, as on request.
    let plain = run_json("huge-pages", "16MiB", &[]);
    assert!(plain["counts"]["writer"]["huge_page_allocs"].is_null());
    assert_eq!(
        missing_for(&plain, "huge_page_allocs").unwrap()["reason"]["kind"],
        "on_request"
    );
}
