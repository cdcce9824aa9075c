//! The zero-copy IPC lab: fourteen ways to move bytes from one process to another,
//! and five file experiments, each measured on the reader's own machine beside the
//! figure of the BiscuitOS zero-copy survey (Linux 6.10 x86_64, in an emulator).
//!
//! [`mechanisms`] is the table: a stable id per mechanism, how many times its data
//! path copies each byte and where, the kernel functions on that path, and the
//! survey's figure. [`run`] runs one of them: the harness (this process) creates
//! the shared resources, re-executes the current program as two ends (`pipebench
//! ipc-end`, a producer and a consumer, or one process for an experiment), waits,
//! checks the consumer's checksum against the pattern's, and removes every
//! resource it created, also when an end fails, is killed, or the run is
//! cancelled.
//!
//! # The survey's splice failures above about 400 MB
//!
//! The survey reports that its splice cases failed above about 400 MB. Ours do not:
//! `fifo-splice`, `pipe-splice` and `tcp-splice` move 512 MiB and 1 GiB here and
//! verify (on the project's VM they do get slower per byte than at 200 MiB; that
//! is a slowdown, not a failure, and its cause is not pinned down yet). Reasoning
//! from what splice does, the usual suspects do not explain that
//! threshold: splice takes a `size_t` length and returns `ssize_t`, and the kernel
//! caps one call at `MAX_RW_COUNT` (2 GiB - 4 KiB) without failing, so a 32-bit
//! length or an `int` return would only break at 2 GiB; one call moves at most the
//! pipe's capacity (64 KiB by default), so a program must loop over partial
//! returns, and one that passes the whole size once and treats a short count as an
//! error fails at *any* size above the pipe capacity, not at 400 MB. What does
//! scale with the size is memory: file -> pipe -> file keeps both the source and
//! the destination in the page cache, and an emulated machine with a RAM-backed
//! root file system (as BiscuitOS boots) holds both in RAM, so about 2 x 400 MB
//! exhausts a guest of 512 MiB to 1 GiB. That is the most plausible cause; the
//! survey's code is not available to confirm it.

pub(crate) mod data;
pub(crate) mod files;
pub mod harness;
pub mod matrix;
pub(crate) mod pipes;
pub mod shared;
pub(crate) mod sockets;
pub mod sysv;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::ends::report::EndUsage;
use crate::process::launch::EndProgram;
use crate::size::{ByteSize, GIB, KIB, MIB};

pub use harness::{end_main, run};

/// Default bytes per run: 200 MiB, as the survey.
pub const DEFAULT_BYTES: u64 = 200 * MIB;
/// Largest byte count a run accepts.
pub const MAX_BYTES: u64 = 4 * GIB;
/// Default bytes per call for the producer/consumer pairs.
pub const DEFAULT_CHUNK: u64 = 64 * KIB;
/// Largest chunk.
pub const MAX_CHUNK: u64 = 64 * MIB;

/// Which kind of family a mechanism belongs to, for grouping in tables and the book.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// System V message queue.
    MessageQueue,
    /// Named or anonymous pipes.
    Pipe,
    /// TCP loopback or Unix domain sockets.
    Socket,
    /// A file or shared memory both ends map or share.
    SharedMemory,
    /// Single-process file and memory experiments.
    FileExperiment,
}

/// A figure of the BiscuitOS zero-copy survey (Linux 6.10 x86_64, emulated).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SurveyFigure {
    /// Milliseconds it reported.
    pub ms: f64,
    /// For how many bytes.
    pub bytes: u64,
}

/// One mechanism or experiment of the lab.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mechanism {
    /// Stable kebab-case id (also the catalog step id, later).
    pub id: &'static str,
    /// Human title.
    pub title: &'static str,
    /// Family.
    pub family: Family,
    /// Whether it runs as a producer/consumer pair (false: one process).
    pub pair: bool,
    /// Times each byte is copied by the CPU on its way (None for experiments where
    /// the count is not the point).
    pub copies: Option<u32>,
    /// Where each copy happens, in order.
    pub copy_path: &'static str,
    /// Kernel functions on the data path (from the survey and `perf` here).
    pub kernel_functions: &'static [&'static str],
    /// Kernel functions a sampling profile of this mechanism actually showed in
    /// its ends' kernel stacks on the project's machine (see [`SEEN_HERE`]);
    /// empty where it was not profiled.
    pub seen_here: &'static [&'static str],
    /// The survey's figure, when it has one.
    pub survey: Option<SurveyFigure>,
    /// Whether the run needs files in `dir`.
    pub uses_files: bool,
}

