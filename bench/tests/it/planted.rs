//! Safe on a shared machine, against another local user: `nobody` plants
//! names where runs used to put things, forges what a dead run would leave and
//! plants programs on `PATH`. Root's runs follow no planted name, start no
//! planted program and remove nothing that is not theirs.

use std::collections::BTreeSet;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{
    assert_exits_saying, cpus, exe, plant_as_nobody, refused_for_want_of_perf, stderr, Reaper,
    NOBODY,
};
use pipebench::ipc::{self, IpcParams};
use pipebench::process::launch::EndProgram;
use pipebench::size::{ByteSize, MIB};

/// A `/tmp` of the test's own: owned by root, world-writable and sticky, in a
/// folder anyone may enter; and a root-owned file beside it for the attacker
/// to aim at.
struct SharedTmp {
    root: tempfile::TempDir,
    base: PathBuf,
    victim: PathBuf,
}

const PRECIOUS: &[u8] = b"root's precious file\n";

impl SharedTmp {
    fn new() -> SharedTmp {
        let root = tempfile::tempdir().unwrap();
        std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let base = root.path().join("tmp");
        std::fs::create_dir(&base).unwrap();
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o1777)).unwrap();
        let victim = root.path().join("victim");
        std::fs::write(&victim, PRECIOUS).unwrap();
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
        SharedTmp { root, base, victim }
    }

    fn victim_is_intact(&self) {
        let meta = std::fs::symlink_metadata(&self.victim).unwrap();
        assert!(meta.is_file());
        assert_eq!(meta.uid(), 0);
        assert_eq!(meta.permissions().mode() & 0o7777, 0o644);
        assert_eq!(std::fs::read(&self.victim).unwrap(), PRECIOUS);
    }
}

/// What a test plants outside folders of its own (/dev/shm names, System V
/// queues): removed when the test ends, passed or not.
#[derive(Default)]
struct Planted {
    paths: Vec<PathBuf>,
    queues: Vec<i32>,
}

impl Drop for Planted {
    fn drop(&mut self) {
        for path in &self.paths {
            let _ = std::fs::remove_file(path);
        }
        for &id in &self.queues {
            // SAFETY: IPC_RMID of a queue this test made or had made.
            unsafe { libc::msgctl(id, libc::IPC_RMID, std::ptr::null_mut()) };
        }
    }
}

fn random_hex() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// Every name the lab used to derive from a pid and a counter, per mechanism.
const OLD_NAMES: &[(&str, &[&str])] = &[
    ("fifo-rw", &["src", "dst", "fifo"]),
    ("fifo-splice", &["src", "dst", "fifo"]),
    ("pipe-rw", &["src", "dst"]),
    ("pipe-splice", &["src", "dst"]),
    ("tcp-rw", &["src", "dst"]),
    ("tcp-sendfile", &["src", "dst"]),
    ("tcp-splice", &["src", "dst"]),
    ("unix-stream", &["src", "dst"]),
    ("file-flock", &["shared"]),
    ("file-mmap", &["shared"]),
    ("lines-mmap", &["text"]),
    ("lines-read", &["text"]),
    ("direct-io", &["data"]),
    ("buffered-io", &["data"]),
];

