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
/// A `pipebench run --profile` where perf is missing: refused before the run,
/// exit 1, naming what is missing (the explained alternative of a profile).
pub fn refused_for_want_of_perf(output: &Output) {
    assert!(!pipebench::profile::perf_installed());
    assert_eq!(output.status.code(), Some(1), "{}", stderr(output));
    assert!(
        stderr(output).contains("perf is not installed"),
        "{}",
        stderr(output)
    );
}

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

/// The unprivileged user an attacker runs as (`nobody`).
pub const NOBODY: u32 = 65534;

/// Runs `program args` as `nobody` (uid and gid 65534, no supplementary
/// groups), with `input` on its stdin; returns its output.
pub fn as_nobody(program: &str, args: &[&str], input: &str) -> Output {
    use std::io::Write;
    let mut child = spawn_as_nobody(program, args);
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(input.as_bytes())
        .expect("the attacker reads its orders");
    child.wait_with_output().expect("the attacker exits")
}

/// Starts `program args` as `nobody` (uid and gid 65534, no supplementary
/// groups), its stdin, stdout and stderr piped, and leaves it running: an
/// attacker that works beside the test. Started from the calling thread, so
/// it shares that thread's namespaces.
pub fn spawn_as_nobody(program: &str, args: &[&str]) -> std::process::Child {
    use std::os::unix::process::CommandExt;
    Command::new(program)
        .args(args)
        .uid(NOBODY)
        .gid(NOBODY)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the attacker's program runs")
}

/// As `nobody`, carries out `orders`, one a line: `L TARGET PATH` makes a
/// symlink, `D PATH` a folder open to all (0777), `F PATH` an empty file. One
/// perl process (perl-base is essential on Debian) makes thousands in a blink.
pub fn plant_as_nobody(orders: &[String]) {
    let script = r#"while (<STDIN>) { chomp; my ($op, $a, $b) = split / /, $_, 3;
        if ($op eq "L") { symlink($a, $b) or die "symlink $b: $!" }
        elsif ($op eq "D") { mkdir($a) or die "mkdir $a: $!"; chmod(0777, $a) or die "chmod $a: $!" }
        elsif ($op eq "F") { open(my $f, ">", $a) or die "create $a: $!"; close($f) }
        else { die "unknown order $op" } }"#;
    let output = as_nobody("perl", &["-e", script], &(orders.join("\n") + "\n"));
    assert!(output.status.success(), "{}", stderr(&output));
}

/// Children of `pid` (of any of its threads), from /proc/PID/task/*/children.
pub fn thread_children(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let text = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        found.extend(
            text.split_whitespace()
                .filter_map(|c| c.parse::<u32>().ok()),
        );
    }
    found
}

/// The command line of `pid`, NULs as spaces (empty once it is gone).
pub fn cmdline(pid: u32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    String::from_utf8_lossy(&raw).replace('\0', " ")
}

/// Watches the IPC harness `pid` until an end with each role in `roles` has
/// started (its command line is `... ipc-end {"role":ROLE,...}`, so it is past
/// exec and before its first system call of its own), and sends it `signal` at
/// once: SIGSTOP freezes the run with every resource made and no end yet
/// holding them; SIGKILL kills an end at its very start. Polls without sleeping
/// so nothing slips by. Returns the ends' pids in the order caught, or `None`
/// if the harness ended first.
pub fn catch_ends(pid: u32, roles: &[&str], signal: i32) -> Option<Vec<u32>> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen: Vec<u32> = Vec::new();
    let mut caught = Vec::new();
    while caught.len() < roles.len() {
        assert!(Instant::now() < deadline, "no ends {roles:?} under {pid}");
        if !alive(pid) {
            return None;
        }
        for child in thread_children(pid) {
            if seen.contains(&child) {
                continue;
            }
            // Forked: wait (spinning) for its exec. The command line reads empty
            // for a moment during exec, and for good once the process is gone.
            let line = loop {
                let line = cmdline(child);
                if line.contains("ipc-end") || !alive(child) {
                    break line;
                }
                std::hint::spin_loop();
            };
            seen.push(child);
            let wanted = roles
                .iter()
                .any(|role| line.contains(&format!("\"role\":\"{role}\"")));
            if wanted {
                // SAFETY: a signal to our own grandchild.
                unsafe { libc::kill(child as i32, signal) };
                caught.push(child);
            }
        }
        std::thread::yield_now();
    }
    Some(caught)
}

/// A child process killed (SIGKILL) and reaped when dropped, so a failing test
/// leaves no harness behind (its ends die with it), and none that would hold
/// what the test run holds (the machine's CPU lock among them).
pub struct Reaper(pub std::process::Child);

impl Reaper {
    /// Waits for the child and returns its status and what it wrote on stderr
    /// (if piped).
    pub fn finish(&mut self) -> (std::process::ExitStatus, String) {
        use std::io::Read;
        let mut text = String::new();
        if let Some(mut pipe) = self.0.stderr.take() {
            let _ = pipe.read_to_string(&mut text);
        }
        (self.0.wait().expect("the child is reaped"), text)
    }
}

impl std::ops::Deref for Reaper {
    type Target = std::process::Child;
    fn deref(&self) -> &std::process::Child {
        &self.0
    }
}

impl std::ops::DerefMut for Reaper {
    fn deref_mut(&mut self) -> &mut std::process::Child {
        &mut self.0
    }
}

impl Drop for Reaper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Asserts that `output` ended with exit `code` and that its stderr says
/// `needle`: how every refusal of bad input is checked. A failure names `case`
/// (the input, where one test tries several) and shows the whole stderr.
pub fn assert_exits_saying(output: &Output, code: i32, needle: &str, case: &str) {
    let said = stderr(output);
    assert_eq!(output.status.code(), Some(code), "{case}: {said}");
    assert!(said.contains(needle), "{case}: {needle:?} not said: {said}");
}
