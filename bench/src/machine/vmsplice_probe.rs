//! Does this kernel's vmsplice map the caller's pages into the pipe, or copy them?
//!
//! A 2026 patch series ("make vmsplice a trivial wrapper for preadv2/pwritev2")
//! proposed turning vmsplice into a plain copy; it was held back after it broke
//! programs that rewrite data after vmsplice. The book's vmsplice chapter depends on which kernel the reader runs,
//! so we ask the kernel directly: vmsplice a buffer, overwrite it, then read the
//! pipe. If the pipe returns the new bytes it held references to our pages; if it
//! returns the old ones it had copied them.

use std::os::fd::AsFd;

use rustix::pipe::{fcntl_setpipe_size, pipe, vmsplice, IoSliceRaw, SpliceFlags};
use serde::Serialize;

use crate::ends::buffer::{Buffer, BufferSpec};
use crate::ends::error::EndError;

/// What vmsplice does with the caller's memory on this kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum VmspliceBehaviour {
    /// The pipe references the caller's pages: zero copy, and reuse is unsafe.
    MapsPages,
    /// The pipe got a copy: safe to reuse at once, and no faster than write(2).
    CopiesPages,
    /// Some of both, which no known kernel does; reported rather than guessed.
    Mixed,
}

impl VmspliceBehaviour {
    /// A sentence for people.
    pub fn explain(self) -> &'static str {
        match self {
            VmspliceBehaviour::MapsPages => "vmsplice maps pages: the pipe holds references to the writer's memory, so rewriting a buffer before the reader has consumed it corrupts the stream",
            VmspliceBehaviour::CopiesPages => "vmsplice copies: this kernel treats vmsplice like write(2), so early reuse is harmless and the zero-copy steps lose their advantage",
            VmspliceBehaviour::Mixed => "vmsplice returned a mix of old and new bytes: neither a clean mapping nor a clean copy",
        }
    }
}

/// Runs the probe: 16 KiB vmspliced, overwritten, read back.
// ANCHOR: probe
pub fn probe() -> Result<VmspliceBehaviour, EndError> {
    const LEN: usize = 16 << 10;
    let (read_end, write_end) = pipe().map_err(EndError::sys("pipe"))?;
    let resized = fcntl_setpipe_size(&write_end, 64 << 10);
    resized.map_err(EndError::sys("fcntl(F_SETPIPE_SZ)"))?;
    let mut buffer = Buffer::allocate(BufferSpec {
        len: LEN,
        touch: true,
        ..Default::default()
    })?;
    buffer.as_mut_slice().fill(b'A');
    let mut sent = 0;
    while sent < LEN {
        let iov = [IoSliceRaw::from_slice(&buffer.as_slice()[sent..LEN])];
        // SAFETY: the buffer outlives the pipe contents: we read them back below
        // before the buffer is dropped.
        sent += unsafe { vmsplice(write_end.as_fd(), &iov, SpliceFlags::empty()) }
            .map_err(EndError::sys("vmsplice"))?;
    }
    buffer.as_mut_slice().fill(b'B');
    let mut back = vec![0u8; LEN];
    let mut got = 0;
    while got < LEN {
        let n = rustix::io::read(&read_end, &mut back[got..]);
        got += n.map_err(EndError::sys("read"))?;
    }
    let new = back.iter().filter(|&&b| b == b'B').count();
    Ok(match new {
        LEN => VmspliceBehaviour::MapsPages,
        0 => VmspliceBehaviour::CopiesPages,
        _ => VmspliceBehaviour::Mixed,
    })
}
// ANCHOR_END: probe
