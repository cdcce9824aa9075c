//! The reading end: read(2) into a buffer, or splice(2) on to /dev/null.

use std::fs::OpenOptions;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::Ordering;
use std::time::Instant;

use rustix::io::Errno;
use rustix::pipe::{fcntl_setpipe_size, splice, SpliceFlags};

use crate::ends::buffer::{page_size, Buffer, BufferSpec};
use crate::ends::control::Shared;
use crate::ends::error::EndError;
use crate::ends::options::ReaderOptions;
use crate::ends::pattern;
use crate::ends::pipe_setup;
use crate::ends::report::EndReport;
use crate::ends::usage;

/// Counters the loops keep.
#[derive(Debug, Default)]
struct ReadTally {
    received: u64,
    iterations: u64,
    retries: u64,
    corrupted: u64,
    first_byte: Option<Instant>,
}

impl ReadTally {
    /// Records `n` bytes and publishes the count for the harness's progress sampler.
    #[inline]
    fn record(&mut self, n: usize, control: &Shared) {
        if self.first_byte.is_none() {
            self.first_byte = Some(Instant::now());
        }
        self.received += n as u64;
        self.iterations += 1;
        control.reader_bytes.store(self.received, Ordering::Relaxed);
    }
}

/// Runs the reader on `input` until end-of-file.
pub fn run(
    options: &ReaderOptions,
    input: BorrowedFd<'_>,
    control: &Shared,
) -> Result<EndReport, EndError> {
    let buf_size = options.common.buf_size.as_usize();
    if buf_size < page_size() {
        return Err(EndError::Invalid(format!(
            "--buf-size {} is below one page ({} bytes)",
            options.common.buf_size,
            page_size()
        )));
    }
    pipe_setup::check_input(input, options.splice)?;
    if options.common.busy_loop {
        pipe_setup::set_nonblocking(input)?;
    }
    let before = usage::self_usage();
    let mut tally = ReadTally::default();
    // Counted from here, the buffer's faults included, as the writer counts.
    let call = if options.splice { "splice" } else { "read" };
    let mut window = usage::counting(&options.common, &[call]);
    window.start();
    let mut buffer = match options.splice {
        true => None,
        false => Some(Buffer::allocate(BufferSpec {
            len: buf_size,
            huge_pages: options.common.huge_pages,
            touch: true,
            lock: options.common.lock_memory,
            offset: options.common.effective_buffer_offset().into(),
        })?),
    };
    let outcome = match &mut buffer {
        None => splice_loop(options, input, control, &mut tally),
        Some(buffer) => read_loop(
            options,
            input,
            &mut buffer.as_mut_slice()[..buf_size],
            control,
            &mut tally,
        ),
    };
    let finished = Instant::now();
    outcome?;
    let counts = usage::counted(window, call, tally.iterations + tally.retries);
    let expected = options.common.bytes.bytes();
    let stopped_by_budget = control.should_stop() && tally.received < expected;
    if tally.received < expected && !stopped_by_budget {
        return Err(EndError::EarlyEof {
            got: tally.received,
            expected,
        });
    }
    let elapsed = tally
        .first_byte
        .map(|first| finished.duration_since(first))
        .unwrap_or_default();
    Ok(EndReport {
        role: "reader".into(),
        bytes: tally.received,
        iterations: tally.iterations,
        retries: tally.retries,
        elapsed_ms: elapsed.as_secs_f64() * 1000.0,
        cpu: options.common.cpu,
        usage: usage::since(before, usage::self_usage()),
        huge_pages: None,
        corrupted_bytes: options.count_corrupt.then_some(tally.corrupted),
        stopped_by_budget,
        // The writer sizes the pipe and reads the capacity back; a reader asking
        // at its own start could see the size before the writer changed it.
        pipe_capacity: None,
        counts: Some(counts),
    })
}

/// Checks (or counts) the pattern in bytes received at stream offset `offset`.
fn verify(
    options: &ReaderOptions,
    data: &[u8],
    offset: u64,
    tally: &mut ReadTally,
) -> Result<(), EndError> {
    if options.count_corrupt {
        tally.corrupted += pattern::count_mismatches(data, offset);
        return Ok(());
    }
    match pattern::first_mismatch(data, offset) {
        None => Ok(()),
        Some(bad) => Err(EndError::Corrupt {
            offset: bad.offset,
            expected: bad.expected,
            got: bad.got,
        }),
    }
}

/// Steps 1 and 2: copy out of the pipe with read(2).
// ANCHOR: read_loop
fn read_loop(
    options: &ReaderOptions,
    input: BorrowedFd<'_>,
    buf: &mut [u8],
    control: &Shared,
    tally: &mut ReadTally,
) -> Result<(), EndError> {
    let verify_bytes = options.common.verify;
    loop {
        if options.common.poll {
            pipe_setup::wait_readable(input)?;
        }
        match rustix::io::read(input, &mut *buf) {
            Ok(0) => return Ok(()), // end of file: the writer is done
            Ok(n) => {
                if verify_bytes {
                    verify(options, &buf[..n], tally.received, tally)?;
                }
                tally.record(n, control);
            }
            // Busy looping: the pipe is empty, ask again at once.
            Err(Errno::AGAIN) => tally.retries += 1,
            Err(Errno::INTR) => {}
            Err(e) => return Err(EndError::sys("read")(e)),
        }
    }
}
// ANCHOR_END: read_loop

