//! The wakeup probe as a job (its event is `wakeup`, with the machine's findings).
//! What one wakeup costs here: a one-byte ping-pong over two pipes between two
//! processes pinned to two CPUs, first blocking (each end sleeps in `read` and is
//! woken by the other's `write`), then busy-polling (O_NONBLOCK, and each end spins
//! on EAGAIN, so nobody sleeps). The blocking round trip holds two sleeps and two
//! wakeups; the busy one only the cache lines travelling between the CPUs. Their
//! difference is what a blocking step pays per hand-over, and what `busy-loop`
//! saves.
//!
//! Both ends are the latency lab's pipe ends ([`crate::latency`]), started through
//! the one launcher like every other child, so the probe and `pipebench latency pipe
//! --sizes 1` measure the same thing the same way.

use crate::engine::event::Event;
use crate::engine::observer::JobContext;
use crate::latency::{harness, LatencyConfig, LatencyError, LatencyMechanism, Mode};
use crate::machine::wakeup::WakeupFigures;
use crate::machine::{findings, system::SystemInfo};
use crate::process::launch::EndProgram;

/// Round trips timed per mode unless asked otherwise.
pub const DEFAULT_ROUND_TRIPS: u32 = 5_000;

/// The wakeup ping-pong on this thread, and the machine's findings with its
/// figures. A probe takes a second or two and is not cancellable midway; each mode
/// stops by itself within its time limit.
pub(crate) fn run(round_trips: u32, context: &JobContext) -> Event {
    match measure(&context.program, None, round_trips) {
        Ok(wakeup) => {
            let info = SystemInfo::probe();
            let findings = findings::findings(&info, Some(&wakeup));
            Event::Wakeup { wakeup, findings }
        }
        Err(err) => Event::error(err.to_string()),
    }
}

/// Why the ping-pong could not be measured.
#[derive(Debug, thiserror::Error)]
pub enum WakeupError {
    /// Busy polling needs each end on its own CPU.
    #[error(
        "the wakeup measurement needs two CPUs and this process may use {allowed:?}: \
         give it at least two (taskset, or the container's CPU limit)"
    )]
    NeedsTwoCpus {
        /// The CPUs this process may use.
        allowed: Vec<usize>,
    },
    /// A CPU asked for is not one this process may use.
    #[error(
        "CPU {cpu} is not among the CPUs this process may use ({allowed:?}): pick one of those"
    )]
    BadCpu {
        /// The CPU asked for.
        cpu: usize,
        /// The CPUs this process may use.
        allowed: Vec<usize>,
    },
    /// The round-trip count is out of range.
    #[error("--round-trips {0} is out of range: use 100 to 1000000")]
    BadRoundTrips(u32),
    /// The ping-pong itself failed (an end could not start, answered wrong or
    /// not in time).
    #[error("the wakeup measurement failed")]
    Run(#[source] LatencyError),
}

/// Measures both modes with one end on `cpus[0]` and the other on `cpus[1]` (by
/// default the first two CPUs this process may use), `round_trips` each, both ends
/// started from `program`.
pub fn measure(
    program: &EndProgram,
    cpus: Option<[usize; 2]>,
    round_trips: u32,
) -> Result<WakeupFigures, WakeupError> {
    if !(100..=1_000_000).contains(&round_trips) {
        return Err(WakeupError::BadRoundTrips(round_trips));
    }
    let allowed = crate::process::cpu::allowed_cpus();
    let cpus = match cpus {
        Some(cpus) => {
            for cpu in cpus {
                if !allowed.contains(&cpu) {
                    return Err(WakeupError::BadCpu { cpu, allowed });
                }
            }
            if cpus[0] == cpus[1] {
                return Err(WakeupError::NeedsTwoCpus { allowed });
            }
            cpus
        }
        None if allowed.len() >= 2 => [allowed[0], allowed[1]],
        None => return Err(WakeupError::NeedsTwoCpus { allowed }),
    };
    let median_us = |mode| {
        let config = LatencyConfig {
            mechanism: LatencyMechanism::Pipe,
            mode,
            size: 1,
            cpus,
            round_trips,
        };
        harness::run(&config, program, |_| false)
            .map(|result| result.p50 as f64 / 1000.0)
            .map_err(WakeupError::Run)
    };
    Ok(WakeupFigures {
        blocking_us: median_us(Mode::Blocking)?,
        busy_us: median_us(Mode::Busy)?,
        round_trips,
        cpus,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_requests_are_refused_before_anything_runs() {
        // Nothing starts: the program is never run.
        let program = EndProgram::current_exe(&[]).unwrap();
        let measure = |cpus, round_trips| measure(&program, cpus, round_trips);
        assert!(matches!(
            measure(None, 5),
            Err(WakeupError::BadRoundTrips(5))
        ));
        assert!(matches!(
            measure(Some([0, 100_000]), 1000),
            Err(WakeupError::BadCpu { cpu: 100_000, .. })
        ));
        assert!(matches!(
            measure(Some([0, 0]), 1000),
            Err(WakeupError::NeedsTwoCpus { .. })
        ));
    }
}
