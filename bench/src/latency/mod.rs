//! The latency lab: how long one message takes, mechanism by mechanism.
//!
//! Two pinned processes (`latency-end ping` and `latency-end pong`, started
//! through [`crate::process::launch`]) bounce one message of `size` bytes back
//! and forth. The ping end times every round trip with the monotonic clock and
//! keeps the distribution in an HDR histogram; both ends read their own CPU time
//! (getrusage) over the timed window, so what waiting costs is a figure.
//!
//! - [`table`]: the mechanisms, their waiting modes and size limits.
//! - [`shared`]: the shared page both ends map (progress, the live distribution,
//!   futex words, the busy ring, message buffers).
//! - [`channel`]: one way per mechanism to send and receive a message, blocking
//!   or busy-polling (an end's side).
//! - [`end`]: the ends' loops and their report.
//! - [`harness`]: the parent's side: makes what the mechanism needs (privately,
//!   removed as soon as both ends hold it), starts both ends, samples progress.
//! - [`chart`]: the SVG percentile chart.
//! - [`pair`]: how the two CPUs sit (one CPU, two SMT threads of one core, two
//!   cores) and the default pair, chosen on purpose.
//!
//! May use [`crate::process`] and [`crate::size`].

pub mod channel;
pub mod chart;
pub mod end;
pub mod harness;
pub mod pair;
pub mod shared;
pub mod table;

use serde::{Deserialize, Serialize};

use crate::process::counts::Counts;
use crate::size::ByteSize;

pub use harness::{run, LiveSample};
pub use table::{mechanisms, LatencyMechanism, LatencyMechanismInfo};

/// Round trips timed per configuration unless asked otherwise.
pub const DEFAULT_ROUND_TRIPS: u32 = 10_000;
/// The fewest and most round trips a configuration may ask for.
pub const ROUND_TRIPS: std::ops::RangeInclusive<u32> = 10..=10_000_000;
/// The largest message: 16 MiB (both directions' buffers live in one shared
/// region).
pub(crate) const MAX_SIZE: u64 = 16 << 20;
/// Round trips per block of the timed window (see [`LatencyConfig::blocks`]).
pub(crate) const BLOCK: u32 = 64;

/// One block of the timed window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    /// Round trips it measures.
    pub trips: u32,
    /// Timed one by one (into the histogram), or only as a whole.
    pub timed: bool,
    /// An untimed block that runs before its timed partner (the next block)
    /// rather than after it (the previous one): pairs take turns, so
    /// whatever the order does cancels out.
    pub leads: bool,
}

/// The default sizes of `pipebench latency`.
pub const DEFAULT_SIZES: &str = "64,4KiB,64KiB";

/// How an end waits for the next message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// It sleeps in the kernel until the message is there (and is woken).
    Blocking,
    /// It never sleeps: non-blocking calls retried, or a spin on shared memory.
    Busy,
}

impl Mode {
    /// `blocking` or `busy`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Blocking => "blocking",
            Mode::Busy => "busy",
        }
    }

    /// Parses `blocking|busy|both` into the modes to run.
    pub fn parse_list(text: &str) -> Result<Vec<Mode>, LatencyError> {
        match text {
            "blocking" => Ok(vec![Mode::Blocking]),
            "busy" => Ok(vec![Mode::Busy]),
            "both" => Ok(vec![Mode::Blocking, Mode::Busy]),
            other => Err(LatencyError::BadMode {
                text: other.to_string(),
            }),
        }
    }
}

/// One configuration to measure: a mechanism, a mode, a size, two CPUs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LatencyConfig {
    /// The mechanism.
    pub mechanism: LatencyMechanism,
    /// How both ends wait.
    pub mode: Mode,
    /// Bytes per message, each way.
    pub size: u64,
    /// The ping end's CPU, then the pong end's.
    pub cpus: [usize; 2],
    /// Round trips timed.
    pub round_trips: u32,
}

impl LatencyConfig {
    /// Round trips before timing starts: the caches, the scheduler and the
    /// frequency settle (a tenth of the timed ones, 10 to 1000).
    pub(crate) fn warm_up(&self) -> u32 {
        (self.round_trips / 10).clamp(10, 1000)
    }

