//! What a job says while it lives: the one event type, serialised once.
//!
//! The CLI prints these events and the server streams them: on the WebSocket each
//! is one JSON text message tagged by `type` (docs/protocol.md lists them), with the
//! run's id added by [`ForRun`]. Nothing else builds these messages.

use serde::Serialize;

use crate::ends::error::EndErrorKind;
use crate::engine::result::{
    IpcRecord, KeptResult, LatencyRecord, LatencyTag, RecordKind, RunResult,
};
use crate::ipc::{IpcError, IpcErrorKind};
use crate::latency::{LatencyError, LatencyErrorKind, Mode};
use crate::machine::behaviour::Probe;
use crate::machine::findings::Finding;
use crate::machine::wakeup::WakeupFigures;
use crate::memory::inspect::PagesReport;
use crate::profile::{ProfileError, ProfileReport};
use crate::steps::plan::RunPlan;

/// One thing that happened to a job, in order: at most one `queued` per change of
/// place, `started`, `progress` samples, for a profiled run its `profile`, for a
/// sweep a `point` per run and `done`; and exactly one final event (see
/// [`Event::is_final`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Event {
    /// Waiting for the jobs ahead; 1 means next.
    Queued {
        /// Place in the queue, from 1.
        position: usize,
    },
    /// The job's processes are running.
    Started(Started),
    /// A progress sample.
    Progress(Progress),
    /// A profiled run's profile, just before its result: the report, or why
    /// there is none (the run itself goes ahead).
    Profile(ProfileOutcome),
    /// The job finished: its result, fields at the top level.
    Result(Finished),
    /// A sweep's run finished: the value it ran at and its result.
    Point {
        /// The swept parameter's value, bytes.
        value: u64,
        /// This run's place in the sweep, from 1.
        index: usize,
        /// How many runs the sweep has.
        of: usize,
        /// The run's result.
        result: Box<RunResult>,
    },
    /// A sweep is over: every run sent its point.
    Done {
        /// How many runs it had.
        runs: usize,
    },
    /// A wakeup measurement finished.
    Wakeup {
        /// The blocking and busy round trips.
        wakeup: WakeupFigures,
        /// The machine's findings, with the wakeup's cost.
        findings: Vec<Finding>,
    },
    /// The behaviour probes finished: what this kernel does, measured now.
    Behaviour {
        /// Every probe's answer, with its evidence.
        behaviour: Vec<Probe>,
        /// When they ran, in milliseconds since the Unix epoch.
        probed_at_ms: u64,
    },
    /// The page inspector's report on a step's writer buffers.
    Pages {
        /// Step id.
        step: String,
        /// Whether the buffers were written before the look.
        touch: bool,
        /// The pages, and what could not be seen.
        report: Box<PagesReport>,
    },
    /// The job was cancelled.
    Cancelled,
    /// A latency run's progress: round trips timed so far and the live
    /// distribution (`latency_progress`).
    #[serde(rename = "latency_progress")]
    LatencyProgress(LatencyProgress),
    /// The job failed, or a request was refused.
    Error(Failure),
    /// A comparison's run finished: its side, place and result, and the
    /// comparison so far.
    Leg(crate::engine::compare::report::Leg),
    /// A comparison is over: the ratio, its interval, the verdict.
    Verdict(Box<crate::engine::compare::report::CompareReport>),
    /// A tuning search's run ended: its configuration and figure, and the
    /// search so far (`trial`).
    Trial(Box<crate::engine::tune::report::Trial>),
    /// One point of many writers and readers on one pipe finished
    /// (`shared_point`): the page draws it before the whole sweep ends.
    #[serde(rename = "shared_point")]
    SharedPoint(Box<crate::engine::shared_pipe::report::SharedPoint>),
}

impl Event {
    /// Whether nothing more will come for this job.
    pub fn is_final(&self) -> bool {
        matches!(
            self,
            Event::Result(_)
                | Event::Wakeup { .. }
                | Event::Behaviour { .. }
                | Event::Pages { .. }
                | Event::Cancelled
                | Event::Error(_)
        )
    }

    /// An error that is nobody's fault in particular (a refusal, the server
    /// stopping).
    pub fn error(message: impl Into<String>) -> Self {
        Event::Error(Failure {
            message: message.into(),
            reason: None,
        })
    }

    /// The JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("events serialise")
    }
}

/// An event of run `run`: the same JSON with `"run": N` first, so a page can tell
/// which run a message is about. Refusals of a message belong to no run and go
/// out as plain [`Event`]s.
#[derive(Debug, Serialize)]
pub struct ForRun<'a, T: Serialize = Event> {
    /// The run's id.
    pub run: u64,
    /// What happened to it (an [`Event`], or a reply of the server's about the
    /// run, such as whether its result was saved).
    #[serde(flatten)]
    pub event: &'a T,
}

