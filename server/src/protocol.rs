//! The WebSocket protocol of `/api/run`: JSON text messages tagged by `type`.

use pipebench::plan::{RunParams, RunPlan};
use pipebench::report::RunResult;
use pipebench::runner::Progress;
use serde::Serialize;
use serde_json::Value;

/// A message from the page.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientMessage {
    /// `{"type":"run","step":ID,"params":{...}}`
    Run {
        /// Step id.
        step: String,
        /// What the reader changed (sizes as numbers or strings like "1GiB").
        params: RunParams,
    },
    /// `{"type":"cancel"}`
    Cancel,
}

/// The parameters a run actually uses, after defaults and validation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EffectiveParams {
    /// Bytes to pipe (the cap, when there is a time budget).
    pub bytes: u64,
    /// Chunk size.
    pub buf_size: u64,
    /// Time budget in seconds, if any.
    pub seconds: Option<f64>,
    /// Writer's CPU.
    pub writer_cpu: Option<usize>,
    /// Reader's CPU.
    pub reader_cpu: Option<usize>,
}

impl From<&RunPlan> for EffectiveParams {
    fn from(plan: &RunPlan) -> Self {
        EffectiveParams {
            bytes: plan.writer.common.bytes.bytes(),
            buf_size: plan.writer.common.buf_size.bytes(),
            seconds: plan.time_budget.map(|d| d.as_secs_f64()),
            writer_cpu: plan.writer.common.cpu,
            reader_cpu: plan.reader.common.cpu,
        }
    }
}

/// A message to the page.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ServerMessage {
    /// Waiting for the runs ahead; 1 means next.
    Queued {
        /// Place in the queue, from 1.
        position: usize,
    },
    /// Both ends are running.
    Started {
        /// Step id.
        step: String,
        /// The parameters in force.
        params: EffectiveParams,
        /// Writer and reader process ids.
        pids: [u32; 2],
        /// Things the reader should know (e.g. only one CPU).
        warnings: Vec<String>,
    },
    /// A sample, at least ten a second.
    Progress {
        /// Bytes the reader has received.
        bytes: u64,
        /// Milliseconds since the start.
        elapsed_ms: f64,
        /// Throughput over the last sample, GiB/s.
        gib_per_s: f64,
    },
    /// The run finished: pipebench's result, fields at the top level.
    Result(Box<RunResult>),
    /// The run was cancelled.
    Cancelled,
    /// Something went wrong; the connection stays usable.
    Error {
        /// What, and what to do.
        message: String,
    },
}

impl ServerMessage {
    /// An error message.
    pub fn error(message: impl Into<String>) -> Self {
        ServerMessage::Error {
            message: message.into(),
        }
    }

    /// Whether this ends a run (nothing more will come for it).
    pub fn is_final(&self) -> bool {
        matches!(
            self,
            ServerMessage::Result(_) | ServerMessage::Cancelled | ServerMessage::Error { .. }
        )
    }

    /// The JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("server messages serialise")
    }

    /// The JSON text of a message that belongs to run `run` (the scheduler's job
    /// id), tagged `"run": N` first so a page can tell which run it is about.
    /// Refusals of a message, which belong to no run, use [`Self::to_json`].
    pub fn to_json_for_run(&self, run: u64) -> String {
        let json = self.to_json();
        // Every message is an object with at least its `type`: `{"type":...}`.
        debug_assert!(json.starts_with("{\""));
        format!("{{\"run\":{run},{}", &json[1..])
    }
}

impl From<Progress> for ServerMessage {
    fn from(p: Progress) -> Self {
        ServerMessage::Progress {
            bytes: p.bytes,
            elapsed_ms: p.elapsed_ms,
            gib_per_s: p.gib_per_s,
        }
    }
}

/// An example of a good message, quoted in errors.
const EXAMPLE: &str = r#"{"type":"run","step":"write-read","params":{"bytes":"1GiB"}}"#;

