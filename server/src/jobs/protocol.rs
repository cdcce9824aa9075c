//! The WebSocket protocol of `/api/run`: JSON text messages tagged by `type`.
//!
//! What the page sends is parsed here ([`ClientMessage`]); what a run says goes
//! out as the engine's own events (`pipebench::engine::event`), and the few
//! replies that belong to no run are [`Reply`]s.

use pipebench::engine::sweep::SweepParam;
use pipebench::size::ByteSize;
use pipebench::steps::plan::RunParams;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::jobs::ipc::IpcRunParams;
use crate::labs::LabTag;
use crate::store::statefile::SaveError;

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
/// through its kind's page module: a new kind is a variant here, its message
/// struct in [`Wire`] (or its page module's), and its arm there.
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
    /// `{"type":"probe"}`: ask the kernel again what it does (the behaviour
    /// probes, queued like a run; the answers replace `/api/system`'s).
    Probe,
    /// `{"type":"latency","mechanism":ID,"mode":...,"size":...,"cpus":[A,B],
    /// "round_trips":N}`: one configuration of the latency lab.
    Latency {
        /// What the reader chose.
        params: crate::jobs::latency::LatencyRunParams,
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
    SharedPipe(crate::store::tuned::SharedRequest),
    /// `{"type":"compare","a":STEP,"b":STEP,"pairs":N,"budget":M,"params":{...}}`:
    /// two steps head to head in quiet interleaved pairs, until the verdict is
    /// resolved or the budget of pairs is spent.
    Compare(crate::jobs::compare::CompareRequest),
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

/// Every message type the page may send, as it spells them.
const TYPES: [&str; 14] = [
    "run",
    "sweep",
    "ipc",
    "latency",
    "pages",
    "wakeup",
    "probe",
    "tool",
    "tune",
    "shared_pipe",
    "compare",
    "cancel",
    "predict",
    "reset_lab",
];

/// A good message of each type, quoted when one of that type is refused.
fn example(kind: &str) -> &'static str {
    match kind {
        "sweep" => SWEEP_EXAMPLE,
        "ipc" => IPC_EXAMPLE,
        "latency" => r#"{"type":"latency","mechanism":"pipe","mode":"blocking","size":64}"#,
        "pages" => PAGES_EXAMPLE,
        "tool" => TOOL_EXAMPLE,
        "tune" => TUNE_EXAMPLE,
        "shared_pipe" => SHARED_EXAMPLE,
        "compare" => r#"{"type":"compare","a":"busy-loop","b":"write-read","pairs":5}"#,
        "predict" => r#"{"type":"predict","lab":"variance","value":5}"#,
        "reset_lab" => r#"{"type":"reset_lab","lab":"variance"}"#,
        "cancel" => r#"{"type":"cancel"}"#,
        "wakeup" => r#"{"type":"wakeup"}"#,
        "probe" => r#"{"type":"probe"}"#,
        _ => EXAMPLE,
    }
}

/// Why a message from the page was refused; its text is the sentence the page
/// shows (the `error` event's `message`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MessageError {
    /// Not JSON at all.
    #[error("not valid JSON ({reason}); send e.g. {EXAMPLE}")]
    NotJson {
        /// The JSON parser's words.
        reason: String,
    },
    /// JSON, but not an object.
    #[error("expected a JSON object such as {EXAMPLE}")]
    NotAnObject,
    /// No `type`, or one that is not a string.
    #[error("missing `type` (a string); send e.g. {EXAMPLE} or {{\"type\":\"cancel\"}}")]
    NoType,
    /// A `type` the server does not take.
    #[error("unknown message type `{0}`: expected one of {TYPES:?}")]
    UnknownType(String),
    /// A message of a known type with a field missing, unknown or of the wrong
    /// shape (`reason` names it, in serde's words).
    #[error("bad {kind} message: {reason}; send e.g. {}", example(kind))]
    Invalid {
        /// The message's type.
        kind: &'static str,
        /// What is wrong, naming the field.
        reason: String,
    },
    /// A sweep asked for more or fewer runs per value than the server allows.
    #[error("repeats = {0} is out of range: allowed {MIN_SWEEP_REPEATS} to {MAX_SWEEP_REPEATS}")]
    RepeatsOutOfRange(u64),
}

