//! Probes of the pipe itself: timestamps, spare pages, wakeups of a writer
//! that waits on a full pipe.

use std::fs::OpenOptions;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::sync::mpsc;
use std::time::Duration;

use rustix::fs::{fstat, Timespec};
use rustix::pipe::{fcntl_setpipe_size, pipe};

use super::{Answer, Outcome};
use perf_event::events::Tracepoint;
use perf_event::{Builder, Counter};

use crate::process::counts::perf_paranoid;
use crate::process::rundir::{Base, RunDir};

/// Long enough for the kernel's coarse clock (a few ms a tick) to move.
const CLOCK_STEP: Duration = Duration::from_millis(25);

fn mtime(fd: impl AsFd) -> Result<Timespec, String> {
    let stat = fstat(fd).map_err(|e| format!("fstat: {e}"))?;
    Ok(Timespec {
        tv_sec: stat.st_mtime,
        tv_nsec: stat.st_mtime_nsec as _,
    })
}

/// Writes a byte to `write` and reads it back from `read`, `CLOCK_STEP`
/// apart, and says whether the write end's modification time moved.
fn write_moves_mtime(read: impl AsFd, write: impl AsFd) -> Result<bool, String> {
    let mut byte = [0u8; 1];
    rustix::io::write(&write, b"x").map_err(|e| format!("write: {e}"))?;
    rustix::io::read(&read, &mut byte).map_err(|e| format!("read: {e}"))?;
    let before = mtime(&write)?;
    std::thread::sleep(CLOCK_STEP);
    rustix::io::write(&write, b"y").map_err(|e| format!("write: {e}"))?;
    rustix::io::read(&read, &mut byte).map_err(|e| format!("read: {e}"))?;
    Ok(mtime(&write)? != before)
}

/// Does a write update an anonymous pipe's timestamps? A FIFO in a private
/// run folder is asked the same, so a filesystem whose clock does not move is
/// not read as a kernel change.
pub(crate) fn timestamps() -> Outcome {
    let (read, write) = pipe().map_err(|e| format!("pipe: {e}"))?;
    let anon = write_moves_mtime(&read, &write)?;
    let base = Base::runtime().map_err(|e| format!("a private folder for the FIFO: {e}"))?;
    let dir = RunDir::create(&base).map_err(|e| format!("a private folder for the FIFO: {e}"))?;
    let path = dir
        .create_fifo("probe")
        .map_err(|e| format!("mkfifo: {e}"))?;
    // Read end first and non-blocking, so opening cannot wait for a writer.
    let fifo_read: OwnedFd = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(&path)
        .map_err(|e| format!("open FIFO: {e}"))?
        .into();
    let fifo_write: OwnedFd = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .map_err(|e| format!("open FIFO: {e}"))?
        .into();
    let fifo = write_moves_mtime(&fifo_read, &fifo_write)?;
    let evidence = format!(
        "a byte written {} ms apart: the anonymous pipe's mtime {}, a FIFO's {}",
        CLOCK_STEP.as_millis(),
        if anon { "moved" } else { "stayed" },
        if fifo { "moved" } else { "stayed" }
    );
    match (anon, fifo) {
        (true, _) => Ok((Answer::TimestampsUpdated, evidence)),
        (false, true) => Ok((Answer::TimestampsKept, evidence)),
        (false, false) => Err(format!(
            "{evidence}: neither clock moved, so the probe cannot tell a kept timestamp from a still clock"
        )),
    }
}

/// A counter of `kmem:mm_page_alloc` on this thread, kernel included.
fn page_alloc_counter() -> Result<Counter, String> {
    let id_file = ["/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events"]
        .iter()
        .map(|root| format!("{root}/kmem/mm_page_alloc/id"))
        .find(|p| std::path::Path::new(p).exists())
        .ok_or("tracefs is not mounted, so the page allocator's tracepoint cannot be named: `mount -t tracefs nodev /sys/kernel/tracing` (as root)")?;
    let id: u64 = std::fs::read_to_string(&id_file)
        .map_err(|e| format!("{id_file}: {e} (reading tracepoint ids needs root)"))?
        .trim()
        .parse()
        .map_err(|_| format!("{id_file} holds no tracepoint id"))?;
    Builder::new(Tracepoint::with_id(id))
        .observe_self()
        .any_cpu()
        .include_kernel()
        .build()
        .map_err(|e| {
            let paranoid = perf_paranoid().map_or("unreadable".into(), |p| p.to_string());
            format!("perf refused the page allocator's tracepoint ({e}); perf_event_paranoid is {paranoid}: kernel tracepoints need root, CAP_PERFMON or paranoid -1")
        })
}

/// Pages written and read back per cycle by [`spare_pages`]: more than any
/// kernel keeps spare, so the allocations per cycle say how many it keeps.
const CYCLE_PAGES: u64 = 4;
const CYCLES: u64 = 1000;