/// Reads a message; the error is a sentence for the page.
pub fn parse(text: &str) -> Result<ClientMessage, String> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| format!("not valid JSON ({e}); send e.g. {EXAMPLE}"))?;
    let Value::Object(mut object) = value else {
        return Err(format!("expected a JSON object such as {EXAMPLE}"));
    };
    let kind = match object.remove("type") {
        Some(Value::String(kind)) => kind,
        Some(_) => return Err("`type` must be a string: \"run\" or \"cancel\"".into()),
        None => {
            return Err(format!(
                "missing `type`; send e.g. {EXAMPLE} or {{\"type\":\"cancel\"}}"
            ))
        }
    };
    match kind.as_str() {
        "run" => {
            let step = match object.remove("step") {
                Some(Value::String(step)) => step,
                Some(_) => return Err("`step` must be a string, the id of a step".into()),
                None => return Err(format!("a run needs a `step`; send e.g. {EXAMPLE}")),
            };
            let params = match object.remove("params") {
                None | Some(Value::Null) => RunParams::default(),
                Some(params @ Value::Object(_)) => {
                    serde_json::from_value(params).map_err(|e| format!("bad params: {e}"))?
                }
                Some(_) => return Err("`params` must be an object".into()),
            };
            if let Some(extra) = object.keys().next() {
                return Err(format!("unknown field `{extra}` in a run message"));
            }
            Ok(ClientMessage::Run { step, params })
        }
        "cancel" => match object.keys().next() {
            Some(extra) => Err(format!("unknown field `{extra}` in a cancel message")),
            None => Ok(ClientMessage::Cancel),
        },
        other => Err(format!(
            "unknown message type `{other}`: expected \"run\" or \"cancel\""
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pipebench::size::{ByteSize, GIB};

    #[test]
    fn parses_runs_and_cancels() {
        let run =
            parse(r#"{"type":"run","step":"busy-loop","params":{"bytes":"1GiB","seconds":2}}"#)
                .unwrap();
        let ClientMessage::Run { step, params } = run else {
            panic!()
        };
        assert_eq!(step, "busy-loop");
        assert_eq!(params.bytes, Some(ByteSize(GIB)));
        assert_eq!(params.seconds, Some(2.0));
        assert_eq!(
            parse(r#"{"type":"run","step":"x"}"#).unwrap(),
            ClientMessage::Run {
                step: "x".into(),
                params: RunParams::default()
            }
        );
        assert_eq!(
            parse(r#"{"type":"cancel"}"#).unwrap(),
            ClientMessage::Cancel
        );
    }

    #[test]
    fn explains_bad_messages() {
        for (text, expect) in [
            ("nope", "not valid JSON"),
            ("[1]", "JSON object"),
            (r#"{"step":"x"}"#, "missing `type`"),
            (r#"{"type":5}"#, "must be a string"),
            (r#"{"type":"dance"}"#, "unknown message type `dance`"),
            (r#"{"type":"run"}"#, "needs a `step`"),
            (r#"{"type":"run","step":7}"#, "`step` must be a string"),
            (
                r#"{"type":"run","step":"x","params":[]}"#,
                "`params` must be an object",
            ),
            (
                r#"{"type":"run","step":"x","params":{"bytes":true}}"#,
                "bad params",
            ),
            (r#"{"type":"run","step":"x","params":{"bites":1}}"#, "bites"),
            (
                r#"{"type":"run","step":"x","params":{"seconds":"soon"}}"#,
                "bad params",
            ),
            (
                r#"{"type":"run","step":"x","oops":1}"#,
                "unknown field `oops`",
            ),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.contains(expect), "{text}: {err}");
        }
    }

    #[test]
    fn server_messages_are_tagged() {
        assert_eq!(
            ServerMessage::Queued { position: 2 }.to_json(),
            r#"{"type":"queued","position":2}"#
        );
        assert_eq!(
            ServerMessage::Cancelled.to_json(),
            r#"{"type":"cancelled"}"#
        );
        assert_eq!(
            ServerMessage::error("x").to_json(),
            r#"{"type":"error","message":"x"}"#
        );
        assert_eq!(
            ServerMessage::Queued { position: 2 }.to_json_for_run(7),
            r#"{"run":7,"type":"queued","position":2}"#
        );
        assert_eq!(
            ServerMessage::Cancelled.to_json_for_run(1),
            r#"{"run":1,"type":"cancelled"}"#
        );
        assert!(
            ServerMessage::error("x").is_final()
                && !ServerMessage::Queued { position: 1 }.is_final()
        );
    }
}
