//! Probes of what happens to the writer's pages: vmsplice, splice into
//! `/dev/null`, transparent huge pages.

use std::fs::OpenOptions;
use std::time::Duration;

use rustix::pipe::{pipe, splice, IoSliceRaw, SpliceFlags};
use rustix::time::{clock_gettime, ClockId};

use super::{Answer, Outcome};
use crate::ends::buffer::{huge_page_size, Buffer, BufferSpec};
use crate::ends::hugepage;
use crate::machine::vmsplice_probe::{self, VmspliceBehaviour};
use crate::stats::median;

/// vmsplice a buffer, overwrite it, read the pipe: new bytes mean the pipe
/// held references to the buffer's pages.
pub(crate) fn vmsplice() -> Outcome {
    let evidence = "16 KiB vmspliced into a pipe, then overwritten before the read";
    match vmsplice_probe::probe() {
        Ok(VmspliceBehaviour::MapsPages) => Ok((
            Answer::VmspliceMaps,
            format!(
                "{evidence}: the reader got the new bytes, so the pipe held the writer's pages"
            ),
        )),
        Ok(VmspliceBehaviour::CopiesPages) => Ok((
            Answer::VmspliceCopies,
            format!("{evidence}: the reader got the old bytes, so the pipe held a copy"),
        )),
        Ok(VmspliceBehaviour::Mixed) => Err(format!(
            "{evidence}: the reader got a mix of old and new bytes, which no known kernel does"
        )),
        Err(e) => Err(format!("vmsplice could not be asked: {e}")),
    }
}

/// This thread's CPU time, so time spent waiting for a CPU is not counted.
fn thread_time() -> Duration {
    let t = clock_gettime(ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// Rounds of each way of filling the pipe.
const DRAIN_ROUNDS: usize = 200;

/// Pipe buffers a fill makes (the default pipe's slots).
const SLOTS: usize = 16;

/// Bytes of each buffer in the small fill.
const SMALL: usize = 64;

/// Above this ratio of whole-page drains to small ones, the drain's cost grows
/// with the bytes: splice copied them.
const COPY_RATIO: f64 = 1.5;

/// Does splice into `/dev/null` copy the bytes or drop the page references?
/// The pipe is filled by vmsplice with [`SLOTS`] buffers, once of whole pages
/// and once of [`SMALL`] bytes each (both referencing the same touched pages,
/// so releasing them frees nothing), and drained by splice into /dev/null; the
/// thread's CPU time per drain is compared. Dropping references costs the same
/// per buffer whatever its length; copying costs 64 times more bytes.
pub(crate) fn splice_null() -> Outcome {
    let page = rustix::param::page_size();
    let (read, write) = pipe().map_err(|e| format!("pipe: {e}"))?;
    let null = OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .map_err(|e| format!("open /dev/null: {e}"))?;
    let mut buffer = Buffer::allocate(BufferSpec {
        len: SLOTS * page,
        touch: true,
        ..Default::default()
    })
    .map_err(|e| format!("a {} KiB buffer: {e}", (SLOTS * page) >> 10))?;
    buffer.as_mut_slice().fill(3);
    let fill = |len: usize| -> Result<usize, String> {
        let iov: Vec<IoSliceRaw> = buffer
            .as_slice()
            .chunks(page)
            .map(|chunk| IoSliceRaw::from_slice(&chunk[..len]))
            .collect();
        // SAFETY: the buffer is never written again and outlives the pipe,
        // which is drained after each fill and dropped before the buffer.
        let sent = unsafe { rustix::pipe::vmsplice(&write, &iov, SpliceFlags::empty()) }
            .map_err(|e| format!("vmsplice: {e}"))?;
        Ok(sent)
    };
    let drain = |mut left: usize| -> Result<f64, String> {
        let start = thread_time();
        while left > 0 {
            left -= splice(&read, None, &null, None, left, SpliceFlags::empty())
                .map_err(|e| format!("splice to /dev/null: {e}"))?;
        }
        Ok((thread_time() - start).as_secs_f64())
    };
    let (mut whole, mut small) = (Vec::new(), Vec::new());
    for _ in 0..DRAIN_ROUNDS {
        let sent = fill(page)?;
        whole.push(drain(sent)?);
        let sent = fill(SMALL)?;
        small.push(drain(sent)?);
    }
    let (whole_us, small_us) = (
        median(&whole).unwrap_or(0.0) * 1e6,
        median(&small).unwrap_or(0.0) * 1e6,
    );
    if small_us <= 0.0 {
        return Err("the thread's CPU clock did not move while splicing".into());
    }
    let ratio = whole_us / small_us;
    let evidence = format!(
        "{SLOTS} vmspliced buffers drained by splice into /dev/null {DRAIN_ROUNDS} times: whole pages took {whole_us:.2} us of CPU, {SMALL}-byte buffers {small_us:.2} us ({ratio:.1}x for {}x the bytes)",
        page / SMALL
    );
    if ratio < COPY_RATIO {
        Ok((Answer::SpliceNullDrops, evidence))
    } else {
        Ok((Answer::SpliceNullCopies, evidence))
    }
}

/// The THP sizes this kernel offers (multi-size THP), as `64kB: never` lines.
fn mthp_sizes() -> Vec<String> {
    let Ok(dir) = std::fs::read_dir("/sys/kernel/mm/transparent_hugepage") else {
        return Vec::new();
    };
    let mut sizes: Vec<(u64, String)> = dir
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let kb: u64 = name
                .strip_prefix("hugepages-")?
                .strip_suffix("kB")?
                .parse()
                .ok()?;
            let mode = std::fs::read_to_string(e.path().join("enabled")).ok()?;
            Some((
                kb,
                format!("{kb} KiB {}", hugepage::parse_bracketed(&mode)?),
            ))
        })
        .collect();
    sizes.sort();
    sizes.into_iter().map(|(_, s)| s).collect()
}

/// Can the writer get transparent huge pages? A huge-page-aligned buffer
/// is advised MADV_HUGEPAGE and touched, as step 4's writer does, and its
/// mapping's `AnonHugePages` read back from /proc/self/smaps (no privilege
/// needed).
pub(crate) fn thp() -> Outcome {
    let mode = hugepage::thp_mode();
    let sizes = mthp_sizes();
    let offered = if sizes.is_empty() {
        "no multi-size THP controls".to_string()
    } else {
        format!("multi-size THP: {}", sizes.join(", "))
    };
    match mode.as_deref() {
        None => Err("this kernel has no transparent huge pages (/sys/kernel/mm/transparent_hugepage/enabled is missing)".into()),
        Some("never") => Ok((Answer::ThpOff, format!("THP mode is never; {offered}"))),
        Some(mode) => {
            let huge = huge_page_size();
            let buffer = Buffer::allocate(BufferSpec {
                len: huge,
                huge_pages: true,
                touch: true,
                ..Default::default()
            })
            .map_err(|e| format!("a {} KiB buffer: {e}", huge >> 10))?;
            let kib = hugepage::smaps_anon_huge_bytes(buffer.addr())
                .ok_or("the buffer's mapping is not in /proc/self/smaps")?
                >> 10;
            let evidence = format!(
                "THP mode {mode}; a {} KiB buffer advised MADV_HUGEPAGE and touched has {kib} KiB in huge pages; {offered}",
                huge >> 10
            );
            if kib >= (huge as u64 >> 10) {
                Ok((Answer::ThpGiven, evidence))
            } else {
                Ok((Answer::ThpNotGiven, evidence))
            }
        }
    }
}
