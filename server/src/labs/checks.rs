//! The checks, judged on the student's own measurements (pure). The page shows
//! what this module judged (`/api/labs` sends each lab's `checks`);
//! `book/labs/check-cases.json` holds crafted measurements it must judge as
//! they say (`labchecks.js` still computes the figures a prediction is read
//! against from the same cases).
//!
//! A throughput ratio (one task's GiB/s or MiB/s over another's) is judged on
//! evidence, not on two medians: laptops that scale their clocks and shared lab
//! boxes swing by 2x from run to run, so a single ratio cannot tell a real
//! failure from noise. Its interval (the Mann-Whitney rank-sum interval of the
//! shift between the two tasks' log figures, `pipebench::stats::verdict`) must
//! clear the bound to pass, and must clear the other side of it to fail;
//! otherwise the check is not resolved yet. A noisy machine never fails a
//! student.
//!
//! A student who is not resolved runs the tasks again, and asking again and
//! again until a check passes is peeking: judged afresh at 95% each time it
//! would be wrong far more often than 1 time in 20. So a ratio is judged at
//! looks planned by the lab's definition ([`lab_schedule`]: at the tasks' runs,
//! then twice and three times as many), each at its share of the 5%, in order,
//! stopping at the first that settles it; which look is reached is read from
//! the runs the runner stored. After the last look the verdict is final. Each
//! outcome carries the judgement itself (`judged`), so the page shows it and
//! judges nothing; records kept before a rule are judged again by the current
//! one whenever they are read, and the outcome says so (`rejudged`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use pipebench::stats::verdict::{judge_unpaired, Design, Judgement, Schedule};

use pipebench::machine::behaviour::{Probe, ProbeId, UNKNOWN};

use super::defs::{Assumes, Check, Lab, Measure, Metric, Ref};
use super::measurement::Measurement;

/// Whether watching a run moves this figure: its speed (GiB/s, MiB/s) and its
/// CPU time per wall second (a watched run takes longer). Damaged bytes, huge
/// pages and the kernel's counts are the same watched or quiet, and a latency
/// record says nothing of being watched (every latency run streams alike).
pub(crate) fn moved_by_watching(m: Metric) -> bool {
    matches!(m, Metric::GibPerS | Metric::MibPerS | Metric::CpuPerWall)
}

/// What a pending check adds when watched runs of the task were left out.
fn left_out(watched: usize) -> String {
    match watched {
        0 => String::new(),
        1 => " (1 watched run left out: watching costs a run)".into(),
        n => format!(" ({n} watched runs left out: watching costs a run)"),
    }
}

/// Whether a check holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// It holds on these measurements.
    Pass,
    /// It does not (or what it reads was not measured).
    Fail,
    /// Not enough runs yet.
    Pending,
    /// What it reads is one of the kernel's counts this machine did not permit
    /// (or a run did not take): said so, and not held against the student.
    Unavailable,
    /// A throughput ratio whose interval holds the bound: neither passed nor
    /// failed yet; more runs would settle it.
    #[serde(rename = "not_resolved")]
    NotResolved,
    /// The check rests on a kernel behaviour this machine's probe says it does
    /// not have (`not_this_kernel`): not judged, and not held against the student.
    #[serde(rename = "not_this_kernel")]
    NotThisKernel,
}

/// The kernel behaviour a check assumed, and what this machine's probe said.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Assumed {
    /// The behaviour probe.
    pub probe: ProbeId,
    /// The answer the check rests on.
    pub answer: String,
    /// The probe's answer here (`unknown` when it could not tell, or was not asked).
    pub measured: String,
}

impl Assumed {
    /// What `when` assumes, against the probes in `kernel`.
    fn of(when: &Assumes, kernel: &[Probe]) -> Assumed {
        let measured = kernel
            .iter()
            .find(|p| p.id == when.probe)
            .map_or(UNKNOWN, |p| p.answer.as_str());
        Assumed {
            probe: when.probe,
            answer: when.answer.clone(),
            measured: measured.to_string(),
        }
    }

    /// Whether the check applies: the probe gave the answer it rests on, or
    /// could not tell and the check rests on the article's kernel (the one
    /// the chapters explain first).
    pub fn applies(&self) -> bool {
        self.measured == self.answer
            || (self.measured == UNKNOWN && self.answer == self.probe.article_answer())
    }

    /// The words a check's detail ends with.
    fn words(&self) -> String {
        let probe = self.probe.as_str();
        if self.measured == UNKNOWN {
            format!(
                "assumes {probe} answers `{}`, as on the article's kernel (this machine's probe could not tell)",
                self.answer
            )
        } else {
            format!(
                "assumes {probe} answers `{}`; this machine's probe answered `{}`",
                self.answer, self.measured
            )
        }
    }
}

/// The behaviour probes a machine report (`/api/system`, a lab report's
/// `system`) carries; none when it carries none.
pub(crate) fn behaviour_of(system: &Value) -> Vec<Probe> {
    system
        .get("behaviour")
        .cloned()
        .and_then(|list| serde_json::from_value(list).ok())
        .unwrap_or_default()
}

/// A check's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckOutcome {
    /// The check's id.
    pub id: String,
    /// The verdict.
    pub status: Status,
    /// The measure, when there was one.
    pub value: Option<f64>,
    /// The measure and the bound, or what is missing.
    pub detail: String,
    /// A throughput ratio's interval at its look, lower end (once its runs can
    /// reach the look's level).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_low: Option<f64>,
    /// Its upper end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_high: Option<f64>,
    /// Not resolved: how many more runs of each task its next planned look
    /// needs (absent when the verdict is final: the last look is taken).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub more_runs: Option<usize>,
    /// Not resolved: the runs a side its next planned look judges (the page
    /// runs each task up to it); absent when the verdict is final.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_look_runs: Option<usize>,
    /// A ratio judged on its interval: the runner's judgement of the two
    /// tasks' runs (method `rank_sum`, its interval, `too_few` below 4 runs a
    /// side), which the page shows as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judged: Option<Judgement>,
    /// Some run it reads was recorded before checks judged at planned looks
    /// (when each added run was judged afresh at 95%): it is judged again
    /// under the current rule, and the lab card says so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rejudged: bool,
    /// The kernel behaviour the check rests on, and what the probe said here
    /// (the lab card shows it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assumes: Option<Assumed>,
}

/// What a measure came to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Evaluated {
    /// Too few runs: which task, how many it has and needs.
    Pending(String),
    /// The runs are there but do not carry the figure (e.g. no verification).
    Missing(String),
    /// The figure is a kernel count a run could not take, and why.
    Unavailable(String),
    /// A number.
    Number(f64),
    /// A task id (for `fastest`).
    Choice(String),
}

