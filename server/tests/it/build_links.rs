//! `pipebook build` (and every rebuild, which takes the same path) attacked by
//! another local user (`nobody`): a build folder under their folder, a link
//! planted where the build goes in a folder everyone may write (sticky, as
//! `/tmp`), and a racer that keeps planting links while books are built. The
//! build is made in a private folder and put in place in one rename, so none of
//! it reaches the root-only folder the links point at; a refusal says why.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{as_nobody, open_tempdir, write_tiny_book, NOBODY};

/// A root-only folder holding one file: what the attacker aims at.
fn victim(root: &Path) -> std::path::PathBuf {
    let victim = root.join("victim");
    std::fs::create_dir(&victim).unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::write(victim.join("keep"), b"root's").unwrap();
    victim
}

/// What every case starts from: a folder open to all (`root`, as `/tmp`), a
/// tiny book to build, and in `root` the victim.
struct Scene {
    root: tempfile::TempDir,
    book: tempfile::TempDir,
    victim: PathBuf,
}

fn scene() -> Scene {
    let root = open_tempdir();
    let book = tempfile::tempdir().unwrap();
    write_tiny_book(book.path());
    let victim = victim(root.path());
    Scene { root, book, victim }
}

/// A folder in `root` that everyone may write, sticky as `/tmp` is.
fn sticky_folder(root: &Path) -> PathBuf {
    let shared = root.join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    shared
}

/// As `nobody`, makes `link` a symbolic link to `target`.
fn plant_link(target: &Path, link: &Path) {
    as_nobody("ln", &["-s".as_ref(), target.as_os_str(), link.as_os_str()]);
}

/// The build's stderr, once it is checked that the build failed.
fn refused(output: &Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "{stderr}");
    stderr
}

fn untouched(victim: &Path) {
    let names: Vec<_> = std::fs::read_dir(victim)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names, ["keep"], "the victim folder changed");
    assert_eq!(std::fs::read(victim.join("keep")).unwrap(), b"root's");
}

fn build(book: &Path, build_dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pipebook"))
        .args(["build", "--book-root"])
        .arg(book)
        .arg("--build-dir")
        .arg(build_dir)
        .output()
        .unwrap()
}

/// No folder named like a build in progress stays behind.
fn no_staging_left(dir: &Path) {
    let left: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("pipebook-run-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_build_folder_in_another_users_folder_is_refused_and_its_link_not_followed() {
    let Scene { root, book, victim } = scene();
    let theirs = root.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::os::unix::fs::chown(&theirs, Some(NOBODY), Some(NOBODY)).unwrap();
    let out = theirs.join("out");
    plant_link(&victim, &out);
    let output = build(book.path(), &out);
    let stderr = refused(&output);
    assert!(stderr.contains("cannot build into"), "{stderr}");
    assert!(stderr.contains(&format!("uid {NOBODY}")), "{stderr}");
    untouched(&victim);
    no_staging_left(&theirs);
}

#[test]
fn a_link_planted_as_the_build_folder_in_a_sticky_folder_is_refused() {
    let Scene { root, book, victim } = scene();
    let shared = sticky_folder(root.path());
    let out = shared.join("out");
    plant_link(&victim, &out);
    let output = build(book.path(), &out);
    let stderr = refused(&output);
    assert!(stderr.contains("symbolic link"), "{stderr}");
    untouched(&victim);
    no_staging_left(&shared);
    // The link is the attacker's: left as it was, never followed.
    assert_eq!(std::fs::read_link(&out).unwrap(), victim);
}

#[test]
fn a_racer_planting_links_while_books_are_built_reaches_nothing() {
    let Scene { root, book, victim } = scene();
    let shared = sticky_folder(root.path());
    let out = shared.join("out");
    // The racer: plant the build folder, its pages and every private folder's
    // pages as links to the victim, over and over, as fast as it can.
    let script = r#"
        while :; do
          ln -sfn "$1" "$2/out" 2>/dev/null
          ln -sf "$1/keep" "$2/out/index.html" 2>/dev/null
          for d in "$2"/pipebook-run-*; do
            ln -sf "$1/keep" "$d/index.html" 2>/dev/null
            ln -sfn "$1" "$d/html" 2>/dev/null
          done
        done"#;
    let mut racer = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .args(["sh", "-c", script, "racer"])
        .arg(&victim)
        .arg(&shared)
        .spawn()
        .unwrap();
    let mut built = 0;
    for _ in 0..4 {
        let output = build(book.path(), &out);
        if output.status.success() {
            built += 1;
        } else {
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(stderr.contains("cannot build into"), "{stderr}");
        }
    }
    racer.kill().unwrap();
    racer.wait().unwrap();
    untouched(&victim);
    no_staging_left(&shared);
    // Whatever the racer won, what stands at `out` is either its link (the
    // build refused) or a whole build of ours with no link inside.
    let meta = std::fs::symlink_metadata(&out).unwrap();
    if meta.is_dir() {
        assert!(built > 0);
        let index = std::fs::symlink_metadata(out.join("index.html")).unwrap();
        assert!(index.is_file(), "index.html is not our file");
    } else {
        assert!(meta.file_type().is_symlink());
    }
}

#[test]
fn a_link_planted_above_the_build_folder_does_not_lead_the_build_into_a_root_only_folder() {
    let Scene { root, book, victim } = scene();
    // Root's earlier build output in the victim folder, which a swap would empty.
    std::fs::create_dir(victim.join("out")).unwrap();
    std::fs::write(victim.join("out/keep"), b"root's").unwrap();
    let shared = sticky_folder(root.path());
    let planted = shared.join("x");
    plant_link(&victim, &planted);
    let output = build(book.path(), &planted.join("out"));
    let stderr = refused(&output);
    assert!(
        stderr.contains(&format!("a symbolic link of uid {NOBODY}")),
        "{stderr}"
    );
    assert_eq!(std::fs::read(victim.join("out/keep")).unwrap(), b"root's");
    no_staging_left(&victim);
}
