//! The two ends of a latency run (`latency-end SPEC`): ping sends, waits for the
//! echo and times the round trip; pong echoes. Each reads its own CPU time over
//! the timed window and answers with one outcome line on fd 3.

use std::collections::BTreeMap;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Instant;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::channel::{calls_made, calls_since, Channel, LatencyRole, Opening, CALL_KINDS};
use super::shared::{bucket_of, LatencyRegion, BUCKETS};
use super::{Block, CdfPoint, LatencyConfig};
use crate::process::counts::{sched_migrations, Count, Counted, EndCounts, Missing, Unavailable};
use crate::process::launch::{self, CONTROL_FD, REPORT_FD};

/// What an end is told (as JSON on its command line).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct LatencyEndSpec {
    /// Which end.
    pub role: LatencyRole,
    /// The configuration.
    pub config: LatencyConfig,
    /// The FIFOs (towards pong, towards ping), for the FIFO mechanism.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fifos: Option<[PathBuf; 2]>,
    /// The System V queue's id, for that mechanism.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub msg_queue: Option<i32>,
    /// This end's io_uring's parameters as the kernel filled them in (the
    /// bytes of `io_uring_params`), for the message-ring mechanism: the ring
    /// itself arrives as fd 0, made by the harness, and the end maps it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ring_params: Option<Vec<u8>>,
}

/// The ping end's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PingReport {
    /// Round trips timed.
    pub count: u64,
    /// Fastest, ns.
    pub min: u64,
    /// Mean, ns.
    pub mean: f64,
    /// Percentiles and slowest, ns.
    pub p50: u64,
    /// 90th.
    pub p90: u64,
    /// 99th.
    pub p99: u64,
    /// 99.9th.
    pub p999: u64,
    /// Slowest.
    pub max: u64,
    /// The distribution for a CDF.
    pub cdf: Vec<CdfPoint>,
    /// What timing adds to a round trip, ns (see [`super::LatencyResult::clock_ns`]).
    pub clock_ns: f64,
    /// One clock read back to back, ns (see [`Clock::cost`]).
    #[serde(default)]
    pub clock_read_ns: f64,
    /// Mean round trip of the untimed blocks, ns.
    #[serde(default)]
    pub batch_mean_ns: f64,
    /// Which clock timed the round trips (`tsc` or `monotonic`).
    pub clock: String,
    /// The window's wall time (timed and untimed blocks), ms.
    pub elapsed_ms: f64,
    /// Its CPU use over the window.
    pub usage: LatencyEndUsage,
}

/// CPU time, switches, faults, migrations and calls over the timed window:
/// what the end reads of itself at the window's two ends (getrusage,
/// `/proc/self/sched`, its own tally of calls), nothing on the round trip's
/// path.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyEndUsage {
    /// User + system CPU time, ns.
    pub cpu_ns: u64,
    /// Voluntary context switches (sleeps).
    pub sleeps: u64,
    /// Involuntary context switches (preemptions).
    #[serde(default)]
    pub preempted: u64,
    /// Page faults, minor and major.
    #[serde(default)]
    pub faults: u64,
    /// Page faults that needed I/O.
    #[serde(default)]
    pub major_faults: u64,
    /// Moves to another CPU (`se.nr_migrations`), where the kernel reports it.
    #[serde(default)]
    pub migrations: Option<u64>,
    /// The calls it made to send and receive, by kind.
    #[serde(default)]
    pub calls: BTreeMap<String, u64>,
}

