//! The page inspector: the writer's buffers of a step, page by page.
//!
//! [`inspect`] allocates the buffers exactly as the writer does (through
//! `writer::allocate_buffers`, so with the same alignment, offset, huge-page
//! advice and touching), then reads, for every 4 KiB page, whether it is present
//! (`/proc/self/pagemap`), its frame, and the frame's flags (`/proc/kpageflags`):
//! transparent huge page, compound head or tail. What could not be read is
//! reported with a kind and a sentence ([`Limitation`]), never guessed: pagemap
//! gives unprivileged readers zeros instead of frame numbers, and kpageflags is
//! root's only.
//!
//! The server runs the inspector as a short child (`pipebook end inspect-pages`,
//! [`run_child`]), so the buffers live and die in a process of their own, like
//! the writer's.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::ends::buffer::{page_size, pages_spanned, Buffer};
use crate::ends::error::EndError;
use crate::ends::hugepage::{self, KPF_COMPOUND_HEAD, KPF_COMPOUND_TAIL, KPF_HUGE, KPF_THP};
use crate::ends::options::WriterOptions;
use crate::memory::paging::{self, PageSize, Paging, Walk};

use crate::ends::hugepage::HugePageReport;
use crate::ends::writer;
use crate::process::launch::{EndProgram, Launch, LaunchError, REPORT_FD};
use crate::size::{ByteSize, MIB};

/// Largest buffer the inspector allocates: every page is a line of the report.
pub(crate) const MAX_INSPECT_BYTES: u64 = 16 * MIB;

/// How long the inspector child may take before it is killed.
pub(crate) const CHILD_TIMEOUT: Duration = Duration::from_secs(10);

const PAGEMAP_PRESENT: u64 = 1 << 63;
const PAGEMAP_PFN_MASK: u64 = (1 << 55) - 1;

/// The kpageflags bits the page names, bit number and name (see the kernel's
/// Documentation/admin-guide/mm/pagemap.rst).
const FLAG_NAMES: [(u32, &str); 16] = [
    (0, "locked"),
    (2, "referenced"),
    (3, "uptodate"),
    (4, "dirty"),
    (5, "lru"),
    (6, "active"),
    (11, "mmap"),
    (12, "anon"),
    (14, "swapbacked"),
    (KPF_COMPOUND_HEAD, "compound_head"),
    (KPF_COMPOUND_TAIL, "compound_tail"),
    (KPF_HUGE, "huge"),
    (18, "unevictable"),
    (21, "ksm"),
    (KPF_THP, "thp"),
    (24, "zero_page"),
];

/// kpageflags bit: the shared zero page (what a read fault maps into untouched memory).
const KPF_ZERO_PAGE: u32 = 24;

/// A frame's flags, decoded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageFlags {
    /// The 64-bit word from kpageflags.
    pub raw: u64,
    /// Part of a transparent huge page (KPF_THP).
    pub thp: bool,
    /// First page of a compound page (KPF_COMPOUND_HEAD).
    pub head: bool,
    /// Later page of a compound page (KPF_COMPOUND_TAIL).
    pub tail: bool,
    /// The kernel's shared zero page (KPF_ZERO_PAGE).
    pub zero_page: bool,
    /// The names of the set bits the page knows.
    pub names: Vec<String>,
}

impl PageFlags {
    /// Decodes a kpageflags word.
    pub fn decode(raw: u64) -> PageFlags {
        let bit = |b: u32| raw & (1 << b) != 0;
        PageFlags {
            raw,
            thp: bit(KPF_THP),
            head: bit(KPF_COMPOUND_HEAD),
            tail: bit(KPF_COMPOUND_TAIL),
            zero_page: bit(KPF_ZERO_PAGE),
            names: FLAG_NAMES
                .iter()
                .filter(|(b, _)| bit(*b))
                .map(|(_, name)| name.to_string())
                .collect(),
        }
    }
}

/// One 4 KiB page of a buffer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageRecord {
    /// The page's place in the buffer, from 0.
    pub index: usize,
    /// Its virtual address (page-aligned).
    pub vaddr: u64,
    /// Whether a physical page is mapped there.
    pub present: bool,
    /// The page frame number, when this process may see it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub pfn: Option<u64>,
    /// The frame's flags, when kpageflags could be read.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub flags: Option<PageFlags>,
}

