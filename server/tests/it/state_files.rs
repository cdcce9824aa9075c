//! The state folder on a shared machine: the server (root here, as in CI)
//! must not follow another user's links or use another user's files and
//! folders, must start and serve on a read-only folder with saving off, and
//! must tell the page when a save fails (full or read-only disk) and when
//! saving works again. The attacker is `nobody`; the read-only folder and the
//! full disk are a read-only bind mount and a tiny tmpfs in a mount namespace
//! of the server's own.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::common::{
    as_nobody, open_tempdir, recv_until, run_message, send, Server, Socket, NOBODY, RUN_LOCK,
};
use serde_json::{json, Value};

const SECRET: &str = "{\"root password\":\"hunter2\"}\n{\"also\":\"secret\"}\n";

/// A shared state folder (0777, no sticky bit: anyone may add, remove and
/// rename entries) inside a folder others may enter, and a root-only secret
/// beside it.
fn shared_folder() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let root = open_tempdir();
    let state = root.path().join("state");
    std::fs::create_dir(&state).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o777)).unwrap();
    let secret = root.path().join("secret");
    std::fs::write(&secret, SECRET).unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    (root, state, secret)
}

/// As nobody: `link` becomes a symbolic link to `target` (replacing what is there).
fn plant_link(target: &Path, link: &Path) {
    as_nobody(
        "ln",
        &["-sfn".as_ref(), target.as_os_str(), link.as_os_str()],
    );
}

fn tiny_run() -> Value {
    run_message("write-read", json!({"bytes":"1MiB","quiet":true}))
}

/// Runs a tiny step; returns its result and the history's `saved` for it.
async fn run_and_saved(socket: &mut Socket) -> (Value, Value) {
    send(socket, tiny_run()).await;
    let (result, _) = recv_until(socket, "result", Duration::from_secs(30)).await;
    let (saved, _) = recv_until(socket, "saved", Duration::from_secs(10)).await;
    assert_eq!(saved["run"], result["run"], "{saved}");
    assert_eq!(saved["store"], "history", "{saved}");
    (result, saved)
}

#[tokio::test]
async fn planted_links_and_foreign_files_in_a_shared_folder_are_refused() {
    let (_root, state, secret) = shared_folder();

    // Links planted before the start: the server refuses to start, and says
    // which file and what to do, instead of reading and appending to the secret.
    plant_link(&secret, &state.join("results.jsonl"));
    let stderr = Server::start_with_args(&state, &[])
        .err()
        .expect("a linked results.jsonl is refused");
    assert!(
        stderr.contains("results.jsonl is a symbolic link") && stderr.contains("remove the link"),
        "{stderr}"
    );
    std::fs::remove_file(state.join("results.jsonl")).unwrap();
    plant_link(&secret, &state.join("labs.jsonl"));
    let stderr = Server::start_with_args(&state, &[])
        .err()
        .expect("a linked labs.jsonl is refused");
    assert!(stderr.contains("labs.jsonl is a symbolic link"), "{stderr}");
    std::fs::remove_file(state.join("labs.jsonl")).unwrap();
    // Refused before anything was made.
    assert_eq!(std::fs::read_dir(&state).unwrap().count(), 0);

    // A regular file of the attacker's own, with lines for the server to copy.
    crate::common::write_as_nobody(&state.join("results.jsonl"), b"{\"planted\":1}\n");
    let stderr = Server::start_with_args(&state, &[])
        .err()
        .expect("another user's results.jsonl is refused");
    assert!(
        stderr.contains(&format!("belongs to uid {NOBODY}")),
        "{stderr}"
    );
    std::fs::remove_file(state.join("results.jsonl")).unwrap();
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), SECRET);
    assert!(!state.join("results.rejected.jsonl").exists());

    // Links planted while the server runs: the saves are refused, the page is
    // told why, and the secret is neither read nor written.
    let server = Server::start_with_state(&state);
    let mut socket = server.socket().await;
    plant_link(&secret, &state.join("labs.jsonl"));
    send(
        &mut socket,
        json!({"type":"predict","lab":"vmsplice-safety","value":0.3}),
    )
    .await;
    let (saved, _) = recv_until(&mut socket, "saved", Duration::from_secs(10)).await;
    assert_eq!(saved["store"], "labs", "{saved}");
    assert_eq!(saved["ok"], false, "{saved}");
    assert_eq!(saved["error"]["kind"], "unsafe_file", "{saved}");
    assert!(
        saved["error"]["message"]
            .as_str()
            .unwrap()
            .contains("labs.jsonl is a symbolic link"),
        "{saved}"
    );
    let labs = server.get("/api/labs").await;
    assert_eq!(labs.status, 500);
    assert!(!labs.body.contains("hunter2"), "{}", labs.body);
    {
        let _lock = RUN_LOCK.lock().await;
        // The folder has no sticky bit: nobody may swap root's results.jsonl.
        as_nobody("rm", &[state.join("results.jsonl").as_os_str()]);
        plant_link(&secret, &state.join("results.jsonl"));
        let (_, saved) = run_and_saved(&mut socket).await;
        assert_eq!(saved["ok"], false, "{saved}");
        assert_eq!(saved["error"]["kind"], "unsafe_file", "{saved}");
    }
    let health = server.get("/api/health").await.json();
    assert_eq!(health["saving"], false, "{health}");
    assert_eq!(health["saving_error"]["kind"], "unsafe_file", "{health}");
    assert!(!server.get("/api/results").await.body.contains("hunter2"));
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), SECRET);
    for entry in std::fs::read_dir(&state).unwrap().flatten() {
        let meta = entry.path().symlink_metadata().unwrap();
        if meta.file_type().is_file() && meta.uid() == 0 {
            // Everything the server made is private, and none holds the secret.
            assert_eq!(meta.mode() & 0o077, 0, "{:?}", entry.path());
            let text = std::fs::read_to_string(entry.path()).unwrap();
            assert!(!text.contains("hunter2"), "{:?}", entry.path());
        }
    }
}