impl LatencyEndUsage {
    /// The window's counts in the shape every result's counts take, and what
    /// is missing from them: no perf event is opened in a latency end, since
    /// a counter on the task is switched out and in at each of its sleeps and
    /// a tracepoint fires on the round trip's own path, so either would be in
    /// the figure it measures.
    pub fn counted(&self) -> Counted {
        let mut missing = vec![Missing::new(
            Count::TRACED
                .into_iter()
                .chain([Count::SyscallsTraced])
                .collect(),
            Unavailable::CostsTheRoundTrip,
        )];
        if self.migrations.is_none() {
            missing.push(Missing::new(
                vec![Count::CpuMigrations],
                Unavailable::NotReported,
            ));
        }
        Counted {
            counts: EndCounts {
                syscalls: self.calls.clone(),
                context_switches: self.sleeps + self.preempted,
                voluntary_switches: self.sleeps,
                involuntary_switches: self.preempted,
                page_faults: self.faults,
                major_faults: self.major_faults,
                cpu_migrations: self.migrations,
                ..EndCounts::default()
            },
            missing,
        }
    }
}

/// One end's outcome line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "lowercase")]
pub(crate) enum LatencyEndOutcome {
    /// The ping end finished.
    Ping(Box<PingReport>),
    /// The pong end finished.
    Pong(LatencyEndUsage),
    /// It failed: why.
    Failed {
        /// What happened.
        message: String,
    },
}

/// `latency-end SPEC`: runs one end and reports on fd 3.
pub(crate) fn end_main(spec: &str) -> ExitCode {
    let outcome = match serde_json::from_str::<LatencyEndSpec>(spec) {
        Ok(spec) => run_end(&spec).unwrap_or_else(|message| LatencyEndOutcome::Failed { message }),
        Err(e) => LatencyEndOutcome::Failed {
            message: format!("unreadable end specification: {e}"),
        },
    };
    let failed = matches!(outcome, LatencyEndOutcome::Failed { .. });
    if let LatencyEndOutcome::Failed { message } = &outcome {
        eprintln!("pipebench latency-end: error: {message}");
    }
    let _ = launch::send_outcome(REPORT_FD, &outcome);
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn usage_now() -> LatencyEndUsage {
    // SAFETY: getrusage fills the zeroed struct we own.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let ns = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1000;
    LatencyEndUsage {
        cpu_ns: ns(ru.ru_utime) + ns(ru.ru_stime),
        sleeps: ru.ru_nvcsw as u64,
        preempted: ru.ru_nivcsw as u64,
        faults: (ru.ru_minflt + ru.ru_majflt) as u64,
        major_faults: ru.ru_majflt as u64,
        migrations: sched_migrations(),
        calls: BTreeMap::new(),
    }
}

/// A reading at the start of the window: the usage and the call tally.
struct Mark {
    usage: LatencyEndUsage,
    calls: [u64; CALL_KINDS],
}

fn mark() -> Mark {
    // The tally first: the reading of /proc makes calls of its own, none of
    // them counted, but the order keeps the two windows the same.
    let calls = calls_made();
    Mark {
        usage: usage_now(),
        calls,
    }
}

fn since(before: Mark) -> LatencyEndUsage {
    let calls = calls_since(before.calls);
    let now = usage_now();
    let before = before.usage;
    LatencyEndUsage {
        cpu_ns: now.cpu_ns.saturating_sub(before.cpu_ns),
        sleeps: now.sleeps.saturating_sub(before.sleeps),
        preempted: now.preempted.saturating_sub(before.preempted),
        faults: now.faults.saturating_sub(before.faults),
        major_faults: now.major_faults.saturating_sub(before.major_faults),
        migrations: match (now.migrations, before.migrations) {
            (Some(now), Some(before)) => Some(now.saturating_sub(before)),
            _ => None,
        },
        calls,
    }
}

/// The clock that times round trips: the CPU's time-stamp counter where it
/// ticks at a constant rate through idle states (`constant_tsc` and
/// `nonstop_tsc`), scaled to ns against the monotonic clock; else the monotonic
/// clock itself. A TSC read costs a fraction of a `clock_gettime` in a guest,
/// where the round trips to time are a few hundred ns.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Clock {
    /// The time-stamp counter, `ns_per_tick` measured at start.
    Tsc {
        /// Nanoseconds per tick.
        ns_per_tick: f64,
    },
    /// `clock_gettime(CLOCK_MONOTONIC)`.
    Monotonic(Instant),
}