    /// The timed window, block by block: the timed round trips in blocks of
    /// [`BLOCK`] (the last one shorter), and beside every fourth timed block,
    /// starting with the first, an untimed block as long as it, after it and
    /// before it in turn. A timed block reads the clock once per round trip;
    /// an untimed one only at its two ends, so its mean carries no per-trip
    /// read. Each pair, side by side in time, measures what timing adds to a
    /// round trip.
    pub fn blocks(&self) -> Vec<Block> {
        let mut blocks = Vec::new();
        let mut left = self.round_trips;
        let mut index = 0u32;
        while left > 0 {
            let trips = left.min(BLOCK);
            let timed = Block {
                trips,
                timed: true,
                leads: false,
            };
            match (index.is_multiple_of(4), index % 8 == 4) {
                (false, _) => blocks.push(timed),
                (true, leads) => {
                    let untimed = Block {
                        trips,
                        timed: false,
                        leads,
                    };
                    match leads {
                        true => blocks.extend([untimed, timed]),
                        false => blocks.extend([timed, untimed]),
                    }
                }
            }
            left -= trips;
            index += 1;
        }
        blocks
    }

    /// Round trips of the window after the warm-up, as both ends count them:
    /// each block's, and one more per block that closes it (its last send's
    /// echo, received and not timed).
    pub fn window(&self) -> u64 {
        self.blocks().iter().map(|b| u64::from(b.trips) + 1).sum()
    }

    /// Checks the configuration against the mechanism's limits and this
    /// machine's CPUs.
    pub fn check(&self) -> Result<(), LatencyError> {
        if !ROUND_TRIPS.contains(&self.round_trips) {
            return Err(LatencyError::BadRoundTrips {
                round_trips: self.round_trips,
            });
        }
        check_size(self.size)?;
        check_cpus(self.cpus)?;
        if let Some(reason) = self.mechanism.info().lacks_mode(self.mode) {
            return Err(LatencyError::NoSuchMode {
                mechanism: self.mechanism.id().to_string(),
                mode: self.mode,
                reason: reason.to_string(),
            });
        }
        // Whether this kernel has it at all is a fact of the machine, known
        // before anything is made: such a configuration is skipped with why.
        if matches!(
            self.mechanism,
            LatencyMechanism::IoUring | LatencyMechanism::IoUringMsgRing
        ) {
            harness::io_uring_here(self)?;
        }
        if let Some((limit, what)) = self.mechanism.size_limit() {
            if self.size > limit {
                return Err(LatencyError::TooLarge {
                    mechanism: self.mechanism.id().to_string(),
                    size: self.size,
                    limit,
                    what,
                });
            }
        }
        Ok(())
    }
}

/// Checks one message size: 1 byte to [`MAX_SIZE`].
pub fn check_size(size: u64) -> Result<(), LatencyError> {
    if size == 0 || size > MAX_SIZE {
        return Err(LatencyError::SizeOutOfRange { size });
    }
    Ok(())
}

/// Checks that both CPUs are ones this process may use.
pub(crate) fn check_cpus(cpus: [usize; 2]) -> Result<(), LatencyError> {
    let allowed = crate::process::cpu::allowed_cpus();
    for cpu in cpus {
        if !allowed.contains(&cpu) {
            return Err(LatencyError::ForbiddenCpu { cpu, allowed });
        }
    }
    Ok(())
}

/// Parses `--sizes`: `A,B,C` or a doubling range `A..B`, each 1 byte to 16 MiB.
pub fn parse_sizes(text: &str) -> Result<Vec<u64>, LatencyError> {
    let size = |t: &str| -> Result<u64, LatencyError> {
        let value = t
            .trim()
            .parse::<ByteSize>()
            .map_err(|e| LatencyError::BadSize {
                text: t.trim().to_string(),
                reason: e.to_string(),
            })?
            .bytes();
        check_size(value)?;
        Ok(value)
    };
    let sizes = match text.split_once("..") {
        Some((low, high)) => {
            let (low, high) = (size(low)?, size(high)?);
            if high < low {
                return Err(LatencyError::BadSize {
                    text: text.to_string(),
                    reason: "the range must go up".into(),
                });
            }
            std::iter::successors(Some(low), |s| s.checked_mul(2))
                .take_while(|s| *s <= high)
                .collect()
        }
        None => text
            .split(',')
            .filter(|t| !t.trim().is_empty())
            .map(size)
            .collect::<Result<Vec<_>, _>>()?,
    };
    if sizes.is_empty() {
        return Err(LatencyError::BadSize {
            text: text.to_string(),
            reason: "no size given".into(),
        });
    }
    Ok(sizes)
}

