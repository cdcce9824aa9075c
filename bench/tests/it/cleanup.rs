//! No child process outlives its run: after success, after drop, after Ctrl-C.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{alive, children_of, cpus, exe, gone_within};
use pipebench::engine::pipe_run::RunHandle;
use pipebench::process::launch::EndProgram;
use pipebench::size::ByteSize;
use pipebench::steps::plan::{Limits, RunParams, RunPlan};

fn program() -> EndProgram {
    EndProgram {
        exe: exe(),
        prefix: Vec::new(),
    }
}

fn plan(step: &str, bytes: u64) -> RunPlan {
    let params = RunParams {
        bytes: Some(ByteSize(bytes)),
        ..Default::default()
    };
    RunPlan::for_step_id(step, &params, &Limits::default()).unwrap()
}

#[test]
fn children_are_gone_after_a_finished_run() {
    let _cpus = cpus();
    let mut handle = RunHandle::start(&plan("vmsplice-splice", 16 << 20), &program()).unwrap();
    let (writer, reader) = handle.pids();
    let result = handle.wait_with(Duration::from_millis(10), |_| {}).unwrap();
    assert_eq!(result.bytes, 16 << 20);
    drop(handle);
    assert!(!alive(writer) && !alive(reader));
}

#[test]
fn dropping_a_running_handle_kills_both_ends() {
    let _cpus = cpus();
    // 64 GiB of write/read would take a minute: it must be killed, not awaited.
    let mut handle = RunHandle::start(&plan("write-read", 64 << 30), &program()).unwrap();
    let (writer, reader) = handle.pids();
    let deadline = Instant::now() + Duration::from_secs(5);
    while handle.progress().bytes == 0 && Instant::now() < deadline {
        assert!(handle.poll().unwrap().is_none());
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(alive(writer) && alive(reader));
    drop(handle);
    assert!(gone_within(writer, Duration::from_secs(1)));
    assert!(gone_within(reader, Duration::from_secs(1)));
}

#[test]
fn a_time_budget_stops_the_run_cleanly() {
    let _cpus = cpus();
    let params = RunParams {
        bytes: Some(ByteSize(64 << 30)),
        seconds: Some(0.3),
        ..Default::default()
    };
    let plan = RunPlan::for_step_id("write-read", &params, &Limits::default()).unwrap();
    let mut handle = RunHandle::start(&plan, &program()).unwrap();
    let started = Instant::now();
    let mut samples = 0;
    let result = handle
        .wait_with(Duration::from_millis(20), |_| samples += 1)
        .unwrap();
    assert!(result.stopped_by_budget, "{result:?}");
    assert!(result.bytes > 0 && result.bytes < 64 << 30);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(samples >= 5, "progress was sampled {samples} times");
}

#[test]
fn interrupting_pipebench_run_leaves_no_children() {
    let _cpus = cpus();
    let mut parent = Command::new(exe())
        .args(["run", "write-read", "--bytes", "64GiB"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = parent.id();
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut ends = Vec::new();
    while ends.len() < 2 && Instant::now() < deadline {
        ends = children_of(pid);
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(ends.len(), 2, "both ends should be running");
    // SAFETY: sending SIGINT to our own child, as Ctrl-C would.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    let status = parent.wait().unwrap();
    assert!(!status.success());
    for end in ends {
        assert!(
            gone_within(end, Duration::from_secs(1)),
            "end {end} outlived its parent"
        );
    }
}

#[test]
fn a_failing_end_is_reported_and_its_partner_killed() {
    let _cpus = cpus();
    // Ask the writer for a pipe larger than the system allows: it fails at once,
    // and the reader (waiting for data that never comes) must not hang.
    let limit = pipebench::ends::pipe_setup::pipe_max_size()
        .unwrap()
        .bytes();
    let mut plan = plan("vmsplice-splice", 16 << 20);
    plan.writer.pipe_size = Some(ByteSize(limit * 2));
    let mut handle = RunHandle::start(&plan, &program()).unwrap();
    let (writer, reader) = handle.pids();
    let err = handle
        .wait_with(Duration::from_millis(10), |_| {})
        .unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("writer") && message.contains("pipe-max-size"),
        "{message}"
    );
    assert!(
        gone_within(writer, Duration::from_secs(1)) && gone_within(reader, Duration::from_secs(1))
    );
}
