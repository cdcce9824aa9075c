//! The mechanisms of the latency lab: what each is, how it waits in each mode,
//! and the largest message it carries here.

use serde::{Deserialize, Serialize};

use super::{LatencyError, Mode};

/// A way for one process to hand a message to another and hear back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LatencyMechanism {
    /// Two anonymous pipes, one each way.
    Pipe,
    /// Two named pipes in a private run folder.
    Fifo,
    /// Two eventfd counters as the doorbells, the message in shared memory.
    Eventfd,
    /// A futex word on shared memory as the doorbell, the message beside it.
    Futex,
    /// A Unix stream socket pair.
    UnixStream,
    /// A Unix datagram socket pair.
    UnixDgram,
    /// A TCP connection over loopback (TCP_NODELAY).
    Tcp,
    /// Two POSIX message queues.
    PosixMq,
    /// One System V message queue, a message type each way.
    SysvMq,
    /// A single-producer, single-consumer ring in shared memory, polled.
    ShmRing,
    /// Two pipes, each end's reads and writes submitted through its own io_uring
    /// (IORING_OP_READ / IORING_OP_WRITE).
    IoUring,
    /// Two io_urings, one per end, made by the harness and inherited by both
    /// ends: a message is written to shared memory and rung in with
    /// IORING_OP_MSG_RING, which posts a completion straight into the other
    /// end's ring.
    IoUringMsgRing,
}

/// What a page or a table says of a mechanism.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LatencyMechanismInfo {
    /// The id (`pipe`, `unix-stream`, ...).
    pub id: &'static str,
    /// A title for people.
    pub title: &'static str,
    /// How a blocking end waits; `None` when it has no blocking mode.
    pub blocking: Option<&'static str>,
    /// How a busy end waits; `None` when it has no busy mode.
    pub busy: Option<&'static str>,
    /// Why a mode is missing, when one is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing_mode: Option<&'static str>,
    /// The largest message here, bytes, when the mechanism has a limit below the
    /// lab's own 16 MiB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_size: Option<u64>,
}

impl LatencyMechanismInfo {
    /// Why `mode` does not exist for this mechanism, if it does not.
    pub fn lacks_mode(&self, mode: Mode) -> Option<&'static str> {
        let has = match mode {
            Mode::Blocking => self.blocking.is_some(),
            Mode::Busy => self.busy.is_some(),
        };
        (!has).then(|| self.missing_mode.unwrap_or("not offered"))
    }
}

impl LatencyMechanism {
    /// Every mechanism, in the order tables show them.
    pub const ALL: [LatencyMechanism; 12] = [
        LatencyMechanism::Pipe,
        LatencyMechanism::Fifo,
        LatencyMechanism::Eventfd,
        LatencyMechanism::Futex,
        LatencyMechanism::UnixStream,
        LatencyMechanism::UnixDgram,
        LatencyMechanism::Tcp,
        LatencyMechanism::PosixMq,
        LatencyMechanism::SysvMq,
        LatencyMechanism::ShmRing,
        LatencyMechanism::IoUring,
        LatencyMechanism::IoUringMsgRing,
    ];