impl<T: Serialize> ForRun<'_, T> {
    /// The JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("events serialise")
    }
}

/// What started.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Started {
    /// Both ends of a pipe step.
    Pipe {
        /// Step id.
        step: String,
        /// The parameters in force.
        params: EffectiveParams,
        /// Writer and reader process ids.
        pids: [u32; 2],
        /// Things the reader should know (e.g. only one CPU).
        warnings: Vec<String>,
    },
    /// A run of the IPC lab (`"kind":"ipc"`; no pids: the lab's harness starts
    /// its ends itself).
    Ipc {
        /// Always `ipc`.
        kind: RecordKind,
        /// Mechanism id.
        mechanism: String,
        /// The parameters in force.
        params: IpcEffective,
    },
    /// A latency configuration (`"kind":"latency"`).
    Latency {
        /// Always `latency`.
        kind: LatencyTag,
        /// Mechanism id.
        mechanism: String,
        /// `blocking` or `busy`.
        mode: Mode,
        /// Bytes per message.
        size: u64,
        /// The ping end's CPU, then the pong end's.
        cpus: [usize; 2],
        /// Round trips to time.
        round_trips: u32,
    },
    /// A tuning search (`"kind":"tune"`): the grid it will run.
    Tune(Box<crate::engine::tune::report::TuneStarted>),
    /// Many writers and readers on one pipe (`"kind":"shared_pipe"`): the
    /// points it will run.
    SharedPipe(Box<crate::engine::shared_pipe::report::SharedStarted>),
}

impl Started {
    /// A pipe step started with `plan`, its ends `pids`.
    pub fn pipe(plan: &RunPlan, pids: [u32; 2]) -> Self {
        Started::Pipe {
            step: plan.step.clone(),
            params: EffectiveParams::from(plan),
            pids,
            warnings: plan.warnings.clone(),
        }
    }
}

/// A progress sample.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Progress {
    /// Bytes the receiving end has taken.
    pub bytes: u64,
    /// Milliseconds since the job started.
    pub elapsed_ms: f64,
    /// Throughput since the previous sample, GiB/s.
    pub gib_per_s: f64,
    /// Bytes sitting in the pipe at the latest occupancy sample (watched runs only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pipe_bytes: Option<u64>,
}

/// What a finished job produced.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Finished {
    /// A pipe step's result.
    Pipe(Box<RunResult>),
    /// An IPC lab run's record (`"kind":"ipc"`).
    Ipc(Box<IpcRecord>),
    /// A latency configuration's record (`"kind":"latency"`).
    Latency(Box<LatencyRecord>),
    /// A tool run against pipebench's end (`"kind":"tool"`).
    Tool(Box<crate::engine::tool::report::ToolResult>),
    /// Many writers and readers on one pipe (`"kind":"shared_pipe"`).
    SharedPipe(Box<crate::engine::shared_pipe::report::SharedPipeResult>),
    /// A tuning search's best configuration and gain (`"kind":"tune"`).
    Tune(Box<crate::engine::tune::report::TuneResult>),
}

impl Finished {
    /// What the server keeps of it (history, lab measurements), if anything: a
    /// tool run, a shared-pipe sweep and a tuning search are shown, not kept.
    pub fn kept(&self) -> Option<KeptResult> {
        match self {
            Finished::Pipe(result) => Some(KeptResult::Pipe(result.clone())),
            Finished::Ipc(record) => Some(KeptResult::Ipc(record.clone())),
            Finished::Latency(record) => Some(KeptResult::Latency(record.clone())),
            Finished::Tool(_) | Finished::SharedPipe(_) | Finished::Tune(_) => None,
        }
    }
}

/// A profile, or why there is none.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileOutcome {
    /// Both ends' call-graph profiles, flame graphs and the article's figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<Box<ProfileReport>>,
    /// Why profiling did not work: `kind` and `message`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ProfileProblem>,
}

impl From<Result<ProfileReport, ProfileError>> for ProfileOutcome {
    fn from(outcome: Result<ProfileReport, ProfileError>) -> Self {
        match outcome {
            Ok(report) => ProfileOutcome {
                report: Some(Box::new(report)),
                error: None,
            },
            Err(error) => ProfileOutcome {
                report: None,
                error: Some(ProfileProblem {
                    message: error.to_string(),
                    error,
                }),
            },
        }
    }
}

/// Why a run could not be profiled: the typed reason and a sentence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileProblem {
    /// The reason (`kind`: not_installed, not_permitted, failed) and its fields.
    #[serde(flatten)]
    pub error: ProfileError,
    /// What happened and what to do.
    pub message: String,
}

