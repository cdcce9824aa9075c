//! The tuned variants' file, `tuned.jsonl`, as real servers use it: a save
//! refused (a link planted there, another user's file, a read-only folder, a
//! full disk) is told to the page right after the search's result, typed, with
//! the variant still runnable until the server stops; and two servers on one
//! state folder see each other's variants without a restart, read again under
//! the same rules as at start. Searches run on the smallest budget and pin both
//! CPUs, so every test holds `RUN_LOCK`.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use crate::common::{
    expect_refused, recv, recv_until, run_message, send, Server, Socket, NOBODY, RUN_LOCK,
};
use crate::state_files::{inside, start_mounted, Mount};
use serde_json::{json, Value};

/// The smallest budget a search may have, seconds.
const MIN_BUDGET: f64 = 2.0;

/// Searches `step` on the smallest budget; returns the search's result and
/// the `saved {store: "tuned"}` that follows it.
async fn tune(socket: &mut Socket, step: &str) -> (Value, Value) {
    send(
        socket,
        json!({"type":"tune","step":step,"budget":MIN_BUDGET}),
    )
    .await;
    let (result, _) = recv_until(socket, "result", Duration::from_secs(120)).await;
    assert_eq!(result["best"]["id"], format!("tuned-{step}"), "{result}");
    let kept = recv(socket).await;
    assert_eq!(kept["type"], "saved", "{kept}");
    assert_eq!(kept["store"], "tuned", "{kept}");
    assert_eq!(kept["run"], result["run"], "{kept}");
    // Then the history's word on the search, as for any job.
    let saved = recv(socket).await;
    assert_eq!(saved["store"], "history", "{saved}");
    (result, kept)
}

/// Asserts `kept` says the save failed with `kind`.
fn refused_as(kept: &Value, kind: &str) {
    assert_eq!(kept["ok"], false, "{kept}");
    assert_eq!(kept["error"]["kind"], kind, "{kept}");
    assert!(
        kept["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{kept}"
    );
}

/// The variant `id` as `/api/tuned` lists it, if it does.
async fn listed(server: &Server, id: &str) -> Option<Value> {
    let list = server.get("/api/tuned").await.json();
    list.as_array()
        .unwrap()
        .iter()
        .find(|v| v["id"] == id)
        .cloned()
}

/// Runs `id` briefly and checks it ran at `best`'s sizes under its own id;
/// returns the history's `saved` for it.
async fn run_tuned(socket: &mut Socket, best: &Value) -> Value {
    send(
        socket,
        run_message(best["id"].as_str().unwrap(), json!({"seconds":0.3})),
    )
    .await;
    let (result, _) = recv_until(socket, "result", Duration::from_secs(30)).await;
    assert_eq!(result["step"], best["id"], "{result}");
    assert_eq!(result["bytes_per_call"], best["buf_size"], "{result}");
    assert_eq!(result["pipe_capacity"], best["pipe_size"], "{result}");
    let (saved, _) = recv_until(socket, "saved", Duration::from_secs(10)).await;
    assert_eq!(saved["store"], "history", "{saved}");
    saved
}

/// A link planted as `tuned.jsonl` and another user's file there are refused
/// (`unsafe_file`), never written through; the variant runs all the same. Once
/// the file is the server's own again, the next search's best is kept.
#[tokio::test]
async fn a_planted_link_or_another_users_file_refuses_the_save_and_the_page_is_told() {
    let _lock = RUN_LOCK.lock().await;
    let root = tempfile::tempdir().unwrap();
    let state = root.path().join("state");
    let secret = root.path().join("secret");
    std::fs::write(&secret, "not for the runner\n").unwrap();
    let server = Server::start_with_state(&state);
    let file = state.join("tuned.jsonl");
    let mut socket = server.socket().await;

    std::os::unix::fs::symlink(&secret, &file).unwrap();
    let (result, kept) = tune(&mut socket, "busy-loop").await;
    refused_as(&kept, "unsafe_file");
    assert_eq!(
        std::fs::read_to_string(&secret).unwrap(),
        "not for the runner\n"
    );
    // Runnable now, at the sizes found, under its own id.
    let variant = listed(&server, "tuned-busy-loop")
        .await
        .expect("the variant is runnable until the server stops");
    assert_eq!(variant["buf_size"], result["best"]["buf_size"]);
    assert_eq!(run_tuned(&mut socket, &variant).await["ok"], true);
    std::fs::remove_file(&file).unwrap();

    std::fs::write(&file, "").unwrap();
    std::os::unix::fs::chown(&file, Some(NOBODY), Some(NOBODY)).unwrap();
    let (_, kept) = tune(&mut socket, "busy-loop").await;
    refused_as(&kept, "unsafe_file");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "");
    assert!(listed(&server, "tuned-busy-loop").await.is_some());
    std::fs::remove_file(&file).unwrap();

    // The server's own file again: kept, and said so.
    let (result, kept) = tune(&mut socket, "busy-loop").await;
    assert_eq!(kept["ok"], true, "{kept}");
    assert!(kept.get("error").is_none(), "{kept}");
    let text = std::fs::read_to_string(&file).unwrap();
    let line: Value = serde_json::from_str(text.trim_end()).unwrap();
    assert_eq!(line["id"], "tuned-busy-loop");
    assert_eq!(line["buf_size"], result["best"]["buf_size"]);
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );
}

