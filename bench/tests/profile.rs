//! `pipebench run --profile`: real perf samples of both ends, or a clear refusal.

mod common;

use common::{cpus, pipebench, stderr, stdout};
use serde_json::Value;

#[test]
fn profiling_names_the_kernel_functions_that_copy() {
    let _cpus = cpus();
    let dir = tempfile::tempdir().unwrap();
    let output = pipebench(&[
        "run",
        "write-read",
        "--bytes",
        "32MiB",
        "--profile",
        "--json",
        "--profile-dir",
        dir.path().to_str().unwrap(),
    ]);
    if !pipebench::profile::perf_installed() {
        assert_eq!(output.status.code(), Some(1));
        assert!(
            stderr(&output).contains("perf is not installed"),
            "{}",
            stderr(&output)
        );
        return;
    }
    assert!(output.status.success(), "{}", stderr(&output));
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["bytes"], 32u64 << 20);
    for role in ["writer", "reader"] {
        let functions = report["profile"][role]["functions"].as_array().unwrap();
        assert!(!functions.is_empty(), "no samples for the {role}: {report}");
        // write(2) and read(2) spend their time copying between user and kernel.
        assert!(
            functions
                .iter()
                .any(|f| f["symbol"].as_str().unwrap().contains("copy")),
            "{role}: {functions:?}"
        );
        let svg = std::fs::read_to_string(dir.path().join(format!("{role}.svg"))).unwrap();
        assert!(
            svg.contains("<svg") && !svg.contains("<script"),
            "{role}.svg"
        );
    }
    assert!(report["profile"]["comparison"].is_array());
    assert!(dir.path().join("writer.perf.data").exists());
}

#[test]
fn a_missing_perf_named_by_the_environment_is_named_back() {
    let output = std::process::Command::new(common::exe())
        .args(["run", "write-read", "--bytes", "8MiB", "--profile"])
        .env(pipebench::profile::PERF_ENV, "/nonexistent/perf")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    assert!(message.contains("`/nonexistent/perf`"), "{message}");
}

#[test]
fn profiling_without_perf_says_how_to_install_it() {
    let output = std::process::Command::new(common::exe())
        .args(["run", "write-read", "--bytes", "8MiB", "--profile"])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    assert!(
        message.contains("perf is not installed") && message.contains("apt-get install"),
        "{message}"
    );
}
