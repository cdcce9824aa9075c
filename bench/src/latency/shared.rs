//! The shared region of a latency run: one memfd, made by the harness and mapped
//! by both ends (as [`crate::process::launch::CONTROL_FD`]). Nothing is named.
//!
//! It holds, each hot word on its own cache line so that progress never shares
//! a line with a doorbell: the round trips done and the live distribution (the
//! ping end writes, the harness reads), how many ends hold a named object, the
//! futex words, the ring's indices, then the message areas, one per direction,
//! of [`SLOTS`] slots each (the futex and eventfd mechanisms use slot 0).

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use rustix::fs::{MemfdFlags, SealFlags};
use rustix::mm::{MapFlags, ProtFlags};

/// Slots per direction of the ring.
pub(crate) const SLOTS: usize = 4;

/// Buckets of the live distribution: each octave of nanoseconds cut in four equal
/// quarters, so bucket `i` starts at `2^(i div 4) * (1 + (i mod 4) / 4)` ns; the
/// last holds everything slower.
pub(crate) const BUCKETS: usize = 112;

/// The lower edge of bucket `i`, ns (the tests check the bucketing against it).
#[cfg(test)]
pub(crate) fn bucket_floor(i: usize) -> f64 {
    2f64.powi((i / 4) as i32) * (1.0 + (i % 4) as f64 / 4.0)
}

/// The bucket of a round trip of `ns` nanoseconds.
pub(crate) fn bucket_of(ns: u64) -> usize {
    if ns <= 1 {
        return 0;
    }
    // The octave from the bit length, the quarter from the next two bits (no
    // float in the hot loop).
    let bits = 63 - ns.leading_zeros() as usize;
    let frac = if bits >= 2 {
        ((ns >> (bits - 2)) & 3) as usize
    } else {
        ((ns << (2 - bits)) & 3) as usize
    };
    (bits * 4 + frac).min(BUCKETS - 1)
}

/// One cache line holding one word.
#[repr(C, align(64))]
pub(crate) struct Line<T>(pub T);

/// The region's fixed part.
#[repr(C)]
pub(crate) struct Header {
    /// Timed round trips done so far (ping writes).
    pub done: Line<AtomicU64>,
    /// Ends that hold the named object (FIFOs) and may let it go.
    pub holding: Line<AtomicU32>,
    /// Futex / sequence word of messages to the pong end.
    pub to_pong: Line<AtomicU32>,
    /// Futex / sequence word of replies to the ping end.
    pub to_ping: Line<AtomicU32>,
    /// Ring indices: messages written towards pong, and read by it.
    pub ring_a_head: Line<AtomicU64>,
    /// Read index of the ring towards pong.
    pub ring_a_tail: Line<AtomicU64>,
    /// Ring indices: replies written towards ping.
    pub ring_b_head: Line<AtomicU64>,
    /// Read index of the ring towards ping.
    pub ring_b_tail: Line<AtomicU64>,
    /// The live distribution (ping publishes its counts now and then).
    pub buckets: [AtomicU64; BUCKETS],
}

/// The shared region, mapped.
pub(crate) struct LatencyRegion {
    fd: OwnedFd,
    base: *mut u8,
    len: usize,
    size: usize,
}

// SAFETY: the mapping is shared memory touched only through atomics (the header)
// or by the one end that owns a slot at a time (the message areas, handed over
// with release/acquire on the header's words).
unsafe impl Send for LatencyRegion {}

impl LatencyRegion {
    fn header_len() -> usize {
        std::mem::size_of::<Header>().next_multiple_of(4096)
    }

    fn length(size: usize) -> usize {
        Self::header_len() + 2 * SLOTS * size.next_multiple_of(64)
    }

    /// Makes a region for messages of `size` bytes (the harness).
    pub(crate) fn create(size: usize) -> std::io::Result<LatencyRegion> {
        let fd = rustix::fs::memfd_create(
            "pipebook-latency",
            MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING,
        )?;
        let len = Self::length(size);
        rustix::fs::ftruncate(&fd, len as u64)?;
        // Neither end may shrink it under the other.
        rustix::fs::fcntl_add_seals(&fd, SealFlags::SHRINK | SealFlags::GROW)?;
        Self::map(fd, size)
    }

    /// Maps the region an end was handed for messages of `size` bytes.
    pub(crate) fn attach(fd: OwnedFd, size: usize) -> std::io::Result<LatencyRegion> {
        let len = Self::length(size);
        let have = rustix::fs::fstat(&fd)?.st_size as usize;
        if have < len {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("the shared region holds {have} bytes, {len} needed"),
            ));
        }
        Self::map(fd, size)
    }

    fn map(fd: OwnedFd, size: usize) -> std::io::Result<LatencyRegion> {
        let len = Self::length(size);
        // SAFETY: a fresh shared mapping of a memfd at least `len` long.
        let base = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                len,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED,
                &fd,
                0,
            )?
        } as *mut u8;
        Ok(LatencyRegion {
            fd,
            base,
            len,
            size: size.next_multiple_of(64),
        })
    }

    /// Its descriptor, to hand to an end.
    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// The fixed part.
    pub(crate) fn header(&self) -> &Header {
        // SAFETY: the mapping starts with a zero-filled Header, page aligned, and
        // every field is an atomic.
        unsafe { &*(self.base as *const Header) }
    }

    /// Slot `slot` of the area towards pong (`to_pong`) or towards ping.
    pub(crate) fn slot(&self, to_pong: bool, slot: usize) -> *mut u8 {
        let area = if to_pong { 0 } else { SLOTS };
        // SAFETY: within the mapping: header, then 2 * SLOTS slots of `size`.
        unsafe {
            self.base
                .add(Self::header_len() + (area + slot % SLOTS) * self.size)
        }
    }

    /// Round trips done so far.
    pub(crate) fn done(&self) -> u64 {
        self.header().done.0.load(Ordering::Relaxed)
    }

    /// The live distribution's counts.
    pub(crate) fn buckets(&self) -> Vec<u64> {
        self.header()
            .buckets
            .iter()
            .map(|b| b.load(Ordering::Relaxed))
            .collect()
    }
}

impl Drop for LatencyRegion {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly what map() mapped.
        unsafe {
            let _ = rustix::mm::munmap(self.base as *mut _, self.len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_quarter_octaves() {
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(1), 0);
        assert_eq!(bucket_of(2), 4);
        assert_eq!(bucket_of(1024), 40);
        assert_eq!(bucket_of(1024 + 256), 41);
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
        for ns in [3u64, 100, 5_000, 123_456, 9_999_999] {
            let b = bucket_of(ns);
            assert!(
                bucket_floor(b) <= ns as f64 && (ns as f64) < bucket_floor(b + 1),
                "{ns}"
            );
        }
    }

    #[test]
    fn the_region_is_shared_through_its_descriptor() {
        let made = LatencyRegion::create(100).unwrap();
        let fd = made.fd().try_clone_to_owned().unwrap();
        let other = LatencyRegion::attach(fd, 100).unwrap();
        made.header().done.0.store(7, Ordering::Relaxed);
        assert_eq!(other.done(), 7);
        assert!(LatencyRegion::attach(made.fd().try_clone_to_owned().unwrap(), 1 << 20).is_err());
    }
}
