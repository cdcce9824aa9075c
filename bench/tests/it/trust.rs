//! Safe on a shared machine: runs are killed at the worst moment, and nothing
//! of theirs outlives them or stays past the next start (what another local
//! user plants and forges is `planted`'s).

use std::collections::BTreeSet;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::common::{
    alive, catch_ends, cpus, exe, gone_within, refused_for_want_of_perf, stderr, thread_children,
    Reaper,
};
use pipebench::ipc::{self, IpcParams};

/// The folders a run of the CLI may use, all of the test's own: `TMPDIR`,
/// `XDG_RUNTIME_DIR`, and the `--dir` it is given.
struct Bases {
    tmp: tempfile::TempDir,
    xdg: tempfile::TempDir,
    dir: tempfile::TempDir,
}

impl Bases {
    fn new() -> Bases {
        Bases {
            tmp: tempfile::tempdir().unwrap(),
            xdg: tempfile::tempdir().unwrap(),
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// `pipebench ARGS` with this test's temporary and runtime folders.
    fn pipebench(&self, args: &[&str]) -> Command {
        let mut command = Command::new(exe());
        command
            .args(args)
            .env("TMPDIR", self.tmp.path())
            .env("XDG_RUNTIME_DIR", self.xdg.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        command
    }

    /// Starts `pipebench ipc ID` with small calls, so it lasts, and files in `dir`.
    /// Whether `id` can run here; if not, its refusal must be the typed
    /// "not supported here" (a kernel feature, a file system that cannot
    /// share blocks), and there is nothing to kill.
    fn runs_here(&self, id: &str) -> bool {
        let params = IpcParams {
            dir: Some(self.dir.path().to_path_buf()),
            ..Default::default()
        };
        match ipc::harness::check_here(id.parse().unwrap(), &params) {
            Ok(()) => true,
            Err(e) => {
                assert_eq!(e.kind(), ipc::IpcErrorKind::Unsupported, "{id}: {e}");
                false
            }
        }
    }

    fn ipc(&self, id: &str) -> Reaper {
        let chunk = if matches!(id, "direct-io" | "buffered-io") {
            "512"
        } else if id == "tcp-zerocopy-receive" {
            // Mapped a page at a time.
            "4096"
        } else {
            "8"
        };
        let dir = self.dir.path().to_str().unwrap();
        self.pipebench(&[
            "ipc",
            id,
            "--bytes",
            "32MiB",
            "--chunk",
            chunk,
            "--repeats",
            "1",
            "--dir",
            dir,
        ])
        .spawn()
        .map(Reaper)
        .unwrap()
    }

    /// The next start: a short run whose start sweeps these folders.
    fn next_start(&self) {
        let dir = self.dir.path().to_str().unwrap();
        let output = self
            .pipebench(&["ipc", "cow-fork", "--bytes", "1MiB", "--dir", dir])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
    }

    /// Everything a run could leave: System V objects, pipebook's /dev/shm
    /// names, and whatever is in the three folders.
    fn leftovers(&self) -> BTreeSet<String> {
        let mut found = sysv_and_shm();
        for dir in [self.tmp.path(), self.xdg.path(), self.dir.path()] {
            for entry in std::fs::read_dir(dir).unwrap().flatten() {
                found.insert(entry.path().display().to_string());
            }
        }
        found
    }
}

/// System V queues and segments (by table and id) and pipebook's names in /dev/shm.
fn sysv_and_shm() -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for table in ["msg", "shm"] {
        let text = std::fs::read_to_string(format!("/proc/sysvipc/{table}")).unwrap();
        for line in text.lines().skip(1) {
            let id = line.split_whitespace().nth(1).unwrap_or("?");
            found.insert(format!("sysv {table} {id}"));
        }
    }
    for entry in std::fs::read_dir("/dev/shm").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("pipebook") || name.starts_with("pipebench") {
            found.insert(format!("/dev/shm/{name}"));
        }
    }
    found
}

/// Mechanisms whose lesson is a name (a FIFO, a file both ends open by path,
/// shm_open) or whose object has an id until the run ends (System V): their
/// names exist until both ends hold them, so a harness killed before that
/// leaves them for the next start. Every other mechanism never names
/// anything (O_TMPFILE files, pipes, sockets, memfd).
fn named(id: &str) -> bool {
    matches!(
        id,
        "fifo-rw"
            | "fifo-splice"
            | "file-flock"
            | "file-mmap"
            | "posix-shm"
            | "sysv-shm"
            | "sysv-msgqueue"
    )
}

fn roles(id: &str) -> &'static [&'static str] {
    if ipc::find(id).unwrap().pair {
        &["consumer", "producer"]
    } else {
        &["solo"]
    }
}

