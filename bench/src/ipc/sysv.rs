//! System V IPC: the message queue pair, the limits of queues and segments, and
//! creating them.

use super::data::{self, Checksum};
use super::end::{check, now_ns, IpcEndError, IpcEndReport, IpcEndSpec, IpcRole, Received};
use super::IpcError;

/// The System V limits that decide whether a run fits, read from /proc/sys/kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SysvLimits {
    /// Largest message, bytes (kernel.msgmax).
    pub msgmax: u64,
    /// Largest total of messages in one queue, bytes (kernel.msgmnb).
    pub msgmnb: u64,
    /// Largest segment, bytes (kernel.shmmax).
    pub shmmax: u64,
    /// Most shared memory pages in the whole system (kernel.shmall).
    pub shmall: u64,
}

fn sysctl(name: &str, default: u64) -> u64 {
    std::fs::read_to_string(format!("/proc/sys/kernel/{name}"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(default)
}

impl SysvLimits {
    /// This system's limits (Linux defaults where /proc cannot be read).
    pub fn read() -> Self {
        SysvLimits {
            msgmax: sysctl("msgmax", 8192),
            msgmnb: sysctl("msgmnb", 16384),
            shmmax: sysctl("shmmax", u64::MAX),
            shmall: sysctl("shmall", u64::MAX),
        }
    }

    /// Whether one message of `size` bytes can be sent.
    pub(crate) fn check_message(&self, size: u64) -> Result<(), IpcError> {
        if size > self.msgmax {
            return Err(IpcError::MsgMax {
                requested: size,
                limit: self.msgmax,
            });
        }
        if size > self.msgmnb {
            return Err(IpcError::MsgMnb {
                requested: size,
                limit: self.msgmnb,
            });
        }
        Ok(())
    }

    /// Whether a segment of `size` bytes can be created.
    pub fn check_segment(&self, size: u64) -> Result<(), IpcError> {
        if size > self.shmmax {
            return Err(IpcError::ShmMax {
                requested: size,
                limit: self.shmmax,
            });
        }
        let pages = size.div_ceil(4096);
        if pages > self.shmall {
            return Err(IpcError::ShmAll {
                requested_pages: pages,
                limit_pages: self.shmall,
            });
        }
        Ok(())
    }
}

fn setup(what: &str) -> IpcError {
    IpcError::Setup {
        what: what.to_string(),
        source: std::io::Error::last_os_error(),
    }
}

/// Creates a queue with no key (IPC_PRIVATE: no other process can find it by
/// a name, and no name can be squatted); the ends get its id.
pub(crate) fn create_queue() -> Result<i32, IpcError> {
    // SAFETY: msgget takes plain integers.
    let id = unsafe { libc::msgget(libc::IPC_PRIVATE, libc::IPC_CREAT | 0o600) };
    if id < 0 {
        return Err(setup("create a System V message queue (msgget)"));
    }
    Ok(id)
}

/// Creates a segment of `size` bytes with no key (IPC_PRIVATE).
pub(crate) fn create_segment(size: u64) -> Result<i32, IpcError> {
    // SAFETY: shmget takes plain integers.
    let id = unsafe { libc::shmget(libc::IPC_PRIVATE, size as usize, libc::IPC_CREAT | 0o600) };
    if id < 0 {
        let errno = std::io::Error::last_os_error();
        let limits = SysvLimits::read();
        // The checks before creation use the sysctls; a race or a per-namespace
        // limit can still refuse: map the errno to the limit it means.
        return Err(match errno.raw_os_error() {
            Some(libc::EINVAL) => IpcError::ShmMax {
                requested: size,
                limit: limits.shmmax,
            },
            Some(libc::ENOSPC) => IpcError::ShmAll {
                requested_pages: size.div_ceil(4096),
                limit_pages: limits.shmall,
            },
            _ => IpcError::Setup {
                what: "create a System V shared memory segment (shmget)".into(),
                source: errno,
            },
        });
    }
    Ok(id)
}

/// One message: the `long mtype` header msgsnd/msgrcv expect, then the data.
struct Message {
    buf: Vec<u64>,
    chunk: usize,
}

impl Message {
    fn new(chunk: usize) -> Self {
        let mut buf = vec![0u64; 1 + chunk.div_ceil(8)];
        buf[0] = 1; // mtype must be positive
        Message { buf, chunk }
    }

    fn data(&mut self) -> &mut [u8] {
        // SAFETY: the u64 buffer is at least 8 + chunk bytes; u8 has no alignment.
        unsafe {
            std::slice::from_raw_parts_mut((self.buf.as_mut_ptr() as *mut u8).add(8), self.chunk)
        }
    }

    fn ptr(&mut self) -> *mut libc::c_void {
        self.buf.as_mut_ptr() as *mut libc::c_void
    }
}

/// Both ends of `sysv-msgqueue`: msgsnd chunks of the pattern, msgrcv and hash.
pub(crate) fn msgqueue_end(
    spec: &IpcEndSpec,
    received: &Received,
) -> Result<IpcEndReport, IpcEndError> {
    let id = spec
        .sysv_id
        .ok_or_else(|| IpcEndError::Protocol("no queue id".into()))?;
    let chunk = spec.chunk as usize;
    let mut msg = Message::new(chunk);
    let mut report = IpcEndReport::default();
    let mut offset = 0u64;
    if spec.role == IpcRole::Producer {
        report.start_ns = Some(now_ns());
        while offset < spec.bytes {
            let n = (spec.bytes - offset).min(chunk as u64) as usize;
            data::fill(&mut msg.data()[..n], offset);
            // SAFETY: msg holds mtype plus at least n bytes.
            let ret = unsafe { libc::msgsnd(id, msg.ptr(), n, 0) };
            check("msgsnd", ret as isize)?;
            report.tally("msgsnd", n as u64);
            offset += n as u64;
        }
    } else {
        let mut sum = Checksum::default();
        while offset < spec.bytes {
            // SAFETY: msg has room for mtype plus chunk bytes.
            let ret = unsafe { libc::msgrcv(id, msg.ptr(), chunk, 0, 0) };
            let n = check("msgrcv", ret)?;
            report.tally("msgrcv", n as u64);
            sum.update(&msg.data()[..n]);
            offset += n as u64;
            received.set(offset);
        }
        report.end_ns = Some(now_ns());
        report.checksum = Some(sum.finish());
    }
    report.bytes = offset;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_name_the_sysctl_that_refuses() {
        let limits = SysvLimits {
            msgmax: 8192,
            msgmnb: 16384,
            shmmax: 1 << 20,
            shmall: 100,
        };
        assert!(limits.check_message(8192).is_ok());
        assert!(matches!(
            limits.check_message(8193),
            Err(IpcError::MsgMax { limit: 8192, .. })
        ));
        let wide = SysvLimits {
            msgmax: 1 << 20,
            ..limits
        };
        assert!(matches!(
            wide.check_message(20000),
            Err(IpcError::MsgMnb { limit: 16384, .. })
        ));
        assert!(matches!(
            limits.check_segment((1 << 20) + 1),
            Err(IpcError::ShmMax { .. })
        ));
        let roomy = SysvLimits {
            shmmax: u64::MAX,
            ..limits
        };
        assert!(matches!(
            roomy.check_segment(101 * 4096),
            Err(IpcError::ShmAll {
                requested_pages: 101,
                limit_pages: 100
            })
        ));
        let text = limits.check_message(9000).unwrap_err().to_string();
        assert!(text.contains("kernel.msgmax"), "{text}");
    }
}
