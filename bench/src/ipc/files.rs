//! The one-process experiments: counting lines with mmap + memchr against buffered
//! reads, 1 KiB reads with O_DIRECT against buffered ones, and copy-on-write after
//! fork.

use std::alloc::{alloc, dealloc, Layout};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::os::fd::AsRawFd;
use std::path::Path;

use super::data::{self, Checksum};
use super::end::{check, io, now_ns, IpcEndError, IpcEndReport, IpcEndSpec, Received};
use super::{CowReport, IpcError, Mechanism};

/// The direct-io experiment reads at most this many bytes: every 1 KiB O_DIRECT
/// read is a device request (about 0.1 ms on a virtual disk), so 200 MiB would take
/// half a minute and dominate the matrix; 16 MiB shows the same per-read cost.
pub(crate) const DIRECT_IO_MAX_BYTES: u64 = 16 << 20;

/// The cow-fork experiment writes at most this many bytes of pages.
pub(crate) const COW_MAX_BYTES: u64 = 256 << 20;

/// Writes a text of about `bytes` bytes into `file`: lines of 100 to 200 bytes
/// (newline included) of random lowercase words. Returns the number of lines.
pub(crate) fn write_text(file: &mut File, bytes: u64) -> Result<u64, IpcError> {
    let setup = |e| IpcError::Setup {
        what: "write the text file".into(),
        source: e,
    };
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        // xorshift64: deterministic, so a size always gives the same file.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut line = Vec::with_capacity(200);
    let (mut written, mut lines) = (0u64, 0u64);
    loop {
        let mut len = 100 + (next() % 101) as usize;
        if written + len as u64 > bytes {
            if lines > 0 {
                break;
            }
            len = bytes.max(1) as usize;
        }
        line.clear();
        while line.len() < len - 1 {
            for b in next().to_le_bytes() {
                line.push(if b % 7 == 0 { b' ' } else { b'a' + b % 26 });
            }
        }
        line.truncate(len - 1);
        line.push(b'\n');
        out.write_all(&line).map_err(setup)?;
        written += len as u64;
        lines += 1;
    }
    out.flush().map_err(setup)?;
    Ok(lines)
}

/// Turns O_DIRECT on for `file`, whose file system decides as it does for an
/// open with O_DIRECT (EINVAL: not supported).
fn set_direct(file: &File, on: bool) -> std::io::Result<()> {
    let fd = file.as_raw_fd();
    // SAFETY: F_GETFL and F_SETFL on a descriptor we own.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let flags = if on {
            flags | libc::O_DIRECT
        } else {
            flags & !libc::O_DIRECT
        };
        if libc::fcntl(fd, libc::F_SETFL, flags) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Whether the file system of `file` (in `dir`) accepts O_DIRECT: asked of the
/// run's own (still empty) data file, which is then left as it was, so no
/// scratch file is needed.
pub(crate) fn probe_direct_io(file: &File, dir: &Path, fs: &str) -> Result<(), IpcError> {
    match set_direct(file, true).and_then(|()| set_direct(file, false)) {
        Ok(()) => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Err(IpcError::DirectIoUnsupported {
            dir: dir.display().to_string(),
            filesystem: fs.to_string(),
        }),
        Err(e) => Err(IpcError::Setup {
            what: format!("open a file with O_DIRECT in {}", dir.display()),
            source: e,
        }),
    }
}

/// A zeroed buffer aligned to 4 KiB, as O_DIRECT wants.
struct Aligned {
    ptr: *mut u8,
    layout: Layout,
}

impl Aligned {
    fn new(len: usize) -> Aligned {
        let layout = Layout::from_size_align(len, 4096).expect("valid layout");
        // SAFETY: len > 0 (chunks are at least 512 bytes).
        let ptr = unsafe { alloc(layout) };
        assert!(!ptr.is_null(), "out of memory");
        Aligned { ptr, layout }
    }

