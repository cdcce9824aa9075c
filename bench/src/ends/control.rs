//! The shared-memory control region between the harness and the two ends.
//!
//! Progress must not slow the hot loop, so the reader does not report it with a
//! system call: it stores its byte count into a page of shared memory after every
//! chunk (a plain relaxed store), and the harness samples that page on its own
//! clock. The same page carries the harness's "stop now" flag, which the writer
//! checks with a relaxed load per chunk, for runs with a time budget.

use std::os::fd::{AsFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use rustix::fs::{ftruncate, memfd_create, MemfdFlags};
use rustix::mm::{mmap, mmap_anonymous, munmap, MapFlags, ProtFlags};

/// One field on a cache line of its own.
///
/// The writer and the reader run on different cores and touch the control page on
/// every chunk. Packed into one 64-byte line, the reader's store to its counter
/// and the writer's store and load would make that line bounce between the cores
/// on every chunk: measured, that halved busy-loop throughput in a VM. 128 bytes
/// also keeps the adjacent-line prefetcher from pairing neighbours.
#[repr(C, align(128))]
#[derive(Debug)]
pub struct CacheLine<T>(pub T);

impl<T> std::ops::Deref for CacheLine<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// The layout both sides agree on. Only atomics, so sharing it across processes
/// is sound; each field that changes during a run has its own cache line.
#[repr(C)]
#[derive(Debug)]
pub struct Shared {
    magic: CacheLine<AtomicU64>,
    /// Bytes the reader has received so far (written by the reader only).
    pub reader_bytes: CacheLine<AtomicU64>,
    /// Bytes the writer has handed to the pipe so far (written by the writer only).
    pub writer_bytes: CacheLine<AtomicU64>,
    /// Set by the harness when the time budget is spent; the writer stops. Read
    /// on every chunk but written once, so it stays cached on the writer's core.
    pub stop: CacheLine<AtomicU32>,
    /// How many ends of an IPC lab run hold the run's named object (a FIFO, a
    /// shared file, a shared memory object): at 2 the harness removes the name.
    /// Written once by each end, before the data moves.
    pub holding: CacheLine<AtomicU32>,
}

const MAGIC: u64 = 0x7069_7065_626f_6f6b; // "pipebook"
const REGION_LEN: usize = 4096;

/// Errors creating or attaching the control region.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ControlError {
    /// A system call failed.
    #[error("control region: {call} failed: {source}")]
    Sys {
        /// The call.
        call: &'static str,
        /// The error.
        source: std::io::Error,
    },
    /// The fd did not hold a pipebench control region.
    #[error("file descriptor {0} is not a pipebench control region")]
    NotARegion(RawFd),
}

fn sys(call: &'static str) -> impl FnOnce(rustix::io::Errno) -> ControlError {
    move |e| ControlError::Sys {
        call,
        source: e.into(),
    }
}

/// A mapped control region, owned by the harness or attached by an end.
#[derive(Debug)]
pub(crate) struct ControlRegion {
    fd: Option<OwnedFd>,
    ptr: NonNull<Shared>,
}

// SAFETY: the region only holds atomics and stays mapped for the value's lifetime.
unsafe impl Send for ControlRegion {}
// SAFETY: as above; all access goes through atomics.
unsafe impl Sync for ControlRegion {}

impl ControlRegion {
    /// Creates a fresh region backed by a memfd that children can inherit.
    pub(crate) fn create() -> Result<Self, ControlError> {
        let fd =
            memfd_create("pipebench-control", MemfdFlags::CLOEXEC).map_err(sys("memfd_create"))?;
        ftruncate(&fd, REGION_LEN as u64).map_err(sys("ftruncate"))?;
        let region = Self::map(fd)?;
        region.shared().magic.store(MAGIC, Ordering::Release);
        Ok(region)
    }

    /// Attaches to a region whose fd was inherited from the harness.
    pub(crate) fn attach(raw: RawFd) -> Result<Self, ControlError> {
        // SAFETY: the harness passes us an fd it opened for this purpose; if the
        // number is wrong we fail below when mapping it or checking the magic.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let region = Self::map(fd)?;
        if region.shared().magic.load(Ordering::Acquire) != MAGIC {
            return Err(ControlError::NotARegion(raw));
        }
        Ok(region)
    }

