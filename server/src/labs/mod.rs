//! Course labs: definitions ([`defs`], from `book/labs/labs.json`), the checks
//! ([`checks`], pure), the students' progress ([`store`], `labs.jsonl`), the
//! exported report ([`export`]: JSON with a digest, and HTML), and the
//! instructor's merge of many reports ([`merge`], `pipebook report`), which
//! hold names and ids to one rule ([`names`]).
//!
//! This module also decides what a lab may ask of the runner: a run or sweep
//! tagged with a lab task must be that task's step (and sweep), with only the
//! student's time budget and byte cap left free; an IPC run tagged with a lab
//! task must be that task's mechanism, with only the bytes (and whether it is
//! watched) left free.

pub(crate) mod checks;
pub(crate) mod defs;
pub mod export;
pub(crate) mod intake;
pub(crate) mod measurement;
pub mod merge;
pub(crate) mod names;
pub(crate) mod render;
pub mod store;
pub(crate) mod strict;

use pipebench::engine::sweep::SweepParam;
use pipebench::size::ByteSize;
use pipebench::steps::plan::RunParams;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::params::ipc::IpcRunParams;
use defs::{labs, Lab, PredictionKind, Task, TaskWork};

/// A run or sweep's lab task: `"lab": {"id": LAB, "task": TASK}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LabTag {
    /// Lab id.
    pub id: String,
    /// Task id within the lab.
    pub task: String,
}

/// Why a lab request was refused; each says what to send instead.
#[derive(Debug, thiserror::Error, PartialEq)]
pub(crate) enum LabError {
    /// No such lab.
    #[error("unknown lab `{id}`: the labs are {known}")]
    UnknownLab {
        /// Asked for.
        id: String,
        /// What exists.
        known: String,
    },
    /// No such task in the lab.
    #[error("lab `{lab}` has no task `{task}`: its tasks are {known}")]
    UnknownTask {
        /// Lab id.
        lab: String,
        /// Asked for.
        task: String,
        /// What exists.
        known: String,
    },
    /// The message runs another step or mechanism than the task's.
    #[error("task `{task}` of lab `{lab}` runs {expected}, not {found}")]
    WrongWork {
        /// Lab id.
        lab: String,
        /// Task id.
        task: String,
        /// What the task runs (`step X` or `IPC mechanism Y`).
        expected: String,
        /// The message's.
        found: String,
    },
    /// A plain run for a sweep task, or the other way round, or other values.
    #[error("task `{task}` of lab `{lab}` is {expected}: send exactly that")]
    WrongShape {
        /// Lab id.
        lab: String,
        /// Task id.
        task: String,
        /// What the task is.
        expected: String,
    },
    /// The message sets a parameter the task fixes or the labs leave alone.
    #[error(
        "a lab run may set only seconds, bytes and quiet (an IPC one only bytes and quiet); `{param}` is fixed by task `{task}` (a lab records its task exactly as defined)"
    )]
    FixedParam {
        /// Task id.
        task: String,
        /// The parameter.
        param: &'static str,
    },
    /// A prediction of the wrong kind or out of range.
    #[error("prediction for lab `{lab}`: {reason}")]
    BadPrediction {
        /// Lab id.
        lab: String,
        /// What is wrong and what is allowed.
        reason: String,
    },
}

/// The lab by id.
pub(crate) fn lab(id: &str) -> Result<&'static Lab, LabError> {
    labs().find(id).ok_or_else(|| LabError::UnknownLab {
        id: id.to_string(),
        known: labs().ids(),
    })
}

fn task<'a>(lab: &'a Lab, tag: &LabTag) -> Result<&'a Task, LabError> {
    lab.task(&tag.task).ok_or_else(|| LabError::UnknownTask {
        lab: lab.id.clone(),
        task: tag.task.clone(),
        known: lab
            .tasks
            .iter()
            .map(|t| t.id.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    })
}

