//! Memory both ends share (a file mapping, System V and POSIX shared memory, a
//! memfd passed over a Unix socket), and a shared file with write/read and flock.
//!
//! A shared region is one header page plus the data. The producer generates the
//! pattern straight into the shared pages chunk by chunk and publishes how far it
//! got with a release store into the header; the consumer hashes up to that mark
//! in place. No byte is copied: both processes map the same page cache or shmem
//! pages. The consumer polls (spin, then yield), because a futex or a pipe to
//! wake it would measure the wake-up instead of the sharing.

use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::sync::atomic::{AtomicU64, Ordering};

use super::data::{self, Checksum};
use super::end::{check, io, now_ns, IpcEndError, IpcEndReport, IpcEndSpec, IpcRole, Received};
use super::{IpcError, Mechanism};

/// Bytes before the data in a shared region: the progress counter's page.
pub(crate) const HEADER: u64 = 4096;

/// Whether /dev/shm (with `available` bytes free) can hold `needed` bytes.
pub fn check_dev_shm(needed: u64, available: Option<u64>) -> Result<(), IpcError> {
    match available {
        Some(available) if available < needed => Err(IpcError::DevShmTooSmall {
            needed,
            available,
            needed_mib: needed.div_ceil(1 << 20),
        }),
        _ => Ok(()),
    }
}

/// A mapping of a shared region, unmapped (or detached) on drop.
struct IpcRegion {
    ptr: *mut u8,
    len: usize,
    sysv: bool,
}

impl IpcRegion {
    fn map_fd(fd: RawFd, len: usize) -> Result<IpcRegion, IpcEndError> {
        // SAFETY: a fresh shared mapping of a descriptor we hold; checked below.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(IpcEndError::Sys {
                call: "mmap",
                source: std::io::Error::last_os_error(),
            });
        }
        Ok(IpcRegion {
            ptr: ptr as *mut u8,
            len,
            sysv: false,
        })
    }

    fn attach_sysv(id: i32, len: usize) -> Result<IpcRegion, IpcEndError> {
        // SAFETY: shmat maps the segment anywhere; checked below.
        let ptr = unsafe { libc::shmat(id, std::ptr::null(), 0) };
        if ptr as isize == -1 {
            return Err(IpcEndError::Sys {
                call: "shmat",
                source: std::io::Error::last_os_error(),
            });
        }
        Ok(IpcRegion {
            ptr: ptr as *mut u8,
            len,
            sysv: true,
        })
    }

    fn ready(&self) -> &AtomicU64 {
        // SAFETY: the header page is mapped, page-aligned and only used as this atomic.
        unsafe { &*(self.ptr as *const AtomicU64) }
    }

    /// The data bytes `offset..offset + len`.
    ///
    /// # Safety
    /// The range must lie in the region, and the other process must not write it
    /// while the slice lives (the ready counter orders that).
    #[allow(clippy::mut_from_ref)]
    unsafe fn data(&self, offset: u64, len: usize) -> &mut [u8] {
        debug_assert!(HEADER as usize + offset as usize + len <= self.len);
        std::slice::from_raw_parts_mut(self.ptr.add(HEADER as usize + offset as usize), len)
    }

    fn produce(&self, bytes: u64, chunk: u64) {
        let mut offset = 0;
        while offset < bytes {
            let n = (bytes - offset).min(chunk);
            // SAFETY: in range; the consumer reads only below the published mark.
            data::fill(unsafe { self.data(offset, n as usize) }, offset);
            offset += n;
            self.ready().store(offset, Ordering::Release);
        }
    }

    fn consume(&self, bytes: u64, received: &Received) -> Checksum {
        let mut sum = Checksum::default();
        let mut done = 0;
        let mut idle = 0u32;
        while done < bytes {
            let ready = self.ready().load(Ordering::Acquire).min(bytes);
            if ready > done {
                // SAFETY: in range, and the producer finished these bytes (acquire).
                sum.update(unsafe { self.data(done, (ready - done) as usize) });
                done = ready;
                received.set(done);
                idle = 0;
            } else {
                wait_a_little(&mut idle);
            }
        }
        sum
    }
}

