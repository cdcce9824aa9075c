//! The state folder swapped for a link after the server started: another user
//! (`nobody`) who may rename entries in the folder above it (0777, no sticky
//! bit) moves root's state folder aside and puts a link to a root-only folder in
//! its place. The server holds the folder it checked at start open and reaches
//! every state file through that descriptor, so the swap redirects nothing:
//! results and lab records still go to, and are read from, the folder it
//! checked; the root-only folder is neither read nor written.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use serde_json::json;

use crate::common::{as_nobody, open_tempdir, recv_until, send, Server, RUN_LOCK};

const SECRET_RESULTS: &str = "{\"root\":\"hunter2\"}\n";

#[tokio::test]
async fn a_state_folder_swapped_for_a_link_after_start_redirects_nothing() {
    let root = open_tempdir();
    let shared = root.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
    let secret = root.path().join("secret");
    std::fs::create_dir(&secret).unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::write(secret.join("results.jsonl"), SECRET_RESULTS).unwrap();
    std::fs::write(secret.join("labs.jsonl"), b"").unwrap();
    let state = shared.join("state");
    let server = Server::start_with_state(&state);
    let mut socket = server.socket().await;
    send(
        &mut socket,
        json!({"type":"predict","lab":"vmsplice-safety","value":0.3}),
    )
    .await;
    let (saved, _) = recv_until(&mut socket, "saved", Duration::from_secs(10)).await;
    assert_eq!(saved["ok"], true, "{saved}");

    // The swap: root's folder renamed aside (allowed: the parent has no sticky
    // bit), a link to the root-only folder in its place.
    let moved = shared.join("moved");
    as_nobody("mv", &[state.as_os_str(), moved.as_os_str()]);
    as_nobody(
        "ln",
        &["-s".as_ref(), secret.as_os_str(), state.as_os_str()],
    );
    assert!(state.symlink_metadata().unwrap().file_type().is_symlink());

    // Lab records are read from, and saved into, the folder checked at start.
    let labs = server.get("/api/labs").await;
    assert_eq!(labs.status, 200, "{}", labs.body);
    assert_eq!(
        labs.json()["labs"]["vmsplice-safety"]["prediction"]["value"],
        0.3
    );
    {
        let _lock = RUN_LOCK.lock().await;
        send(
            &mut socket,
            json!({"type":"run","step":"write-read","params":{"bytes":"1MiB","quiet":true}}),
        )
        .await;
        recv_until(&mut socket, "result", Duration::from_secs(30)).await;
        let (saved, _) = recv_until(&mut socket, "saved", Duration::from_secs(10)).await;
        assert_eq!(saved["store"], "history", "{saved}");
        assert_eq!(saved["ok"], true, "{saved}");
    }
    assert_eq!(
        std::fs::read_to_string(secret.join("results.jsonl")).unwrap(),
        SECRET_RESULTS,
        "the root-only history was appended to"
    );
    assert_eq!(std::fs::read(secret.join("labs.jsonl")).unwrap(), b"");
    let names: Vec<_> = std::fs::read_dir(&secret)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(
        names.len(),
        2,
        "the server made files in the root-only folder: {names:?}"
    );
    let kept = std::fs::read_to_string(moved.join("results.jsonl")).unwrap();
    assert_eq!(kept.lines().count(), 1, "{kept}");
    let results = server.get("/api/results").await;
    assert!(!results.body.contains("hunter2"), "{}", results.body);
}