/// Why a job failed: a sentence, and its typed cause when there is one (so a
/// page can explain it without reading the sentence).
#[derive(Debug, Clone, PartialEq, Serialize, thiserror::Error)]
#[error("{message}")]
pub struct Failure {
    /// What happened and what to do.
    pub message: String,
    /// What failed, typed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<FailureReason>,
}

impl From<&IpcError> for Failure {
    fn from(err: &IpcError) -> Self {
        Failure {
            message: err.to_string(),
            reason: Some(FailureReason::Ipc {
                kind: err.kind(),
                role: err.role().map(str::to_string),
            }),
        }
    }
}

/// What failed, typed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum FailureReason {
    /// An end of a pipe run: `{"role":"writer","kind":...}`.
    End {
        /// `writer` or `reader`.
        role: &'static str,
        /// The kind of failure the end reported.
        kind: EndErrorKind,
    },
    /// An IPC lab run: `{"kind":"shm_max"}`, with `role` when an end failed.
    Ipc {
        /// The kind of [`IpcError`].
        kind: IpcErrorKind,
        /// `producer`, `consumer` or `solo`, when an end failed.
        #[serde(skip_serializing_if = "Option::is_none")]
        role: Option<String>,
    },
    /// A latency run: `{"kind":"too_large"}`.
    Latency {
        /// The kind of [`LatencyError`].
        kind: LatencyErrorKind,
    },
}

impl From<&LatencyError> for Failure {
    fn from(err: &LatencyError) -> Self {
        Failure {
            message: err.to_string(),
            reason: Some(FailureReason::Latency { kind: err.kind() }),
        }
    }
}

/// A latency run's progress sample.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LatencyProgress {
    /// Round trips timed so far.
    pub done: u64,
    /// Round trips to time.
    pub of: u64,
    /// Round trips per quarter-octave bucket of ns so far (bucket `i` starts at
    /// `2^(i div 4) * (1 + (i mod 4) / 4)` ns), the distribution as it fills.
    pub buckets: Vec<u64>,
}

/// The parameters a pipe run actually uses, after defaults and validation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EffectiveParams {
    /// Bytes to pipe (the cap, when there is a time budget).
    pub bytes: u64,
    /// Chunk size.
    pub buf_size: u64,
    /// The pipe capacity asked for (`None`: the kernel's default).
    pub pipe_size: Option<u64>,
    /// Time budget in seconds, if any.
    pub seconds: Option<f64>,
    /// Writer's CPU.
    pub writer_cpu: Option<usize>,
    /// Reader's CPU.
    pub reader_cpu: Option<usize>,
    /// No live progress for this run.
    pub quiet: bool,
}

impl From<&RunPlan> for EffectiveParams {
    fn from(plan: &RunPlan) -> Self {
        EffectiveParams {
            bytes: plan.writer.common.bytes.bytes(),
            buf_size: plan.writer.common.buf_size.bytes(),
            pipe_size: plan.writer.pipe_size.map(|s| s.bytes()),
            seconds: plan.time_budget.map(|d| d.as_secs_f64()),
            writer_cpu: plan.writer.common.cpu,
            reader_cpu: plan.reader.common.cpu,
            quiet: plan.quiet,
        }
    }
}

/// The parameters of an IPC lab run in force.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IpcEffective {
    /// Bytes to move.
    pub bytes: u64,
    /// Bytes per call.
    pub chunk: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_tagged_and_a_run_id_comes_first() {
        assert_eq!(
            Event::Queued { position: 2 }.to_json(),
            r#"{"type":"queued","position":2}"#
        );
        assert_eq!(Event::Cancelled.to_json(), r#"{"type":"cancelled"}"#);
        assert_eq!(
            Event::error("x").to_json(),
            r#"{"type":"error","message":"x"}"#
        );
        let queued = Event::Queued { position: 2 };
        assert_eq!(
            ForRun {
                run: 7,
                event: &queued
            }
            .to_json(),
            r#"{"run":7,"type":"queued","position":2}"#
        );
        assert_eq!(
            ForRun {
                run: 1,
                event: &Event::Cancelled
            }
            .to_json(),
            r#"{"run":1,"type":"cancelled"}"#
        );
        assert!(Event::error("x").is_final() && !Event::Queued { position: 1 }.is_final());
    }

    #[test]
    fn progress_leaves_out_the_pipe_when_it_is_not_watched() {
        let progress = Event::Progress(Progress {
            bytes: 1,
            elapsed_ms: 2.0,
            gib_per_s: 0.5,
            pipe_bytes: None,
        });
        assert_eq!(
            progress.to_json(),
            r#"{"type":"progress","bytes":1,"elapsed_ms":2.0,"gib_per_s":0.5}"#
        );
    }
}