/// Parses `--cpus A,B` (two CPUs, the same one twice allowed) and checks them.
pub fn parse_cpus(text: &str) -> Result<[usize; 2], LatencyError> {
    let bad = || LatencyError::BadCpus {
        text: text.to_string(),
    };
    let (a, b) = text.split_once(',').ok_or_else(bad)?;
    let cpus = [
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    ];
    check_cpus(cpus)?;
    Ok(cpus)
}

/// The default CPUs: the two the pipe steps use
/// ([`crate::process::cpu::default_pair`], the one function both call), so a
/// latency figure and a throughput figure of this machine come from the same
/// two CPUs, whether they are two cores or two SMT threads of one (the result
/// names which: [`pair::Placement`]; `--pair` chooses by placement). One CPU
/// twice on a one-CPU machine.
pub fn default_cpus() -> [usize; 2] {
    let allowed = crate::process::cpu::allowed_cpus();
    crate::process::cpu::default_pair(&allowed).unwrap_or_else(|| {
        let only = allowed.first().copied().unwrap_or(0);
        [only, only]
    })
}

/// The first pair of allowed CPUs that sits as `want` (`--pair`).
pub fn cpus_placed(want: pair::Placement) -> Result<[usize; 2], LatencyError> {
    let allowed = crate::process::cpu::allowed_cpus();
    pair::Topology::read(&allowed)
        .pair(&allowed, want)
        .filter(|_| want != pair::Placement::Unknown)
        .ok_or(LatencyError::NoPair { want, allowed })
}

/// A point of the distribution: this share of round trips took at most `ns`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CdfPoint {
    /// Percentile, 0 to 100.
    pub percentile: f64,
    /// Nanoseconds per round trip.
    pub ns: u64,
}

/// What one configuration measured: nanoseconds per round trip and CPU time per
/// message at each end (JSON names are the contract: `p50 p90 p99 p999 max
/// count`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyResult {
    /// The mechanism's id.
    pub mechanism: String,
    /// `blocking` or `busy`.
    pub mode: Mode,
    /// Bytes per message, each way.
    pub size: u64,
    /// The ping end's CPU, then the pong end's.
    pub cpus: [usize; 2],
    /// How those CPUs sit: `same-cpu`, `smt-siblings`, `separate-cores` (or
    /// `unknown` where the kernel does not say, and in older records).
    #[serde(default)]
    pub placement: pair::Placement,
    /// Round trips timed (the histogram's count).
    pub count: u64,
    /// Round trips run first and not timed.
    pub warm_up: u32,
    /// Fastest round trip, ns.
    pub min: u64,
    /// Mean, ns.
    pub mean: f64,
    /// Median, ns.
    pub p50: u64,
    /// 90th percentile, ns.
    pub p90: u64,
    /// 99th percentile, ns.
    pub p99: u64,
    /// 99.9th percentile, ns.
    pub p999: u64,
    /// Slowest round trip, ns.
    pub max: u64,
    /// The distribution as percentile points, for a CDF.
    pub cdf: Vec<CdfPoint>,
    /// CPU time (user + system) the ping end spent per round trip, ns.
    pub ping_cpu_ns: f64,
    /// CPU time the pong end spent per round trip, ns.
    pub pong_cpu_ns: f64,
    /// Sleeps (voluntary context switches) of the ping end per round trip.
    pub ping_sleeps: f64,
    /// Sleeps of the pong end per round trip.
    pub pong_sleeps: f64,
    /// What the kernel did for each end over the window, keyed by the ends'
    /// names here (`ping`, `pong`), in the shape every result's counts take:
    /// context switches, page faults and CPU migrations read at the window's
    /// two ends, the calls each end made to send and receive, and what is
    /// missing and why (no kernel event is traced in a latency end). Totals
    /// over the window (untimed blocks included); the per-round-trip figures
    /// above are from the same readings. Empty in older records.
    #[serde(default)]
    pub counts: Counts,
    /// What timing one round trip costs, ns, measured where it is paid: the
    /// median, over each timed block and the untimed block beside it
    /// ([`LatencyConfig::blocks`]), of the timed block's mean round trip less
    /// the untimed one's. Noise can make it slightly negative.
    pub clock_ns: f64,
    /// One clock read alone, ns, read back to back: what the read costs when
    /// nothing hides it (each timed round trip holds one, issued while the
    /// message is on its way).
    #[serde(default)]
    pub clock_read_ns: f64,
    /// Mean round trip of the untimed blocks, ns: the mean without a clock
    /// read per round trip (0 in older records).
    #[serde(default)]
    pub batch_mean_ns: f64,
    /// What timing each round trip added, relative: `clock_ns` /
    /// `batch_mean_ns` (0 in older records).
    #[serde(default)]
    pub timing_overhead: f64,
    /// The clock that timed the round trips: `tsc` (the time-stamp counter,
    /// constant and non-stop, scaled against the monotonic clock) or `monotonic`.
    #[serde(default)]
    pub clock: String,
    /// Wall time of the window after the warm-up (timed and untimed
    /// blocks), ms.
    pub elapsed_ms: f64,
    /// What the reader should know about this run besides its figures (for
    /// now: connections to the TCP pair's port from another program, refused
    /// unread). Absent when there is nothing to say, as in older records.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Why a latency run could not be made or finished.