/// The kernel functions `perf` saw in each mechanism's kernel stacks, on the
/// project's machine: a 2-core AMD EPYC KVM guest, Linux 6.18.44, ext4, with
///
/// ```text
/// perf record -a -g -e cpu-clock -F 2000 -- pipebench ipc MECHANISM --repeats 1
/// ```
///
/// at the default 200 MiB, counting only the samples of the two ends (not the
/// harness writing the source file). A function on the survey's list that is
/// missing here was not seen because it is inlined (`load_msg` is not, but
/// `skb_copy_to_page_nocache`, `do_shared_fault` and `wp_page_copy` are), runs
/// once per run (`memfd_create`, `scm_fp_copy`, `do_shmat`), or was renamed:
/// Linux 6.12's `pipe_read` and `pipe_write` are `anon_pipe_read` and
/// `anon_pipe_write` on 6.18 (a FIFO's go through `fifo_pipe_read`/
/// `fifo_pipe_write` first), and copy-on-write copies with
/// `copy_mc_enhanced_fast_string` on this CPU. Extra functions (not on the survey's list) are the ones that carry the
/// copies here: `copy_folio_from_iter_atomic` into the page cache, `_copy_to_iter`
/// out of it.
pub const SEEN_HERE: &[(&str, &[&str])] = &[
    (
        "sysv-msgqueue",
        &[
            "do_msgsnd",
            "load_msg",
            "do_msg_fill",
            "do_msgrcv",
            "store_msg",
            "free_msg",
        ],
    ),
    (
        "fifo-rw",
        &[
            "filemap_read",
            "fifo_pipe_write",
            "anon_pipe_write",
            "copy_page_from_iter",
            "fifo_pipe_read",
            "anon_pipe_read",
            "copy_page_to_iter",
            "ext4_buffered_write_iter",
            "generic_perform_write",
            "copy_folio_from_iter_atomic",
        ],
    ),
    (
        "fifo-splice",
        &[
            "do_splice",
            "splice_file_to_pipe",
            "filemap_splice_read",
            "iter_file_splice_write",
            "ext4_buffered_write_iter",
            "generic_perform_write",
            "copy_folio_from_iter_atomic",
        ],
    ),
    (
        "pipe-rw",
        &[
            "filemap_read",
            "anon_pipe_write",
            "copy_page_from_iter",
            "anon_pipe_read",
            "copy_page_to_iter",
            "ext4_buffered_write_iter",
            "generic_perform_write",
            "copy_folio_from_iter_atomic",
        ],
    ),
    (
        "pipe-splice",
        &[
            "do_splice",
            "splice_file_to_pipe",
            "filemap_splice_read",
            "iter_file_splice_write",
            "ext4_buffered_write_iter",
            "generic_perform_write",
            "copy_folio_from_iter_atomic",
        ],
    ),
    (
        "tcp-rw",
        &[
            "filemap_read",
            "tcp_sendmsg_locked",
            "_copy_from_iter",
            "__tcp_transmit_skb",
            "tcp_v4_rcv",
            "tcp_recvmsg",
            "skb_copy_datagram_iter",
            "generic_perform_write",
        ],
    ),
    (
        "tcp-sendfile",
        &[
            "do_sendfile",
            "do_splice_direct",
            "splice_direct_to_actor",
            "filemap_splice_read",
            "splice_to_socket",
            "tcp_sendmsg_locked",
            "skb_splice_from_iter",
            "tcp_recvmsg",
            "skb_copy_datagram_iter",
        ],
    ),
    (
        "tcp-splice",
        &[
            "do_splice",
            "filemap_splice_read",
            "splice_to_socket",
            "tcp_sendmsg_locked",
            "skb_splice_from_iter",
            "tcp_recvmsg",
            "skb_copy_datagram_iter",
        ],
    ),
    (
        "unix-stream",
        &[
            "unix_stream_sendmsg",
            "skb_copy_datagram_from_iter",
            "unix_stream_read_generic",
            "skb_copy_datagram_iter",
            "generic_perform_write",
        ],
    ),
    (
        "file-flock",
        &[
            "flock_lock_inode",
            "generic_perform_write",
            "copy_folio_from_iter_atomic",
            "filemap_read",
            "copy_page_to_iter",
        ],
    ),
    (
        "file-mmap",
        &[
            "do_fault",
            "filemap_fault",
            "ext4_page_mkwrite",
            "finish_fault",
        ],
    ),
    (
        "sysv-shm",
        &[
            "shm_fault",
            "shmem_fault",
            "shmem_get_folio_gfp",
            "shmem_alloc_and_add_folio",
            "finish_fault",
        ],
    ),
    (
        "posix-shm",
        &[
            "do_fault",
            "shmem_fault",
            "shmem_get_folio_gfp",
            "shmem_alloc_and_add_folio",
            "finish_fault",
        ],
    ),
    (
        "memfd-scm",
        &[
            "shmem_fault",
            "shmem_get_folio_gfp",
            "shmem_alloc_and_add_folio",
            "finish_fault",
            "shmem_evict_inode",
        ],
    ),
    ("lines-mmap", &["filemap_map_pages"]),
    ("lines-read", &["filemap_read", "copy_page_to_iter"]),
    (
        "direct-io",
        &["ext4_file_read_iter", "iomap_dio_rw", "submit_bio"],
    ),
    (
        "buffered-io",
        &["filemap_read", "filemap_get_pages", "copy_page_to_iter"],
    ),
    (
        "cow-fork",
        &[
            "do_wp_page",
            "vma_alloc_folio_noprof",
            "copy_mc_enhanced_fast_string",
        ],
    ),
];