fn killed_by(status: ExitStatus, signal: i32) -> bool {
    use std::os::unix::process::ExitStatusExt;
    status.signal() == Some(signal)
}

/// Kill -9 of `pipebench ipc` for every mechanism, with every resource made and
/// its ends started (and frozen before they could touch anything): the ends
/// die with it, and what is left is, per mechanism:
/// - nothing at all, at once: `pipe-rw`, `pipe-splice`, `tcp-rw`,
///   `tcp-sendfile`, `tcp-splice`, `unix-stream`, `memfd-scm`, `lines-mmap`,
///   `lines-read`, `direct-io`, `buffered-io`, `cow-fork` (nothing had a name);
/// - the run's private folder and its named object until the next start, which
///   removes them: `fifo-rw`, `fifo-splice` (the FIFO), `file-flock`,
///   `file-mmap` (the shared file), `posix-shm` (its /dev/shm name),
///   `sysv-shm` (the unattached segment), `sysv-msgqueue` (the queue).
#[test]
fn a_killed_harness_leaves_nothing_at_once_or_after_the_next_start() {
    let _cpus = cpus();
    let bases = Bases::new();
    let before = bases.leftovers();
    for id in ipc::ids() {
        if !bases.runs_here(id) {
            continue;
        }
        // On a loaded machine both ends may get past their opens before this
        // test sees them (their names are then already gone, rightly): try
        // again until the kill lands while the names exist, a few times at most.
        let mut caught_named = false;
        for _attempt in 0..5 {
            let mut harness = bases.ipc(id);
            let ends = catch_ends(harness.id(), roles(id), libc::SIGSTOP)
                .unwrap_or_else(|| panic!("{id}: the harness ended first: {:?}", harness.finish()));
            harness.kill().unwrap();
            let (status, said) = harness.finish();
            assert!(killed_by(status, libc::SIGKILL), "{id}: {status:?} {said}");
            for end in &ends {
                assert!(
                    gone_within(*end, Duration::from_secs(5)),
                    "{id}: end {end} lives on"
                );
            }
            let left = bases.leftovers();
            if !named(id) {
                assert_eq!(left, before, "{id} left something behind");
            }
            caught_named = left != before;
            bases.next_start();
            assert_eq!(
                bases.leftovers(),
                before,
                "{id}: the next start left something"
            );
            if !named(id) || caught_named {
                break;
            }
        }
        assert!(
            !named(id) || caught_named,
            "{id}: never killed while its named object existed"
        );
    }
}