/// One of the writer's buffers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BufferPages {
    /// Where the usable bytes start.
    pub address: u64,
    /// Usable bytes (the chunk, rounded up as the allocation is).
    pub len: u64,
    /// How far into its first page the buffer starts (malloc's 16 bytes, or 0).
    pub offset_in_page: u64,
    /// The machine's page size, which `pages` are counted in.
    pub page_size: u64,
    /// The walk to the buffer's first byte (to a 2 MiB page for huge-page buffers).
    pub walk: Walk,
    /// Every 4 KiB page the buffer touches, in order.
    pub pages: Vec<PageRecord>,
    /// Pages present.
    pub present: usize,
    /// Pages in transparent huge pages (known only with kpageflags).
    pub thp: usize,
    /// Compound heads.
    pub heads: usize,
    /// Compound tails.
    pub tails: usize,
    /// With huge pages asked for: how much is really huge (kpageflags or smaps).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub huge_pages: Option<HugePageReport>,
}

/// What kind of thing the inspector could not see.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitationKind {
    /// pagemap gave present pages with frame number 0: this process lacks
    /// CAP_SYS_ADMIN, so frames (and with them flags) are hidden.
    FramesHidden,
    /// /proc/kpageflags could not be opened or read.
    FlagsUnreadable,
    /// Huge pages were asked for but THP is `never`.
    ThpDisabled,
    /// Huge pages were asked for and allowed, but the kernel used small pages.
    NoHugePages,
    /// No page is present (an untouched buffer), so there were no frames to look up.
    NothingPresent,
}

/// Something the inspector could not see, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limitation {
    /// What, as a kind a page can decide on.
    pub kind: LimitationKind,
    /// What happened and what to do, for a person.
    pub message: String,
}

/// The inspector's whole answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PagesReport {
    /// Bytes per buffer asked for (the writer's chunk).
    pub buf_size: u64,
    /// Huge pages asked for.
    pub huge_pages: bool,
    /// The buffers were written before inspection (as the writer does unless
    /// --dont-touch-pages).
    pub touched: bool,
    /// The THP mode read from sysfs, if readable.
    pub thp_mode: Option<String>,
    /// Whether frame numbers were visible (root).
    pub frames_visible: bool,
    /// The writer's buffers: two for the vmsplice double buffer, else one.
    pub buffers: Vec<BufferPages>,
    /// What could not be read, and why.
    pub limitations: Vec<Limitation>,
}

