//! Safe on a shared machine, for the server: kill -9 of a server (maybe root's)
//! mid-run leaves nothing once it starts again, and names another local user
//! (`nobody`) plants where runs used to put their files are never followed.

use std::collections::BTreeSet;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::{
    children, is_gone, perf_can_sample, recv, recv_until, run_message, send, Server, RUN_LOCK,
};
use serde_json::{json, Value};

/// The server's temporary and runtime folders, both the test's own, and what
/// was there before the test ran anything.
struct Bases {
    tmp: tempfile::TempDir,
    xdg: tempfile::TempDir,
    before: BTreeSet<String>,
}

/// What a server killed mid-run may leave for its next start to remove.
enum Left {
    /// Nothing: what the run made had no name, or its names were gone already.
    Nothing,
    /// Something named that only the next start removes.
    Named,
    /// Exactly one entry more, the run's private folder.
    RunFolder,
    /// Not looked at: how much exists yet depends on how far the run got.
    Unchecked,
}

impl Bases {
    fn new() -> Bases {
        let mut bases = Bases {
            tmp: tempfile::tempdir().unwrap(),
            xdg: tempfile::tempdir().unwrap(),
            before: BTreeSet::new(),
        };
        bases.before = bases.leftovers();
        bases
    }

    /// A server whose temporary folder and runtime folder are these.
    fn server(&self) -> Server {
        Server::start_with_env(&[
            ("TMPDIR", self.tmp.path().to_str().unwrap()),
            ("XDG_RUNTIME_DIR", self.xdg.path().to_str().unwrap()),
        ])
    }

    /// System V objects, pipebook's /dev/shm names, everything in the two
    /// folders, and (where the temporary folder is tmpfs, so the file
    /// mechanisms' default is `target/` under the server's current folder)
    /// run folders there.
    fn leftovers(&self) -> BTreeSet<String> {
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
        // POSIX message queues (the latency lab's), where their file system is mounted.
        for entry in std::fs::read_dir("/dev/mqueue")
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("pipebook") || name.starts_with("pipebench") {
                found.insert(format!("/dev/mqueue/{name}"));
            }
        }
        for dir in [self.tmp.path(), self.xdg.path()] {
            for entry in std::fs::read_dir(dir).unwrap().flatten() {
                found.insert(entry.path().display().to_string());
            }
        }
        let tmpfs =
            pipebench::ipc::harness::filesystem(self.tmp.path()).as_deref() == Some("tmpfs");
        if tmpfs {
            let target = std::env::current_dir().unwrap().join("target");
            for entry in std::fs::read_dir(target).into_iter().flatten().flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.starts_with(pipebench::process::rundir::PREFIX) {
                    found.insert(entry.path().display().to_string());
                }
            }
        }
        found
    }

    /// Kill -9 of `server` mid-run (`what`): it dies, each of `pids` dies with
    /// it, what is left at once is as `left` says, and the next start, which
    /// replaces `server`, removes everything before it serves.
    fn kill_and_restart(&self, server: &mut Server, pids: &[u32], what: &str, left: Left) {
        let status = server
            .signal(libc::SIGKILL, Duration::from_secs(5))
            .expect("the server dies");
        assert!(!status.success(), "{what}: {status:?}");
        for pid in pids {
            assert!(
                gone_within(*pid, Duration::from_secs(5)),
                "{what}: {pid} ({}) outlived the server",
                cmdline(*pid)
            );
        }
        let now = self.leftovers();
        match left {
            Left::Nothing => assert_eq!(now, self.before, "{what} left something behind"),
            Left::Named => assert_ne!(
                now, self.before,
                "{what}: its named object should wait for the sweep"
            ),
            Left::RunFolder => {
                let extra: Vec<&String> = now.difference(&self.before).collect();
                assert_eq!(extra.len(), 1, "{what}: {extra:?}");
                assert!(
                    extra[0].contains(pipebench::process::rundir::PREFIX),
                    "{what}: {extra:?}"
                );
            }
            Left::Unchecked => {}
        }
        *server = self.server();
        assert_eq!(
            self.leftovers(),
            self.before,
            "{what}: the next start left something"
        );
    }
}

