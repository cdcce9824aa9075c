//! The lab's mechanisms: the [`Mechanism`] enum every part of the lab dispatches
//! on (parsed once, where an id comes in: clap, serde or [`Mechanism::parse`]),
//! and the table that says for each how many times it copies a byte, where, and
//! which kernel functions are on its path.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::IpcError;
use crate::size::{GIB, MIB};

/// One mechanism or experiment of the lab. Its wire id (`fifo-rw`, ...) is its
/// kebab-case name, the same in serde, clap and [`Mechanism::id`].
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
#[clap(rename_all = "kebab-case")]
pub enum Mechanism {
    /// System V message queue.
    SysvMsgqueue,
    /// FIFO, read/write.
    FifoRw,
    /// FIFO with splice.
    FifoSplice,
    /// Anonymous pipe, read/write.
    PipeRw,
    /// Anonymous pipe with splice.
    PipeSplice,
    /// TCP loopback, read + send.
    TcpRw,
    /// TCP loopback with sendfile.
    TcpSendfile,
    /// TCP loopback with splice through a pipe.
    TcpSplice,
    /// Unix domain stream socket.
    UnixStream,
    /// Shared file with flock.
    FileFlock,
    /// Shared file mapping.
    FileMmap,
    /// System V shared memory.
    SysvShm,
    /// POSIX shared memory.
    PosixShm,
    /// memfd passed over a Unix socket.
    MemfdScm,
    /// Count lines with mmap.
    LinesMmap,
    /// Count lines with buffered reads.
    LinesRead,
    /// 1 KiB O_DIRECT reads.
    DirectIo,
    /// 1 KiB buffered reads.
    BufferedIo,
    /// Copy-on-write after fork.
    CowFork,
    /// TCP loopback, send with MSG_ZEROCOPY and completion notifications.
    TcpMsgZerocopy,
    /// TCP loopback, received with TCP_ZEROCOPY_RECEIVE (mmap of the socket).
    TcpZerocopyReceive,
    /// TCP loopback, sent with io_uring's IORING_OP_SEND_ZC.
    UringSendZc,
    /// copy_file_range from one file to another.
    CopyFileRange,
    /// A reflink: ioctl(FICLONE).
    Ficlone,
}

impl Mechanism {
    /// Every mechanism, in table order.
    pub const ALL: [Mechanism; 24] = [
        Mechanism::SysvMsgqueue,
        Mechanism::FifoRw,
        Mechanism::FifoSplice,
        Mechanism::PipeRw,
        Mechanism::PipeSplice,
        Mechanism::TcpRw,
        Mechanism::TcpSendfile,
        Mechanism::TcpSplice,
        Mechanism::UnixStream,
        Mechanism::FileFlock,
        Mechanism::FileMmap,
        Mechanism::SysvShm,
        Mechanism::PosixShm,
        Mechanism::MemfdScm,
        Mechanism::LinesMmap,
        Mechanism::LinesRead,
        Mechanism::DirectIo,
        Mechanism::BufferedIo,
        Mechanism::CowFork,
        Mechanism::TcpMsgZerocopy,
        Mechanism::TcpZerocopyReceive,
        Mechanism::UringSendZc,
        Mechanism::CopyFileRange,
        Mechanism::Ficlone,
    ];

