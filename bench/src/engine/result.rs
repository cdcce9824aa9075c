//! The results of jobs, as the CLI prints them, the server streams them and the
//! history keeps them: a pipe step's [`RunResult`], an IPC run's [`IpcRecord`],
//! a latency configuration's [`LatencyRecord`], and [`KeptResult`], any one of
//! the three as the server keeps it.
//!
//! Field names are a JSON contract (docs/results.md): `step`, `options`, `bytes`,
//! `elapsed_ms`, `gib_per_s`, `pipe_capacity`, and per end page faults and context
//! switches. Fields added later default when an old history line lacks them.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::ends::hugepage::HugePageReport;
use crate::ends::options::{ReaderOptions, WriterOptions};
use crate::ends::report::EndReport;
use crate::engine::counts::Counts;
use crate::engine::occupancy::Occupancy;
use crate::ipc::IpcResult;
use crate::machine::state::MachineState;

/// How each end was started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunOptions {
    /// Writer options.
    pub writer: WriterOptions,
    /// Reader options.
    pub reader: ReaderOptions,
}

/// Per-end summary inside a [`RunResult`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct EndSummary {
    /// CPU the end was pinned to.
    pub cpu: Option<usize>,
    /// Minor page faults.
    pub minor_faults: u64,
    /// Major page faults.
    pub major_faults: u64,
    /// Voluntary context switches (sleeps).
    pub voluntary_ctx_switches: u64,
    /// Involuntary context switches (preemptions).
    pub involuntary_ctx_switches: u64,
    /// Calls that moved data.
    pub iterations: u64,
    /// EAGAIN retries.
    pub retries: u64,
    /// User CPU ms.
    pub user_ms: f64,
    /// System CPU ms.
    pub system_ms: f64,
}

/// The result of one run of a step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Step id.
    pub step: String,
    /// Options both ends ran with.
    pub options: RunOptions,
    /// Bytes that went through the pipe.
    pub bytes: u64,
    /// Reader's time from first to last byte, milliseconds.
    pub elapsed_ms: f64,
    /// Throughput in GiB/s (2^30 bytes per second, pv's unit).
    pub gib_per_s: f64,
    /// Writer calls that moved data.
    pub iterations: u64,
    /// Bytes each write, vmsplice, read or splice call handed over (`--buf-size`).
    #[serde(default)]
    pub bytes_per_call: u64,
    /// The pipe's capacity in force during the run, in bytes (F_GETPIPE_SZ after
    /// set-up): 65536 is the kernel's default ring of 16 one-page slots.
    #[serde(default)]
    pub pipe_capacity: Option<u64>,
    /// The machine's page size, bytes: one slot of the pipe's ring holds a page, so
    /// the capacity is this many pages (absent in results from before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_size: Option<u64>,
    /// Whether the run ended at its time budget rather than its byte count.
    pub stopped_by_budget: bool,
    /// Writer summary.
    pub writer: EndSummary,
    /// Reader summary.
    pub reader: EndSummary,
    /// What the writer's huge-page check found, if it ran.
    pub huge_pages: Option<HugePageReport>,
    /// Corrupted bytes the reader counted (experiment steps).
    pub corrupted_bytes: Option<u64>,
    /// The `pipebench run` command line that repeats this run.
    #[serde(default)]
    pub argv: Vec<String>,
    /// The same run as a `pipebench write ... | pipebench read ...` pipeline.
    #[serde(default)]
    pub pipeline: String,
    /// What the reader should know about this figure (a short run, one CPU, ...).
    #[serde(default)]
    pub warnings: Vec<String>,
    /// How full the pipe was over the run and how often each end slept (watched
    /// runs: `pipebench run --occupancy` and the server's live runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub occupancy: Option<Occupancy>,
    /// Unix time (ms) when the run finished.
    pub finished_at_ms: u64,
    /// What the kernel did for each end, and the book's model beside it (absent
    /// in results from before counting, and when neither end counted anything).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<Counts>,
    /// The machine's state over the run: governor, boost, steal, other work on
    /// the ends' CPUs, throttling (absent in results from before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<MachineState>,
    /// Whether the run was watched (its pipe sampled, its progress drawn) or
    /// quiet: watching costs the run, so comparisons use quiet runs and the page
    /// states what watching cost from one of each (absent in older results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watched: Option<bool>,
    /// Whether the kernel's events were traced (`--trace-syscalls`): exact
    /// counts, but the tracepoints slow the run, so its figure is compared
    /// only with other traced runs (absent when not traced).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub traced: bool,
}

