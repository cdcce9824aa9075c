//! `pipebench run --profile`: real perf samples of both ends, or a clear refusal.

use crate::common::{cpus, pipebench, stderr, stdout};
use serde_json::Value;

#[test]
fn profiling_names_the_kernel_functions_that_copy() {
    let _cpus = cpus();
    let dir = tempfile::tempdir().unwrap();
    let output = pipebench(&[
        "run",
        "write-read",
        "--bytes",
        "256MiB",
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
    assert_eq!(report["bytes"], 256u64 << 20);
    for role in ["writer", "reader"] {
        let symbols = report["profile"][role].as_array().unwrap();
        assert!(!symbols.is_empty(), "no samples for the {role}: {report}");
        // write(2) and read(2) spend their time copying between user and kernel.
        assert!(
            symbols
                .iter()
                .any(|s| s["symbol"].as_str().unwrap().contains("copy")),
            "{role}: {symbols:?}"
        );
    }
    assert!(dir.path().join("writer.perf.data").exists());
}

#[test]
fn profiling_without_perf_says_how_to_install_it() {
    let output = std::process::Command::new(crate::common::exe())
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
