//! An end's side of a mechanism: send one message, receive one, blocking or
//! busy-polling. The descriptors arrive in the one fd map
//! ([`crate::process::launch`]): fd 0 receives and fd 1 sends (pipes, FIFOs once
//! opened, eventfds, POSIX queues; for the message ring, this end's io_uring
//! and the other end's), fd 5 is a socket both ways, fd 4 the shared region
//! ([`super::shared::LatencyRegion`]).

use std::collections::BTreeMap;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use super::shared::{LatencyRegion, SLOTS};
use super::{LatencyMechanism, Mode};

/// Which end this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum LatencyRole {
    /// Sends first and times the round trips.
    Ping,
    /// Echoes every message back.
    Pong,
}

impl LatencyRole {
    /// `ping` or `pong`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            LatencyRole::Ping => "ping",
            LatencyRole::Pong => "pong",
        }
    }
}

/// A system call an end makes to send or receive, named as the end calls it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Call {
    Write,
    Read,
    IoUringEnter,
    Send,
    Recv,
    Futex,
    MqSend,
    MqReceive,
    Msgsnd,
    Msgrcv,
}

/// How many kinds of [`Call`] there are.
pub(crate) const CALL_KINDS: usize = 10;

/// The names of [`Call`], in its order.
const CALL_NAMES: [&str; CALL_KINDS] = [
    "write",
    "read",
    "io_uring_enter",
    "send",
    "recv",
    "futex",
    "mq_send",
    "mq_receive",
    "msgsnd",
    "msgrcv",
];

/// The calls this end has made, by kind, every one (EAGAIN and EINTR retries
/// and futex waits included), counted at the call. An end is one thread of
/// its own process, so a plain load and store (no locked add) keeps the
/// count beside a call that costs hundreds of times more.
static CALLS: [AtomicU64; CALL_KINDS] = [const { AtomicU64::new(0) }; CALL_KINDS];

/// Counts one call of `call`.
#[inline(always)]
fn made(call: Call) {
    let count = &CALLS[call as usize];
    count.store(count.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
}

/// The tally so far: take one at each end of a window.
pub(crate) fn calls_made() -> [u64; CALL_KINDS] {
    std::array::from_fn(|i| CALLS[i].load(Ordering::Relaxed))
}

/// The calls made since `before`, by name (kinds it did not make left out).
pub(crate) fn calls_since(before: [u64; CALL_KINDS]) -> BTreeMap<String, u64> {
    let now = calls_made();
    CALL_NAMES
        .iter()
        .zip(now.iter().zip(before))
        .filter(|(_, (now, before))| **now > *before)
        .map(|(name, (now, before))| (name.to_string(), now - before))
        .collect()
}

/// A failed send or receive, in words.
pub(crate) type ChannelResult = Result<(), String>;

/// One end's way to send and receive.
pub(crate) enum Channel {
    /// A byte stream: pipes, FIFOs, Unix stream sockets, TCP.
    Stream { rx: OwnedFd, tx: OwnedFd },
    /// A datagram socket.
    Dgram { fd: OwnedFd },
    /// eventfd doorbells; the message goes through the shared region.
    Eventfd { rx: OwnedFd, tx: OwnedFd },
    /// A futex word per direction; the message beside it.
    Futex { seq_out: u32, seq_in: u32 },
    /// The polled ring.
    Ring { head: u64, tail: u64 },
    /// Two POSIX queues (fd 0 in, fd 1 out).
    PosixMq { rx: RawFd, tx: RawFd },
    /// One System V queue; type 1 towards pong, 2 towards ping.
    SysvMq { id: i32, buffer: Vec<u8> },
    /// Pipes whose reads and writes go through this end's io_uring.
    Uring {
        ring: Box<io_uring::IoUring>,
        rx: OwnedFd,
        tx: OwnedFd,
    },
    /// This end's io_uring, where the other end's messages complete, and the
    /// other end's, which this end's MSG_RING names; the message beside them
    /// in the shared region.
    MsgRing {
        ring: Box<io_uring::IoUring>,
        peer: OwnedFd,
        sent: u64,
    },
}

/// `user_data` of this end's own MSG_RING entries: their completions are
/// skipped on success (IOSQE_CQE_SKIP_SUCCESS), so one that arrives is a
/// failure, told apart from the other end's messages (numbered from 1).
const MSG_RING_FAILED: u64 = u64::MAX;

/// What an end needs to open its channel.
pub(crate) struct Opening<'a> {
    pub mechanism: LatencyMechanism,
    pub mode: Mode,
    pub role: LatencyRole,
    pub size: usize,
    pub fifos: Option<&'a [PathBuf; 2]>,
    pub msg_queue: Option<i32>,
    pub ring_params: Option<&'a [u8]>,
    pub region: &'a LatencyRegion,
}

