//! Counts in every command that moves data: `run`, `all`, `sweep` and `ipc`
//! carry them in `--json` and print them as a table on the terminal, and
//! `--no-counts` turns the kernel's events off and says so, keeping what costs
//! nothing (the ends' own calls, faults and switches).

use serde_json::Value;

use crate::common::{cpus, pipebench, stderr, stdout};

/// One data call per 256 KiB buffer: what write-read's writer makes per GiB.
const WRITES_PER_GIB: f64 = 4096.0;

fn ok(args: &[&str]) -> String {
    let output = pipebench(args);
    assert!(
        output.status.success(),
        "pipebench {args:?} failed: {}",
        stderr(&output)
    );
    stdout(&output)
}

fn json(args: &[&str]) -> Value {
    let text = ok(args);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{args:?} printed no JSON ({e}): {text}"))
}

/// Whether a `missing` list says the kernel's events were turned off.
fn turned_off(missing: &Value) -> bool {
    missing
        .as_array()
        .expect("a missing list")
        .iter()
        .any(|m| m["reason"]["kind"] == "turned_off" && !m["message"].as_str().unwrap().is_empty())
}

/// The text after the terminal's counts heading (`what the kernel did`).
fn counts_table(text: &str) -> &str {
    let at = text
        .find("what the kernel did")
        .unwrap_or_else(|| panic!("no counts table in: {text}"));
    &text[at..]
}

/// The cells of the table's row that starts with `label`, after the label.
fn row<'a>(table: &'a str, label: &str) -> Vec<&'a str> {
    let line = table
        .lines()
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no row {label:?} in: {table}"));
    line.trim_start()[label.len()..]
        .split_whitespace()
        .collect()
}

#[test]
fn run_prints_each_ends_counts_per_gib_and_no_counts_turns_the_events_off() {
    let _cpus = cpus();
    let args = ["run", "write-read", "--bytes", "8MiB"];
    // The terminal: both ends as columns, per GiB; the writer's calls exactly
    // one per 256 KiB.
    let text = ok(&args);
    let table = counts_table(&text);
    assert!(
        table.contains("writer") && table.contains("reader"),
        "{table}"
    );
    let calls = row(table, "data calls");
    assert_eq!(calls[0], "4096", "{table}");
    assert!(
        calls[1].parse::<f64>().unwrap() >= WRITES_PER_GIB,
        "a read returns at most one write's bytes here: {table}"
    );
    assert!(!table.contains("--no-counts"), "{table}");

    let on = json(&[&args[..], &["--json"]].concat());
    assert_eq!(on["counts"]["writer"]["syscalls"]["write"], 32, "{on}");
    assert!(!turned_off(&on["counts"]["missing"]), "{}", on["counts"]);

    let off = json(&[&args[..], &["--json", "--no-counts"]].concat());
    let counts = &off["counts"];
    assert_eq!(counts["writer"]["syscalls"]["write"], 32, "{counts}");
    for end in ["writer", "reader"] {
        assert!(counts[end]["page_faults"].is_u64(), "{counts}");
        assert!(counts[end]["voluntary_switches"].is_u64(), "{counts}");
        // The kernel's events are absent, never 0.
        for event in ["wakeups", "ipis", "tlb_flushes", "page_allocs"] {
            assert!(counts[end][event].is_null(), "{end}.{event}: {counts}");
        }
    }
    assert!(turned_off(&counts["missing"]), "{counts}");
    let text = ok(&[&args[..], &["--no-counts"]].concat());
    let table = counts_table(&text);
    assert!(
        table.contains("not counted (") && table.contains("--no-counts"),
        "{table}"
    );
    assert_eq!(row(table, "data calls")[0], "4096", "{table}");
}

