//! A page asks a root server to run the tool `cat`, whose program another
//! local user (`nobody`) planted on the server's `PATH`: a link in a sticky
//! folder everyone may write, leading to a root-owned program. The run is
//! refused before anything starts, and the page is told which candidate was
//! passed over and why.

use std::os::unix::fs::PermissionsExt;

use serde_json::json;

use crate::common::{as_nobody, recv, send, Server};

#[tokio::test]
async fn a_tool_program_planted_on_a_root_servers_path_is_not_run_from_the_page() {
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let sticky = root.path().join("bin");
    std::fs::create_dir(&sticky).unwrap();
    std::fs::set_permissions(&sticky, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let cat = std::path::Path::new("/bin/cat").canonicalize().unwrap();
    let planted = sticky.join("cat");
    as_nobody("ln", &["-s".as_ref(), cat.as_os_str(), planted.as_os_str()]);
    let server = Server::start_with_env(&[("PATH", sticky.to_str().unwrap())]);
    let mut socket = server.socket().await;
    send(
        &mut socket,
        json!({"type":"tool","tool":"cat","as":"writer","bytes":"1MiB"}),
    )
    .await;
    let reply = recv(&mut socket).await;
    assert_eq!(reply["type"], "error", "{reply}");
    let text = reply["message"].as_str().unwrap();
    assert!(text.contains("cat is not installed here"), "{text}");
    assert!(text.contains(&planted.display().to_string()), "{text}");
    assert!(
        text.contains("may be written by others (mode 1777)"),
        "{text}"
    );
    let health = server.get("/api/health").await.json();
    assert_eq!(health["queued"], 0, "{health}");
}
