//! The IPC lab end to end: real processes, real kernel objects, small sizes.

use std::collections::BTreeSet;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use pipebench::ipc::sysv::SysvLimits;
use pipebench::ipc::{self, IpcError, IpcParams};
use pipebench::process::launch::EndProgram;
use pipebench::size::{ByteSize, GIB, MIB};

/// Parameters for a library run whose ends are the pipebench binary, with files
/// in `dir`.
fn params(bytes: u64, dir: &Path) -> IpcParams {
    IpcParams {
        bytes: ByteSize(bytes),
        dir: Some(dir.to_path_buf()),
        program: Some(EndProgram {
            exe: crate::common::exe(),
            prefix: Vec::new(),
        }),
        ..Default::default()
    }
}

/// What the lab could leave behind anywhere: System V objects (by id),
/// /dev/shm entries of pipebench, and the files in `dir`.
fn leftovers(dir: &Path) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for table in ["/proc/sysvipc/msg", "/proc/sysvipc/shm"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for line in text.lines().skip(1) {
            let id = line.split_whitespace().nth(1).unwrap_or("?");
            found.insert(format!("{table}:{id}"));
        }
    }
    for d in [Path::new("/dev/shm"), dir] {
        for entry in std::fs::read_dir(d).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if d == dir || name.starts_with("pipebench") {
                found.insert(entry.path().display().to_string());
            }
        }
    }
    found
}

#[test]
fn every_mechanism_moves_8_mib_and_verifies_its_checksum() {
    let _cpus = crate::common::cpus();
    let dir = tempfile::tempdir().unwrap();
    let before = leftovers(dir.path());
    for id in ipc::ids() {
        let progress = Arc::new(AtomicU64::new(0));
        let params = IpcParams {
            progress: Some(Arc::clone(&progress)),
            ..params(8 * MIB, dir.path())
        };
        let result = match ipc::run(id.parse().unwrap(), &params) {
            Ok(result) => result,
            // What this machine lacks is said, typed, and leaves nothing.
            Err(e @ IpcError::Unsupported(_)) => {
                unsupported(id, &e, dir.path());
                assert_eq!(leftovers(dir.path()), before, "{id} left something behind");
                continue;
            }
            Err(e) => panic!("{id}: {e}"),
        };
        assert!(result.checksum_ok, "{id}: {result:?}");
        // Each end counted its own window: the counts every user may take,
        // kept once in the record's `counts` under the end's role.
        let counts = result
            .counts
            .as_ref()
            .unwrap_or_else(|| panic!("{id}: no counts"));
        for end in &result.ends {
            let counted = counts
                .ends
                .get(&end.role)
                .unwrap_or_else(|| panic!("{id}: {end:?}"));
            assert!(
                counted.context_switches >= counted.voluntary_switches,
                "{id}: {counted:?}"
            );
        }
        assert_eq!(counts.ends.len(), result.ends.len(), "{id}: {counts:?}");
        // The receiving end's count reaches the harness, to the last byte.
        assert_eq!(progress.load(Ordering::Relaxed), result.bytes, "{id}");
        assert_eq!(result.mechanism, id);
        assert!(result.elapsed_ms > 0.0, "{id}: {result:?}");
        let mechanism = ipc::find(id).unwrap();
        assert_eq!(
            result.ends.len(),
            if mechanism.pair { 2 } else { 1 },
            "{id}"
        );
        if mechanism.pair {
            assert_eq!(result.bytes, 8 * MIB, "{id}");
        }
        assert_eq!(leftovers(dir.path()), before, "{id} left something behind");
    }
}

