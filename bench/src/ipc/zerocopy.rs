//! Modern zero-copy: `send(MSG_ZEROCOPY)` with its completions read from the
//! socket's error queue, `getsockopt(TCP_ZEROCOPY_RECEIVE)` into an mmap of the
//! socket, io_uring's `IORING_OP_SEND_ZC`, `copy_file_range` and a reflink
//! (`ioctl(FICLONE)`).
//!
//! Each says what it found beside its time: how many sends the kernel reported
//! as copied after all (a skb looped to a local socket is copied before it is
//! delivered, so on loopback they all are), how many bytes arrived mapped rather
//! than copied. What a kernel or file system lacks is refused before anything
//! runs, typed ([`Unsupported`]), with what to do.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;

use super::data::Checksum;
use super::end::{self, now_ns, EndFds, IpcEndError, IpcEndReport, IpcEndSpec, IpcRole, Received};
use super::pipes::{checksum_file, receive_by_copy, send_by_copy};
use super::sockets::{accept, connect};
use super::{IpcError, Mechanism};

/// `SO_ZEROCOPY` (asm-generic/socket.h; the libc crate does not name it).
const SO_ZEROCOPY: libc::c_int = 60;
/// `SO_EE_ORIGIN_ZEROCOPY` (linux/errqueue.h): a completion of MSG_ZEROCOPY sends.
const SO_EE_ORIGIN_ZEROCOPY: u8 = 5;
/// `SO_EE_CODE_ZEROCOPY_COPIED`: the kernel copied the range after all.
const SO_EE_CODE_ZEROCOPY_COPIED: u8 = 1;
/// `IORING_SEND_ZC_REPORT_USAGE` (6.2): the notification says if it copied.
const IORING_SEND_ZC_REPORT_USAGE: u16 = 1 << 3;
/// `IORING_NOTIF_USAGE_ZC_COPIED`: set in a notification's result when it copied.
const IORING_NOTIF_USAGE_ZC_COPIED: i32 = i32::MIN;
/// Buffers in flight: a buffer handed to a zero-copy send is not reused before
/// the kernel says it is done with it.
const SLOTS: usize = 8;

/// The page size: the unit TCP_ZEROCOPY_RECEIVE maps.
pub(crate) fn page() -> u64 {
    crate::ends::buffer::page_size() as u64
}

/// Why a zero-copy mechanism cannot run on this machine.
#[derive(Debug, thiserror::Error)]
pub enum Unsupported {
    /// The kernel does not know the option or operation.
    #[error(
        "this kernel does not offer {feature} (it came in Linux {since}): run on a newer kernel"
    )]
    Kernel {
        /// What is missing.
        feature: &'static str,
        /// The first Linux version that has it.
        since: &'static str,
    },
    /// io_uring is switched off by the administrator.
    #[error("io_uring is disabled here (kernel.io_uring_disabled = {value}): ask the administrator for `sysctl -w kernel.io_uring_disabled=0`, or run as a member of kernel.io_uring_group when it is 1")]
    IoUringDisabled {
        /// The sysctl's value.
        value: String,
    },
    /// A call the mechanism needs was refused (a container's seccomp filter, a
    /// security module).
    #[error("{call} was refused ({source}): a seccomp filter or security policy blocks it; run outside the container or allow the call")]
    Refused {
        /// The call.
        call: &'static str,
        /// Its error.
        source: std::io::Error,
    },
    /// The file system cannot share extents.
    #[error("{dir} is on {filesystem}, which cannot share blocks between files: pass --dir on btrfs, or on xfs made with reflink=1 (the default since xfsprogs 5.1)")]
    NoReflink {
        /// The folder.
        dir: String,
        /// Its file system.
        filesystem: String,
    },
}

fn refused(call: &'static str) -> impl FnOnce(std::io::Error) -> IpcError {
    move |source| match source.raw_os_error() {
        Some(libc::ENOSYS) => IpcError::Unsupported(Unsupported::Kernel {
            feature: call,
            since: "5.1",
        }),
        _ => IpcError::Unsupported(Unsupported::Refused { call, source }),
    }
}