/// Why the inspector could not run.
#[derive(Debug, thiserror::Error)]
pub enum InspectError {
    /// The buffers would be too large to list page by page.
    #[error(
        "--buf-size {size} is over the page inspector's limit of {limit}: ask for a smaller buffer"
    )]
    TooLarge {
        /// What was asked.
        size: ByteSize,
        /// The limit.
        limit: ByteSize,
    },
    /// Allocating the buffers as the writer does failed.
    #[error("could not allocate the buffers: {0}")]
    Allocate(#[from] EndError),
    /// /proc/self/pagemap could not be read.
    #[error("cannot read /proc/self/pagemap ({0}): is /proc mounted?")]
    Pagemap(std::io::Error),
    /// The child could not be started or waited for.
    #[error("could not run the page inspector: {0}")]
    Spawn(#[from] LaunchError),
    /// The child took too long and was killed.
    #[error("the page inspector took longer than {0:?} and was stopped")]
    Timeout(Duration),
    /// The child failed.
    #[error("the page inspector failed ({status}): {stderr}")]
    Failed {
        /// Its exit status.
        status: String,
        /// What it said.
        stderr: String,
    },
}

/// Checks the request before anything is allocated.
fn check(options: &WriterOptions) -> Result<(), InspectError> {
    let buffers = if options.vmsplice && !options.reuse_early {
        2
    } else {
        1
    };
    let size = options.common.buf_size.bytes();
    if size.saturating_mul(buffers) > MAX_INSPECT_BYTES {
        return Err(InspectError::TooLarge {
            size: options.common.buf_size,
            limit: ByteSize(MAX_INSPECT_BYTES / buffers),
        });
    }
    Ok(())
}

/// Allocates the writer's buffers for `options` in this process and reports their pages.
pub fn inspect(options: &WriterOptions) -> Result<PagesReport, InspectError> {
    check(options)?;
    writer::validate(options).or_else(|err| match err {
        // Shown, not refused: the page explains why no huge page appears.
        EndError::HugePagesDisabled => Ok(()),
        other => Err(other),
    })?;
    let (first, second) = writer::allocate_buffers(options)?;
    let kpageflags = File::open("/proc/kpageflags");
    let mut limitations = Vec::new();
    let mut buffers = Vec::new();
    for buffer in std::iter::once(&first).chain(second.as_ref()) {
        buffers.push(read_buffer(buffer, options, kpageflags.as_ref().ok())?);
    }
    let all = || buffers.iter().flat_map(|b| b.pages.iter());
    let any_present = all().any(|p| p.present);
    let frames_visible = all().any(|p| p.pfn.is_some());
    if !any_present {
        limitations.push(Limitation {
            kind: LimitationKind::NothingPresent,
            message: "no page of the buffers is present: they were never written, so the kernel has not mapped anything yet, and there are no frames or flags to show".into(),
        });
    } else if !frames_visible {
        limitations.push(Limitation {
            kind: LimitationKind::FramesHidden,
            message: "pagemap shows the pages as present but with frame number 0: the kernel hides frames from processes without CAP_SYS_ADMIN. Run the runner (or `pipebench pages`) as root to see each page's frame and, through /proc/kpageflags, whether it is a huge page's head or tail".into(),
        });
    }
    if frames_visible {
        if let Err(err) = &kpageflags {
            limitations.push(Limitation {
                kind: LimitationKind::FlagsUnreadable,
                message: format!("/proc/kpageflags cannot be opened ({err}): frames are shown without their flags; the file needs root and a kernel built with CONFIG_PROC_PAGE_MONITOR"),
            });
        }
    }
    let thp_mode = hugepage::thp_mode();
    if options.common.huge_pages {
        if thp_mode.as_deref() == Some("never") {
            limitations.push(Limitation {
                kind: LimitationKind::ThpDisabled,
                message: "transparent huge pages are off (`never`), so the buffers are in 4 KiB pages; as root, `echo madvise > /sys/kernel/mm/transparent_hugepage/enabled` allows them".into(),
            });
        } else if any_present
            && buffers
                .iter()
                .filter_map(|b| b.huge_pages.as_ref())
                .all(|h| h.huge_bytes == 0)
        {
            limitations.push(Limitation {
                kind: LimitationKind::NoHugePages,
                message: "huge pages were asked for and are allowed, but the kernel backed the buffers with 4 KiB pages (no free 2 MiB block); try again, or compact memory as root with `echo 1 > /proc/sys/vm/compact_memory`".into(),
            });
        }
    }
    Ok(PagesReport {
        buf_size: options.common.buf_size.bytes(),
        huge_pages: options.common.huge_pages,
        touched: !options.dont_touch_pages,
        thp_mode,
        frames_visible,
        buffers,
        limitations,
    })
}

/// Reads every page of `buffer` (from the page holding its first byte to the
/// one holding its last).
fn read_buffer(
    buffer: &Buffer,
    options: &WriterOptions,
    kpageflags: Option<&File>,
) -> Result<BufferPages, InspectError> {
    let address = buffer.addr() as u64;
    let page = page_size() as u64;
    let (first_page, last_page) = pages_spanned(address, buffer.len() as u64, page);
    let count = (last_page - first_page + 1) as usize;
    let pagemap = File::open("/proc/self/pagemap").map_err(InspectError::Pagemap)?;
    let mut raw = vec![0u8; count * 8];
    pagemap
        .read_exact_at(&mut raw, first_page * 8)
        .map_err(InspectError::Pagemap)?;
    let pages: Vec<PageRecord> = raw
        .chunks_exact(8)
        .enumerate()
        .map(|(index, entry)| {
            let entry = u64::from_le_bytes(entry.try_into().expect("8 bytes"));
            let present = entry & PAGEMAP_PRESENT != 0;
            let pfn = Some(entry & PAGEMAP_PFN_MASK).filter(|&pfn| present && pfn != 0);
            let flags = pfn.zip(kpageflags).and_then(|(pfn, file)| {
                let mut word = [0u8; 8];
                file.read_exact_at(&mut word, pfn * 8)
                    .ok()
                    .map(|()| PageFlags::decode(u64::from_le_bytes(word)))
            });
            PageRecord {
                index,
                vaddr: (first_page + index as u64) * page,
                present,
                pfn,
                flags,
            }
        })
        .collect();
    let count_flag = |f: fn(&PageFlags) -> bool| {
        pages
            .iter()
            .filter(|p| p.flags.as_ref().is_some_and(f))
            .count()
    };
    let page_size = if options.common.huge_pages {
        PageSize::Huge
    } else {
        PageSize::Small
    };
    // A user buffer is always canonical for 4-level paging: the kernel hands out
    // addresses above 47 bits only to a mmap that asks for them.
    let walk = paging::walk(address, Paging::FourLevel, page_size)
        .or_else(|_| paging::walk(address, Paging::FiveLevel, page_size))
        .expect("a mapped user address is canonical");
    Ok(BufferPages {
        address,
        len: buffer.len() as u64,
        offset_in_page: address % page,
        page_size: page,
        walk,
        present: pages.iter().filter(|p| p.present).count(),
        thp: count_flag(|f| f.thp),
        heads: count_flag(|f| f.head),
        tails: count_flag(|f| f.tail),
        huge_pages: options
            .common
            .huge_pages
            .then(|| hugepage::check_buffer(buffer.addr(), buffer.len())),
        pages,
    })
}

/// What the inspector child answers on its report fd.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "lowercase")]
pub(crate) enum InspectOutcome {
    /// The report.
    Done {
        /// The pages.
        report: Box<PagesReport>,
    },
    /// Why there is none, in words.
    Failed {
        /// What happened.
        message: String,
    },
}

impl From<Result<PagesReport, InspectError>> for InspectOutcome {
    fn from(outcome: Result<PagesReport, InspectError>) -> Self {
        match outcome {
            Ok(report) => InspectOutcome::Done {
                report: Box::new(report),
            },
            Err(err) => InspectOutcome::Failed {
                message: err.to_string(),
            },
        }
    }
}

/// Runs the inspector as a child of `program` (`pipebook end inspect-pages` or
/// `pipebench inspect-pages`) and reads its report; kills it past `timeout`.
pub(crate) fn run_child(
    program: &EndProgram,
    options: &WriterOptions,
    timeout: Duration,
) -> Result<PagesReport, InspectError> {
    check(options)?;
    let mut options = options.clone();
    options.common.report_fd = Some(REPORT_FD);
    let mut child = Launch::new(
        "page inspector",
        program,
        "inspect-pages",
        options.to_args(),
    )
    .spawn()
    .map_err(InspectError::Spawn)?;
    if !child
        .wait_until(Instant::now() + timeout)
        .map_err(|source| {
            InspectError::Spawn(LaunchError::Wait {
                what: "page inspector".into(),
                source,
            })
        })?
    {
        return Err(InspectError::Timeout(timeout));
    }
    match child.outcome::<InspectOutcome>() {
        Ok(InspectOutcome::Done { report }) => Ok(*report),
        Ok(InspectOutcome::Failed { message }) => Err(InspectError::Failed {
            status: child.describe_status(),
            stderr: message,
        }),
        Err(silent) => Err(InspectError::Failed {
            status: silent.status,
            stderr: silent.stderr,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_decode_head_tail_and_thp() {
        let head = PageFlags::decode((1 << KPF_COMPOUND_HEAD) | (1 << KPF_THP) | (1 << 12));
        assert!(head.head && head.thp && !head.tail && !head.zero_page);
        assert_eq!(head.names, ["anon", "compound_head", "thp"]);
        let zero = PageFlags::decode(1 << KPF_ZERO_PAGE);
        assert!(zero.zero_page && zero.names == ["zero_page"]);
    }

    #[test]
    fn too_large_buffers_are_refused_before_allocating() {
        let mut options = WriterOptions {
            vmsplice: true,
            ..Default::default()
        };
        options.common.buf_size = ByteSize(16 * MIB);
        let err = inspect(&options).unwrap_err();
        assert!(matches!(err, InspectError::TooLarge { .. }), "{err}");
        assert!(err.to_string().contains("limit of 8MiB"), "{err}");
    }
}