/// Once both ends hold the run's named object, its name is gone while the run
/// goes on; a kill -9 of the harness then leaves nothing, at once.
#[test]
fn names_go_once_both_ends_hold_them_and_a_kill_then_leaves_nothing() {
    let _cpus = cpus();
    let bases = Bases::new();
    let before = bases.leftovers();
    for id in [
        "fifo-rw",
        "fifo-splice",
        "file-flock",
        "file-mmap",
        "posix-shm",
        "sysv-shm",
    ] {
        let mut harness = bases.ipc(id);
        let ends = catch_ends(harness.id(), roles(id), 0)
            .unwrap_or_else(|| panic!("{id}: the harness ended first: {:?}", harness.finish()));
        let deadline = Instant::now() + Duration::from_secs(20);
        // Named: the run folder (FIFO, shared file, notes) or a /dev/shm name.
        // A removed segment may stay listed while attached, marked for removal.
        let named_now = || {
            let left = bases.leftovers();
            left.iter()
                .any(|l| !before.contains(l) && !l.starts_with("sysv shm"))
                || unremoved_segments(&before) > 0
        };
        while named_now() {
            assert!(
                Instant::now() < deadline,
                "{id}: names stayed: {:?}",
                bases.leftovers()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(
            ends.iter().all(|&end| alive(end)),
            "{id}: the run ended before its names went"
        );
        harness.kill().unwrap();
        let (status, said) = harness.finish();
        assert!(killed_by(status, libc::SIGKILL), "{id}: {status:?} {said}");
        for end in &ends {
            assert!(
                gone_within(*end, Duration::from_secs(5)),
                "{id}: end {end} lives on"
            );
        }
        assert_eq!(bases.leftovers(), before, "{id} left something behind");
    }
}

/// System V segments made since `before` and not marked for removal (SHM_DEST,
/// 01000, in the mode /proc shows).
fn unremoved_segments(before: &BTreeSet<String>) -> usize {
    let text = std::fs::read_to_string("/proc/sysvipc/shm").unwrap();
    text.lines()
        .skip(1)
        .filter(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let new = !before.contains(&format!("sysv shm {}", fields[1]));
            let kept = u32::from_str_radix(fields[2], 8).is_ok_and(|mode| mode & 0o1000 == 0);
            new && kept
        })
        .count()
}

/// Kill -9 of one end of every mechanism at its start: the harness reports the
/// failure, kills the other end and removes everything, at once.
#[test]
fn a_killed_end_leaves_nothing_behind() {
    let _cpus = cpus();
    let bases = Bases::new();
    let before = bases.leftovers();
    for (n, id) in ipc::ids().into_iter().enumerate() {
        if !bases.runs_here(id) {
            continue;
        }
        // Producers and consumers in turn.
        let role = match roles(id) {
            [solo] => *solo,
            pair => pair[n % 2],
        };
        let mut harness = bases.ipc(id);
        let killed = catch_ends(harness.id(), &[role], libc::SIGKILL)
            .unwrap_or_else(|| panic!("{id}: the harness ended first: {:?}", harness.finish()));
        let (status, said) = harness.finish();
        assert_eq!(status.code(), Some(1), "{id}: {said}");
        assert!(!alive(killed[0]));
        assert_eq!(bases.leftovers(), before, "{id} left something behind");
    }
}

/// Kill -9 of `pipebench run --profile` while perf records: perf and both ends
/// die with it; the perf data, in the run's private folder, goes at the next start.
#[test]
fn a_killed_profile_leaves_no_perf_and_no_data_after_the_next_start() {
    let _cpus = cpus();
    let bases = Bases::new();
    let before = bases.leftovers();
    if !pipebench::profile::perf_installed() {
        // Nothing to kill: the run is refused before anything starts.
        let output = bases
            .pipebench(&["run", "write-read", "--bytes", "64MiB", "--profile"])
            .output()
            .unwrap();
        refused_for_want_of_perf(&output);
        assert_eq!(bases.leftovers(), before);
        return;
    }
    let mut run = Reaper(
        bases
            .pipebench(&["run", "write-read", "--bytes", "64MiB", "--profile"])
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    let perfs = loop {
        let perfs: Vec<u32> = thread_children(run.id())
            .into_iter()
            .filter(|&c| crate::common::cmdline(c).contains(" record "))
            .collect();
        if perfs.len() == 2 {
            break perfs;
        }
        assert!(Instant::now() < deadline, "perf never started");
        assert!(
            run.try_wait().unwrap().is_none(),
            "the run ended before perf started"
        );
        std::thread::sleep(Duration::from_millis(1));
    };
    let ends: Vec<u32> = thread_children(run.id())
        .into_iter()
        .filter(|c| !perfs.contains(c))
        .collect();
    assert_eq!(ends.len(), 2, "{ends:?}");
    run.kill().unwrap();
    run.wait().unwrap();
    for pid in perfs.iter().chain(&ends) {
        assert!(
            gone_within(*pid, Duration::from_secs(5)),
            "{pid} outlived the run"
        );
    }
    // The private folder (perf may have written into it) stays for the sweep.
    bases.next_start();
    assert_eq!(bases.leftovers(), before);
}

/// POSIX message queues named like pipebook's (the latency lab's), where their
/// file system is mounted.
fn posix_queues() -> BTreeSet<String> {
    std::fs::read_dir("/dev/mqueue")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("pipebook") || name.starts_with("pipebench"))
        .map(|name| format!("/dev/mqueue/{name}"))
        .collect()
}

/// Kill -9 of one end of a latency run, ping then pong, for every mechanism
/// this machine can run, once both ends time round trips: the harness says
/// which end failed (exit 1), ends the other, and leaves nothing at once: no
/// FIFO, run folder, queue (System V or POSIX), /dev/shm name or process.
#[test]
fn a_killed_latency_end_leaves_nothing_behind() {
    use pipebench::latency::LatencyMechanism;
    let _cpus = cpus();
    let bases = Bases::new();
    let leftovers = || {
        let mut found = bases.leftovers();
        found.extend(posix_queues());
        found
    };
    let before = leftovers();
    for role in ["ping", "pong"] {
        for mechanism in LatencyMechanism::ALL {
            let id = mechanism.id();
            let mode = match mechanism.info().blocking {
                Some(_) => "blocking",
                None => "busy",
            };
            let mut harness = Reaper(
                bases
                    .pipebench(&[
                        "latency",
                        id,
                        "--mode",
                        mode,
                        "--sizes",
                        "64",
                        "--round-trips",
                        "10000000",
                    ])
                    .spawn()
                    .unwrap(),
            );
            let deadline = Instant::now() + Duration::from_secs(20);
            let ends = loop {
                let ends: Vec<u32> = crate::common::children_of(harness.id())
                    .into_iter()
                    .filter(|&pid| crate::common::cmdline(pid).contains("latency-end"))
                    .collect();
                if ends.len() == 2 {
                    break Some(ends);
                }
                if harness.try_wait().unwrap().is_some() {
                    break None;
                }
                assert!(Instant::now() < deadline, "{id}: the ends never started");
                std::thread::sleep(Duration::from_millis(5));
            };
            let Some(ends) = ends else {
                // Nothing this machine can run (io_uring turned off): exit 2,
                // with the reason, and nothing to kill.
                let (status, said) = harness.finish();
                assert_eq!(status.code(), Some(2), "{id}: {said}");
                assert_eq!(id, "io-uring", "{id}: {said}");
                continue;
            };
            // Mid-run: both ends hold what the run made.
            std::thread::sleep(Duration::from_millis(200));
            let victim = *ends
                .iter()
                .find(|&&pid| crate::common::cmdline(pid).contains(&format!("\"role\":\"{role}\"")))
                .unwrap_or_else(|| panic!("{id}: no {role} end among {ends:?}"));
            // SAFETY: a signal to our own grandchild.
            unsafe { libc::kill(victim as i32, libc::SIGKILL) };
            let (status, said) = harness.finish();
            assert_eq!(status.code(), Some(1), "{id} {role}: {said}");
            assert!(
                said.contains(&format!("the {role} end failed")),
                "{id}: which end failed? {said}"
            );
            for end in &ends {
                assert!(
                    gone_within(*end, Duration::from_secs(5)),
                    "{id}: end {end} lives on"
                );
            }
            assert_eq!(
                leftovers(),
                before,
                "{id} with its {role} killed left something"
            );
        }
    }
}

/// As nobody, tries to open each of `targets` (`path P`, `sysvshm ID`,
/// `sysvmsg ID`) for reading and writing: opens the path (O_RDWR, without
/// waiting on a FIFO), attaches the segment, sends to the queue. One line per
/// target: `refused ...` with the error, or `OPENED ...`.
fn open_as_nobody(targets: &[String]) -> Vec<String> {
    let script = r#"use Fcntl;
        while (<STDIN>) { chomp; my ($kind, $what) = split / /, $_, 2; my $ok;
            if ($kind eq "path") { $ok = sysopen(my $f, $what, O_RDWR | O_NONBLOCK) }
            elsif ($kind eq "sysvshm") { my $v; $ok = shmread($what, $v, 0, 1) }
            elsif ($kind eq "sysvmsg") { $ok = msgsnd($what, pack("l! a*", 1, "x"), 2048) }
            else { die "unknown target $kind" }
            print $ok ? "OPENED $kind $what\n" : "refused $kind $what: $!\n" }"#;
    let output = crate::common::as_nobody("perl", &["-e", script], &(targets.join("\n") + "\n"));
    assert!(output.status.success(), "{}", stderr(&output));
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// The one way other than a port that a run's ends could be joined: through
/// the name of what they share while it has one. With every name of a run
/// made and its ends frozen before they open anything (the worst moment),
/// nobody tries to open each of them for reading and writing: the FIFO and the
/// shared file (in the run's private folder), the POSIX shared memory object
/// (0600, under a random name), the System V segment and queue (IPC_PRIVATE,
/// 0600). Every attempt is refused, and the run, killed, leaves nothing after
/// the next start.
#[test]
fn nobody_can_open_a_runs_named_objects_while_they_have_names() {
    let _cpus = cpus();
    let bases = Bases::new();
    let before = bases.leftovers();
    for id in [
        "fifo-rw",
        "fifo-splice",
        "file-flock",
        "file-mmap",
        "posix-shm",
        "sysv-shm",
        "sysv-msgqueue",
    ] {
        let mut harness = bases.ipc(id);
        let ends = catch_ends(harness.id(), roles(id), libc::SIGSTOP)
            .unwrap_or_else(|| panic!("{id}: the harness ended first: {:?}", harness.finish()));
        let mut targets = Vec::new();
        for new in bases.leftovers().difference(&before) {
            if let Some(rest) = new.strip_prefix("sysv ") {
                let (table, number) = rest.split_once(' ').unwrap();
                targets.push(format!("sysv{table} {number}"));
                continue;
            }
            targets.push(format!("path {new}"));
            // What is inside the run's folder, seen as root.
            for entry in std::fs::read_dir(new).into_iter().flatten().flatten() {
                targets.push(format!("path {}", entry.path().display()));
            }
        }
        let named = |kind: &str| targets.iter().any(|t| t.contains(kind));
        let expected = match id {
            "fifo-rw" | "fifo-splice" => "/fifo",
            "file-flock" | "file-mmap" => "/shared",
            "posix-shm" => "/dev/shm/pipebook",
            "sysv-shm" => "sysvshm",
            _ => "sysvmsg",
        };
        assert!(named(expected), "{id}: no {expected} among {targets:?}");
        let answers = open_as_nobody(&targets);
        assert_eq!(answers.len(), targets.len(), "{id}: {answers:?}");
        for answer in &answers {
            assert!(answer.starts_with("refused"), "{id}: {answer}");
        }
        harness.kill().unwrap();
        let (status, said) = harness.finish();
        assert!(killed_by(status, libc::SIGKILL), "{id}: {status:?} {said}");
        for end in &ends {
            assert!(
                gone_within(*end, Duration::from_secs(5)),
                "{id}: end {end} lives on"
            );
        }
        bases.next_start();
        assert_eq!(
            bases.leftovers(),
            before,
            "{id}: the next start left something"
        );
    }
}
