//! `pipebench system`'s behaviour probes for real: as root they answer this
//! kernel with their evidence; as `nobody`, the probe that needs a kernel
//! tracepoint says why it cannot tell, and the rest still answer.

use serde_json::Value;

use crate::common::{as_nobody, cpus, exe, pipebench, stderr, stdout};

fn probes(json: &str) -> Vec<Value> {
    let report: Value = serde_json::from_str(json).expect("system --json is JSON");
    report["behaviour"]
        .as_array()
        .expect("a behaviour list")
        .clone()
}

fn probe<'a>(probes: &'a [Value], id: &str) -> &'a Value {
    probes
        .iter()
        .find(|p| p["id"] == id)
        .unwrap_or_else(|| panic!("no {id} probe in {probes:?}"))
}

#[test]
fn the_system_report_says_what_this_kernel_does_with_its_evidence() {
    let _cpus = cpus();
    let out = pipebench(&["system", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let all = probes(&stdout(&out));
    assert_eq!(all.len(), 7, "{all:?}");
    for p in &all {
        let line = p["line"].as_str().unwrap_or_default();
        assert!(line.starts_with("On this machine: "), "{p}");
        if p["answer"] == "unknown" {
            assert!(
                p["why_unknown"].as_str().is_some_and(|w| !w.is_empty()),
                "{p}"
            );
        } else {
            assert!(p["evidence"].as_str().is_some_and(|e| !e.is_empty()), "{p}");
        }
    }
    // These need no privilege and no tracefs: every kernel answers them.
    for id in [
        "vmsplice",
        "pipe-timestamps",
        "full-pipe-wakeups",
        "splice-null",
    ] {
        assert_ne!(probe(&all, id)["answer"], "unknown", "{id}");
    }
    let text = pipebench(&["system"]);
    let text = stdout(&text);
    assert!(text.contains("what this kernel does (measured):"), "{text}");
    assert!(
        text.contains(probe(&all, "vmsplice")["line"].as_str().unwrap()),
        "{text}"
    );
}

#[test]
fn without_privilege_the_allocation_probe_says_why_it_cannot_tell() {
    let _cpus = cpus();
    let exe = exe();
    let out = as_nobody(exe.to_str().unwrap(), &["system", "--json"], "");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let all = probes(&String::from_utf8_lossy(&out.stdout));
    let spare = probe(&all, "spare-pages");
    assert_eq!(spare["answer"], "unknown", "{spare}");
    let why = spare["why_unknown"].as_str().unwrap_or_default();
    assert!(why.contains("root") || why.contains("tracefs"), "{why}");
    assert!(
        spare["line"].as_str().unwrap().contains("cannot tell"),
        "{spare}"
    );
    // perf as nobody never reports more than root would.
    assert_ne!(probe(&all, "perf")["answer"], "unknown");
    assert_ne!(probe(&all, "vmsplice")["answer"], "unknown");
}