/// Checks, without running, that this kernel offers what `mechanism` needs.
pub(crate) fn check(mechanism: Mechanism) -> Result<(), IpcError> {
    match mechanism {
        Mechanism::TcpMsgZerocopy => {
            let sock = tcp_socket()?;
            enable_zerocopy(sock.as_raw_fd()).map_err(|source| match source.raw_os_error() {
                Some(libc::ENOPROTOOPT) | Some(libc::EINVAL) => {
                    IpcError::Unsupported(Unsupported::Kernel {
                        feature: "SO_ZEROCOPY / MSG_ZEROCOPY",
                        since: "4.14",
                    })
                }
                _ => IpcError::Unsupported(Unsupported::Refused {
                    call: "setsockopt(SO_ZEROCOPY)",
                    source,
                }),
            })
        }
        Mechanism::TcpZerocopyReceive => {
            // On an unconnected socket a kernel that knows the option fails
            // on the missing mapping (EINVAL) or connection (ENOTCONN); one
            // that does not answers ENOPROTOOPT.
            let sock = tcp_socket()?;
            let mut zc = ZerocopyReceive::default();
            match zerocopy_receive(sock.as_raw_fd(), &mut zc) {
                Err(e) if e.raw_os_error() == Some(libc::ENOPROTOOPT) => {
                    Err(IpcError::Unsupported(Unsupported::Kernel {
                        feature: "TCP_ZEROCOPY_RECEIVE",
                        since: "4.18",
                    }))
                }
                Err(e) if e.raw_os_error() == Some(libc::EPERM) => {
                    Err(refused("getsockopt(TCP_ZEROCOPY_RECEIVE)")(e))
                }
                _ => Ok(()),
            }
        }
        Mechanism::UringSendZc => {
            let ring = new_ring()?;
            let mut probe = io_uring::register::Probe::new();
            ring.submitter()
                .register_probe(&mut probe)
                .map_err(refused("io_uring_register(PROBE)"))?;
            if !probe.is_supported(io_uring::opcode::SendZc::CODE) {
                return Err(IpcError::Unsupported(Unsupported::Kernel {
                    feature: "IORING_OP_SEND_ZC",
                    since: "6.0",
                }));
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn new_ring() -> Result<io_uring::IoUring, IpcError> {
    io_uring::IoUring::new(2 * SLOTS as u32).map_err(|source| {
        let disabled = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
            .ok()
            .map(|v| v.trim().to_string())
            .filter(|v| v != "0");
        match (source.raw_os_error(), disabled) {
            (Some(libc::ENOSYS), None) => IpcError::Unsupported(Unsupported::Kernel {
                feature: "io_uring",
                since: "5.1",
            }),
            (_, Some(value)) => IpcError::Unsupported(Unsupported::IoUringDisabled { value }),
            _ => IpcError::Unsupported(Unsupported::Refused {
                call: "io_uring_setup",
                source,
            }),
        }
    })
}

fn tcp_socket() -> Result<OwnedFd, IpcError> {
    // SAFETY: socket returns a fresh descriptor we own, or -1.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(IpcError::Setup {
            what: "create a TCP socket".into(),
            source: std::io::Error::last_os_error(),
        });
    }
    // SAFETY: as above.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn enable_zerocopy(fd: RawFd) -> std::io::Result<()> {
    let one: libc::c_int = 1;
    // SAFETY: setsockopt reads one c_int from the pointer we pass.
    let ret = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            SO_ZEROCOPY,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if ret < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Probes, on the run's two empty files, whether their file system shares
/// extents (the ioctl fails at once where it cannot).
pub(crate) fn probe_reflink(src: &File, dst: &File, dir: &Path, fs: &str) -> Result<(), IpcError> {
    match ficlone(src, dst) {
        Ok(()) => Ok(()),
        Err(e) => match e.raw_os_error() {
            Some(libc::EOPNOTSUPP)
            | Some(libc::EXDEV)
            | Some(libc::EINVAL)
            | Some(libc::ENOTTY) => Err(IpcError::Unsupported(Unsupported::NoReflink {
                dir: dir.display().to_string(),
                filesystem: fs.to_string(),
            })),
            _ => Err(refused("ioctl(FICLONE)")(e)),
        },
    }
}

fn ficlone(src: &File, dst: &File) -> std::io::Result<()> {
    // SAFETY: FICLONE takes the source descriptor as its argument.
    let ret = unsafe { libc::ioctl(dst.as_raw_fd(), libc::FICLONE, src.as_raw_fd()) };
    if ret < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Both ends of the zero-copy socket mechanisms, and the file experiments.
pub(crate) fn end(
    spec: &IpcEndSpec,
    mut fds: EndFds,
    received: &Received,
) -> Result<IpcEndReport, IpcEndError> {
    let chunk = spec.chunk as usize;
    let mut report = IpcEndReport::default();
    match (spec.mechanism, spec.role) {
        (Mechanism::CopyFileRange | Mechanism::Ficlone, _) => {
            let src = fds.src()?;
            let dst = fds.dst()?;
            report.start_ns = Some(now_ns());
            if spec.mechanism == Mechanism::Ficlone {
                ficlone(&src, &dst).map_err(|source| IpcEndError::Sys {
                    call: "ioctl(FICLONE)",
                    source,
                })?;
                report.calls.insert("ioctl".into(), 1);
                report.call_bytes.insert("ioctl".into(), spec.bytes);
            } else {
                let calls = copy_range(&src, &dst, spec.bytes, chunk)?;
                report.calls.insert("copy_file_range".into(), calls);
                report
                    .call_bytes
                    .insert("copy_file_range".into(), spec.bytes);
            }
            report.end_ns = Some(now_ns());
            let sum = checksum_file(&dst)?;
            received.set(sum.len());
            report.bytes = sum.len();
            report.checksum = Some(sum.finish());
        }
        (_, IpcRole::Producer) => {
            let sock = connect(spec, fds.data.take())?;
            let mut src = fds.src()?;
            report.start_ns = Some(now_ns());
            let sent = match spec.mechanism {
                Mechanism::UringSendZc => send_uring_zc(&sock, &mut src, spec.bytes, chunk)?,
                Mechanism::TcpMsgZerocopy => send_msg_zerocopy(&sock, &mut src, spec.bytes, chunk)?,
                _ => {
                    // The receiving side is the lesson: the sender copies.
                    let mut sock = sock;
                    report.bytes =
                        send_by_copy(&mut src, &mut sock, spec.bytes, chunk, &mut report)?;
                    return Ok(report);
                }
            };
            report.bytes = sent.bytes;
            report.calls.insert(sent.call.into(), sent.calls);
            report.call_bytes.insert(sent.call.into(), sent.bytes);
            report.notes.push(format!(
                "{}: {} of {} completions said the kernel copied the data after all{}",
                spec.mechanism,
                sent.copied,
                sent.completions,
                if sent.copied > 0 {
                    " (a skb looped to a local socket is copied before delivery)"
                } else {
                    ""
                }
            ));
        }
        (_, _) => {
            let listener = fds
                .data
                .take()
                .ok_or_else(|| IpcEndError::Protocol("no socket given".into()))?;
            let (mut sock, note) = accept(listener, spec)?;
            report.notes.extend(note);
            let mut dst = fds.dst()?;
            let sum = if spec.mechanism == Mechanism::TcpZerocopyReceive {
                let got = receive_mapped(&sock, &mut dst, chunk, received)?;
                report.calls.insert("getsockopt".into(), got.calls);
                report.calls.insert("recv".into(), got.copies);
                report.call_bytes.insert("getsockopt".into(), got.mapped);
                report.call_bytes.insert("recv".into(), got.copied);
                report.notes.push(format!(
                    "tcp-zerocopy-receive: {} bytes arrived mapped (vm_insert_pages), {} copied (only whole, page-aligned skb pages can be mapped)",
                    got.mapped, got.copied
                ));
                got.sum
            } else {
                receive_by_copy(&mut sock, &mut dst, chunk, received, &mut report)?
            };
            report.end_ns = Some(now_ns());
            report.bytes = sum.len();
            report.checksum = Some(sum.finish());
        }
    }
    Ok(report)
}

fn copy_range(src: &File, dst: &File, bytes: u64, chunk: usize) -> Result<u64, IpcEndError> {
    let (mut off_in, mut off_out): (i64, i64) = (0, 0);
    let mut calls = 0;
    while (off_in as u64) < bytes {
        let want = (bytes - off_in as u64).min(chunk as u64) as usize;
        // SAFETY: both offsets point to live i64s; the descriptors are ours.
        let ret = unsafe {
            libc::copy_file_range(
                src.as_raw_fd(),
                &mut off_in,
                dst.as_raw_fd(),
                &mut off_out,
                want,
                0,
            )
        };
        calls += 1;
        if end::check("copy_file_range", ret)? == 0 {
            return Err(IpcEndError::Protocol("source file ended early".into()));
        }
    }
    Ok(calls)
}

/// What a zero-copy sender did.
struct Sent {
    bytes: u64,
    call: &'static str,
    calls: u64,
    completions: u64,
    copied: u64,
}

/// Reads the next chunk of the source into `buf`; its length.
fn fill(src: &mut File, buf: &mut [u8], left: u64) -> Result<usize, IpcEndError> {
    let want = (left as usize).min(buf.len());
    src.read_exact(&mut buf[..want])
        .map_err(|source| IpcEndError::Sys {
            call: "read (source)",
            source,
        })?;
    Ok(want)
}

/// send(MSG_ZEROCOPY) from a ring of buffers; a buffer is reused only after the
/// completion that covers its last send has been read from the error queue.
fn send_msg_zerocopy(
    sock: &File,
    src: &mut File,
    bytes: u64,
    chunk: usize,
) -> Result<Sent, IpcEndError> {
    let fd = sock.as_raw_fd();
    enable_zerocopy(fd).map_err(|source| IpcEndError::Sys {
        call: "setsockopt(SO_ZEROCOPY)",
        source,
    })?;
    let mut slots = vec![vec![0u8; chunk]; SLOTS];
    // The id of the last send from each slot, and the sends completed so far
    // (ids are given per successful send call, from 0, in order).
    let mut last_id: Vec<Option<u32>> = vec![None; SLOTS];
    let mut next_id: u32 = 0;
    let mut done = Completions::default();
    let mut sent = 0u64;
    let mut calls = 0u64;
    let mut slot = 0;
    while sent < bytes {
        if let Some(id) = last_id[slot] {
            while !done.covers(id) {
                done.wait(fd)?;
            }
        }
        let len = fill(src, &mut slots[slot], bytes - sent)?;
        let mut off = 0;
        while off < len {
            let buf = &slots[slot][off..len];
            // SAFETY: the buffer lives in `slots`, which outlives every send
            // until its completion has been read.
            let ret = unsafe { libc::send(fd, buf.as_ptr().cast(), buf.len(), libc::MSG_ZEROCOPY) };
            calls += 1;
            if ret < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOBUFS) {
                // Too many pinned pages in flight (optmem): collect completions.
                done.wait(fd)?;
                continue;
            }
            off += end::check("send(MSG_ZEROCOPY)", ret)?;
            last_id[slot] = Some(next_id);
            next_id = next_id.wrapping_add(1);
        }
        sent += len as u64;
        slot = (slot + 1) % SLOTS;
    }
    if next_id > 0 {
        while !done.covers(next_id - 1) {
            done.wait(fd)?;
        }
    }
    Ok(Sent {
        bytes: sent,
        call: "send",
        calls,
        completions: done.ranges,
        copied: done.copied,
    })
}

/// The completions read from a socket's error queue so far.
#[derive(Debug, Default)]
struct Completions {
    /// One past the highest id completed (completions arrive in order).
    upto: u32,
    ranges: u64,
    copied: u64,
}

impl Completions {
    fn covers(&self, id: u32) -> bool {
        id < self.upto
    }

    /// Blocks until the error queue has a notification, and reads what is there.
    fn wait(&mut self, fd: RawFd) -> Result<(), IpcEndError> {
        let mut pfd = libc::pollfd {
            fd,
            events: 0,
            revents: 0,
        };
        // SAFETY: one pollfd; POLLERR is reported whatever `events` says.
        end::check("poll (error queue)", unsafe { libc::poll(&mut pfd, 1, -1) }
            as isize)?;
        loop {
            let mut control = [0u64; 16];
            // SAFETY: a zeroed msghdr with only a control buffer is valid.
            let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = std::mem::size_of_val(&control) as _;
            // SAFETY: msg points to live buffers of the sizes given.
            let ret =
                unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT) };
            if ret < 0 {
                let err = std::io::Error::last_os_error();
                if err.raw_os_error() == Some(libc::EAGAIN) {
                    return Ok(());
                }
                return Err(IpcEndError::Sys {
                    call: "recvmsg(MSG_ERRQUEUE)",
                    source: err,
                });
            }
            // SAFETY: walking the control messages the kernel wrote into `msg`.
            unsafe {
                let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
                while !cmsg.is_null() {
                    let c = &*cmsg;
                    if (c.cmsg_level == libc::SOL_IP && c.cmsg_type == libc::IP_RECVERR)
                        || (c.cmsg_level == libc::SOL_IPV6 && c.cmsg_type == libc::IPV6_RECVERR)
                    {
                        let ee = std::ptr::read_unaligned(
                            libc::CMSG_DATA(cmsg).cast::<libc::sock_extended_err>(),
                        );
                        if ee.ee_origin == SO_EE_ORIGIN_ZEROCOPY && ee.ee_errno == 0 {
                            // [ee_info, ee_data] is the range of send ids done.
                            self.upto = self.upto.max(ee.ee_data.wrapping_add(1));
                            self.ranges += 1;
                            if ee.ee_code & SO_EE_CODE_ZEROCOPY_COPIED != 0 {
                                self.copied += 1;
                            }
                        }
                    }
                    cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
                }
            }
        }
    }
}