/// How many freed pages the pipe keeps for its next write: a cycle writes
/// [`CYCLE_PAGES`] whole pages and reads them all back; every page the read
/// frees beyond the spares goes back to the allocator, so each cycle asks it
/// for `CYCLE_PAGES - spares` pages (counted by `kmem:mm_page_alloc` on this
/// thread, which needs root, `CAP_PERFMON` or paranoid -1, and tracefs).
pub(crate) fn spare_pages() -> Outcome {
    let page = rustix::param::page_size() as u64;
    let (read, write) = pipe().map_err(|e| format!("pipe: {e}"))?;
    let bytes = vec![7u8; (CYCLE_PAGES * page) as usize];
    let mut back = vec![0u8; bytes.len()];
    let cycle = |back: &mut [u8]| -> Result<(), String> {
        let mut sent = 0;
        while sent < bytes.len() {
            sent += rustix::io::write(&write, &bytes[sent..]).map_err(|e| format!("write: {e}"))?;
        }
        let mut got = 0;
        while got < back.len() {
            got += rustix::io::read(&read, &mut back[got..]).map_err(|e| format!("read: {e}"))?;
        }
        Ok(())
    };
    // Warm up: the first cycles fill the spares and the buffers' own pages.
    for _ in 0..8 {
        cycle(&mut back)?;
    }
    let mut counter = page_alloc_counter()?;
    counter.reset().map_err(|e| format!("perf reset: {e}"))?;
    counter.enable().map_err(|e| format!("perf enable: {e}"))?;
    for _ in 0..CYCLES {
        cycle(&mut back)?;
    }
    counter
        .disable()
        .map_err(|e| format!("perf disable: {e}"))?;
    let allocs = counter.read().map_err(|e| format!("perf read: {e}"))?;
    let per_cycle = allocs as f64 / CYCLES as f64;
    let spares = (CYCLE_PAGES as f64 - per_cycle)
        .round()
        .clamp(0.0, CYCLE_PAGES as f64) as u32;
    let evidence = format!(
        "{CYCLES} cycles of {CYCLE_PAGES} pages written then read back: {allocs} page allocations ({per_cycle:.2} a cycle), so {spares} of the {CYCLE_PAGES} freed pages came back"
    );
    Ok((Answer::SparePages(spares), evidence))
}

/// Small reads that each leave a full pipe full, one every [`READ_GAP`].
const SMALL_READS: u64 = 20;
const READ_GAP: Duration = Duration::from_millis(2);

/// This thread's voluntary context switches, from its own status file.
fn voluntary_switches(tid: i32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/self/task/{tid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))?
        .trim()
        .parse()
        .ok()
}

/// Does a read that leaves the pipe full wake a writer waiting for space? A
/// one-page pipe is filled, a writer thread blocks writing one more page,
/// and the reader takes one byte at a time: the page is never emptied, so the
/// pipe stays full. Each wakeup the writer gets is one more voluntary
/// context switch when it finds no room and sleeps again.
pub(crate) fn full_pipe_wakeups() -> Outcome {
    let page = rustix::param::page_size();
    let (read, write) = pipe().map_err(|e| format!("pipe: {e}"))?;
    fcntl_setpipe_size(&write, page).map_err(|e| format!("F_SETPIPE_SZ one page: {e}"))?;
    let full = vec![1u8; page];
    rustix::io::write(&write, &full).map_err(|e| format!("write: {e}"))?;
    let (tid_tx, tid_rx) = mpsc::channel();
    let writer = std::thread::spawn(move || {
        let _ = tid_tx.send(rustix::thread::gettid().as_raw_nonzero().get());
        let more = vec![2u8; page];
        let mut sent = 0;
        while sent < more.len() {
            match rustix::io::write(&write, &more[sent..]) {
                Ok(n) => sent += n,
                Err(e) => return Err(format!("write: {e}")),
            }
        }
        Ok(())
    });
    let tid = tid_rx
        .recv()
        .map_err(|_| "the writer thread ended early".to_string())?;
    // Let it reach its sleep in pipe_write.
    std::thread::sleep(Duration::from_millis(20));
    let before = voluntary_switches(tid).ok_or("the writer's switches are not in /proc")?;
    let mut byte = [0u8; 1];
    for _ in 0..SMALL_READS {
        rustix::io::read(&read, &mut byte).map_err(|e| format!("read: {e}"))?;
        std::thread::sleep(READ_GAP);
    }
    let after = voluntary_switches(tid).ok_or("the writer's switches are not in /proc")?;
    // Release the writer: drain what is left of both pages.
    let mut rest = vec![0u8; 2 * page];
    let mut left = 2 * page - SMALL_READS as usize;
    while left > 0 {
        left -= rustix::io::read(&read, &mut rest[..left]).map_err(|e| format!("read: {e}"))?;
    }
    writer
        .join()
        .map_err(|_| "the writer thread panicked".to_string())??;
    let woken = after.saturating_sub(before);
    let evidence = format!(
        "{SMALL_READS} one-byte reads from a full one-page pipe: the waiting writer woke {woken} times"
    );
    // Every read wakes it on a kernel that does; a few stray wakeups (a signal,
    // the scheduler) do not make a kernel that does not.
    if woken * 2 >= SMALL_READS {
        Ok((Answer::FullReadWakes, evidence))
    } else {
        Ok((Answer::FullReadQuiet, evidence))
    }
}
