//! The WebSocket protocol of `/api/run`: JSON text messages tagged by `type`.
//!
//! What the page sends is parsed here ([`ClientMessage`]); what a run says goes
//! out as the engine's own events (`pipebench::engine::event`), and the few
//! replies that belong to no run are [`Reply`]s.

use pipebench::engine::sweep::SweepParam;
use pipebench::size::ByteSize;
use pipebench::steps::plan::RunParams;
use serde::Serialize;
use serde_json::Value;

use crate::ipc_page::IpcRunParams;
use crate::labs::LabTag;
use crate::statefile::SaveError;

/// Most runs per value a sweep from the page may ask for.
pub const MAX_SWEEP_REPEATS: usize = 5;

/// A message from the page.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientMessage {
    /// `{"type":"run","step":ID,"params":{...}}`
    Run {
        /// Step id.
        step: String,
        /// What the reader changed (sizes as numbers or strings like "1GiB").
        params: RunParams,
        /// The lab task this run is for (`"lab": {"id": LAB, "task": TASK}`).
        lab: Option<LabTag>,
    },
    /// `{"type":"sweep","step":ID,"param":"pipe_size","values":[...],"repeats":N,"params":{...}}`
    Sweep {
        /// Step id.
        step: String,
        /// What varies.
        param: SweepParam,
        /// Its values (numbers of bytes or strings like "64KiB"), increasing.
        values: Vec<ByteSize>,
        /// Runs per value.
        repeats: usize,
        /// The rest of each run's parameters.
        params: RunParams,
        /// The lab task this sweep is for.
        lab: Option<LabTag>,
    },
    /// `{"type":"ipc","mechanism":ID,"params":{"bytes":...,"chunk":...}}`: one run
    /// of the IPC lab.
    Ipc {
        /// Mechanism id.
        mechanism: String,
        /// What the reader chose.
        params: IpcRunParams,
        /// The lab task this run is for (`"lab": {"id": LAB, "task": TASK}`).
        lab: Option<LabTag>,
    },
    /// `{"type":"pages","step":ID,"touch":BOOL}`: the step's writer buffers, page
    /// by page (`touch` overrides whether the buffers are written first).
    Pages {
        /// Step id.
        step: String,
        /// Write the buffers before looking (default: as the step's writer does).
        touch: Option<bool>,
    },
    /// `{"type":"cancel"}`: stops the run, or the whole sweep.
    Cancel,
    /// `{"type":"predict","lab":LAB,"value":V}`: the student's prediction.
    Predict {
        /// Lab id.
        lab: String,
        /// A number, or a task id for a choice question.
        value: Value,
    },
    /// `{"type":"reset_lab","lab":LAB}`: start a lab over.
    ResetLab {
        /// Lab id.
        lab: String,
    },
    /// `{"type":"wakeup"}`: measure one wakeup's cost (queued like a run).
    Wakeup,
    /// `{"type":"latency","mechanism":ID,"mode":...,"size":...,"cpus":[A,B],
    /// "round_trips":N}`: one configuration of the latency lab.
    Latency(crate::latency_page::LatencyRunParams),
    /// `{"type":"tool","tool":ID,"as":"writer"|"reader","bytes":SIZE}`: a program
    /// of the vetted tool table as one end of a pipe (an id, never a command).
    Tool {
        /// The tool's id.
        tool: String,
        /// Which end it is (default: the writer).
        side: pipebench::steps::tools::Side,
        /// Bytes to move (default: the page's).
        bytes: Option<ByteSize>,
    },
    /// `{"type":"tune","step":ID,"budget":SECONDS}`: bytes per call × pipe
    /// capacity searched for a step (budget within the server's bounds).
    Tune {
        /// Step id.
        step: String,
        /// Seconds of runs in all (default: the server's).
        budget: Option<f64>,
    },
    /// `{"type":"shared_pipe","writers":[1,2],"readers":[1],"msg_sizes":["4KiB"],
    /// "bytes":"16MiB"}`: many writers and readers on one pipe.
    SharedPipe(crate::past_page::SharedRequest),
    /// `{"type":"compare","a":STEP,"b":STEP,"pairs":N,"budget":M,"params":{...}}`:
    /// two steps head to head in quiet interleaved pairs, until the verdict is
    /// resolved or the budget of pairs is spent.
    Compare(crate::compare_page::CompareRequest),
}

