//! Tests of `protocol`.

use super::*;
use crate::jobs::ipc::IpcMessage;
use crate::jobs::message::OutOfRange;
use crate::jobs::pages::PagesMessage;
use crate::jobs::run::RunMessage;
use crate::jobs::shared_pipe::SharedMessage;
use crate::jobs::sweep::SweepMessage;
use crate::jobs::tool::ToolMessage;
use crate::jobs::tune::TuneMessage;
use crate::labs::LabTag;
use crate::params::ipc::IpcRunParams;
use pipebench::engine::sweep::SweepParam;
use pipebench::size::{ByteSize, GIB};
use pipebench::steps::plan::RunParams;

/// Each message is refused as a bad message of its own type (a field missing,
/// unknown or of the wrong shape), whatever the words of its reason.
fn refused(cases: &[&str]) {
    for text in cases {
        let kind: Value = serde_json::from_str(text).unwrap();
        match parse(text) {
            Err(MessageError::Invalid { kind: found, .. }) => {
                assert_eq!(kind["type"], found, "{text}")
            }
            other => panic!("{text}: {other:?}"),
        }
    }
}

/// The job a message asks for, which must parse.
fn job(text: &str) -> JobRequest {
    match parse(text) {
        Ok(ClientMessage::Job(job)) => job,
        other => panic!("{text}: {other:?}"),
    }
}