    /// Its id.
    pub fn id(self) -> &'static str {
        match self {
            LatencyMechanism::Pipe => "pipe",
            LatencyMechanism::Fifo => "fifo",
            LatencyMechanism::Eventfd => "eventfd",
            LatencyMechanism::Futex => "futex",
            LatencyMechanism::UnixStream => "unix-stream",
            LatencyMechanism::UnixDgram => "unix-dgram",
            LatencyMechanism::Tcp => "tcp",
            LatencyMechanism::PosixMq => "posix-mq",
            LatencyMechanism::SysvMq => "sysv-mq",
            LatencyMechanism::ShmRing => "shm-ring",
            LatencyMechanism::IoUring => "io-uring",
            LatencyMechanism::IoUringMsgRing => "io-uring-msg-ring",
        }
    }

    /// The mechanism with this id.
    pub fn parse(id: &str) -> Result<LatencyMechanism, LatencyError> {
        LatencyMechanism::ALL
            .into_iter()
            .find(|m| m.id() == id)
            .ok_or_else(|| LatencyError::UnknownMechanism {
                name: id.to_string(),
                known: LatencyMechanism::ALL
                    .iter()
                    .map(|m| m.id().to_string())
                    .collect(),
            })
    }

    /// What it is and how it waits.
    pub fn info(self) -> LatencyMechanismInfo {
        let retry = "O_NONBLOCK, and each end retries on EAGAIN";
        let (title, blocking, busy, missing_mode) = match self {
            LatencyMechanism::Pipe => (
                "Two pipes",
                Some("read sleeps until write wakes it"),
                Some(retry),
                None,
            ),
            LatencyMechanism::Fifo => (
                "Two FIFOs (named pipes)",
                Some("read sleeps until write wakes it"),
                Some(retry),
                None,
            ),
            LatencyMechanism::Eventfd => (
                "eventfd doorbells, message in shared memory",
                Some("read of the eventfd sleeps until the other end adds 1"),
                Some("EFD_NONBLOCK reads retried on EAGAIN"),
                None,
            ),
            LatencyMechanism::Futex => (
                "futex word, message in shared memory",
                Some("FUTEX_WAIT sleeps until the other end's FUTEX_WAKE"),
                Some("spins reading the word; the sender makes no system call"),
                None,
            ),
            LatencyMechanism::UnixStream => (
                "Unix stream sockets",
                Some("recv sleeps until send wakes it"),
                Some(retry),
                None,
            ),
            LatencyMechanism::UnixDgram => (
                "Unix datagram sockets",
                Some("recv sleeps until send wakes it"),
                Some(retry),
                None,
            ),
            LatencyMechanism::Tcp => (
                "TCP over loopback",
                Some("recv sleeps until the segment arrives"),
                Some(retry),
                None,
            ),
            LatencyMechanism::PosixMq => (
                "POSIX message queues",
                Some("mq_receive sleeps until mq_send wakes it"),
                Some("O_NONBLOCK queue, mq_receive retried on EAGAIN"),
                None,
            ),
            LatencyMechanism::SysvMq => (
                "System V message queue",
                Some("msgrcv sleeps until msgsnd wakes it"),
                Some("msgrcv with IPC_NOWAIT retried on ENOMSG"),
                None,
            ),
            LatencyMechanism::IoUring => (
                "Two pipes through io_uring",
                Some("io_uring_enter waits for the read's completion"),
                Some("io_uring_enter without waiting, retried until the read completes"),
                None,
            ),
            LatencyMechanism::IoUringMsgRing => (
                "io_uring message ring, message in shared memory",
                Some("io_uring_enter waits for the completion the other end posts"),
                Some("polls its completion queue in memory; enters the kernel only to send"),
                None,
            ),
            LatencyMechanism::ShmRing => (
                "Shared-memory ring, polled",
                None,
                Some("spins on the ring's head; no system call at all"),
                Some("a polled ring has nobody to wake: its blocking form is the futex mechanism"),
            ),
        };
        LatencyMechanismInfo {
            id: self.id(),
            title,
            blocking,
            busy,
            missing_mode,
            max_size: self.size_limit().map(|(limit, _)| limit),
        }
    }

    /// The largest message it carries here and where the limit comes from, when
    /// lower than the lab's own.
    pub(crate) fn size_limit(self) -> Option<(u64, &'static str)> {
        match self {
            LatencyMechanism::PosixMq => Some((
                read_limit("/proc/sys/fs/mqueue/msgsize_max").unwrap_or(8192),
                "/proc/sys/fs/mqueue/msgsize_max",
            )),
            LatencyMechanism::SysvMq => Some((
                read_limit("/proc/sys/kernel/msgmax").unwrap_or(8192),
                "/proc/sys/kernel/msgmax",
            )),
            // A datagram must fit the socket's send buffer whole; the lab asks
            // for a buffer twice the message and the kernel caps it at wmem_max.
            LatencyMechanism::UnixDgram => Some((
                read_limit("/proc/sys/net/core/wmem_max")
                    .map_or(65536, |max| (max / 2).min(1 << 20)),
                "half of /proc/sys/net/core/wmem_max",
            )),
            _ => None,
        }
    }
}

fn read_limit(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// The table of mechanisms.
pub fn mechanisms() -> Vec<LatencyMechanismInfo> {
    LatencyMechanism::ALL.iter().map(|m| m.info()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_unknown_ones_list_the_known() {
        for m in LatencyMechanism::ALL {
            assert_eq!(LatencyMechanism::parse(m.id()).unwrap(), m);
            assert_eq!(serde_json::to_value(m).unwrap(), m.id());
        }
        match LatencyMechanism::parse("carrier-pigeon") {
            Err(LatencyError::UnknownMechanism { known, .. }) => assert_eq!(known.len(), 12),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn only_the_ring_lacks_a_mode_and_it_says_why() {
        for m in LatencyMechanism::ALL {
            let info = m.info();
            assert!(info.lacks_mode(Mode::Busy).is_none(), "{}", info.id);
            assert_eq!(
                info.lacks_mode(Mode::Blocking).is_some(),
                m == LatencyMechanism::ShmRing
            );
        }
    }
}