/// A reply to a message that is not about a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Reply {
    /// Whether something was saved, and why not: a lab record (a prediction,
    /// a fresh start, or a lab-tagged result, then right after that result or
    /// point) or a result in the history (after every `result` and `point`,
    /// once the disk has it or could not take it). For a run it carries
    /// `"run"`; a sweep's `done` comes after its last run's.
    Saved {
        /// Which file: the results history or the lab records.
        store: SaveStore,
        /// The lab, for a lab record.
        #[serde(skip_serializing_if = "Option::is_none")]
        lab: Option<String>,
        /// Whether it is on disk.
        ok: bool,
        /// Why not: `kind` (`not_kept`, `no_space`, `quota`, `read_only`,
        /// `unsafe_file`, `failed`) and a sentence.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<SaveError>,
    },
}

/// The file a `saved` message is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SaveStore {
    /// `results.jsonl`.
    History,
    /// `labs.jsonl`.
    Labs,
}

impl Reply {
    /// The `saved` message of a save's outcome in `store` (for `lab`).
    pub fn saved(store: SaveStore, lab: Option<String>, outcome: Result<(), SaveError>) -> Self {
        Reply::Saved {
            store,
            lab,
            ok: outcome.is_ok(),
            error: outcome.err(),
        }
    }

    /// The JSON text of a reply that belongs to run `run`, tagged `"run": N`
    /// first as the run's own events are.
    pub fn to_json_for_run(&self, run: u64) -> String {
        let json = self.to_json();
        // A reply is an object with at least its `type`: `{"type":...}`.
        debug_assert!(json.starts_with("{\""));
        format!("{{\"run\":{run},{}", &json[1..])
    }

    /// The JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("replies serialise")
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
            let params = take_params(&mut object)?;
            let lab = take_lab(&mut object)?;
            no_more_fields(&object, "run")?;
            Ok(ClientMessage::Run { step, params, lab })
        }
        "sweep" => parse_sweep(object),
        "predict" => {
            let lab = take_lab_id(&mut object, "predict")?;
            let value = match object.remove("value") {
                Some(value @ (Value::Number(_) | Value::String(_))) => value,
                _ => return Err("a prediction needs a `value`: a number or a choice".into()),
            };
            no_more_fields(&object, "predict")?;
            Ok(ClientMessage::Predict { lab, value })
        }
        "reset_lab" => {
            let lab = take_lab_id(&mut object, "reset_lab")?;
            no_more_fields(&object, "reset_lab")?;
            Ok(ClientMessage::ResetLab { lab })
        }
        "ipc" => parse_ipc(object),
        "pages" => parse_pages(object),
        "tool" => parse_tool(object),
        "tune" => parse_tune(object),
        "shared_pipe" => parse_shared(object),
        "cancel" => match object.keys().next() {
            Some(extra) => Err(format!("unknown field `{extra}` in a cancel message")),
            None => Ok(ClientMessage::Cancel),
        },
        "latency" => serde_json::from_value(Value::Object(object))
            .map(ClientMessage::Latency)
            .map_err(|e| {
                format!(
                    "bad latency message ({e}); send e.g. {{\"type\":\"latency\",\"mechanism\":\"pipe\",\"mode\":\"blocking\",\"size\":64}}"
                )
            }),
        "compare" => serde_json::from_value(Value::Object(object))
            .map(ClientMessage::Compare)
            .map_err(|e| {
                format!(
                    "bad compare message ({e}); send e.g. {{\"type\":\"compare\",\"a\":\"busy-loop\",\"b\":\"write-read\",\"pairs\":5}}"
                )
            }),
        "wakeup" => match object.keys().next() {
            Some(extra) => Err(format!("unknown field `{extra}` in a wakeup message")),
            None => Ok(ClientMessage::Wakeup),
        },
        other => Err(format!(
            "unknown message type `{other}`: expected \"run\", \"sweep\", \"ipc\", \"latency\", \"pages\", \"wakeup\", \"tool\", \"tune\", \"shared_pipe\", \"compare\", \"cancel\", \"predict\" or \"reset_lab\""
        )),
    }
}

/// The optional `params` object of a run or sweep message.
fn take_params(object: &mut serde_json::Map<String, Value>) -> Result<RunParams, String> {
    match object.remove("params") {
        None | Some(Value::Null) => Ok(RunParams::default()),
        Some(params @ Value::Object(_)) => {
            serde_json::from_value(params).map_err(|e| format!("bad params: {e}"))
        }
        Some(_) => Err("`params` must be an object".into()),
    }
}

