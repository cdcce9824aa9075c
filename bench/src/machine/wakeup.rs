//! What one wakeup costs here, as the machine report and its findings read it:
//! the blocking and busy round trips of a one-byte ping-pong over two pipes
//! between two pinned processes. Their difference is what a blocking step pays per
//! hand-over, and what `busy-loop` saves. The engine measures them
//! ([`crate::engine::wakeup`], with the latency lab's pipe ends).

use serde::{Deserialize, Serialize};

/// The measured round trips.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WakeupFigures {
    /// Median round trip with both ends blocking, microseconds.
    pub blocking_us: f64,
    /// Median round trip with both ends busy-polling, microseconds.
    pub busy_us: f64,
    /// Round trips timed per mode.
    pub round_trips: u32,
    /// The CPUs of the two processes (this one first).
    pub cpus: [usize; 2],
}