/// The figure `metric` of one result, if the result carries it.
pub(crate) fn metric(result: &Value, metric: Metric) -> Option<f64> {
    let num = |path: &str| figure(result, path);
    match metric {
        Metric::GibPerS => num("/gib_per_s"),
        // An IPC record carries both; a pipe result only GiB/s, which is the same
        // figure in other units (1 GiB = 1024 MiB).
        Metric::MibPerS => num("/mib_per_s").or_else(|| Some(num("/gib_per_s")? * 1024.0)),
        Metric::CpuPerWall if is_latency(result) => {
            // Both ends' CPU time per round trip over the round trip's own time.
            let mean = num("/mean").filter(|m| *m > 0.0)?;
            Some((num("/ping_cpu_ns")? + num("/pong_cpu_ns")?) / mean)
        }
        Metric::CpuPerWall => cpu_per_wall(result),
        Metric::CorruptedShare => corrupted_share(result),
        Metric::HugeShare => {
            let checked = num("/huge_pages/checked_bytes").filter(|c| *c > 0.0)?;
            Some(num("/huge_pages/huge_bytes")? / checked)
        }
        Metric::WriterPageAllocsPerGib => Some(num("/counts/writer/page_allocs")? / gib(result)?),
        Metric::WriterAllocsBeyondFaultsPerGib => {
            // Each fault of the writer's own memory allocates a page (its buffers
            // at start-up); what is left is what its data calls allocated.
            let allocs = num("/counts/writer/page_allocs")?;
            let faults = num("/counts/writer/page_faults")?;
            Some((allocs - faults).max(0.0) / gib(result)?)
        }
        Metric::SleepsPerGib => sleeps_per_gib(result),
        Metric::WriterPageFaults => num("/counts/writer/page_faults"),
        Metric::ProducerFaultsPerPage => producer_faults_per_page(result),
        Metric::CallBytesPerByte => call_bytes_per_byte(result),
        // A latency figure read from anything else would be some other number.
        _ if !is_latency(result) => None,
        Metric::P50Ns => num("/p50"),
        Metric::P99Ns => num("/p99"),
        Metric::CpuNsPerRoundTrip => Some(num("/ping_cpu_ns")? + num("/pong_cpu_ns")?),
        Metric::SleepsPerRoundTrip => Some(num("/ping_sleeps")? + num("/pong_sleeps")?),
    }
}

/// The figure at `path` in a result, when it is a number.
fn figure(result: &Value, path: &str) -> Option<f64> {
    result.pointer(path).and_then(Value::as_f64)
}

/// Both ends' CPU time per wall second of a pipe result.
fn cpu_per_wall(result: &Value) -> Option<f64> {
    // IPC records report their ends otherwise: no figure rather than zero.
    if result.get("writer").is_none() && result.get("reader").is_none() {
        return None;
    }
    let elapsed = figure(result, "/elapsed_ms").filter(|e| *e > 0.0)?;
    let cpu: f64 = [
        "/writer/user_ms",
        "/writer/system_ms",
        "/reader/user_ms",
        "/reader/system_ms",
    ]
    .iter()
    .map(|p| figure(result, p).unwrap_or(0.0))
    .sum();
    Some(cpu / elapsed)
}

/// The share of the bytes a run damaged.
fn corrupted_share(result: &Value) -> Option<f64> {
    let bytes = figure(result, "/bytes").filter(|b| *b > 0.0)?;
    match figure(result, "/corrupted_bytes") {
        Some(corrupted) => Some(corrupted / bytes),
        // A verifying reader that does not count stops the run at the
        // first bad byte, so a verified run that finished had none.
        None if result.pointer("/options/reader/verify") == Some(&Value::Bool(true)) => Some(0.0),
        None => None,
    }
}

/// Every counted end's sleeps (voluntary switches) per GiB moved.
fn sleeps_per_gib(result: &Value) -> Option<f64> {
    let ends = result.get("counts")?.as_object()?;
    let sleeps: Vec<f64> = ends
        .iter()
        .filter(|(name, _)| !matches!(name.as_str(), "missing" | "model"))
        .filter_map(|(_, end)| end.get("voluntary_switches")?.as_f64())
        .collect();
    if sleeps.is_empty() {
        return None;
    }
    Some(sleeps.iter().sum::<f64>() / gib(result)?)
}

/// The producer's page faults per page an IPC run moved.
fn producer_faults_per_page(result: &Value) -> Option<f64> {
    let faults = ipc_end_counts(result, "producer")?
        .get("page_faults")?
        .as_f64()?;
    let bytes = figure(result, "/bytes").filter(|b| *b > 0.0)?;
    // Pages of the machine that ran it: 4 KiB on x86-64, 16 or 64 KiB on
    // some arm64 kernels; a record without its page size cannot say.
    let page = figure(result, "/page_size").filter(|p| *p > 0.0)?;
    Some(faults / (bytes / page))
}

/// The bytes an IPC run's calls passed per byte it moved.
fn call_bytes_per_byte(result: &Value) -> Option<f64> {
    let ends = ipc_ends(result)?;
    // Every end counted, and the run tallied its calls' bytes: a record
    // from before the tally has none, which is not the same as zero.
    if ends.is_empty()
        || ends.iter().any(|e| {
            e["role"]
                .as_str()
                .is_none_or(|role| ipc_end_counts(result, role).is_none())
        })
        || !ends.iter().any(|e| e.get("call_bytes").is_some())
    {
        return None;
    }
    let bytes = figure(result, "/bytes").filter(|b| *b > 0.0)?;
    let through: f64 = ends
        .iter()
        .filter_map(|e| e.get("call_bytes")?.as_object())
        .flat_map(|calls| calls.values().filter_map(Value::as_f64))
        .sum();
    Some(through / bytes)
}

/// Whether a result is a latency run's record (`"kind":"latency"`).
fn is_latency(result: &Value) -> bool {
    result.get("kind").and_then(Value::as_str) == Some("latency")
}

/// The ends of an IPC record (`kind: "ipc"`), or None for a pipe result.
fn ipc_ends(result: &Value) -> Option<&Vec<Value>> {
    if result.get("kind")? != "ipc" {
        return None;
    }
    result.get("ends")?.as_array()
}

/// The counts of the end `role` of an IPC record: the record's `counts` keyed
/// by role, or, in a record from before they were kept there, that end's own
/// `counts.counts`.
fn ipc_end_counts<'a>(result: &'a Value, role: &str) -> Option<&'a Value> {
    let ends = ipc_ends(result)?;
    match result.get("counts").filter(|c| c.is_object()) {
        Some(counts) => counts.get(role).filter(|c| c.is_object()),
        None => ends
            .iter()
            .find(|e| e["role"] == role)?
            .pointer("/counts/counts")
            .filter(|c| c.is_object()),
    }
}

/// The GiB a result moved, when it moved any.
fn gib(result: &Value) -> Option<f64> {
    let bytes = result.get("bytes")?.as_f64().filter(|b| *b > 0.0)?;
    Some(bytes / (1u64 << 30) as f64)
}