    fn slice(&mut self) -> &mut [u8] {
        // SAFETY: we own layout.size() bytes at ptr (uninitialised bytes are only
        // written by read before they are looked at).
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for Aligned {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

fn read_all(
    spec: &IpcEndSpec,
    mut file: File,
    direct: bool,
    received: &Received,
) -> Result<IpcEndReport, IpcEndError> {
    if direct {
        set_direct(&file, true).map_err(io("fcntl (O_DIRECT)"))?;
    }
    let mut buf = Aligned::new(spec.chunk as usize);
    let mut sum = Checksum::default();
    let mut report = IpcEndReport {
        start_ns: Some(now_ns()),
        ..Default::default()
    };
    loop {
        let n =
            file.read(buf.slice())
                .map_err(io(if direct { "read (O_DIRECT)" } else { "read" }))?;
        report.tally("read", n as u64);
        if n == 0 {
            break;
        }
        sum.update(&buf.slice()[..n]);
        received.set(sum.len());
    }
    report.end_ns = Some(now_ns());
    report.bytes = sum.len();
    report.checksum = Some(sum.finish());
    Ok(report)
}

fn count_lines(spec: &IpcEndSpec, file: File, mapped: bool) -> Result<IpcEndReport, IpcEndError> {
    let len = file.metadata().map_err(io("fstat"))?.len() as usize;
    let mut report = IpcEndReport {
        start_ns: Some(now_ns()),
        ..Default::default()
    };
    let lines = if mapped {
        // SAFETY: a private read-only mapping of a file nobody writes meanwhile.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(IpcEndError::Sys {
                call: "mmap",
                source: std::io::Error::last_os_error(),
            });
        }
        // SAFETY: the mapping is len bytes long and lives until munmap below.
        let text = unsafe { std::slice::from_raw_parts(ptr as *const u8, len) };
        let lines = memchr::memchr_iter(b'\n', text).count() as u64;
        // SAFETY: unmapping what we mapped; `text` is not used after this.
        unsafe { libc::munmap(ptr, len) };
        lines
    } else {
        // getline's equivalent: one line at a time through a stdio-sized buffer.
        let mut reader = BufReader::with_capacity(spec.chunk as usize, file);
        let mut line = Vec::with_capacity(256);
        let mut lines = 0u64;
        loop {
            line.clear();
            if reader.read_until(b'\n', &mut line).map_err(io("read"))? == 0 {
                break;
            }
            lines += 1;
        }
        lines
    };
    report.end_ns = Some(now_ns());
    report.bytes = len as u64;
    report.lines = Some(lines);
    Ok(report)
}

fn minor_faults() -> u64 {
    crate::ends::usage::self_usage().minor_faults
}

/// Copy-on-write: the parent fills private pages, forks, the child writes one
/// byte per page and counts its minor faults around the writes.
fn cow_fork(spec: &IpcEndSpec) -> Result<IpcEndReport, IpcEndError> {
    let len = spec.bytes.clamp(4096, COW_MAX_BYTES).next_multiple_of(4096) as usize;
    let pages = len / 4096;
    let mut memory = vec![0u8; len];
    data::fill(&mut memory, 0);
    let (r, w) = rustix::pipe::pipe().map_err(|e| IpcEndError::Sys {
        call: "pipe",
        source: e.into(),
    })?;
    // SAFETY: this end process is single-threaded, so the child may run Rust code
    // that does not allocate; it only touches `memory`, getrusage and write.
    let pid = unsafe { libc::fork() };
    check("fork", pid as isize)?;
    if pid == 0 {
        let before = minor_faults();
        let start = now_ns();
        for page in memory.chunks_mut(4096) {
            page[0] ^= 0xff;
        }
        let end = now_ns();
        let after = minor_faults();
        let mut original = [0u8; 1];
        data::fill(&mut original, 0);
        let sees_write = memory[0] == original[0] ^ 0xff;
        let words = [before, after, start, end, u64::from(sees_write)];
        let mut bytes = [0u8; 40];
        for (slot, word) in bytes.chunks_mut(8).zip(words) {
            slot.copy_from_slice(&word.to_le_bytes());
        }
        // SAFETY: writing a stack buffer to our pipe, then leaving without running
        // the parent's destructors twice.
        unsafe {
            libc::write(w.as_raw_fd(), bytes.as_ptr() as *const libc::c_void, 40);
            libc::_exit(0);
        }
    }
    drop(w);
    let mut bytes = [0u8; 40];
    let read = File::from(r).read_exact(&mut bytes);
    let mut status = 0;
    // SAFETY: reaping our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    read.map_err(io("read (child's report)"))?;
    let word = |i: usize| u64::from_le_bytes(bytes[i * 8..i * 8 + 8].try_into().expect("8"));
    let mut expected = vec![0u8; len];
    data::fill(&mut expected, 0);
    let parent_sees_original = memory == expected;
    Ok(IpcEndReport {
        start_ns: Some(word(2)),
        end_ns: Some(word(3)),
        bytes: len as u64,
        cow: Some(CowReport {
            pages: pages as u64,
            child_faults_before: word(0),
            child_faults_after: word(1),
            parent_sees_original,
            child_sees_its_write: word(4) == 1,
        }),
        notes: (spec.bytes > COW_MAX_BYTES)
            .then(|| {
                format!(
                    "cow-fork writes at most {} MiB of pages",
                    COW_MAX_BYTES >> 20
                )
            })
            .into_iter()
            .collect(),
        ..Default::default()
    })
}

/// The experiment ends.
///
/// Only the reads publish progress chunk by chunk (1 KiB O_DIRECT reads are the
/// slow experiment); a line counter or the fork publishes its bytes when done,
/// since a store per line would be part of what the line count measures.
pub(crate) fn end(
    spec: &IpcEndSpec,
    src: Option<File>,
    received: &Received,
) -> Result<IpcEndReport, IpcEndError> {
    let src = || src.ok_or_else(|| IpcEndError::Protocol("no file given".into()));
    let report = match spec.mechanism {
        Mechanism::LinesMmap => count_lines(spec, src()?, true),
        Mechanism::LinesRead => count_lines(spec, src()?, false),
        Mechanism::DirectIo => return read_all(spec, src()?, true, received),
        Mechanism::BufferedIo => return read_all(spec, src()?, false, received),
        _ => cow_fork(spec),
    }?;
    received.set(report.bytes);
    Ok(report)
}
