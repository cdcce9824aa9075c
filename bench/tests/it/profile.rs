//! `pipebench run --profile`: real perf samples of both ends, or a clear refusal.

use crate::common::{
    assert_exits_saying, cpus, pipebench, refused_for_want_of_perf, stderr, stdout,
};
use serde_json::Value;

#[test]
fn profiling_names_the_kernel_functions_that_copy() {
    let _cpus = cpus();
    let dir = tempfile::tempdir().unwrap();
    // 128 MiB: the reader is on a CPU only while it copies, a few ms per 32 MiB,
    // and at 32 MiB it got as few as 8 samples, sometimes none in the copy;
    // here 128 MiB gave ~200 samples an end with the copy at 15-38% of them.
    let output = pipebench(&[
        "run",
        "write-read",
        "--bytes",
        "128MiB",
        "--profile",
        "--json",
        "--profile-dir",
        dir.path().to_str().unwrap(),
    ]);
    if !pipebench::profile::perf_installed() {
        refused_for_want_of_perf(&output);
        return;
    }
    assert!(output.status.success(), "{}", stderr(&output));
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["bytes"], 128u64 << 20);
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
    let _cpus = crate::common::cpus();
    let output = std::process::Command::new(crate::common::exe())
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
    let _cpus = crate::common::cpus();
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

#[test]
fn an_unprivileged_profile_says_what_paranoid_allows() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let _cpus = cpus();
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let mut command = std::process::Command::new(crate::common::exe());
    command
        .args([
            "run",
            "write-read",
            "--bytes",
            "32MiB",
            "--profile",
            "--json",
        ])
        .arg("--profile-dir")
        .arg(dir.path());
    // Root looks as an unprivileged user does (uid nobody); any other user
    // already is one.
    if rustix::process::geteuid().is_root() {
        command.uid(65534).gid(65534);
    }
    let output = command.output().unwrap();
    if !pipebench::profile::perf_installed() {
        // Nothing to sample with: the refusal comes first and names what is missing.
        refused_for_want_of_perf(&output);
        return;
    }
    let paranoid: i32 = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    if paranoid > 2 {
        assert_exits_saying(&output, 1, "perf_event_paranoid is", "");
        return;
    }
    assert!(output.status.success(), "{}", stderr(&output));
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let profile = &report["profile"];
    let kinds: Vec<&str> = profile["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["kind"].as_str().unwrap())
        .collect();
    if paranoid == 2 {
        // User space only: said, and true of the samples.
        assert!(kinds.contains(&"user_space_only"), "{kinds:?}");
        assert!(profile["event"].as_str().unwrap().ends_with(":u"));
        for role in ["writer", "reader"] {
            let functions = profile[role]["functions"].as_array().unwrap();
            assert!(
                functions.iter().all(|f| f["kernel"] == false),
                "{role}: {functions:?}"
            );
        }
        // write(2)/read(2) spend nearly all their time in the kernel: an end
        // without user samples is said to be so, with that reason.
        let silent = ["writer", "reader"]
            .iter()
            .filter(|role| profile[**role]["samples"] == 0)
            .count();
        let no_samples = profile["notes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n["kind"] == "no_samples")
            .inspect(|n| assert!(n["message"].as_str().unwrap().contains("only user space")))
            .count();
        assert_eq!(silent, no_samples, "{kinds:?}");
    } else {
        assert!(!kinds.contains(&"user_space_only"), "{kinds:?}");
    }
}