/// The optional `lab` tag of a run or sweep: `{"id": LAB, "task": TASK}`.
fn take_lab(object: &mut serde_json::Map<String, Value>) -> Result<Option<LabTag>, String> {
    match object.remove("lab") {
        None | Some(Value::Null) => Ok(None),
        Some(lab) => serde_json::from_value(lab).map(Some).map_err(|e| {
            format!("bad lab tag ({e}): send \"lab\": {{\"id\": LAB, \"task\": TASK}}")
        }),
    }
}

/// The `lab` id string of a lab message.
fn take_lab_id(object: &mut serde_json::Map<String, Value>, kind: &str) -> Result<String, String> {
    match object.remove("lab") {
        Some(Value::String(lab)) => Ok(lab),
        _ => Err(format!("a {kind} message needs a `lab` id string")),
    }
}

/// Refuses a field the message does not know, so a typo is never ignored.
fn no_more_fields(object: &serde_json::Map<String, Value>, kind: &str) -> Result<(), String> {
    match object.keys().next() {
        Some(extra) => Err(format!("unknown field `{extra}` in a {kind} message")),
        None => Ok(()),
    }
}

/// An example of a good IPC message, quoted in errors.
const IPC_EXAMPLE: &str =
    r#"{"type":"ipc","mechanism":"posix-shm","params":{"bytes":"200MiB","chunk":"64KiB"}}"#;

fn parse_ipc(mut object: serde_json::Map<String, Value>) -> Result<ClientMessage, String> {
    let mechanism = match object.remove("mechanism") {
        Some(Value::String(mechanism)) => mechanism,
        _ => {
            return Err(format!(
                "an ipc run needs a `mechanism` string; send e.g. {IPC_EXAMPLE}"
            ))
        }
    };
    let params = match object.remove("params") {
        None | Some(Value::Null) => IpcRunParams::default(),
        Some(params @ Value::Object(_)) => serde_json::from_value(params).map_err(|e| {
            format!("bad params: {e}; an ipc run takes `bytes`, `chunk` and `counts`")
        })?,
        Some(_) => return Err("`params` must be an object".into()),
    };
    let lab = take_lab(&mut object)?;
    no_more_fields(&object, "ipc")?;
    Ok(ClientMessage::Ipc {
        mechanism,
        params,
        lab,
    })
}

/// An example of a good tool message, quoted in errors.
const TOOL_EXAMPLE: &str = r#"{"type":"tool","tool":"cat","as":"writer","bytes":"64MiB"}"#;

fn parse_tool(mut object: serde_json::Map<String, Value>) -> Result<ClientMessage, String> {
    use pipebench::steps::tools::Side;
    let tool = match object.remove("tool") {
        Some(Value::String(tool)) => tool,
        _ => {
            return Err(format!(
                "a tool message needs a `tool` id string; send e.g. {TOOL_EXAMPLE}"
            ))
        }
    };
    let side = match object.remove("as") {
        None | Some(Value::Null) => Side::Writer,
        Some(Value::String(side)) if side == "writer" => Side::Writer,
        Some(Value::String(side)) if side == "reader" => Side::Reader,
        Some(other) => {
            return Err(format!(
                "`as` must be \"writer\" or \"reader\", not {other}; send e.g. {TOOL_EXAMPLE}"
            ))
        }
    };
    let bytes = match object.remove("bytes") {
        None | Some(Value::Null) => None,
        Some(bytes) => Some(
            serde_json::from_value(bytes)
                .map_err(|e| format!("bad bytes ({e}); send e.g. {TOOL_EXAMPLE}"))?,
        ),
    };
    no_more_fields(&object, "tool")?;
    Ok(ClientMessage::Tool { tool, side, bytes })
}

/// An example of a good tune message, quoted in errors.
const TUNE_EXAMPLE: &str = r#"{"type":"tune","step":"busy-loop","budget":20}"#;

fn parse_tune(mut object: serde_json::Map<String, Value>) -> Result<ClientMessage, String> {
    let step = match object.remove("step") {
        Some(Value::String(step)) => step,
        _ => {
            return Err(format!(
                "a tune message needs a `step` string; send e.g. {TUNE_EXAMPLE}"
            ))
        }
    };
    let budget = match object.remove("budget") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => n.as_f64(),
        Some(other) => {
            return Err(format!(
                "`budget` must be a number of seconds, not {other}; send e.g. {TUNE_EXAMPLE}"
            ))
        }
    };
    no_more_fields(&object, "tune")?;
    Ok(ClientMessage::Tune { step, budget })
}

