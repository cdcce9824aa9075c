//! The writing end: write(2) or vmsplice(2) into a pipe.
//!
//! The loops below are the code the book shows (through the `ANCHOR` markers), so
//! they are kept plain: one loop per way of handing bytes to the kernel, nothing on
//! the hot path but the call itself, the retry on EAGAIN, and two relaxed atomic
//! accesses to the control page.

use std::os::fd::BorrowedFd;
use std::sync::atomic::Ordering;
use std::time::Instant;

use rustix::io::Errno;
use rustix::pipe::{vmsplice, IoSliceRaw, SpliceFlags};

use super::hugepage;
use crate::ends::buffer::{page_size, Buffer, BufferSpec};
use crate::ends::control::Shared;
use crate::ends::error::EndError;
use crate::ends::options::WriterOptions;
use crate::ends::pattern;
use crate::ends::pipe_setup;
use crate::ends::report::EndReport;
use crate::ends::usage;

/// Counters the loops keep.
#[derive(Debug, Default)]
struct WriteTally {
    sent: u64,
    iterations: u64,
    retries: u64,
}

/// Checks option combinations the writer cannot honour.
pub fn validate(options: &WriterOptions) -> Result<(), EndError> {
    let buf = options.common.buf_size.as_usize();
    if buf < page_size() {
        return Err(EndError::Invalid(format!(
            "--buf-size {} is below one page ({} bytes)",
            options.common.buf_size,
            page_size()
        )));
    }
    if options.vmsplice && !buf.is_multiple_of(page_size()) {
        return Err(EndError::Invalid(format!(
            "--buf-size {} must be a multiple of the page size ({} bytes) with --vmsplice (whole pages)",
            options.common.buf_size,
            page_size()
        )));
    }
    if options.same_buffer && !options.vmsplice {
        return Err(EndError::Invalid(
            "--same-buffer only applies to the vmsplice double buffer: add --vmsplice".into(),
        ));
    }
    if options.common.huge_pages && hugepage::thp_mode().as_deref() == Some("never") {
        return Err(EndError::HugePagesDisabled);
    }
    Ok(())
}

/// Runs the writer on `out` until `bytes` are written or the harness says stop.
pub fn run(
    options: &WriterOptions,
    out: BorrowedFd<'_>,
    control: &Shared,
) -> Result<EndReport, EndError> {
    validate(options)?;
    pipe_setup::check_output(out, options.vmsplice)?;
    // Size the pipe only where the reference writer does (vmsplice, or asked to):
    // plain write(2) runs on whatever pipe the kernel made.
    if let Some(size) = options.effective_pipe_size() {
        pipe_setup::set_pipe_size(out, size)?;
    }
    let pipe_capacity = pipe_setup::capacity(out);
    let chunk = options.chunk_size();
    // Counted from here: the buffers' page faults belong to what the book
    // explains (huge pages take far fewer), the process's start-up does not.
    let call = if options.vmsplice {
        "vmsplice"
    } else {
        "write"
    };
    let mut window = usage::counting(&options.common, &[call]);
    window.start();
    let (mut first, mut second) = allocate_buffers(options)?;
    let huge_pages = options.common.huge_pages.then(|| {
        let mut report = hugepage::check_buffer(first.addr(), first.len());
        if let Some(second) = &second {
            let more = hugepage::check_buffer(second.addr(), second.len());
            report.checked_bytes += more.checked_bytes;
            report.huge_bytes += more.huge_bytes;
            report.note = report.note.or(more.note);
        }
        if options.dont_touch_pages && report.huge_bytes == 0 {
            report.note = Some("--dont-touch-pages: nothing is mapped before the first vmsplice, so there was nothing to check yet".into());
        }
        report
    });
    if options.common.busy_loop {
        pipe_setup::set_nonblocking(out)?;
    }

    let total = options.common.bytes.bytes();
    let before = usage::self_usage();
    let started = Instant::now();
    let result = if options.vmsplice {
        let halves: [&mut [u8]; 2] = match (&mut second, options.reuse_early) {
            (_, true) => {
                let whole = first.as_mut_slice();
                let len = chunk.min(whole.len());
                let ptr = whole.as_mut_ptr();
                // The experiment hands the same memory out twice on purpose.
                // SAFETY: both slices cover the same live buffer; they are only ever
                // used one at a time by the loop below.
                unsafe {
                    [
                        std::slice::from_raw_parts_mut(ptr, len),
                        std::slice::from_raw_parts_mut(ptr, len),
                    ]
                }
            }
            (Some(second), false) => [
                &mut first.as_mut_slice()[..chunk],
                &mut second.as_mut_slice()[..chunk],
            ],
            (None, false) => {
                let (a, b) = first.as_mut_slice().split_at_mut(chunk);
                [a, &mut b[..chunk]]
            }
        };
        vmsplice_loop(options, out, halves, total, control)
    } else {
        write_loop(
            options,
            out,
            &mut first.as_mut_slice()[..chunk],
            total,
            control,
        )
    };
    let elapsed = started.elapsed();
    let tally = result?;
    let counts = usage::counted(window, call, tally.iterations + tally.retries);
    Ok(EndReport {
        role: "writer".into(),
        bytes: tally.sent,
        iterations: tally.iterations,
        retries: tally.retries,
        elapsed_ms: elapsed.as_secs_f64() * 1000.0,
        cpu: options.common.cpu,
        usage: usage::since(before, usage::self_usage()),
        huge_pages,
        corrupted_bytes: None,
        stopped_by_budget: control.should_stop() && tally.sent < total,
        pipe_capacity,
        counts: Some(counts),
    })
}

