//! Sockets: TCP on loopback (read + send, sendfile, splice through a pipe) and a
//! Unix domain stream socket. Every consumer reads into a buffer, hashes it and
//! writes it to a file, as the survey's receivers did.
//!
//! How a TCP run's ends find each other and no one else: the harness binds
//! both sockets before either end starts, the consumer's listener and the
//! producer's own socket ([`bound_socket`]), each on 127.0.0.1 with a port no
//! other socket can then take. The consumer takes the connection that comes
//! from the producer's address and closes any other unread ([`accept`]), so
//! a local program that watches /proc/net/tcp and connects first is refused,
//! and cannot stand in for the listener either while it waits.

use std::fs::File;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpListener};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;

use super::end::{check, now_ns, EndFds, IpcEndError, IpcEndReport, IpcEndSpec, IpcRole, Received};
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

/// The producer's own socket, made by the harness before either end starts:
/// bound to 127.0.0.1 on a free port, without SO_REUSEADDR or SO_REUSEPORT, so
/// that no other socket, another user's included, can take that address while
/// the run holds it. The consumer takes a connection from this address only
/// ([`accept`]). Returns the socket and its port.
pub(crate) fn bound_socket() -> Result<(OwnedFd, u16), IpcError> {
    use rustix::net::{AddressFamily, SocketFlags, SocketType};
    let setup = |what: &str| {
        let what = what.to_string();
        move |e: rustix::io::Errno| IpcError::Setup {
            what,
            source: e.into(),
        }
    };
    let socket = rustix::net::socket_with(
        AddressFamily::INET,
        SocketType::STREAM,
        SocketFlags::CLOEXEC,
        None,
    )
    .map_err(setup("create the producer's TCP socket"))?;
    rustix::net::bind(&socket, &SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0))
        .map_err(setup("bind the producer's socket to 127.0.0.1"))?;
    let port = rustix::net::getsockname(&socket)
        .ok()
        .and_then(|any| SocketAddrV4::try_from(any).ok())
        .map(|address| address.port())
        .ok_or_else(|| IpcError::Setup {
            what: "read the producer's port".into(),
            source: std::io::Error::other("not an IPv4 address"),
        })?;
    Ok((socket, port))
}

/// The producer's connection: its own bound socket (handed over by the
/// harness) connected to the consumer's port on 127.0.0.1.
pub(crate) fn connect(spec: &IpcEndSpec, socket: Option<OwnedFd>) -> Result<File, IpcEndError> {
    let port = spec
        .port
        .ok_or_else(|| IpcEndError::Protocol("no port given".into()))?;
    let socket = socket.ok_or_else(|| IpcEndError::Protocol("no socket given".into()))?;
    rustix::net::connect(&socket, &SocketAddrV4::new(Ipv4Addr::LOCALHOST, port)).map_err(|e| {
        IpcEndError::Sys {
            call: "connect",
            source: e.into(),
        }
    })?;
    Ok(File::from(socket))
}

/// The consumer's side: the connection from the producer's own address
/// (127.0.0.1, port `spec.peer_port`, which only the producer's socket can
/// hold), taken before a byte is read. Any other connection (a local program
/// that saw the port in /proc/net/tcp and came first) is closed unread, and the
/// consumer goes on listening until its producer comes (or the harness's
/// deadline ends the run); the listening socket is closed once it has. Returns
/// the connection and a note saying how many others were refused, if any.
pub(crate) fn accept(
    listener: OwnedFd,
    spec: &IpcEndSpec,
) -> Result<(File, Option<String>), IpcEndError> {
    let producer = SocketAddr::V4(SocketAddrV4::new(
        Ipv4Addr::LOCALHOST,
        spec.peer_port
            .ok_or_else(|| IpcEndError::Protocol("no producer port given".into()))?,
    ));
    let listener = TcpListener::from(listener);
    let mut refused = 0u64;
    loop {
        let (stream, from) = listener.accept().map_err(|e| IpcEndError::Sys {
            call: "accept",
            source: e,
        })?;
        if from == producer {
            let note = (refused > 0).then(|| refused_note(refused, &producer));
            return Ok((File::from(OwnedFd::from(stream)), note));
        }
        // Not ours: closed without reading, so none of its bytes count.
        refused += 1;
        drop(stream);
    }
}