/// The task's own parameters over the student's time budget, byte cap and
/// quiet switch; anything else the page set is refused rather than silently
/// replaced. Every field of [`RunParams`] is named here, so a parameter added
/// later must be decided on before a lab run can compile: a lab accepts
/// exactly its task's options. `profile` is refused: perf pauses the ends
/// while it attaches, so the lab would record a figure that is not one.
fn task_params(task: &Task, params: &RunParams) -> Result<RunParams, LabError> {
    let fixed = |param| LabError::FixedParam {
        task: task.id.clone(),
        param,
    };
    let RunParams {
        bytes,
        buf_size,
        pipe_size,
        seconds,
        writer_cpu,
        reader_cpu,
        verify,
        quiet,
        profile,
        counts,
        trace_syscalls,
        huge_pages,
    } = params;
    if buf_size.is_some() {
        return Err(fixed("buf_size"));
    }
    // A task's step has its own pages: the lab measures those.
    if huge_pages.is_some() {
        return Err(fixed("huge_pages"));
    }
    if pipe_size.is_some() {
        return Err(fixed("pipe_size"));
    }
    if writer_cpu.is_some() || reader_cpu.is_some() {
        return Err(fixed("writer_cpu/reader_cpu"));
    }
    if verify.is_some() && *verify != task.params.verify {
        return Err(fixed("verify"));
    }
    if *profile == Some(true) {
        return Err(fixed("profile"));
    }
    // Tracing slows the ends: only a task whose checks need the per-page
    // counts asks for it, and a student cannot change that either way.
    if trace_syscalls.is_some() && *trace_syscalls != task.params.trace_syscalls {
        return Err(fixed("trace_syscalls"));
    }
    Ok(RunParams {
        bytes: *bytes,
        seconds: *seconds,
        quiet: *quiet,
        // The kernel's counts are part of what a lab shows; leaving them out is allowed.
        counts: *counts,
        trace_syscalls: task.params.trace_syscalls,
        verify: task.params.verify,
        ..RunParams::default()
    })
}

/// What a task runs, as a phrase for errors: `step X` or `mechanism Y`.
fn work_name(work: TaskWork<'_>) -> String {
    match work {
        TaskWork::Step(step) => format!("step `{step}`"),
        TaskWork::Mechanism(mechanism) => format!("IPC mechanism `{mechanism}`"),
        TaskWork::Latency(latency) => format!(
            "latency of `{}` ({}, {} B)",
            latency.mechanism,
            latency.mode.as_str(),
            latency.size
        ),
    }
}

/// The lab and task a tag names, if the task runs `work`.
fn task_of(tag: &LabTag, work: TaskWork<'_>) -> Result<(&'static Lab, &'static Task), LabError> {
    let lab = lab(&tag.id)?;
    let task = task(lab, tag)?;
    // A latency message names its mechanism; the task's mode and size are
    // checked field by field in `lab_latency`.
    let same = match (task.work(), work) {
        (TaskWork::Latency(ours), TaskWork::Latency(asked)) => ours.mechanism == asked.mechanism,
        (ours, asked) => ours == asked,
    };
    if !same {
        return Err(LabError::WrongWork {
            lab: lab.id.clone(),
            task: task.id.clone(),
            expected: work_name(task.work()),
            found: work_name(work),
        });
    }
    Ok((lab, task))
}

/// The lab and task a tag names, if the task runs `step`.
fn task_of_step(tag: &LabTag, step: &str) -> Result<(&'static Lab, &'static Task), LabError> {
    task_of(tag, TaskWork::Step(step))
}

/// Checks a lab-tagged IPC run: the task must run exactly this mechanism, and
/// only the bytes and quiet are the student's (the bytes within the IPC lab's own bounds, which
/// `ipc::plan` checks next). Returns the parameters to run it with.
pub(crate) fn lab_ipc(
    tag: &LabTag,
    mechanism: &str,
    params: &IpcRunParams,
) -> Result<IpcRunParams, LabError> {
    let (_, task) = task_of(tag, TaskWork::Mechanism(mechanism))?;
    // Every field named: one added later must be decided on for labs too.
    let IpcRunParams {
        bytes,
        chunk,
        counts,
        quiet,
    } = params;
    if chunk.is_some() {
        return Err(LabError::FixedParam {
            task: task.id.clone(),
            param: "chunk",
        });
    }
    Ok(IpcRunParams {
        bytes: bytes.or(task.bytes.map(ByteSize)),
        chunk: None,
        // As for a pipe step: the counts are part of what a lab shows, and
        // leaving them out is allowed (their checks then say so).
        counts: *counts,
        // As for a pipe step: the student may leave a run unwatched (the lab
        // card does, so its checks compare quiet runs).
        quiet: *quiet,
    })
}