impl RunResult {
    /// A result of catalog step `step` at its default plan with made-up figures
    /// (1 GiB in 1 s, 256 KiB a call, a 64 KiB pipe), or `None` for an unknown
    /// step: the one place tests and examples forge a result, so a new field
    /// is written once. Change what a test needs with struct update syntax.
    pub fn forged(step: &str) -> Option<RunResult> {
        let plan = crate::steps::plan::RunPlan::for_step_id(
            step,
            &crate::steps::plan::RunParams::default(),
            &crate::steps::plan::Limits::default(),
        )
        .ok()?;
        Some(RunResult {
            step: step.into(),
            options: RunOptions {
                writer: plan.writer,
                reader: plan.reader,
            },
            bytes: 1 << 30,
            elapsed_ms: 1000.0,
            gib_per_s: 1.0,
            iterations: 4096,
            bytes_per_call: 256 << 10,
            pipe_capacity: Some(65536),
            page_size: Some(4096),
            stopped_by_budget: false,
            writer: EndSummary::default(),
            reader: EndSummary::default(),
            huge_pages: None,
            corrupted_bytes: None,
            argv: Vec::new(),
            pipeline: String::new(),
            warnings: Vec::new(),
            occupancy: None,
            finished_at_ms: 1,
            counts: None,
            machine: None,
            watched: None,
            traced: false,
        })
    }
}

impl From<&EndReport> for EndSummary {
    fn from(report: &EndReport) -> Self {
        EndSummary {
            cpu: report.cpu,
            minor_faults: report.usage.minor_faults,
            major_faults: report.usage.major_faults,
            voluntary_ctx_switches: report.usage.voluntary_ctx_switches,
            involuntary_ctx_switches: report.usage.involuntary_ctx_switches,
            iterations: report.iterations,
            retries: report.retries,
            user_ms: report.usage.user_ms,
            system_ms: report.usage.system_ms,
        }
    }
}

/// The tag of an IPC line in the history and of an IPC result on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecordKind {
    /// A run of the IPC lab.
    Ipc,
}

/// A finished IPC run as the page and the history see it: `"kind":"ipc"`, the
/// lab's result fields, and when it finished. Pipe results have no `kind`, so
/// every older history line still reads as what it was.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IpcRecord {
    /// Always `ipc`.
    pub kind: RecordKind,
    /// The lab's result.
    #[serde(flatten)]
    pub result: IpcResult,
    /// Wall-clock milliseconds since the epoch when the run ended.
    pub finished_at_ms: u64,
    /// Whether the run was watched (its progress streamed) or quiet, as a pipe
    /// result says it: comparisons use quiet runs (absent in older records and
    /// where no one asked, as in `pipebench ipc`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watched: Option<bool>,
}

impl IpcRecord {
    /// Stamps `result` with the time now; whether it was watched is the job's
    /// to say.
    pub fn now(result: IpcResult) -> IpcRecord {
        IpcRecord {
            kind: RecordKind::Ipc,
            result,
            finished_at_ms: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
            watched: None,
        }
    }
}

/// The tag of a latency line in the history and of a latency result on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LatencyTag {
    /// A configuration of the latency lab.
    Latency,
}

/// A finished latency configuration as the page and the history see it:
/// `"kind":"latency"`, the figures (`p50 p90 p99 p999 max count`, ns per round
/// trip), and when it finished.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyRecord {
    /// Always `latency`.
    pub kind: LatencyTag,
    /// The figures.
    #[serde(flatten)]
    pub result: crate::latency::LatencyResult,
    /// Wall-clock milliseconds since the epoch when the run ended.
    pub finished_at_ms: u64,
}

impl LatencyRecord {
    /// The record of a result that finished just now.
    pub fn now(result: crate::latency::LatencyResult) -> Self {
        LatencyRecord {
            kind: LatencyTag::Latency,
            result,
            finished_at_ms: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
        }
    }
}

