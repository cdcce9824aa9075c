//! What one wakeup costs here: a one-byte ping-pong over two pipes between two
//! processes pinned to two CPUs, first blocking (each end sleeps in `read` and is
//! woken by the other's `write`), then busy-polling (O_NONBLOCK, and each end spins
//! on EAGAIN, so nobody sleeps). The blocking round trip holds two sleeps and two
//! wakeups; the busy one only the cache lines travelling between the CPUs. Their
//! difference is what a blocking step pays per hand-over, and what `busy-loop`
//! saves.
//!
//! The second process is a `fork` of the caller that only makes raw system calls
//! until it exits, so it is safe to start from a multi-threaded program.

use std::os::fd::{AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

use rustix::pipe::{pipe_with, PipeFlags};
use serde::{Deserialize, Serialize};

/// Round trips timed per mode unless asked otherwise.
pub const DEFAULT_ROUND_TRIPS: u32 = 5_000;

/// Round trips before timing starts (the caches and the scheduler settle).
const WARM_UP: u32 = 200;

/// No mode may take longer than this, whatever the machine.
const MODE_TIMEOUT: Duration = Duration::from_secs(20);

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
    /// A system call failed.
    #[error("the wakeup measurement failed: {0}")]
    Io(#[from] std::io::Error),
    /// The other process stopped answering.
    #[error("the ping-pong partner stopped answering after {0:?}")]
    Timeout(Duration),
}

/// Measures both modes with the caller on `cpus[0]` and its partner on `cpus[1]`
/// (by default the first two CPUs this process may use), `round_trips` each.
pub fn measure(cpus: Option<[usize; 2]>, round_trips: u32) -> Result<WakeupFigures, WakeupError> {
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
    // This thread moves to cpus[0] for the measurement and back afterwards.
    let before = rustix::thread::sched_getaffinity(None).map_err(std::io::Error::from)?;
    let mut pinned = rustix::thread::CpuSet::new();
    pinned.set(cpus[0]);
    rustix::thread::sched_setaffinity(None, &pinned).map_err(std::io::Error::from)?;
    let result = (|| {
        let blocking = ping_pong(cpus[1], round_trips, false)?;
        let busy = ping_pong(cpus[1], round_trips, true)?;
        Ok(WakeupFigures {
            blocking_us: blocking,
            busy_us: busy,
            round_trips,
            cpus,
        })
    })();
    let _ = rustix::thread::sched_setaffinity(None, &before);
    result
}

/// The partner: echo every byte back until end of file. Only raw system calls, no
/// allocation: it runs in a fork of a possibly multi-threaded process. It first
/// closes its copies of the caller's ends (`theirs`), or it would never see the
/// end of file that tells it to leave.
fn partner(cpu: usize, input: i32, output: i32, theirs: [i32; 2]) -> ! {
    // SAFETY: only async-signal-safe system calls on descriptors this process owns,
    // and _exit, which ends it without running the parent's destructors.
    unsafe {
        for fd in theirs {
            libc::close(fd);
        }
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        let mut byte = 0u8;
        loop {
            let n = libc::read(input, (&mut byte as *mut u8).cast(), 1);
            if n == 0 {
                libc::_exit(0);
            }
            if n < 0 {
                if *libc::__errno_location() == libc::EAGAIN {
                    continue;
                }
                libc::_exit(1);
            }
            while libc::write(output, (&byte as *const u8).cast(), 1) < 0 {
                if *libc::__errno_location() != libc::EAGAIN {
                    libc::_exit(1);
                }
            }
        }
    }
}

/// One mode: the median round trip in microseconds.
fn ping_pong(partner_cpu: usize, round_trips: u32, busy: bool) -> Result<f64, WakeupError> {
    let flags = PipeFlags::CLOEXEC
        | if busy {
            PipeFlags::NONBLOCK
        } else {
            PipeFlags::empty()
        };
    let (to_read, to_write) = pipe_with(flags).map_err(std::io::Error::from)?;
    let (from_read, from_write) = pipe_with(flags).map_err(std::io::Error::from)?;
    let mut times = Vec::with_capacity(round_trips as usize);
    let (input, output) = (to_read.as_raw_fd(), from_write.as_raw_fd());
    let theirs = [to_write.as_raw_fd(), from_read.as_raw_fd()];
    // SAFETY: the child only runs `partner`, which makes raw system calls and exits.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    if pid == 0 {
        partner(partner_cpu, input, output, theirs);
    }
    drop((to_read, from_write));
    let outcome = exchange(&to_write, &from_read, round_trips, &mut times);
    // End of file tells the partner to leave; a kill covers a stuck one.
    drop(to_write);
    if outcome.is_err() {
        // SAFETY: pid is our own child, not yet reaped.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    // A partner that does not leave within a second is killed: a measurement must
    // never hang its caller (a run thread of the server, say).
    let deadline = Instant::now() + Duration::from_secs(1);
    let mut status = 0;
    // SAFETY: waits for and reaps our own child only.
    while unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } == 0 {
        if Instant::now() > deadline {
            // SAFETY: pid is our own child, not yet reaped.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            return Err(WakeupError::Timeout(Duration::from_secs(1)));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    outcome?;
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

fn exchange(
    to: &OwnedFd,
    from: &OwnedFd,
    round_trips: u32,
    times: &mut Vec<f64>,
) -> Result<(), WakeupError> {
    let started = Instant::now();
    let mut byte = [1u8];
    for i in 0..WARM_UP + round_trips {
        let t0 = Instant::now();
        loop {
            match rustix::io::write(to, &byte) {
                Ok(_) => break,
                Err(rustix::io::Errno::AGAIN) => continue,
                Err(e) => return Err(std::io::Error::from(e).into()),
            }
        }
        let mut spins = 0u64;
        loop {
            match rustix::io::read(from, &mut byte) {
                Ok(1) => break,
                Ok(_) => return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into()),
                Err(rustix::io::Errno::AGAIN) => {
                    spins += 1;
                    if spins.is_multiple_of(1 << 20) && started.elapsed() > MODE_TIMEOUT {
                        return Err(WakeupError::Timeout(started.elapsed()));
                    }
                }
                Err(e) => return Err(std::io::Error::from(e).into()),
            }
        }
        if i >= WARM_UP {
            times.push(t0.elapsed().as_secs_f64() * 1e6);
        }
        if started.elapsed() > MODE_TIMEOUT {
            return Err(WakeupError::Timeout(started.elapsed()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_requests_are_refused_before_anything_runs() {
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