/// `nobody` plants symlinks to a root-owned file at every name the lab and
/// `run --profile` used to derive from a pid (this process's, and the next few
/// hundred pids for the CLI), pre-creates the old profile folder with symlinks
/// in it (where even fs.protected_symlinks would not help), and floods the
/// temporary folder and /dev/shm with symlinks named like today's run folders
/// and shared memory. Root's runs of every mechanism and a profiled run all
/// succeed, the file is untouched, nobody's plantings are left as they were,
/// and nobody cannot look into a run's private folder.
#[test]
fn planted_names_are_never_followed_and_a_run_folder_is_closed_to_others() {
    let _cpus = cpus();
    let shared = SharedTmp::new();
    let (base, victim) = (&shared.base, shared.victim.display().to_string());
    let pid = std::process::id();
    let mut orders = Vec::new();
    let link = |path: &Path| format!("L {victim} {}", path.display());
    for n in 0..256 {
        for (id, suffixes) in OLD_NAMES {
            for suffix in *suffixes {
                orders.push(link(
                    &base.join(format!("pipebench-ipc-{pid}-{n}-{id}-{suffix}")),
                ));
            }
        }
    }
    orders.push(link(&base.join(format!("pipebench-ipc-{pid}-probe"))));
    let next_pid: u32 = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let mut old_profile_dirs = Vec::new();
    for pid in next_pid + 1..next_pid + 400 {
        let dir = base.join(format!("pipebench-profile-{pid}"));
        orders.push(format!("D {}", dir.display()));
        for file in ["writer.svg", "reader.svg", "writer.perf.data"] {
            orders.push(link(&dir.join(file)));
        }
        old_profile_dirs.push(dir);
    }
    for _ in 0..2000 {
        orders.push(link(&base.join(format!("pipebook-run-{}", random_hex()))));
    }
    // Folders named like ours, of nobody's, with our inner names in them.
    for _ in 0..20 {
        let dir = base.join(format!("pipebook-run-{}", random_hex()));
        orders.push(format!("D {}", dir.display()));
        for file in ["fifo", "shared", "writer.perf.data"] {
            orders.push(link(&dir.join(file)));
        }
    }
    let shm = Planted {
        paths: (0..50)
            .map(|_| PathBuf::from(format!("/dev/shm/pipebook-{}", random_hex())))
            .collect(),
        queues: Vec::new(),
    };
    orders.extend(shm.paths.iter().map(|p| link(p)));
    plant_as_nobody(&orders);
    let planted = snapshot(base);

    // A profiled run, the CLI's temporary folder being this one.
    let profiled = Command::new(exe())
        .args([
            "run",
            "write-read",
            "--bytes",
            "64MiB",
            "--profile",
            "--json",
        ])
        .env("TMPDIR", base)
        .env_remove("XDG_RUNTIME_DIR")
        .output()
        .unwrap();
    if pipebench::profile::perf_installed() {
        assert!(profiled.status.success(), "{}", stderr(&profiled));
    } else {
        refused_for_want_of_perf(&profiled);
    }

    // Every mechanism, its files in the shared folder.
    for id in ipc::ids() {
        let params = IpcParams {
            bytes: ByteSize(2 * MIB),
            dir: Some(base.clone()),
            program: Some(EndProgram {
                exe: exe(),
                prefix: Vec::new(),
            }),
            ..Default::default()
        };
        let result = match ipc::run(id.parse().unwrap(), &params) {
            Ok(result) => result,
            Err(e) if e.kind() == ipc::IpcErrorKind::Unsupported => continue,
            Err(e) => panic!("{id}: {e}"),
        };
        assert!(result.checksum_ok, "{id}: {result:?}");
    }

    // A run whose private folder lives as long as it does (its queue is noted
    // there): nobody may not list it or read what is in it.
    let mut queue = Reaper(
        Command::new(exe())
            .args([
                "ipc",
                "sysv-msgqueue",
                "--bytes",
                "32MiB",
                "--chunk",
                "8",
                "--dir",
            ])
            .arg(base)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    // Root's folder, once the queue is noted in it.
    let (private, note) = loop {
        let found = std::fs::read_dir(base).unwrap().flatten().find_map(|e| {
            let meta = std::fs::symlink_metadata(e.path()).ok()?;
            if !meta.is_dir() || meta.uid() != 0 {
                return None;
            }
            let note = std::fs::read_dir(e.path()).ok()?.flatten().next()?;
            Some((e.path(), note.path()))
        });
        if let Some(found) = found {
            break found;
        }
        assert!(Instant::now() < deadline, "no private folder appeared");
        std::thread::sleep(Duration::from_millis(5));
    };
    let meta = std::fs::metadata(&private).unwrap();
    assert_eq!(meta.permissions().mode() & 0o7777, 0o700);
    let listed = crate::common::as_nobody("ls", &["-a", private.to_str().unwrap()], "");
    assert!(
        !listed.status.success(),
        "nobody listed {}",
        private.display()
    );
    let read = crate::common::as_nobody("cat", &[note.to_str().unwrap()], "");
    assert!(!read.status.success(), "nobody read {}", note.display());
    queue.kill().unwrap();
    queue.wait().unwrap();
    // The next start (a short run) sweeps what the killed one left there.
    let next = Command::new(exe())
        .args(["ipc", "cow-fork", "--bytes", "1MiB", "--dir"])
        .arg(base)
        .output()
        .unwrap();
    assert!(next.status.success(), "{}", stderr(&next));

    shared.victim_is_intact();
    assert_eq!(snapshot(base), planted, "nobody's plantings changed");
    for dir in &old_profile_dirs {
        let meta = std::fs::symlink_metadata(dir).unwrap();
        assert_eq!(meta.uid(), NOBODY);
    }
    for path in &shm.paths {
        let meta = std::fs::symlink_metadata(path).unwrap();
        assert!(meta.file_type().is_symlink() && meta.uid() == NOBODY);
    }
}

/// The names in `dir` and in each of its sub-folders, with their owners and
/// where symlinks point.
fn snapshot(dir: &Path) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for entry in walk(dir) {
        let meta = std::fs::symlink_metadata(&entry).unwrap();
        let target = std::fs::read_link(&entry).map(|t| t.display().to_string());
        found.insert(format!(
            "{} uid {} -> {}",
            entry.display(),
            meta.uid(),
            target.unwrap_or_default()
        ));
    }
    found
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            found.extend(walk(&path));
        }
        found.push(path);
    }
    found
}

