//! Page-aligned buffers, optionally in transparent huge pages.
//!
//! The article's buffers come from `aligned_alloc` plus `madvise(MADV_HUGEPAGE)`;
//! here they are anonymous mappings, aligned by hand to 2 MiB when huge pages are
//! asked for, so the kernel can back each 2 MiB stretch with one huge page.

use std::ptr::NonNull;

use rustix::mm::{madvise, mlock, mmap_anonymous, munmap, Advice, MapFlags, ProtFlags};

use crate::ends::error::EndError;
use crate::size::ByteSize;

pub use crate::process::page_size::{huge_page_size, page_size, pmd_size, HPAGE_PMD_SIZE};

/// The first and last page (numbered from address 0) that `[address, address +
/// len)` touches, with pages of `page_size`; `len` must not be 0.
pub(crate) fn pages_spanned(address: u64, len: u64, page_size: u64) -> (u64, u64) {
    (address / page_size, (address + len - 1) / page_size)
}

/// How a [`Buffer`] should be set up.
#[derive(Debug, Clone, Copy, Default)]
pub struct BufferSpec {
    /// Usable length in bytes.
    pub len: usize,
    /// Align to 2 MiB and advise MADV_HUGEPAGE.
    pub huge_pages: bool,
    /// Write to every page before use, so the page table is filled in.
    pub touch: bool,
    /// mlock the buffer.
    pub lock: bool,
    /// Where the usable bytes start past a page boundary. The reference programs
    /// take small-page buffers from malloc, which for 256 KiB hands back an
    /// mmap'd chunk whose first 16 bytes are glibc's header: their buffers start
    /// 16 bytes into a page, so every page a call hands over is split in two.
    pub offset: usize,
}

/// An owned, page-aligned anonymous buffer.
#[derive(Debug)]
pub struct Buffer {
    map: NonNull<u8>,
    map_len: usize,
    start: NonNull<u8>,
    len: usize,
}

// SAFETY: the buffer owns its mapping exclusively.
unsafe impl Send for Buffer {}

fn round_up(value: usize, to: usize) -> usize {
    value.div_ceil(to) * to
}

// ANCHOR: huge_page_alloc
/// A buffer as `spec` says; with huge pages, aligned to 2 MiB and advised, so
/// the first touch of each 2 MiB stretch can fault in one huge page instead of
/// 512 small ones.
fn allocate(spec: BufferSpec) -> Result<Buffer, EndError> {
    if spec.len == 0 {
        return Err(EndError::Invalid("a buffer must not be empty".into()));
    }
    let align = if spec.huge_pages {
        huge_page_size()
    } else {
        page_size()
    };
    let mapped = round_up(spec.len + spec.offset, align);
    let mut buffer = Buffer::map_aligned(mapped, align)?;
    buffer.skip(spec.offset);
    let (start, len) = (buffer.start.as_ptr().cast(), buffer.len);
    if spec.huge_pages {
        // SAFETY: advising a range we own.
        unsafe { madvise(start, len, Advice::LinuxHugepage) }
            .map_err(EndError::sys("madvise(MADV_HUGEPAGE)"))?;
    }
    if spec.touch {
        // Any non-zero byte: the kernel must really allocate and map each page.
        buffer.as_mut_slice().fill(b'x');
    }
    if spec.lock {
        // SAFETY: locking a range we own.
        unsafe { mlock(start, len) }.map_err(|e| EndError::Lock {
            size: ByteSize(len as u64),
            source: e.into(),
        })?;
    }
    Ok(buffer)
}
// ANCHOR_END: huge_page_alloc

impl Buffer {
    /// Maps, advises, touches and locks a buffer as `spec` says.
    pub fn allocate(spec: BufferSpec) -> Result<Self, EndError> {
        allocate(spec)
    }

    /// Maps `len` bytes starting at a multiple of `align`: over-maps by one alignment
    /// unit so an aligned start always fits inside the mapping.
    fn map_aligned(len: usize, align: usize) -> Result<Self, EndError> {
        let map_len = len + if align > page_size() { align } else { 0 };
        // SAFETY: a fresh private anonymous mapping aliases nothing.
        let map = unsafe {
            mmap_anonymous(
                std::ptr::null_mut(),
                map_len,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::PRIVATE,
            )
        }
        .map_err(EndError::sys("mmap"))?;
        let map = NonNull::new(map.cast::<u8>()).expect("mmap never returns null");
        let offset = round_up(map.as_ptr() as usize, align) - map.as_ptr() as usize;
        // SAFETY: offset < align and map_len = len + align, so start..start+len is inside.
        let start = unsafe { NonNull::new_unchecked(map.as_ptr().add(offset)) };
        Ok(Buffer {
            map,
            map_len,
            start,
            len,
        })
    }