fn seen_here(id: &str) -> &'static [&'static str] {
    SEEN_HERE
        .iter()
        .find(|(m, _)| *m == id)
        .map_or(&[], |(_, seen)| seen)
}

const fn survey(ms: f64, bytes: u64) -> Option<SurveyFigure> {
    Some(SurveyFigure { ms, bytes })
}

/// The lab's table, in the order of the survey.
// ANCHOR: mechanisms
pub fn mechanisms() -> Vec<Mechanism> {
    use Family::*;
    let m =
        |id, title, family, copies, copy_path, kernel_functions, survey, uses_files| Mechanism {
            id,
            title,
            family,
            pair: family != FileExperiment,
            copies,
            copy_path,
            kernel_functions,
            seen_here: seen_here(id),
            survey,
            uses_files,
        };
    vec![
        m("sysv-msgqueue", "System V message queue (msgsnd/msgrcv)", MessageQueue, Some(2),
          "user -> kernel (msgsnd: load_msg), kernel -> user (msgrcv: store_msg)",
          &["do_msgsnd", "load_msg", "do_msgrcv", "store_msg"], survey(5777.0, 200 * MIB), false),
        m("fifo-rw", "FIFO, read/write from a file to a file", Pipe, Some(4),
          "page cache -> user (read: filemap_read), user -> pipe (pipe_write: copy_page_from_iter), pipe -> user (pipe_read: copy_page_to_iter), user -> page cache (write: generic_perform_write)",
          &["filemap_read", "pipe_write", "copy_page_from_iter", "pipe_read", "copy_page_to_iter", "generic_perform_write"],
          survey(991.0, 200 * MIB), true),
        m("fifo-splice", "FIFO with splice: file -> FIFO -> file", Pipe, Some(1),
          "file -> FIFO moves page references (filemap_splice_read), FIFO -> file copies into the destination's page cache (iter_file_splice_write)",
          &["ext4_file_splice_read", "filemap_splice_read", "iter_file_splice_write", "generic_perform_write"],
          survey(438.0, 200 * MIB), true),
        m("pipe-rw", "anonymous pipe, read/write from a file to a file", Pipe, Some(4),
          "page cache -> user (read), user -> pipe (pipe_write), pipe -> user (pipe_read), user -> page cache (write)",
          &["filemap_read", "pipe_write", "copy_page_from_iter", "pipe_read", "copy_page_to_iter", "generic_perform_write"],
          survey(7567.0, 200 * MIB), true),
        m("pipe-splice", "anonymous pipe with splice: file -> pipe -> file", Pipe, Some(1),
          "file -> pipe moves page references (filemap_splice_read), pipe -> file copies into the destination's page cache (iter_file_splice_write)",
          &["filemap_splice_read", "iter_file_splice_write", "generic_perform_write"],
          survey(586.0, 200 * MIB), true),
        m("tcp-rw", "TCP loopback, read + send, received into a file", Socket, Some(4),
          "page cache -> user (read), user -> skb (tcp_sendmsg_locked: skb_copy_to_page_nocache), skb -> user (tcp_recvmsg: skb_copy_datagram_iter), user -> page cache (write)",
          &["filemap_read", "tcp_sendmsg_locked", "skb_copy_to_page_nocache", "tcp_recvmsg", "skb_copy_datagram_iter", "generic_perform_write"],
          survey(4633.0, 200 * MIB), true),
        m("tcp-sendfile", "TCP loopback with sendfile, received into a file", Socket, Some(2),
          "page cache pages are attached to the skb by reference (sendfile: MSG_SPLICE_PAGES), skb -> user (tcp_recvmsg: skb_copy_datagram_iter), user -> page cache (write)",
          &["do_sendfile", "splice_direct_to_actor", "filemap_splice_read", "splice_to_socket", "tcp_sendmsg_locked", "skb_splice_from_iter", "skb_copy_datagram_iter"],
          survey(616.0, 200 * MIB), true),
        m("tcp-splice", "TCP loopback with splice file -> pipe -> socket", Socket, Some(2),
          "file -> pipe and pipe -> socket move page references (filemap_splice_read, splice_to_socket), skb -> user (skb_copy_datagram_iter), user -> page cache (write)",
          &["filemap_splice_read", "splice_to_socket", "tcp_sendmsg_locked", "skb_splice_from_iter", "skb_copy_datagram_iter"],
          survey(224.0, GIB), true),
        m("unix-stream", "Unix domain stream socket, read/write from a file to a file", Socket, Some(4),
          "page cache -> user (read), user -> skb (unix_stream_sendmsg: skb_copy_datagram_from_iter), skb -> user (unix_stream_recvmsg: skb_copy_datagram_iter), user -> page cache (write)",
          &["unix_stream_sendmsg", "skb_copy_datagram_from_iter", "unix_stream_read_generic", "skb_copy_datagram_iter"],
          None, true),
        m("file-flock", "shared file, write/read with flock", SharedMemory, Some(2),
          "user -> page cache (write: copy_page_from_iter_atomic), page cache -> user (read: copy_folio_to_iter)",
          &["flock_lock_inode", "generic_perform_write", "copy_page_from_iter_atomic", "filemap_read", "copy_folio_to_iter"],
          survey(12032.0, 200 * MIB), true),
        m("file-mmap", "shared file mapping (mmap MAP_SHARED)", SharedMemory, Some(0),
          "the producer writes into the file's page cache pages through its mapping; the consumer reads the same pages through its own",
          &["do_shared_fault", "filemap_fault", "ext4_page_mkwrite", "finish_fault"],
          survey(1659.0, 200 * MIB), true),
        m("sysv-shm", "System V shared memory (shmget/shmat)", SharedMemory, Some(0),
          "both ends map the same shmem pages; the producer writes them, the consumer reads them",
          &["do_shmat", "shmem_fault", "shmem_get_folio_gfp"],
          survey(1387.0, 200 * MIB), false),
        m("posix-shm", "POSIX shared memory (shm_open + mmap in /dev/shm)", SharedMemory, Some(0),
          "both ends map the same tmpfs pages; the producer writes them, the consumer reads them",
          &["shmem_fault", "shmem_get_folio_gfp", "do_shared_fault"],
          survey(1373.0, 200 * MIB), false),
        m("memfd-scm", "memfd, fd passed over a Unix socket (SCM_RIGHTS), mmap", SharedMemory, Some(0),
          "the fd travels over the socket (scm_fp_copy), both ends map the same shmem pages",
          &["memfd_create", "unix_stream_sendmsg", "scm_fp_copy", "scm_detach_fds", "shmem_fault"],
          survey(1435.0, 200 * MIB), false),
        m("lines-mmap", "count lines: mmap + memchr", FileExperiment, Some(0),
          "the file's page cache pages are mapped and scanned in place",
          &["filemap_map_pages", "filemap_fault"], None, true),
        m("lines-read", "count lines: buffered reads (getline-like)", FileExperiment, Some(1),
          "page cache -> user buffer (read: filemap_read), then scanned",
          &["filemap_read", "copy_folio_to_iter"], None, true),
        m("direct-io", "1 KiB reads with O_DIRECT (no page cache)", FileExperiment, Some(0),
          "the device DMAs straight into the aligned user buffer; one device request per read",
          &["iomap_dio_rw", "ext4_dio_read_iter", "submit_bio"], survey(9720.0, GIB), true),
        m("buffered-io", "1 KiB buffered reads (page cache warm)", FileExperiment, Some(1),
          "page cache -> user (read: filemap_read, copy_folio_to_iter)",
          &["filemap_read", "copy_folio_to_iter"], survey(250.0, GIB), true),
        m("cow-fork", "copy-on-write after fork", FileExperiment, Some(1),
          "the child's first write to each shared private page faults and copies it (do_wp_page: wp_page_copy)",
          &["do_wp_page", "wp_page_copy", "copy_user_highpage"], None, false),
    ]
}
// ANCHOR_END: mechanisms