/// Creates a System V message queue (IPC_PRIVATE) as this user and returns its
/// id and creation time.
fn make_queue() -> (i32, i64) {
    // SAFETY: msgget and msgctl with a zeroed struct we own.
    unsafe {
        let id = libc::msgget(libc::IPC_PRIVATE, libc::IPC_CREAT | 0o600);
        assert!(id >= 0, "{}", std::io::Error::last_os_error());
        let mut ds: libc::msqid_ds = std::mem::zeroed();
        assert_eq!(libc::msgctl(id, libc::IPC_STAT, &mut ds), 0);
        (id, ds.msg_ctime)
    }
}

fn queue_exists(id: i32) -> bool {
    // SAFETY: as above.
    unsafe {
        let mut ds: libc::msqid_ds = std::mem::zeroed();
        libc::msgctl(id, libc::IPC_STAT, &mut ds) == 0
    }
}

/// `nobody` forges what a dead run would leave: a folder named like ours with
/// notes of a root queue that no run made and of a queue of nobody's own, a
/// /dev/shm name of nobody's, and the old pid-named registry file. Root's own
/// dead folder gets notes that point at the same objects but do not match
/// them (nobody's owner, another creation time). The next start removes root's
/// dead folder and nothing else: both queues, nobody's name, folder and files
/// stay.
#[test]
fn forged_leftovers_are_left_alone() {
    let _cpus = cpus();
    let shared = SharedTmp::new();
    let base = &shared.base;
    let mut planted_objects = Planted::default();
    let (root_queue, root_ctime) = make_queue();
    planted_objects.queues.push(root_queue);
    let made = crate::common::as_nobody("ipcmk", &["-Q"], "");
    assert!(made.status.success(), "{}", stderr(&made));
    let nobody_queue: i32 = crate::common::stdout(&made)
        .split_whitespace()
        .last()
        .and_then(|id| id.parse().ok())
        .expect("ipcmk prints the id");
    planted_objects.queues.push(nobody_queue);
    // SAFETY: IPC_STAT into a zeroed struct we own.
    let nobody_ctime = unsafe {
        let mut ds: libc::msqid_ds = std::mem::zeroed();
        assert_eq!(libc::msgctl(nobody_queue, libc::IPC_STAT, &mut ds), 0);
        assert_eq!(ds.msg_perm.uid, NOBODY);
        ds.msg_ctime
    };
    let hex = random_hex();
    let forged = base.join(format!("pipebook-run-{}", random_hex()));
    let shm = PathBuf::from(format!("/dev/shm/pipebook-{hex}"));
    planted_objects.paths.push(shm.clone());
    // A pid that cannot exist (pid_max is at most 2^22).
    let registry = base.join(format!("pipebench-ipc-{}.sysv", 1u32 << 23));
    plant_as_nobody(&[
        format!("D {}", forged.display()),
        format!(
            "F {}",
            forged
                .join(format!("msg.{root_queue}.{root_ctime}"))
                .display()
        ),
        format!(
            "F {}",
            forged
                .join(format!("msg.{nobody_queue}.{nobody_ctime}"))
                .display()
        ),
        format!("F {}", forged.join(format!("posix.{hex}")).display()),
        format!("F {}", shm.display()),
    ]);
    let registry_text = format!("msg {root_queue} 0\nmsg {nobody_queue} 0\n");
    let wrote = crate::common::as_nobody(
        "sh",
        &["-c", &format!("cat > {}", registry.display())],
        &registry_text,
    );
    assert!(wrote.status.success(), "{}", stderr(&wrote));
    // Root's own dead run folder, its notes not matching the objects.
    let dead = base.join(format!("pipebook-run-{}", random_hex()));
    std::fs::create_dir(&dead).unwrap();
    for note in [
        format!("msg.{nobody_queue}.{nobody_ctime}"),
        format!("msg.{root_queue}.{}", root_ctime - 1),
        format!("posix.{hex}"),
    ] {
        std::fs::write(dead.join(note), b"").unwrap();
    }
    let planted = snapshot(base);

    let next = Command::new(exe())
        .args(["ipc", "cow-fork", "--bytes", "1MiB", "--dir"])
        .arg(base)
        .env("TMPDIR", base)
        .env_remove("XDG_RUNTIME_DIR")
        .output()
        .unwrap();
    assert!(next.status.success(), "{}", stderr(&next));

    let dead_prefix = dead.display().to_string();
    let expected: BTreeSet<String> = planted
        .into_iter()
        .filter(|entry| !entry.starts_with(&dead_prefix))
        .collect();
    assert_eq!(snapshot(base), expected, "only root's dead folder goes");
    assert!(queue_exists(root_queue), "root's queue was removed");
    assert!(queue_exists(nobody_queue), "nobody's queue was removed");
    assert!(shm.exists(), "nobody's shared memory was removed");
    assert_eq!(std::fs::read_to_string(&registry).unwrap(), registry_text);
}