/// Only the zero-copy mechanisms may be refused for want of something, and
/// only for a reason that holds: a reflink is refused on a file system that
/// cannot share blocks, the kernel features where the probe says they lack.
fn unsupported(id: &str, err: &IpcError, dir: &Path) {
    assert_eq!(err.kind(), ipc::IpcErrorKind::Unsupported, "{id}: {err}");
    assert!(err.is_input_error(), "{id}: {err}");
    let IpcError::Unsupported(why) = err else {
        unreachable!()
    };
    match id {
        "ficlone" => {
            let fs = ipc::harness::filesystem(dir).unwrap_or_default();
            assert!(
                matches!(why, ipc::zerocopy::Unsupported::NoReflink { .. }),
                "{why}"
            );
            assert!(!["btrfs", "xfs"].contains(&fs.as_str()), "{fs}: {why}");
        }
        "tcp-msg-zerocopy" | "tcp-zerocopy-receive" | "uring-send-zc" => {}
        _ => panic!("{id} may not be unsupported: {err}"),
    }
}

/// A run that lasts: the pipe with 8-byte calls makes about a million system
/// calls for 4 MiB. Someone watching `progress` sees it climb while the ends
/// run, never past the total, and end at the total.
#[test]
fn progress_climbs_while_the_ends_run() {
    let _cpus = crate::common::cpus();
    let dir = tempfile::tempdir().unwrap();
    let progress = Arc::new(AtomicU64::new(0));
    let params = IpcParams {
        chunk: Some(ByteSize(8)),
        progress: Some(Arc::clone(&progress)),
        ..params(4 * MIB, dir.path())
    };
    let (result, seen) = std::thread::scope(|scope| {
        let run = scope.spawn(|| ipc::run("pipe-rw".parse().unwrap(), &params));
        let mut seen = Vec::new();
        while !run.is_finished() {
            seen.push(progress.load(Ordering::Relaxed));
            std::thread::sleep(Duration::from_millis(5));
        }
        (run.join().unwrap(), seen)
    });
    let result = result.unwrap();
    assert!(result.checksum_ok);
    let midway: Vec<u64> = seen
        .iter()
        .copied()
        .filter(|&b| b > 0 && b < 4 * MIB)
        .collect();
    assert!(
        !midway.is_empty(),
        "no sample between 0 and the total in {} samples over {:.0} ms",
        seen.len(),
        result.elapsed_ms
    );
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "progress went back");
    assert_eq!(progress.load(Ordering::Relaxed), 4 * MIB);
}

#[test]
fn line_counts_agree_between_mmap_and_buffered_reads() {
    let _cpus = crate::common::cpus();
    let dir = tempfile::tempdir().unwrap();
    let mapped = ipc::run(
        "lines-mmap".parse().unwrap(),
        &params(3 * MIB + 17, dir.path()),
    )
    .unwrap();
    let read = ipc::run(
        "lines-read".parse().unwrap(),
        &params(3 * MIB + 17, dir.path()),
    )
    .unwrap();
    assert!(mapped.checksum_ok && read.checksum_ok);
    let lines = mapped.lines.unwrap();
    assert_eq!(Some(lines), read.lines);
    // Lines are 100 to 200 bytes long.
    assert!((3 * MIB / 200..=3 * MIB / 100).contains(&lines), "{lines}");
}

#[test]
fn copy_on_write_after_fork_faults_in_the_child_and_spares_the_parent() {
    let _cpus = crate::common::cpus();
    let dir = tempfile::tempdir().unwrap();
    let result = ipc::run("cow-fork".parse().unwrap(), &params(4 * MIB, dir.path())).unwrap();
    let cow = result.cow.expect("cow report");
    assert_eq!(cow.pages, 1024);
    assert!(
        cow.child_faults_after > cow.child_faults_before,
        "no fault: {cow:?}"
    );
    // One copy per written page (a few more for the child's own stack and data).
    assert!(
        cow.child_faults_after - cow.child_faults_before >= cow.pages,
        "{cow:?}"
    );
    assert!(
        cow.parent_sees_original && cow.child_sees_its_write,
        "{cow:?}"
    );
    assert!(result.checksum_ok);
}