/// Every message the page may send, tagged by `type`: each kind's fields are
/// its struct's, and a field the struct does not know is refused, so a typo is
/// never ignored. Converted into a [`ClientMessage`] once read.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Wire {
    Run(Located<RunMessage>),
    Sweep(Located<SweepMessage>),
    Ipc(Located<IpcMessage>),
    Latency(Located<LatencyMessage>),
    Pages(Located<PagesMessage>),
    Wakeup(Located<Nothing>),
    Probe(Located<Nothing>),
    Tool(Located<ToolMessage>),
    Tune(Located<TuneMessage>),
    SharedPipe(Located<SharedMessage>),
    Compare(Located<crate::jobs::compare::CompareRequest>),
    Cancel(Located<Nothing>),
    Predict(Located<PredictMessage>),
    ResetLab(Located<ResetLabMessage>),
}

/// A message's fields, read with the path of a field that is wrong: its error
/// names the field (`params.bytes`), which serde's own words for a wrong type
/// do not.
#[derive(Debug)]
struct Located<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Located<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        serde_path_to_error::deserialize(deserializer)
            .map(Located)
            .map_err(|err| {
                let path = err.path().to_string();
                let inner = err.into_inner();
                if path == "." {
                    inner
                } else {
                    serde::de::Error::custom(format!("`{path}`: {inner}"))
                }
            })
    }
}

/// A message with no field but its `type` (`cancel`, `wakeup`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Nothing {}

/// `{"type":"run","step":ID,"params":{...},"lab":{...}}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RunMessage {
    step: String,
    #[serde(default, deserialize_with = "null_as_default")]
    params: RunParams,
    #[serde(default)]
    lab: Option<LabTag>,
}

/// `{"type":"sweep","step":ID,"param":P,"values":[...],"repeats":N,"params":{...}}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepMessage {
    step: String,
    #[serde(deserialize_with = "from_str")]
    param: SweepParam,
    values: Vec<ByteSize>,
    #[serde(default)]
    repeats: Option<u64>,
    #[serde(default, deserialize_with = "null_as_default")]
    params: RunParams,
    #[serde(default)]
    lab: Option<LabTag>,
}

/// `{"type":"ipc","mechanism":ID,"params":{...},"lab":{...}}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct IpcMessage {
    mechanism: String,
    #[serde(default, deserialize_with = "null_as_default")]
    params: IpcRunParams,
    #[serde(default)]
    lab: Option<LabTag>,
}

/// `{"type":"latency","mechanism":ID,"mode":M,"size":S,"cpus":[A,B],"round_trips":N,"lab":{...}}`:
/// the latency card's fields ([`crate::jobs::latency::LatencyRunParams`]) and a lab tag.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LatencyMessage {
    mechanism: String,
    #[serde(default)]
    mode: Option<pipebench::latency::Mode>,
    #[serde(default)]
    size: Option<ByteSize>,
    #[serde(default, deserialize_with = "crate::jobs::latency::two_cpus")]
    cpus: Option<[usize; 2]>,
    #[serde(default)]
    round_trips: Option<u32>,
    #[serde(default)]
    lab: Option<LabTag>,
}

/// `{"type":"pages","step":ID,"touch":BOOL}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PagesMessage {
    step: String,
    #[serde(default)]
    touch: Option<bool>,
}

/// `{"type":"tool","tool":ID,"as":"writer"|"reader","bytes":SIZE}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolMessage {
    tool: String,
    #[serde(default, rename = "as")]
    side: Option<pipebench::steps::tools::Side>,
    #[serde(default)]
    bytes: Option<ByteSize>,
}

/// `{"type":"tune","step":ID,"budget":SECONDS}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TuneMessage {
    step: String,
    #[serde(default)]
    budget: Option<f64>,
}

/// `{"type":"shared_pipe","writers":[...],"readers":[...],"msg_sizes":[...],"bytes":SIZE,"profile":BOOL}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SharedMessage {
    writers: Vec<usize>,
    readers: Vec<usize>,
    msg_sizes: Vec<ByteSize>,
    #[serde(default)]
    bytes: Option<ByteSize>,
    #[serde(default)]
    profile: Option<bool>,
}

/// `{"type":"predict","lab":LAB,"value":V}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PredictMessage {
    lab: String,
    value: Value,
}

/// `{"type":"reset_lab","lab":LAB}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ResetLabMessage {
    lab: String,
}

/// A field that may be left out or sent as `null`: either is its default.
fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// A field read from its text the way the command line reads it (`FromStr`).
fn from_str<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    String::deserialize(deserializer)?
        .parse()
        .map_err(serde::de::Error::custom)
}