/// Checks a lab-tagged latency run: the task's mechanism, mode and size (the
/// message may leave the mode and size out, or repeat them), on the runner's
/// default two CPUs; only the round trips are the student's (within the page's
/// bounds, which `params::latency::plan` checks next). Returns the parameters to
/// run it with.
pub(crate) fn lab_latency(
    tag: &LabTag,
    params: &crate::params::latency::LatencyRunParams,
) -> Result<crate::params::latency::LatencyRunParams, LabError> {
    // Every field named: one added later must be decided on for labs too.
    let crate::params::latency::LatencyRunParams {
        mechanism,
        mode,
        size,
        cpus,
        round_trips,
    } = params;
    let asked = defs::LatencyTask {
        mechanism: mechanism.clone(),
        mode: mode.unwrap_or(pipebench::latency::Mode::Blocking),
        size: size.map_or(0, |s| s.bytes()),
        round_trips: round_trips.unwrap_or(0),
    };
    let (_, task) = task_of(tag, TaskWork::Latency(&asked))?;
    let TaskWork::Latency(ours) = task.work() else {
        return Err(LabError::WrongWork {
            lab: tag.id.clone(),
            task: task.id.clone(),
            expected: work_name(task.work()),
            found: work_name(TaskWork::Latency(&asked)),
        });
    };
    let fixed = |param| LabError::FixedParam {
        task: task.id.clone(),
        param,
    };
    if mode.is_some_and(|m| m != ours.mode) {
        return Err(fixed("mode"));
    }
    if size.is_some_and(|s| s.bytes() != ours.size) {
        return Err(fixed("size"));
    }
    if cpus.is_some() {
        return Err(fixed("cpus"));
    }
    Ok(crate::params::latency::LatencyRunParams {
        mechanism: ours.mechanism.clone(),
        mode: Some(ours.mode),
        size: Some(ByteSize(ours.size)),
        cpus: None,
        round_trips: Some(round_trips.unwrap_or(ours.round_trips)),
    })
}

/// Checks a lab-tagged run; returns the parameters to run it with.
pub(crate) fn lab_run(tag: &LabTag, step: &str, params: &RunParams) -> Result<RunParams, LabError> {
    let (lab, task) = task_of_step(tag, step)?;
    if task.sweep.is_some() {
        return Err(LabError::WrongShape {
            lab: lab.id.clone(),
            task: task.id.clone(),
            expected: "a sweep".into(),
        });
    }
    task_params(task, params)
}

/// Checks a lab-tagged sweep; returns the parameters of each of its runs.
pub(crate) fn lab_sweep(
    tag: &LabTag,
    step: &str,
    param: SweepParam,
    values: &[ByteSize],
    repeats: usize,
    params: &RunParams,
) -> Result<RunParams, LabError> {
    let (lab, task) = task_of_step(tag, step)?;
    let asked: Vec<u64> = values.iter().map(|v| v.bytes()).collect();
    match &task.sweep {
        Some(sweep)
            if sweep.param() == Some(param) && sweep.values == asked && repeats == task.runs => {}
        Some(sweep) => {
            return Err(LabError::WrongShape {
                lab: lab.id.clone(),
                task: task.id.clone(),
                expected: format!(
                    "a sweep of {} over {:?} with {} repeat(s)",
                    sweep.param, sweep.values, task.runs
                ),
            })
        }
        None => {
            return Err(LabError::WrongShape {
                lab: lab.id.clone(),
                task: task.id.clone(),
                expected: "a plain run".into(),
            })
        }
    }
    task_params(task, params)
}