/// The mechanism with this id.
pub fn find(id: &str) -> Option<Mechanism> {
    mechanisms().into_iter().find(|m| m.id == id)
}

/// All ids, in table order.
pub fn ids() -> Vec<&'static str> {
    mechanisms().into_iter().map(|m| m.id).collect()
}

/// What a caller may choose about a run. Sizes accept numbers or strings such as
/// `"8MiB"`; unknown fields are refused so a typo is not silently ignored.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IpcParams {
    /// Bytes to move (default 200 MiB, at most 4 GiB).
    pub bytes: ByteSize,
    /// Bytes per call (default 64 KiB; msgmax for the message queue; 1 KiB for the
    /// I/O experiments).
    pub chunk: Option<ByteSize>,
    /// The folder in which the run makes its private folder (for a FIFO, a
    /// shared file, notes of kernel objects) and its unnamed files; made if
    /// missing, and refused unless no other user can rename what is made there
    /// (default: [`harness::default_dir`] for the file mechanisms, else
    /// `$XDG_RUNTIME_DIR` or the temp dir).
    pub dir: Option<PathBuf>,
    /// TCP port on 127.0.0.1 (default 0: any free port).
    pub port: Option<u16>,
    /// Kill the run after this long.
    #[serde(skip)]
    pub timeout: Duration,
    /// Set to true from another thread to stop the run (it then returns
    /// [`IpcError::Cancelled`] after removing everything).
    #[serde(skip)]
    pub cancel: Option<Arc<AtomicBool>>,
    /// The program that acts as an end (`exe [prefix...] ipc-end SPEC`); default:
    /// this executable, which must then be `pipebench` or offer `ipc-end` too.
    #[serde(skip)]
    pub program: Option<EndProgram>,
    /// Kept at the bytes the receiving end has taken so far while the run lasts
    /// (updated every few milliseconds), for showing the run live.
    #[serde(skip)]
    pub progress: Option<Arc<AtomicU64>>,
}

