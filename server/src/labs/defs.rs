//! The labs as `book/labs/labs.json` defines them: goal, prediction, tasks and
//! checks. The same file is embedded in the lab pages for the page's own check
//! logic (`labchecks.js`), so a check is written once, as data.

use std::sync::OnceLock;

use pipebench::engine::sweep::SweepParam;
use pipebench::steps::catalog;
use serde::{Deserialize, Serialize};

/// The definitions, compiled in so the server and its exports always agree
/// with the book they were built with.
pub(crate) const LABS_JSON: &str = include_str!("../../../book/labs/labs.json");

/// Version of the definitions' format.
pub(crate) const DEFINITIONS_VERSION: u64 = 1;

/// Most runs a lab task may ask for (per value, for a sweep).
pub(crate) const MAX_TASK_RUNS: usize = 10;

/// The whole file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LabBook {
    /// Format version.
    pub schema_version: u64,
    /// The labs, in the book's order.
    pub labs: Vec<Lab>,
}

/// One lab.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Lab {
    /// Identifier (`{{#lab ID}}`).
    pub id: String,
    /// Title.
    pub title: String,
    /// The chapter it follows.
    pub chapter: String,
    /// What the student finds out.
    pub goal: String,
    /// Default seconds per run.
    pub seconds: f64,
    /// What the student predicts before running.
    pub prediction: Prediction,
    /// The runs and sweeps.
    pub tasks: Vec<Task>,
    /// The automatic checks.
    pub checks: Vec<Check>,
}

/// The question asked before any run, and how the measurements answer it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Prediction {
    /// The question.
    pub question: String,
    /// `number` or `choice`.
    pub kind: PredictionKind,
    /// Unit of a number.
    #[serde(default)]
    pub unit: Option<String>,
    /// Smallest number accepted.
    #[serde(default)]
    pub min: Option<f64>,
    /// Largest number accepted.
    #[serde(default)]
    pub max: Option<f64>,
    /// The choices (task ids), for `choice`.
    #[serde(default)]
    pub options: Vec<String>,
    /// What the measurements say.
    pub answer: Measure,
}

/// The kind of answer a prediction takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum PredictionKind {
    /// A number within `min..=max`.
    Number,
    /// One of `options`.
    Choice,
}

/// A run or a sweep of one catalog step, or a run of one IPC mechanism.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Task {
    /// Identifier within the lab.
    pub id: String,
    /// What the button says.
    pub title: String,
    /// Catalog step id (a pipe run); exactly one of `step` and `mechanism`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    /// IPC mechanism id (`pipebench::ipc::find`): the task is an IPC lab run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mechanism: Option<String>,
    /// A latency configuration (`pipebench::latency`): the task is a latency
    /// run of it on the runner's default two CPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<LatencyTask>,
    /// Bytes an IPC task moves unless the student caps them (default: the
    /// IPC lab's own default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// Parameters the task fixes (e.g. `verify`), beyond the student's seconds and bytes.
    #[serde(default)]
    pub params: TaskParams,
    /// A sweep instead of plain runs.
    #[serde(default)]
    pub sweep: Option<TaskSweep>,
    /// Runs needed (per value, for a sweep).
    pub runs: usize,
}

/// A latency task's configuration: the mechanism, how both ends wait, and
/// the message size. The CPUs are the runner's default two (two CPUs, so
/// busy-polling has a partner to poll for); the round trips are the task's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LatencyTask {
    /// Latency mechanism id (`pipebench::latency::LatencyMechanism`).
    pub mechanism: String,
    /// `blocking` or `busy`.
    pub mode: pipebench::latency::Mode,
    /// Bytes per message.
    pub size: u64,
    /// Round trips each run times.
    pub round_trips: u32,
}

impl LatencyTask {
    /// The engine's configuration of one run on `cpus`, or why there is none.
    pub(crate) fn config(
        &self,
        cpus: [usize; 2],
    ) -> Result<pipebench::latency::LatencyConfig, pipebench::latency::LatencyError> {
        Ok(pipebench::latency::LatencyConfig {
            mechanism: pipebench::latency::LatencyMechanism::parse(&self.mechanism)?,
            mode: self.mode,
            size: self.size,
            cpus,
            round_trips: self.round_trips,
        })
    }
}

