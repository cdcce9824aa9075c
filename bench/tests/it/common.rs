//! Helpers shared by the pipebench integration tests.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Steps pin both CPUs (and some busy-loop on them), so the tests
/// that run steps take this lock and never overlap.
static CPUS: Mutex<()> = Mutex::new(());

/// Holds both CPUs for the duration of a test.
pub fn cpus() -> MutexGuard<'static, ()> {
    CPUS.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The pipebench binary cargo built for these tests.
pub fn exe() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_pipebench"))
}

/// Runs pipebench with `args` and returns its output.
pub fn pipebench(args: &[&str]) -> Output {
    Command::new(exe())
        .args(args)
        .output()
        .expect("pipebench runs")
}

/// `pipebench write WRITER | pipebench read READER`, as in a shell; returns the
/// writer's and the reader's output (the writer's stdout went into the pipe).
pub fn pipeline(writer: &[&str], reader: &[&str]) -> (Output, Output) {
    let mut write = Command::new(exe())
        .arg("write")
        .args(writer)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("pipebench write runs");
    let read = Command::new(exe())
        .arg("read")
        .args(reader)
        .stdin(write.stdout.take().expect("piped stdout"))
        .output()
        .expect("pipebench read runs");
    (write.wait_with_output().expect("writer exits"), read)
}

/// stdout as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// stderr as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Whether process `pid` still exists and is not a zombie.
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        // The state is the field after the parenthesised command name.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
    }
}

/// Waits up to `limit` for `pid` to be gone.
pub fn gone_within(pid: u32, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    !alive(pid)
}

/// Children of `parent`, from /proc.
pub fn children_of(parent: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(parent) {
            found.push(pid);
        }
    }
    found
}