/// Spins briefly, then yields the CPU, while the other end is behind.
fn wait_a_little(idle: &mut u32) {
    *idle += 1;
    if *idle < 200 {
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
}

impl Drop for IpcRegion {
    fn drop(&mut self) {
        // SAFETY: we mapped exactly this range and nothing borrows it any more.
        unsafe {
            if self.sysv {
                libc::shmdt(self.ptr as *const libc::c_void);
            } else {
                libc::munmap(self.ptr as *mut libc::c_void, self.len);
            }
        }
    }
}

fn send_fd(sock: RawFd, fd: RawFd) -> Result<(), IpcEndError> {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr() as *mut libc::c_void,
        iov_len: 1,
    };
    // SAFETY: CMSG_SPACE is a pure size computation.
    let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) } as usize;
    let mut control = vec![0u64; space.div_ceil(8)];
    // SAFETY: msghdr is plain data; we point it at live buffers of the right sizes
    // and fill the one control message CMSG_FIRSTHDR returns.
    let ret = unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
        msg.msg_controllen = space;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as usize;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg) as *mut RawFd, fd);
        libc::sendmsg(sock, &msg, 0)
    };
    check("sendmsg (SCM_RIGHTS)", ret).map(|_| ())
}

fn receive_fd(sock: RawFd) -> Result<OwnedFd, IpcEndError> {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr() as *mut libc::c_void,
        iov_len: 1,
    };
    // SAFETY: a pure size computation.
    let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) } as usize;
    let mut control = vec![0u64; space.div_ceil(8)];
    // SAFETY: as in send_fd; the kernel fills the control buffer we size.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
        msg.msg_controllen = space;
        check(
            "recvmsg (SCM_RIGHTS)",
            libc::recvmsg(sock, &mut msg, libc::MSG_CMSG_CLOEXEC),
        )?;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null()
            || (*cmsg).cmsg_level != libc::SOL_SOCKET
            || (*cmsg).cmsg_type != libc::SCM_RIGHTS
        {
            return Err(IpcEndError::Protocol(
                "no descriptor arrived with the message".into(),
            ));
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg) as *const RawFd);
        Ok(OwnedFd::from_raw_fd(fd))
    }
}

fn memfd(len: u64) -> Result<OwnedFd, IpcEndError> {
    let name = CString::new("pipebench-ipc").expect("no NUL");
    // SAFETY: memfd_create reads the name and returns a new fd or -1.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    check("memfd_create", fd as isize)?;
    // SAFETY: a fresh descriptor we own.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    File::from(fd.try_clone().map_err(io("dup"))?)
        .set_len(len)
        .map_err(io("ftruncate (memfd)"))?;
    Ok(fd)
}

/// Opens the run's POSIX shared memory object by its name, as the lesson says:
/// `shm_open` is how unrelated processes find the same memory.
fn shm_open(spec: &IpcEndSpec) -> Result<File, IpcEndError> {
    let name = spec
        .shm_name
        .as_ref()
        .ok_or_else(|| IpcEndError::Protocol("no shared memory name".into()))?;
    let name = CString::new(name.as_str())
        .map_err(|_| IpcEndError::Protocol("a shared memory name with a NUL".into()))?;
    // SAFETY: shm_open reads the NUL-terminated name and returns a new fd or -1.
    let fd = unsafe { libc::shm_open(name.as_ptr(), libc::O_RDWR, 0) };
    check("shm_open", fd as isize)?;
    // SAFETY: a fresh descriptor we own.
    Ok(unsafe { File::from_raw_fd(fd) })
}

fn flock(file: &File, op: libc::c_int) -> Result<(), IpcEndError> {
    // SAFETY: flock on a descriptor we own.
    check("flock", unsafe { libc::flock(file.as_raw_fd(), op) }
        as isize)
    .map(|_| ())
}