    /// The stable wire id.
    pub const fn id(self) -> &'static str {
        use Mechanism::*;
        match self {
            SysvMsgqueue => "sysv-msgqueue",
            FifoRw => "fifo-rw",
            FifoSplice => "fifo-splice",
            PipeRw => "pipe-rw",
            PipeSplice => "pipe-splice",
            TcpRw => "tcp-rw",
            TcpSendfile => "tcp-sendfile",
            TcpSplice => "tcp-splice",
            UnixStream => "unix-stream",
            FileFlock => "file-flock",
            FileMmap => "file-mmap",
            SysvShm => "sysv-shm",
            PosixShm => "posix-shm",
            MemfdScm => "memfd-scm",
            LinesMmap => "lines-mmap",
            LinesRead => "lines-read",
            DirectIo => "direct-io",
            BufferedIo => "buffered-io",
            CowFork => "cow-fork",
            TcpMsgZerocopy => "tcp-msg-zerocopy",
            TcpZerocopyReceive => "tcp-zerocopy-receive",
            UringSendZc => "uring-send-zc",
            CopyFileRange => "copy-file-range",
            Ficlone => "ficlone",
        }
    }

    /// The mechanism with wire id `id`, or the typed refusal that lists the known ones.
    pub fn parse(id: &str) -> Result<Mechanism, IpcError> {
        Mechanism::ALL
            .into_iter()
            .find(|m| m.id() == id)
            .ok_or_else(|| IpcError::UnknownMechanism {
                id: id.to_string(),
                known: ids().join(", "),
            })
    }

    /// Its row of the table.
    pub fn info(self) -> MechanismInfo {
        mechanisms()
            .into_iter()
            .find(|m| m.mechanism == self)
            .expect("every mechanism has a row")
    }

    /// Whether it runs over TCP loopback (a listening socket, a port).
    pub(crate) fn is_tcp(self) -> bool {
        use Mechanism::*;
        matches!(
            self,
            TcpRw | TcpSendfile | TcpSplice | TcpMsgZerocopy | TcpZerocopyReceive | UringSendZc
        )
    }
}

impl fmt::Display for Mechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl FromStr for Mechanism {
    type Err = IpcError;

    fn from_str(id: &str) -> Result<Self, Self::Err> {
        Mechanism::parse(id)
    }
}

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

