//! A student's exported lab report, read and validated before anything uses
//! it: the file (only a regular file, opened with `O_NOFOLLOW | O_NONBLOCK`,
//! so a link, a FIFO or a device is refused without blocking, at most
//! [`MAX_REPORT_BYTES`]), its schema and digest, its names and ids (the one
//! rule of [`super::names`]), and every figure against its own parts (a rate
//! that is not bytes over time, a check whose stated outcome its own interval
//! does not give). What passes is a [`StudentReport`]; the rest is a typed
//! [`ReportError`] naming why. `merge` builds the class from these.

use std::fs::OpenOptions;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use pipebench::machine::behaviour::Probe;
use serde_json::Value;

use super::checks::{self, CheckOutcome, Status};
use super::defs::{labs, Lab, TaskWork};
use super::export::{self, DigestError};
use super::measurement::Measurement;
use super::names::{self, escape_controls, quote, BadName};

/// Largest report file read: a real report is tens of KiB, and a bigger file
/// (or `/dev/zero` under a report's name) must not take the memory.
pub const MAX_REPORT_BYTES: u64 = 8 << 20;

/// Throughput beyond any machine's memory bandwidth: a figure above it is made up.
pub(crate) const MAX_PLAUSIBLE_GIB_S: f64 = 1024.0;

/// The shortest time a run can take, in ms (a microsecond: no run starts
/// two processes faster); a smaller `elapsed_ms`, such as 5e-324, only serves
/// to make any throughput look consistent.
pub(crate) const MIN_ELAPSED_MS: f64 = 1e-3;

/// How far `gib_per_s` may stray from `bytes / elapsed` (rounding only).
const RATE_TOLERANCE: f64 = 0.01;

