//! Setting up the pipe ends: type checks, capacity, blocking mode, readiness.

use std::os::fd::BorrowedFd;

use rustix::event::{poll, PollFd, PollFlags};
use rustix::fs::{fcntl_getfl, fcntl_setfl, fstat, FileType, OFlags};
use rustix::io::Errno;
use rustix::pipe::{fcntl_getpipe_size, fcntl_setpipe_size};

use crate::ends::error::EndError;
use crate::size::ByteSize;

const PIPE_MAX_SIZE: &str = "/proc/sys/fs/pipe-max-size";

/// Whether `fd` is a pipe (or FIFO).
pub(crate) fn is_pipe(fd: BorrowedFd<'_>) -> bool {
    fstat(fd)
        .map(|st| FileType::from_raw_mode(st.st_mode) == FileType::Fifo)
        .unwrap_or(false)
}

/// The system's cap on F_SETPIPE_SZ for unprivileged processes.
pub fn pipe_max_size() -> Option<ByteSize> {
    std::fs::read_to_string(PIPE_MAX_SIZE)
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()
        .map(ByteSize)
}

/// Refuses outputs the writer cannot use: a non-pipe for vmsplice, a terminal always.
pub(crate) fn check_output(out: BorrowedFd<'_>, vmsplice: bool) -> Result<(), EndError> {
    if rustix::termios::isatty(out) {
        return Err(EndError::StdoutIsTerminal);
    }
    if vmsplice && !is_pipe(out) {
        return Err(EndError::NotAPipe {
            stream: "stdout",
            call: "vmsplice",
        });
    }
    Ok(())
}

/// Refuses an input that splice cannot read from.
pub(crate) fn check_input(input: BorrowedFd<'_>, splice: bool) -> Result<(), EndError> {
    if splice && !is_pipe(input) {
        return Err(EndError::NotAPipe {
            stream: "stdin",
            call: "splice",
        });
    }
    Ok(())
}

/// Sets the pipe's capacity, refusing sizes over /proc/sys/fs/pipe-max-size even
/// for root, so a run behaves the same for every user.
// ANCHOR: set_pipe_size
pub fn set_pipe_size(fd: BorrowedFd<'_>, size: ByteSize) -> Result<(), EndError> {
    if !is_pipe(fd) {
        return Err(EndError::NotAPipe {
            stream: "stdout",
            call: "F_SETPIPE_SZ (--pipe-size)",
        });
    }
    if let Some(limit) = pipe_max_size() {
        if size > limit {
            return Err(EndError::PipeSizeOverLimit {
                requested: size,
                limit,
            });
        }
    }
    let page = crate::ends::buffer::page_size() as u64;
    if below_one_page(size.bytes(), page) {
        return Err(EndError::Invalid(format!(
            "--pipe-size {size} is below one page ({page} bytes on this kernel)"
        )));
    }
    let bytes = size.as_usize();
    fcntl_setpipe_size(fd, bytes).map_err(EndError::sys("fcntl(F_SETPIPE_SZ)"))?;
    Ok(())
}
// ANCHOR_END: set_pipe_size

/// Whether a pipe of `size` bytes would hold less than one page of `page` bytes
/// (the kernel's page size, so 16 KiB is too small on a 64 KiB-page kernel).
fn below_one_page(size: u64, page: u64) -> bool {
    size < page
}

/// The capacity in force (F_GETPIPE_SZ), or `None` when `fd` is not a pipe.
/// The kernel rounds a requested size up to a power of two pages, so this, not
/// the request, is what a result reports.
pub fn capacity(fd: BorrowedFd<'_>) -> Option<u64> {
    if !is_pipe(fd) {
        return None;
    }
    fcntl_getpipe_size(fd).ok().map(|size| size as u64)
}

/// Puts the file description in non-blocking mode, for busy looping.
// ANCHOR: set_nonblocking
pub fn set_nonblocking(fd: BorrowedFd<'_>) -> Result<(), EndError> {
    let flags = fcntl_getfl(fd).map_err(EndError::sys("fcntl(F_GETFL)"))?;
    let flags = flags | OFlags::NONBLOCK;
    fcntl_setfl(fd, flags).map_err(EndError::sys("fcntl(F_SETFL)"))
}
// ANCHOR_END: set_nonblocking

fn wait_for(fd: BorrowedFd<'_>, events: PollFlags) -> Result<(), EndError> {
    let mut fds = [PollFd::new(&fd, events)];
    loop {
        match poll(&mut fds, None) {
            Ok(_) => return Ok(()),
            Err(Errno::INTR) => continue,
            Err(e) => return Err(EndError::sys("poll")(e)),
        }
    }
}

/// Blocks in poll(2) until the pipe has room (or its reader is gone).
pub(crate) fn wait_writable(fd: BorrowedFd<'_>) -> Result<(), EndError> {
    wait_for(fd, PollFlags::OUT)
}

/// Blocks in poll(2) until the pipe has data (or its writer is gone).
pub(crate) fn wait_readable(fd: BorrowedFd<'_>) -> Result<(), EndError> {
    wait_for(fd, PollFlags::IN)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn one_page_is_the_kernels_page() {
        for page in [4u64 << 10, 16 << 10, 64 << 10] {
            assert!(below_one_page(page / 2, page), "{page}");
            assert!(!below_one_page(page, page), "{page}");
            assert!(!below_one_page(2 * page, page), "{page}");
        }
        // 16 KiB is a pipe on x86-64, and less than one page on a 64 KiB kernel.
        assert!(!below_one_page(16 << 10, 4 << 10));
        assert!(below_one_page(16 << 10, 64 << 10));
    }

    #[test]
    fn pipes_are_recognised_and_files_are_not() {
        let (r, w) = rustix::pipe::pipe().unwrap();
        assert!(is_pipe(r.as_fd()) && is_pipe(w.as_fd()));
        let file = tempfile::tempfile().unwrap();
        assert!(!is_pipe(file.as_fd()));
        assert!(matches!(
            check_output(file.as_fd(), true),
            Err(EndError::NotAPipe { .. })
        ));
        assert!(check_output(file.as_fd(), false).is_ok());
    }

    #[test]
    fn a_pipe_size_over_the_limit_is_refused_with_the_limit() {
        let (_r, w) = rustix::pipe::pipe().unwrap();
        let limit = pipe_max_size().expect("Linux has pipe-max-size");
        let err = set_pipe_size(w.as_fd(), ByteSize(limit.bytes() * 2)).unwrap_err();
        let message = err.to_string();
        assert!(matches!(err, EndError::PipeSizeOverLimit { .. }));
        assert!(message.contains("pipe-max-size"), "{message}");
        set_pipe_size(w.as_fd(), ByteSize(128 << 10)).unwrap();
        assert_eq!(rustix::pipe::fcntl_getpipe_size(&w).unwrap(), 128 << 10);
    }
}