#[tokio::test]
async fn a_state_folder_that_is_a_link_or_another_users_is_refused() {
    let root = open_tempdir();
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    // Made by the attacker before the server ran: it could swap any file in it.
    let theirs = root.path().join("theirs");
    as_nobody("mkdir", &[theirs.as_os_str()]);
    let stderr = Server::start_with_args(&theirs, &[])
        .err()
        .expect("nobody's folder is refused");
    assert!(
        stderr.contains("state folder") && stderr.contains(&format!("belongs to uid {NOBODY}")),
        "{stderr}"
    );
    assert_eq!(std::fs::read_dir(&theirs).unwrap().count(), 0);
    // A link to a real folder: whoever owns the link could repoint it.
    let real = root.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let link = root.path().join("link");
    plant_link(&real, &link);
    let stderr = Server::start_with_args(&link, &[])
        .err()
        .expect("a linked state folder is refused");
    assert!(
        stderr.contains("state folder") && stderr.contains("is a symbolic link"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_dir(&real).unwrap().count(), 0);
    // A folder the server makes itself is private.
    let fresh = root.path().join("fresh/state");
    let server = Server::start_with_state(&fresh);
    assert_eq!(server.get("/api/health").await.json()["saving"], true);
    assert_eq!(std::fs::metadata(&fresh).unwrap().mode() & 0o777, 0o700);
}

fn c_path(path: &Path) -> CString {
    CString::new(path.as_os_str().as_bytes()).unwrap()
}

fn check(result: libc::c_int) -> std::io::Result<()> {
    if result == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Set-up for a server in a mount namespace of its own where `dir` is `how`:
/// a read-only bind mount of itself, or an empty tmpfs of `size` bytes.
pub(crate) enum Mount {
    ReadOnly,
    Tmpfs(u64),
}

/// A server whose state folder `dir` is `how` in a mount namespace of its own;
/// `Err(stderr)` if it does not start.
pub(crate) fn start_mounted(dir: &Path, how: Mount) -> Result<Server, String> {
    Server::start_with_setup(dir, &[], mount_namespace(dir, how))
}

fn mount_namespace(
    dir: &Path,
    how: Mount,
) -> impl FnMut() -> std::io::Result<()> + Send + Sync + 'static {
    let path = c_path(dir);
    let tmpfs = c"tmpfs".to_owned();
    let options = match how {
        Mount::ReadOnly => None,
        Mount::Tmpfs(size) => Some(CString::new(format!("size={size},mode=0700")).unwrap()),
    };
    move || {
        let null = std::ptr::null();
        // SAFETY: plain system calls on strings made before the fork.
        unsafe {
            check(libc::unshare(libc::CLONE_NEWNS))?;
            check(libc::mount(
                null,
                c"/".as_ptr(),
                null,
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ))?;
            match &options {
                None => {
                    check(libc::mount(
                        path.as_ptr(),
                        path.as_ptr(),
                        null,
                        libc::MS_BIND,
                        std::ptr::null(),
                    ))?;
                    check(libc::mount(
                        null,
                        path.as_ptr(),
                        null,
                        libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY,
                        std::ptr::null(),
                    ))
                }
                Some(options) => check(libc::mount(
                    tmpfs.as_ptr(),
                    path.as_ptr(),
                    tmpfs.as_ptr(),
                    0,
                    options.as_ptr().cast(),
                )),
            }
        }
    }
}

/// `path` as the server sees it, through its mount namespace.
pub(crate) fn inside(server: &Server, path: &Path) -> PathBuf {
    Path::new(&format!("/proc/{}/root", server.pid())).join(path.strip_prefix("/").unwrap())
}

#[tokio::test]
async fn a_read_only_state_folder_serves_its_history_with_saving_off_until_it_can_save() {
    let _lock = RUN_LOCK.lock().await;
    let state = tempfile::tempdir().unwrap();
    // Two real results, with a bad line between them.
    {
        let mut server = Server::start_with_state(state.path());
        let mut socket = server.socket().await;
        send(&mut socket, tiny_run()).await;
        recv_until(&mut socket, "result", Duration::from_secs(30)).await;
        assert_eq!(server.results_once(1).await.len(), 1);
        drop(socket);
        assert!(server.terminate(Duration::from_secs(5)).unwrap().success());
    }
    let file = state.path().join("results.jsonl");
    let good = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, format!("{good}{{\"not\":\"a result\"}}\n{good}")).unwrap();

    let server = start_mounted(state.path(), Mount::ReadOnly)
        .expect("a read-only folder with a bad line still starts");
    let results = server.get("/api/results").await.json();
    assert_eq!(results.as_array().unwrap().len(), 2, "{results}");
    let health = server.get("/api/health").await.json();
    assert_eq!(health["saving"], false, "{health}");
    assert_eq!(health["saving_error"]["kind"], "read_only", "{health}");
    let log = server.stderr();
    assert!(log.contains("saving is off"), "{log}");
    assert!(log.contains("1 line(s)"), "{log}");

    let mut socket = server.socket().await;
    let (_, saved) = run_and_saved(&mut socket).await;
    assert_eq!(saved["ok"], false, "{saved}");
    assert_eq!(saved["error"]["kind"], "read_only", "{saved}");
    assert!(
        saved["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Read-only file system"),
        "{saved}"
    );

    // The folder becomes writable (in the server's namespace): saving resumes.
    let remount = Command::new("nsenter")
        .args([
            "-t",
            &server.pid().to_string(),
            "-m",
            "mount",
            "-o",
            "remount,bind,rw",
        ])
        .arg(state.path())
        .output()
        .unwrap();
    assert!(
        remount.status.success(),
        "{}",
        String::from_utf8_lossy(&remount.stderr)
    );
    let (_, saved) = run_and_saved(&mut socket).await;
    assert_eq!(
        saved,
        json!({"type":"saved","run":saved["run"],"store":"history","ok":true})
    );
    assert_eq!(server.get("/api/health").await.json()["saving"], true);
    assert_eq!(
        server
            .get("/api/results")
            .await
            .json()
            .as_array()
            .unwrap()
            .len(),
        3
    );
}

