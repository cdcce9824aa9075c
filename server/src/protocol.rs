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

/// Fewest runs per value: a sweep runs each value.
pub const MIN_SWEEP_REPEATS: usize = 1;

/// Runs per value of a sweep that does not say.
pub const DEFAULT_SWEEP_REPEATS: usize = 1;

/// A message from the page: a job for the runner, or one about no job.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientMessage {
    /// A job to queue: a run, a sweep, an IPC or latency run, ... (see
    /// [`JobRequest`]).
    Job(JobRequest),
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
}

/// What the page asks the runner to do, one variant per kind of job; its
/// fields are the message's. `requests` plans each into the engine's job
/// through its kind's page module: a new kind is a variant here, its parsing
/// below, and its arm there.
#[derive(Debug, Clone, PartialEq)]
pub enum JobRequest {
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
    /// `{"type":"wakeup"}`: measure one wakeup's cost (queued like a run).
    Wakeup,
    /// `{"type":"latency","mechanism":ID,"mode":...,"size":...,"cpus":[A,B],
    /// "round_trips":N}`: one configuration of the latency lab.
    Latency {
        /// What the reader chose.
        params: crate::latency_page::LatencyRunParams,
        /// The lab task this run is for (`"lab": {"id": LAB, "task": TASK}`).
        lab: Option<LabTag>,
    },
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

impl From<JobRequest> for ClientMessage {
    fn from(request: JobRequest) -> Self {
        ClientMessage::Job(request)
    }
}

/// A reply to a message that is not about a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Reply {
    /// Whether something was saved, and why not: a lab record (a prediction,
    /// a fresh start, or a lab-tagged result, then right after that result or
    /// point) or a result in the history (after every `result` and `point`,
    /// once the disk has it or could not take it), or a search's best in
    /// `tuned.jsonl` (right after the search's result). For a run it carries
    /// `"run"`; a sweep's `done` comes after its last run's.
    Saved {
        /// Which file: the results history, the lab records or the tuned variants.
        store: SaveStore,
        /// The lab, for a lab record.
        #[serde(skip_serializing_if = "Option::is_none")]
        lab: Option<String>,
        /// Whether it is on disk.
        ok: bool,
        /// Why not: `kind` (`not_kept`, `no_space`, `quota`, `read_only`,
        /// `unsafe_file`, `failed`, `not_runnable`) and a sentence.
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
    /// `tuned.jsonl`: a search's best, kept for the next start (after the
    /// search's `result`).
    Tuned,
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
        pipebench::engine::event::ForRun { run, event: self }.to_json()
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
            Ok(ClientMessage::Job(JobRequest::Run { step, params, lab }))
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
        "latency" => {
            let lab = take_lab(&mut object)?;
            serde_json::from_value(Value::Object(object))
                .map(|params| ClientMessage::Job(JobRequest::Latency { params, lab }))
                .map_err(|e| {
                    format!(
                        "bad latency message ({e}); send e.g. {{\"type\":\"latency\",\"mechanism\":\"pipe\",\"mode\":\"blocking\",\"size\":64}}"
                    )
                })
        }
        "compare" => serde_json::from_value(Value::Object(object))
            .map(|r| ClientMessage::Job(JobRequest::Compare(r)))
            .map_err(|e| {
                format!(
                    "bad compare message ({e}); send e.g. {{\"type\":\"compare\",\"a\":\"busy-loop\",\"b\":\"write-read\",\"pairs\":5}}"
                )
            }),
        "wakeup" => match object.keys().next() {
            Some(extra) => Err(format!("unknown field `{extra}` in a wakeup message")),
            None => Ok(ClientMessage::Job(JobRequest::Wakeup)),
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
    Ok(ClientMessage::Job(JobRequest::Ipc {
        mechanism,
        params,
        lab,
    }))
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
    Ok(ClientMessage::Job(JobRequest::Tool { tool, side, bytes }))
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
    Ok(ClientMessage::Job(JobRequest::Tune { step, budget }))
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
    let profile = match object.remove("profile") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(profile)) => profile,
        Some(other) => {
            return Err(format!(
                "bad profile {other}: true or false; send e.g. {SHARED_EXAMPLE}"
            ))
        }
    };
    no_more_fields(&object, "shared_pipe")?;
    Ok(ClientMessage::Job(JobRequest::SharedPipe(
        crate::past_page::SharedRequest {
            writers,
            readers,
            msg_sizes,
            bytes,
            profile,
        },
    )))
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
    Ok(ClientMessage::Job(JobRequest::Pages { step, touch }))
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
        None | Some(Value::Null) => DEFAULT_SWEEP_REPEATS,
        Some(Value::Number(n)) => match n.as_u64() {
            Some(n) if (MIN_SWEEP_REPEATS..=MAX_SWEEP_REPEATS).contains(&(n as usize)) => {
                n as usize
            }
            _ => {
                return Err(format!(
                "repeats = {n} is out of range: allowed {MIN_SWEEP_REPEATS} to {MAX_SWEEP_REPEATS}"
            ))
            }
        },
        Some(_) => return Err("`repeats` must be a number".into()),
    };
    let params = take_params(&mut object)?;
    let lab = take_lab(&mut object)?;
    no_more_fields(&object, "sweep")?;
    Ok(ClientMessage::Job(JobRequest::Sweep {
        step,
        param,
        values,
        repeats,
        params,
        lab,
    }))
}

#[cfg(test)]
mod tests;
