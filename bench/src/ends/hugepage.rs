//! Looking at the pages behind a buffer: /proc/self/pagemap, /proc/kpageflags and
//! /proc/self/smaps.
//!
//! pagemap gives each virtual page's page frame number, but only to a process with
//! CAP_SYS_ADMIN (others read zeros); kpageflags then says whether that frame is
//! part of a transparent huge page (KPF_THP) and whether it is a compound head or
//! tail. Without the privilege, smaps still says how much of a mapping is backed by
//! huge pages (AnonHugePages), which is enough to verify a buffer.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::FileExt;

use serde::{Deserialize, Serialize};

use super::buffer::page_size;

/// kpageflags bit: the first page of a compound page.
pub(crate) const KPF_COMPOUND_HEAD: u32 = 15;
/// kpageflags bit: a later page of a compound page.
pub(crate) const KPF_COMPOUND_TAIL: u32 = 16;
/// kpageflags bit: a huge page (hugetlbfs).
pub(crate) const KPF_HUGE: u32 = 17;
/// kpageflags bit: part of a transparent huge page.
pub(crate) const KPF_THP: u32 = 22;

/// What the huge-page check found in the writer's buffers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HugePageReport {
    /// The system's THP mode (`always`, `madvise`, `never`), as read.
    pub thp_mode: String,
    /// How the pages were inspected: `kpageflags` (root) or `smaps` (anyone).
    pub method: String,
    /// Bytes of the buffers that were checked.
    pub checked_bytes: u64,
    /// Bytes of them backed by transparent huge pages.
    pub huge_bytes: u64,
    /// A sentence for the reader when something is off, e.g. THP disabled.
    pub note: Option<String>,
}

const PAGEMAP_PRESENT: u64 = 1 << 63;
const PAGEMAP_PFN_MASK: u64 = (1 << 55) - 1;

/// The transparent huge page mode: the bracketed word of
/// /sys/kernel/mm/transparent_hugepage/enabled (`always`, `madvise`, `never`).
pub fn thp_mode() -> Option<String> {
    let text = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").ok()?;
    parse_bracketed(&text)
}

/// The bracketed choice in a sysfs selector line such as `always [madvise] never`.
pub(crate) fn parse_bracketed(text: &str) -> Option<String> {
    let start = text.find('[')? + 1;
    let end = start + text[start..].find(']')?;
    Some(text[start..end].to_string())
}

/// What the page inspector knows about one virtual page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PageInfo {
    /// Virtual address of the page.
    pub vaddr: usize,
    /// Whether a physical page is mapped there.
    pub present: bool,
    /// Page frame number, if we may see it (root only).
    pub pfn: Option<u64>,
    /// Part of a transparent huge page.
    pub thp: Option<bool>,
    /// First page of a compound page.
    pub compound_head: Option<bool>,
    /// Later page of a compound page.
    pub compound_tail: Option<bool>,
}

/// Where `/proc/self/pagemap` keeps the entry of the page holding `addr`: one
/// 8-byte entry per page, pages of `page_size`.
pub(crate) fn pagemap_offset(addr: usize, page_size: usize) -> u64 {
    (addr / page_size * 8) as u64
}

/// Reads pagemap (and kpageflags where allowed) for `pages` pages from `addr`.
// ANCHOR: kpageflags_check
pub fn inspect_pages(addr: usize, pages: usize) -> std::io::Result<Vec<PageInfo>> {
    let pagemap = File::open("/proc/self/pagemap")?;
    let kpageflags = File::open("/proc/kpageflags").ok();
    let mut raw = vec![0u8; pages * 8];
    pagemap.read_exact_at(&mut raw, pagemap_offset(addr, page_size()))?;
    let mut out = Vec::with_capacity(pages);
    for (i, entry) in raw.chunks_exact(8).enumerate() {
        let entry = u64::from_le_bytes(entry.try_into().expect("8 bytes"));
        let present = entry & PAGEMAP_PRESENT != 0;
        let pfn = entry & PAGEMAP_PFN_MASK;
        let pfn = (present && pfn != 0).then_some(pfn);
        let flags = match (pfn, &kpageflags) {
            (Some(pfn), Some(file)) => {
                let mut word = [0u8; 8];
                file.read_exact_at(&mut word, pfn * 8)
                    .ok()
                    .map(|_| u64::from_le_bytes(word))
            }
            _ => None,
        };
        let bit = |b: u32| flags.map(|f| f & (1 << b) != 0);
        out.push(PageInfo {
            vaddr: addr + i * page_size(),
            present,
            pfn,
            thp: bit(KPF_THP),
            compound_head: bit(KPF_COMPOUND_HEAD),
            compound_tail: bit(KPF_COMPOUND_TAIL),
        });
    }
    Ok(out)
}
// ANCHOR_END: kpageflags_check