#[derive(Debug, thiserror::Error)]
pub enum LatencyError {
    /// No mechanism of that name.
    #[error("unknown mechanism `{name}`: use one of {}", known.join(", "))]
    UnknownMechanism {
        /// What was asked for.
        name: String,
        /// The ids there are.
        known: Vec<String>,
    },
    /// A size that does not read.
    #[error(
        "--sizes `{text}`: {reason} (write sizes as 64, 4KiB, 1MiB; a list A,B,C or a range A..B)"
    )]
    BadSize {
        /// The text.
        text: String,
        /// Why.
        reason: String,
    },
    /// A size out of bounds.
    #[error("message size {size} bytes is out of range: use 1 byte to 16 MiB")]
    SizeOutOfRange {
        /// The size, bytes.
        size: u64,
    },
    /// `--cpus` that does not read.
    #[error("--cpus `{text}`: write two CPU numbers, A,B (the same one twice for one CPU)")]
    BadCpus {
        /// The text.
        text: String,
    },
    /// No two allowed CPUs sit as `--pair` asks (no SMT here, or one core only).
    #[error("no two CPUs this process may use are {} (allowed: {allowed:?})", want.words())]
    NoPair {
        /// The placement asked for.
        want: pair::Placement,
        /// The allowed CPUs.
        allowed: Vec<usize>,
    },
    /// A CPU this process may not use.
    #[error("CPU {cpu} is not one this process may use (allowed: {allowed:?})")]
    ForbiddenCpu {
        /// The CPU.
        cpu: usize,
        /// The allowed CPUs.
        allowed: Vec<usize>,
    },
    /// `--mode` that does not read.
    #[error("--mode `{text}`: use blocking, busy or both")]
    BadMode {
        /// The text.
        text: String,
    },
    /// A round-trip count out of bounds.
    #[error("{round_trips} round trips is out of range: use 10 to 10000000")]
    BadRoundTrips {
        /// The count.
        round_trips: u32,
    },
    /// The mechanism has no such way to wait.
    #[error("{mechanism} has no {} mode: {reason}", mode.as_str())]
    NoSuchMode {
        /// The mechanism.
        mechanism: String,
        /// The mode.
        mode: Mode,
        /// Why.
        reason: String,
    },
    /// The message is larger than the mechanism (or this machine's limit) carries.
    #[error("{mechanism} carries at most {limit} bytes a message here ({what}); {size} asked for")]
    TooLarge {
        /// The mechanism.
        mechanism: String,
        /// The size asked for.
        size: u64,
        /// The limit.
        limit: u64,
        /// Where the limit comes from.
        what: &'static str,
    },
    /// This kernel (or its sandbox) lacks what the mechanism needs.
    #[error("{mechanism} is not available here: {reason}")]
    Unsupported {
        /// The mechanism.
        mechanism: String,
        /// Why.
        reason: String,
    },
    /// Making what the mechanism needs failed.
    #[error("cannot {what}: {source}")]
    Setup {
        /// What was being made.
        what: String,
        /// Why.
        source: std::io::Error,
    },
    /// An end failed, or died without saying why.
    #[error("the {role} end failed: {message}")]
    End {
        /// `ping` or `pong`.
        role: &'static str,
        /// What it said.
        message: String,
    },
    /// The run took longer than allowed; both ends were killed.
    #[error("the run took longer than {seconds} s and was stopped")]
    Timeout {
        /// The limit.
        seconds: u64,
    },
    /// The run was asked to stop.
    #[error("the run was cancelled")]
    Cancelled,
}

