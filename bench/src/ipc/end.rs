//! What an end of the lab is given and gives back: its spec, its descriptors,
//! its report, its errors and the counter it publishes progress through. Every
//! mechanism family uses these; none of them knows the harness.

use std::collections::BTreeMap;
use std::fs::File;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

use serde::{Deserialize, Serialize};

use super::{CowReport, Mechanism};
use crate::ends::control::ControlRegion;
use crate::ends::report::EndUsage;
use crate::process::counts::Counted;

/// An end's role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum IpcRole {
    /// Sends the bytes.
    Producer,
    /// Receives and checks them.
    Consumer,
    /// Runs a one-process experiment.
    Solo,
}

impl IpcRole {
    /// Its name in results and messages.
    pub(crate) fn name(self) -> &'static str {
        match self {
            IpcRole::Producer => "producer",
            IpcRole::Consumer => "consumer",
            IpcRole::Solo => "solo",
        }
    }
}

/// Everything an end needs, passed as one JSON argument.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct IpcEndSpec {
    pub(crate) role: IpcRole,
    pub(crate) mechanism: Mechanism,
    pub(crate) bytes: u64,
    pub(crate) chunk: u64,
    /// Whether [`crate::process::launch::SRC_FD`] holds the source file (pattern or text), for ends that read one.
    #[serde(default)]
    pub(crate) has_src: bool,
    /// Whether [`crate::process::launch::DST_FD`] holds the destination file, for consumers that write one.
    #[serde(default)]
    pub(crate) has_dst: bool,
    /// The object both ends open by path: a FIFO or a shared file, in the run's
    /// private folder.
    pub(crate) shared: Option<PathBuf>,
    /// The POSIX shared memory name (`/pipebook-<random>`).
    #[serde(default)]
    pub(crate) shm_name: Option<String>,
    /// System V queue or segment id.
    pub(crate) sysv_id: Option<i32>,
    /// TCP port to connect to.
    pub(crate) port: Option<u16>,
    /// The port of the producer's own socket on 127.0.0.1 (bound by the
    /// harness): the one address a TCP consumer takes a connection from.
    #[serde(default)]
    pub(crate) peer_port: Option<u16>,
    /// Whether fd 4 holds a data descriptor.
    pub(crate) has_fd: bool,
    /// Whether fd 5 holds the harness's control page (for progress).
    #[serde(default)]
    pub(crate) has_control: bool,
    /// Leave the kernel's events uncounted (`--no-counts`): the end still
    /// tallies its calls, faults and context switches, which cost nothing.
    #[serde(default)]
    pub(crate) no_counts: bool,
}

/// What an end sends back on fd 3.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct IpcEndReport {
    /// CLOCK_MONOTONIC ns just before the first data call (producers, solo).
    pub(crate) start_ns: Option<u64>,
    /// CLOCK_MONOTONIC ns after the last byte arrived (consumers, solo).
    pub(crate) end_ns: Option<u64>,
    /// Bytes this end moved.
    pub(crate) bytes: u64,
    /// Checksum of what the consumer received.
    pub(crate) checksum: Option<u64>,
    /// Lines counted.
    pub(crate) lines: Option<u64>,
    /// Copy-on-write findings.
    pub(crate) cow: Option<CowReport>,
    /// Remarks for the result.
    pub(crate) notes: Vec<String>,
    /// getrusage over the end's life.
    #[serde(default)]
    pub(crate) usage: EndUsage,
    /// The data calls it made, by kind, where the end counts them.
    #[serde(default)]
    pub(crate) calls: BTreeMap<String, u64>,
    /// The bytes those calls moved, by kind (a kind that moves no bytes of the
    /// data, such as a completion read, is absent).
    #[serde(default)]
    pub(crate) call_bytes: BTreeMap<String, u64>,
    /// What the kernel did for it over its window.
    #[serde(default)]
    pub(crate) counts: Option<Counted>,
}

impl IpcEndReport {
    /// Notes one data call of kind `call` that moved `bytes` (0 for a call that
    /// found nothing to move: it is a call all the same). Called once per call of
    /// the loop, so it looks the kind up before it allocates its name.
    pub(crate) fn tally(&mut self, call: &'static str, bytes: u64) {
        match self.calls.get_mut(call) {
            Some(n) => *n += 1,
            None => {
                self.calls.insert(call.to_string(), 1);
            }
        }
        match self.call_bytes.get_mut(call) {
            Some(n) => *n += bytes,
            None => {
                self.call_bytes.insert(call.to_string(), bytes);
            }
        }
    }
}

/// Why an end failed (printed on its stderr, which the harness reports).
#[derive(Debug, thiserror::Error)]
pub(crate) enum IpcEndError {
    /// A system call failed.
    #[error("{call}: {source}")]
    Sys {
        /// The call.
        call: &'static str,
        /// The error.
        source: std::io::Error,
    },
    /// The data did not arrive as expected.
    #[error("{0}")]
    Protocol(String),
}

/// Turns a -1 return into the errno, naming the call.
pub(crate) fn check(call: &'static str, ret: isize) -> Result<usize, IpcEndError> {
    if ret < 0 {
        Err(IpcEndError::Sys {
            call,
            source: std::io::Error::last_os_error(),
        })
    } else {
        Ok(ret as usize)
    }
}

/// An `io::Error` as an [`IpcEndError`] naming the call.
pub(crate) fn io(call: &'static str) -> impl FnOnce(std::io::Error) -> IpcEndError {
    move |source| IpcEndError::Sys { call, source }
}

/// CLOCK_MONOTONIC in nanoseconds: the same clock in every process, so the
/// producer's start and the consumer's end can be subtracted.
pub(crate) fn now_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// The descriptors an end was given besides its report pipe and control page.
#[derive(Debug, Default)]
pub(crate) struct EndFds {
    /// fd 5: a pipe end, a socket (a TCP producer's, bound but not
    /// connected), or a listening socket.
    pub(crate) data: Option<OwnedFd>,
    /// fd 6: the file to read from, at its start.
    pub(crate) src: Option<File>,
    /// fd 7: the (empty) file to write into.
    pub(crate) dst: Option<File>,
}

impl EndFds {
    /// The source file, or a protocol error.
    pub(crate) fn src(&mut self) -> Result<File, IpcEndError> {
        self.src
            .take()
            .ok_or_else(|| IpcEndError::Protocol("no source file given".into()))
    }

    /// The destination file, or a protocol error.
    pub(crate) fn dst(&mut self) -> Result<File, IpcEndError> {
        self.dst
            .take()
            .ok_or_else(|| IpcEndError::Protocol("no destination file given".into()))
    }
}

/// Where a receiving end publishes how many bytes it has taken so far: the
/// control page's reader counter, shared with the harness (or a private page when
/// the end runs without one).
pub(crate) struct Received(pub(crate) ControlRegion);

impl Received {
    /// Publishes `bytes` taken so far: one relaxed store, cheap enough per chunk.
    #[inline]
    pub(crate) fn set(&self, bytes: u64) {
        self.0.shared().reader_bytes.store(bytes, Ordering::Relaxed);
    }

    /// Says this end holds the run's named object (opened, mapped or attached):
    /// once both ends have, the harness removes its name.
    pub(crate) fn holding(&self) {
        self.0.shared().holding.fetch_add(1, Ordering::Release);
    }
}