/// AnonHugePages (bytes) of the smaps entry whose range contains `addr`.
pub(crate) fn smaps_anon_huge_bytes(addr: usize) -> Option<u64> {
    let file = BufReader::new(File::open("/proc/self/smaps").ok()?);
    let mut inside = false;
    for line in file.lines() {
        let line = line.ok()?;
        if let Some((range, _)) = line.split_once(' ') {
            if let Some((lo, hi)) = range.split_once('-') {
                if let (Ok(lo), Ok(hi)) =
                    (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
                {
                    inside = (lo..hi).contains(&addr);
                    continue;
                }
            }
        }
        if inside {
            if let Some(rest) = line.strip_prefix("AnonHugePages:") {
                let kib: u64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
                return Some(kib * 1024);
            }
        }
    }
    None
}

/// Checks how much of `[addr, addr+len)` is backed by transparent huge pages.
pub(crate) fn check_buffer(addr: usize, len: usize) -> HugePageReport {
    let thp_mode = thp_mode().unwrap_or_else(|| "unknown".into());
    let pages = len / page_size();
    if let Ok(infos) = inspect_pages(addr, pages) {
        if infos.iter().any(|p| p.thp.is_some()) {
            let huge = infos.iter().filter(|p| p.thp == Some(true)).count();
            let huge_bytes = (huge * page_size()) as u64;
            return HugePageReport {
                note: note_for(&thp_mode, huge_bytes, len as u64, "kpageflags"),
                thp_mode,
                method: "kpageflags".into(),
                checked_bytes: len as u64,
                huge_bytes,
            };
        }
    }
    let huge_bytes = smaps_anon_huge_bytes(addr).unwrap_or(0).min(len as u64);
    HugePageReport {
        note: note_for(&thp_mode, huge_bytes, len as u64, "smaps"),
        thp_mode,
        method: "smaps".into(),
        checked_bytes: len as u64,
        huge_bytes,
    }
}

fn note_for(mode: &str, huge: u64, len: u64, method: &str) -> Option<String> {
    if huge >= len {
        return None;
    }
    Some(match mode {
        "never" => "transparent huge pages are off (`never`): enable with `echo madvise > /sys/kernel/mm/transparent_hugepage/enabled` as root".into(),
        _ if huge == 0 => format!(
            "no huge pages behind the buffer (checked with {method}): the kernel found no free 2 MiB block, or THP defrag is off; try again, or compact memory with `echo 1 > /proc/sys/vm/compact_memory` as root"
        ),
        _ => format!("only {huge} of {len} bytes are in huge pages (checked with {method})"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ends::buffer::{Buffer, BufferSpec};

    #[test]
    fn the_pagemap_entry_of_an_address_depends_on_the_page_size() {
        let addr = 0x7f00_0012_3456_usize;
        assert_eq!(pagemap_offset(addr, 4096), (addr as u64 >> 12) * 8);
        assert_eq!(pagemap_offset(addr, 16384), (addr as u64 >> 14) * 8);
        assert_eq!(pagemap_offset(addr, 65536), (addr as u64 >> 16) * 8);
        // Every byte of one page shares its entry.
        for page in [4096, 16384, 65536] {
            assert_eq!(
                pagemap_offset(page * 7, page),
                pagemap_offset(page * 8 - 1, page)
            );
        }
    }

    #[test]
    fn bracketed_mode_is_parsed() {
        assert_eq!(
            parse_bracketed("always [madvise] never\n").as_deref(),
            Some("madvise")
        );
        assert_eq!(parse_bracketed("[never]").as_deref(), Some("never"));
        assert_eq!(parse_bracketed("nothing"), None);
    }

    #[test]
    fn touched_pages_are_present_untouched_are_not() {
        let touched = Buffer::allocate(BufferSpec {
            len: 16 << 10,
            touch: true,
            ..Default::default()
        })
        .unwrap();
        let pages = inspect_pages(touched.addr(), 4).unwrap();
        assert!(pages.iter().all(|p| p.present), "{pages:?}");
        let untouched = Buffer::allocate(BufferSpec {
            len: 16 << 10,
            ..Default::default()
        })
        .unwrap();
        let pages = inspect_pages(untouched.addr(), 4).unwrap();
        assert!(pages.iter().all(|p| !p.present), "{pages:?}");
    }
}