#[test]
fn all_prints_each_steps_medians_per_gib_and_carries_them_in_json() {
    let _cpus = cpus();
    let args = [
        "all",
        "--steps",
        "write-read,busy-loop",
        "--repeats",
        "2",
        "--bytes",
        "8MiB",
        "--seed",
        "7",
    ];
    let report = json(&[&args[..], &["--json"]].concat());
    let counts = report["counts"].as_array().unwrap();
    let steps: Vec<&str> = counts.iter().map(|c| c["step"].as_str().unwrap()).collect();
    assert_eq!(steps.len(), 2, "{report}");
    for c in counts {
        let per_gib = &c["per_gib"];
        assert_eq!(per_gib["runs"], 2, "{c}");
        let writer = per_gib["ends"]["writer"]["data_calls"].as_f64().unwrap();
        match c["step"].as_str().unwrap() {
            "write-read" => assert_eq!(writer, WRITES_PER_GIB, "{c}"),
            // A busy writer counts its EAGAIN retries as calls too.
            "busy-loop" => assert!(writer >= WRITES_PER_GIB, "{c}"),
            other => panic!("a step not asked for: {other}"),
        }
        assert!(
            per_gib["ends"]["reader"]["voluntary_switches"].is_number(),
            "{c}"
        );
    }

    let text = ok(&args);
    let table = counts_table(&text);
    let cells = row(table, "write-read");
    assert_eq!(cells[0], "4096", "w calls, per GiB: {table}");
    assert!(table.contains("agree"), "the model's tally: {table}");
    assert!(!row(table, "busy-loop").is_empty(), "{table}");

    let off = json(&[&args[..], &["--json", "--no-counts"]].concat());
    for c in off["counts"].as_array().unwrap() {
        let missing = c["per_gib"]["missing"].as_array().unwrap();
        assert!(
            missing
                .iter()
                .any(|m| m.as_str().unwrap().contains("--no-counts")),
            "{c}"
        );
        // The calls are the ends' own tally: counted with counting off too.
        if c["step"] == "write-read" {
            let writer = &c["per_gib"]["ends"]["writer"];
            assert_eq!(writer["data_calls"].as_f64(), Some(WRITES_PER_GIB), "{c}");
        }
    }
    for run in off["runs"].as_array().unwrap() {
        assert!(turned_off(&run["counts"]["missing"]), "{run}");
    }
}

#[test]
fn sweep_prints_each_values_medians_per_gib_and_carries_them_in_json() {
    let _cpus = cpus();
    let args = [
        "sweep",
        "write-read",
        "--pipe-size",
        "16KiB,64KiB",
        "--bytes",
        "8MiB",
        "--repeats",
        "1",
    ];
    let sweep = json(&[&args[..], &["--json"]].concat());
    let counts = sweep["counts"].as_array().unwrap();
    let values: Vec<u64> = counts
        .iter()
        .map(|c| c["value"].as_u64().unwrap())
        .collect();
    assert_eq!(values, [16 << 10, 64 << 10], "{sweep}");
    for c in counts {
        let ends = &c["per_gib"]["ends"];
        // The writer's calls follow its buffer, not the pipe.
        assert_eq!(
            ends["writer"]["data_calls"].as_f64(),
            Some(WRITES_PER_GIB),
            "{c}"
        );
        // A read takes at most a pipe-full.
        let pipe = c["value"].as_f64().unwrap();
        let reads = ends["reader"]["data_calls"].as_f64().unwrap();
        assert!(reads >= (1u64 << 30) as f64 / pipe, "{c}");
    }

    let text = ok(&args);
    let table = counts_table(&text);
    for label in ["16KiB", "64KiB"] {
        let cells = row(table, label);
        assert_eq!(cells[0], "4096", "{label}: {table}");
    }

    let off = json(&[&args[..], &["--json", "--no-counts"]].concat());
    for point in off["points"].as_array().unwrap() {
        for run in point["runs"].as_array().unwrap() {
            assert!(turned_off(&run["counts"]["missing"]), "{run}");
        }
    }
}

#[test]
fn ipc_prints_each_ends_counts_per_gib_and_no_counts_says_so() {
    let _cpus = cpus();
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "ipc",
        "pipe-rw",
        "--bytes",
        "8MiB",
        "--repeats",
        "1",
        "--dir",
        dir.path().to_str().unwrap(),
    ];
    let text = ok(&args);
    let table = counts_table(&text);
    assert!(text.contains("pipe-rw:"), "{text}");
    assert!(
        table.contains("producer") && table.contains("consumer"),
        "the ends as the result names them: {table}"
    );
    assert!(!row(table, "page faults").is_empty(), "{table}");
    assert!(!table.contains("--no-counts"), "{table}");

    let text = ok(&[&args[..], &["--no-counts"]].concat());
    let table = counts_table(&text);
    assert!(
        table.contains("not counted (") && table.contains("--no-counts"),
        "{table}"
    );
    // What costs nothing is still printed.
    assert!(!row(table, "page faults").is_empty(), "{table}");
}