/// A result the server keeps (in its history and in a lab's measurements): a
/// pipe run, an IPC run or a latency configuration, one JSON object each, told
/// apart by `"kind"` (a pipe result has none, as every line before the IPC lab).
/// A kind of job whose results are kept adds its variant here, and nowhere in
/// the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum KeptResult {
    /// An IPC lab run (`"kind":"ipc"`); tried first, since it is tagged.
    Ipc(Box<IpcRecord>),
    /// A latency configuration (`"kind":"latency"`), tagged too.
    Latency(Box<LatencyRecord>),
    /// A pipe step's run.
    Pipe(Box<RunResult>),
}

impl KeptResult {
    /// Reads one kept line back: `None` for a line that is no result of any kind.
    pub fn from_line(line: &[u8]) -> Option<KeptResult> {
        serde_json::from_slice(line).ok()
    }

    /// The one JSON line it is kept as, newline included.
    pub fn to_line(&self) -> String {
        let mut line = serde_json::to_string(self).expect("results serialise");
        line.push('\n');
        line
    }

    /// A few words for a log: what ran and its headline figure.
    pub fn summary(&self) -> String {
        match self {
            KeptResult::Pipe(result) => format!(
                "{} moved {} bytes at {:.2} GiB/s",
                result.step, result.bytes, result.gib_per_s
            ),
            KeptResult::Ipc(record) => format!(
                "ipc {} at {:.1} MiB/s",
                record.result.mechanism, record.result.mib_per_s
            ),
            KeptResult::Latency(record) => format!(
                "latency {}: p50 {} ns, p99 {} ns",
                record.result.mechanism, record.result.p50, record.result.p99
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::ends::report::EndUsage;
    use crate::ipc::{IpcEnd, Mechanism};
    use crate::process::counts::{Counted, Counts, EndCounts};

    #[test]
    fn a_judged_ipc_record_reads_back_as_it_was_written() {
        // The history and the lab store keep IPC records as JSON lines (the
        // result flattened into the record, each prediction flattened too).
        const MIB64: u64 = 64 << 20;
        let end = |role: &str| IpcEnd {
            role: role.into(),
            usage: EndUsage::default(),
            call_bytes: [("write".to_string(), MIB64)]
                .into_iter()
                .collect::<BTreeMap<_, _>>(),
        };
        let consumer = Counted {
            counts: EndCounts {
                syscalls: [("write".to_string(), 1024)].into_iter().collect(),
                voluntary_switches: 900,
                context_switches: 900,
                page_faults: 40,
                ..EndCounts::default()
            },
            missing: Vec::new(),
        };
        // One end uncounted, so the model carries a `why` to keep too.
        let ends = vec![end("consumer"), end("producer")];
        let counts = Counts::of([("consumer", Some(&consumer)), ("producer", None)]);
        let model = crate::ipc::model::judge(Mechanism::PipeRw, MIB64, &ends, counts.as_ref());
        assert!(model.iter().any(|p| p.why.is_some()));
        let result = IpcResult {
            mechanism: "pipe-rw".into(),
            bytes: MIB64,
            chunk: 65536,
            elapsed_ms: 100.0,
            gib_per_s: 0.625,
            mib_per_s: 640.0,
            copies: Some(4),
            kernel_functions: Vec::new(),
            survey_ms: None,
            survey_bytes: None,
            checksum_ok: true,
            ends,
            lines: None,
            cow: None,
            filesystem: None,
            notes: Vec::new(),
            model,
            page_size: Some(4096),
            counts,
        };
        let record = IpcRecord::now(result);
        let line = KeptResult::Ipc(Box::new(record.clone())).to_line();
        let Some(KeptResult::Ipc(back)) = KeptResult::from_line(line.as_bytes()) else {
            panic!("the line did not read back as an IPC record: {line}");
        };
        assert_eq!(back.result.model, record.result.model);
        assert_eq!(back.result.ends, record.result.ends);
        // The counts once, keyed by role: the consumer's, none of the producer's.
        let counts = back.result.counts.as_ref().unwrap();
        assert_eq!(counts.ends.keys().collect::<Vec<_>>(), ["consumer"]);
        assert_eq!(back.result.counts, record.result.counts);
        let json: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert!(json["ends"][0].get("counts").is_none(), "{json}");
        assert_eq!(json["counts"]["consumer"]["voluntary_switches"], 900);
    }
}
