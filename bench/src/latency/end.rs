//! The two ends of a latency run (`latency-end SPEC`): ping sends, waits for the
//! echo and times the round trip; pong echoes. Each reads its own CPU time over
//! the timed window and answers with one outcome line on fd 3.

use std::os::fd::{FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Instant;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::channel::{Channel, Opening, Role};
use super::shared::{bucket_of, Region, BUCKETS};
use super::{CdfPoint, LatencyConfig};
use crate::process::launch::{self, CONTROL_FD, REPORT_FD};

/// What an end is told (as JSON on its command line).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EndSpec {
    /// Which end.
    pub role: Role,
    /// The configuration.
    pub config: LatencyConfig,
    /// The FIFOs (towards pong, towards ping), for the FIFO mechanism.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fifos: Option<[PathBuf; 2]>,
    /// The System V queue's id, for that mechanism.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub msg_queue: Option<i32>,
}

/// The ping end's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PingReport {
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
    /// One clock read, ns (see [`Clock::cost`]).
    pub clock_ns: f64,
    /// Mean round trip of the batch timed as a whole, ns.
    #[serde(default)]
    pub batch_mean_ns: f64,
    /// Which clock timed the round trips (`tsc` or `monotonic`).
    pub clock: String,
    /// The timed window's wall time, ms.
    pub elapsed_ms: f64,
    /// Its CPU use over the window.
    pub usage: Usage,
}

/// CPU time and sleeps over the timed window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// User + system CPU time, ns.
    pub cpu_ns: u64,
    /// Voluntary context switches (sleeps).
    pub sleeps: u64,
}

/// One end's outcome line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "lowercase")]
pub enum EndOutcome {
    /// The ping end finished.
    Ping(Box<PingReport>),
    /// The pong end finished.
    Pong(Usage),
    /// It failed: why.
    Failed {
        /// What happened.
        message: String,
    },
}