/// What a task runs: a catalog step, an IPC mechanism or a latency configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TaskWork<'a> {
    /// A pipe run (or sweep) of this catalog step.
    Step(&'a str),
    /// An IPC lab run of this mechanism.
    Mechanism(&'a str),
    /// A latency run of this configuration.
    Latency(&'a LatencyTask),
}

impl Task {
    /// What the task runs. A checked definition has exactly one of `step`,
    /// `mechanism` and `latency`; an unchecked one with none reads as an empty step.
    pub(crate) fn work(&self) -> TaskWork<'_> {
        match (&self.latency, &self.mechanism, &self.step) {
            (Some(latency), _, _) => TaskWork::Latency(latency),
            (None, Some(mechanism), _) => TaskWork::Mechanism(mechanism),
            (None, None, step) => TaskWork::Step(step.as_deref().unwrap_or("")),
        }
    }
}

/// What a task fixes about its runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TaskParams {
    /// The reader checks every byte.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<bool>,
    /// Count what fires on every page or call (page allocations), for a task
    /// whose checks need those counts: it slows the run, so only such a task
    /// asks, and its student cannot change it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_syscalls: Option<bool>,
}

/// The swept parameter and its values.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TaskSweep {
    /// `pipe_size` or `buf_size`.
    pub param: String,
    /// Values in bytes, increasing.
    pub values: Vec<u64>,
}

impl TaskSweep {
    /// The swept parameter.
    pub(crate) fn param(&self) -> Option<SweepParam> {
        self.param.parse().ok()
    }
}

/// An automatic check: a measure and the bounds it must fall within.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Check {
    /// Identifier within the lab.
    pub id: String,
    /// The kernel behaviour the check rests on: judged only where the runner's
    /// probe gave this answer ([`super::checks::judge`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<Assumes>,
    /// What passing means.
    pub title: String,
    /// What is computed from the measurements.
    pub measure: Measure,
    /// Passes when the measure is at least this.
    #[serde(default)]
    pub min: Option<f64>,
    /// Passes when the measure is more than this.
    #[serde(default)]
    pub above: Option<f64>,
    /// Passes when the measure is at most this.
    #[serde(default)]
    pub max: Option<f64>,
    /// Why it may have failed.
    pub explain: String,
    /// What to try then.
    #[serde(rename = "try")]
    pub try_next: String,
}

/// What a check assumes the kernel does: one behaviour probe's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Assumes {
    /// The behaviour probe.
    pub probe: pipebench::machine::behaviour::ProbeId,
    /// The answer the check needs (one the probe gives).
    pub answer: String,
}

/// Which results a measure reads: a task's, or one value of a sweep task's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Ref {
    /// Task id.
    pub task: String,
    /// Only the sweep points at this value (bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<u64>,
}

/// A per-run figure. None of them is an absolute speed judged against a bound:
/// speeds only enter checks as ratios.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Metric {
    /// Throughput, GiB/s.
    GibPerS,
    /// Throughput, MiB/s (IPC records carry it; pipe results derive it from GiB/s).
    MibPerS,
    /// CPU time of both ends (user + system) per wall-clock time.
    CpuPerWall,
    /// Share of the bytes the reader found corrupted (runs that verified).
    CorruptedShare,
    /// Share of the writer's checked buffer bytes in huge pages.
    HugeShare,
    /// Pages the writer allocated per GiB moved (`counts.writer.page_allocs`; a
    /// kernel tracepoint, counted where permitted).
    WriterPageAllocsPerGib,
    /// Pages the writer allocated beyond one per page fault it took, per GiB
    /// moved (`counts.writer.page_allocs` less `page_faults`, at least 0): what
    /// its data calls allocated, without the fixed cost of faulting in its own
    /// buffers, which at a lab's 16 MiB outweighs a vmsplice run's real figure.
    WriterAllocsBeyondFaultsPerGib,
    /// Sleeps (voluntary context switches) of every end per GiB moved.
    SleepsPerGib,
    /// The writer's page faults over its run.
    WriterPageFaults,
    /// A latency run's median round trip, ns.
    P50Ns,
    /// A latency run's 99th percentile round trip, ns.
    P99Ns,
    /// CPU time both ends of a latency run spent per round trip, ns.
    CpuNsPerRoundTrip,
    /// Sleeps (voluntary context switches) of both ends per round trip.
    SleepsPerRoundTrip,
    /// An IPC record's producer's page faults per page of data moved, in the
    /// record's `page_size` (`counts.producer.page_faults`; in records from
    /// before the record kept its counts by role, `ends[producer].counts.counts`).
    ProducerFaultsPerPage,
    /// Bytes through both ends' data calls per byte an IPC record moved (the
    /// ends' `call_bytes`; absent from records of runners before the tally).
    CallBytesPerByte,
}