// ANCHOR: double_buffer
/// The vmsplice double buffer: two buffers of one chunk each, so that while
/// the pipe still holds references to the pages of one, the loop fills the
/// other. With --same-buffer both come from one allocation (one huge page);
/// plain write(2) and the early-reuse experiment need only one.
/// The page inspector allocates through this too, so what it shows is what the
/// writer hands to vmsplice.
pub(crate) fn allocate_buffers(
    options: &WriterOptions,
) -> Result<(Buffer, Option<Buffer>), EndError> {
    let spec = BufferSpec {
        len: options.chunk_size(),
        huge_pages: options.common.huge_pages,
        touch: !options.dont_touch_pages,
        lock: options.common.lock_memory,
        offset: options.common.effective_buffer_offset().into(),
    };
    let first_len = if options.same_buffer {
        2 * spec.len
    } else {
        spec.len
    };
    let first = Buffer::allocate(BufferSpec {
        len: first_len,
        ..spec
    })?;
    let two = options.vmsplice && !options.same_buffer && !options.reuse_early;
    let second = if two {
        Some(Buffer::allocate(spec)?)
    } else {
        None
    };
    Ok((first, second))
}
// ANCHOR_END: double_buffer

/// The baseline: copy each chunk into the pipe with write(2).
// ANCHOR: write_loop
fn write_loop(
    options: &WriterOptions,
    out: BorrowedFd<'_>,
    buf: &mut [u8],
    total: u64,
    control: &Shared,
) -> Result<WriteTally, EndError> {
    let verify = options.common.verify;
    let mut tally = WriteTally::default();
    while tally.sent < total && !control.should_stop() {
        let len = buf.len().min((total - tally.sent) as usize);
        if verify {
            pattern::fill(&mut buf[..len], tally.sent);
        }
        let mut done = 0;
        while done < len {
            if options.common.poll {
                pipe_setup::wait_writable(out)?;
            }
            match rustix::io::write(out, &buf[done..len]) {
                Ok(n) => done += n,
                // Busy looping: the pipe is full, try again at once.
                Err(Errno::AGAIN) => tally.retries += 1,
                Err(Errno::INTR) => {}
                Err(e) => return Err(write_error(e, tally.sent + done as u64)),
            }
        }
        tally.sent += len as u64;
        tally.iterations += 1;
        control.writer_bytes.store(tally.sent, Ordering::Relaxed);
    }
    Ok(tally)
}
// ANCHOR_END: write_loop

// ANCHOR: vmsplice_flags
/// The flags of every vmsplice call: never sleep when busy looping, and offer the
/// pages as a gift when asked.
fn vmsplice_flags(options: &WriterOptions) -> SpliceFlags {
    let mut flags = SpliceFlags::empty();
    if options.common.busy_loop {
        flags |= SpliceFlags::NONBLOCK;
    }
    if options.common.gift {
        flags |= SpliceFlags::GIFT;
    }
    flags
}
// ANCHOR_END: vmsplice_flags

/// Steps 2 to 5: hand the pages of the two buffers, in turn, to the pipe with vmsplice(2).
// ANCHOR: vmsplice_loop
fn vmsplice_loop(
    options: &WriterOptions,
    out: BorrowedFd<'_>,
    halves: [&mut [u8]; 2],
    total: u64,
    control: &Shared,
) -> Result<WriteTally, EndError> {
    let verify = options.common.verify;
    let flags = vmsplice_flags(options);
    let mut tally = WriteTally::default();
    let mut which = 0;
    while tally.sent < total && !control.should_stop() {
        let half = &mut *halves[which];
        let len = half.len().min((total - tally.sent) as usize);
        if verify {
            pattern::fill(&mut half[..len], tally.sent);
        }
        let mut done = 0;
        while done < len {
            if options.common.poll {
                pipe_setup::wait_writable(out)?;
            }
            let iov = [IoSliceRaw::from_slice(&half[done..len])];
            // SAFETY: the pages stay mapped, and a buffer is rewritten only after
            // the other one went in whole: the pipe has no more slots than a buffer
            // has pages, so by then it holds none of this one (double buffering).
            match unsafe { vmsplice(out, &iov, flags) } {
                Ok(n) => done += n,
                Err(Errno::AGAIN) => tally.retries += 1,
                Err(Errno::INTR) => {}
                Err(e) => return Err(write_error(e, tally.sent + done as u64)),
            }
        }
        tally.sent += len as u64;
        tally.iterations += 1;
        control.writer_bytes.store(tally.sent, Ordering::Relaxed);
        which ^= 1;
    }
    Ok(tally)
}
// ANCHOR_END: vmsplice_loop

fn write_error(errno: Errno, written: u64) -> EndError {
    if errno == Errno::PIPE {
        EndError::ReaderGone { written }
    } else {
        EndError::Sys {
            call: "write",
            source: errno.into(),
        }
    }
}