/// Reads a message; the error says what is wrong and shows a good one.
pub fn parse(text: &str) -> Result<ClientMessage, MessageError> {
    let value: Value = serde_json::from_str(text).map_err(|e| MessageError::NotJson {
        reason: e.to_string(),
    })?;
    let Value::Object(object) = &value else {
        return Err(MessageError::NotAnObject);
    };
    let Some(kind) = object.get("type").and_then(Value::as_str) else {
        return Err(MessageError::NoType);
    };
    let Some(&kind) = TYPES.iter().find(|&&known| known == kind) else {
        return Err(MessageError::UnknownType(kind.to_string()));
    };
    let invalid = |reason: String| MessageError::Invalid { kind, reason };
    let wire: Wire = serde_json::from_value(value).map_err(|e| invalid(e.to_string()))?;
    Ok(match wire {
        Wire::Run(Located(m)) => JobRequest::Run {
            step: m.step,
            params: m.params,
            lab: m.lab,
        }
        .into(),
        Wire::Sweep(Located(m)) => {
            let repeats = m.repeats.unwrap_or(DEFAULT_SWEEP_REPEATS as u64);
            if !(MIN_SWEEP_REPEATS as u64..=MAX_SWEEP_REPEATS as u64).contains(&repeats) {
                return Err(MessageError::RepeatsOutOfRange(repeats));
            }
            JobRequest::Sweep {
                step: m.step,
                param: m.param,
                values: m.values,
                repeats: repeats as usize,
                params: m.params,
                lab: m.lab,
            }
            .into()
        }
        Wire::Ipc(Located(m)) => JobRequest::Ipc {
            mechanism: m.mechanism,
            params: m.params,
            lab: m.lab,
        }
        .into(),
        Wire::Latency(Located(m)) => JobRequest::Latency {
            params: crate::jobs::latency::LatencyRunParams {
                mechanism: m.mechanism,
                mode: m.mode,
                size: m.size,
                cpus: m.cpus,
                round_trips: m.round_trips,
            },
            lab: m.lab,
        }
        .into(),
        Wire::Pages(Located(m)) => JobRequest::Pages {
            step: m.step,
            touch: m.touch,
        }
        .into(),
        Wire::Wakeup(Located(Nothing {})) => JobRequest::Wakeup.into(),
        Wire::Probe(Located(Nothing {})) => JobRequest::Probe.into(),
        Wire::Tool(Located(m)) => JobRequest::Tool {
            tool: m.tool,
            side: m.side.unwrap_or(pipebench::steps::tools::Side::Writer),
            bytes: m.bytes,
        }
        .into(),
        Wire::Tune(Located(m)) => JobRequest::Tune {
            step: m.step,
            budget: m.budget,
        }
        .into(),
        Wire::SharedPipe(Located(m)) => {
            JobRequest::SharedPipe(crate::store::tuned::SharedRequest {
                writers: m.writers,
                readers: m.readers,
                msg_sizes: m.msg_sizes,
                bytes: m.bytes,
                profile: m.profile.unwrap_or(false),
            })
            .into()
        }
        Wire::Compare(Located(request)) => JobRequest::Compare(request).into(),
        Wire::Cancel(Located(Nothing {})) => ClientMessage::Cancel,
        Wire::Predict(Located(m)) => match m.value {
            value @ (Value::Number(_) | Value::String(_)) => {
                ClientMessage::Predict { lab: m.lab, value }
            }
            _ => return Err(invalid("`value` must be a number or a choice".into())),
        },
        Wire::ResetLab(Located(m)) => ClientMessage::ResetLab { lab: m.lab },
    })
}

/// An example of a good IPC message, quoted in errors.
const IPC_EXAMPLE: &str =
    r#"{"type":"ipc","mechanism":"posix-shm","params":{"bytes":"200MiB","chunk":"64KiB"}}"#;

/// An example of a good tool message, quoted in errors.
const TOOL_EXAMPLE: &str = r#"{"type":"tool","tool":"cat","as":"writer","bytes":"64MiB"}"#;

/// An example of a good tune message, quoted in errors.
const TUNE_EXAMPLE: &str = r#"{"type":"tune","step":"busy-loop","budget":20}"#;

/// An example of a good shared-pipe message, quoted in errors.
const SHARED_EXAMPLE: &str = r#"{"type":"shared_pipe","writers":[1,2],"readers":[1],"msg_sizes":["4KiB","64KiB"],"bytes":"16MiB"}"#;

/// An example of a good pages message, quoted in errors.
const PAGES_EXAMPLE: &str = r#"{"type":"pages","step":"huge-pages","touch":false}"#;

/// An example of a good sweep message, quoted in errors.
const SWEEP_EXAMPLE: &str = r#"{"type":"sweep","step":"write-read","param":"pipe_size","values":["16KiB","64KiB"],"params":{"seconds":1}}"#;

#[cfg(test)]
mod tests;