fn cmdline(pid: u32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    String::from_utf8_lossy(&raw).replace('\0', " ")
}

/// Watches the server `pid` until an IPC end with each of `roles` has started
/// (past exec, before its first call of its own) and stops each (SIGSTOP) at
/// once: every resource of the run exists and no end holds it yet. Polls
/// without sleeping so nothing slips by.
fn stop_ends(pid: u32, roles: &[&str]) -> Vec<u32> {
    stop_ends_of(pid, "ipc-end", roles)
}

/// [`stop_ends`] for the ends started as `subcommand` (`ipc-end`, `latency-end`).
fn stop_ends_of(pid: u32, subcommand: &str, roles: &[&str]) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen: Vec<u32> = Vec::new();
    let mut caught = Vec::new();
    while caught.len() < roles.len() {
        assert!(Instant::now() < deadline, "no ends {roles:?} under {pid}");
        for child in children(pid) {
            if seen.contains(&child) {
                continue;
            }
            // The command line reads empty for a moment during exec.
            let line = loop {
                let line = cmdline(child);
                if line.contains(subcommand) || is_gone(child.into()) {
                    break line;
                }
                std::hint::spin_loop();
            };
            seen.push(child);
            if roles
                .iter()
                .any(|role| line.contains(&format!("\"role\":\"{role}\"")))
            {
                // SAFETY: a signal to the server's child, which we started.
                unsafe { libc::kill(child as i32, libc::SIGSTOP) };
                caught.push(child);
            }
        }
        std::thread::yield_now();
    }
    caught
}