#[test]
fn a_cancelled_run_stops_and_cleans_up() {
    let _cpus = crate::common::cpus();
    let dir = tempfile::tempdir().unwrap();
    let before = leftovers(dir.path());
    let cancel = Arc::new(AtomicBool::new(false));
    let mut p = params(64 * MIB, dir.path());
    p.chunk = Some(ByteSize(8));
    p.cancel = Some(cancel.clone());
    let flag = cancel.clone();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        flag.store(true, Ordering::Relaxed);
    });
    let outcome = ipc::run("file-flock".parse().unwrap(), &p);
    stopper.join().unwrap();
    assert!(matches!(outcome, Err(IpcError::Cancelled)), "{outcome:?}");
    assert_eq!(leftovers(dir.path()), before);
}

#[test]
fn limits_give_typed_errors_and_leave_nothing_behind() {
    let _cpus = crate::common::cpus();
    let dir = tempfile::tempdir().unwrap();
    let before = leftovers(dir.path());
    let limits = SysvLimits::read();

    let mut p = params(MIB, dir.path());
    p.chunk = Some(ByteSize((limits.msgmax + 8).next_multiple_of(8)));
    let err = ipc::run("sysv-msgqueue".parse().unwrap(), &p).unwrap_err();
    assert!(
        matches!(err, IpcError::MsgMax { limit, .. } if limit == limits.msgmax),
        "{err}"
    );
    assert!(err.to_string().contains("kernel.msgmax"), "{err}");

    // A segment over kernel.shmmax: asked for directly when the sysctl is below
    // the lab's 4 GiB bound, else against a copy of the limits with a smaller
    // shmmax (this machine's sysctls are not changed by a test).
    if limits.shmmax < 4 * GIB {
        let err = ipc::run(
            "sysv-shm".parse().unwrap(),
            &params(limits.shmmax + 1, dir.path()),
        )
        .unwrap_err();
        assert!(matches!(err, IpcError::ShmMax { .. }), "{err}");
    }
    let small = SysvLimits {
        shmmax: MIB,
        ..limits
    };
    assert!(matches!(
        small.check_segment(MIB + 1),
        Err(IpcError::ShmMax { limit, .. }) if limit == MIB
    ));

    let free = pipebench::ipc::harness::free_bytes(Path::new("/dev/shm")).unwrap();
    let err = pipebench::ipc::shared::check_dev_shm(free + 1, Some(free)).unwrap_err();
    assert!(matches!(err, IpcError::DevShmTooSmall { .. }), "{err}");
    assert!(err.to_string().contains("remount"), "{err}");

    let err = ipc::run("posix-shm".parse().unwrap(), &params(5 * GIB, dir.path())).unwrap_err();
    assert!(
        matches!(err, IpcError::OutOfRange { name: "bytes", .. }),
        "{err}"
    );

    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut p = params(MIB, dir.path());
    p.port = Some(taken.local_addr().unwrap().port());
    let err = ipc::run("tcp-rw".parse().unwrap(), &p).unwrap_err();
    assert!(matches!(err, IpcError::PortInUse { .. }), "{err}");

    let shm_dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let err = ipc::run("direct-io".parse().unwrap(), &params(MIB, shm_dir.path())).unwrap_err();
    assert!(matches!(err, IpcError::DirectIoOnTmpfs { .. }), "{err}");
    assert_eq!(std::fs::read_dir(shm_dir.path()).unwrap().count(), 0);
    drop(shm_dir);

    assert_eq!(leftovers(dir.path()), before);
}