/// An example of a good shared-pipe message, quoted in errors.
const SHARED_EXAMPLE: &str = r#"{"type":"shared_pipe","writers":[1,2],"readers":[1],"msg_sizes":["4KiB","64KiB"],"bytes":"16MiB"}"#;

fn parse_shared(mut object: serde_json::Map<String, Value>) -> Result<ClientMessage, String> {
    fn counts(
        object: &mut serde_json::Map<String, Value>,
        field: &str,
    ) -> Result<Vec<usize>, String> {
        match object.remove(field) {
            Some(values @ Value::Array(_)) => serde_json::from_value(values).map_err(|e| {
                format!("bad {field} ({e}): a list of counts; send e.g. {SHARED_EXAMPLE}")
            }),
            _ => Err(format!(
                "a shared_pipe message needs a `{field}` list; send e.g. {SHARED_EXAMPLE}"
            )),
        }
    }
    let writers = counts(&mut object, "writers")?;
    let readers = counts(&mut object, "readers")?;
    let msg_sizes = match object.remove("msg_sizes") {
        Some(values @ Value::Array(_)) => serde_json::from_value(values).map_err(|e| {
            format!("bad msg_sizes ({e}): a list of sizes; send e.g. {SHARED_EXAMPLE}")
        })?,
        _ => {
            return Err(format!(
                "a shared_pipe message needs a `msg_sizes` list; send e.g. {SHARED_EXAMPLE}"
            ))
        }
    };
    let bytes = match object.remove("bytes") {
        None | Some(Value::Null) => None,
        Some(bytes) => Some(
            serde_json::from_value(bytes)
                .map_err(|e| format!("bad bytes ({e}); send e.g. {SHARED_EXAMPLE}"))?,
        ),
    };
    no_more_fields(&object, "shared_pipe")?;
    Ok(ClientMessage::SharedPipe(crate::past_page::SharedRequest {
        writers,
        readers,
        msg_sizes,
        bytes,
    }))
}

/// An example of a good pages message, quoted in errors.
const PAGES_EXAMPLE: &str = r#"{"type":"pages","step":"huge-pages","touch":false}"#;

fn parse_pages(mut object: serde_json::Map<String, Value>) -> Result<ClientMessage, String> {
    let step = match object.remove("step") {
        Some(Value::String(step)) => step,
        _ => {
            return Err(format!(
                "a pages message needs a `step` string; send e.g. {PAGES_EXAMPLE}"
            ))
        }
    };
    let touch = match object.remove("touch") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(touch)) => Some(touch),
        Some(other) => {
            return Err(format!(
                "`touch` must be true or false, not {other}; send e.g. {PAGES_EXAMPLE}"
            ))
        }
    };
    no_more_fields(&object, "pages")?;
    Ok(ClientMessage::Pages { step, touch })
}

/// An example of a good sweep message, quoted in errors.
const SWEEP_EXAMPLE: &str = r#"{"type":"sweep","step":"write-read","param":"pipe_size","values":["16KiB","64KiB"],"params":{"seconds":1}}"#;