    /// Moves the start `offset` bytes into the mapping (the length shrinks alike).
    fn skip(&mut self, offset: usize) {
        assert!(offset < self.len, "offset inside the buffer");
        // SAFETY: offset < len, so the new start is still inside our mapping.
        self.start = unsafe { NonNull::new_unchecked(self.start.as_ptr().add(offset)) };
        self.len -= offset;
    }

    /// The usable bytes (the requested length rounded up to the alignment).
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: start..start+len lies inside our mapping, which we own.
        unsafe { std::slice::from_raw_parts_mut(self.start.as_ptr(), self.len) }
    }

    /// The usable bytes, read-only.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: as in as_mut_slice.
        unsafe { std::slice::from_raw_parts(self.start.as_ptr(), self.len) }
    }

    /// Start address, for the page inspector.
    pub fn addr(&self) -> usize {
        self.start.as_ptr() as usize
    }

    /// Usable length.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer is empty (never, by construction).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly what allocate mapped.
        unsafe {
            let _ = munmap(self.map.as_ptr().cast(), self.map_len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Page sizes Linux runs with: x86-64 and most arm64 (4 KiB), Apple silicon and
    /// some arm64 distributions (16 KiB), RHEL-style arm64 and POWER (64 KiB).
    const PAGE_SIZES: [usize; 3] = [4096, 16384, 65536];

    #[test]
    fn the_pages_a_buffer_spans_depend_on_the_page_size() {
        // 256 KiB placed 16 bytes into a page, as malloc places it.
        let (address, len) = (0x7f00_0000_0010_u64, 256 * 1024);
        let spans: Vec<u64> = PAGE_SIZES
            .into_iter()
            .map(|page| {
                let (first, last) = pages_spanned(address, len, page as u64);
                last - first + 1
            })
            .collect();
        assert_eq!(spans, [65, 17, 5]);
        // A page-aligned buffer of exactly one page spans one page.
        for page in PAGE_SIZES.map(|p| p as u64) {
            assert_eq!(pages_spanned(3 * page, page, page), (3, 3));
        }
    }

    #[test]
    fn the_page_size_comes_from_the_kernel() {
        let page = page_size();
        assert!(page.is_power_of_two(), "{page}");
        // The C library's answer, to compare with rustix's.
        // SAFETY: sysconf has no preconditions.
        let sysconf = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        assert_eq!(page as i64, sysconf as i64);
    }

    #[test]
    fn an_offset_buffer_starts_where_malloc_would_put_it() {
        let mut buffer = Buffer::allocate(BufferSpec {
            len: 256 << 10,
            touch: true,
            offset: 16,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(buffer.addr() % page_size(), 16);
        assert!(buffer.len() >= 256 << 10);
        // Every usable byte is ours to write, up to the last one.
        let slice = buffer.as_mut_slice();
        let last = slice.len() - 1;
        slice[last] = 7;
        assert_eq!(buffer.as_slice()[last], 7);
    }

    #[test]
    fn huge_buffers_are_2mib_aligned() {
        let buffer = Buffer::allocate(BufferSpec {
            len: 128 << 10,
            huge_pages: true,
            touch: true,
            lock: false,
            offset: 0,
        })
        .unwrap();
        assert_eq!(buffer.addr() % huge_page_size(), 0);
        assert_eq!(buffer.len(), huge_page_size());
        assert!(buffer.as_slice().iter().all(|&b| b == b'x'));
    }

    #[test]
    fn small_buffers_are_page_aligned_and_untouched_on_request() {
        let buffer = Buffer::allocate(BufferSpec {
            len: 10_000,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(buffer.addr() % page_size(), 0);
        assert_eq!(buffer.len(), 12_288);
        assert!(buffer.as_slice().iter().all(|&b| b == 0));
    }
}