/// What a result says when connections other than the producer's came to the
/// run's port: how many, and that none of their bytes were taken.
pub(crate) fn refused_note(refused: u64, producer: &SocketAddr) -> String {
    format!(
        "{refused} connection{} to this run's port came from another socket than the producer's ({producer}) and {} closed unread: another local program connected to it",
        if refused == 1 { "" } else { "s" },
        if refused == 1 { "was" } else { "were" },
    )
}

fn sendfile_all(
    sock: &File,
    src: &File,
    bytes: u64,
    chunk: usize,
    report: &mut IpcEndReport,
) -> Result<u64, IpcEndError> {
    let mut offset: libc::off_t = 0;
    while (offset as u64) < bytes {
        let want = (bytes - offset as u64).min(chunk as u64) as usize;
        // SAFETY: offset points to a live off_t; both fds are ours.
        let ret = unsafe { libc::sendfile(sock.as_raw_fd(), src.as_raw_fd(), &mut offset, want) };
        let n = check("sendfile", ret)?;
        report.tally("sendfile", n as u64);
        if n == 0 {
            return Err(IpcEndError::Protocol("source file ended early".into()));
        }
    }
    Ok(offset as u64)
}

fn splice_through_pipe(
    sock: &File,
    src: &File,
    bytes: u64,
    chunk: usize,
    report: &mut IpcEndReport,
) -> Result<u64, IpcEndError> {
    let (r, w) = rustix::pipe::pipe().map_err(|e| IpcEndError::Sys {
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
            return Err(IpcEndError::Protocol("source file ended early".into()));
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
    spec: &IpcEndSpec,
    mut fds: EndFds,
    received: &Received,
) -> Result<IpcEndReport, IpcEndError> {
    let fd = fds.data.take();
    let chunk = spec.chunk as usize;
    let tcp = spec.mechanism.is_tcp();
    let mut report = IpcEndReport::default();
    if spec.role == IpcRole::Producer {
        let mut sock = if tcp {
            connect(spec, fd)?
        } else {
            File::from(fd.ok_or_else(|| IpcEndError::Protocol("no socket given".into()))?)
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
    let fd = fd.ok_or_else(|| IpcEndError::Protocol("no socket given".into()))?;
    let mut sock = if tcp {
        let (sock, note) = accept(fd, spec)?;
        report.notes.extend(note);
        sock
    } else {
        File::from(fd)
    };
    let mut dst = fds.dst()?;
    let sum = receive_by_copy(&mut sock, &mut dst, chunk, received, &mut report)?;
    report.end_ns = Some(now_ns());
    report.bytes = sum.len();
    report.checksum = Some(sum.finish());
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::intruder::{can_listen_on, Intruder};
    use std::io::{Read, Write};

    fn consumer_spec(port: u16, peer_port: u16) -> IpcEndSpec {
        IpcEndSpec {
            role: IpcRole::Consumer,
            mechanism: Mechanism::TcpRw,
            bytes: 4,
            chunk: 8,
            has_src: false,
            has_dst: false,
            shared: None,
            shm_name: None,
            sysv_id: None,
            port: Some(port),
            peer_port: Some(peer_port),
            has_fd: true,
            has_control: false,
            no_counts: true,
        }
    }

    #[test]
    fn a_consumer_takes_its_producer_only_and_never_reads_an_intruder_that_came_first() {
        let (listener, port) = listen(0).unwrap();
        let (socket, peer_port) = bound_socket().unwrap();
        // As nobody: neither end's address can be taken, but the port can be
        // connected to, first, with bytes that look like data.
        assert!(!can_listen_on(port));
        assert!(!can_listen_on(peer_port));
        let intruder = Intruder::connect(SocketAddr::from((Ipv4Addr::LOCALHOST, port)), 4096);
        let spec = consumer_spec(port, peer_port);
        let mut producer = connect(&spec, Some(socket)).unwrap();
        producer.write_all(b"real").unwrap();
        let (mut sock, note) = accept(listener, &spec).unwrap();
        let note = note.expect("the intruder is counted");
        assert!(note.starts_with("1 connection "), "{note}");
        let mut got = [0u8; 4];
        sock.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"real");
        let outcome = intruder.outcome();
        assert!(outcome.starts_with("error"), "closed unread: {outcome}");
        // Once the producer is in, the listener is gone and its port free
        // again: too late to stand in for anyone (and proof that the refusals
        // above were the kernel's, not a perl that cannot listen at all).
        assert!(can_listen_on(port));
    }
}