/// One row of the lab's table: what a [`Mechanism`] does and costs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MechanismInfo {
    /// The mechanism (its id below is what goes on the wire).
    #[serde(skip)]
    pub mechanism: Mechanism,
    /// Stable kebab-case id.
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
pub fn mechanisms() -> Vec<MechanismInfo> {
    use Family::*;
    use Mechanism::*;
    let m = |mechanism: Mechanism,
             title,
             family,
             copies,
             copy_path,
             kernel_functions,
             survey,
             uses_files| MechanismInfo {
        mechanism,
        id: mechanism.id(),
        title,
        family,
        pair: family != FileExperiment,
        copies,
        copy_path,
        kernel_functions,
        seen_here: seen_here(mechanism.id()),
        survey,
        uses_files,
    };
    vec![
        m(SysvMsgqueue, "System V message queue (msgsnd/msgrcv)", MessageQueue, Some(2),
          "user -> kernel (msgsnd: load_msg), kernel -> user (msgrcv: store_msg)",
          &["do_msgsnd", "load_msg", "do_msgrcv", "store_msg"], survey(5777.0, 200 * MIB), false),
        m(FifoRw, "FIFO, read/write from a file to a file", Pipe, Some(4),
          "page cache -> user (read: filemap_read), user -> pipe (pipe_write: copy_page_from_iter), pipe -> user (pipe_read: copy_page_to_iter), user -> page cache (write: generic_perform_write)",
          &["filemap_read", "pipe_write", "copy_page_from_iter", "pipe_read", "copy_page_to_iter", "generic_perform_write"],
          survey(991.0, 200 * MIB), true),
        m(FifoSplice, "FIFO with splice: file -> FIFO -> file", Pipe, Some(1),
          "file -> FIFO moves page references (filemap_splice_read), FIFO -> file copies into the destination's page cache (iter_file_splice_write)",
          &["ext4_file_splice_read", "filemap_splice_read", "iter_file_splice_write", "generic_perform_write"],
          survey(438.0, 200 * MIB), true),
        m(PipeRw, "anonymous pipe, read/write from a file to a file", Pipe, Some(4),
          "page cache -> user (read), user -> pipe (pipe_write), pipe -> user (pipe_read), user -> page cache (write)",
          &["filemap_read", "pipe_write", "copy_page_from_iter", "pipe_read", "copy_page_to_iter", "generic_perform_write"],
          survey(7567.0, 200 * MIB), true),
        m(PipeSplice, "anonymous pipe with splice: file -> pipe -> file", Pipe, Some(1),
          "file -> pipe moves page references (filemap_splice_read), pipe -> file copies into the destination's page cache (iter_file_splice_write)",
          &["filemap_splice_read", "iter_file_splice_write", "generic_perform_write"],
          survey(586.0, 200 * MIB), true),
        m(TcpRw, "TCP loopback, read + send, received into a file", Socket, Some(4),
          "page cache -> user (read), user -> skb (tcp_sendmsg_locked: skb_copy_to_page_nocache), skb -> user (tcp_recvmsg: skb_copy_datagram_iter), user -> page cache (write)",
          &["filemap_read", "tcp_sendmsg_locked", "skb_copy_to_page_nocache", "tcp_recvmsg", "skb_copy_datagram_iter", "generic_perform_write"],
          survey(4633.0, 200 * MIB), true),
        m(TcpSendfile, "TCP loopback with sendfile, received into a file", Socket, Some(2),
          "page cache pages are attached to the skb by reference (sendfile: MSG_SPLICE_PAGES), skb -> user (tcp_recvmsg: skb_copy_datagram_iter), user -> page cache (write)",
          &["do_sendfile", "splice_direct_to_actor", "filemap_splice_read", "splice_to_socket", "tcp_sendmsg_locked", "skb_splice_from_iter", "skb_copy_datagram_iter"],
          survey(616.0, 200 * MIB), true),
        m(TcpSplice, "TCP loopback with splice file -> pipe -> socket", Socket, Some(2),
          "file -> pipe and pipe -> socket move page references (filemap_splice_read, splice_to_socket), skb -> user (skb_copy_datagram_iter), user -> page cache (write)",
          &["filemap_splice_read", "splice_to_socket", "tcp_sendmsg_locked", "skb_splice_from_iter", "skb_copy_datagram_iter"],
          survey(224.0, GIB), true),
        m(UnixStream, "Unix domain stream socket, read/write from a file to a file", Socket, Some(4),
          "page cache -> user (read), user -> skb (unix_stream_sendmsg: skb_copy_datagram_from_iter), skb -> user (unix_stream_recvmsg: skb_copy_datagram_iter), user -> page cache (write)",
          &["unix_stream_sendmsg", "skb_copy_datagram_from_iter", "unix_stream_read_generic", "skb_copy_datagram_iter"],
          None, true),
        m(FileFlock, "shared file, write/read with flock", SharedMemory, Some(2),
          "user -> page cache (write: copy_page_from_iter_atomic), page cache -> user (read: copy_folio_to_iter)",
          &["flock_lock_inode", "generic_perform_write", "copy_page_from_iter_atomic", "filemap_read", "copy_folio_to_iter"],
          survey(12032.0, 200 * MIB), true),
        m(FileMmap, "shared file mapping (mmap MAP_SHARED)", SharedMemory, Some(0),
          "the producer writes into the file's page cache pages through its mapping; the consumer reads the same pages through its own",
          &["do_shared_fault", "filemap_fault", "ext4_page_mkwrite", "finish_fault"],
          survey(1659.0, 200 * MIB), true),
        m(SysvShm, "System V shared memory (shmget/shmat)", SharedMemory, Some(0),
          "both ends map the same shmem pages; the producer writes them, the consumer reads them",
          &["do_shmat", "shmem_fault", "shmem_get_folio_gfp"],
          survey(1387.0, 200 * MIB), false),
        m(PosixShm, "POSIX shared memory (shm_open + mmap in /dev/shm)", SharedMemory, Some(0),
          "both ends map the same tmpfs pages; the producer writes them, the consumer reads them",
          &["shmem_fault", "shmem_get_folio_gfp", "do_shared_fault"],
          survey(1373.0, 200 * MIB), false),
        m(MemfdScm, "memfd, fd passed over a Unix socket (SCM_RIGHTS), mmap", SharedMemory, Some(0),
          "the fd travels over the socket (scm_fp_copy), both ends map the same shmem pages",
          &["memfd_create", "unix_stream_sendmsg", "scm_fp_copy", "scm_detach_fds", "shmem_fault"],
          survey(1435.0, 200 * MIB), false),
        m(LinesMmap, "count lines: mmap + memchr", FileExperiment, Some(0),
          "the file's page cache pages are mapped and scanned in place",
          &["filemap_map_pages", "filemap_fault"], None, true),
        m(LinesRead, "count lines: buffered reads (getline-like)", FileExperiment, Some(1),
          "page cache -> user buffer (read: filemap_read), then scanned",
          &["filemap_read", "copy_folio_to_iter"], None, true),
        m(DirectIo, "1 KiB reads with O_DIRECT (no page cache)", FileExperiment, Some(0),
          "the device DMAs straight into the aligned user buffer; one device request per read",
          &["iomap_dio_rw", "ext4_dio_read_iter", "submit_bio"], survey(9720.0, GIB), true),
        m(BufferedIo, "1 KiB buffered reads (page cache warm)", FileExperiment, Some(1),
          "page cache -> user (read: filemap_read, copy_folio_to_iter)",
          &["filemap_read", "copy_folio_to_iter"], survey(250.0, GIB), true),
        m(CowFork, "copy-on-write after fork", FileExperiment, Some(1),
          "the child's first write to each shared private page faults and copies it (do_wp_page: wp_page_copy)",
          &["do_wp_page", "wp_page_copy", "copy_user_highpage"], None, false),
        m(TcpMsgZerocopy, "TCP loopback, send(MSG_ZEROCOPY) with completions from the error queue", Socket, Some(3),
          "page cache -> user (read), the user pages are pinned into the skb (MSG_ZEROCOPY: no copy on send), but a skb looped to a local socket is copied before delivery (skb_orphan_frags_rx: skb_copy_ubufs) and the completion says so (SO_EE_CODE_ZEROCOPY_COPIED), skb -> user (tcp_recvmsg), user -> page cache (write)",
          &["tcp_sendmsg_locked", "msg_zerocopy_realloc", "skb_zerocopy_iter_stream", "__zerocopy_sg_from_iter", "skb_orphan_frags_rx", "skb_copy_ubufs", "msg_zerocopy_callback", "tcp_recvmsg", "skb_copy_datagram_iter"],
          None, true),
        m(TcpZerocopyReceive, "TCP loopback, received with getsockopt(TCP_ZEROCOPY_RECEIVE) into an mmap of the socket", Socket, None,
          "page cache -> user (read), user -> skb (tcp_sendmsg_locked), then whole, page-aligned skb pages are mapped into the consumer (tcp_zerocopy_receive: vm_insert_pages) and the rest is copied (recv); how much was mapped is in the run's notes",
          &["tcp_sendmsg_locked", "tcp_zerocopy_receive", "tcp_zerocopy_vm_insert_batch", "vm_insert_pages", "tcp_recvmsg", "skb_copy_datagram_iter"],
          None, true),
        m(UringSendZc, "TCP loopback, io_uring IORING_OP_SEND_ZC", Socket, Some(3),
          "page cache -> user (read), the user pages are pinned into the skb (io_send_zc: no copy on send), a skb looped to a local socket is copied before delivery (skb_orphan_frags_rx), the notification CQE arrives once the pages are released, skb -> user (tcp_recvmsg), user -> page cache (write)",
          &["io_send_zc", "io_sg_from_iter", "tcp_sendmsg_locked", "skb_orphan_frags_rx", "skb_copy_ubufs", "io_tx_ubuf_complete", "tcp_recvmsg", "skb_copy_datagram_iter"],
          None, true),
        m(CopyFileRange, "copy_file_range(2) from one file to another", FileExperiment, Some(1),
          "inside the kernel: where the file system shares extents (xfs, btrfs) the copy is a reflink (remap_file_range) and copies nothing; elsewhere (ext4, tmpfs) page cache -> page cache through the splice machinery (splice_copy_file_range: do_splice_direct)",
          &["vfs_copy_file_range", "splice_copy_file_range", "do_splice_direct", "filemap_splice_read", "iter_file_splice_write"],
          None, true),
        m(Ficlone, "reflink: ioctl(FICLONE), the destination shares the source's blocks", FileExperiment, Some(0),
          "no byte is copied: the destination's extents point at the source's blocks (vfs_clone_file_range: ->remap_file_range), copied later only where either file is written",
          &["ioctl_file_clone", "vfs_clone_file_range", "remap_file_range"],
          None, true),
    ]
}
// ANCHOR_END: mechanisms

/// The mechanism with this id.
pub fn find(id: &str) -> Option<MechanismInfo> {
    mechanisms().into_iter().find(|m| m.id == id)
}

/// All ids, in table order.
pub fn ids() -> Vec<&'static str> {
    mechanisms().into_iter().map(|m| m.id).collect()
}