impl Default for IpcParams {
    fn default() -> Self {
        IpcParams {
            bytes: ByteSize(DEFAULT_BYTES),
            chunk: None,
            dir: None,
            port: None,
            timeout: Duration::from_secs(300),
            cancel: None,
            program: None,
            progress: None,
        }
    }
}

/// What the child of the copy-on-write experiment saw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CowReport {
    /// Pages the child wrote.
    pub pages: u64,
    /// The child's minor faults just before its first write.
    pub child_faults_before: u64,
    /// The child's minor faults just after writing every page.
    pub child_faults_after: u64,
    /// Whether the parent still read the original bytes after the child wrote.
    pub parent_sees_original: bool,
    /// Whether the child read back its own new bytes.
    pub child_sees_its_write: bool,
}

/// One end's resource usage in an [`IpcResult`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IpcEnd {
    /// `producer`, `consumer` or `solo`.
    pub role: String,
    /// getrusage of that end over its whole life.
    pub usage: EndUsage,
}

/// The outcome of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IpcResult {
    /// Mechanism id.
    pub mechanism: String,
    /// Bytes moved.
    pub bytes: u64,
    /// Bytes per call.
    pub chunk: u64,
    /// From the producer's first call to the consumer's last byte (CLOCK_MONOTONIC
    /// of both ends), milliseconds.
    pub elapsed_ms: f64,
    /// Throughput in GiB/s (2^30 bytes).
    pub gib_per_s: f64,
    /// Throughput in MiB/s (2^20 bytes).
    pub mib_per_s: f64,
    /// Copies per byte on the data path.
    pub copies: Option<u32>,
    /// Kernel functions on the data path.
    pub kernel_functions: Vec<String>,
    /// The survey's milliseconds, when it has a figure.
    pub survey_ms: Option<f64>,
    /// For how many bytes the survey's figure is.
    pub survey_bytes: Option<u64>,
    /// Whether the consumer's checksum (or line count) matched the pattern's.
    pub checksum_ok: bool,
    /// Per-end resource usage.
    pub ends: Vec<IpcEnd>,
    /// Lines counted (line experiments).
    pub lines: Option<u64>,
    /// Copy-on-write findings (`cow-fork`).
    pub cow: Option<CowReport>,
    /// The file system type of `dir`, for runs that use files (e.g. `ext4`).
    pub filesystem: Option<String>,
    /// Things the reader should know about this run.
    pub notes: Vec<String>,
}

