//! `pipebench tool`: real programs as one end of a real pipe, pipebench's end
//! counting what arrives.

use crate::common::{cpus, exe, pipebench, stderr, stdout};
use serde_json::Value;

const BYTES: u64 = 16 << 20;

fn tool_json(args: &[&str]) -> Value {
    let output = pipebench(args);
    assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    serde_json::from_str(&stdout(&output)).expect("JSON")
}

#[test]
fn yes_as_the_writer_is_cut_off_at_the_size_pipebench_counted() {
    let _cpus = cpus();
    let result = tool_json(&["tool", "yes", "--bytes", "16MiB", "--json"]);
    assert_eq!(result["tool"], "yes");
    assert_eq!(result["side"], "writer");
    // The reader counted exactly the size, then closed the pipe on an endless tool.
    assert_eq!(result["bytes"].as_u64(), Some(BYTES), "{result}");
    assert!(result["gib_per_s"].as_f64().unwrap() > 0.0, "{result}");
    assert_eq!(result["argv"][0], "yes");
    assert_keyed_by_its_end(&result);
}

/// A tool result's counts have one object, the tool's, under the name its
/// `side` gives it, with the counts every end carries, and no other end.
fn assert_keyed_by_its_end(result: &Value) {
    let side = result["side"].as_str().unwrap();
    let counts = result["counts"].as_object().unwrap();
    let ends: Vec<&String> = counts.keys().filter(|k| *k != "missing").collect();
    assert_eq!(ends, [side], "{result}");
    let own = &counts[side];
    for field in ["context_switches", "page_faults"] {
        assert!(own[field].is_u64(), "{field}: {own}");
    }
    assert!(own["syscalls"].is_object(), "{own}");
    // A migration count is there or said missing, never both.
    let said_missing = counts["missing"].to_string().contains("\"cpu_migrations\"");
    assert_ne!(own["cpu_migrations"].is_u64(), said_missing, "{result}");
    // Its switches are its voluntary and involuntary ones.
    assert_eq!(
        own["context_switches"].as_u64(),
        Some(
            own["voluntary_switches"].as_u64().unwrap()
                + own["involuntary_switches"].as_u64().unwrap()
        ),
        "{own}"
    );
}

#[test]
fn cat_of_a_cached_file_moves_every_byte_and_its_calls_are_counted() {
    let _cpus = cpus();
    let result = tool_json(&[
        "tool",
        "cat",
        "--bytes",
        "16MiB",
        "--trace-syscalls",
        "--json",
    ]);
    assert_eq!(result["bytes"].as_u64(), Some(BYTES), "{result}");
    assert_eq!(result["exit"], "exit code 0");
    // The file cat read lived in a private run folder, gone with the run.
    let file = result["argv"][1].as_str().unwrap();
    assert!(file.contains("pipebook-run-"), "{file}");
    assert!(
        !std::path::Path::new(file).exists(),
        "{file} was left behind"
    );
    assert_keyed_by_its_end(&result);
    let counts = &result["counts"];
    match counts["writer"]["syscalls_traced"].as_object() {
        Some(traced) => {
            // cat copies: it reads the file and writes the pipe.
            assert!(traced["read"].as_u64().unwrap() > 0, "{traced:?}");
            assert!(traced["write"].as_u64().unwrap() > 0, "{traced:?}");
            // Its calls by kind are the kernel's count of them.
            assert_eq!(
                counts["writer"]["syscalls"].as_object(),
                Some(traced),
                "{counts}"
            );
            assert!(result["calls"]["on_pipe"].as_u64().unwrap() > 0, "{result}");
        }
        None => {
            // Not permitted here: the result says why, never a zero.
            let missing = counts["missing"].as_array().unwrap();
            assert!(
                missing
                    .iter()
                    .any(|m| m["counts"].to_string().contains("syscalls_traced")),
                "{counts}"
            );
            assert!(result.get("calls").is_none(), "{result}");
        }
    }
}

#[test]
fn the_call_tally_finds_the_article_writers_256_kib_calls() {
    let _cpus = cpus();
    // The reference: pipebench's own writer makes 256 KiB write(2) calls, so
    // the tally on the tool's process must find 64 of them for 16 MiB (the
    // first may come before the counters attach), and one more when its
    // outcome line, a write on fd 3, is counted too: the tally counts the
    // process's calls, not one descriptor's.
    let result = tool_json(&[
        "tool",
        "pipebench",
        "--bytes",
        "16MiB",
        "--trace-syscalls",
        "--json",
    ]);
    assert_eq!(result["bytes"].as_u64(), Some(BYTES), "{result}");
    if result["counts"]["writer"]["syscalls_traced"].is_null() {
        return assert!(!result["counts"]["missing"].as_array().unwrap().is_empty());
    }
    let calls = &result["calls"];
    let on_pipe = calls["on_pipe"].as_u64().unwrap();
    assert!((63..=65).contains(&on_pipe), "{calls}");
    assert_eq!(calls["zero_copy"], false, "{calls}");
}

#[test]
fn cat_as_the_reader_takes_every_byte_pipebench_writes() {
    let _cpus = cpus();
    let result = tool_json(&[
        "tool", "cat", "--as", "reader", "--bytes", "16MiB", "--json",
    ]);
    assert_eq!(result["side"], "reader");
    assert_eq!(result["bytes"].as_u64(), Some(BYTES), "{result}");
    assert_eq!(result["argv"], serde_json::json!(["cat"]));
    assert_keyed_by_its_end(&result);
}

#[test]
fn head_as_the_reader_and_dd_as_the_writer_move_the_size() {
    let _cpus = cpus();
    for args in [
        [
            "tool", "head", "--as", "reader", "--bytes", "4MiB", "--json",
        ],
        [
            "tool", "dd-1m", "--as", "writer", "--bytes", "4MiB", "--json",
        ],
    ] {
        let result = tool_json(&args);
        assert_eq!(result["bytes"].as_u64(), Some(4 << 20), "{result}");
    }
}

#[test]
fn a_tool_not_installed_is_reported_with_the_tools_that_are() {
    // An empty PATH: no tool of the table is installed but pipebench's own ends.
    let empty = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(exe())
        .args(["tool", "cat", "--bytes", "4MiB"])
        .env("PATH", empty.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let said = stderr(&output);
    assert!(said.contains("cat") && said.contains("pipebench"), "{said}");
}

#[test]
fn an_unknown_tool_or_a_side_it_cannot_take_exits_2() {
    for args in [
        vec!["tool", "rm", "--bytes", "4MiB"],
        vec!["tool", "yes", "--as", "reader", "--bytes", "4MiB"],
        vec!["tool", "cat", "--bytes", "1KiB"],
    ] {
        let output = pipebench(&args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    let output = pipebench(&["tool", "rm"]);
    assert!(stderr(&output).contains("yes"), "{}", stderr(&output));
}