/// `latency-end SPEC`: runs one end and reports on fd 3.
pub fn end_main(spec: &str) -> ExitCode {
    let outcome = match serde_json::from_str::<EndSpec>(spec) {
        Ok(spec) => run_end(&spec).unwrap_or_else(|message| EndOutcome::Failed { message }),
        Err(e) => EndOutcome::Failed {
            message: format!("unreadable end specification: {e}"),
        },
    };
    let failed = matches!(outcome, EndOutcome::Failed { .. });
    if let EndOutcome::Failed { message } = &outcome {
        eprintln!("pipebench latency-end: error: {message}");
    }
    let _ = launch::send_outcome(REPORT_FD, &outcome);
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn usage_now() -> Usage {
    // SAFETY: getrusage fills the zeroed struct we own.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let ns = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1000;
    Usage {
        cpu_ns: ns(ru.ru_utime) + ns(ru.ru_stime),
        sleeps: ru.ru_nvcsw as u64,
    }
}

fn since(before: Usage) -> Usage {
    let now = usage_now();
    Usage {
        cpu_ns: now.cpu_ns.saturating_sub(before.cpu_ns),
        sleeps: now.sleeps.saturating_sub(before.sleeps),
    }
}

/// The clock that times round trips: the CPU's time-stamp counter where it
/// ticks at a constant rate through idle states (`constant_tsc` and
/// `nonstop_tsc`), scaled to ns against the monotonic clock; else the monotonic
/// clock itself. A TSC read costs a fraction of a `clock_gettime` in a guest,
/// where the round trips to time are a few hundred ns.
#[derive(Debug, Clone, Copy)]
pub enum Clock {
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
    pub fn choose() -> Clock {
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

    /// The reading that opens a timed interval, in the clock's own units: read
    /// right before the send.
    ///
    /// Plain RDTSC is enough here, though it waits for nothing. It reads the
    /// counter no later than it retires, and retirement is in program order,
    /// so every instruction of the send retires after it. Nothing the send
    /// does can reach the other end before it retires: a store (the ring's
    /// head, the futex word, the kernel's copy into a pipe or a socket) becomes
    /// visible to another CPU only once it has retired, a wakeup's IPI is an
    /// APIC write that is never made speculatively, and a system call's kernel
    /// work comes after SYSCALL in program order. So the message cannot leave
    /// before this reading. What RDTSC may do is read early, before older
    /// instructions finish: the previous round trip's bookkeeping (a histogram
    /// bucket and a check of the echo, both in cache), a few ns that can only
    /// lengthen the interval, never shorten it.
    #[inline(always)]
    pub fn start(&self) -> u64 {
        match self {
            #[cfg(target_arch = "x86_64")]
            Clock::Tsc { .. } => rdtsc(),
            #[cfg(not(target_arch = "x86_64"))]
            Clock::Tsc { .. } => 0,
            Clock::Monotonic(origin) => origin.elapsed().as_nanos() as u64,
        }
    }

    /// The reading that closes a timed interval: read right after the receive
    /// returns.
    ///
    /// This one must wait, so it is RDTSCP. The receive ends either in a
    /// system call's return or, busy on shared memory, in a loop of loads
    /// that exits when it sees the echo, followed by the loads that copy the
    /// message out. A plain RDTSC there could execute before those loads
    /// complete (out of order, or on the predicted exit of the loop before
    /// the load that decides it returns), reading up to a cache miss too
    /// early and shortening the very round trips that are shortest. RDTSCP
    /// reads only once every older instruction has executed, so the echo has
    /// been seen and copied; that it does not hold back younger instructions
    /// does not matter, since nothing after it is timed.
    #[inline(always)]
    pub fn end(&self) -> u64 {
        match self {
            #[cfg(target_arch = "x86_64")]
            Clock::Tsc { .. } => rdtscp(),
            #[cfg(not(target_arch = "x86_64"))]
            Clock::Tsc { .. } => 0,
            Clock::Monotonic(origin) => origin.elapsed().as_nanos() as u64,
        }
    }

    /// Nanoseconds between two readings.
    pub fn ns(&self, from: u64, to: u64) -> u64 {
        let ticks = to.saturating_sub(from);
        match self {
            Clock::Tsc { ns_per_tick } => (ticks as f64 * ns_per_tick) as u64,
            Clock::Monotonic(_) => ticks,
        }
    }

    /// `tsc` or `monotonic`.
    pub fn name(&self) -> &'static str {
        match self {
            Clock::Tsc { .. } => "tsc",
            Clock::Monotonic(_) => "monotonic",
        }
    }

    /// What one reading costs, ns, as the round trips read the clock: a
    /// [`Self::start`] and an [`Self::end`] back to back, many times, the
    /// mean of the pair halved. A timed round trip holds about one reading
    /// (the end of its opening read and the start of its closing one), so
    /// this is the figure every timed round trip carries.
    pub fn cost(&self) -> f64 {
        const PAIRS: u64 = 20_000;
        let start = Instant::now();
        let mut sink = 0u64;
        for _ in 0..PAIRS {
            sink = sink.wrapping_add(std::hint::black_box(self.start()));
            sink = sink.wrapping_add(std::hint::black_box(self.end()));
        }
        std::hint::black_box(sink);
        start.elapsed().as_nanos() as f64 / (2 * PAIRS) as f64
    }
}

/// RDTSC: the counter, read without waiting (see [`Clock::start`]).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn rdtsc() -> u64 {
    // SAFETY: rdtsc is present on every x86_64 CPU (and constant and non-stop
    // here, checked in /proc/cpuinfo before the TSC is chosen); it only reads
    // the counter.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// RDTSCP: the counter, read once every earlier instruction has executed (see
/// [`Clock::end`]).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn rdtscp() -> u64 {
    let mut aux = 0u32;
    // SAFETY: rdtscp is present (checked in /proc/cpuinfo before it is chosen)
    // and only reads the counter.
    unsafe { core::arch::x86_64::__rdtscp(&mut aux) }
}