/// Why a result lacks a kernel count: the reasons it carries, or that it has none.
fn not_counted(result: &Value) -> String {
    let reasons: Vec<&str> = result
        .pointer("/counts/missing")
        .and_then(Value::as_array)
        .map(|m| {
            m.iter()
                .filter_map(|r| r.get("message").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    if let Some(ends) = ipc_ends(result) {
        // An IPC record counts per end; the counts this module reads from it are
        // always taken, so a record lacks them only when its runner did not count.
        return if ends.iter().any(|e| {
            e["role"]
                .as_str()
                .is_none_or(|role| ipc_end_counts(result, role).is_none())
        }) {
            "an end of the run carries no counts (a runner from before the counts)".into()
        } else {
            "the run carries no tally of its data calls (a runner from before the tally)".into()
        };
    }
    if result.get("counts").is_none_or(Value::is_null) {
        "the run carries no kernel counts (counting was off)".into()
    } else if reasons.is_empty() {
        "the run's kernel counts lack it".into()
    } else {
        reasons.join("; ")
    }
}

/// The median of `values` (the mean of the middle two for an even count).
pub(crate) fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

fn metric_name(metric: Metric) -> &'static str {
    match metric {
        Metric::GibPerS | Metric::MibPerS => "throughput",
        Metric::CpuPerWall => "CPU time per wall second",
        Metric::CorruptedShare => "share of corrupted bytes",
        Metric::HugeShare => "share of huge pages",
        Metric::WriterPageAllocsPerGib => "writer's page allocations per GiB",
        Metric::WriterAllocsBeyondFaultsPerGib => {
            "writer's page allocations beyond its page faults, per GiB"
        }
        Metric::SleepsPerGib => "sleeps per GiB",
        Metric::WriterPageFaults => "writer's page faults",
        Metric::P50Ns => "median round trip",
        Metric::P99Ns => "99th percentile round trip",
        Metric::CpuNsPerRoundTrip => "CPU time per round trip",
        Metric::SleepsPerRoundTrip => "sleeps per round trip",
        Metric::ProducerFaultsPerPage => "producer's page faults per page",
        Metric::CallBytesPerByte => "bytes through data calls per byte moved",
    }
}

/// The metric of every run a reference reads, in the order they were recorded,
/// or why there is nothing to compute yet.
fn series(
    lab: &Lab,
    measurements: &[Measurement],
    r: &Ref,
    m: Metric,
) -> Result<Vec<f64>, Evaluated> {
    let all: Vec<&Measurement> = measurements
        .iter()
        .filter(|x| x.task == r.task && (r.value.is_none() || x.value == r.value))
        .collect();
    // Only a figure that watching moves leaves watched runs out.
    let skip = |x: &Measurement| moved_by_watching(m) && x.watched();
    let watched = all.iter().filter(|x| skip(x)).count();
    let runs: Vec<&Measurement> = all.into_iter().filter(|x| !skip(x)).collect();
    let required = lab.required(r);
    let at = r.value.map_or(String::new(), |v| {
        format!(" at {}", pipebench::size::ByteSize(v))
    });
    if runs.len() < required {
        return Err(Evaluated::Pending(format!(
            "task “{}”{at} has {} of its {required} runs{}",
            r.task,
            runs.len(),
            left_out(watched)
        )));
    }
    if m.is_count() {
        if let Some(x) = runs.iter().find(|x| metric(&x.result, m).is_none()) {
            return Err(Evaluated::Unavailable(format!(
                "task “{}”{at}: {}",
                r.task,
                not_counted(&x.result)
            )));
        }
    }
    runs.iter()
        .map(|x| metric(&x.result, m))
        .collect::<Option<Vec<f64>>>()
        .ok_or_else(|| {
            Evaluated::Missing(format!(
                "task “{}”{at} has a run without its {}",
                r.task,
                metric_name(m)
            ))
        })
}

/// Computes a measure on a lab's measurements.
pub(crate) fn evaluate(lab: &Lab, measurements: &[Measurement], measure: &Measure) -> Evaluated {
    let run = || -> Result<Evaluated, Evaluated> {
        Ok(match measure {
            Measure::Ratio { metric, num, den } => {
                let top = series(lab, measurements, num, *metric)?;
                let bottom = series(lab, measurements, den, *metric)?;
                match (median(&top), median(&bottom)) {
                    (Some(a), Some(b)) if b > 0.0 => Evaluated::Number(a / b),
                    _ => Evaluated::Missing(format!(
                        "the {} of task “{}” is zero",
                        metric_name(*metric),
                        den.task
                    )),
                }
            }
            Measure::Median { metric, of } => {
                Evaluated::Number(agg(series(lab, measurements, of, *metric)?, median))
            }
            Measure::Max { metric, of } => {
                Evaluated::Number(agg(series(lab, measurements, of, *metric)?, |v| {
                    v.iter().copied().reduce(f64::max)
                }))
            }
            Measure::Min { metric, of } => {
                Evaluated::Number(agg(series(lab, measurements, of, *metric)?, |v| {
                    v.iter().copied().reduce(f64::min)
                }))
            }
            Measure::Settle {
                metric,
                of,
                tolerance,
            } => {
                let values = series(lab, measurements, of, *metric)?;
                Evaluated::Number(settle(&values, *tolerance) as f64)
            }
            Measure::Fastest { metric, among } | Measure::Lowest { metric, among } => {
                // The highest median wins, or the lowest for `lowest`; the
                // first of equals keeps its place.
                let lowest = matches!(measure, Measure::Lowest { .. });
                let mut best: Option<(f64, &str)> = None;
                for r in among {
                    let m = agg(series(lab, measurements, r, *metric)?, median);
                    if best.is_none_or(|(b, _)| if lowest { m < b } else { m > b }) {
                        best = Some((m, &r.task));
                    }
                }
                best.map_or(Evaluated::Missing("no candidates".into()), |(_, task)| {
                    Evaluated::Choice(task.to_string())
                })
            }
        })
    };
    run().unwrap_or_else(|e| e)
}

/// `f` over values that are never empty (a task needs at least one run).
fn agg(values: Vec<f64>, f: impl Fn(&[f64]) -> Option<f64>) -> f64 {
    f(&values).unwrap_or(f64::NAN)
}

/// The smallest k such that the median of the first j runs is within
/// `tolerance` of the median of all runs for every j from k on.
pub(crate) fn settle(values: &[f64], tolerance: f64) -> usize {
    let Some(last) = median(values) else {
        return 0;
    };
    let mut k = values.len();
    for j in (1..=values.len()).rev() {
        let running = median(&values[..j]).unwrap_or(last);
        if (running - last).abs() <= tolerance * last.abs() {
            k = j;
        } else {
            break;
        }
    }
    k
}

/// Whether a measure is judged on its interval: a ratio of two tasks' timings,
/// throughputs (GiB/s, MiB/s) or round trips (median, 99th percentile), which
/// swing from run to run. Ratios of the kernel's counts are not: a count does
/// not move with the machine's speed, and a busy end's sleeps may be zero.
pub(crate) fn judged_on_interval(measure: &Measure) -> bool {
    matches!(
        measure,
        Measure::Ratio {
            metric: Metric::GibPerS | Metric::MibPerS | Metric::P50Ns | Metric::P99Ns,
            ..
        }
    )
}

/// Looks a check that compares two tasks' runs plans, before the first run:
/// asking for more runs after a look that did not settle it ("Run again")
/// would otherwise judge afresh at 95% each time, and a student who keeps
/// asking until it passes would be wrong far more often than 1 time in 20.
/// Each look judges at 1 - 5%/looks, so all of them together keep 95%.
pub(crate) const LAB_LOOKS: usize = Schedule::DEFAULT_LOOKS;

/// The planned looks of a ratio whose tasks ask for `first` runs a side: at
/// `first`, then at each further multiple of it up to [`LAB_LOOKS`] times
/// (6, 12 and 18 runs a side for the labs' tasks of 6; a sweep adds its runs
/// per point at each go, so its looks fall where its sweeps end). Fixed by
/// the lab's definition, never by the page: which look a check has reached
/// is read from the runs the runner stored.
pub(crate) fn lab_schedule(first: usize) -> Schedule {
    let first = first.max(1);
    Schedule::new(first, first * LAB_LOOKS, LAB_LOOKS)
}

/// A throughput ratio judged at the last of its planned looks it reached (or
/// the first that settled it).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RatioEvidence {
    /// median(num) / median(den) over the runs the look judged.
    pub ratio: f64,
    /// The look's interval (at its share of the 5%), when its runs can reach it.
    pub interval: Option<(f64, f64)>,
    /// Runs a side the look judged.
    pub runs: usize,
    /// Pass, fail or not resolved at that look.
    pub status: Status,
    /// The judgement the interval comes from (its `look` and `looks` say which).
    pub judged: Judgement,
    /// Runs a side the next planned look needs; `None` when the verdict is
    /// final (a look settled it, or the last look is taken).
    pub next_look: Option<usize>,
    /// Runs the thinner task has now (runs after the look are not judged yet).
    pub have: usize,
}

/// Judges one look: the first `size` runs of each side under `design`.
fn judge_look(
    check: &Check,
    (top, bottom): (&[f64], &[f64]),
    (num, den): (&Ref, &Ref),
    design: Design,
    metric: Metric,
) -> Result<RatioEvidence, Evaluated> {
    let ratio = match (median(top), median(bottom)) {
        (Some(a), Some(b)) if b > 0.0 => a / b,
        _ => {
            return Err(Evaluated::Missing(format!(
                "the {} of task “{}” is zero",
                metric_name(metric),
                den.task
            )))
        }
    };
    let judged = judge_unpaired(top, bottom, design)
        .map_err(|e| Evaluated::Missing(e.to_string()))?
        .named(&num.task, &den.task);
    let interval = judged.ci_low.zip(judged.ci_high);
    let status = interval.map_or(Status::NotResolved, |(low, high)| {
        judge_interval(check, low, high)
    });
    Ok(RatioEvidence {
        ratio,
        interval,
        runs: top.len().min(bottom.len()),
        status,
        judged,
        next_look: None,
        have: 0,
    })
}

/// A throughput ratio judged at its planned looks ([`lab_schedule`]): each
/// look reached, in order, on the first runs of each task up to its size,
/// stopping at the first that passes or fails. A look's verdict stands, so
/// runs added after it change nothing; or why there is nothing to judge yet
/// (as [`evaluate`] says it).
pub(crate) fn ratio_evidence(
    lab: &Lab,
    measurements: &[Measurement],
    check: &Check,
) -> Result<RatioEvidence, Evaluated> {
    let Measure::Ratio { metric, num, den } = &check.measure else {
        return Err(Evaluated::Missing("not a ratio".into()));
    };
    let top = series(lab, measurements, num, *metric)?;
    let bottom = series(lab, measurements, den, *metric)?;
    let first = lab.required(num).max(lab.required(den));
    let schedule = lab_schedule(first);
    let have = top.len().min(bottom.len());
    let mut taken: Option<RatioEvidence> = None;
    for &size in schedule.sizes().iter().take_while(|s| **s <= have) {
        let sides = (&top[..size], &bottom[..size]);
        let look = judge_look(check, sides, (num, den), schedule.design_at(size), *metric)?;
        let settled = look.status != Status::NotResolved;
        taken = Some(look);
        if settled {
            break;
        }
    }
    let Some(mut look) = taken else {
        return Err(Evaluated::Pending(format!(
            "tasks “{}” and “{}” have {have} runs a side of the {first} their first look needs",
            num.task, den.task
        )));
    };
    look.have = have;
    if look.status == Status::NotResolved {
        look.next_look = schedule.next_after(look.runs);
    }
    Ok(look)
}

/// Whether any run a ratio reads was recorded before its checks judged at
/// planned looks (each check was then judged afresh at 95% whenever runs were
/// added): the check is judged again under the current rule and says so.
fn recorded_before_looks(measurements: &[Measurement], measure: &Measure) -> bool {
    let Measure::Ratio { num, den, .. } = measure else {
        return false;
    };
    let reads =
        |m: &Measurement, r: &Ref| m.task == r.task && (r.value.is_none() || m.value == r.value);
    measurements
        .iter()
        .any(|m| !m.planned_looks && (reads(m, num) || reads(m, den)))
}

/// Where an interval `low..high` lies against a check's bounds: inside them
/// all, clear of one of them on the wrong side, or across one.
pub(crate) fn judge_interval(check: &Check, low: f64, high: f64) -> Status {
    let pass = check.min.is_none_or(|min| low >= min)
        && check.above.is_none_or(|a| low > a)
        && check.max.is_none_or(|max| high <= max);
    let fail = check.min.is_some_and(|min| high < min)
        || check.above.is_some_and(|a| high <= a)
        || check.max.is_some_and(|max| low > max);
    match (pass, fail) {
        (true, _) => Status::Pass,
        (_, true) => Status::Fail,
        _ => Status::NotResolved,
    }
}

/// The bounds of a check, in words.
fn bounds_text(check: &Check) -> String {
    let bounds: Vec<String> = [
        check.above.map(|a| format!("more than {a}")),
        check.min.map(|min| format!("at least {min}")),
        check.max.map(|max| format!("at most {max}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    if bounds.is_empty() {
        "any value".to_string()
    } else {
        bounds.join(" and ")
    }
}

/// The level of a look's interval, as a percentage for sentences.
fn level_text(level: f64) -> String {
    let p = 100.0 * level;
    match (p - p.round()).abs() < 1e-9 {
        true => format!("{p:.0}%"),
        false => format!("{p:.1}%"),
    }
}

/// A throughput ratio's verdict, judged on its interval at its planned looks.
fn judge_on_interval(lab: &Lab, measurements: &[Measurement], check: &Check) -> CheckOutcome {
    let evidence = match ratio_evidence(lab, measurements, check) {
        Ok(evidence) => evidence,
        Err(other) => return judge_evaluated(check, other),
    };
    let judged = &evidence.judged;
    let (look, looks) = (judged.look.unwrap_or(1), judged.looks.unwrap_or(1));
    let level = level_text(judged.level_this_look);
    let measured = format!("measured {}", round(evidence.ratio));
    let figures = match evidence.interval {
        Some((low, high)) => format!(
            "{measured} ({level} rank-sum interval {} to {}, look {look} of {looks}, {} runs \
             a side), needed {}",
            round(low),
            round(high),
            evidence.runs,
            bounds_text(check)
        ),
        None => format!("{measured}, needed {}", bounds_text(check)),
    };
    let why = match evidence.interval {
        Some(_) => "the interval holds the bound".to_string(),
        None => format!(
            "{} runs a side cannot resolve at {level} (the rank-sum interval needs {})",
            evidence.runs, judged.min_n
        ),
    };
    let more = evidence.next_look.map(|next| next - evidence.have);
    let detail = match (evidence.status, evidence.next_look, more) {
        (Status::NotResolved, Some(next), Some(more)) => format!(
            "{figures}; not resolved at look {look} of {looks}: {why}; run {more} more of each \
             task for look {} ({next} runs a side)",
            look + 1
        ),
        (Status::NotResolved, _, _) => format!(
            "{figures}; not resolved at the last of its {looks} planned looks: {why}; this \
             verdict is final (another look would spend more than the 5%)"
        ),
        _ => figures,
    };
    CheckOutcome {
        id: check.id.clone(),
        status: evidence.status,
        value: Some(evidence.ratio),
        detail,
        ci_low: evidence.interval.map(|i| i.0),
        ci_high: evidence.interval.map(|i| i.1),
        more_runs: more,
        next_look_runs: evidence.next_look,
        judged: Some(evidence.judged),
        rejudged: recorded_before_looks(measurements, &check.measure),
        assumes: None,
    }
}

/// A check's verdict on a lab's measurements, on a machine whose kernel does
/// what `kernel` (its behaviour probes) says: a check that rests on another
/// behaviour is `not_this_kernel`.
pub(crate) fn judge(
    lab: &Lab,
    measurements: &[Measurement],
    check: &Check,
    kernel: &[Probe],
) -> CheckOutcome {
    let assumed = check.when.as_ref().map(|when| Assumed::of(when, kernel));
    let mut outcome = match &assumed {
        Some(a) if !a.applies() => plain_outcome(
            check,
            Status::NotThisKernel,
            None,
            String::from("not judged on this kernel"),
        ),
        _ if judged_on_interval(&check.measure) => judge_on_interval(lab, measurements, check),
        _ => judge_evaluated(check, evaluate(lab, measurements, &check.measure)),
    };
    if let Some(a) = assumed {
        outcome.detail = format!("{}; {}", outcome.detail, a.words());
        outcome.assumes = Some(a);
    }
    outcome
}

/// An outcome judged on no interval, with nothing assumed.
fn plain_outcome(
    check: &Check,
    status: Status,
    value: Option<f64>,
    detail: String,
) -> CheckOutcome {
    CheckOutcome {
        id: check.id.clone(),
        status,
        value,
        detail,
        ci_low: None,
        ci_high: None,
        more_runs: None,
        next_look_runs: None,
        judged: None,
        rejudged: false,
        assumes: None,
    }
}

/// A check's verdict on its measure's value, judged against the bounds.
fn judge_evaluated(check: &Check, evaluated: Evaluated) -> CheckOutcome {
    let outcome = |status, value, detail| plain_outcome(check, status, value, detail);
    match evaluated {
        Evaluated::Pending(why) => outcome(Status::Pending, None, format!("waiting: {why}")),
        Evaluated::Missing(why) => outcome(Status::Fail, None, format!("not measured: {why}")),
        Evaluated::Unavailable(why) => outcome(
            Status::Unavailable,
            None,
            format!("not counted on this machine: {why}"),
        ),
        Evaluated::Choice(task) => outcome(Status::Fail, None, format!("`{task}` is not a number")),
        Evaluated::Number(v) if v.is_nan() => outcome(Status::Fail, None, "not measured".into()),
        Evaluated::Number(v) => {
            let low = check.min.is_none_or(|min| v >= min) && check.above.is_none_or(|a| v > a);
            let high = check.max.is_none_or(|max| v <= max);
            let bound = bounds_text(check);
            let status = if low && high {
                Status::Pass
            } else {
                Status::Fail
            };
            outcome(
                status,
                Some(v),
                format!("measured {}, needed {bound}", round(v)),
            )
        }
    }
}

/// Every check of a lab, on a machine whose kernel does what `kernel` says.
pub(crate) fn judge_all(
    lab: &Lab,
    measurements: &[Measurement],
    kernel: &[Probe],
) -> Vec<CheckOutcome> {
    lab.checks
        .iter()
        .map(|c| judge(lab, measurements, c, kernel))
        .collect()
}

/// `/api/labs`' body: the lab state with each lab's checks judged here
/// (`checks`: every [`CheckOutcome`], a ratio's `judged` among them), so the
/// page shows the runner's verdicts and judges nothing itself. `kernel` is
/// this machine's behaviour, as last probed.
pub(crate) fn with_judged_checks(state: &super::store::LabsState, kernel: &[Probe]) -> Value {
    let mut body = serde_json::to_value(state).unwrap_or(Value::Null);
    for (id, lab_state) in &state.labs {
        if let Some(lab) = super::defs::labs().find(id) {
            let outcomes = judge_all(lab, &lab_state.measurements, kernel);
            body["labs"][id]["checks"] = serde_json::to_value(outcomes).unwrap_or(Value::Null);
        }
    }
    body
}

/// Four significant digits without trailing zeros, for sentences.
fn round(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let digits = (3 - v.abs().log10().floor() as i32).max(0) as usize;
    let text = format!("{v:.digits$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labs::defs::{labs, parse, LABS_JSON};
    use serde_json::json;

    fn run(task: &str, value: Option<u64>, gibs: f64) -> Measurement {
        Measurement {
            task: task.into(),
            value,
            result: json!({"gib_per_s": gibs, "bytes": 1 << 30, "elapsed_ms": 1000.0 / gibs}),
            planned_looks: true,
        }
    }

    /// The lab `lab_id` of the shipped labs, with its check `check_id`.
    fn lab_check(lab_id: &str, check_id: &str) -> (&'static Lab, &'static Check) {
        let lab = labs().find(lab_id).unwrap();
        let check = lab.checks.iter().find(|c| c.id == check_id).unwrap();
        (lab, check)
    }

    /// The crafted measurements and outcomes both judges read
    /// (`book/labs/check-cases.json`).
    fn check_cases() -> Vec<Value> {
        let cases: Value =
            serde_json::from_str(include_str!("../../../book/labs/check-cases.json")).unwrap();
        cases.as_array().unwrap().clone()
    }

    #[test]
    fn settle_finds_where_the_median_stops_moving() {
        assert_eq!(settle(&[1.0, 1.0, 1.0, 1.0], 0.1), 1);
        assert_eq!(settle(&[3.0, 1.0, 1.0, 1.0, 1.0, 1.0], 0.1), 3);
        assert_eq!(settle(&[1.0, 2.0, 1.0, 2.0, 3.0, 3.0], 0.1), 5);
    }

    #[test]
    fn ratio_checks_pass_and_fail_and_wait() {
        let (lab, check) = lab_check("busy-cost", "busy-not-slower");
        let mut ms: Vec<Measurement> = (0..6).map(|_| run("blocking", None, 2.0)).collect();
        assert_eq!(judge(lab, &ms, check, &[]).status, Status::Pending);
        ms.extend((0..6).map(|_| run("busy", None, 3.0)));
        let passed = judge(lab, &ms, check, &[]);
        assert_eq!((passed.status, passed.value), (Status::Pass, Some(1.5)));
        // The runner's judgement rides along, for the page to show as it is.
        let judged = passed.judged.as_ref().unwrap();
        assert_eq!(
            (judged.method, judged.n_a, judged.n_b, judged.min_n),
            (pipebench::stats::verdict::Method::RankSum, 6, 6, 5)
        );
        assert_eq!((judged.look, judged.looks), (Some(1), Some(LAB_LOOKS)));
        assert_eq!(
            (judged.ci_low, judged.ci_high),
            (passed.ci_low, passed.ci_high)
        );
        for m in ms.iter_mut().filter(|m| m.task == "busy") {
            *m = run("busy", None, 1.0);
        }
        assert_eq!(judge(lab, &ms, check, &[]).status, Status::Fail);
    }

    /// An older watched run is left out of every check on a figure watching
    /// moves (as labchecks.js leaves it out): its speed moves nothing, a task
    /// short of quiet runs waits and says how many watched ones were left out,
    /// and a check on damaged bytes still counts it.
    #[test]
    fn watched_runs_count_in_no_check() {
        let (lab, check) = lab_check("busy-cost", "busy-not-slower");
        let marked = |task: &str, gibs: f64, watched: bool| {
            let mut m = run(task, None, gibs);
            m.result["watched"] = json!(watched);
            m
        };
        let quiet: Vec<Measurement> = [2.0, 2.1, 1.9, 2.05, 1.95, 2.02]
            .map(|g| ("blocking", g))
            .into_iter()
            .chain([3.0, 3.1, 2.9, 3.05, 2.95, 3.02].map(|g| ("busy", g)))
            .map(|(t, g)| marked(t, g, false))
            .collect();
        let before = judge(lab, &quiet, check, &[]);
        let mut with_watched = quiet.clone();
        with_watched.extend((0..3).map(|_| marked("blocking", 1.0, true)));
        let after = judge(lab, &with_watched, check, &[]);
        assert_eq!(
            (after.status, after.value, after.ci_low, after.ci_high),
            (before.status, before.value, before.ci_low, before.ci_high)
        );
        assert_eq!(before.status, Status::Pass);
        // A run from before the field says nothing, and counts as it always did.
        let mut older = quiet.clone();
        older[0].result.as_object_mut().unwrap().remove("watched");
        assert_eq!(judge(lab, &older, check, &[]).status, Status::Pass);
        let mut short = quiet;
        short[2] = marked("blocking", 1.9, true);
        let pending = judge(lab, &short, check, &[]);
        assert_eq!(pending.status, Status::Pending);
        assert!(
            pending
                .detail
                .contains("has 5 of its 6 runs (1 watched run left out"),
            "{}",
            pending.detail
        );
        // Watching moves no damaged byte: a watched verified run still counts there.
        let (safety, clean) = lab_check("vmsplice-safety", "double-buffer-clean");
        let mut verified = marked("verified", 2.0, true);
        verified.result["corrupted_bytes"] = json!(0);
        assert_eq!(judge(safety, &[verified], clean, &[]).status, Status::Pass);
    }

    /// The latency labs' ratios of round trips are judged on their intervals,
    /// like every throughput ratio, and the crafted cases (which labchecks.js
    /// judges too) make each pass and fail, and one not resolved.
    #[test]
    fn latency_ratios_are_judged_on_their_intervals() {
        let book = parse(LABS_JSON).unwrap();
        let cases = check_cases();
        let mut not_resolved = false;
        for id in ["latency-tail", "latency-cpu"] {
            let lab = book.find(id).unwrap();
            let timed: Vec<&Check> = lab
                .checks
                .iter()
                .filter(|c| {
                    matches!(
                        c.measure,
                        Measure::Ratio {
                            metric: Metric::P50Ns | Metric::P99Ns,
                            ..
                        }
                    )
                })
                .collect();
            assert!(!timed.is_empty(), "{id} compares no round trips");
            for check in timed {
                assert!(judged_on_interval(&check.measure), "{id}/{}", check.id);
                let mut seen = Vec::new();
                for case in cases.iter().filter(|c| c["lab"] == id) {
                    if case["expect"].get(&check.id).is_none() {
                        continue;
                    }
                    let ms: Vec<Measurement> =
                        serde_json::from_value(case["measurements"].clone()).unwrap();
                    let got = judge(lab, &ms, check, &[]);
                    if got.status != Status::Pending {
                        let (low, high) = (got.ci_low.unwrap(), got.ci_high.unwrap());
                        assert!(
                            low > 0.0 && high >= low,
                            "{id}/{}: {}",
                            check.id,
                            got.detail
                        );
                    }
                    not_resolved |= got.status == Status::NotResolved;
                    seen.push(got.status);
                }
                for status in [Status::Pass, Status::Fail] {
                    assert!(seen.contains(&status), "{id}/{}: {seen:?}", check.id);
                }
            }
        }
        assert!(not_resolved, "no latency case is left not resolved");
    }

    /// A record from before the rank-sum rule (3 runs a side, which the
    /// bootstrap used to judge) is read and judged again: three runs a side
    /// cannot resolve at a look's level, and the outcome says so (and how many
    /// more runs its next look needs) rather than passing or failing.
    #[test]
    fn older_records_of_three_runs_a_side_are_judged_again_and_say_they_cannot_resolve() {
        let lab = labs().find("busy-cost").unwrap();
        let mut check = lab
            .checks
            .iter()
            .find(|c| c.id == "busy-not-slower")
            .unwrap()
            .clone();
        let mut older = lab.clone();
        for task in older.tasks.iter_mut() {
            task.runs = 3;
        }
        check.min = Some(1.0);
        let ms: Vec<Measurement> = [("blocking", 2.0), ("blocking", 2.1), ("blocking", 1.9)]
            .into_iter()
            .chain([("busy", 3.0), ("busy", 3.1), ("busy", 2.9)])
            .map(|(t, g)| run(t, None, g))
            .collect();
        let got = judge(&older, &ms, &check, &[]);
        assert_eq!(got.status, Status::NotResolved, "{}", got.detail);
        assert!(
            got.detail.contains("3 runs a side cannot resolve at 98.3%"),
            "{}",
            got.detail
        );
        let judged = got.judged.unwrap();
        assert_eq!(judged.verdict, pipebench::stats::verdict::Verdict::TooFew);
        // Looks at 3, 6 and 9 runs a side: the next needs 3 more of each.
        assert_eq!(got.more_runs, Some(3));
    }

    /// Runs a side of `busy` and `blocking` drawn from `rates`, in turn.
    fn alternating(busy: &[f64], blocking: &[f64]) -> Vec<Measurement> {
        let mut ms = Vec::new();
        for i in 0..busy.len().max(blocking.len()) {
            ms.extend(busy.get(i).map(|g| run("busy", None, *g)));
            ms.extend(blocking.get(i).map(|g| run("blocking", None, *g)));
        }
        ms
    }

    /// "More runs" follow the planned looks: runs between two looks are not
    /// judged (the outcome stays that of the look before, and says how many
    /// more the next needs); a look that settles the check stands whatever
    /// later runs show; after the last look the verdict is final and no more
    /// runs are asked for.
    #[test]
    fn more_runs_are_judged_at_planned_looks_and_the_last_look_is_final() {
        let (lab, check) = lab_check("busy-cost", "busy-not-slower");
        assert_eq!(lab_schedule(6).sizes(), &[6, 12, 18]);
        // Both tasks alike: look 1 cannot settle "at least 1.0".
        let alike = [
            2.0, 2.2, 1.8, 2.1, 1.9, 2.05, 1.95, 2.15, 1.85, 2.02, 1.98, 2.08,
        ];
        let wide: Vec<f64> = alike.iter().chain(&alike).copied().collect();
        let at = |n: usize| judge(lab, &alternating(&wide[..n], &wide[1..=n]), check, &[]);
        let first = at(6);
        assert_eq!(first.status, Status::NotResolved, "{}", first.detail);
        assert_eq!((first.more_runs, first.next_look_runs), (Some(6), Some(12)));
        assert!(
            first.detail.contains("not resolved at look 1 of 3")
                && first
                    .detail
                    .contains("run 6 more of each task for look 2 (12 runs a side)"),
            "{}",
            first.detail
        );
        // Runs between looks: still look 1, fewer to go.
        let between = at(9);
        assert_eq!(between.judged.as_ref().unwrap().look, Some(1));
        assert_eq!((between.more_runs, between.ci_low), (Some(3), first.ci_low));
        let second = at(12);
        assert_eq!(second.judged.as_ref().unwrap().look, Some(2));
        assert_eq!(second.more_runs, Some(6));
        let last = at(18);
        let (look, looks) = {
            let j = last.judged.as_ref().unwrap();
            (j.look, j.looks)
        };
        assert_eq!((look, looks), (Some(3), Some(3)));
        assert_eq!((last.status, last.more_runs), (Status::NotResolved, None));
        assert!(
            last.detail.contains("this verdict is final"),
            "{}",
            last.detail
        );
        // Past the last look nothing more is judged.
        assert_eq!(at(22).detail, last.detail);
        // A look that settles it stands: busy clearly faster at look 1, and
        // twelve later runs the other way change nothing.
        let fast = [3.0, 3.1, 2.9, 3.05, 2.95, 3.02];
        let mut ms = alternating(&fast, &alike[..6]);
        let passed = judge(lab, &ms, check, &[]);
        assert_eq!(passed.status, Status::Pass, "{}", passed.detail);
        ms.extend(alternating(&[1.0; 12], &[2.0; 12]));
        let still = judge(lab, &ms, check, &[]);
        assert_eq!((still.status, still.detail), (Status::Pass, passed.detail));
    }

    /// Runs recorded before checks judged at planned looks (no
    /// `planned_looks` mark) are judged again under that rule, and the
    /// outcome says so; runs recorded since do not.
    #[test]
    fn runs_recorded_before_planned_looks_are_judged_again_and_say_so() {
        let (lab, check) = lab_check("busy-cost", "busy-not-slower");
        let mut ms = alternating(&[3.0, 3.1, 2.9, 3.05, 2.95, 3.02], &[2.0; 6]);
        let now = judge(lab, &ms, check, &[]);
        assert!(!now.rejudged);
        assert!(!serde_json::to_value(&now)
            .unwrap()
            .as_object()
            .unwrap()
            .contains_key("rejudged"));
        ms[3].planned_looks = false;
        let again = judge(lab, &ms, check, &[]);
        assert!(again.rejudged);
        assert_eq!((again.status, again.ci_low), (now.status, now.ci_low));
        assert_eq!(serde_json::to_value(&again).unwrap()["rejudged"], true);
        // A check on a count was never judged on an interval: nothing to say.
        let counted = lab
            .checks
            .iter()
            .find(|c| !judged_on_interval(&c.measure))
            .unwrap();
        assert!(!judge(lab, &ms, counted, &[]).rejudged);
    }

    /// Null replays through this module's judging, as a student meets it:
    /// both tasks drawn from one log-normal distribution (log-sd 0.1), heavy
    /// tails (Student t, 2 d.o.f.) or a drift of 20% across runs taken in
    /// turn; the student runs the tasks' 6 runs a side, and whenever the check
    /// is not resolved runs as many more of each as the outcome asks
    /// (`more_runs`), until it is resolved or final (18 a side). The check's
    /// bound is the truth (ratio at least 1.0), so a pass or a fail at any
    /// point is a false claim. 2,000 tries each: the share of claims may pass
    /// 5% only by the tries' binomial margin (2.33 standard errors of a 5%
    /// share over 2,000: 6.13%). Power, stated: a true 1.25x is passed by the
    /// end in at least 90% of tries, and at the first look in at least 60%.
    #[test]
    fn a_student_asking_for_more_runs_until_resolved_is_wrong_at_most_one_time_in_twenty() {
        use pipebench::stats::rng::SplitMix64;
        let (lab, check) = lab_check("busy-cost", "busy-not-slower");
        assert_eq!(check.min, Some(1.0));
        let runs = lab.tasks.iter().find(|t| t.id == "busy").unwrap().runs;
        assert!(runs >= 6, "{runs}");
        let most = runs * LAB_LOOKS;
        let tries = 2000;
        let bound = 0.05 + 2.33 * (0.05f64 * 0.95 / tries as f64).sqrt();
        // The share of tries ending in `wanted` (for the null: in any claim),
        // the share settled at the first look, and the most runs a side taken.
        let share = |noise: u8, shift: f64, seed: u64, wanted: Status| {
            let mut rng = SplitMix64::new(seed);
            let (mut hits, mut first, mut longest) = (0, 0, 0);
            for _ in 0..tries {
                let mut ms: Vec<Measurement> = Vec::new();
                let mut add = |ms: &mut Vec<Measurement>, n: usize| {
                    for _ in 0..2 * n {
                        let i = ms.len();
                        let e = match noise {
                            1 => 0.05 * rng.student_t2(),
                            _ => 0.1 * rng.normal(),
                        };
                        let drift = match noise {
                            2 => 1.2f64.ln() * i as f64 / (2 * most) as f64,
                            _ => 0.0,
                        };
                        let busy = i.is_multiple_of(2);
                        let g = (e + drift).exp() * if busy { shift } else { 1.0 };
                        ms.push(run(if busy { "busy" } else { "blocking" }, None, g));
                    }
                };
                add(&mut ms, runs);
                let mut outcome = judge(lab, &ms, check, &[]);
                first += usize::from(outcome.status != Status::NotResolved);
                while let (Status::NotResolved, Some(more)) = (outcome.status, outcome.more_runs) {
                    add(&mut ms, more);
                    outcome = judge(lab, &ms, check, &[]);
                }
                longest = longest.max(ms.len() / 2);
                hits += usize::from(match wanted {
                    Status::NotResolved => outcome.status != Status::NotResolved,
                    _ => outcome.status == wanted,
                });
            }
            let of = |n: usize| n as f64 / tries as f64;
            (of(hits), of(first), longest)
        };
        for noise in 0..3u8 {
            let (claims, _, longest) =
                share(noise, 1.0, 70 + u64::from(noise), Status::NotResolved);
            eprintln!(
                "lab check at its bound, more runs until resolved, noise {noise}: {claims} claims"
            );
            assert!(claims <= bound, "noise {noise}: {claims}");
            // The student did ask again, up to the last look and no further.
            assert_eq!(longest, most, "noise {noise}");
        }
        let (power, first, _) = share(0, 1.25, 80, Status::Pass);
        eprintln!("lab check, a true 1.25x: passed {power} by the end, {first} at the first look");
        assert!(power >= 0.9 && first >= 0.6, "{power} {first}");
    }

    #[test]
    fn a_missing_figure_fails_and_says_so() {
        let lab = labs().find("vmsplice-safety").unwrap();
        let ms = vec![run("verified", None, 1.0), run("reuse", None, 1.0)];
        let outcome = judge(lab, &ms, &lab.checks[0], &[]);
        assert_eq!(outcome.status, Status::Fail);
        assert!(
            outcome.detail.contains("share of corrupted bytes"),
            "{}",
            outcome.detail
        );
    }

    /// The six labs of the steps and the IPC lab each judge at least one of
    /// the kernel's counts, and the crafted cases make every such check pass,
    /// fail and say it is unavailable (the machine's doing, not the student's),
    /// in this judge and in labchecks.js, which reads the same cases.
    #[test]
    fn every_step_lab_judges_a_count_and_the_cases_give_each_outcome() {
        let book = parse(LABS_JSON).unwrap();
        let cases = check_cases();
        for id in [
            "variance",
            "sizes",
            "vmsplice-safety",
            "huge-pages",
            "busy-cost",
            "choose-ipc",
        ] {
            let lab = book.find(id).unwrap();
            let counted: Vec<&Check> = lab
                .checks
                .iter()
                .filter(|c| {
                    let metric = serde_json::to_value(&c.measure).unwrap()["metric"].clone();
                    serde_json::from_value::<Metric>(metric).is_ok_and(|m| m.is_count())
                })
                .collect();
            assert!(!counted.is_empty(), "{id} judges no count");
            for check in counted {
                let seen: Vec<&str> = cases
                    .iter()
                    .filter(|c| c["lab"] == id)
                    .filter_map(|c| c["expect"][&check.id]["status"].as_str())
                    .collect();
                for status in ["pass", "fail", "unavailable"] {
                    assert!(
                        seen.contains(&status),
                        "{id}/{}: no crafted case is {status}: {seen:?}",
                        check.id
                    );
                }
            }
        }
    }

    /// A check that rests on a kernel behaviour is judged where the probe gave
    /// it, left unjudged (`not_this_kernel`) where the probe gave another
    /// answer, and judged as on the article's kernel where the probe could not
    /// tell; each outcome names what it assumed and what was probed.
    #[test]
    fn checks_follow_what_the_probe_said_this_kernel_does() {
        use pipebench::machine::behaviour::every_outcome;
        let lab = labs().find("vmsplice-safety").unwrap();
        // A copying kernel's runs: no byte damaged, early reuse or not.
        let ms: Vec<Measurement> = lab
            .tasks
            .iter()
            .flat_map(|t| {
                let runs = lab.required(&Ref {
                    task: t.id.clone(),
                    value: None,
                });
                (0..runs).map(|_| Measurement {
                    task: t.id.clone(),
                    value: None,
                    result: json!({"gib_per_s": 1.0, "bytes": 1u64 << 30, "elapsed_ms": 1000.0, "corrupted_bytes": 0}),
                    planned_looks: true,
                })
            })
            .collect();
        let probe = |answer: &str| {
            every_outcome("seen")
                .into_iter()
                .filter(|p| p.id == ProbeId::Vmsplice && p.answer == answer)
                .collect::<Vec<_>>()
        };
        let status = |kernel: &[Probe], id: &str| {
            let check = lab.checks.iter().find(|c| c.id == id).unwrap();
            judge(lab, &ms, check, kernel)
        };
        let copies = probe("copies");
        let harmless = status(&copies, "early-reuse-harmless");
        assert_eq!(harmless.status, Status::Pass, "{}", harmless.detail);
        assert!(
            harmless.detail.contains("answered `copies`"),
            "{}",
            harmless.detail
        );
        let breaks = status(&copies, "early-reuse-breaks");
        assert_eq!(breaks.status, Status::NotThisKernel, "{}", breaks.detail);
        let assumed = breaks.assumes.unwrap();
        assert_eq!(
            (assumed.answer.as_str(), assumed.measured.as_str()),
            ("maps", "copies")
        );

        let maps = probe("maps");
        assert_eq!(status(&maps, "early-reuse-breaks").status, Status::Fail);
        assert_eq!(
            status(&maps, "early-reuse-harmless").status,
            Status::NotThisKernel
        );
        // Not told: the article's kernel, which maps.
        let untold = status(&[], "early-reuse-breaks");
        assert_eq!(untold.status, Status::Fail);
        assert!(
            untold.detail.contains("could not tell"),
            "{}",
            untold.detail
        );
        assert_eq!(
            status(&[], "early-reuse-harmless").status,
            Status::NotThisKernel
        );
        // A check that assumes nothing says nothing of the kernel.
        let plain = status(&copies, "double-buffer-clean");
        assert_eq!(plain.status, Status::Pass);
        assert!(plain.assumes.is_none());

        let (huge, got_huge) = lab_check("huge-pages", "got-huge-pages");
        for answer in ProbeId::Thp.answers() {
            let kernel: Vec<Probe> = every_outcome("seen")
                .into_iter()
                .filter(|p| p.id == ProbeId::Thp && p.answer == answer)
                .collect();
            let outcome = judge(huge, &[], got_huge, &kernel);
            let judged = outcome.status != Status::NotThisKernel;
            assert_eq!(judged, answer == "given", "{answer}: {}", outcome.detail);
        }
    }

    /// A check may assume only an answer its probe gives.
    #[test]
    fn a_check_assuming_an_answer_no_probe_gives_is_refused() {
        let bad = LABS_JSON.replacen(
            r#""when": { "probe": "vmsplice", "answer": "maps" }"#,
            r#""when": { "probe": "vmsplice", "answer": "borrows" }"#,
            1,
        );
        let err = parse(&bad).unwrap_err().to_string();
        assert!(
            err.contains("`borrows`") && err.contains("maps, copies"),
            "{err}"
        );
    }

    /// The crafted cases the page's tests judge too: both must agree.
    #[test]
    fn shared_check_cases_judge_alike() {
        let book = parse(LABS_JSON).unwrap();
        let cases = check_cases();
        assert!(cases.len() >= 6);
        for case in cases {
            let name = case["name"].as_str().unwrap();
            let lab = book.find(case["lab"].as_str().unwrap()).unwrap();
            let ms: Vec<Measurement> =
                serde_json::from_value(case["measurements"].clone()).unwrap();
            for (id, expect) in case["expect"].as_object().unwrap() {
                let check = lab.checks.iter().find(|c| &c.id == id).unwrap();
                let got = judge(lab, &ms, check, &[]);
                let status = serde_json::to_value(got.status).unwrap();
                assert_eq!(status, expect["status"], "{name}: {id}: {}", got.detail);
                // A ratio judged on its interval carries the judgement it came
                // from (rank sum), and its interval is the judgement's.
                if judged_on_interval(&check.measure) && got.status != Status::Pending {
                    let judged = got.judged.as_ref().unwrap();
                    assert_eq!(judged.method, pipebench::stats::verdict::Method::RankSum);
                    assert_eq!((judged.ci_low, judged.ci_high), (got.ci_low, got.ci_high));
                }
                if let Some(value) = expect.get("value").and_then(Value::as_f64) {
                    let v = got.value.unwrap();
                    assert!((v - value).abs() < 1e-9, "{name}: {id}: {v} vs {value}");
                }
                for (key, got) in [("ci_low", got.ci_low), ("ci_high", got.ci_high)] {
                    if let Some(want) = expect.get(key).and_then(Value::as_f64) {
                        let got = got.unwrap_or(f64::NAN);
                        assert!(
                            (got - want).abs() < 1e-9,
                            "{name}: {id}: {key} {got} vs {want}"
                        );
                    }
                }
                if let Some(want) = expect.get("more_runs") {
                    assert_eq!(&json!(got.more_runs), want, "{name}: {id}: more_runs");
                }
            }
            if let Some(answer) = case.get("answer") {
                let got = match evaluate(lab, &ms, &lab.prediction.answer) {
                    Evaluated::Number(v) => json!(v),
                    Evaluated::Choice(c) => json!(c),
                    _ => Value::Null,
                };
                match (got.as_f64(), answer.as_f64()) {
                    (Some(a), Some(b)) => {
                        assert!((a - b).abs() < 1e-9, "{name}: answer {a} vs {b}")
                    }
                    _ => assert_eq!(&got, answer, "{name}: answer"),
                }
            }
        }
    }
}