fn gone_within(pid: u32, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while !is_gone(pid.into()) {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    true
}

/// See the bench's test of the same name: these name something until both
/// ends hold it, so a run killed before that leaves it for the next start.
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

/// Whether mechanism `id` can run on this machine; when it cannot, the lab
/// must say so typed ("not supported here": a kernel feature, a file system
/// that cannot share blocks), and there is no run to kill.
fn runs_here(id: &str) -> bool {
    let mechanism = pipebench::ipc::Mechanism::parse(id).unwrap();
    match pipebench::ipc::harness::check_here(mechanism, &Default::default()) {
        Ok(()) => true,
        Err(e) => {
            assert_eq!(
                e.kind(),
                pipebench::ipc::IpcErrorKind::Unsupported,
                "{id}: {e}"
            );
            false
        }
    }
}

/// Kill -9 of the server in the middle of an IPC run, for every mechanism, with
/// every resource made and its ends just started (and frozen): the ends die
/// with it, and what is left is, per mechanism:
/// - nothing at all, at once: `pipe-rw`, `pipe-splice`, `tcp-rw`,
///   `tcp-sendfile`, `tcp-splice`, `unix-stream`, `memfd-scm`, `lines-mmap`,
///   `lines-read`, `direct-io`, `buffered-io`, `cow-fork`, and the zero-copy
///   mechanisms this machine can run;
/// - the run's private folder and its named object, until the next start of
///   the server removes them: `fifo-rw`, `fifo-splice`, `file-flock`,
///   `file-mmap`, `posix-shm`, `sysv-shm`, `sysv-msgqueue`.
#[tokio::test]
async fn a_killed_server_leaves_nothing_at_once_or_after_its_next_start() {
    let _lock = RUN_LOCK.lock().await;
    let bases = Bases::new();
    let mut server = bases.server();
    for id in pipebench::ipc::ids().into_iter().filter(|id| runs_here(id)) {
        let mechanism = pipebench::ipc::find(id).unwrap();
        let chunk = if matches!(id, "direct-io" | "buffered-io") {
            512
        } else if id == "tcp-zerocopy-receive" {
            // Mapped a page at a time.
            4096
        } else {
            8
        };
        let mut socket = server.socket().await;
        send(
            &mut socket,
            json!({"type":"ipc","mechanism":id,"params":{"bytes":"32MiB","chunk":chunk}}),
        )
        .await;
        assert_eq!(recv(&mut socket).await["type"], "started", "{id}");
        let roles: &[&str] = if mechanism.pair {
            &["consumer", "producer"]
        } else {
            &["solo"]
        };
        let ends = stop_ends(server.pid(), roles);
        let left = if named(id) {
            Left::Named
        } else {
            Left::Nothing
        };
        bases.kill_and_restart(&mut server, &ends, id, left);
    }
}

/// What a profiled run's `profile` message says where perf cannot sample
/// here: perf is missing, or installed and refused (its own words).
fn says_why_there_is_no_profile(profile: &Value) {
    let kind = if pipebench::profile::perf_installed() {
        "failed"
    } else {
        "not_installed"
    };
    assert_eq!(profile["error"]["kind"], kind, "{profile}");
    assert!(
        !profile["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .is_empty(),
        "{profile}"
    );
}

/// Kill -9 of the server while perf records a profiled run: perf and both ends
/// die with it, and the perf data (in the run's private folder) goes at the
/// next start. Where perf cannot sample there is no perf to kill: the run goes
/// ahead, says why it has no profile, and leaves nothing.
#[tokio::test]
async fn a_server_killed_mid_profile_leaves_no_perf_and_no_data() {
    let _lock = RUN_LOCK.lock().await;
    let bases = Bases::new();
    let mut server = bases.server();
    let mut socket = server.socket().await;
    send(
        &mut socket,
        run_message("write-read", json!({"bytes":"64MiB","profile":true})),
    )
    .await;
    if !perf_can_sample() {
        let (profile, _) = recv_until(&mut socket, "profile", Duration::from_secs(60)).await;
        says_why_there_is_no_profile(&profile);
        recv_until(&mut socket, "result", Duration::from_secs(30)).await;
        bases.kill_and_restart(&mut server, &[], "a run without perf", Left::Unchecked);
        return;
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    let perfs = loop {
        let perfs: Vec<u32> = children(server.pid())
            .into_iter()
            .filter(|&c| cmdline(c).contains(" record "))
            .collect();
        if perfs.len() == 2 {
            break perfs;
        }
        assert!(Instant::now() < deadline, "perf never started");
        std::thread::sleep(Duration::from_millis(1));
    };
    let ends: Vec<u32> = children(server.pid())
        .into_iter()
        .filter(|c| !perfs.contains(c))
        .collect();
    assert_eq!(ends.len(), 2, "{ends:?}");
    let started: Vec<u32> = perfs.iter().chain(&ends).copied().collect();
    bases.kill_and_restart(&mut server, &started, "a profiled run", Left::Unchecked);
}

const PRECIOUS: &[u8] = b"root's precious file\n";

/// As `nobody`, carries out `orders` (`L TARGET PATH` a symlink, `D PATH` a
/// folder open to all) with one perl process (perl-base is essential on Debian).
fn plant_as_nobody(orders: &[String]) {
    use std::io::Write;
    use std::os::unix::process::CommandExt;
    let script = r#"while (<STDIN>) { chomp; my ($op, $a, $b) = split / /, $_, 3;
        if ($op eq "L") { symlink($a, $b) or die "symlink $b: $!" }
        elsif ($op eq "D") { mkdir($a) or die "mkdir $a: $!"; chmod(0777, $a) or die "chmod $a: $!" }
        else { die "unknown order $op" } }"#;
    let mut child = std::process::Command::new("perl")
        .args(["-e", script])
        .uid(65534)
        .gid(65534)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all((orders.join("\n") + "\n").as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
}

/// Every name under `dir` (recursively), with its owner and where a symlink
/// points.
fn snapshot(dir: &Path) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        if meta.is_dir() {
            found.extend(snapshot(&path));
        }
        let target = std::fs::read_link(&path).map(|t| t.display().to_string());
        found.insert(format!(
            "{} uid {} -> {}",
            path.display(),
            meta.uid(),
            target.unwrap_or_default()
        ));
    }
    found
}

/// `nobody` knows the server's pid, so it plants, in the server's (shared,
/// sticky) temporary folder, symlinks to a root-owned file at every name runs
/// used to derive from it (the IPC lab's files, the profile folders of the
/// first jobs, pre-created so even fs.protected_symlinks would not help), and
/// floods it with symlinks named like today's run folders. A profiled run and
/// every mechanism that uses files succeed, the file is untouched, and
/// nobody's plantings are as they were.
#[tokio::test]
async fn planted_names_are_never_followed_by_the_server() {
    let _lock = RUN_LOCK.lock().await;
    let root = tempfile::tempdir().unwrap();
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let base = root.path().join("tmp");
    std::fs::create_dir(&base).unwrap();
    std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let victim = root.path().join("victim");
    std::fs::write(&victim, PRECIOUS).unwrap();
    let base_str = base.to_str().unwrap();
    let server = Server::start_with_env(&[("TMPDIR", base_str), ("XDG_RUNTIME_DIR", base_str)]);
    let pid = server.pid();
    let link = |path: PathBuf| format!("L {} {}", victim.display(), path.display());
    let mut orders = Vec::new();
    for job in 1..40 {
        let dir = base.join(format!("pipebook-profile-{pid}-{job}"));
        orders.push(format!("D {}", dir.display()));
        for file in ["writer.perf.data", "reader.perf.data"] {
            orders.push(link(dir.join(file)));
        }
    }
    let file_mechanisms: Vec<&str> = pipebench::ipc::mechanisms()
        .into_iter()
        .filter(|m| m.uses_files && runs_here(m.id))
        .map(|m| m.id)
        .collect();
    for n in 0..64 {
        for id in &file_mechanisms {
            for suffix in ["src", "dst", "fifo", "shared", "text", "data"] {
                orders.push(link(
                    base.join(format!("pipebench-ipc-{pid}-{n}-{id}-{suffix}")),
                ));
            }
        }
    }
    orders.push(link(base.join(format!("pipebench-ipc-{pid}-probe"))));
    for _ in 0..1000 {
        orders.push(link(
            base.join(format!("pipebook-run-{:032x}", rand::random::<u128>())),
        ));
    }
    plant_as_nobody(&orders);
    let planted = snapshot(&base);

    let mut socket = server.socket().await;
    send(
        &mut socket,
        run_message("write-read", json!({"bytes":"64MiB","profile":true})),
    )
    .await;
    let (profile, _) = recv_until(&mut socket, "profile", Duration::from_secs(60)).await;
    if perf_can_sample() {
        assert!(profile.get("report").is_some(), "{profile}");
    } else {
        // No perf data is written: nothing a planted name could catch.
        says_why_there_is_no_profile(&profile);
    }
    recv_until(&mut socket, "result", Duration::from_secs(30)).await;
    for id in &file_mechanisms {
        send(
            &mut socket,
            json!({"type":"ipc","mechanism":id,"params":{"bytes":"2MiB"}}),
        )
        .await;
        let (result, _) = recv_until(&mut socket, "result", Duration::from_secs(60)).await;
        assert_eq!(result["checksum_ok"], true, "{id}: {result}");
    }
    assert_eq!(std::fs::read(&victim).unwrap(), PRECIOUS);
    assert_eq!(snapshot(&base), planted, "nobody's plantings changed");
}

/// The latency ends (`latency-end`) the server `pid` has started.
fn latency_ends(pid: u32) -> Vec<u32> {
    children(pid)
        .into_iter()
        .filter(|&c| cmdline(c).contains("latency-end"))
        .collect()
}

/// Reads the socket until the run's first `latency_progress` with round trips
/// done: both ends hold what the run made and are timing.
async fn until_timing(socket: &mut crate::common::Socket, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        assert!(Instant::now() < deadline, "{what}: no progress");
        let message = recv(socket).await;
        match message["type"].as_str() {
            Some("latency_progress") if message["done"].as_u64() > Some(0) => return,
            Some("started" | "queued" | "latency_progress") => {}
            _ => panic!("{what}: {message}"),
        }
    }
}