/// Steps 3 to 5: move the pipe's pages on to /dev/null with splice(2).
///
/// With --verify, each chunk is first duplicated with tee(2) into a second pipe and
/// checked there, and only then spliced to /dev/null. Splicing into the second pipe
/// instead would keep references to the writer's pages after they left the
/// benchmark pipe, and the writer, seeing room, would rewrite them: the double
/// buffer is only safe when the pages die as they leave (pages spliced onward can
/// outlive the pipe).
fn splice_loop(
    options: &ReaderOptions,
    input: BorrowedFd<'_>,
    control: &Shared,
    tally: &mut ReadTally,
) -> Result<(), EndError> {
    let buf_size = options.common.buf_size.as_usize();
    let mut flags = SpliceFlags::empty();
    if options.common.busy_loop {
        flags |= SpliceFlags::NONBLOCK;
    }
    if options.common.gift {
        flags |= SpliceFlags::MOVE;
    }
    let check = if options.common.verify {
        Some(CheckPipe::new(buf_size)?)
    } else {
        None
    };
    let dev_null: OwnedFd = OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .map_err(|e| EndError::Sys {
            call: "open(/dev/null)",
            source: e,
        })?
        .into();
    splice_all(
        options,
        input,
        dev_null.as_fd(),
        check.as_ref(),
        flags,
        control,
        tally,
    )
}

/// The splice loop itself: move up to one chunk of pages per call from the pipe to
/// `sink`, counting them, until the writer closes its end.
// ANCHOR: splice_loop
fn splice_all(
    options: &ReaderOptions,
    input: BorrowedFd<'_>,
    sink: BorrowedFd<'_>,
    check: Option<&CheckPipe>,
    flags: SpliceFlags,
    control: &Shared,
    tally: &mut ReadTally,
) -> Result<(), EndError> {
    let buf_size = options.common.buf_size.as_usize();
    loop {
        if options.common.poll {
            pipe_setup::wait_readable(input)?;
        }
        let want = match check {
            None => buf_size,
            Some(check) => {
                let seen = check.copy_and_verify(options, input, flags, tally)?;
                if seen == 0 {
                    return Ok(()); // end of file
                }
                seen
            }
        };
        match splice(input, None, sink, None, want, flags) {
            Ok(0) => return Ok(()), // end of file: the writer is done
            Ok(n) => {
                if let Some(check) = check {
                    check.consumed(n);
                }
                tally.record(n, control);
            }
            // Busy looping: nothing to move yet, ask again at once.
            Err(Errno::AGAIN) => tally.retries += 1,
            Err(Errno::INTR) => {}
            Err(e) => return Err(EndError::sys("splice")(e)),
        }
    }
}
// ANCHOR_END: splice_loop

/// The second pipe that --verify tees into, and a buffer to read it back.
struct CheckPipe {
    read: OwnedFd,
    write: OwnedFd,
    buf: std::cell::RefCell<Vec<u8>>,
    /// Bytes already verified but not yet spliced away.
    verified_ahead: std::cell::Cell<usize>,
}

impl CheckPipe {
    fn new(buf_size: usize) -> Result<Self, EndError> {
        let (read, write) = rustix::pipe::pipe().map_err(EndError::sys("pipe"))?;
        // Room for a whole chunk; if the system refuses, tee simply copies less.
        let _ = fcntl_setpipe_size(&write, buf_size);
        Ok(CheckPipe {
            read,
            write,
            buf: std::cell::RefCell::new(vec![0; buf_size]),
            verified_ahead: std::cell::Cell::new(0),
        })
    }

    /// Duplicates what the input pipe holds, checks it, and returns how many
    /// bytes are now verified and may be spliced away (0 at end of file).
    fn copy_and_verify(
        &self,
        options: &ReaderOptions,
        input: BorrowedFd<'_>,
        flags: SpliceFlags,
        tally: &mut ReadTally,
    ) -> Result<usize, EndError> {
        let ahead = self.verified_ahead.get();
        if ahead > 0 {
            return Ok(ahead);
        }
        let mut buf = self.buf.borrow_mut();
        let teed = loop {
            match rustix::pipe::tee(input, &self.write, buf.len(), flags) {
                Ok(n) => break n,
                Err(Errno::AGAIN) => tally.retries += 1,
                Err(Errno::INTR) => {}
                Err(e) => return Err(EndError::sys("tee")(e)),
            }
        };
        if teed == 0 {
            // tee returns 0 both at end of file and, oddly, never otherwise for a
            // blocking pipe; a non-blocking empty pipe gives EAGAIN above.
            return Ok(0);
        }
        let mut got = 0;
        while got < teed {
            match rustix::io::read(&self.read, &mut buf[got..teed]) {
                Ok(0) => break,
                Ok(k) => got += k,
                Err(Errno::INTR) => {}
                Err(e) => return Err(EndError::sys("read (verify pipe)")(e)),
            }
        }
        verify(options, &buf[..got], tally.received, tally)?;
        self.verified_ahead.set(got);
        Ok(got)
    }

    /// Marks `n` verified bytes as spliced away.
    fn consumed(&self, n: usize) {
        self.verified_ahead
            .set(self.verified_ahead.get().saturating_sub(n));
    }
}