/// The kind of a [`LatencyError`], for a page (JSON `kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LatencyErrorKind {
    /// [`LatencyError::UnknownMechanism`].
    UnknownMechanism,
    /// A size, CPU, mode or count out of bounds or unreadable.
    OutOfRange,
    /// [`LatencyError::NoSuchMode`].
    NoSuchMode,
    /// [`LatencyError::TooLarge`].
    TooLarge,
    /// [`LatencyError::Unsupported`].
    Unsupported,
    /// [`LatencyError::Setup`].
    Setup,
    /// [`LatencyError::End`].
    EndFailed,
    /// [`LatencyError::Timeout`].
    Timeout,
    /// [`LatencyError::Cancelled`].
    Cancelled,
}

impl LatencyError {
    /// Its kind.
    pub fn kind(&self) -> LatencyErrorKind {
        match self {
            LatencyError::UnknownMechanism { .. } => LatencyErrorKind::UnknownMechanism,
            LatencyError::BadSize { .. }
            | LatencyError::SizeOutOfRange { .. }
            | LatencyError::BadCpus { .. }
            | LatencyError::ForbiddenCpu { .. }
            | LatencyError::NoPair { .. }
            | LatencyError::BadMode { .. }
            | LatencyError::BadRoundTrips { .. } => LatencyErrorKind::OutOfRange,
            LatencyError::NoSuchMode { .. } => LatencyErrorKind::NoSuchMode,
            LatencyError::TooLarge { .. } => LatencyErrorKind::TooLarge,
            LatencyError::Unsupported { .. } => LatencyErrorKind::Unsupported,
            LatencyError::Setup { .. } => LatencyErrorKind::Setup,
            LatencyError::End { .. } => LatencyErrorKind::EndFailed,
            LatencyError::Timeout { .. } => LatencyErrorKind::Timeout,
            LatencyError::Cancelled => LatencyErrorKind::Cancelled,
        }
    }

    /// Whether the input was at fault (the CLI exits 2).
    pub fn is_input_error(&self) -> bool {
        matches!(
            self.kind(),
            LatencyErrorKind::UnknownMechanism
                | LatencyErrorKind::OutOfRange
                | LatencyErrorKind::NoSuchMode
                | LatencyErrorKind::TooLarge
        )
    }