/// Why a report was left out of the class.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The file could not be read.
    #[error("cannot read it")]
    Read(#[source] std::io::Error),
    /// Not a regular file: a symbolic link, FIFO, device or folder.
    #[error("it is a {what}, not a regular file: give the report files themselves")]
    NotRegular {
        /// What it is.
        what: &'static str,
    },
    /// Larger than any report.
    #[error("it is larger than {} MiB, more than any lab report", MAX_REPORT_BYTES >> 20)]
    TooLarge,
    /// A name or id breaks the rule every report follows.
    #[error(transparent)]
    BadName(#[from] BadName),
    /// Not JSON.
    #[error("malformed JSON")]
    Json(#[source] serde_json::Error),
    /// JSON, but not a lab report.
    #[error("not a pipebook lab report (`schema` is {found})")]
    NotAReport {
        /// The `schema` field found (quoted, escaped).
        found: String,
    },
    /// Another version of the format.
    #[error("schema version {found}, but this pipebook reads version {}: export it again with this pipebook", export::SCHEMA_VERSION)]
    Version {
        /// The version found (quoted, escaped).
        found: String,
    },
    /// Changed after it was sealed.
    #[error(transparent)]
    Digest(#[from] DigestError),
    /// A field missing or of the wrong type.
    #[error("malformed report: {0}")]
    Malformed(String),
    /// A figure no run can produce.
    #[error("impossible figure in lab `{lab}`, task `{task}`, run {run}: {what}")]
    Impossible {
        /// Lab id.
        lab: String,
        /// Task id.
        task: String,
        /// Run number within the lab, from 1.
        run: usize,
        /// What is impossible.
        what: String,
    },
    /// A recorded check outcome the measurements do not give.
    #[error("lab `{lab}`, check `{check}`: the report says {recorded}, its measurements give {computed:?}")]
    ChecksDisagree {
        /// Lab id.
        lab: String,
        /// Check id.
        check: String,
        /// In the file (quoted, escaped).
        recorded: String,
        /// Recomputed.
        computed: Status,
    },
    /// A recorded interval the measurements do not give (or one where they give
    /// none).
    #[error("lab `{lab}`, check `{check}`: the report says the interval is {recorded}, its measurements give {computed}")]
    IntervalDisagrees {
        /// Lab id.
        lab: String,
        /// Check id.
        check: String,
        /// In the file (quoted, escaped).
        recorded: String,
        /// Recomputed.
        computed: String,
    },
}

/// One lab of a valid report.
#[derive(Debug, Clone)]
pub struct MergedLab {
    /// Lab id.
    pub id: String,
    /// The prediction (null when none).
    pub prediction: Value,
    /// What the measurements answer.
    pub answer: Value,
    /// The runs.
    pub measurements: Vec<Measurement>,
    /// Recomputed check outcomes.
    pub checks: Vec<CheckOutcome>,
}

/// A valid report.
#[derive(Debug, Clone)]
pub struct StudentReport {
    /// The file it came from.
    pub file: PathBuf,
    /// The student's name.
    pub student: String,
    /// The machine, from the report's system section.
    pub system: Value,
    /// Its labs.
    pub labs: Vec<MergedLab>,
}

/// A JSON value of a report, as a message quotes it.
fn json_quote(value: &Value) -> String {
    match value {
        Value::String(text) => quote(text),
        other => quote(&other.to_string()),
    }
}

fn malformed(what: impl Into<String>) -> ReportError {
    ReportError::Malformed(what.into())
}

/// Checks one run's figures against each other and against physics: a pipe
/// result for a step task, an IPC record (`"kind":"ipc"`, whose `mib_per_s`
/// must agree too) for a mechanism task.
fn check_figures(result: &Value, work: TaskWork<'_>) -> Result<(), String> {
    let num = |key: &str| result.get(key).and_then(Value::as_f64);
    match work {
        TaskWork::Step(step) => {
            let found = result["step"].as_str().unwrap_or("(none)");
            if found != step {
                return Err(format!(
                    "its step is {} but the task runs `{step}`",
                    names::shown(found, '`')
                ));
            }
        }
        TaskWork::Latency(latency) => return check_latency(result, latency),
        TaskWork::Mechanism(mechanism) => {
            if result["kind"].as_str() != Some("ipc") {
                return Err(format!(
                    "it is no IPC record (`\"kind\":\"ipc\"`) but the task runs mechanism `{mechanism}`"
                ));
            }
            let found = result["mechanism"].as_str().unwrap_or("(none)");
            if found != mechanism {
                return Err(format!(
                    "its mechanism is {} but the task runs `{mechanism}`",
                    names::shown(found, '`')
                ));
            }
            let gib = num("gib_per_s").ok_or("no gib_per_s")?;
            let mib = num("mib_per_s").ok_or("no mib_per_s")?;
            let expected = gib * 1024.0;
            if (mib - expected).abs() > RATE_TOLERANCE * expected.abs().max(1e-9) + 1e-9 {
                return Err(format!("{mib} MiB/s is not the {gib} GiB/s it also claims"));
            }
        }
    }
    let gib = num("gib_per_s").ok_or("no gib_per_s")?;
    let elapsed = num("elapsed_ms").ok_or("no elapsed_ms")?;
    let bytes = result["bytes"]
        .as_u64()
        .ok_or("no bytes (a whole number)")?;
    if !gib.is_finite() || gib < 0.0 {
        return Err(format!("throughput {gib} GiB/s is negative"));
    }
    if gib > MAX_PLAUSIBLE_GIB_S {
        return Err(format!(
            "throughput {gib} GiB/s is beyond any machine (limit {MAX_PLAUSIBLE_GIB_S})"
        ));
    }
    if !elapsed.is_finite() || elapsed < MIN_ELAPSED_MS {
        return Err(format!(
            "elapsed_ms {elapsed:?} is not a time a run takes (at least {MIN_ELAPSED_MS} ms)"
        ));
    }
    if bytes == 0 {
        return Err("it moved no bytes: every run moves some".into());
    }
    let expected = pipebench::size::gib_per_s(bytes, elapsed);
    if (gib - expected).abs() > RATE_TOLERANCE * expected.max(1e-9) + 1e-9 {
        return Err(format!(
            "{bytes} bytes in {elapsed} ms is {expected:.4} GiB/s, not the {gib} GiB/s it claims"
        ));
    }
    if let Some(corrupted) = result["corrupted_bytes"].as_u64() {
        if corrupted > bytes {
            return Err(format!("{corrupted} corrupted bytes out of {bytes}"));
        }
    }
    Ok(())
}

/// Checks a latency record against its task and itself: the task's
/// mechanism, mode and size; percentiles in order up to the maximum; a count of
/// round trips; CPU times and sleeps that are not negative.
fn check_latency(result: &Value, task: &super::defs::LatencyTask) -> Result<(), String> {
    if result["kind"].as_str() != Some("latency") {
        return Err(format!(
            "it is no latency record (`\"kind\":\"latency\"`) but the task runs the latency of `{}`",
            task.mechanism
        ));
    }
    let found = result["mechanism"].as_str().unwrap_or("(none)");
    if found != task.mechanism {
        return Err(format!(
            "its mechanism is {} but the task runs `{}`",
            names::shown(found, '`'),
            task.mechanism
        ));
    }
    if result["mode"].as_str() != Some(task.mode.as_str())
        || result["size"].as_u64() != Some(task.size)
    {
        return Err(format!(
            "it is not the task's configuration ({}, {} B)",
            task.mode.as_str(),
            task.size
        ));
    }
    let count = result["count"]
        .as_u64()
        .ok_or("no count (a whole number)")?;
    if count == 0 {
        return Err("it timed no round trip".into());
    }
    let mut last = 0u64;
    for key in ["min", "p50", "p90", "p99", "p999", "max"] {
        let ns = result[key]
            .as_u64()
            .ok_or_else(|| format!("no {key} (whole nanoseconds)"))?;
        if ns < last {
            return Err(format!(
                "its {key} of {ns} ns is below a lower percentile's {last} ns"
            ));
        }
        last = ns;
    }
    for key in ["ping_cpu_ns", "pong_cpu_ns", "ping_sleeps", "pong_sleeps"] {
        let v = result[key].as_f64().ok_or_else(|| format!("no {key}"))?;
        if !v.is_finite() || v < 0.0 {
            return Err(format!("its {key} of {v} is not a time or count"));
        }
    }
    Ok(())
}

/// Validates a report's text; `file` names it.
pub fn validate(file: &Path, text: &[u8]) -> Result<StudentReport, ReportError> {
    // Duplicate keys and absurd nesting first: the report must mean one thing.
    super::strict::check(text).map_err(ReportError::Json)?;
    let report: Value = serde_json::from_slice(text).map_err(ReportError::Json)?;
    if report["schema"].as_str() != Some(export::SCHEMA) {
        return Err(ReportError::NotAReport {
            found: json_quote(&report["schema"]),
        });
    }
    if report["schema_version"].as_u64() != Some(export::SCHEMA_VERSION) {
        return Err(ReportError::Version {
            found: json_quote(&report["schema_version"]),
        });
    }
    export::verify_digest(&report)?;
    let student = report["student"]
        .as_str()
        .ok_or_else(|| malformed("no `student` name"))?
        .to_string();
    // The same rule as at export: a digest proves only that nobody edited the
    // file after it was sealed, not that pipebook sealed it.
    names::check_name("student name", &student)?;
    let entries = report["labs"]
        .as_array()
        .ok_or_else(|| malformed("no `labs` array"))?;
    let kernel = checks::behaviour_of(&report["system"]);
    let labs = entries
        .iter()
        .map(|entry| validate_lab(entry, &kernel))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(StudentReport {
        file: file.to_path_buf(),
        student,
        system: report["system"].clone(),
        labs,
    })
}

/// One lab of a report: its id, its runs, its prediction and its checks, each
/// against the lab's definition, judged by the kernel the report describes.
fn validate_lab(entry: &Value, kernel: &[Probe]) -> Result<MergedLab, ReportError> {
    let id = entry["id"]
        .as_str()
        .ok_or_else(|| malformed("a lab without `id`"))?;
    names::check_name("lab id", id)?;
    let lab = labs()
        .find(id)
        .ok_or_else(|| malformed(format!("lab `{id}` is not one of {}", labs().ids())))?;
    let measurements: Vec<Measurement> = serde_json::from_value(entry["measurements"].clone())
        .map_err(|e| {
            // serde quotes what it did not expect: escape it like any quote.
            malformed(format!(
                "lab `{id}`: measurements: {}",
                escape_controls(&e.to_string())
            ))
        })?;
    for m in &measurements {
        names::check_name("task id", &m.task)?;
    }
    validate_prediction(id, entry)?;
    validate_runs(id, lab, &measurements)?;
    // Judged as on the student's machine: by the kernel its report describes.
    let computed = checks::judge_all(lab, &measurements, kernel);
    let recorded = entry["checks"]
        .as_array()
        .ok_or_else(|| malformed(format!("lab `{id}` has no `checks`")))?;
    validate_checks(id, &computed, recorded)?;
    Ok(MergedLab {
        id: id.to_string(),
        prediction: entry
            .pointer("/prediction/value")
            .cloned()
            .unwrap_or(Value::Null),
        answer: entry
            .pointer("/prediction/answer")
            .cloned()
            .unwrap_or(Value::Null),
        measurements,
        checks: computed,
    })
}

/// A lab's prediction, when there is one: a number or a choice, within the
/// bounds the page held the student to when it was saved.
fn validate_prediction(id: &str, entry: &Value) -> Result<(), ReportError> {
    match entry.pointer("/prediction/value") {
        None | Some(Value::Null) => Ok(()),
        Some(value @ (Value::Number(_) | Value::String(_))) => {
            if let Value::String(choice) = value {
                names::check_name("prediction", choice)?;
            }
            // The bounds the page held the student to when it was saved.
            super::check_prediction(id, value)
                .map_err(|err| malformed(escape_controls(&err.to_string())))
        }
        Some(_) => Err(malformed(format!(
            "lab `{id}`: a prediction is a number or a choice"
        ))),
    }
}

/// Each run against its task: the task exists, its figures agree with one
/// another, and a sweep's point is one the task sweeps.
fn validate_runs(id: &str, lab: &Lab, measurements: &[Measurement]) -> Result<(), ReportError> {
    for (index, m) in measurements.iter().enumerate() {
        let impossible = |what: String| ReportError::Impossible {
            lab: id.to_string(),
            task: m.task.clone(),
            run: index + 1,
            what,
        };
        let task = lab
            .task(&m.task)
            .ok_or_else(|| impossible("the lab has no such task".into()))?;
        check_figures(&m.result, task.work()).map_err(impossible)?;
        if let (Some(v), Some(sweep)) = (m.value, &task.sweep) {
            if !sweep.values.contains(&v) {
                return Err(impossible(format!("{v} is not a value the task sweeps")));
            }
        }
    }
    Ok(())
}

/// The checks' outcomes the report states against the ones its runs give.
fn validate_checks(
    id: &str,
    computed: &[CheckOutcome],
    recorded: &[Value],
) -> Result<(), ReportError> {
    for outcome in computed {
        // Runs exported before checks judged at planned looks were judged
        // at 95% each time; their verdict and interval are judged again
        // here under the current rule (the merged check says `rejudged`),
        // so a report from then is read, not refused as edited.
        if outcome.rejudged {
            continue;
        }
        let entry = recorded
            .iter()
            .find(|c| c["id"].as_str() == Some(&outcome.id));
        // A check that rests on a behaviour the student's kernel does not
        // have may be absent: the report was made before the check existed.
        if entry.is_none() && outcome.status == checks::Status::NotThisKernel {
            continue;
        }
        let said = entry
            .and_then(|c| c["status"].as_str())
            .unwrap_or("(missing)");
        if serde_json::to_value(outcome.status)
            .ok()
            .as_ref()
            .and_then(Value::as_str)
            != Some(said)
        {
            return Err(ReportError::ChecksDisagree {
                lab: id.to_string(),
                check: outcome.id.clone(),
                recorded: quote(said),
                computed: outcome.status,
            });
        }
        check_interval(id, outcome, recorded)?;
    }
    Ok(())
}

/// A check's interval as the report states it against the one its runs give:
/// the interval comes from ranks alone, so the same runs give the same one, and a
/// report that states another (or one where the runs give none) was edited.
/// A report written before intervals existed states none and is judged on its
/// status alone.
fn check_interval(
    lab: &str,
    outcome: &CheckOutcome,
    recorded: &[Value],
) -> Result<(), ReportError> {
    let entry = recorded
        .iter()
        .find(|c| c["id"].as_str() == Some(&outcome.id));
    let said = entry.map(|c| (c.get("ci_low"), c.get("ci_high")));
    let said = match said {
        None | Some((None, None)) => return Ok(()),
        Some((low, high)) => (low.and_then(Value::as_f64), high.and_then(Value::as_f64)),
    };
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0);
    let agrees = match (said, outcome.ci_low.zip(outcome.ci_high)) {
        ((Some(low), Some(high)), Some((l, h))) => close(low, l) && close(high, h),
        _ => false,
    };
    if agrees {
        return Ok(());
    }
    let shown = |v: Option<&Value>| v.map_or("(missing)".to_string(), |v| v.to_string());
    let entry = entry.cloned().unwrap_or(Value::Null);
    Err(ReportError::IntervalDisagrees {
        lab: lab.to_string(),
        check: outcome.id.clone(),
        recorded: quote(&format!(
            "{} to {}",
            shown(entry.get("ci_low")),
            shown(entry.get("ci_high"))
        )),
        computed: match outcome.ci_low.zip(outcome.ci_high) {
            Some((l, h)) => format!("{l} to {h}"),
            None => "none".to_string(),
        },
    })
}

/// Reads and validates one file: a regular file (a link, FIFO, device or
/// folder is refused at once, without reading or waiting), at most
/// [`MAX_REPORT_BYTES`].
pub fn load(file: &Path) -> Result<StudentReport, ReportError> {
    let text = read_report(file)?;
    validate(file, &text)
}

/// The bytes of a report file, read as [`load`] says.
fn read_report(file: &Path) -> Result<Vec<u8>, ReportError> {
    let opened = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(file)
        .map_err(|err| match err.raw_os_error() {
            Some(libc::ELOOP) => ReportError::NotRegular {
                what: "symbolic link",
            },
            _ => ReportError::Read(err),
        })?;
    let meta = opened.metadata().map_err(ReportError::Read)?;
    if !meta.is_file() {
        return Err(ReportError::NotRegular {
            what: crate::store::statefile::kind_of(meta.file_type()),
        });
    }
    let mut text = Vec::new();
    opened
        .take(MAX_REPORT_BYTES + 1)
        .read_to_end(&mut text)
        .map_err(ReportError::Read)?;
    if text.len() as u64 > MAX_REPORT_BYTES {
        return Err(ReportError::TooLarge);
    }
    Ok(text)
}
