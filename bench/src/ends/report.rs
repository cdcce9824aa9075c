//! What one end reports when it finishes: its bytes, calls, timing and resource
//! usage, as the one outcome line on its report fd.
//!
//! Field names are a JSON contract (docs/results.md). Fields added later default
//! when an old history line lacks them.

use serde::{Deserialize, Serialize};

use super::hugepage::HugePageReport;
use crate::ends::error::EndFailure;
use crate::process::counts::Counted;

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
    /// What the kernel did for this end over its loop, and what could not be counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<Counted>,
}

/// The one line an end writes on its report fd when it stops: its report, or why
/// it failed. The harness reads the kind of failure from here, typed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "lowercase")]
pub(crate) enum EndOutcome {
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
