//! Named and anonymous pipes: read/write and splice, file to file.
//!
//! The stream helpers here (a file sent with read + write, a stream received with
//! read + write into a file) are shared with the socket mechanisms.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::{FileExt, OpenOptionsExt};

use super::data::Checksum;
use super::end::{
    check, io, now_ns, EndFds, IpcEndError, IpcEndReport, IpcEndSpec, IpcRole, Received,
};
use super::Mechanism;

/// Writes all of `buf` to `out`, noting each write call as `call` in `report`
/// (a socket may take a chunk in more than one).
pub(crate) fn write_counted(
    out: &mut File,
    mut buf: &[u8],
    call: &'static str,
    what: &'static str,
    report: &mut IpcEndReport,
) -> Result<(), IpcEndError> {
    while !buf.is_empty() {
        match out.write(buf) {
            Ok(0) => {
                return Err(IpcEndError::Sys {
                    call: what,
                    source: std::io::ErrorKind::WriteZero.into(),
                })
            }
            Ok(n) => {
                report.tally(call, n as u64);
                buf = &buf[n..];
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io(what)(e)),
        }
    }
    Ok(())
}

/// Producer: read the source file chunk by chunk and write each chunk to `out`;
/// every read and write is a data call of `report`.
pub(crate) fn send_by_copy(
    src: &mut File,
    out: &mut File,
    bytes: u64,
    chunk: usize,
    report: &mut IpcEndReport,
) -> Result<u64, IpcEndError> {
    let mut buf = vec![0u8; chunk];
    let mut sent = 0u64;
    while sent < bytes {
        let want = (bytes - sent).min(chunk as u64) as usize;
        let n = src.read(&mut buf[..want]).map_err(io("read (source)"))?;
        report.tally("read", n as u64);
        if n == 0 {
            return Err(IpcEndError::Protocol("source file ended early".into()));
        }
        write_counted(out, &buf[..n], "write", "write", report)?;
        sent += n as u64;
    }
    Ok(sent)
}

/// Consumer: read `input` to its end, hash every byte, and write it to `dst`;
/// every read and write is a data call of `report`.
pub(crate) fn receive_by_copy(
    input: &mut File,
    dst: &mut File,
    chunk: usize,
    received: &Received,
    report: &mut IpcEndReport,
) -> Result<Checksum, IpcEndError> {
    let mut buf = vec![0u8; chunk];
    let mut sum = Checksum::default();
    loop {
        let n = input.read(&mut buf).map_err(io("read"))?;
        report.tally("read", n as u64);
        if n == 0 {
            return Ok(sum);
        }
        sum.update(&buf[..n]);
        write_counted(dst, &buf[..n], "write", "write (destination)", report)?;
        received.set(sum.len());
    }
}

/// splice(2) from `from` (at `*from_off` when given) to `to`.
pub(crate) fn splice(
    from: RawFd,
    from_off: Option<&mut i64>,
    to: RawFd,
    to_off: Option<&mut i64>,
    len: usize,
) -> Result<usize, IpcEndError> {
    let from_off = from_off.map_or(std::ptr::null_mut(), |o| o as *mut i64);
    let to_off = to_off.map_or(std::ptr::null_mut(), |o| o as *mut i64);
    // SAFETY: offsets are null or point to live i64s; the fds are ours.
    let ret = unsafe {
        libc::splice(
            from,
            from_off,
            to,
            to_off,
            len,
            libc::SPLICE_F_MOVE | libc::SPLICE_F_MORE,
        )
    };
    check("splice", ret)
}

/// Producer: splice the source file into `pipe`, `chunk` bytes per call at most;
/// the kernel moves no more than the pipe's free capacity per call, so loop over
/// short counts.
pub(crate) fn splice_file_to(
    src: &File,
    pipe: RawFd,
    bytes: u64,
    chunk: usize,
    report: &mut IpcEndReport,
) -> Result<u64, IpcEndError> {
    let mut offset = 0i64;
    while (offset as u64) < bytes {
        let want = (bytes - offset as u64).min(chunk as u64) as usize;
        let n = splice(src.as_raw_fd(), Some(&mut offset), pipe, None, want)?;
        report.tally("splice", n as u64);
        if n == 0 {
            return Err(IpcEndError::Protocol("source file ended early".into()));
        }
    }
    Ok(offset as u64)
}

/// Hashes what a splice wrote into `file`, after the clock has stopped.
pub(crate) fn checksum_file(file: &File) -> Result<Checksum, IpcEndError> {
    let mut buf = vec![0u8; 1 << 20];
    let mut sum = Checksum::default();
    let mut offset = 0u64;
    loop {
        let n = file
            .read_at(&mut buf, offset)
            .map_err(io("pread (verify)"))?;
        if n == 0 {
            return Ok(sum);
        }
        sum.update(&buf[..n]);
        offset += n as u64;
    }
}

fn data_fd(spec: &IpcEndSpec, fds: &mut EndFds, received: &Received) -> Result<File, IpcEndError> {
    if let Some(fd) = fds.data.take() {
        return Ok(File::from(fd));
    }
    // A FIFO, by its name (the point of a FIFO): opening blocks until the other
    // end opens it too. Then the harness may unlink the name.
    let path = spec
        .shared
        .as_ref()
        .ok_or_else(|| IpcEndError::Protocol("no FIFO given".into()))?;
    let mut options = OpenOptions::new();
    options.custom_flags(libc::O_NOFOLLOW);
    if spec.role == IpcRole::Producer {
        options.write(true);
    } else {
        options.read(true);
    }
    let fifo = options.open(path).map_err(io("open (FIFO)"))?;
    received.holding();
    Ok(fifo)
}

/// Both ends of `fifo-rw`, `fifo-splice`, `pipe-rw` and `pipe-splice`.
pub(crate) fn end(
    spec: &IpcEndSpec,
    mut fds: EndFds,
    received: &Received,
) -> Result<IpcEndReport, IpcEndError> {
    let splicing = matches!(
        spec.mechanism,
        Mechanism::FifoSplice | Mechanism::PipeSplice
    );
    let chunk = spec.chunk as usize;
    let mut pipe = data_fd(spec, &mut fds, received)?;
    let mut report = IpcEndReport::default();
    if spec.role == IpcRole::Producer {
        let mut src = fds.src()?;
        report.start_ns = Some(now_ns());
        report.bytes = if splicing {
            splice_file_to(&src, pipe.as_raw_fd(), spec.bytes, chunk, &mut report)?
        } else {
            send_by_copy(&mut src, &mut pipe, spec.bytes, chunk, &mut report)?
        };
        return Ok(report);
    }
    let mut dst = fds.dst()?;
    let sum = if splicing {
        let mut offset = 0i64;
        loop {
            let n = splice(
                pipe.as_raw_fd(),
                None,
                dst.as_raw_fd(),
                Some(&mut offset),
                chunk,
            )?;
            report.tally("splice", n as u64);
            if n == 0 {
                break;
            }
            received.set(offset as u64);
        }
        report.end_ns = Some(now_ns());
        checksum_file(&dst)?
    } else {
        let sum = receive_by_copy(&mut pipe, &mut dst, chunk, received, &mut report)?;
        report.end_ns = Some(now_ns());
        sum
    };
    report.bytes = sum.len();
    report.checksum = Some(sum.finish());
    Ok(report)
}