impl Clock {
    /// The best clock here.
    pub(crate) fn choose() -> Clock {
        #[cfg(target_arch = "x86_64")]
        {
            let flags = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
            let has = |flag: &str| flags.split_whitespace().any(|w| w == flag);
            if has("constant_tsc") && has("nonstop_tsc") && has("rdtscp") {
                // 20 ms against the monotonic clock: a scale good to parts per
                // million.
                let (t0, c0) = (Instant::now(), rdtscp());
                while t0.elapsed() < std::time::Duration::from_millis(20) {
                    std::hint::spin_loop();
                }
                let (dt, dc) = (t0.elapsed().as_nanos() as f64, rdtscp().wrapping_sub(c0));
                if dc > 0 {
                    return Clock::Tsc {
                        ns_per_tick: dt / dc as f64,
                    };
                }
            }
        }
        Clock::Monotonic(Instant::now())
    }

    /// One reading, in the clock's own units, taken right after a send is
    /// issued. Round trips are chained: round trip i runs from the reading
    /// after send i to the reading after send i + 1 (the echo of i received
    /// and checked, i + 1 sent), so each round trip holds exactly one reading,
    /// and that reading is issued while the message is on its way to the other
    /// end, where the CPU has nothing to do but wait.
    ///
    /// It is RDTSCP, which reads only once every older instruction has
    /// executed. Each reading closes a round trip, and the receive before it
    /// ends in a system call's return or, busy on shared memory, in a loop of
    /// loads that exits when it sees the echo: a plain RDTSC could execute
    /// before those loads complete (out of order, on the predicted exit of the
    /// loop), reading up to a cache miss early. RDTSCP does not hold back the
    /// younger instructions, so the spin on the next echo starts at once and
    /// the wait for the read overlaps the wait for the message.
    #[inline(always)]
    pub(crate) fn read(&self) -> u64 {
        match self {
            #[cfg(target_arch = "x86_64")]
            Clock::Tsc { .. } => rdtscp(),
            #[cfg(not(target_arch = "x86_64"))]
            Clock::Tsc { .. } => 0,
            Clock::Monotonic(origin) => origin.elapsed().as_nanos() as u64,
        }
    }

    /// Nanoseconds between two readings.
    pub(crate) fn ns(&self, from: u64, to: u64) -> u64 {
        let ticks = to.saturating_sub(from);
        match self {
            Clock::Tsc { ns_per_tick } => (ticks as f64 * ns_per_tick) as u64,
            Clock::Monotonic(_) => ticks,
        }
    }

    /// `tsc` or `monotonic`.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Clock::Tsc { .. } => "tsc",
            Clock::Monotonic(_) => "monotonic",
        }
    }

    /// What one reading costs when nothing hides it, ns: many readings back
    /// to back, the mean. A round trip's reading overlaps its wait, so what
    /// it really adds is measured apart ([`super::LatencyResult::clock_ns`]);
    /// this is the figure it would add if nothing overlapped.
    pub(crate) fn cost(&self) -> f64 {
        const READS: u64 = 40_000;
        let start = Instant::now();
        let mut sink = 0u64;
        for _ in 0..READS {
            sink = sink.wrapping_add(std::hint::black_box(self.read()));
        }
        std::hint::black_box(sink);
        start.elapsed().as_nanos() as f64 / READS as f64
    }
}

/// RDTSCP: the counter, read once every earlier instruction has executed (see
/// [`Clock::read`]).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn rdtscp() -> u64 {
    let mut aux = 0u32;
    // SAFETY: rdtscp is present (checked in /proc/cpuinfo before it is chosen)
    // and only reads the counter.
    unsafe { core::arch::x86_64::__rdtscp(&mut aux) }
}