fn run_end(spec: &EndSpec) -> Result<EndOutcome, String> {
    let config = &spec.config;
    let cpu = match spec.role {
        Role::Ping => config.cpus[0],
        Role::Pong => config.cpus[1],
    };
    crate::process::cpu::pin_to(cpu).map_err(|e| e.to_string())?;
    let size = config.size as usize;
    // SAFETY: the launcher placed the shared region at CONTROL_FD for us.
    let region_fd = unsafe { OwnedFd::from_raw_fd(CONTROL_FD) };
    let region = Region::attach(region_fd, size).map_err(|e| format!("shared region: {e}"))?;
    let opening = Opening {
        mechanism: config.mechanism,
        mode: config.mode,
        role: spec.role,
        size,
        fifos: spec.fifos.as_ref(),
        msg_queue: spec.msg_queue,
        region: &region,
        round_trips_batch: config.batch() as u64,
    };
    let mut channel = Channel::open(&opening)?;
    // This end holds whatever was named: the harness may remove the names.
    region.header().holding.0.fetch_add(1, Ordering::AcqRel);
    let warm_up = config.warm_up() as u64;
    let timed = warm_up + config.round_trips as u64;
    // The batch follows the timed round trips (see LatencyConfig::batch).
    let total = timed + config.batch() as u64;
    let mut buf = vec![0u8; size];
    match spec.role {
        Role::Pong => {
            let mut before = usage_now();
            let mut usage = Usage::default();
            for i in 0..total {
                if i == warm_up {
                    before = usage_now();
                }
                if i == timed {
                    // CPU per round trip is over the timed ones, as at ping.
                    usage = since(before);
                }
                channel.recv(&opening, &mut buf)?;
                channel.send(&opening, &buf)?;
            }
            Ok(EndOutcome::Pong(usage))
        }
        Role::Ping => ping(&opening, &mut channel, &region, warm_up, timed, &mut buf),
    }
}

fn ping(
    opening: &Opening<'_>,
    channel: &mut Channel,
    region: &Region,
    warm_up: u64,
    total: u64,
    buf: &mut [u8],
) -> Result<EndOutcome, String> {
    let clock = Clock::choose();
    let clock_ns = clock.cost();
    // 1 ns to an hour, three significant digits.
    let mut histogram =
        Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).map_err(|e| e.to_string())?;
    let mut msg = vec![0u8; buf.len()];
    let mut local = [0u64; BUCKETS];
    let header = region.header();
    let mut before = usage_now();
    let mut window = Instant::now();
    for i in 0..total {
        if i == warm_up {
            before = usage_now();
            window = Instant::now();
        }
        // Each message differs, and the echo must carry it back.
        let mark = (i % 251) as u8;
        msg[0] = mark;
        let last = msg.len() - 1;
        msg[last] = mark;
        let t0 = clock.start();
        channel.send(opening, &msg)?;
        channel.recv(opening, buf)?;
        let t1 = clock.end();
        if buf[0] != mark || buf[last] != mark {
            return Err(format!("round trip {i} came back with other bytes"));
        }
        if i >= warm_up {
            let ns = clock.ns(t0, t1);
            histogram.saturating_record(ns.max(1));
            local[bucket_of(ns)] += 1;
            let done = i - warm_up + 1;
            // Publishing costs a few stores; every 64 round trips it is noise.
            if done.is_multiple_of(64) || i + 1 == total {
                for (shared, count) in header.buckets.iter().zip(local.iter()) {
                    shared.store(*count, Ordering::Relaxed);
                }
                header.done.0.store(done, Ordering::Relaxed);
            }
        }
    }
    let elapsed_ms = window.elapsed().as_secs_f64() * 1000.0;
    let usage = since(before);
    // The batch: the same round trips, timed only at their two ends.
    let batch = opening.round_trips_batch;
    let b0 = clock.start();
    for i in 0..batch {
        let mark = (i % 251) as u8;
        msg[0] = mark;
        channel.send(opening, &msg)?;
        channel.recv(opening, buf)?;
        if buf[0] != mark {
            return Err(format!("batch round trip {i} came back with other bytes"));
        }
    }
    let batch_mean_ns = clock.ns(b0, clock.end()) as f64 / batch.max(1) as f64;
    let at = |q: f64| histogram.value_at_quantile(q);
    let cdf = [
        0.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99, 100.0,
    ]
    .into_iter()
    .map(|percentile| CdfPoint {
        percentile,
        ns: at(percentile / 100.0),
    })
    .collect();
    Ok(EndOutcome::Ping(Box::new(PingReport {
        count: histogram.len(),
        min: histogram.min(),
        mean: histogram.mean(),
        p50: at(0.5),
        p90: at(0.9),
        p99: at(0.99),
        p999: at(0.999),
        max: histogram.max(),
        cdf,
        clock_ns,
        batch_mean_ns,
        clock: clock.name().to_string(),
        elapsed_ms,
        usage,
    })))
}