/// The latency mechanisms a cancel or a kill is tried on: every kind of thing
/// a run makes (pipes, a FIFO pair in a run folder, POSIX queues, a System V
/// queue noted in a run folder, a loopback connection, the shared region),
/// each blocking so that 100 000 round trips outlast the test's cancel.
const LATENCY_KINDS: [&str; 6] = ["pipe", "fifo", "posix-mq", "sysv-mq", "tcp", "futex"];

/// A latency run cancelled mid-run over the real WebSocket: `cancelled`, both
/// ends gone, and nothing left: no queue, no FIFO folder, no run folder.
#[tokio::test]
async fn a_cancelled_latency_run_leaves_nothing() {
    let _lock = RUN_LOCK.lock().await;
    let bases = Bases::new();
    let server = bases.server();
    let mut socket = server.socket().await;
    for id in LATENCY_KINDS {
        send(
            &mut socket,
            json!({"type":"latency","mechanism":id,"round_trips":100_000}),
        )
        .await;
        until_timing(&mut socket, id).await;
        let ends = latency_ends(server.pid());
        assert_eq!(ends.len(), 2, "{id}: {ends:?}");
        send(&mut socket, json!({"type":"cancel"})).await;
        let (cancelled, _) = recv_until(&mut socket, "cancelled", Duration::from_secs(30)).await;
        assert_eq!(cancelled["type"], "cancelled", "{id}");
        for end in &ends {
            assert!(
                gone_within(*end, Duration::from_secs(5)),
                "{id}: end {end} lives on"
            );
        }
        assert_eq!(
            bases.leftovers(),
            bases.before,
            "{id}: a cancelled run left something"
        );
    }
}