/// IORING_OP_SEND_ZC from a ring of buffers; a buffer is reused only after its
/// notification CQE has arrived.
fn send_uring_zc(
    sock: &File,
    src: &mut File,
    bytes: u64,
    chunk: usize,
) -> Result<Sent, IpcEndError> {
    use io_uring::{cqueue, opcode, types};
    let mut ring = io_uring::IoUring::new(2 * SLOTS as u32).map_err(|source| IpcEndError::Sys {
        call: "io_uring_setup",
        source,
    })?;
    let mut slots = vec![vec![0u8; chunk]; SLOTS];
    // Per slot: bytes of its chunk still to send, and whether a send or its
    // notification is outstanding.
    let mut busy = [0u32; SLOTS];
    let mut sent = 0u64;
    let mut calls = 0u64;
    let mut completions = 0u64;
    let mut copied = 0u64;
    let mut slot = 0;
    let fd = types::Fd(sock.as_raw_fd());
    let submit = |ring: &mut io_uring::IoUring, slot: usize, buf: &[u8]| {
        let entry = opcode::SendZc::new(fd, buf.as_ptr(), buf.len() as u32)
            .zc_flags(IORING_SEND_ZC_REPORT_USAGE)
            .build()
            .user_data(slot as u64);
        // SAFETY: the buffer lives in `slots` until its notification arrives.
        unsafe { ring.submission().push(&entry) }.expect("the ring has room for every slot");
    };
    // Short sends to finish: (slot, from, to) within the slot's buffer, which
    // is never moved while an earlier send from it may still be pinned.
    let mut resend: Vec<(usize, usize, usize)> = Vec::new();
    let mut queued = [(0usize, 0usize); SLOTS];
    while sent < bytes || busy.iter().any(|b| *b > 0) {
        if sent < bytes && busy[slot] == 0 {
            let len = fill(src, &mut slots[slot], bytes - sent)?;
            queued[slot] = (0, len);
            submit(&mut ring, slot, &slots[slot][..len]);
            calls += 1;
            busy[slot] = 2;
            sent += len as u64;
            slot = (slot + 1) % SLOTS;
            if busy[slot] == 0 {
                continue;
            }
        }
        ring.submit_and_wait(1).map_err(|source| IpcEndError::Sys {
            call: "io_uring_enter",
            source,
        })?;
        let cqes: Vec<cqueue::Entry> = ring.completion().collect();
        for cqe in cqes {
            let s = cqe.user_data() as usize;
            if cqueue::notif(cqe.flags()) {
                completions += 1;
                if cqe.result() & IORING_NOTIF_USAGE_ZC_COPIED != 0 {
                    copied += 1;
                }
                busy[s] -= 1;
                continue;
            }
            let res = cqe.result();
            if res < 0 {
                return Err(IpcEndError::Sys {
                    call: "IORING_OP_SEND_ZC",
                    source: std::io::Error::from_raw_os_error(-res),
                });
            }
            if !cqueue::more(cqe.flags()) {
                // No notification will follow (nothing was pinned).
                busy[s] -= 1;
            }
            busy[s] -= 1;
            let (from, to) = queued[s];
            if from + (res as usize) < to {
                resend.push((s, from + res as usize, to));
            }
        }
        for (s, from, to) in resend.drain(..) {
            queued[s] = (from, to);
            submit(&mut ring, s, &slots[s][from..to]);
            calls += 1;
            busy[s] += 2;
        }
    }
    Ok(Sent {
        bytes: sent,
        call: "io_uring_enter",
        calls,
        completions,
        copied,
    })
}