#[test]
fn unknown_mechanisms_list_the_known_ones() {
    let _cpus = crate::common::cpus();
    let err = ipc::Mechanism::parse("carrier-pigeon").unwrap_err();
    let IpcError::UnknownMechanism { known, .. } = &err else {
        panic!("{err}");
    };
    for id in ipc::ids() {
        assert!(known.contains(id), "{id} missing from {known}");
    }
    let output = crate::common::pipebench(&["ipc", "carrier-pigeon"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(crate::common::stderr(&output).contains("posix-shm"));
}

#[test]
fn json_csv_and_svg_outputs_are_usable() {
    let _cpus = crate::common::cpus();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let svg = dir.path().join("chart.svg");
    let output = crate::common::pipebench(&[
        "ipc",
        "pipe-splice",
        "posix-shm",
        "--bytes",
        "4MiB",
        "--repeats",
        "2",
        "--dir",
        d,
        "--json",
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert!(
        output.status.success(),
        "{}",
        crate::common::stderr(&output)
    );
    let value: serde_json::Value = serde_json::from_str(&crate::common::stdout(&output)).unwrap();
    let table = value["table"].as_array().unwrap();
    assert_eq!(table.len(), 2);
    assert_eq!(table[0]["mechanism"], "pipe-splice");
    assert_eq!(table[0]["runs"], 2);
    assert_eq!(table[1]["copies"], 0);
    assert!(table[1]["survey_ms"].as_f64().is_some());
    let runs = value["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4);
    assert!(runs.iter().all(|r| r["checksum_ok"] == true));
    assert!(runs[0]["ends"][0]["usage"]["minor_faults"].is_u64());
    let drawn = std::fs::read_to_string(&svg).unwrap();
    assert!(drawn.contains("<svg") && drawn.contains("posix-shm"));
    std::fs::remove_file(&svg).unwrap();

    let output = crate::common::pipebench(&[
        "ipc",
        "memfd-scm",
        "--bytes",
        "1MiB",
        "--repeats",
        "1",
        "--dir",
        d,
        "--csv",
    ]);
    assert!(
        output.status.success(),
        "{}",
        crate::common::stderr(&output)
    );
    let csv = crate::common::stdout(&output);
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().starts_with("mechanism,copies,"));
    assert!(lines.next().unwrap().starts_with("memfd-scm,0,1,"));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// On a terminal (`script` gives the command one), the session bar names the
/// mechanism running and how far it has got: 8 MiB in 8-byte calls (about two
/// million system calls, over a second here) lasts for several of the bar's
/// 100 ms updates even on a much faster machine.
#[test]
fn on_a_terminal_the_bar_follows_the_bytes() {
    let _cpus = crate::common::cpus();
    let dir = tempfile::tempdir().unwrap();
    let command = format!(
        "{} ipc pipe-rw --bytes 8MiB --chunk 8 --repeats 1 --dir {}",
        crate::common::exe().display(),
        dir.path().display()
    );
    let output = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .expect("`script` (util-linux) runs a command on a pseudo-terminal");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{text}");
    let midway = text
        .split(['\r', '\n'])
        .filter(|line| line.contains("pipe-rw: ") && line.contains(" of 8.00 MiB"))
        .filter(|line| !line.contains("pipe-rw: 0 B of") && !line.contains("8.00 MiB of 8.00 MiB"))
        .count();
    assert!(midway > 0, "no update between 0 and 8 MiB in: {text}");
    assert!(text.contains("pipe-rw"), "{text}");
}

/// direct-io's 1 KiB device requests are capped at 16 MiB: a larger run moves
/// 16 MiB and says so; a run within the cap moves what it asked and says nothing.
#[test]
fn direct_io_moves_at_most_16_mib_and_says_so() {
    let _cpus = crate::common::cpus();
    let dir = tempfile::tempdir().unwrap();
    let cut = |result: &ipc::IpcResult| result.notes.iter().any(|n| n.contains("at most"));
    let capped = ipc::run("direct-io".parse().unwrap(), &params(20 * MIB, dir.path())).unwrap();
    assert_eq!(capped.bytes, 16 * MIB, "{capped:?}");
    assert!(capped.checksum_ok && cut(&capped), "{capped:?}");
    // Exactly the cap: nothing was cut, so nothing to say.
    let within = ipc::run("direct-io".parse().unwrap(), &params(16 * MIB, dir.path())).unwrap();
    assert_eq!(within.bytes, 16 * MIB, "{within:?}");
    assert!(within.checksum_ok && !cut(&within), "{within:?}");
    assert_eq!(
        ipc::harness::effective_bytes("direct-io".parse().unwrap(), 20 * MIB),
        16 * MIB
    );
    assert_eq!(
        ipc::harness::effective_bytes("pipe-rw".parse().unwrap(), 20 * MIB),
        20 * MIB
    );
}