/// Checks a prediction against its question: a number within bounds, or one
/// of the choices.
pub(crate) fn check_prediction(lab_id: &str, value: &Value) -> Result<(), LabError> {
    let lab = lab(lab_id)?;
    let p = &lab.prediction;
    let bad = |reason: String| LabError::BadPrediction {
        lab: lab.id.clone(),
        reason,
    };
    match p.kind {
        PredictionKind::Number => {
            let (min, max) = (p.min.unwrap_or(f64::MIN), p.max.unwrap_or(f64::MAX));
            match value.as_f64() {
                Some(v) if v.is_finite() && v >= min && v <= max => Ok(()),
                _ => Err(bad(format!("{value} is not a number from {min} to {max}"))),
            }
        }
        PredictionKind::Choice => match value.as_str() {
            Some(choice) if p.options.iter().any(|o| o == choice) => Ok(()),
            _ => Err(bad(format!(
                "{value} is not one of {}",
                p.options.join(", ")
            ))),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tag(id: &str, task: &str) -> LabTag {
        LabTag {
            id: id.into(),
            task: task.into(),
        }
    }

    #[test]
    fn a_lab_run_is_its_task_and_nothing_else() {
        let params = lab_run(
            &tag("vmsplice-safety", "verified"),
            "vmsplice-read",
            &RunParams::default(),
        )
        .unwrap();
        assert_eq!(params.verify, Some(true));
        let err = lab_run(
            &tag("vmsplice-safety", "verified"),
            "busy-loop",
            &RunParams::default(),
        );
        assert!(matches!(err, Err(LabError::WrongWork { .. })));
        let err = lab_run(
            &tag("vmsplice-safety", "verified"),
            "vmsplice-read",
            &RunParams {
                verify: Some(false),
                ..Default::default()
            },
        );
        assert!(matches!(
            err,
            Err(LabError::FixedParam {
                param: "verify",
                ..
            })
        ));
        let err = lab_run(
            &tag("vmsplice-safety", "verified"),
            "vmsplice-read",
            &RunParams {
                profile: Some(true),
                ..Default::default()
            },
        );
        assert!(matches!(
            err,
            Err(LabError::FixedParam {
                param: "profile",
                ..
            })
        ));
        // Tracing slows a run: a student cannot turn it on, nor off where the
        // task's checks need the per-page counts.
        let traced = |on| RunParams {
            trace_syscalls: Some(on),
            ..Default::default()
        };
        assert!(matches!(
            lab_run(
                &tag("vmsplice-safety", "reuse"),
                "vmsplice-reuse",
                &traced(true)
            ),
            Err(LabError::FixedParam {
                param: "trace_syscalls",
                ..
            })
        ));
        assert!(matches!(
            lab_run(
                &tag("vmsplice-safety", "verified"),
                "vmsplice-read",
                &traced(false)
            ),
            Err(LabError::FixedParam {
                param: "trace_syscalls",
                ..
            })
        ));
        // What the student may set goes through; nothing else is kept.
        let free = RunParams {
            bytes: Some(ByteSize(1 << 20)),
            seconds: Some(1.0),
            quiet: Some(true),
            profile: Some(false),
            ..Default::default()
        };
        let params = lab_run(&tag("vmsplice-safety", "verified"), "vmsplice-read", &free).unwrap();
        assert_eq!(
            params,
            RunParams {
                profile: None,
                verify: Some(true),
                // The task counts pages (its check needs them), whatever the page says.
                trace_syscalls: Some(true),
                ..free
            }
        );
        assert!(matches!(
            lab_run(&tag("nope", "x"), "write-read", &RunParams::default()),
            Err(LabError::UnknownLab { .. })
        ));
        assert!(matches!(
            lab_run(&tag("sizes", "pipe"), "write-read", &RunParams::default()),
            Err(LabError::WrongShape { .. })
        ));
    }

    #[test]
    fn a_lab_ipc_run_is_its_mechanism_with_only_bytes_free() {
        let shm = tag("choose-ipc", "posix-shm");
        let params = lab_ipc(&shm, "posix-shm", &IpcRunParams::default()).unwrap();
        let task = lab("choose-ipc").unwrap().task("posix-shm").unwrap();
        assert_eq!(params.bytes, task.bytes.map(ByteSize));
        let asked = IpcRunParams {
            bytes: Some(ByteSize(4 << 20)),
            chunk: None,
            counts: Some(false),
            quiet: Some(true),
        };
        assert_eq!(lab_ipc(&shm, "posix-shm", &asked).unwrap(), asked);
        let err = lab_ipc(&shm, "pipe-rw", &asked).unwrap_err();
        assert!(matches!(err, LabError::WrongWork { .. }), "{err}");
        assert!(err.to_string().contains("`posix-shm`"), "{err}");
        let err = lab_ipc(
            &shm,
            "posix-shm",
            &IpcRunParams {
                chunk: Some(ByteSize(4096)),
                ..asked
            },
        );
        assert!(matches!(
            err,
            Err(LabError::FixedParam { param: "chunk", .. })
        ));
        // A pipe task does not take an IPC run, nor an IPC task a pipe run.
        assert!(matches!(
            lab_ipc(
                &tag("variance", "repeat"),
                "posix-shm",
                &IpcRunParams::default()
            ),
            Err(LabError::WrongWork { .. })
        ));
        assert!(matches!(
            lab_run(&shm, "write-read", &RunParams::default()),
            Err(LabError::WrongWork { .. })
        ));
    }

    #[test]
    fn a_lab_latency_run_is_its_configuration_with_only_round_trips_free() {
        use crate::params::latency::LatencyRunParams;
        use pipebench::latency::Mode;
        let busy = tag("latency-cpu", "busy");
        let asked = |mechanism: &str| LatencyRunParams {
            mechanism: mechanism.into(),
            mode: None,
            size: None,
            cpus: None,
            round_trips: None,
        };
        // Left out, the mode and size are the task's, not the page's defaults.
        let params = lab_latency(&busy, &asked("pipe")).unwrap();
        assert_eq!(
            (params.mode, params.size, params.round_trips, params.cpus),
            (Some(Mode::Busy), Some(ByteSize(64)), Some(5000), None)
        );
        let repeated = LatencyRunParams {
            mode: Some(Mode::Busy),
            size: Some(ByteSize(64)),
            round_trips: Some(200),
            ..asked("pipe")
        };
        assert_eq!(
            lab_latency(&busy, &repeated).unwrap().round_trips,
            Some(200)
        );
        let err = lab_latency(&busy, &asked("tcp")).unwrap_err();
        assert!(matches!(err, LabError::WrongWork { .. }), "{err}");
        assert!(err.to_string().contains("`pipe` (busy, 64 B)"), "{err}");
        for (bad, param) in [
            (
                LatencyRunParams {
                    mode: Some(Mode::Blocking),
                    ..asked("pipe")
                },
                "mode",
            ),
            (
                LatencyRunParams {
                    size: Some(ByteSize(4096)),
                    ..asked("pipe")
                },
                "size",
            ),
            (
                LatencyRunParams {
                    cpus: Some([0, 0]),
                    ..asked("pipe")
                },
                "cpus",
            ),
        ] {
            match lab_latency(&busy, &bad) {
                Err(LabError::FixedParam { param: p, .. }) => assert_eq!(p, param),
                other => panic!("{param}: {other:?}"),
            }
        }
        // Neither a pipe task nor an IPC task takes a latency run.
        assert!(matches!(
            lab_latency(&tag("choose-ipc", "pipe-rw"), &asked("pipe")),
            Err(LabError::WrongWork { .. })
        ));
        assert!(matches!(
            lab_run(&busy, "write-read", &RunParams::default()),
            Err(LabError::WrongWork { .. })
        ));
    }

    #[test]
    fn a_lab_sweep_must_match_its_task() {
        let values: Vec<ByteSize> = [16384u64, 65536, 262144, 1048576].map(ByteSize).to_vec();
        let ok = lab_sweep(
            &tag("sizes", "pipe"),
            "write-read",
            SweepParam::PipeSize,
            &values,
            5,
            &RunParams::default(),
        );
        assert!(ok.is_ok());
        let err = lab_sweep(
            &tag("sizes", "pipe"),
            "write-read",
            SweepParam::PipeSize,
            &values[..2],
            2,
            &RunParams::default(),
        );
        assert!(matches!(err, Err(LabError::WrongShape { .. })));
    }

    #[test]
    fn predictions_are_bounded() {
        assert!(check_prediction("variance", &json!(3)).is_ok());
        assert!(check_prediction("variance", &json!(60)).is_err());
        assert!(check_prediction("variance", &json!("six")).is_err());
        assert!(check_prediction("choose-ipc", &json!("posix-shm")).is_ok());
        let err = check_prediction("choose-ipc", &json!("carrier pigeon")).unwrap_err();
        assert!(
            err.to_string()
                .contains("pipe-rw, unix-stream, posix-shm, memfd-scm"),
            "{err}"
        );
    }
}
