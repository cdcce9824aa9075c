//! Tests of `rundir`.

use super::*;
use std::os::unix::fs::PermissionsExt;

fn base() -> (tempfile::TempDir, Base) {
    let dir = tempfile::tempdir().unwrap();
    let base = Base::at(dir.path()).unwrap();
    (dir, base)
}

#[test]
fn a_run_folder_is_private_random_and_gone_when_dropped() {
    let (_keep, base) = base();
    let one = RunDir::create(&base).unwrap();
    let two = RunDir::create(&base).unwrap();
    assert_ne!(one.path(), two.path());
    let st = std::fs::symlink_metadata(one.path()).unwrap();
    assert!(st.is_dir());
    assert_eq!(st.permissions().mode() & 0o7777, 0o700);
    let name = one.path().file_name().unwrap().to_str().unwrap();
    assert_eq!(name.len(), PREFIX.len() + 32, "{name}");
    let mut file = one.create_file("data").unwrap();
    std::io::Write::write_all(&mut file, b"x").unwrap();
    assert!(one.create_file("data").is_err(), "created twice");
    one.create_fifo("fifo").unwrap();
    std::fs::create_dir(one.path().join("sub")).unwrap();
    std::fs::write(one.path().join("sub/inner"), b"y").unwrap();
    let path = one.path().to_path_buf();
    drop(one);
    assert!(!path.exists());
    assert!(two.path().exists());
}

#[test]
fn nothing_is_created_through_a_symlink() {
    let (keep, base) = base();
    let victim = keep.path().join("victim");
    std::fs::write(&victim, b"precious").unwrap();
    let run = RunDir::create(&base).unwrap();
    std::os::unix::fs::symlink(&victim, run.path().join("data")).unwrap();
    assert!(run.create_file("data").is_err());
    assert!(run.create_fifo("data").is_err());
    drop(run);
    // The symlink went with the folder; its target stayed.
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
}

#[test]
fn unsafe_bases_are_refused() {
    let (keep, _) = base();
    let open = keep.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let err = Base::at(&open).unwrap_err();
    assert!(
        matches!(
            err,
            RunDirError::Unsafe {
                why: Unsafe::WritableByOthers { mode: 0o777 },
                ..
            }
        ),
        "{err}"
    );
    // The sticky bit makes it safe, as /tmp is.
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o1777)).unwrap();
    assert!(Base::at(&open).is_ok());
    // Below an unsafe folder nothing is safe.
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let inner = open.join("inner");
    std::fs::create_dir(&inner).unwrap();
    assert!(Base::at(&inner).is_err());
    let file = keep.path().join("file");
    std::fs::write(&file, b"").unwrap();
    assert!(matches!(
        Base::at(&file),
        Err(RunDirError::Unsafe {
            why: Unsafe::NotADirectory,
            ..
        })
    ));
}

#[test]
fn removing_the_dead_takes_dead_folders_and_leaves_live_ones() {
    let (keep, base) = base();
    let live = RunDir::create(&base).unwrap();
    // A dead run: a folder of ours whose lock nobody holds.
    let dead = base.path().join(format!("{PREFIX}{}", random_hex()));
    std::fs::create_dir(&dead).unwrap();
    std::fs::write(dead.join("writer.perf.data"), b"x").unwrap();
    // Not ours by name: left alone.
    let other = base.path().join("pipebook-other");
    std::fs::create_dir(&other).unwrap();
    // A symlink named like a run folder is neither followed nor removed.
    let target = keep.path().join("target");
    std::fs::create_dir(&target).unwrap();
    std::fs::write(target.join("keep"), b"k").unwrap();
    let link = base.path().join(format!("{PREFIX}{}", random_hex()));
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let removed = remove_dead_in(&base);
    assert_eq!(removed.folders, 1, "{removed:?}");
    assert!(!dead.exists());
    assert!(live.path().exists());
    assert!(other.exists());
    assert!(std::fs::symlink_metadata(&link).is_ok());
    assert!(target.join("keep").exists());
}

#[test]
fn records_round_trip_and_reject_strangers() {
    for record in [
        NamedObject::MsgQueue { id: 7, ctime: 1700 },
        NamedObject::SysvShm { id: 0, ctime: 1 },
        NamedObject::posix_shm(),
    ] {
        let name = CString::new(record.file_name()).unwrap();
        assert_eq!(NamedObject::parse(&name), Some(record));
    }
    for bad in [
        "msg.7",
        "msg.x.1",
        "posix.../etc/passwd",
        "posix.ABC",
        "lock",
    ] {
        assert_eq!(
            NamedObject::parse(&CString::new(bad).unwrap()),
            None,
            "{bad}"
        );
    }
}

#[test]
fn a_recorded_queue_is_removed_only_if_it_is_the_one_recorded() {
    // SAFETY: msgget takes plain integers.
    let id = unsafe { libc::msgget(libc::IPC_PRIVATE, libc::IPC_CREAT | 0o600) };
    assert!(id >= 0);
    let record = NamedObject::msg_queue(id).unwrap();
    let NamedObject::MsgQueue { ctime, .. } = record else {
        unreachable!()
    };
    let forged = NamedObject::MsgQueue {
        id,
        ctime: ctime - 1,
    };
    assert!(!forged.is_ours(), "another creation time");
    assert!(record.is_ours());
    record.remove();
    assert!(!record.is_ours(), "gone");
}