/// Why a run was refused or failed. Each limit has its own variant, so a caller
/// can tell which one without reading the message.
#[derive(Debug, thiserror::Error)]
pub enum IpcError {
    /// No such mechanism.
    #[error("unknown IPC mechanism `{id}`; known: {known}")]
    UnknownMechanism {
        /// What was asked for.
        id: String,
        /// Known ids, comma-separated.
        known: String,
    },
    /// A parameter is outside its bounds.
    #[error("{name} = {value} is out of range: allowed {min} to {max}")]
    OutOfRange {
        /// Parameter name.
        name: &'static str,
        /// The value given.
        value: String,
        /// Lowest allowed.
        min: String,
        /// Highest allowed.
        max: String,
    },
    /// A parameter is in range but unusable.
    #[error("{0}")]
    Invalid(String),
    /// A message is larger than kernel.msgmax.
    #[error("a System V message of {requested} bytes is over kernel.msgmax = {limit}: use --chunk {limit} or less, or raise the limit with `sysctl -w kernel.msgmax={requested}`")]
    MsgMax {
        /// Bytes per message asked for.
        requested: u64,
        /// The sysctl's value.
        limit: u64,
    },
    /// A message is larger than a queue may hold (kernel.msgmnb).
    #[error("a System V message of {requested} bytes does not fit a queue of kernel.msgmnb = {limit} bytes: use a smaller --chunk, or raise the limit with `sysctl -w kernel.msgmnb={requested}`")]
    MsgMnb {
        /// Bytes per message asked for.
        requested: u64,
        /// The sysctl's value.
        limit: u64,
    },
    /// A segment is larger than kernel.shmmax.
    #[error("a System V shared memory segment of {requested} bytes is over kernel.shmmax = {limit}: use a smaller --bytes, or raise the limit with `sysctl -w kernel.shmmax={requested}`")]
    ShmMax {
        /// Segment bytes asked for.
        requested: u64,
        /// The sysctl's value.
        limit: u64,
    },
    /// A segment needs more pages than kernel.shmall allows in total.
    #[error("a System V shared memory segment of {requested_pages} pages is over kernel.shmall = {limit_pages} pages: use a smaller --bytes, or raise the limit with `sysctl -w kernel.shmall={requested_pages}`")]
    ShmAll {
        /// Pages asked for.
        requested_pages: u64,
        /// The sysctl's value.
        limit_pages: u64,
    },
    /// /dev/shm has not enough free space.
    #[error("/dev/shm has {available} bytes free but this run needs {needed}: use a smaller --bytes, or enlarge it with `mount -o remount,size={needed_mib}M /dev/shm` (as root)")]
    DevShmTooSmall {
        /// Bytes needed.
        needed: u64,
        /// Bytes free.
        available: u64,
        /// Needed, rounded up to MiB, for the command.
        needed_mib: u64,
    },
    /// The file system of `dir` refuses O_DIRECT.
    #[error("{dir} is on {filesystem}, which refuses O_DIRECT: pass --dir on a disk file system such as ext4 or xfs")]
    DirectIoUnsupported {
        /// The directory.
        dir: String,
        /// Its file system type.
        filesystem: String,
    },
    /// `dir` is on tmpfs, where O_DIRECT measures nothing.
    #[error("{dir} is on tmpfs: older kernels refuse O_DIRECT there and newer ones accept it but have no device to bypass the cache for, so the experiment would measure memory copies only; pass --dir on a disk file system such as ext4 or xfs")]
    DirectIoOnTmpfs {
        /// The directory.
        dir: String,
    },
    /// The requested TCP port is taken.
    #[error("TCP port {port} on 127.0.0.1 is in use: choose another --port, or leave it out to use any free port")]
    PortInUse {
        /// The port.
        port: u16,
    },
    /// The folder for the run's files (or one on its path) lets another user
    /// rename or replace what the run makes there.
    #[error(
        "{dir} cannot hold the run's private files: {why}; choose a folder of your own (`--dir`, or TMPDIR)"
    )]
    UnsafeDir {
        /// The folder at fault.
        dir: String,
        /// What is wrong with it.
        why: crate::process::rundir::Unsafe,
    },
    /// A file system has not enough room for the run's files.
    #[error("{dir} has {available} bytes free but this run needs {needed}: use a smaller --bytes or another --dir")]
    DirTooSmall {
        /// The directory.
        dir: String,
        /// Bytes needed.
        needed: u64,
        /// Bytes free.
        available: u64,
    },
    /// Setting up a resource failed.
    #[error("cannot {what}: {source}")]
    Setup {
        /// What the harness was doing.
        what: String,
        /// Why it failed.
        source: std::io::Error,
    },
    /// An end failed or was killed.
    #[error("the {role} failed ({status}): {message}")]
    EndFailed {
        /// `producer`, `consumer` or `solo`.
        role: String,
        /// How it exited.
        status: String,
        /// What it said.
        message: String,
    },
    /// The consumer received other bytes than the producer sent.
    #[error("checksum mismatch: the consumer got {got:#018x} over {bytes} bytes, the pattern gives {expected:#018x}")]
    ChecksumMismatch {
        /// The pattern's checksum.
        expected: u64,
        /// The consumer's.
        got: u64,
        /// Bytes the consumer saw.
        bytes: u64,
    },
    /// The run was cancelled by its owner.
    #[error("the run was cancelled")]
    Cancelled,
    /// The run took too long and was stopped.
    #[error("the run took longer than {0:?} and was stopped")]
    Timeout(Duration),
}