fn run_end(spec: &LatencyEndSpec) -> Result<LatencyEndOutcome, String> {
    let config = &spec.config;
    let cpu = match spec.role {
        LatencyRole::Ping => config.cpus[0],
        LatencyRole::Pong => config.cpus[1],
    };
    crate::process::cpu::pin_to(cpu).map_err(|e| e.to_string())?;
    let size = config.size as usize;
    // SAFETY: the launcher placed the shared region at CONTROL_FD for us.
    let region_fd = unsafe { OwnedFd::from_raw_fd(CONTROL_FD) };
    let region =
        LatencyRegion::attach(region_fd, size).map_err(|e| format!("shared region: {e}"))?;
    let opening = Opening {
        mechanism: config.mechanism,
        mode: config.mode,
        role: spec.role,
        size,
        fifos: spec.fifos.as_ref(),
        msg_queue: spec.msg_queue,
        ring_params: spec.ring_params.as_deref(),
        region: &region,
    };
    let mut channel = Channel::open(&opening)?;
    // This end holds whatever was named: the harness may remove the names.
    region.header().holding.0.fetch_add(1, Ordering::AcqRel);
    let warm_up = config.warm_up() as u64;
    let mut buf = vec![0u8; size];
    match spec.role {
        LatencyRole::Pong => {
            // Pong cannot tell timed round trips from untimed ones, nor needs
            // to: its CPU is over the whole window, as ping's is.
            let total = warm_up + config.window();
            let mut before = mark();
            for i in 0..total {
                if i == warm_up {
                    before = mark();
                }
                channel.recv(&opening, &mut buf)?;
                channel.send(&opening, &buf)?;
            }
            Ok(LatencyEndOutcome::Pong(since(before)))
        }
        LatencyRole::Ping => ping(&opening, &mut channel, &region, config, &mut buf),
    }
}

/// The ping end's messages: each differs from the last, and the echo must
/// carry it back (first and last byte checked).
struct EndMessages {
    msg: Vec<u8>,
    sent: u64,
}

impl EndMessages {
    /// Marks and sends the next message.
    #[inline(always)]
    fn send(&mut self, channel: &mut Channel, opening: &Opening<'_>) -> Result<(), String> {
        let mark = (self.sent % 251) as u8;
        let last = self.msg.len() - 1;
        self.msg[0] = mark;
        self.msg[last] = mark;
        self.sent += 1;
        channel.send(opening, &self.msg)
    }

    /// Receives the echo of the last message sent and checks it.
    #[inline(always)]
    fn echo(
        &self,
        channel: &mut Channel,
        opening: &Opening<'_>,
        buf: &mut [u8],
    ) -> Result<(), String> {
        channel.recv(opening, buf)?;
        let mark = ((self.sent - 1) % 251) as u8;
        if buf[0] != mark || buf[buf.len() - 1] != mark {
            return Err(format!(
                "round trip {} came back with other bytes",
                self.sent - 1
            ));
        }
        Ok(())
    }

    /// `trips` round trips, chained: `stamps[j]` is read right after send j,
    /// so round trip j is `stamps[j + 1] - stamps[j]`; one more round trip
    /// closes the block (its echo received, not timed). Timed, every reading
    /// is kept; untimed, only the first and the last are taken, the loop
    /// otherwise the same.
    #[inline(always)]
    fn block<const TIMED: bool>(
        &mut self,
        channel: &mut Channel,
        opening: &Opening<'_>,
        clock: &Clock,
        buf: &mut [u8],
        stamps: &mut [u64],
        trips: usize,
    ) -> Result<(u64, u64), String> {
        self.send(channel, opening)?;
        let first = clock.read();
        stamps[0] = first;
        for stamp in &mut stamps[1..=trips] {
            self.echo(channel, opening, buf)?;
            self.send(channel, opening)?;
            if TIMED {
                *stamp = clock.read();
            }
        }
        let last = if TIMED { stamps[trips] } else { clock.read() };
        self.echo(channel, opening, buf)?;
        Ok((first, last))
    }
}