/// A `--dir` another user could rearrange is refused, as bad input (exit 2),
/// before anything is made in it.
#[test]
fn a_dir_open_to_others_is_refused() {
    let _cpus = cpus();
    let shared = SharedTmp::new();
    let open = shared.root.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let output = crate::common::pipebench(&[
        "ipc",
        "fifo-rw",
        "--bytes",
        "1MiB",
        "--dir",
        open.to_str().unwrap(),
    ]);
    assert_exits_saying(&output, 2, "sticky", "");
    assert_eq!(std::fs::read_dir(&open).unwrap().count(), 0);
    let err = ipc::run(
        "fifo-rw".parse().unwrap(),
        &IpcParams {
            bytes: ByteSize(MIB),
            dir: Some(open.clone()),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert_eq!(err.kind(), ipc::IpcErrorKind::UnsafeDir, "{err}");
}

/// `nobody` plants `cat` and `perf` in a shared temporary folder that comes
/// first on the runner's PATH: scripts that would append to a root-owned file
/// and then do the real program's work, so a run that started them would
/// still look fine. Root's tool run of `cat` and a profiled run start the
/// programs no other user could have put there, and the file is untouched.
#[test]
fn programs_planted_on_path_are_never_started() {
    let _cpus = cpus();
    let shared = SharedTmp::new();
    let base = shared.base.to_str().unwrap();
    let victim = shared.victim.display().to_string();
    for (name, real) in [("cat", "/bin/cat"), ("perf", "perf")] {
        let script =
            format!("#!/bin/sh\necho planted >> {victim}\nPATH=/usr/bin:/bin exec {real} \"$@\"\n");
        let planted = crate::common::as_nobody(
            "sh",
            &[
                "-c",
                &format!("cat > {base}/{name} && chmod 755 {base}/{name}"),
            ],
            &script,
        );
        assert!(planted.status.success(), "{}", stderr(&planted));
    }
    let path = format!("{base}:/usr/local/bin:/usr/bin:/bin");
    let tool = Command::new(exe())
        .args(["tool", "cat", "--bytes", "1MiB", "--json"])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(tool.status.success(), "{}", stderr(&tool));
    let result: serde_json::Value = serde_json::from_slice(&tool.stdout).unwrap();
    assert_eq!(result["bytes"], 1 << 20, "{result}");
    // Where perf is installed the run is profiled with it; where it is not,
    // the run is refused, and the planted one is still never started.
    let profiled = Command::new(exe())
        .args([
            "run",
            "write-read",
            "--bytes",
            "16MiB",
            "--profile",
            "--json",
        ])
        .env("PATH", &path)
        .output()
        .unwrap();
    if pipebench::profile::perf_installed() {
        assert!(profiled.status.success(), "{}", stderr(&profiled));
    } else {
        refused_for_want_of_perf(&profiled);
    }
    shared.victim_is_intact();
}