/// Kill -9 of the server mid latency run, for [`LATENCY_KINDS`] and the two
/// io_uring kinds (where this kernel lets them run): both ends die with it,
/// and with them what they held without a name (the io_uring rings, the
/// message ring's pair, the memfd region, the loopback connection); a System
/// V queue (noted in its run folder) waits for the next start, which removes
/// it; everything else is gone at once.
#[tokio::test]
async fn a_server_killed_mid_latency_run_leaves_nothing_after_its_next_start() {
    let _lock = RUN_LOCK.lock().await;
    let bases = Bases::new();
    let mut server = bases.server();
    for id in LATENCY_KINDS
        .into_iter()
        .chain(["io-uring", "io-uring-msg-ring"])
    {
        let mut socket = server.socket().await;
        send(
            &mut socket,
            json!({"type":"latency","mechanism":id,"round_trips":100_000}),
        )
        .await;
        if id.starts_with("io-uring") {
            let first = recv(&mut socket).await;
            if first["type"] == "error" {
                // io_uring switched off or missing: said, typed, nothing made.
                assert_eq!(first["reason"]["kind"], "unsupported", "{id}: {first}");
                continue;
            }
            assert_eq!(first["type"], "started", "{id}: {first}");
        }
        until_timing(&mut socket, id).await;
        let ends = latency_ends(server.pid());
        assert_eq!(ends.len(), 2, "{id}: {ends:?}");
        if id.starts_with("io-uring") {
            // Each end holds its rings (the message ring's both): they go
            // with the processes, as nothing else holds them.
            for end in &ends {
                let rings = std::fs::read_dir(format!("/proc/{end}/fd"))
                    .unwrap()
                    .flatten()
                    .filter_map(|fd| std::fs::read_link(fd.path()).ok())
                    .filter(|target| target.to_string_lossy().contains("[io_uring]"))
                    .count();
                assert!(rings >= 1, "{id}: end {end} holds no ring");
            }
        }
        // The System V queue is noted in its run folder until the sweep.
        let left = if id == "sysv-mq" {
            Left::Named
        } else {
            Left::Nothing
        };
        bases.kill_and_restart(&mut server, &ends, id, left);
    }
}