impl Metric {
    /// Whether the figure is one of the kernel's counts: missing, it is "not
    /// counted here" (the machine's doing), never the student's failure.
    pub(crate) fn is_count(self) -> bool {
        matches!(
            self,
            Metric::WriterPageAllocsPerGib
                | Metric::WriterAllocsBeyondFaultsPerGib
                | Metric::SleepsPerGib
                | Metric::WriterPageFaults
                | Metric::ProducerFaultsPerPage
                | Metric::CallBytesPerByte
        )
    }
}

/// What a check or a prediction's answer computes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum Measure {
    /// median(num) / median(den).
    Ratio {
        /// The figure compared.
        metric: Metric,
        /// Numerator's results.
        num: Ref,
        /// Denominator's results.
        den: Ref,
    },
    /// The median over the runs.
    Median {
        /// The figure.
        metric: Metric,
        /// Whose runs.
        of: Ref,
    },
    /// The largest over the runs.
    Max {
        /// The figure.
        metric: Metric,
        /// Whose runs.
        of: Ref,
    },
    /// The smallest over the runs.
    Min {
        /// The figure.
        metric: Metric,
        /// Whose runs.
        of: Ref,
    },
    /// After how many runs the running median stays within `tolerance` (a
    /// fraction) of the median of all of them.
    Settle {
        /// The figure.
        metric: Metric,
        /// Whose runs, in the order they finished.
        of: Ref,
        /// Allowed distance, as a fraction of the final median.
        tolerance: f64,
    },
    /// The task whose median is highest.
    Fastest {
        /// The figure.
        metric: Metric,
        /// The candidates.
        among: Vec<Ref>,
    },
    /// The task whose median is lowest (a latency: lower is better).
    Lowest {
        /// The figure.
        metric: Metric,
        /// The candidates.
        among: Vec<Ref>,
    },
}

impl Measure {
    /// The results this measure reads.
    pub(crate) fn refs(&self) -> Vec<&Ref> {
        match self {
            Measure::Ratio { num, den, .. } => vec![num, den],
            Measure::Median { of, .. }
            | Measure::Max { of, .. }
            | Measure::Min { of, .. }
            | Measure::Settle { of, .. } => vec![of],
            Measure::Fastest { among, .. } | Measure::Lowest { among, .. } => {
                among.iter().collect()
            }
        }
    }
}

impl LabBook {
    /// A lab by id.
    pub(crate) fn find(&self, id: &str) -> Option<&Lab> {
        self.labs.iter().find(|lab| lab.id == id)
    }

