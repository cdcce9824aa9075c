//! What a run reports: per end, and for the whole run.
//!
//! Field names are a JSON contract (ARCHITECTURE.md): `step`, `options`, `bytes`,
//! `elapsed_ms`, `gib_per_s`, `pipe_capacity`, and per end page faults and context
//! switches. Fields added later default when an old history line lacks them.

use serde::{Deserialize, Serialize};

use crate::error::EndFailure;
use crate::occupancy::Occupancy;
use crate::options::{ReaderOptions, WriterOptions};
use crate::size::GIB;

/// Resource usage of one end, from getrusage(RUSAGE_SELF) at its end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct EndUsage {
    /// Page faults served without I/O (first touch, copy-on-write, huge page set-up).
    pub minor_faults: u64,
    /// Page faults that needed I/O.
    pub major_faults: u64,
    /// Times the end gave up the CPU to wait (a blocking pipe call sleeping).
    pub voluntary_ctx_switches: u64,
    /// Times the end was preempted.
    pub involuntary_ctx_switches: u64,
    /// CPU time in user mode, milliseconds.
    pub user_ms: f64,
    /// CPU time in the kernel, milliseconds.
    pub system_ms: f64,
}

/// What the huge-page check found in the writer's buffers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HugePageReport {
    /// The system's THP mode (`always`, `madvise`, `never`), as read.
    pub thp_mode: String,
    /// How the pages were inspected: `kpageflags` (root) or `smaps` (anyone).
    pub method: String,
    /// Bytes of the buffers that were checked.
    pub checked_bytes: u64,
    /// Bytes of them backed by transparent huge pages.
    pub huge_bytes: u64,
    /// A sentence for the reader when something is off, e.g. THP disabled.
    pub note: Option<String>,
}

/// The report one end writes when it finishes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EndReport {
    /// `writer` or `reader`.
    pub role: String,
    /// Bytes this end moved.
    pub bytes: u64,
    /// Calls that moved data (write, vmsplice, read or splice).
    pub iterations: u64,
    /// Calls that returned EAGAIN (busy looping) before data moved.
    pub retries: u64,
    /// Milliseconds from the first byte to the last (the reader's clock is the run's).
    pub elapsed_ms: f64,
    /// The CPU this end was pinned to.
    pub cpu: Option<usize>,
    /// Resource usage.
    pub usage: EndUsage,
    /// Huge-page findings (writer with --huge-pages).
    pub huge_pages: Option<HugePageReport>,
    /// Corrupted bytes seen with --verify --count-corrupt.
    pub corrupted_bytes: Option<u64>,
    /// Whether the harness stopped the run at its time budget.
    pub stopped_by_budget: bool,
    /// The pipe's capacity in bytes after set-up (F_GETPIPE_SZ), writer only.
    #[serde(default)]
    pub pipe_capacity: Option<u64>,
}

/// The one line an end writes on its report fd when it stops: its report, or why
/// it failed. The harness reads the kind of failure from here, typed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "lowercase")]
pub enum EndOutcome {
    /// The end finished: its report.
    Done {
        /// What it measured.
        report: Box<EndReport>,
    },
    /// The end failed.
    Failed {
        /// Why.
        error: EndFailure,
    },
}

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
}

/// GiB/s for `bytes` in `elapsed_ms`.
pub fn gib_per_s(bytes: u64, elapsed_ms: f64) -> f64 {
    if elapsed_ms <= 0.0 {
        return 0.0;
    }
    bytes as f64 / GIB as f64 / (elapsed_ms / 1000.0)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gib_per_s_uses_binary_gigabytes() {
        assert!((gib_per_s(GIB, 1000.0) - 1.0).abs() < 1e-12);
        assert!((gib_per_s(10 * GIB, 2000.0) - 5.0).abs() < 1e-12);
        assert_eq!(gib_per_s(GIB, 0.0), 0.0);
    }
}
