//! `pipebench tool` finds its programs on `PATH`, and runs them with the
//! runner's rights (root's here). Another local user (`nobody`) plants a
//! program for it: a symbolic link in a sticky folder everyone may write, a
//! hard link to a root-owned program there (what `protected_hardlinks = 0`
//! lets anyone make), a program reached through a relative or empty `PATH`
//! entry, and a link in root's own folder leading to a program of theirs.
//! Each is passed over, and the refusal (exit 2) names the tools installed
//! here and every candidate with why it was not started.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

use crate::common::{assert_exits_saying, exe, plant_as_nobody, stderr, NOBODY};

/// `pipebench tool cat` with exactly `path` as PATH, from `cwd`.
fn tool_cat(path: &str, cwd: &Path) -> Output {
    Command::new(exe())
        .args(["tool", "cat", "--bytes", "1MiB"])
        .env("PATH", path)
        .current_dir(cwd)
        .output()
        .unwrap()
}

fn folder(path: &Path, mode: u32) {
    std::fs::create_dir(path).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Exit 2, naming the candidate and why.
fn refused(output: &Output, candidate: &Path, why: &str) {
    let text = stderr(output);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(text.contains("cat is not installed here"), "{text}");
    assert!(text.contains("the tools here are"), "{text}");
    assert!(text.contains(&candidate.display().to_string()), "{text}");
    assert!(text.contains(why), "{text}");
}

#[test]
fn programs_planted_for_a_tool_on_path_are_passed_over_and_named() {
    // Not under /tmp: every folder above the test's own must be closed to
    // others, or every candidate would be passed over for /tmp alone.
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let cat = Path::new("/bin/cat").canonicalize().unwrap();

    // A symbolic link planted in a sticky folder everyone may write.
    let sticky = root.path().join("sticky");
    folder(&sticky, 0o1777);
    let planted = sticky.join("cat");
    plant_as_nobody(&[format!("L {} {}", cat.display(), planted.display())]);
    refused(
        &tool_cat(sticky.to_str().unwrap(), root.path()),
        &planted,
        "may be written by others (mode 1777)",
    );

    // A hard link to a root-owned program in such a folder (made here by root:
    // protected_hardlinks = 1 keeps nobody from it on this machine).
    let hard = root.path().join("hard");
    folder(&hard, 0o1777);
    std::fs::hard_link(&cat, hard.join("cat")).unwrap();
    refused(
        &tool_cat(hard.to_str().unwrap(), root.path()),
        &hard.join("cat"),
        "may be written by others",
    );

    // Relative and empty entries: a root-owned copy in the working directory.
    let cwd = root.path().join("cwd");
    folder(&cwd, 0o755);
    std::fs::copy(&cat, cwd.join("cat")).unwrap();
    for path in [".", ":", "./"] {
        let output = tool_cat(path, &cwd);
        assert_exits_saying(&output, 2, "is relative", path);
    }

    // A link in root's own folder to a program in nobody's folder.
    let theirs = root.path().join("theirs");
    folder(&theirs, 0o755);
    std::os::unix::fs::chown(&theirs, Some(NOBODY), Some(NOBODY)).unwrap();
    std::fs::copy(&cat, theirs.join("cat")).unwrap();
    let safe = root.path().join("safe");
    folder(&safe, 0o755);
    std::os::unix::fs::symlink(theirs.join("cat"), safe.join("cat")).unwrap();
    refused(
        &tool_cat(safe.to_str().unwrap(), root.path()),
        &safe.join("cat"),
        &format!("belongs to uid {NOBODY}"),
    );

    // A program others may write, in root's own folder.
    let writable = root.path().join("writable");
    folder(&writable, 0o755);
    std::fs::copy(&cat, writable.join("cat")).unwrap();
    std::fs::set_permissions(writable.join("cat"), std::fs::Permissions::from_mode(0o757)).unwrap();
    refused(
        &tool_cat(writable.to_str().unwrap(), root.path()),
        &writable.join("cat"),
        "writable by others (mode 0757)",
    );
}
