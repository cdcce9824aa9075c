//! The messages added past the article (latency, tool, tune, shared_pipe,
//! compare) hold to the security rules every message does: a field out of its
//! bounds, a field the message does not take (a lab tag among them: none of
//! these is a lab's task), a command where an id belongs or text with control
//! characters is refused with an `error` that names the field and the value,
//! belongs to no run, queues nothing, and leaves the connection working.

use crate::common::{recv, send, InProcess, Socket};
use serde_json::{json, Value};

/// Sends `message` and checks the refusal: an `error` of no run whose message
/// contains `says` and carries no raw control character, and `kind` as its
/// reason's kind when given.
async fn refused(socket: &mut Socket, message: Value, says: &str, kind: Option<&str>) {
    send(socket, message.clone()).await;
    let reply = recv(socket).await;
    assert_eq!(reply["type"], "error", "{message}: {reply}");
    assert!(
        reply.get("run").is_none(),
        "{message}: a refusal belongs to no run"
    );
    let text = reply["message"].as_str().unwrap();
    assert!(
        text.contains(says),
        "{message}: expected {says:?} in {text:?}"
    );
    assert!(!text.chars().any(char::is_control), "{message}: {text:?}");
    if let Some(kind) = kind {
        assert_eq!(reply["reason"]["kind"], kind, "{message}: {reply}");
    }
}

#[tokio::test]
async fn latency_messages_out_of_bounds_are_refused_by_field_and_value() {
    let server = InProcess::start().await;
    let mut socket = server.socket().await;
    let cases = [
        (
            json!({"type":"latency","mechanism":"nope"}),
            "nope",
            "unknown_mechanism",
        ),
        (
            json!({"type":"latency","mechanism":"pipe","round_trips":100_001}),
            "100001",
            "out_of_range",
        ),
        (
            json!({"type":"latency","mechanism":"pipe","size":0}),
            "0",
            "out_of_range",
        ),
        (
            json!({"type":"latency","mechanism":"pipe","size":"1GiB"}),
            "1073741824",
            "out_of_range",
        ),
        (
            json!({"type":"latency","mechanism":"pipe","cpus":[0,4096]}),
            "4096",
            "out_of_range",
        ),
        (
            json!({"type":"latency","mechanism":"shm-ring","mode":"blocking"}),
            "shm-ring",
            "no_such_mode",
        ),
    ];
    for (message, says, kind) in cases {
        refused(&mut socket, message, says, Some(kind)).await;
    }
    // Not a latency field, not a mode, not a list of two CPUs: the parser's refusals.
    for (message, says) in [
        (
            json!({"type":"latency","mechanism":"pipe","command":"sh"}),
            "unknown field `command`",
        ),
        (
            json!({"type":"latency","mechanism":"pipe","mode":"fast"}),
            "fast",
        ),
        (
            json!({"type":"latency","mechanism":"pipe","cpus":[0,1,2]}),
            "`cpus` must be two CPU numbers [ping, pong], not [0, 1, 2]",
        ),
        (
            json!({"type":"latency","mechanism":"pipe","lab":{"id":"no-such-lab","task":"x"}}),
            "no-such-lab",
        ),
    ] {
        refused(&mut socket, message, says, None).await;
    }
    let health = server.get("/api/health").await.json();
    assert_eq!(
        (health["running"].clone(), health["queued"].clone()),
        (json!(false), json!(0)),
        "{health}"
    );
}

#[tokio::test]
async fn tool_messages_name_a_tool_of_the_table_and_nothing_else() {
    let server = InProcess::start().await;
    let mut socket = server.socket().await;
    for (message, says) in [
        (json!({"type":"tool","tool":"sh"}), "\"sh\""),
        (json!({"type":"tool","tool":"/bin/sh"}), "/bin/sh"),
        (
            json!({"type":"tool","tool":"cat; rm -rf /"}),
            "cat; rm -rf /",
        ),
        (
            json!({"type":"tool","tool":"../../bin/cat"}),
            "../../bin/cat",
        ),
        // Escaped when quoted back, never raw.
        (json!({"type":"tool","tool":"cat\u{1b}[2J\n"}), "\\u{1b}[2J"),
        (
            json!({"type":"tool","tool":"cat","bytes":0}),
            "out of range",
        ),
        (
            json!({"type":"tool","tool":"cat","bytes":"2GiB"}),
            "2147483648",
        ),
        (json!({"type":"tool","tool":"yes","as":"reader"}), "reader"),
        (json!({"type":"tool","tool":"cat","as":"both"}), "both"),
        (
            json!({"type":"tool","tool":"cat","args":["/etc/shadow"]}),
            "unknown field `args`",
        ),
        (json!({"type":"tool"}), "`tool`"),
    ] {
        refused(&mut socket, message, says, None).await;
    }
    let health = server.get("/api/health").await.json();
    assert_eq!(health["queued"], 0, "{health}");
}

/// None of the jobs past the article is a lab task: a lab tag on one is an
/// unknown field, refused before anything runs (the lab would otherwise record
/// a figure its task does not ask for).
#[tokio::test]
async fn a_lab_tag_on_a_tool_search_sweep_or_comparison_is_refused() {
    let server = InProcess::start().await;
    let mut socket = server.socket().await;
    let lab = json!({"id":"lab-1","task":"write-read"});
    for message in [
        json!({"type":"tool","tool":"cat","lab":lab}),
        json!({"type":"tune","step":"write-read","lab":lab}),
        json!({"type":"shared_pipe","writers":[1],"readers":[1],"msg_sizes":[64],"lab":lab}),
        json!({"type":"compare","a":"write-read","b":"busy-loop","lab":lab}),
    ] {
        refused(&mut socket, message, "lab", None).await;
    }
    let health = server.get("/api/health").await.json();
    assert_eq!(health["queued"], 0, "{health}");
}

/// A lab-tagged run takes exactly its task's options: `profile` (perf pauses
/// the ends, so the figure would not be one) and the sizes or CPUs the task
/// fixes are refused by name, before anything runs or is recorded; the same
/// run without the tag may set them.
#[tokio::test]
async fn a_lab_run_takes_only_its_tasks_options() {
    let server = InProcess::start().await;
    let mut socket = server.socket().await;
    let lab = json!({"id":"variance","task":"repeat"});
    for (params, says) in [
        (json!({"profile":true}), "profile"),
        (json!({"pipe_size":"1MiB"}), "pipe_size"),
        (json!({"buf_size":"64KiB"}), "buf_size"),
        (json!({"writer_cpu":0}), "writer_cpu"),
        (json!({"trace_syscalls":false}), "trace_syscalls"),
    ] {
        let message = json!({"type":"run","step":"write-read","params":params,"lab":lab});
        refused(&mut socket, message, says, None).await;
    }
    let labs = server.get("/api/labs").await.json();
    // Nothing recorded for the lab: no measurement (nor any record at all).
    let recorded = labs["labs"]
        .get("variance")
        .map_or(0, |lab| lab["measurements"].as_array().map_or(0, Vec::len));
    assert_eq!(recorded, 0, "{labs}");
    let health = server.get("/api/health").await.json();
    assert_eq!(health["queued"], 0, "{health}");
}