/// Kill -9 of the server at the worst moment of a latency run, for every
/// mechanism of the lab this machine can run: both ends just started and
/// frozen (SIGSTOP) before they open or attach anything, so every name the run
/// makes still exists. The ends die with the server; what had no name (pipes,
/// eventfds, sockets, the memfd region, io_uring rings, POSIX queues unlinked
/// before the ends start) is gone at once, and the rest (the FIFO pair's run
/// folder, the System V queue noted in one) is gone after the next start.
#[tokio::test]
async fn a_server_killed_as_latency_ends_start_leaves_nothing_after_its_next_start() {
    let _lock = RUN_LOCK.lock().await;
    let bases = Bases::new();
    let mut server = bases.server();
    let mut tried = Vec::new();
    for mechanism in pipebench::latency::LatencyMechanism::ALL {
        let id = mechanism.id();
        let info = mechanism.info();
        let mode = if info.blocking.is_some() {
            "blocking"
        } else {
            "busy"
        };
        let mut socket = server.socket().await;
        send(
            &mut socket,
            json!({"type":"latency","mechanism":id,"mode":mode,"round_trips":100_000}),
        )
        .await;
        let first = recv(&mut socket).await;
        if first["type"] == "error" {
            // io_uring turned off or missing: said, typed, and nothing to kill.
            assert_eq!(first["reason"]["kind"], "unsupported", "{id}: {first}");
            continue;
        }
        assert_eq!(first["type"], "started", "{id}: {first}");
        let ends = stop_ends_of(server.pid(), "latency-end", &["ping", "pong"]);
        let left = if matches!(id, "fifo" | "sysv-mq") {
            Left::Unchecked
        } else {
            Left::Nothing
        };
        bases.kill_and_restart(&mut server, &ends, id, left);
        tried.push(id);
    }
    // Every mechanism but io_uring has nothing to ask of the kernel beyond
    // what any Linux has.
    assert!(
        tried.len() >= pipebench::latency::LatencyMechanism::ALL.len() - 1,
        "{tried:?}"
    );
}

/// Every process descended from `pid`.
fn descendants(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let mut next = vec![pid];
    while let Some(parent) = next.pop() {
        for child in children(parent) {
            found.push(child);
            next.push(child);
        }
    }
    found
}

/// Waits (spinning, so a short-lived child is still caught) until the server
/// `pid` has at least `count` children past their exec whose command line
/// passes `is`; returns them.
fn wait_for_children(pid: u32, count: usize, is: impl Fn(&str) -> bool, what: &str) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let found: Vec<u32> = children(pid)
            .into_iter()
            .filter(|&c| is(&cmdline(c)))
            .collect();
        if found.len() >= count {
            return found;
        }
        assert!(Instant::now() < deadline, "{what}: no such children");
        std::hint::spin_loop();
    }
}

/// Whether a command line is `PROGRAM ...` with PROGRAM's file name `name`.
fn runs(line: &str, name: &str) -> bool {
    line.split(' ')
        .next()
        .is_some_and(|program| Path::new(program).file_name() == Some(name.as_ref()))
}