/// What reading the clock adds to a round trip: the median over the pairs of
/// blocks of the timed block's mean less the untimed one's beside it (`means`
/// holds each block's mean round trip, ns).
fn clock_overhead_ns(blocks: &[Block], means: &[f64]) -> f64 {
    let mut added: Vec<f64> = blocks
        .iter()
        .enumerate()
        .filter(|(_, b)| !b.timed)
        .map(|(i, b)| {
            let partner = if b.leads { i + 1 } else { i - 1 };
            means[partner] - means[i]
        })
        .collect();
    added.sort_by(f64::total_cmp);
    match added.len() {
        0 => 0.0,
        n if n % 2 == 1 => added[n / 2],
        n => (added[n / 2 - 1] + added[n / 2]) / 2.0,
    }
}

/// The round trips at the percentiles the chart draws.
fn cdf(histogram: &Histogram<u64>) -> Vec<CdfPoint> {
    [
        0.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99, 100.0,
    ]
    .into_iter()
    .map(|percentile| CdfPoint {
        percentile,
        ns: histogram.value_at_quantile(percentile / 100.0),
    })
    .collect()
}

fn ping(
    opening: &Opening<'_>,
    channel: &mut Channel,
    region: &LatencyRegion,
    config: &LatencyConfig,
    buf: &mut [u8],
) -> Result<LatencyEndOutcome, String> {
    let clock = Clock::choose();
    let clock_read_ns = clock.cost();
    // 1 ns to an hour, three significant digits.
    let mut histogram =
        Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).map_err(|e| e.to_string())?;
    let mut messages = EndMessages {
        msg: vec![0u8; buf.len()],
        sent: 0,
    };
    for _ in 0..config.warm_up() {
        messages.send(channel, opening)?;
        messages.echo(channel, opening, buf)?;
    }
    let blocks = config.blocks();
    // Every reading of a block is kept raw here and turned into round trips
    // only once the block is done, so the loop holds a read and a store.
    let mut stamps = vec![0u64; super::BLOCK as usize + 1];
    let mut local = [0u64; BUCKETS];
    let header = region.header();
    let (mut untimed_ns, mut untimed_trips) = (0u64, 0u64);
    // Each block's mean round trip, ns.
    let mut means = Vec::with_capacity(blocks.len());
    let before = mark();
    let window = Instant::now();
    for block in &blocks {
        let trips = block.trips as usize;
        let (first, last) = if block.timed {
            messages.block::<true>(channel, opening, &clock, buf, &mut stamps, trips)?
        } else {
            messages.block::<false>(channel, opening, &clock, buf, &mut stamps, trips)?
        };
        means.push(clock.ns(first, last) as f64 / trips as f64);
        if !block.timed {
            untimed_ns += clock.ns(first, last);
            untimed_trips += trips as u64;
            continue;
        }
        for pair in stamps[..=trips].windows(2) {
            let ns = clock.ns(pair[0], pair[1]);
            histogram.saturating_record(ns.max(1));
            local[bucket_of(ns)] += 1;
        }
        // Published once a block (64 round trips): a few stores, outside
        // every timed interval.
        for (shared, count) in header.buckets.iter().zip(local.iter()) {
            shared.store(*count, Ordering::Relaxed);
        }
        header.done.0.store(histogram.len(), Ordering::Relaxed);
    }
    let elapsed_ms = window.elapsed().as_secs_f64() * 1000.0;
    let usage = since(before);
    let clock_ns = clock_overhead_ns(&blocks, &means);
    let at = |q: f64| histogram.value_at_quantile(q);
    Ok(LatencyEndOutcome::Ping(Box::new(PingReport {
        count: histogram.len(),
        min: histogram.min(),
        mean: histogram.mean(),
        p50: at(0.5),
        p90: at(0.9),
        p99: at(0.99),
        p999: at(0.999),
        max: histogram.max(),
        cdf: cdf(&histogram),
        clock_ns,
        clock_read_ns,
        batch_mean_ns: untimed_ns as f64 / untimed_trips.max(1) as f64,
        clock: clock.name().to_string(),
        elapsed_ms,
        usage,
    })))
}