/// What kind of [`IpcError`] happened, without its details: what a program (the
/// server, a page) decides on, never the message's wording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IpcErrorKind {
    /// [`IpcError::UnknownMechanism`].
    UnknownMechanism,
    /// [`IpcError::OutOfRange`].
    OutOfRange,
    /// [`IpcError::Invalid`].
    Invalid,
    /// [`IpcError::MsgMax`]: the sysctl kernel.msgmax.
    MsgMax,
    /// [`IpcError::MsgMnb`]: the sysctl kernel.msgmnb.
    MsgMnb,
    /// [`IpcError::ShmMax`]: the sysctl kernel.shmmax.
    ShmMax,
    /// [`IpcError::ShmAll`]: the sysctl kernel.shmall.
    ShmAll,
    /// [`IpcError::DevShmTooSmall`].
    DevShmTooSmall,
    /// [`IpcError::DirectIoUnsupported`].
    DirectIoUnsupported,
    /// [`IpcError::DirectIoOnTmpfs`].
    DirectIoOnTmpfs,
    /// [`IpcError::PortInUse`].
    PortInUse,
    /// [`IpcError::UnsafeDir`].
    UnsafeDir,
    /// [`IpcError::DirTooSmall`].
    DirTooSmall,
    /// [`IpcError::Setup`].
    Setup,
    /// [`IpcError::EndFailed`].
    EndFailed,
    /// [`IpcError::ChecksumMismatch`].
    ChecksumMismatch,
    /// [`IpcError::Cancelled`].
    Cancelled,
    /// [`IpcError::Timeout`].
    Timeout,
}

