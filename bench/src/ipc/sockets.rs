//! Sockets: TCP on loopback (read + send, sendfile, splice through a pipe) and a
//! Unix domain stream socket. Every consumer reads into a buffer, hashes it and
//! writes it to a file, as the survey's receivers did.

use std::fs::File;
use std::net::{TcpListener, TcpStream};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;

use super::end::{check, now_ns, EndError, EndFds, EndReport, EndSpec, Received, Role};
use super::pipes::{receive_by_copy, send_by_copy, splice};
use super::{IpcError, Mechanism};

/// Listens on 127.0.0.1:`port` (0: any free port); returns the socket and its port.
pub(crate) fn listen(port: u16) -> Result<(OwnedFd, u16), IpcError> {
    let listener = TcpListener::bind(("127.0.0.1", port)).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AddrInUse {
            IpcError::PortInUse { port }
        } else {
            IpcError::Setup {
                what: format!("listen on 127.0.0.1:{port}"),
                source: e,
            }
        }
    })?;
    let port = listener
        .local_addr()
        .map_err(|e| IpcError::Setup {
            what: "read the listening port".into(),
            source: e,
        })?
        .port();
    Ok((OwnedFd::from(listener), port))
}

/// A connected pair of Unix stream sockets.
pub(crate) fn socketpair() -> Result<(OwnedFd, OwnedFd), IpcError> {
    let (a, b) = UnixStream::pair().map_err(|e| IpcError::Setup {
        what: "create a Unix socket pair".into(),
        source: e,
    })?;
    Ok((OwnedFd::from(a), OwnedFd::from(b)))
}

/// The producer's connection to the consumer's port on 127.0.0.1.
pub(crate) fn connect(spec: &EndSpec) -> Result<File, EndError> {
    let port = spec
        .port
        .ok_or_else(|| EndError::Protocol("no port given".into()))?;
    let stream = TcpStream::connect(("127.0.0.1", port)).map_err(|e| EndError::Sys {
        call: "connect",
        source: e,
    })?;
    Ok(File::from(OwnedFd::from(stream)))
}

/// The consumer's side: the one connection on the listening socket it was given.
pub(crate) fn accept(listener: OwnedFd) -> Result<File, EndError> {
    let (stream, _) = TcpListener::from(listener)
        .accept()
        .map_err(|e| EndError::Sys {
            call: "accept",
            source: e,
        })?;
    Ok(File::from(OwnedFd::from(stream)))
}

fn sendfile_all(
    sock: &File,
    src: &File,
    bytes: u64,
    chunk: usize,
    report: &mut EndReport,
) -> Result<u64, EndError> {
    let mut offset: libc::off_t = 0;
    while (offset as u64) < bytes {
        let want = (bytes - offset as u64).min(chunk as u64) as usize;
        // SAFETY: offset points to a live off_t; both fds are ours.
        let ret = unsafe { libc::sendfile(sock.as_raw_fd(), src.as_raw_fd(), &mut offset, want) };
        let n = check("sendfile", ret)?;
        report.tally("sendfile", n as u64);
        if n == 0 {
            return Err(EndError::Protocol("source file ended early".into()));
        }
    }
    Ok(offset as u64)
}

fn splice_through_pipe(
    sock: &File,
    src: &File,
    bytes: u64,
    chunk: usize,
    report: &mut EndReport,
) -> Result<u64, EndError> {
    let (r, w) = rustix::pipe::pipe().map_err(|e| EndError::Sys {
        call: "pipe",
        source: e.into(),
    })?;
    let mut offset = 0i64;
    while (offset as u64) < bytes {
        let want = (bytes - offset as u64).min(chunk as u64) as usize;
        let mut queued = splice(
            src.as_raw_fd(),
            Some(&mut offset),
            w.as_raw_fd(),
            None,
            want,
        )?;
        report.tally("splice", queued as u64);
        if queued == 0 {
            return Err(EndError::Protocol("source file ended early".into()));
        }
        while queued > 0 {
            let n = splice(r.as_raw_fd(), None, sock.as_raw_fd(), None, queued)?;
            report.tally("splice", n as u64);
            queued -= n;
        }
    }
    Ok(offset as u64)
}

/// Both ends of `tcp-rw`, `tcp-sendfile`, `tcp-splice` and `unix-stream`.
pub(crate) fn end(
    spec: &EndSpec,
    mut fds: EndFds,
    received: &Received,
) -> Result<EndReport, EndError> {
    let fd = fds.data.take();
    let chunk = spec.chunk as usize;
    let tcp = spec.mechanism.is_tcp();
    let mut report = EndReport::default();
    if spec.role == Role::Producer {
        let mut sock = if tcp {
            connect(spec)?
        } else {
            File::from(fd.ok_or_else(|| EndError::Protocol("no socket given".into()))?)
        };
        let mut src = fds.src()?;
        report.start_ns = Some(now_ns());
        report.bytes = match spec.mechanism {
            Mechanism::TcpSendfile => sendfile_all(&sock, &src, spec.bytes, chunk, &mut report)?,
            Mechanism::TcpSplice => {
                splice_through_pipe(&sock, &src, spec.bytes, chunk, &mut report)?
            }
            _ => send_by_copy(&mut src, &mut sock, spec.bytes, chunk, &mut report)?,
        };
        return Ok(report);
    }
    let fd = fd.ok_or_else(|| EndError::Protocol("no socket given".into()))?;
    let mut sock = if tcp { accept(fd)? } else { File::from(fd) };
    let mut dst = fds.dst()?;
    let sum = receive_by_copy(&mut sock, &mut dst, chunk, received, &mut report)?;
    report.end_ns = Some(now_ns());
    report.bytes = sum.len();
    report.checksum = Some(sum.finish());
    Ok(report)
}