fn errno(call: &str) -> String {
    format!("{call}: {}", std::io::Error::last_os_error())
}

/// Takes over a descriptor the launcher placed.
fn inherited(fd: RawFd) -> OwnedFd {
    // SAFETY: the launcher put this descriptor here for this end to own.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

fn set_nonblocking(fd: &OwnedFd) -> Result<(), String> {
    let flags = rustix::fs::fcntl_getfl(fd).map_err(|e| format!("fcntl: {e}"))?;
    rustix::fs::fcntl_setfl(fd, flags | rustix::fs::OFlags::NONBLOCK)
        .map_err(|e| format!("fcntl: {e}"))
}

impl Channel {
    /// Opens this end's channel.
    pub(crate) fn open(o: &Opening<'_>) -> Result<Channel, String> {
        let busy = o.mode == Mode::Busy;
        let channel = match o.mechanism {
            LatencyMechanism::Pipe | LatencyMechanism::Eventfd => {
                let (rx, tx) = (inherited(0), inherited(1));
                if busy {
                    set_nonblocking(&rx)?;
                    set_nonblocking(&tx)?;
                }
                match o.mechanism {
                    LatencyMechanism::Pipe => Channel::Stream { rx, tx },
                    _ => Channel::Eventfd { rx, tx },
                }
            }
            LatencyMechanism::IoUring => {
                // The pipes stay blocking: io_uring waits for them itself, and
                // the mode decides only how this end waits for the completion.
                let ring = io_uring::IoUring::new(4).map_err(|e| format!("io_uring_setup: {e}"))?;
                Channel::Uring {
                    ring: Box::new(ring),
                    rx: inherited(0),
                    tx: inherited(1),
                }
            }
            LatencyMechanism::IoUringMsgRing => open_msg_ring(o)?,
            LatencyMechanism::Fifo => open_fifos(o, busy)?,
            LatencyMechanism::UnixStream | LatencyMechanism::Tcp | LatencyMechanism::UnixDgram => {
                open_socket(o.mechanism, busy)?
            }
            LatencyMechanism::Futex => Channel::Futex {
                seq_out: 0,
                seq_in: 0,
            },
            LatencyMechanism::ShmRing => Channel::Ring { head: 0, tail: 0 },
            LatencyMechanism::PosixMq => {
                if busy {
                    posix_mq_nonblocking()?;
                }
                Channel::PosixMq { rx: 0, tx: 1 }
            }
            LatencyMechanism::SysvMq => Channel::SysvMq {
                id: o.msg_queue.ok_or("no queue id was given")?,
                buffer: vec![0u8; std::mem::size_of::<libc::c_long>() + o.size],
            },
        };
        Ok(channel)
    }

    /// Sends `msg` (busy: never sleeps).
    pub(crate) fn send(&mut self, o: &Opening<'_>, msg: &[u8]) -> ChannelResult {
        let busy = o.mode == Mode::Busy;
        let to_pong = o.role == LatencyRole::Ping;
        match self {
            Channel::Stream { tx, .. } => write_all(tx, msg),
            Channel::Uring { ring, tx, .. } => uring_write(ring, tx, busy, msg),
            Channel::MsgRing { ring, peer, sent } => {
                copy_in(o.region, to_pong, 0, msg);
                msg_ring_send(ring, peer, sent)
            }
            Channel::Dgram { fd } => dgram_send(fd, msg),
            Channel::Eventfd { tx, .. } => {
                copy_in(o.region, to_pong, 0, msg);
                write_all(tx, &1u64.to_ne_bytes())
            }
            Channel::Futex { seq_out, .. } => {
                copy_in(o.region, to_pong, 0, msg);
                futex_send(seq_out, word(o.region, to_pong), busy);
                Ok(())
            }
            Channel::Ring { head, .. } => {
                ring_send(head, o.region, to_pong, msg);
                Ok(())
            }
            Channel::PosixMq { tx, .. } => posix_mq_send(*tx, msg),
            Channel::SysvMq { id, buffer } => sysv_send(*id, buffer, to_pong, busy, msg),
        }
    }

    /// Receives one message into `buf` (busy: never sleeps).
    pub(crate) fn recv(&mut self, o: &Opening<'_>, buf: &mut [u8]) -> ChannelResult {
        let busy = o.mode == Mode::Busy;
        let from_ping = o.role == LatencyRole::Pong;
        match self {
            Channel::Stream { rx, .. } => read_exact(rx, buf),
            Channel::Uring { ring, rx, .. } => uring_read(ring, rx, busy, buf),
            Channel::MsgRing { ring, .. } => {
                msg_ring_recv(ring, busy)?;
                copy_out(o.region, from_ping, 0, buf);
                Ok(())
            }
            Channel::Dgram { fd } => dgram_recv(fd, buf),
            Channel::Eventfd { rx, .. } => {
                let mut count = [0u8; 8];
                read_exact(rx, &mut count)?;
                copy_out(o.region, from_ping, 0, buf);
                Ok(())
            }
            Channel::Futex { seq_in, .. } => {
                futex_recv(seq_in, word(o.region, from_ping), busy);
                copy_out(o.region, from_ping, 0, buf);
                Ok(())
            }
            Channel::Ring { tail, .. } => {
                ring_recv(tail, o.region, from_ping, buf);
                Ok(())
            }
            Channel::PosixMq { rx, .. } => posix_mq_recv(*rx, buf),
            Channel::SysvMq { id, buffer } => sysv_recv(*id, buffer, from_ping, busy, buf),
        }
    }
}

/// The message ring: this end's io_uring, made by the harness at fd 0 with
/// the parameters the kernel filled in, and the other end's at fd 1.
fn open_msg_ring(o: &Opening<'_>) -> Result<Channel, String> {
    let params = o.ring_params.ok_or("no ring parameters were given")?;
    if params.len() != std::mem::size_of::<io_uring::Parameters>() {
        return Err(format!(
            "ring parameters of {} bytes, {} expected",
            params.len(),
            std::mem::size_of::<io_uring::Parameters>()
        ));
    }
    // SAFETY: `Parameters` is a transparent wrapper of the kernel's
    // io_uring_params, plain integers; these are the bytes the
    // kernel filled in when the harness made the ring at fd 0,
    // which this end owns from now on.
    let ring = unsafe {
        let params = std::ptr::read_unaligned(params.as_ptr().cast::<io_uring::Parameters>());
        io_uring::IoUring::from_fd(inherited(0).into_raw_fd(), params)
    }
    .map_err(|e| format!("map this end's io_uring: {e}"))?;
    Ok(Channel::MsgRing {
        ring: Box::new(ring),
        peer: inherited(1),
        sent: 0,
    })
}

/// The two FIFOs, opened by name in the order that lets both ends meet.
fn open_fifos(o: &Opening<'_>, busy: bool) -> Result<Channel, String> {
    let fifos = o.fifos.ok_or("no FIFO paths were given")?;
    let open = |path: &PathBuf, write: bool| {
        let flags = if write {
            rustix::fs::OFlags::WRONLY
        } else {
            rustix::fs::OFlags::RDONLY
        };
        rustix::fs::open(
            path,
            flags | rustix::fs::OFlags::CLOEXEC | rustix::fs::OFlags::NOFOLLOW,
            rustix::fs::Mode::empty(),
        )
        .map_err(|e| format!("open {}: {e}", path.display()))
    };
    // Opening a FIFO waits for the other side: ping opens towards
    // pong first and pong opens that one first too, so they meet.
    let (rx, tx) = match o.role {
        LatencyRole::Ping => {
            let tx = open(&fifos[0], true)?;
            (open(&fifos[1], false)?, tx)
        }
        LatencyRole::Pong => {
            let rx = open(&fifos[0], false)?;
            (rx, open(&fifos[1], true)?)
        }
    };
    if busy {
        set_nonblocking(&rx)?;
        set_nonblocking(&tx)?;
    }
    Ok(Channel::Stream { rx, tx })
}

/// The socket the launcher placed, both ways: a stream or a datagram socket.
fn open_socket(mechanism: LatencyMechanism, busy: bool) -> Result<Channel, String> {
    let fd = inherited(crate::process::launch::DATA_FD);
    if busy {
        set_nonblocking(&fd)?;
    }
    if mechanism == LatencyMechanism::UnixDgram {
        Ok(Channel::Dgram { fd })
    } else {
        let tx = fd.try_clone().map_err(|e| format!("dup: {e}"))?;
        Ok(Channel::Stream { rx: fd, tx })
    }
}

/// Makes both POSIX queues (fd 0 and 1) non-blocking, for busy polling.
fn posix_mq_nonblocking() -> Result<(), String> {
    for fd in [0, 1] {
        // SAFETY: mq_getattr/mq_setattr on the queue descriptors
        // the launcher placed, with structs we own.
        unsafe {
            let mut attr: libc::mq_attr = std::mem::zeroed();
            attr.mq_flags = libc::O_NONBLOCK as _;
            if libc::mq_setattr(fd, &attr, std::ptr::null_mut()) != 0 {
                return Err(errno("mq_setattr"));
            }
        }
    }
    Ok(())
}

/// Writes all of `msg` to the pipe `tx` through this end's io_uring.
#[inline]
fn uring_write(
    ring: &mut io_uring::IoUring,
    tx: &OwnedFd,
    busy: bool,
    msg: &[u8],
) -> ChannelResult {
    let mut done = 0;
    while done < msg.len() {
        let rest = &msg[done..];
        let write = io_uring::opcode::Write::new(
            io_uring::types::Fd(tx.as_raw_fd()),
            rest.as_ptr(),
            rest.len() as u32,
        )
        .build();
        done += uring_one(ring, write, busy, "write")?;
    }
    Ok(())
}

/// Reads all of `buf` from the pipe `rx` through this end's io_uring.
#[inline]
fn uring_read(
    ring: &mut io_uring::IoUring,
    rx: &OwnedFd,
    busy: bool,
    buf: &mut [u8],
) -> ChannelResult {
    let mut done = 0;
    while done < buf.len() {
        let rest = &mut buf[done..];
        let read = io_uring::opcode::Read::new(
            io_uring::types::Fd(rx.as_raw_fd()),
            rest.as_mut_ptr(),
            rest.len() as u32,
        )
        .build();
        match uring_one(ring, read, busy, "read")? {
            0 => return Err("the other end is gone".into()),
            n => done += n,
        }
    }
    Ok(())
}

/// Rings the other end's io_uring with the next message's number (the
/// message itself is already in the region).
#[inline]
fn msg_ring_send(ring: &mut io_uring::IoUring, peer: &OwnedFd, sent: &mut u64) -> ChannelResult {
    *sent += 1;
    // The other end's completion carries the message's number;
    // this end's own is skipped unless the kernel refused.
    let entry =
        io_uring::opcode::MsgRingData::new(io_uring::types::Fd(peer.as_raw_fd()), 0, *sent, None)
            .build()
            .flags(io_uring::squeue::Flags::SKIP_SUCCESS)
            .user_data(MSG_RING_FAILED);
    // SAFETY: the entry points at no memory of ours.
    unsafe { ring.submission().push(&entry) }.map_err(|_| "the submission queue is full")?;
    while !enter(ring, 0)? {}
    Ok(())
}

/// Waits for the other end's next message to complete on this end's ring.
#[inline]
fn msg_ring_recv(ring: &mut io_uring::IoUring, busy: bool) -> ChannelResult {
    let cqe = loop {
        if let Some(cqe) = ring.completion().next() {
            break cqe;
        }
        if busy {
            std::hint::spin_loop();
            continue;
        }
        enter(ring, 1)?;
    };
    if cqe.user_data() == MSG_RING_FAILED {
        return Err(format!(
            "IORING_OP_MSG_RING: {}",
            std::io::Error::from_raw_os_error(-cqe.result())
        ));
    }
    Ok(())
}

/// One `io_uring_enter`, counted, waiting for `want` completions: `Ok(false)`
/// when a signal interrupted it.
#[inline(always)]
fn enter(ring: &mut io_uring::IoUring, want: usize) -> Result<bool, String> {
    made(Call::IoUringEnter);
    match ring.submit_and_wait(want) {
        Ok(_) => Ok(true),
        Err(e) if e.raw_os_error() == Some(libc::EINTR) => Ok(false),
        Err(e) => Err(format!("io_uring_enter: {e}")),
    }
}

/// Sends one datagram, retrying while the socket is full.
#[inline]
fn dgram_send(fd: &OwnedFd, msg: &[u8]) -> ChannelResult {
    loop {
        made(Call::Send);
        match rustix::net::send(fd, msg, rustix::net::SendFlags::empty()) {
            Ok(n) if n == msg.len() => return Ok(()),
            Ok(n) => return Err(format!("send took {n} of {} bytes", msg.len())),
            Err(rustix::io::Errno::AGAIN) | Err(rustix::io::Errno::INTR) => std::hint::spin_loop(),
            Err(e) => return Err(format!("send: {e}")),
        }
    }
}

/// Receives one datagram of exactly `buf`'s size.
#[inline]
fn dgram_recv(fd: &OwnedFd, buf: &mut [u8]) -> ChannelResult {
    loop {
        made(Call::Recv);
        match rustix::net::recv(fd, &mut *buf, rustix::net::RecvFlags::empty()) {
            Ok((n, _)) if n == buf.len() => return Ok(()),
            Ok((0, _)) => return Err("the other end is gone".into()),
            Ok((n, _)) => return Err(format!("a datagram of {n} bytes, {} expected", buf.len())),
            Err(rustix::io::Errno::AGAIN) | Err(rustix::io::Errno::INTR) => std::hint::spin_loop(),
            Err(e) => return Err(format!("recv: {e}")),
        }
    }
}

/// Publishes the next sequence number in `word` (the message is already
/// beside it) and, blocking, wakes the other end.
#[inline]
fn futex_send(seq_out: &mut u32, word: &AtomicU32, busy: bool) {
    *seq_out = seq_out.wrapping_add(1);
    word.store(*seq_out, Ordering::Release);
    if !busy {
        made(Call::Futex);
        futex_wake(word);
    }
}

/// Waits until `word` holds the next sequence number: spinning when busy,
/// else in FUTEX_WAIT.
#[inline]
fn futex_recv(seq_in: &mut u32, word: &AtomicU32, busy: bool) {
    let expected = seq_in.wrapping_add(1);
    loop {
        let now = word.load(Ordering::Acquire);
        if now == expected {
            break;
        }
        if busy {
            std::hint::spin_loop();
        } else {
            made(Call::Futex);
            futex_wait(word, now);
        }
    }
    *seq_in = expected;
}

/// Puts `msg` in the polled ring's next slot once there is room.
#[inline]
fn ring_send(head: &mut u64, region: &LatencyRegion, to_pong: bool, msg: &[u8]) {
    let (h, t) = ring(region, to_pong);
    // Room for one more: the reader is at most SLOTS behind.
    while *head - t.load(Ordering::Acquire) >= SLOTS as u64 {
        std::hint::spin_loop();
    }
    copy_in(region, to_pong, *head as usize, msg);
    *head += 1;
    h.store(*head, Ordering::Release);
}

/// Takes the polled ring's next message once there is one.
#[inline]
fn ring_recv(tail: &mut u64, region: &LatencyRegion, from_ping: bool, buf: &mut [u8]) {
    let (h, t) = ring(region, from_ping);
    while h.load(Ordering::Acquire) <= *tail {
        std::hint::spin_loop();
    }
    copy_out(region, from_ping, *tail as usize, buf);
    *tail += 1;
    t.store(*tail, Ordering::Release);
}

/// After a queue call failed: `Ok` to try again (the queue was full or
/// empty, or a signal came), else the call's error.
#[inline(always)]
fn again(call: &str) -> ChannelResult {
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::EAGAIN) | Some(libc::EINTR) => {
            std::hint::spin_loop();
            Ok(())
        }
        _ => Err(errno(call)),
    }
}