/// `struct tcp_zerocopy_receive` (linux/tcp.h, as of 5.11).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
struct ZerocopyReceive {
    address: u64,
    length: u32,
    recv_skip_hint: u32,
    inq: u32,
    err: i32,
    copybuf_address: u64,
    copybuf_len: i32,
    flags: u32,
    msg_control: u64,
    msg_controllen: u64,
    msg_flags: u32,
    reserved: u32,
}

fn zerocopy_receive(fd: RawFd, zc: &mut ZerocopyReceive) -> std::io::Result<()> {
    let mut len = std::mem::size_of::<ZerocopyReceive>() as libc::socklen_t;
    // SAFETY: the kernel reads and writes at most `len` bytes of `zc`.
    let ret = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_ZEROCOPY_RECEIVE,
            (zc as *mut ZerocopyReceive).cast(),
            &mut len,
        )
    };
    if ret < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// What the mapped receiver took.
struct Got {
    sum: Checksum,
    mapped: u64,
    copied: u64,
    calls: u64,
    copies: u64,
}

impl Got {
    /// Takes `data` into the checksum and the destination.
    #[inline]
    fn take(&mut self, dst: &mut File, data: &[u8]) -> Result<(), IpcEndError> {
        self.sum.update(data);
        dst.write_all(data).map_err(|source| IpcEndError::Sys {
            call: "write (destination)",
            source,
        })
    }