/// A read-only state folder: the page hears `read_only`, the variant runs now,
/// and a restart (on the same read-only folder) no longer has it.
#[tokio::test]
async fn a_read_only_state_folder_keeps_the_variant_only_until_a_restart() {
    let _lock = RUN_LOCK.lock().await;
    let state = tempfile::tempdir().unwrap();
    let mut server = start_mounted(state.path(), Mount::ReadOnly)
        .expect("a read-only state folder still starts");
    let mut socket = server.socket().await;
    let (_, kept) = tune(&mut socket, "busy-loop").await;
    refused_as(&kept, "read_only");
    let variant = listed(&server, "tuned-busy-loop")
        .await
        .expect("the variant is runnable until the server stops");
    // It runs; its result, like any, cannot be kept in a read-only history.
    let saved = run_tuned(&mut socket, &variant).await;
    assert_eq!(saved["error"]["kind"], "read_only", "{saved}");
    drop(socket);
    assert!(server.terminate(Duration::from_secs(10)).is_some());
    assert!(!state.path().join("tuned.jsonl").exists());

    let server = start_mounted(state.path(), Mount::ReadOnly).expect("it starts again");
    assert_eq!(server.get("/api/tuned").await.json(), json!([]));
}

/// A full disk: the page hears `no_space`, and nothing torn is left in the file.
#[tokio::test]
async fn a_full_disk_refuses_the_save_and_the_page_is_told() {
    let _lock = RUN_LOCK.lock().await;
    let state = tempfile::tempdir().unwrap();
    let server = start_mounted(state.path(), Mount::Tmpfs(256 << 10))
        .expect("the server starts on a small tmpfs");
    fill(&inside(&server, &state.path().join("filler")));
    let mut socket = server.socket().await;
    let (_, kept) = tune(&mut socket, "busy-loop").await;
    refused_as(&kept, "no_space");
    assert!(listed(&server, "tuned-busy-loop").await.is_some());
    let file = inside(&server, &state.path().join("tuned.jsonl"));
    // Created, perhaps, but the line that did not fit was cut back.
    assert_eq!(std::fs::read(&file).map(|b| b.len()).unwrap_or(0), 0);
}

/// Writes `path` until its file system is full, to the last byte.
fn fill(path: &Path) {
    use std::io::Write;
    let mut file = std::fs::File::create(path).unwrap();
    let block = vec![b'x'; 4096];
    while file.write_all(&block).is_ok() {}
    while file.write_all(b"x").is_ok() {}
}

/// Two servers on one state folder: what one's search found, the other lists
/// at `/api/tuned` and runs by its id, without a restart; the file is read
/// again under the same rules as at start (a bad line refused and logged, a
/// link planted in its place not followed).
#[tokio::test]
async fn two_servers_on_one_state_folder_see_each_others_tuned_variants() {
    let _lock = RUN_LOCK.lock().await;
    let root = tempfile::tempdir().unwrap();
    let state = root.path().join("state");
    let one = Server::start_with_state(&state);
    let other = Server::start_with_state(&state);
    assert_eq!(other.get("/api/tuned").await.json(), json!([]));
    let mut socket = one.socket().await;

    // Found by one, listed by the other.
    let (result, kept) = tune(&mut socket, "busy-loop").await;
    assert_eq!(kept["ok"], true, "{kept}");
    let seen = listed(&other, "tuned-busy-loop")
        .await
        .expect("the other server lists the variant the first one found");
    assert_eq!(Some(seen.clone()), listed(&one, "tuned-busy-loop").await);
    assert_eq!(seen["buf_size"], result["best"]["buf_size"]);
    assert_eq!(seen["pipe_size"], result["best"]["pipe_size"]);

    // Found by one, run by the other by its id alone (no listing in between).
    let (result, kept) = tune(&mut socket, "write-read").await;
    assert_eq!(kept["ok"], true, "{kept}");
    let best = &result["best"];
    let mut theirs = other.socket().await;
    let saved = run_tuned(
        &mut theirs,
        &json!({"id":"tuned-write-read","buf_size":best["buf_size"],"pipe_size":best["pipe_size"]}),
    )
    .await;
    assert_eq!(saved["ok"], true, "{saved}");

    // A line no search could have written here, appended behind both servers'
    // backs, is refused on the re-read as at start, and said in the log.
    let file = state.join("tuned.jsonl");
    let bad = json!({"id":"tuned-vmsplice-splice","base":"vmsplice-splice","buf_size":1048576,
                     "pipe_size":1u64 << 40,"median":1.0,"found_at_ms":u64::MAX});
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap();
        writeln!(f, "{bad}").unwrap();
    }
    expect_refused(
        &mut theirs,
        run_message("tuned-vmsplice-splice", json!({})),
        "tune vmsplice-splice first",
    )
    .await;
    assert!(listed(&other, "tuned-vmsplice-splice").await.is_none());
    let log = other.stderr();
    assert!(
        log.lines()
            .any(|l| l.contains("tuned.jsonl line 3 is refused") && l.contains("pipe_size")),
        "{log}"
    );

    // A link planted in the file's place is not followed: the other server
    // keeps what it knows and takes nothing from where the link points.
    let secret = root.path().join("elsewhere.jsonl");
    let lure = json!({"id":"tuned-vmsplice-read","base":"vmsplice-read","buf_size":1048576,
                      "pipe_size":1048576,"median":1.0,"found_at_ms":u64::MAX});
    std::fs::write(&secret, format!("{lure}\n")).unwrap();
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink(&secret, &file).unwrap();
    let list = other.get("/api/tuned").await.json();
    let ids: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["tuned-busy-loop", "tuned-write-read"], "{list}");
}