/// Sends `msg` on the POSIX queue `tx`.
#[inline]
fn posix_mq_send(tx: RawFd, msg: &[u8]) -> ChannelResult {
    loop {
        made(Call::MqSend);
        // SAFETY: msg is a live buffer of msg.len() bytes.
        let r = unsafe { libc::mq_send(tx, msg.as_ptr().cast(), msg.len(), 0) };
        if r == 0 {
            return Ok(());
        }
        again("mq_send")?;
    }
}

/// Receives one message of exactly `buf`'s size from the POSIX queue `rx`.
#[inline]
fn posix_mq_recv(rx: RawFd, buf: &mut [u8]) -> ChannelResult {
    loop {
        let mut priority = 0u32;
        made(Call::MqReceive);
        // SAFETY: buf is a live buffer of buf.len() bytes, the queue's
        // message size.
        let r = unsafe { libc::mq_receive(rx, buf.as_mut_ptr().cast(), buf.len(), &mut priority) };
        if r >= 0 {
            return match r as usize == buf.len() {
                true => Ok(()),
                false => Err(format!("a message of {r} bytes, {} expected", buf.len())),
            };
        }
        again("mq_receive")?;
    }
}

/// Sends `msg` on the System V queue `id`, typed for the other end.
#[inline]
fn sysv_send(id: i32, buffer: &mut [u8], to_pong: bool, busy: bool, msg: &[u8]) -> ChannelResult {
    let head = std::mem::size_of::<libc::c_long>();
    let kind: libc::c_long = if to_pong { 1 } else { 2 };
    buffer[..head].copy_from_slice(&kind.to_ne_bytes());
    buffer[head..head + msg.len()].copy_from_slice(msg);
    let flags = if busy { libc::IPC_NOWAIT } else { 0 };
    loop {
        made(Call::Msgsnd);
        // SAFETY: buffer holds a c_long type then msg.len() bytes.
        let r = unsafe { libc::msgsnd(id, buffer.as_ptr().cast(), msg.len(), flags) };
        if r == 0 {
            return Ok(());
        }
        again("msgsnd")?;
    }
}