    /// Reads by copy the `skip` bytes the kernel could not map, in pieces of
    /// at most `buf`'s size.
    #[inline]
    fn copy_skipped(
        &mut self,
        mut sock: &File,
        dst: &mut File,
        buf: &mut [u8],
        mut skip: usize,
    ) -> Result<(), IpcEndError> {
        while skip > 0 {
            let want = skip.min(buf.len());
            let n = sock
                .read(&mut buf[..want])
                .map_err(|source| IpcEndError::Sys {
                    call: "recv",
                    source,
                })?;
            self.copies += 1;
            if n == 0 {
                break;
            }
            self.take(dst, &buf[..n])?;
            self.copied += n as u64;
            skip -= n;
        }
        Ok(())
    }
}

/// A read-only shared mapping of a socket, where TCP_ZEROCOPY_RECEIVE maps
/// what arrives; unmapped on drop.
struct Window {
    addr: *mut libc::c_void,
    len: usize,
}

impl Window {
    fn map(sock: &File, len: usize) -> Result<Window, IpcEndError> {
        use rustix::mm::{MapFlags, ProtFlags};
        // SAFETY: a fresh read-only shared mapping of the socket, unmapped on drop.
        let addr = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                len,
                ProtFlags::READ,
                MapFlags::SHARED,
                sock,
                0,
            )
        }
        .map_err(|e| IpcEndError::Sys {
            call: "mmap (socket)",
            source: e.into(),
        })?;
        Ok(Window { addr, len })
    }
}