#[test]
fn a_tool_message_names_a_tool_and_nothing_else() {
    use pipebench::steps::tools::ToolEnd;
    assert_eq!(
        job(r#"{"type":"tool","tool":"cat","as":"reader","bytes":"16MiB"}"#),
        JobRequest::Tool(ToolMessage {
            tool: "cat".into(),
            side: Some(ToolEnd::Reader),
            bytes: Some(ByteSize(16 << 20)),
        })
    );
    assert_eq!(
        job(r#"{"type":"tool","tool":"yes"}"#),
        JobRequest::Tool(ToolMessage {
            tool: "yes".into(),
            side: None,
            bytes: None,
        })
    );
    // No command, no arguments: only an id from the table.
    for bad in [
        r#"{"type":"tool","tool":"cat","command":"rm -rf /"}"#,
        r#"{"type":"tool","tool":"cat","args":["/etc/shadow"]}"#,
        r#"{"type":"tool","tool":"cat","as":"both"}"#,
        r#"{"type":"tool","tool":["cat"]}"#,
    ] {
        assert!(parse(bad).is_err(), "{bad}");
    }
    // An id the table lacks is refused before anything starts.
    assert!(crate::jobs::tool::tool_job("sh", ToolEnd::Writer, None).is_err());
    assert!(crate::jobs::tool::tool_job("cat", ToolEnd::Writer, None).is_ok());
}

#[test]
fn parses_tune_and_shared_pipe_messages() {
    assert_eq!(
        job(TuneMessage::EXAMPLE),
        JobRequest::Tune(TuneMessage {
            step: "busy-loop".into(),
            budget: Some(20.0)
        })
    );
    assert_eq!(
        job(SharedMessage::EXAMPLE),
        JobRequest::SharedPipe(SharedMessage {
            writers: vec![1, 2],
            readers: vec![1],
            msg_sizes: vec![ByteSize(4 << 10), ByteSize(64 << 10)],
            bytes: Some(ByteSize(16 << 20)),
            profile: None,
        })
    );
    let profiled = job(
        r#"{"type":"shared_pipe","writers":[2],"readers":[1],"msg_sizes":[4096],"profile":true}"#,
    );
    assert!(
        matches!(&profiled, JobRequest::SharedPipe(r) if r.profile == Some(true)),
        "{profiled:?}"
    );
    refused(&[
        r#"{"type":"shared_pipe","writers":[2],"readers":[1],"msg_sizes":[4096],"profile":"yes"}"#,
    ]);
    refused(&[
        r#"{"type":"tune"}"#,
        r#"{"type":"tune","step":"x","budget":"long"}"#,
        r#"{"type":"tune","step":"x","argv":["sh"]}"#,
        r#"{"type":"shared_pipe","readers":[1],"msg_sizes":[64]}"#,
        r#"{"type":"shared_pipe","writers":[-1],"readers":[1],"msg_sizes":[64]}"#,
        r#"{"type":"shared_pipe","writers":[1],"readers":[1],"msg_sizes":["big"]}"#,
        r#"{"type":"shared_pipe","writers":[1],"readers":[1],"msg_sizes":[64],"x":1}"#,
    ]);
}

#[test]
fn parses_runs_and_cancels() {
    let run = parse(r#"{"type":"run","step":"busy-loop","params":{"bytes":"1GiB","seconds":2}}"#)
        .unwrap();
    let ClientMessage::Job(JobRequest::Run(RunMessage { step, params, .. })) = run else {
        panic!()
    };
    assert_eq!(step, "busy-loop");
    assert_eq!(params.bytes, Some(ByteSize(GIB)));
    assert_eq!(params.seconds, Some(2.0));
    assert_eq!(
        job(r#"{"type":"run","step":"x"}"#),
        JobRequest::Run(RunMessage {
            step: "x".into(),
            params: RunParams::default(),
            lab: None,
        })
    );
    assert_eq!(
        parse(r#"{"type":"cancel"}"#).unwrap(),
        ClientMessage::Cancel
    );
}

#[test]
fn parses_sweeps_and_explains_bad_ones() {
    let sweep = parse(SweepMessage::EXAMPLE).unwrap();
    assert_eq!(
        sweep,
        ClientMessage::Job(JobRequest::Sweep(SweepMessage {
            step: "write-read".into(),
            param: SweepParam::PipeSize,
            values: vec![ByteSize(16 << 10), ByteSize(64 << 10)],
            repeats: Some(1),
            params: RunParams {
                seconds: Some(1.0),
                ..Default::default()
            },
            lab: None,
        }))
    );
    refused(&[
        r#"{"type":"sweep","step":"x"}"#,
        r#"{"type":"sweep","step":"x","param":"colour","values":[1]}"#,
        r#"{"type":"sweep","step":"x","param":"buf_size"}"#,
        r#"{"type":"sweep","step":"x","param":"buf_size","values":["lots"]}"#,
        r#"{"type":"sweep","step":"x","param":"buf_size","values":[4096],"oops":1}"#,
    ]);
    assert_eq!(
        parse(r#"{"type":"sweep","step":"x","param":"buf_size","values":[4096],"repeats":9}"#),
        Err(MessageError::OutOfRange(OutOfRange {
            field: "repeats",
            value: "9".into(),
            bounds: "1 to 5".into(),
        }))
    );
}

#[test]
fn parses_lab_messages() {
    let run =
        parse(r#"{"type":"run","step":"write-read","lab":{"id":"variance","task":"repeat"}}"#)
            .unwrap();
    assert!(
        matches!(run, ClientMessage::Job(JobRequest::Run(RunMessage { lab: Some(LabTag { ref id, .. }), .. })) if id == "variance")
    );
    assert_eq!(
        parse(r#"{"type":"predict","lab":"variance","value":3}"#).unwrap(),
        ClientMessage::Predict {
            lab: "variance".into(),
            value: serde_json::json!(3)
        }
    );
    refused(&[
        r#"{"type":"predict","lab":"variance"}"#,
        r#"{"type":"predict","value":1}"#,
        r#"{"type":"run","step":"x","lab":{"id":"v"}}"#,
        r#"{"type":"reset_lab","lab":"v","x":1}"#,
    ]);
}

#[test]
fn parses_pages_and_explains_bad_ones() {
    assert_eq!(
        job(PagesMessage::EXAMPLE),
        JobRequest::Pages(PagesMessage {
            step: "huge-pages".into(),
            touch: Some(false)
        })
    );
    assert_eq!(
        job(r#"{"type":"pages","step":"x"}"#),
        JobRequest::Pages(PagesMessage {
            step: "x".into(),
            touch: None
        })
    );
    refused(&[
        r#"{"type":"pages"}"#,
        r#"{"type":"pages","step":"x","touch":"yes"}"#,
        r#"{"type":"pages","step":"x","depth":3}"#,
    ]);
}

#[test]
fn explains_bad_messages() {
    assert!(matches!(parse("nope"), Err(MessageError::NotJson { .. })));
    assert_eq!(parse("[1]"), Err(MessageError::NotAnObject));
    assert_eq!(parse(r#"{"step":"x"}"#), Err(MessageError::NoType));
    assert_eq!(parse(r#"{"type":5}"#), Err(MessageError::NoType));
    assert_eq!(
        parse(r#"{"type":"dance"}"#),
        Err(MessageError::UnknownType {
            kind: "dance".into(),
            known: TYPES
        })
    );
    // Every refusal quotes a good message of its type, which parses.
    for &kind in TYPES {
        let good = example(kind);
        assert!(parse(good).is_ok(), "{kind}: {good}");
        assert_eq!(serde_json::from_str::<Value>(good).unwrap()["type"], kind);
    }
    refused(&[
        r#"{"type":"run"}"#,
        r#"{"type":"run","step":7}"#,
        r#"{"type":"run","step":"x","params":[]}"#,
        r#"{"type":"run","step":"x","params":{"bytes":true}}"#,
        r#"{"type":"run","step":"x","params":{"bites":1}}"#,
        r#"{"type":"run","step":"x","params":{"seconds":"soon"}}"#,
        r#"{"type":"run","step":"x","oops":1}"#,
    ]);
}

#[test]
fn parses_ipc_runs_and_explains_bad_ones() {
    assert_eq!(
        job(IpcMessage::EXAMPLE),
        JobRequest::Ipc(IpcMessage {
            mechanism: "posix-shm".into(),
            params: IpcRunParams {
                bytes: Some(ByteSize(200 << 20)),
                chunk: Some(ByteSize(64 << 10)),
                counts: None,
                quiet: None,
            },
            lab: None,
        })
    );
    let tagged = parse(
            r#"{"type":"ipc","mechanism":"posix-shm","params":{"bytes":"4MiB"},"lab":{"id":"choose-ipc","task":"posix-shm"}}"#,
        )
        .unwrap();
    assert!(matches!(
        tagged,
        ClientMessage::Job(JobRequest::Ipc(IpcMessage { lab: Some(LabTag { ref task, .. }), .. })) if task == "posix-shm"
    ));
    refused(&[
        r#"{"type":"ipc"}"#,
        r#"{"type":"ipc","mechanism":"x","params":{"dir":"/"}}"#,
        r#"{"type":"ipc","mechanism":"x","params":7}"#,
        r#"{"type":"ipc","mechanism":"x","oops":1}"#,
    ]);
}

#[test]
fn ipc_errors_carry_their_kind() {
    let err = crate::params::ipc::plan("nope", &IpcRunParams::default()).unwrap_err();
    let json =
        pipebench::engine::event::Event::Error(pipebench::engine::event::Failure::from(&err))
            .to_json();
    assert!(
        json.contains(r#""reason":{"kind":"unknown_mechanism"}"#),
        "{json}"
    );
}

#[test]
fn a_refusal_names_the_field_it_is_about() {
    for (text, field) in [
        (r#"{"type":"run","step":42}"#, "`step`"),
        (
            r#"{"type":"run","step":"x","params":{"bytes":true}}"#,
            "`params.bytes`",
        ),
        (r#"{"type":"tool","tool":"cat","as":"both"}"#, "`as`"),
        (
            r#"{"type":"shared_pipe","writers":[1],"readers":[1],"msg_sizes":["big"]}"#,
            "`msg_sizes[0]`",
        ),
    ] {
        match parse(text) {
            Err(MessageError::Invalid { reason, .. }) => {
                assert!(reason.contains(field), "{text}: {reason}")
            }
            other => panic!("{text}: {other:?}"),
        }
    }
}