#[tokio::test]
async fn a_full_disk_is_reported_to_the_page_and_saving_resumes_when_there_is_room() {
    let _lock = RUN_LOCK.lock().await;
    let state = tempfile::tempdir().unwrap();
    let server = start_mounted(state.path(), Mount::Tmpfs(256 << 10))
        .expect("the server starts on a small tmpfs");
    let mut socket = server.socket().await;
    let (_, saved) = run_and_saved(&mut socket).await;
    assert_eq!(saved["ok"], true, "{saved}");

    // Pad the history with a blank line (readers skip those) so that it ends
    // 10 bytes before a page boundary: the next line must take a new page of
    // the tmpfs, after writing its first 10 bytes into the last one.
    let history = inside(&server, &state.path().join("results.jsonl"));
    let len = std::fs::metadata(&history).unwrap().len();
    let padded = (len / 4096 + 1) * 4096 - 10;
    assert!(padded > len + 1, "{len}");
    {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&history)
            .unwrap();
        let mut pad = vec![b' '; (padded - len - 1) as usize];
        pad.push(b'\n');
        file.write_all(&pad).unwrap();
    }
    // Fill the disk to the last page.
    let filler = inside(&server, &state.path().join("filler"));
    {
        use std::io::Write;
        let mut file = std::fs::File::create(&filler).unwrap();
        let block = vec![b'x'; 4096];
        while file.write_all(&block).is_ok() {}
        while file.write_all(b"x").is_ok() {}
    }
    let (_, saved) = run_and_saved(&mut socket).await;
    assert_eq!(saved["ok"], false, "{saved}");
    assert_eq!(saved["error"]["kind"], "no_space", "{saved}");
    assert!(
        saved["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("the result was not saved in the history"),
        "{saved}"
    );
    let health = server.get("/api/health").await.json();
    assert_eq!(health["saving_error"]["kind"], "no_space", "{health}");
    // The 10 bytes that fitted were cut back: no torn line is left behind.
    assert_eq!(std::fs::metadata(&history).unwrap().len(), padded);
    let text = std::fs::read_to_string(&history).unwrap();
    assert!(text.ends_with('\n'));
    assert_eq!(text.lines().filter(|l| !l.trim().is_empty()).count(), 1);

    // Room again: the next save works, and says so.
    std::fs::remove_file(&filler).unwrap();
    let (_, saved) = run_and_saved(&mut socket).await;
    assert_eq!(saved["ok"], true, "{saved}");
    assert_eq!(server.get("/api/health").await.json()["saving"], true);
    assert_eq!(
        server
            .get("/api/results")
            .await
            .json()
            .as_array()
            .unwrap()
            .len(),
        2
    );
}