/// Receives one message of exactly `buf`'s size from the System V queue
/// `id`, of the type the other end sends.
#[inline]
fn sysv_recv(
    id: i32,
    buffer: &mut [u8],
    from_ping: bool,
    busy: bool,
    buf: &mut [u8],
) -> ChannelResult {
    let head = std::mem::size_of::<libc::c_long>();
    let kind: libc::c_long = if from_ping { 1 } else { 2 };
    let flags = if busy { libc::IPC_NOWAIT } else { 0 };
    loop {
        made(Call::Msgrcv);
        // SAFETY: buffer holds a c_long then buf.len() bytes.
        let r = unsafe { libc::msgrcv(id, buffer.as_mut_ptr().cast(), buf.len(), kind, flags) };
        if r >= 0 {
            if r as usize != buf.len() {
                return Err(format!("a message of {r} bytes, {} expected", buf.len()));
            }
            buf.copy_from_slice(&buffer[head..head + buf.len()]);
            return Ok(());
        }
        match std::io::Error::last_os_error().raw_os_error() {
            Some(libc::ENOMSG) | Some(libc::EAGAIN) | Some(libc::EINTR) => std::hint::spin_loop(),
            _ => return Err(errno("msgrcv")),
        }
    }
}

/// Submits one operation and waits for its completion: in the kernel
/// (`io_uring_enter` with a wait of one) when blocking, or by entering without
/// waiting and looking at the completion queue again when busy. Returns the
/// bytes it moved.
fn uring_one(
    ring: &mut io_uring::IoUring,
    entry: io_uring::squeue::Entry,
    busy: bool,
    what: &str,
) -> Result<usize, String> {
    // SAFETY: the buffer the entry points at is borrowed by the caller until
    // this returns, and this returns only once the operation has completed.
    unsafe { ring.submission().push(&entry) }.map_err(|_| "the submission queue is full")?;
    loop {
        enter(ring, if busy { 0 } else { 1 })?;
        if let Some(cqe) = ring.completion().next() {
            return match cqe.result() {
                n if n >= 0 => Ok(n as usize),
                errno => Err(format!(
                    "io_uring {what}: {}",
                    std::io::Error::from_raw_os_error(-errno)
                )),
            };
        }
        if busy {
            std::hint::spin_loop();
        }
    }
}