    /// Whether this configuration simply does not exist for the mechanism (a
    /// matrix skips it and says why, rather than failing).
    pub fn is_not_applicable(&self) -> bool {
        matches!(
            self.kind(),
            LatencyErrorKind::NoSuchMode
                | LatencyErrorKind::TooLarge
                | LatencyErrorKind::Unsupported
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_lists_and_doubling_ranges() {
        assert_eq!(parse_sizes("1,64,4KiB").unwrap(), vec![1, 64, 4096]);
        assert_eq!(
            parse_sizes("1KiB..8KiB").unwrap(),
            vec![1024, 2048, 4096, 8192]
        );
        assert!(matches!(
            parse_sizes("0"),
            Err(LatencyError::SizeOutOfRange { size: 0 })
        ));
        assert!(matches!(
            parse_sizes("17MiB"),
            Err(LatencyError::SizeOutOfRange { .. })
        ));
        assert!(matches!(
            parse_sizes("lots"),
            Err(LatencyError::BadSize { .. })
        ));
        assert!(matches!(
            parse_sizes("8KiB..1KiB"),
            Err(LatencyError::BadSize { .. })
        ));
    }

    #[test]
    fn modes_and_cpus_read_or_say_why() {
        assert_eq!(
            Mode::parse_list("both").unwrap(),
            vec![Mode::Blocking, Mode::Busy]
        );
        assert!(matches!(
            Mode::parse_list("spin"),
            Err(LatencyError::BadMode { .. })
        ));
        assert!(matches!(parse_cpus("0"), Err(LatencyError::BadCpus { .. })));
        assert!(matches!(
            parse_cpus("0,100000"),
            Err(LatencyError::ForbiddenCpu { cpu: 100000, .. })
        ));
        let cpus = default_cpus();
        assert_eq!(
            parse_cpus(&format!("{},{}", cpus[0], cpus[1])).unwrap(),
            cpus
        );
    }

    #[test]
    fn the_default_pair_is_the_pipe_steps_even_on_smt_siblings() {
        // AMD's numbering: CPUs 2k and 2k + 1 are one core's two threads. The
        // pipe steps' pair is then two threads of one core, and so is the
        // latency lab's: the default does not look at the topology.
        let all: Vec<usize> = (0..8).collect();
        let smt =
            pair::Topology::parse((0..8).map(|cpu| (cpu, ["0-1", "2-3", "4-5", "6-7"][cpu / 2])));
        let pair = crate::process::cpu::default_pair(&all).unwrap();
        assert_eq!(pair, [0, 1]);
        assert_eq!(smt.placement(pair), pair::Placement::SmtSiblings);
        let allowed = crate::process::cpu::allowed_cpus();
        match crate::process::cpu::default_pair(&allowed) {
            Some(pair) => assert_eq!(default_cpus(), pair),
            None => assert_eq!(default_cpus(), [allowed[0]; 2]),
        }
    }

    #[test]
    fn the_window_pairs_every_fourth_timed_block_with_an_untimed_one() {
        let config = |round_trips| LatencyConfig {
            mechanism: LatencyMechanism::ShmRing,
            mode: Mode::Busy,
            size: 64,
            cpus: default_cpus(),
            round_trips,
        };
        let timed = |c: &LatencyConfig| -> u32 {
            c.blocks().iter().filter(|b| b.timed).map(|b| b.trips).sum()
        };
        for round_trips in [10, 64, 65, 200, 1000, 10_000] {
            let c = config(round_trips);
            let blocks = c.blocks();
            assert_eq!(timed(&c), round_trips);
            // Every untimed block sits beside its timed partner, of its length.
            for (i, b) in blocks.iter().enumerate().filter(|(_, b)| !b.timed) {
                let partner = if b.leads {
                    blocks[i + 1]
                } else {
                    blocks[i - 1]
                };
                assert!(partner.timed && partner.trips == b.trips);
            }
            assert!(blocks.iter().all(|b| (1..=BLOCK).contains(&b.trips)));
            let window: u64 = blocks.iter().map(|b| u64::from(b.trips) + 1).sum();
            assert_eq!(c.window(), window);
        }
        // 300 = 4 x 64 + 44: the first block is paired, the untimed one
        // after it; the fifth too, the untimed one first.
        let trips: Vec<(u32, bool, bool)> = config(300)
            .blocks()
            .iter()
            .map(|b| (b.trips, b.timed, b.leads))
            .collect();
        assert_eq!(
            trips,
            [
                (64, true, false),
                (64, false, false),
                (64, true, false),
                (64, true, false),
                (64, true, false),
                (44, false, true),
                (44, true, false)
            ]
        );
        // 10 000: 157 timed blocks, 40 of them paired, half each way.
        let blocks = config(10_000).blocks();
        assert_eq!(blocks.iter().filter(|b| !b.timed).count(), 40);
        assert_eq!(blocks.iter().filter(|b| b.leads).count(), 20);
    }

    #[test]
    fn warm_up_is_a_tenth_within_bounds() {
        let config = |round_trips| LatencyConfig {
            mechanism: LatencyMechanism::Pipe,
            mode: Mode::Blocking,
            size: 1,
            cpus: default_cpus(),
            round_trips,
        };
        assert_eq!(config(50).warm_up(), 10);
        assert_eq!(config(5000).warm_up(), 500);
        assert_eq!(config(1_000_000).warm_up(), 1000);
    }
}