fn file_flock(spec: &IpcEndSpec, received: &Received) -> Result<IpcEndReport, IpcEndError> {
    let path = spec
        .shared
        .as_ref()
        .ok_or_else(|| IpcEndError::Protocol("no shared file".into()))?;
    let chunk = spec.chunk as usize;
    let mut buf = vec![0u8; chunk];
    let mut report = IpcEndReport::default();
    let mut offset = 0u64;
    if spec.role == IpcRole::Producer {
        let mut file = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .map_err(io("open (shared file)"))?;
        received.holding();
        report.start_ns = Some(now_ns());
        while offset < spec.bytes {
            let n = (spec.bytes - offset).min(chunk as u64) as usize;
            data::fill(&mut buf[..n], offset);
            // The lock makes each chunk appear whole to the reader.
            flock(&file, libc::LOCK_EX)?;
            let written = super::pipes::write_counted(
                &mut file,
                &buf[..n],
                "write",
                "write (shared file)",
                &mut report,
            );
            flock(&file, libc::LOCK_UN)?;
            written?;
            offset += n as u64;
        }
    } else {
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .map_err(io("open (shared file)"))?;
        received.holding();
        let mut sum = Checksum::default();
        let mut idle = 0;
        while offset < spec.bytes {
            let want = (spec.bytes - offset).min(chunk as u64) as usize;
            flock(&file, libc::LOCK_SH)?;
            let read = file
                .read_at(&mut buf[..want], offset)
                .map_err(io("pread (shared file)"));
            flock(&file, libc::LOCK_UN)?;
            let n = read?;
            report.tally("pread", n as u64);
            if n == 0 {
                wait_a_little(&mut idle);
                continue;
            }
            idle = 0;
            sum.update(&buf[..n]);
            offset += n as u64;
            received.set(offset);
        }
        report.end_ns = Some(now_ns());
        report.checksum = Some(sum.finish());
    }
    report.bytes = offset;
    Ok(report)
}

/// Both ends of `file-flock`, `file-mmap`, `sysv-shm`, `posix-shm`, `memfd-scm`.
pub(crate) fn end(
    spec: &IpcEndSpec,
    fd: Option<OwnedFd>,
    received: &Received,
) -> Result<IpcEndReport, IpcEndError> {
    if spec.mechanism == Mechanism::FileFlock {
        return file_flock(spec, received);
    }
    let len = HEADER + spec.bytes;
    let open_shared = || -> Result<File, IpcEndError> {
        let path = spec
            .shared
            .as_ref()
            .ok_or_else(|| IpcEndError::Protocol("no shared file".into()))?;
        OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .map_err(io("open (shared file)"))
    };
    let region = match spec.mechanism {
        Mechanism::SysvShm => {
            let id = spec
                .sysv_id
                .ok_or_else(|| IpcEndError::Protocol("no segment id".into()))?;
            IpcRegion::attach_sysv(id, len as usize)?
        }
        Mechanism::MemfdScm => {
            let sock = fd.ok_or_else(|| IpcEndError::Protocol("no socket given".into()))?;
            let memfd = if spec.role == IpcRole::Producer {
                let memfd = memfd(len)?;
                send_fd(sock.as_raw_fd(), memfd.as_raw_fd())?;
                memfd
            } else {
                receive_fd(sock.as_raw_fd())?
            };
            IpcRegion::map_fd(memfd.as_raw_fd(), len as usize)?
        }
        Mechanism::PosixShm => IpcRegion::map_fd(shm_open(spec)?.as_raw_fd(), len as usize)?,
        _ => IpcRegion::map_fd(open_shared()?.as_raw_fd(), len as usize)?,
    };
    // Mapped (or attached): the harness may now remove the name (a memfd has
    // none; saying so costs nothing).
    received.holding();
    let mut report = IpcEndReport::default();
    if spec.role == IpcRole::Producer {
        report.start_ns = Some(now_ns());
        region.produce(spec.bytes, spec.chunk);
        report.bytes = spec.bytes;
    } else {
        let sum = region.consume(spec.bytes, received);
        report.end_ns = Some(now_ns());
        report.bytes = sum.len();
        report.checksum = Some(sum.finish());
    }
    Ok(report)
}