    /// A private region for an end started by hand (`write | read` in a shell).
    pub(crate) fn local() -> Result<Self, ControlError> {
        // SAFETY: a fresh anonymous mapping, aliasing nothing.
        let ptr = unsafe {
            mmap_anonymous(
                std::ptr::null_mut(),
                REGION_LEN,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::PRIVATE,
            )
        }
        .map_err(sys("mmap"))?;
        Ok(ControlRegion {
            fd: None,
            ptr: NonNull::new(ptr.cast()).expect("mmap never returns null"),
        })
    }

    fn map(fd: OwnedFd) -> Result<Self, ControlError> {
        // SAFETY: mapping a memfd we hold; the mapping outlives every reference we
        // hand out because it is unmapped only in Drop.
        let ptr = unsafe {
            mmap(
                std::ptr::null_mut(),
                REGION_LEN,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED,
                &fd,
                0,
            )
        }
        .map_err(sys("mmap"))?;
        Ok(ControlRegion {
            fd: Some(fd),
            ptr: NonNull::new(ptr.cast()).expect("mmap never returns null"),
        })
    }

    /// The shared counters.
    pub(crate) fn shared(&self) -> &Shared {
        // SAFETY: ptr points to a live, page-aligned mapping of at least
        // size_of::<Shared>() bytes holding only atomics.
        unsafe { self.ptr.as_ref() }
    }

    /// The backing fd, for passing to a child.
    pub(crate) fn fd(&self) -> Option<BorrowedFd<'_>> {
        self.fd.as_ref().map(|fd| fd.as_fd())
    }
}

impl Drop for ControlRegion {
    fn drop(&mut self) {
        // SAFETY: we mapped exactly REGION_LEN bytes at ptr and nothing borrows
        // them past our lifetime.
        unsafe {
            let _ = munmap(self.ptr.as_ptr().cast(), REGION_LEN);
        }
    }
}

impl Shared {
    /// Whether the harness asked the ends to stop.
    #[inline]
    pub(crate) fn should_stop(&self) -> bool {
        self.stop.load(Ordering::Relaxed) != 0
    }

    /// Asks the ends to stop at the next chunk.
    pub(crate) fn request_stop(&self) {
        self.stop.store(1, Ordering::Relaxed);
    }
}

const _: () = assert!(std::mem::size_of::<Shared>() <= REGION_LEN);

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn fields_that_change_do_not_share_a_cache_line() {
        let region = ControlRegion::local().unwrap();
        let shared = region.shared();
        let at = |p: *const u8| p as usize / 128;
        let lines = [
            at((&*shared.reader_bytes as *const AtomicU64).cast()),
            at((&*shared.writer_bytes as *const AtomicU64).cast()),
            at((&*shared.stop as *const AtomicU32).cast()),
        ];
        assert!(lines[0] != lines[1] && lines[1] != lines[2] && lines[0] != lines[2]);
    }

    #[test]
    fn a_second_mapping_sees_the_first_ones_stores() {
        let owner = ControlRegion::create().unwrap();
        let dup = rustix::io::dup(owner.fd().unwrap()).unwrap();
        let raw = dup.as_raw_fd();
        std::mem::forget(dup);
        let attached = ControlRegion::attach(raw).unwrap();
        attached.shared().reader_bytes.store(42, Ordering::Relaxed);
        assert_eq!(owner.shared().reader_bytes.load(Ordering::Relaxed), 42);
        owner.shared().request_stop();
        assert!(attached.shared().should_stop());
    }

    #[test]
    fn a_foreign_fd_is_refused() {
        let fd = memfd_create("not-control", MemfdFlags::CLOEXEC).unwrap();
        ftruncate(&fd, 4096).unwrap();
        let raw = fd.as_raw_fd();
        std::mem::forget(fd);
        assert!(matches!(
            ControlRegion::attach(raw),
            Err(ControlError::NotARegion(_))
        ));
    }
}
