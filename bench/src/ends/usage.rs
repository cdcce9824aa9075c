//! Resource usage of the calling process: faults and context switches, and the
//! window of kernel counts an end opens around its loop.

use std::collections::BTreeMap;

use crate::ends::options::CommonOptions;
use crate::ends::report::EndUsage;
use crate::process::counts::{Counted, Counting, Request};

/// The counting window of an end that makes `calls` (its data calls, by name), as
/// its options ask: opened now, started by the caller right before its loop.
pub fn counting(common: &CommonOptions, calls: &[&'static str]) -> Counting {
    let request = Request {
        calls: calls.to_vec(),
        // A pipe step's figure is set against the article's: its kernel
        // events only when asked, since they slow a blocking step.
        per_wakeup: common.trace_syscalls,
        trace_syscalls: common.trace_syscalls,
    };
    match common.no_counts {
        true => Counting::off(&request),
        false => Counting::open(&request),
    }
}

/// Closes `window` with `calls` data calls of kind `kind`.
pub fn counted(window: Counting, kind: &str, calls: u64) -> Counted {
    window.stop(BTreeMap::from([(kind.to_string(), calls)]))
}

/// getrusage(RUSAGE_SELF) for this process.
pub(crate) fn self_usage() -> EndUsage {
    // SAFETY: getrusage fills the struct we pass; a zeroed rusage is a valid value.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let ms = |tv: libc::timeval| tv.tv_sec as f64 * 1000.0 + tv.tv_usec as f64 / 1000.0;
    EndUsage {
        minor_faults: usage.ru_minflt as u64,
        major_faults: usage.ru_majflt as u64,
        voluntary_ctx_switches: usage.ru_nvcsw as u64,
        involuntary_ctx_switches: usage.ru_nivcsw as u64,
        user_ms: ms(usage.ru_utime),
        system_ms: ms(usage.ru_stime),
    }
}

/// The difference `later - earlier`, to count only what a loop caused.
pub fn since(earlier: EndUsage, later: EndUsage) -> EndUsage {
    EndUsage {
        minor_faults: later.minor_faults.saturating_sub(earlier.minor_faults),
        major_faults: later.major_faults.saturating_sub(earlier.major_faults),
        voluntary_ctx_switches: later
            .voluntary_ctx_switches
            .saturating_sub(earlier.voluntary_ctx_switches),
        involuntary_ctx_switches: later
            .involuntary_ctx_switches
            .saturating_sub(earlier.involuntary_ctx_switches),
        user_ms: (later.user_ms - earlier.user_ms).max(0.0),
        system_ms: (later.system_ms - earlier.system_ms).max(0.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touching_fresh_memory_counts_minor_faults() {
        let before = self_usage();
        let mut v = vec![0u8; 8 << 20];
        for page in v.chunks_mut(4096) {
            page[0] = 1;
        }
        std::hint::black_box(&v);
        let delta = since(before, self_usage());
        assert!(delta.minor_faults > 0, "{delta:?}");
    }
}