    /// The lab ids, for error messages.
    pub(crate) fn ids(&self) -> String {
        self.labs
            .iter()
            .map(|lab| lab.id.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl Lab {
    /// A task by id.
    pub(crate) fn task(&self, id: &str) -> Option<&Task> {
        self.tasks.iter().find(|task| task.id == id)
    }

    /// The results a reference must have before a measure reads it.
    pub(crate) fn required(&self, r: &Ref) -> usize {
        match self.task(&r.task) {
            Some(Task {
                sweep: Some(sweep),
                runs,
                ..
            }) if r.value.is_none() => sweep.values.len() * runs,
            Some(task) => task.runs,
            None => usize::MAX,
        }
    }

    /// Every problem with this lab's definition.
    fn problems(&self) -> Vec<String> {
        let mut problems: Vec<String> = self.tasks.iter().flat_map(task_problems).collect();
        problems.extend(self.assumption_problems());
        problems.extend(self.reference_problems());
        problems.extend(self.option_problems());
        problems
            .into_iter()
            .map(|what| format!("lab `{}`: {what}", self.id))
            .collect()
    }

    /// Checks resting on a behaviour (`when`) with an answer its probe never gives.
    fn assumption_problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for check in &self.checks {
            if let Some(when) = &check.when {
                let answers = when.probe.answers();
                if !answers.contains(&when.answer) {
                    problems.push(format!(
                        "check `{}` assumes {} answers `{}`: it answers one of {}",
                        check.id,
                        when.probe.as_str(),
                        when.answer,
                        answers.join(", ")
                    ));
                }
            }
        }
        problems
    }

    /// Checks and the prediction reading a task, or a swept value, the lab lacks.
    fn reference_problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let mut measures: Vec<(&str, &Measure)> = self
            .checks
            .iter()
            .map(|c| (c.id.as_str(), &c.measure))
            .collect();
        measures.push(("prediction", &self.prediction.answer));
        for (name, measure) in measures {
            for r in measure.refs() {
                match self.task(&r.task) {
                    None => problems.push(format!("`{name}` reads unknown task `{}`", r.task)),
                    Some(task) => {
                        let sweep_values = task.sweep.as_ref().map(|s| &s.values);
                        match (r.value, sweep_values) {
                            (Some(v), Some(values)) if !values.contains(&v) => {
                                problems.push(format!(
                                    "`{name}` reads value {v} that task `{}` does not sweep",
                                    r.task
                                ))
                            }
                            (Some(_), None) => problems.push(format!(
                                "`{name}` reads a value of task `{}`, which is no sweep",
                                r.task
                            )),
                            _ => {}
                        }
                    }
                }
            }
        }
        problems
    }

    /// A choice prediction's options that are not tasks.
    fn option_problems(&self) -> Vec<String> {
        if self.prediction.kind != PredictionKind::Choice {
            return Vec::new();
        }
        self.prediction
            .options
            .iter()
            .filter(|option| self.task(option).is_none())
            .map(|option| format!("prediction option `{option}` is not a task"))
            .collect()
    }
}

/// What is wrong with a task: what it runs, how many times, what it sweeps.
fn task_problems(task: &Task) -> Vec<String> {
    if let Some(latency) = &task.latency {
        return latency_problems(task, latency);
    }
    let mut problems = runner_problems(task);
    if task.runs == 0 || task.runs > MAX_TASK_RUNS {
        problems.push(format!(
            "task `{}` asks for {} runs: 1 to {MAX_TASK_RUNS} allowed",
            task.id, task.runs
        ));
    }
    if let Some(sweep) = &task.sweep {
        if sweep.param().is_none() {
            problems.push(format!("task `{}` sweeps `{}`", task.id, sweep.param));
        }
        if sweep.values.is_empty() || !sweep.values.windows(2).all(|w| w[0] < w[1]) {
            problems.push(format!("task `{}`: sweep values must increase", task.id));
        }
    }
    problems
}

/// What is wrong with what a (non-latency) task runs: exactly one of a known
/// step or a known mechanism, with the fields that one takes.
fn runner_problems(task: &Task) -> Vec<String> {
    let mut problems = Vec::new();
    match (&task.step, &task.mechanism) {
        (Some(step), None) => {
            if catalog::find(step).is_none() {
                problems.push(format!("task `{}` runs unknown step `{step}`", task.id));
            }
            if task.bytes.is_some() {
                problems.push(format!(
                    "task `{}`: `bytes` belongs to mechanism tasks; a step's byte cap is the student's",
                    task.id
                ));
            }
        }
        (None, Some(mechanism)) => {
            if pipebench::ipc::find(mechanism).is_none() {
                problems.push(format!(
                    "task `{}` runs unknown mechanism `{mechanism}`: the mechanisms are {}",
                    task.id,
                    pipebench::ipc::ids().join(", ")
                ));
            }
            if task.sweep.is_some() || task.params != TaskParams::default() {
                problems.push(format!(
                    "task `{}`: a mechanism task takes no sweep and no params",
                    task.id
                ));
            }
            if let Some(bytes) = task.bytes {
                if !(1..=crate::params::ipc::MAX_BYTES).contains(&bytes) {
                    problems.push(format!(
                        "task `{}` moves {bytes} bytes: 1 to {} allowed",
                        task.id,
                        crate::params::ipc::MAX_BYTES
                    ));
                }
            }
        }
        _ => problems.push(format!(
            "task `{}` needs exactly one of `step` and `mechanism`",
            task.id
        )),
    }
    problems
}

/// What is wrong with a latency task: it must be only that (no step,
/// mechanism, bytes, sweep or params), run 1 to `MAX_TASK_RUNS` times, and be a
/// configuration the engine accepts (its mode, its size, round trips the page
/// may ask for).
fn latency_problems(task: &Task, latency: &LatencyTask) -> Vec<String> {
    let mut problems = Vec::new();
    if task.step.is_some()
        || task.mechanism.is_some()
        || task.bytes.is_some()
        || task.sweep.is_some()
        || task.params != TaskParams::default()
    {
        problems.push(format!(
            "task `{}`: a latency task takes no step, mechanism, bytes, sweep or params",
            task.id
        ));
    }
    if task.runs == 0 || task.runs > MAX_TASK_RUNS {
        problems.push(format!(
            "task `{}` asks for {} runs: 1 to {MAX_TASK_RUNS} allowed",
            task.id, task.runs
        ));
    }
    if latency.round_trips > crate::params::latency::PAGE_MAX_ROUND_TRIPS {
        problems.push(format!(
            "task `{}` times {} round trips: a page may ask for {} at most",
            task.id,
            latency.round_trips,
            crate::params::latency::PAGE_MAX_ROUND_TRIPS
        ));
    }
    // The machine's CPUs are not the definition's business: check on CPU 0.
    let checked = latency.config([0, 0]).and_then(|config| {
        if !pipebench::latency::ROUND_TRIPS.contains(&config.round_trips) {
            return Err(pipebench::latency::LatencyError::BadRoundTrips {
                round_trips: config.round_trips,
            });
        }
        pipebench::latency::check_size(config.size)?;
        if let Some(reason) = config.mechanism.info().lacks_mode(config.mode) {
            return Err(pipebench::latency::LatencyError::NoSuchMode {
                mechanism: latency.mechanism.clone(),
                mode: config.mode,
                reason: reason.to_string(),
            });
        }
        Ok(())
    });
    if let Err(err) = checked {
        problems.push(format!("task `{}`: {err}", task.id));
    }
    problems
}

/// Why the lab definitions cannot be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DefinitionError {
    /// Not the expected JSON.
    #[error("book/labs/labs.json does not parse: {0}")]
    Parse(#[from] serde_json::Error),
    /// Parsed, but inconsistent with itself or the catalog.
    #[error("book/labs/labs.json is inconsistent: {}", .0.join("; "))]
    Inconsistent(Vec<String>),
}

/// Parses and checks definitions (the compiled-in ones, or a test's).
pub(crate) fn parse(text: &str) -> Result<LabBook, DefinitionError> {
    let book: LabBook = serde_json::from_str(text)?;
    let mut problems: Vec<String> = book.labs.iter().flat_map(Lab::problems).collect();
    if book.schema_version != DEFINITIONS_VERSION {
        problems.push(format!(
            "schema_version {} where {DEFINITIONS_VERSION} is expected",
            book.schema_version
        ));
    }
    let mut ids: Vec<&str> = book.labs.iter().map(|l| l.id.as_str()).collect();
    ids.sort_unstable();
    if ids.windows(2).any(|w| w[0] == w[1]) {
        problems.push("two labs share an id".into());
    }
    if problems.is_empty() {
        Ok(book)
    } else {
        Err(DefinitionError::Inconsistent(problems))
    }
}

/// The compiled-in labs. Their consistency is a unit test, so this cannot fail
/// in a tested build.
pub(crate) fn labs() -> &'static LabBook {
    static LABS: OnceLock<LabBook> = OnceLock::new();
    LABS.get_or_init(|| parse(LABS_JSON).expect("book/labs/labs.json is checked by the tests"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_book_labs_are_consistent() {
        let book = parse(LABS_JSON).unwrap();
        assert!(book.labs.len() >= 6, "the issue asks for at least six labs");
        for lab in &book.labs {
            assert!(!lab.checks.is_empty(), "lab {} has no check", lab.id);
        }
    }

    #[test]
    fn inconsistent_labs_are_named() {
        let text = LABS_JSON.replacen("\"step\": \"write-read\"", "\"step\": \"teleport\"", 1);
        let err = parse(&text).unwrap_err().to_string();
        assert!(err.contains("unknown step `teleport`"), "{err}");
        let text = LABS_JSON.replacen("\"task\": \"repeat\"", "\"task\": \"nope\"", 1);
        let err = parse(&text).unwrap_err().to_string();
        assert!(err.contains("unknown task `nope`"), "{err}");
    }

    #[test]
    fn latency_tasks_are_checked() {
        let book = parse(LABS_JSON).unwrap();
        let lab = book.find("latency-tail").unwrap();
        assert!(matches!(
            lab.task("shm-ring").unwrap().work(),
            TaskWork::Latency(LatencyTask { mechanism, .. }) if mechanism == "shm-ring"
        ));
        let ring = r#""mechanism": "shm-ring", "mode": "busy", "size": 64, "round_trips": 5000"#;
        assert!(LABS_JSON.contains(ring));
        for (text, expect) in [
            (
                LABS_JSON.replacen(ring, r#""mechanism": "pigeon", "mode": "busy", "size": 64, "round_trips": 5000"#, 1),
                "unknown mechanism `pigeon`",
            ),
            (
                LABS_JSON.replacen(ring, r#""mechanism": "shm-ring", "mode": "blocking", "size": 64, "round_trips": 5000"#, 1),
                "no blocking mode",
            ),
            (
                LABS_JSON.replacen(ring, r#""mechanism": "shm-ring", "mode": "busy", "size": 0, "round_trips": 5000"#, 1),
                "task `shm-ring`",
            ),
            (
                LABS_JSON.replacen(ring, r#""mechanism": "shm-ring", "mode": "busy", "size": 64, "round_trips": 1000000"#, 1),
                "a page may ask for 100000 at most",
            ),
            (
                LABS_JSON.replacen(
                    &format!("\"latency\": {{ {ring} }}"),
                    &format!("\"latency\": {{ {ring} }}, \"step\": \"write-read\""),
                    1,
                ),
                "a latency task takes no step",
            ),
        ] {
            match parse(&text) {
                Ok(_) => panic!("accepted a bad definition (expected {expect:?})"),
                Err(err) => assert!(err.to_string().contains(expect), "{err}"),
            }
        }
    }

    #[test]
    fn mechanism_tasks_are_checked() {
        let book = parse(LABS_JSON).unwrap();
        let lab = book.find("choose-ipc").unwrap();
        assert!(lab
            .tasks
            .iter()
            .any(|t| t.work() == TaskWork::Mechanism("posix-shm")));
        let shm = "\"mechanism\": \"posix-shm\", \"bytes\": 67108864";
        assert!(LABS_JSON.contains(shm));
        for (text, expect) in [
            (
                LABS_JSON.replacen(shm, "\"mechanism\": \"pigeon\"", 1),
                "unknown mechanism `pigeon`",
            ),
            (
                LABS_JSON.replacen(
                    shm,
                    "\"mechanism\": \"posix-shm\", \"step\": \"write-read\"",
                    1,
                ),
                "exactly one of `step` and `mechanism`",
            ),
            (
                LABS_JSON.replacen(shm, "\"bytes\": 1048576", 1),
                "exactly one of `step` and `mechanism`",
            ),
            (
                LABS_JSON.replacen(shm, "\"mechanism\": \"posix-shm\", \"bytes\": 0", 1),
                "moves 0 bytes",
            ),
            (
                LABS_JSON.replacen(
                    shm,
                    "\"mechanism\": \"posix-shm\", \"params\": {\"verify\": true}",
                    1,
                ),
                "takes no sweep and no params",
            ),
            (
                LABS_JSON.replacen(
                    "\"step\": \"write-read\"",
                    "\"step\": \"write-read\", \"bytes\": 1048576",
                    1,
                ),
                "`bytes` belongs to mechanism tasks",
            ),
        ] {
            match parse(&text) {
                Ok(_) => panic!("accepted a bad definition (expected {expect:?})"),
                Err(err) => assert!(err.to_string().contains(expect), "{err}"),
            }
        }
    }
}