fn write_all(fd: &OwnedFd, mut data: &[u8]) -> ChannelResult {
    while !data.is_empty() {
        made(Call::Write);
        match rustix::io::write(fd, data) {
            Ok(n) => data = &data[n..],
            Err(rustix::io::Errno::AGAIN) | Err(rustix::io::Errno::INTR) => std::hint::spin_loop(),
            Err(e) => return Err(format!("write: {e}")),
        }
    }
    Ok(())
}

fn read_exact(fd: &OwnedFd, mut buf: &mut [u8]) -> ChannelResult {
    while !buf.is_empty() {
        made(Call::Read);
        match rustix::io::read(fd.as_fd(), &mut *buf) {
            Ok(0) => return Err("the other end is gone".into()),
            Ok(n) => buf = &mut buf[n..],
            Err(rustix::io::Errno::AGAIN) | Err(rustix::io::Errno::INTR) => std::hint::spin_loop(),
            Err(e) => return Err(format!("read: {e}")),
        }
    }
    Ok(())
}

fn word(region: &LatencyRegion, to_pong: bool) -> &AtomicU32 {
    match to_pong {
        true => &region.header().to_pong.0,
        false => &region.header().to_ping.0,
    }
}

fn ring(
    region: &LatencyRegion,
    to_pong: bool,
) -> (&std::sync::atomic::AtomicU64, &std::sync::atomic::AtomicU64) {
    let h = region.header();
    match to_pong {
        true => (&h.ring_a_head.0, &h.ring_a_tail.0),
        false => (&h.ring_b_head.0, &h.ring_b_tail.0),
    }
}

fn copy_in(region: &LatencyRegion, to_pong: bool, slot: usize, msg: &[u8]) {
    // SAFETY: the slot is at least msg.len() bytes (the region was made for this
    // size) and the receiver does not read it until the release store that
    // follows.
    unsafe { std::ptr::copy_nonoverlapping(msg.as_ptr(), region.slot(to_pong, slot), msg.len()) }
}

fn copy_out(region: &LatencyRegion, to_pong: bool, slot: usize, buf: &mut [u8]) {
    // SAFETY: as copy_in; the sender wrote it before the acquire load we saw.
    unsafe {
        std::ptr::copy_nonoverlapping(region.slot(to_pong, slot), buf.as_mut_ptr(), buf.len())
    }
}

fn futex_wait(word: &AtomicU32, expected: u32) {
    // SAFETY: FUTEX_WAIT on a live, aligned u32 in shared memory (not PRIVATE:
    // the other end is another process). It returns at once if the word moved.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            std::ptr::null::<libc::timespec>(),
        );
    }
}

fn futex_wake(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE on a live, aligned u32 in shared memory.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, 1);
    }
}