impl Drop for Window {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`, unmapped once.
        let _ = unsafe { rustix::mm::munmap(self.addr, self.len) };
    }
}

/// Sleeps until the socket has data or its peer has closed; true when it
/// has closed and nothing is left.
fn peer_closed(fd: RawFd) -> Result<bool, IpcEndError> {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN | libc::POLLRDHUP,
        revents: 0,
    };
    // SAFETY: one pollfd.
    end::check("poll", unsafe { libc::poll(&mut pfd, 1, -1) } as isize)?;
    let mut probe = [0u8; 1];
    // SAFETY: peeks at most one byte into `probe`.
    let n = unsafe {
        libc::recv(
            fd,
            probe.as_mut_ptr().cast(),
            1,
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    };
    Ok(n == 0)
}

/// Receives with TCP_ZEROCOPY_RECEIVE: whole pages are mapped into a window
/// of the socket's mmap, what cannot be mapped is read by copy.
fn receive_mapped(
    sock: &File,
    dst: &mut File,
    chunk: usize,
    received: &Received,
) -> Result<Got, IpcEndError> {
    let fd = sock.as_raw_fd();
    let window = Window::map(sock, chunk)?;
    let mut buf = vec![0u8; chunk];
    let mut got = Got {
        sum: Checksum::default(),
        mapped: 0,
        copied: 0,
        calls: 0,
        copies: 0,
    };
    loop {
        let mut zc = ZerocopyReceive {
            address: window.addr as u64,
            length: chunk as u32,
            ..ZerocopyReceive::default()
        };
        got.calls += 1;
        match zerocopy_receive(fd, &mut zc) {
            Ok(()) => {}
            // Nothing queued and the peer has closed.
            Err(e) if e.raw_os_error() == Some(libc::EIO) => break,
            Err(source) => {
                return Err(IpcEndError::Sys {
                    call: "getsockopt(TCP_ZEROCOPY_RECEIVE)",
                    source,
                })
            }
        }
        if zc.length > 0 {
            // SAFETY: the kernel mapped `length` bytes at the window's start;
            // they stay until the next call replaces them.
            let data =
                unsafe { std::slice::from_raw_parts(window.addr as *const u8, zc.length as usize) };
            got.take(dst, data)?;
            got.mapped += zc.length as u64;
        }
        let skip = zc.recv_skip_hint as usize;
        let idle = zc.length == 0 && skip == 0;
        got.copy_skipped(sock, dst, &mut buf, skip)?;
        received.set(got.sum.len());
        // Nothing mappable or to skip yet: sleep until data or the end.
        if idle && peer_closed(fd)? {
            break;
        }
    }
    Ok(got)
}