fn parse_sweep(mut object: serde_json::Map<String, Value>) -> Result<ClientMessage, String> {
    let step = match object.remove("step") {
        Some(Value::String(step)) => step,
        _ => {
            return Err(format!(
                "a sweep needs a `step` string; send e.g. {SWEEP_EXAMPLE}"
            ))
        }
    };
    let param = match object.remove("param") {
        Some(Value::String(param)) => param.parse::<SweepParam>().map_err(|e| e.to_string())?,
        _ => {
            return Err(format!(
                "a sweep needs a `param` string; send e.g. {SWEEP_EXAMPLE}"
            ))
        }
    };
    let values: Vec<ByteSize> = match object.remove("values") {
        Some(values @ Value::Array(_)) => {
            serde_json::from_value(values).map_err(|e| format!("bad values: {e}"))?
        }
        _ => {
            return Err(format!(
                "a sweep needs a `values` array; send e.g. {SWEEP_EXAMPLE}"
            ))
        }
    };
    let repeats = match object.remove("repeats") {
        None | Some(Value::Null) => 1,
        Some(Value::Number(n)) => match n.as_u64() {
            Some(n @ 1..) if n as usize <= MAX_SWEEP_REPEATS => n as usize,
            _ => {
                return Err(format!(
                    "repeats = {n} is out of range: allowed 1 to {MAX_SWEEP_REPEATS}"
                ))
            }
        },
        Some(_) => return Err("`repeats` must be a number".into()),
    };
    let params = take_params(&mut object)?;
    let lab = take_lab(&mut object)?;
    no_more_fields(&object, "sweep")?;
    Ok(ClientMessage::Sweep {
        step,
        param,
        values,
        repeats,
        params,
        lab,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pipebench::size::{ByteSize, GIB};

    #[test]
    fn a_tool_message_names_a_tool_and_nothing_else() {
        use pipebench::steps::tools::Side;
        assert_eq!(
            parse(r#"{"type":"tool","tool":"cat","as":"reader","bytes":"16MiB"}"#).unwrap(),
            ClientMessage::Tool {
                tool: "cat".into(),
                side: Side::Reader,
                bytes: Some(ByteSize(16 << 20)),
            }
        );
        assert_eq!(
            parse(r#"{"type":"tool","tool":"yes"}"#).unwrap(),
            ClientMessage::Tool {
                tool: "yes".into(),
                side: Side::Writer,
                bytes: None,
            }
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
        assert!(crate::page_defaults::tool_job("sh", Side::Writer, None).is_err());
        assert!(crate::page_defaults::tool_job("cat", Side::Writer, None).is_ok());
    }

    #[test]
    fn parses_tune_and_shared_pipe_messages() {
        assert_eq!(
            parse(TUNE_EXAMPLE).unwrap(),
            ClientMessage::Tune {
                step: "busy-loop".into(),
                budget: Some(20.0)
            }
        );
        assert_eq!(
            parse(SHARED_EXAMPLE).unwrap(),
            ClientMessage::SharedPipe(crate::past_page::SharedRequest {
                writers: vec![1, 2],
                readers: vec![1],
                msg_sizes: vec![ByteSize(4 << 10), ByteSize(64 << 10)],
                bytes: Some(ByteSize(16 << 20)),
            })
        );
        for (text, expect) in [
            (r#"{"type":"tune"}"#, "needs a `step`"),
            (
                r#"{"type":"tune","step":"x","budget":"long"}"#,
                "`budget` must be a number",
            ),
            (
                r#"{"type":"tune","step":"x","argv":["sh"]}"#,
                "unknown field `argv`",
            ),
            (
                r#"{"type":"shared_pipe","readers":[1],"msg_sizes":[64]}"#,
                "needs a `writers`",
            ),
            (
                r#"{"type":"shared_pipe","writers":[-1],"readers":[1],"msg_sizes":[64]}"#,
                "bad writers",
            ),
            (
                r#"{"type":"shared_pipe","writers":[1],"readers":[1],"msg_sizes":["big"]}"#,
                "bad msg_sizes",
            ),
            (
                r#"{"type":"shared_pipe","writers":[1],"readers":[1],"msg_sizes":[64],"x":1}"#,
                "unknown field `x`",
            ),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.contains(expect), "{text}: {err}");
        }
    }

    #[test]
    fn parses_runs_and_cancels() {
        let run =
            parse(r#"{"type":"run","step":"busy-loop","params":{"bytes":"1GiB","seconds":2}}"#)
                .unwrap();
        let ClientMessage::Run { step, params, .. } = run else {
            panic!()
        };
        assert_eq!(step, "busy-loop");
        assert_eq!(params.bytes, Some(ByteSize(GIB)));
        assert_eq!(params.seconds, Some(2.0));
        assert_eq!(
            parse(r#"{"type":"run","step":"x"}"#).unwrap(),
            ClientMessage::Run {
                step: "x".into(),
                params: RunParams::default(),
                lab: None,
            }
        );
        assert_eq!(
            parse(r#"{"type":"cancel"}"#).unwrap(),
            ClientMessage::Cancel
        );
    }

    #[test]
    fn parses_sweeps_and_explains_bad_ones() {
        let sweep = parse(SWEEP_EXAMPLE).unwrap();
        assert_eq!(
            sweep,
            ClientMessage::Sweep {
                step: "write-read".into(),
                param: SweepParam::PipeSize,
                values: vec![ByteSize(16 << 10), ByteSize(64 << 10)],
                repeats: 1,
                params: RunParams {
                    seconds: Some(1.0),
                    ..Default::default()
                },
                lab: None,
            }
        );
        for (text, expect) in [
            (r#"{"type":"sweep","step":"x"}"#, "needs a `param`"),
            (
                r#"{"type":"sweep","step":"x","param":"colour","values":[1]}"#,
                "cannot sweep `colour`",
            ),
            (
                r#"{"type":"sweep","step":"x","param":"buf_size"}"#,
                "`values` array",
            ),
            (
                r#"{"type":"sweep","step":"x","param":"buf_size","values":["lots"]}"#,
                "bad values",
            ),
            (
                r#"{"type":"sweep","step":"x","param":"buf_size","values":[4096],"repeats":9}"#,
                "repeats = 9 is out of range",
            ),
            (
                r#"{"type":"sweep","step":"x","param":"buf_size","values":[4096],"oops":1}"#,
                "unknown field `oops`",
            ),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.contains(expect), "{text}: {err}");
        }
    }

    #[test]
    fn parses_lab_messages() {
        let run =
            parse(r#"{"type":"run","step":"write-read","lab":{"id":"variance","task":"repeat"}}"#)
                .unwrap();
        assert!(
            matches!(run, ClientMessage::Run { lab: Some(LabTag { ref id, .. }), .. } if id == "variance")
        );
        assert_eq!(
            parse(r#"{"type":"predict","lab":"variance","value":3}"#).unwrap(),
            ClientMessage::Predict {
                lab: "variance".into(),
                value: serde_json::json!(3)
            }
        );
        for (text, expect) in [
            (r#"{"type":"predict","lab":"variance"}"#, "needs a `value`"),
            (r#"{"type":"predict","value":1}"#, "needs a `lab`"),
            (
                r#"{"type":"run","step":"x","lab":{"id":"v"}}"#,
                "bad lab tag",
            ),
            (
                r#"{"type":"reset_lab","lab":"v","x":1}"#,
                "unknown field `x`",
            ),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.contains(expect), "{text}: {err}");
        }
    }

    #[test]
    fn parses_pages_and_explains_bad_ones() {
        assert_eq!(
            parse(PAGES_EXAMPLE).unwrap(),
            ClientMessage::Pages {
                step: "huge-pages".into(),
                touch: Some(false)
            }
        );
        assert_eq!(
            parse(r#"{"type":"pages","step":"x"}"#).unwrap(),
            ClientMessage::Pages {
                step: "x".into(),
                touch: None
            }
        );
        for (text, expect) in [
            (r#"{"type":"pages"}"#, "needs a `step`"),
            (
                r#"{"type":"pages","step":"x","touch":"yes"}"#,
                "`touch` must be true or false",
            ),
            (
                r#"{"type":"pages","step":"x","depth":3}"#,
                "unknown field `depth`",
            ),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.contains(expect), "{text}: {err}");
        }
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
    fn parses_ipc_runs_and_explains_bad_ones() {
        assert_eq!(
            parse(IPC_EXAMPLE).unwrap(),
            ClientMessage::Ipc {
                mechanism: "posix-shm".into(),
                params: IpcRunParams {
                    bytes: Some(ByteSize(200 << 20)),
                    chunk: Some(ByteSize(64 << 10)),
                    counts: None,
                },
                lab: None,
            }
        );
        let tagged = parse(
            r#"{"type":"ipc","mechanism":"posix-shm","params":{"bytes":"4MiB"},"lab":{"id":"choose-ipc","task":"posix-shm"}}"#,
        )
        .unwrap();
        assert!(matches!(
            tagged,
            ClientMessage::Ipc { lab: Some(LabTag { ref task, .. }), .. } if task == "posix-shm"
        ));
        for (text, expect) in [
            (r#"{"type":"ipc"}"#, "needs a `mechanism`"),
            (
                r#"{"type":"ipc","mechanism":"x","params":{"dir":"/"}}"#,
                "dir",
            ),
            (
                r#"{"type":"ipc","mechanism":"x","params":7}"#,
                "must be an object",
            ),
            (
                r#"{"type":"ipc","mechanism":"x","oops":1}"#,
                "unknown field `oops`",
            ),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.contains(expect), "{text}: {err}");
        }
    }

    #[test]
    fn ipc_errors_carry_their_kind() {
        let err = crate::ipc_page::plan("nope", &IpcRunParams::default()).unwrap_err();
        let json =
            pipebench::engine::event::Event::Error(pipebench::engine::event::Failure::from(&err))
                .to_json();
        assert!(
            json.contains(r#""reason":{"kind":"unknown_mechanism"}"#),
            "{json}"
        );
    }
}
