//! Errors of the two ends, each saying what happened and what to do about it.

use std::io;

use serde::{Deserialize, Serialize};

use crate::size::ByteSize;

/// Why an end (writer or reader) stopped.
#[derive(Debug, thiserror::Error)]
pub enum EndError {
    /// vmsplice or splice was asked for on something that is not a pipe.
    #[error("{stream} is not a pipe, and {call} only works on pipes: run it as `pipebench write --vmsplice | pipebench read --splice`")]
    NotAPipe {
        /// `stdout` or `stdin`.
        stream: &'static str,
        /// `vmsplice` or `splice`.
        call: &'static str,
    },
    /// The writer would spray binary data over a terminal.
    #[error("stdout is a terminal: pipe the writer into the reader, e.g. `pipebench write | pipebench read`")]
    StdoutIsTerminal,
    /// F_SETPIPE_SZ above /proc/sys/fs/pipe-max-size.
    #[error("pipe size {requested} is over this system's limit of {limit} (/proc/sys/fs/pipe-max-size): ask for at most {limit}, or raise the limit as root with `sysctl fs.pipe-max-size={bytes}`", bytes = requested.bytes())]
    PipeSizeOverLimit {
        /// What was asked for.
        requested: ByteSize,
        /// The system's limit.
        limit: ByteSize,
    },
    /// The options do not make sense together.
    #[error("{0}")]
    Invalid(String),
    /// The chosen CPU does not exist or is not allowed.
    #[error("cannot pin to CPU {cpu}: this process may use CPUs {allowed}; choose one of them with --cpu")]
    BadCpu {
        /// The CPU asked for.
        cpu: usize,
        /// The CPUs that are allowed, e.g. `0-1`.
        allowed: String,
    },
    /// The reader saw end-of-file before the bytes it expected.
    #[error("the writer stopped early: got {got} of the {expected} bytes expected (see the writer's error, if any)")]
    EarlyEof {
        /// Bytes received.
        got: u64,
        /// Bytes expected.
        expected: u64,
    },
    /// The writer's reader went away.
    #[error("the reader closed the pipe after {written} bytes")]
    ReaderGone {
        /// Bytes written before the pipe broke.
        written: u64,
    },
    /// A verified byte did not match.
    #[error("corrupted data at byte {offset}: expected {expected:#04x}, got {got:#04x} (was a buffer rewritten while the pipe still referenced it?)")]
    Corrupt {
        /// Stream offset of the first bad byte.
        offset: u64,
        /// The byte expected there.
        expected: u8,
        /// The byte received.
        got: u8,
    },
    /// Huge pages were asked for but the kernel has them switched off.
    #[error("transparent huge pages are disabled (/sys/kernel/mm/transparent_hugepage/enabled is `never`): run without --huge-pages, or enable them as root with `echo madvise > /sys/kernel/mm/transparent_hugepage/enabled`")]
    HugePagesDisabled,
    /// mlock failed, usually for lack of RLIMIT_MEMLOCK.
    #[error("mlock of {size} failed ({source}): raise the limit with `ulimit -l unlimited` or run without --lock-memory")]
    Lock {
        /// Bytes that could not be locked.
        size: ByteSize,
        /// The system error.
        source: io::Error,
    },
    /// A system call failed.
    #[error("{call} failed: {source}")]
    Sys {
        /// The call, e.g. `vmsplice`.
        call: &'static str,
        /// The system error.
        source: io::Error,
    },
}

/// What kind of failure an end had, as the harness learns it over the report fd:
/// the harness decides on this, never on the wording of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EndErrorKind {
    /// See [`EndError::NotAPipe`].
    NotAPipe,
    /// See [`EndError::StdoutIsTerminal`].
    StdoutIsTerminal,
    /// See [`EndError::PipeSizeOverLimit`].
    PipeSizeOverLimit,
    /// See [`EndError::Invalid`].
    Invalid,
    /// See [`EndError::BadCpu`].
    BadCpu,
    /// See [`EndError::EarlyEof`].
    EarlyEof,
    /// See [`EndError::ReaderGone`].
    ReaderGone,
    /// See [`EndError::Corrupt`].
    Corrupt,
    /// See [`EndError::HugePagesDisabled`].
    HugePagesDisabled,
    /// See [`EndError::Lock`].
    Lock,
    /// See [`EndError::Sys`].
    Sys,
    /// The end died without a report (killed by a signal, crashed).
    Killed,
}

impl EndErrorKind {
    /// Whether this failure only echoes the other end's: a reader that stops makes
    /// the writer see a closed pipe, a writer that stops makes the reader see an
    /// early end of file, and the harness kills the survivor of a failed run.
    pub(crate) fn is_echo(self) -> bool {
        matches!(
            self,
            EndErrorKind::EarlyEof | EndErrorKind::ReaderGone | EndErrorKind::Killed
        )
    }
}

/// An end's failure as it travels to the harness: its kind and its sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndFailure {
    /// What kind of failure.
    pub kind: EndErrorKind,
    /// The end's own sentence: what happened and what to do.
    pub message: String,
}

impl From<&EndError> for EndFailure {
    fn from(err: &EndError) -> Self {
        EndFailure {
            kind: err.kind(),
            message: err.to_string(),
        }
    }
}

impl EndError {
    /// This error's kind.
    pub fn kind(&self) -> EndErrorKind {
        match self {
            EndError::NotAPipe { .. } => EndErrorKind::NotAPipe,
            EndError::StdoutIsTerminal => EndErrorKind::StdoutIsTerminal,
            EndError::PipeSizeOverLimit { .. } => EndErrorKind::PipeSizeOverLimit,
            EndError::Invalid(_) => EndErrorKind::Invalid,
            EndError::BadCpu { .. } => EndErrorKind::BadCpu,
            EndError::EarlyEof { .. } => EndErrorKind::EarlyEof,
            EndError::ReaderGone { .. } => EndErrorKind::ReaderGone,
            EndError::Corrupt { .. } => EndErrorKind::Corrupt,
            EndError::HugePagesDisabled => EndErrorKind::HugePagesDisabled,
            EndError::Lock { .. } => EndErrorKind::Lock,
            EndError::Sys { .. } => EndErrorKind::Sys,
        }
    }

    /// Wraps a rustix errno from `call`.
    pub fn sys(call: &'static str) -> impl FnOnce(rustix::io::Errno) -> EndError {
        move |errno| EndError::Sys {
            call,
            source: errno.into(),
        }
    }

    /// The process exit code for this error: 2 for unusable options, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            EndError::Invalid(_) | EndError::BadCpu { .. } | EndError::PipeSizeOverLimit { .. } => {
                2
            }
            _ => 1,
        }
    }
}