impl IpcError {
    /// The kind of this error.
    pub fn kind(&self) -> IpcErrorKind {
        use IpcErrorKind as K;
        match self {
            IpcError::UnknownMechanism { .. } => K::UnknownMechanism,
            IpcError::OutOfRange { .. } => K::OutOfRange,
            IpcError::Invalid(_) => K::Invalid,
            IpcError::MsgMax { .. } => K::MsgMax,
            IpcError::MsgMnb { .. } => K::MsgMnb,
            IpcError::ShmMax { .. } => K::ShmMax,
            IpcError::ShmAll { .. } => K::ShmAll,
            IpcError::DevShmTooSmall { .. } => K::DevShmTooSmall,
            IpcError::DirectIoUnsupported { .. } => K::DirectIoUnsupported,
            IpcError::DirectIoOnTmpfs { .. } => K::DirectIoOnTmpfs,
            IpcError::PortInUse { .. } => K::PortInUse,
            IpcError::UnsafeDir { .. } => K::UnsafeDir,
            IpcError::DirTooSmall { .. } => K::DirTooSmall,
            IpcError::Setup { .. } => K::Setup,
            IpcError::EndFailed { .. } => K::EndFailed,
            IpcError::ChecksumMismatch { .. } => K::ChecksumMismatch,
            IpcError::Cancelled => K::Cancelled,
            IpcError::Timeout(_) => K::Timeout,
        }
    }

    /// The end that failed (`producer`, `consumer` or `solo`), for
    /// [`IpcError::EndFailed`].
    pub fn role(&self) -> Option<&str> {
        match self {
            IpcError::EndFailed { role, .. } => Some(role),
            _ => None,
        }
    }

    /// Whether the error is about the caller's input or the system's limits (exit
    /// code 2 in the CLI) rather than a failure during the run.
    pub fn is_input_error(&self) -> bool {
        !matches!(
            self,
            IpcError::Setup { .. }
                | IpcError::EndFailed { .. }
                | IpcError::ChecksumMismatch { .. }
                | IpcError::Cancelled
                | IpcError::Timeout(_)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_profiled_id_is_a_mechanism_and_each_has_its_profile() {
        let ids = ids();
        for (id, seen) in SEEN_HERE {
            assert!(ids.contains(id), "{id} is not a mechanism");
            assert!(!seen.is_empty(), "{id}: nothing seen");
        }
        assert_eq!(SEEN_HERE.len(), ids.len(), "every mechanism was profiled");
        assert!(find("fifo-rw")
            .unwrap()
            .seen_here
            .contains(&"anon_pipe_write"));
    }

    #[test]
    fn every_error_has_a_kind_and_end_failures_a_role() {
        let err = IpcError::EndFailed {
            role: "consumer".into(),
            status: "exit code 1".into(),
            message: "x".into(),
        };
        assert_eq!(err.kind(), IpcErrorKind::EndFailed);
        assert_eq!(err.role(), Some("consumer"));
        assert_eq!(
            serde_json::to_string(
                &IpcError::ShmMax {
                    requested: 2,
                    limit: 1
                }
                .kind()
            )
            .unwrap(),
            r#""shm_max""#
        );
        assert_eq!(IpcError::Cancelled.role(), None);
    }
}