/// Kill -9 of the server in the middle of each kind of job added past the
/// article: a tuning search, a comparison, a shared-pipe sweep, and a tool run
/// on either side (as the writer, `cat` of the run's own file, frozen while it
/// reads it). Every process the server started dies with it; nothing is left
/// at once but the tool's private run folder with its file, and the next start
/// removes that.
#[tokio::test]
async fn a_server_killed_mid_search_comparison_shared_pipe_or_tool_run_leaves_nothing() {
    let _lock = RUN_LOCK.lock().await;
    let bases = Bases::new();
    let mut server = bases.server();
    let pipe_end = |line: &str| line.contains(" end write") || line.contains(" end read");
    type Wait = Box<dyn Fn(u32) -> Vec<u32>>;
    let cases: Vec<(&str, serde_json::Value, Wait)> = vec![
        (
            "tune",
            json!({"type":"tune","step":"write-read","budget":20}),
            Box::new(move |pid| wait_for_children(pid, 2, pipe_end, "tune")),
        ),
        (
            "compare",
            json!({"type":"compare","a":"write-read","b":"busy-loop","pairs":6}),
            Box::new(move |pid| wait_for_children(pid, 2, pipe_end, "compare")),
        ),
        (
            "shared_pipe",
            json!({"type":"shared_pipe","writers":[2],"readers":[2],"msg_sizes":[64],
                   "bytes":"256MiB"}),
            Box::new(|pid| wait_for_children(pid, 4, |l| l.contains("shared-end"), "shared_pipe")),
        ),
        (
            "tool cat as the reader",
            json!({"type":"tool","tool":"cat","as":"reader","bytes":"1GiB"}),
            Box::new(|pid| wait_for_children(pid, 1, |l| runs(l, "cat"), "tool reader")),
        ),
        (
            "tool cat as the writer",
            json!({"type":"tool","tool":"cat","as":"writer","bytes":"64MiB"}),
            Box::new(|pid| {
                let cat = wait_for_children(pid, 1, |l| runs(l, "cat"), "tool writer");
                // SAFETY: a signal to the server's child, which we started.
                unsafe { libc::kill(cat[0] as i32, libc::SIGSTOP) };
                cat
            }),
        ),
    ];
    for (what, message, wait) in cases {
        let mut socket = server.socket().await;
        send(&mut socket, message).await;
        // Under way: a `started` (a tool run says none: its first `progress`).
        let first = recv(&mut socket).await;
        assert!(
            matches!(first["type"].as_str(), Some("started" | "progress")),
            "{what}: {first}"
        );
        let caught = wait(server.pid());
        let started = descendants(server.pid());
        assert!(caught.iter().all(|c| started.contains(c)), "{what}");
        // The file cat was reading stays in the run's private folder.
        let left = if what == "tool cat as the writer" {
            Left::RunFolder
        } else {
            Left::Nothing
        };
        bases.kill_and_restart(&mut server, &started, what, left);
    }
}

/// Starts the binary with the book it carries (no `--book-root`), its
/// temporary folder `tmp` and no runtime folder, so the unpacked book lands in
/// `tmp`; returns it once it serves.
fn carried_book_server(tmp: &Path, state: &Path) -> std::process::Child {
    use std::io::BufRead;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_pipebook"))
        .args(["--port", "0", "--state-dir"])
        .arg(state)
        .env("TMPDIR", tmp)
        .env_remove("XDG_RUNTIME_DIR")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(crate::common::parse_port(&line).is_some(), "{line}");
    child
}

/// The names in `dir`.
fn names_in(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// Kill -9 of a server serving the book it carries: its unpacked sources and
/// built pages (a private run folder, locked while it lives) stay until the
/// next start, which removes them and unpacks its own; a graceful stop then
/// leaves nothing.
#[tokio::test]
async fn a_killed_server_of_the_carried_book_leaves_its_unpacked_book_to_the_next_start() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut first = carried_book_server(tmp.path(), state.path());
    let unpacked = names_in(tmp.path());
    assert_eq!(unpacked.len(), 1, "{unpacked:?}");
    first.kill().unwrap();
    first.wait().unwrap();
    assert_eq!(
        names_in(tmp.path()),
        unpacked,
        "nothing removes it but a start"
    );
    let mut second = carried_book_server(tmp.path(), state.path());
    let now = names_in(tmp.path());
    assert_eq!(now.len(), 1, "{now:?}");
    assert!(
        now.is_disjoint(&unpacked),
        "the dead server's book stayed: {now:?}"
    );
    // SAFETY: kill(2) on our own child, not yet reaped.
    unsafe { libc::kill(second.id() as i32, libc::SIGTERM) };
    assert!(second.wait().unwrap().success());
    assert!(names_in(tmp.path()).is_empty());
}
