//! The harness of the IPC lab: resources, the two ends, and cleanup.
//!
//! [`run`] creates what a mechanism needs (files, a FIFO, a pipe, a listening
//! socket, a System V queue or segment, a POSIX shared memory object), each owned
//! by [`Resources`], which removes it on drop, then re-executes the current
//! program as `pipebench ipc-end SPEC` for each end. The ends get the report pipe
//! on fd 3, their data descriptor (if any) on fd 4, the source and destination
//! files (if any) on fds 6 and 7, and `PR_SET_PDEATHSIG(SIGKILL)`, so they die
//! with the harness thread.
//!
//! Names: the machine may be shared and the harness may be root, so a run names
//! as little as it can. Source, destination and experiment files have no name
//! (O_TMPFILE, or made and unlinked at once in the run's private folder). What
//! the lesson names (a FIFO, a file both ends open by path, a POSIX shared memory
//! object) gets a fresh name: in the run's private folder ([`crate::process::rundir`]), or
//! `/pipebook-<random>` for shm_open, noted in that folder first; each end says
//! on the control page when it holds the object, and once both do the harness
//! unlinks the name (and marks a System V segment for removal). System V objects
//! are IPC_PRIVATE; a message queue cannot go before the run ends, so its id and
//! creation time are noted in the folder, where the next start's
//! [`crate::process::rundir::sweep`] finds them if this process is killed.
//!
//! `PR_SET_PDEATHSIG` fires when the spawning *thread* exits: call [`run`] from a
//! thread that lives until it returns.
//!
//! Progress: every end also gets a control page (fd 5, [`ControlRegion`]) in which
//! the receiving end stores how many bytes it has taken after each chunk, one
//! relaxed store and no system call; the harness copies it into
//! [`IpcParams::progress`] while it waits, for whoever shows the run live.

use std::ffi::{CString, OsString};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, ExitStatus, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::data;
use super::{
    files, pipes, shared, sockets, sysv, CowReport, IpcEnd, IpcError, IpcParams, IpcResult,
    Mechanism,
};
use crate::ends::control::ControlRegion;
use crate::ends::report::EndUsage;
use crate::ends::usage::self_usage;
use crate::process::launch::EndProgram;
use crate::process::rundir::{Base, Record, RunDir, RunDirError};
use crate::size::gib_per_s;
use crate::size::{ByteSize, GIB, KIB, MIB};

/// The report pipe's descriptor number in an end.
const REPORT_FD: RawFd = 3;
/// The data descriptor's number in an end.
pub(crate) const DATA_FD: RawFd = 4;
/// The control page's descriptor number in an end.
const CONTROL_FD: RawFd = 5;
/// The source file's descriptor number in an end.
const SRC_FD: RawFd = 6;
/// The destination file's descriptor number in an end.
const DST_FD: RawFd = 7;

/// An end's role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Role {
    /// Sends the bytes.
    Producer,
    /// Receives and checks them.
    Consumer,
    /// Runs a one-process experiment.
    Solo,
}

impl Role {
    fn name(self) -> &'static str {
        match self {
            Role::Producer => "producer",
            Role::Consumer => "consumer",
            Role::Solo => "solo",
        }
    }
}

/// Everything an end needs, passed as one JSON argument.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct EndSpec {
    pub(crate) role: Role,
    pub(crate) mechanism: String,
    pub(crate) bytes: u64,
    pub(crate) chunk: u64,
    /// Whether fd 6 holds the source file (pattern or text), for ends that read one.
    #[serde(default)]
    pub(crate) has_src: bool,
    /// Whether fd 7 holds the destination file, for consumers that write one.
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
    /// Whether fd 4 holds a data descriptor.
    pub(crate) has_fd: bool,
    /// Whether fd 5 holds the harness's control page (for progress).
    #[serde(default)]
    pub(crate) has_control: bool,
}

/// What an end sends back on fd 3.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct EndReport {
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
}

/// Why an end failed (printed on its stderr, which the harness reports).
#[derive(Debug, thiserror::Error)]
pub(crate) enum EndError {
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
pub(crate) fn check(call: &'static str, ret: isize) -> Result<usize, EndError> {
    if ret < 0 {
        Err(EndError::Sys {
            call,
            source: std::io::Error::last_os_error(),
        })
    } else {
        Ok(ret as usize)
    }
}

/// An `io::Error` as an [`EndError`] naming the call.
pub(crate) fn io(call: &'static str) -> impl FnOnce(std::io::Error) -> EndError {
    move |source| EndError::Sys { call, source }
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
    /// fd 4: a pipe end, a socket, or a listening socket.
    pub(crate) data: Option<OwnedFd>,
    /// fd 6: the file to read from, at its start.
    pub(crate) src: Option<File>,
    /// fd 7: the (empty) file to write into.
    pub(crate) dst: Option<File>,
}

impl EndFds {
    /// The source file, or a protocol error.
    pub(crate) fn src(&mut self) -> Result<File, EndError> {
        self.src
            .take()
            .ok_or_else(|| EndError::Protocol("no source file given".into()))
    }

    /// The destination file, or a protocol error.
    pub(crate) fn dst(&mut self) -> Result<File, EndError> {
        self.dst
            .take()
            .ok_or_else(|| EndError::Protocol("no destination file given".into()))
    }
}

/// `pipebench ipc-end SPEC`: runs one end and reports on fd 3.
pub fn end_main(spec_json: &str) -> ExitCode {
    let spec: EndSpec = match serde_json::from_str(spec_json) {
        Ok(spec) => spec,
        Err(e) => {
            eprintln!("pipebench ipc-end: error: bad end spec: {e}");
            return ExitCode::from(2);
        }
    };
    // SAFETY: the harness put these descriptors there for us (see `spawn_end`);
    // we take ownership of each exactly once.
    let mut fds = unsafe {
        EndFds {
            data: spec.has_fd.then(|| OwnedFd::from_raw_fd(DATA_FD)),
            src: spec.has_src.then(|| File::from_raw_fd(SRC_FD)),
            dst: spec.has_dst.then(|| File::from_raw_fd(DST_FD)),
        }
    };
    // The harness wrote the source through the same open file: read it from
    // its start.
    if let Some(src) = &mut fds.src {
        if let Err(e) = src.seek(SeekFrom::Start(0)) {
            eprintln!("pipebench ipc-end: error: lseek (source): {e}");
            return ExitCode::from(2);
        }
    }
    let control = if spec.has_control {
        ControlRegion::attach(CONTROL_FD)
    } else {
        ControlRegion::local()
    };
    let received = match control {
        Ok(control) => Received(control),
        Err(e) => {
            eprintln!("pipebench ipc-end: error: {e}");
            return ExitCode::from(2);
        }
    };
    match run_end(&spec, fds, &received) {
        Ok(mut report) => {
            report.usage = self_usage();
            // SAFETY: as above, fd 3 is the report pipe.
            let mut out = unsafe { File::from_raw_fd(REPORT_FD) };
            let line = serde_json::to_string(&report).expect("reports serialise");
            if writeln!(out, "{line}").is_err() {
                return ExitCode::from(1);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("pipebench ipc-end {}: error: {e}", spec.role.name());
            ExitCode::from(1)
        }
    }
}

/// Where a receiving end publishes how many bytes it has taken so far: the
/// control page's reader counter, shared with the harness (or a private page when
/// the end runs without one).
pub(crate) struct Received(ControlRegion);

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

fn run_end(spec: &EndSpec, fds: EndFds, received: &Received) -> Result<EndReport, EndError> {
    match spec.mechanism.as_str() {
        "sysv-msgqueue" => sysv::msgqueue_end(spec, received),
        "fifo-rw" | "fifo-splice" | "pipe-rw" | "pipe-splice" => pipes::end(spec, fds, received),
        "tcp-rw" | "tcp-sendfile" | "tcp-splice" | "unix-stream" => {
            sockets::end(spec, fds, received)
        }
        "file-flock" | "file-mmap" | "sysv-shm" | "posix-shm" | "memfd-scm" => {
            shared::end(spec, fds.data, received)
        }
        "lines-mmap" | "lines-read" | "direct-io" | "buffered-io" | "cow-fork" => {
            files::end(spec, fds.src, received)
        }
        other => Err(EndError::Protocol(format!("unknown mechanism {other}"))),
    }
}

// ---------------------------------------------------------------------------
// Resources

/// A named thing the harness removes as soon as both ends hold it.
#[derive(Debug)]
enum Early {
    /// An entry of the run's private folder (a FIFO, a shared file).
    Entry(String),
    /// A kernel object noted in the folder (a POSIX name, a System V segment).
    Object(Record),
}

impl From<RunDirError> for IpcError {
    fn from(err: RunDirError) -> Self {
        match err {
            RunDirError::Unsafe { path, why } => IpcError::UnsafeDir {
                dir: path.display().to_string(),
                why,
            },
            RunDirError::Io { what, path, source } => IpcError::Setup {
                what: format!("{what} {}", path.display()),
                source,
            },
        }
    }
}

/// Everything one run created; dropping it removes all of it.
#[derive(Debug)]
pub(crate) struct Resources {
    /// Where the run's folder and unnamed files go.
    base: Base,
    /// The run's private folder, made when something needs a name.
    run: Option<RunDir>,
    /// Removed once both ends hold them (or when the run ends).
    early: Vec<Early>,
    /// Removed when the run ends: message queues.
    late: Vec<Record>,
}

impl Resources {
    fn new(base: Base) -> Resources {
        Resources {
            base,
            run: None,
            early: Vec::new(),
            late: Vec::new(),
        }
    }

    /// The run's private folder, made on first use.
    fn run_dir(&mut self) -> Result<&RunDir, IpcError> {
        if self.run.is_none() {
            self.run = Some(RunDir::create(&self.base)?);
        }
        Ok(self.run.as_ref().expect("made above"))
    }

    /// A file with no name on the base's file system: O_TMPFILE, or, where the
    /// file system has none, made in the private folder and unlinked at once.
    fn unnamed_file(&mut self, what: &str) -> Result<File, IpcError> {
        if let Some(file) = self.base.unnamed_file()? {
            return Ok(file);
        }
        let run = self.run_dir()?;
        let file = run.create_file(what)?;
        run.remove(what)?;
        Ok(file)
    }

    /// A FIFO in the private folder, unlinked once both ends have opened it.
    fn fifo(&mut self, name: &str) -> Result<PathBuf, IpcError> {
        let path = self.run_dir()?.create_fifo(name)?;
        self.early.push(Early::Entry(name.to_string()));
        Ok(path)
    }

    /// A file of `size` bytes in the private folder, which both ends open by
    /// path; unlinked once both have.
    fn shared_file(&mut self, name: &str, size: u64) -> Result<PathBuf, IpcError> {
        let run = self.run_dir()?;
        let path = run.path().join(name);
        let file = run.create_file(name)?;
        self.early.push(Early::Entry(name.to_string()));
        file.set_len(size)
            .map_err(setup_err(format!("size {}", path.display())))?;
        Ok(path)
    }

    /// A POSIX shared memory object of `size` bytes under a fresh random name,
    /// noted in the private folder before it exists; returns the name.
    fn posix_shm(&mut self, size: u64) -> Result<String, IpcError> {
        let run = self.run_dir()?;
        loop {
            let record = Record::posix_shm();
            run.record(&record)?;
            let name = record.shm_name().expect("a POSIX record");
            // SAFETY: shm_open reads the NUL-terminated name; glibc adds
            // O_NOFOLLOW and O_CLOEXEC.
            let fd = unsafe {
                libc::shm_open(
                    name.as_ptr(),
                    libc::O_CREAT | libc::O_EXCL | libc::O_RDWR,
                    0o600,
                )
            };
            if fd < 0 {
                let source = std::io::Error::last_os_error();
                run.forget(&record);
                // Someone holds this name: ours are random, so take another.
                if source.raw_os_error() == Some(libc::EEXIST) {
                    continue;
                }
                return Err(IpcError::Setup {
                    what: format!("create the POSIX shared memory object {name:?}"),
                    source,
                });
            }
            // SAFETY: a fresh descriptor nobody else owns.
            let file = unsafe { File::from_raw_fd(fd) };
            self.early.push(Early::Object(record));
            file.set_len(size)
                .map_err(setup_err("size the POSIX shared memory object"))?;
            return Ok(name.into_string().expect("ASCII"));
        }
    }

    /// Takes charge of a System V object the harness just made: noted in the
    /// private folder, and removed early (a segment, once both ends are
    /// attached) or late (a queue, when the run ends).
    fn sysv(
        &mut self,
        record: std::io::Result<Record>,
        id: i32,
        early: bool,
    ) -> Result<(), IpcError> {
        let record = match record {
            Ok(record) => record,
            Err(source) => {
                remove_sysv_id(id, early);
                return Err(IpcError::Setup {
                    what: "read the new System V object's creation time".into(),
                    source,
                });
            }
        };
        if let Err(err) = self.run_dir().and_then(|run| Ok(run.record(&record)?)) {
            record.remove();
            return Err(err);
        }
        if early {
            self.early.push(Early::Object(record));
        } else {
            self.late.push(record);
        }
        Ok(())
    }

    /// Removes what only had to exist until both ends held it, and the private
    /// folder itself if nothing else is noted there.
    fn release_early(&mut self) {
        if self.early.is_empty() {
            return;
        }
        for item in self.early.drain(..) {
            match item {
                Early::Entry(name) => {
                    if let Some(run) = &self.run {
                        let _ = run.remove(&name);
                    }
                }
                Early::Object(record) => {
                    record.remove();
                    if let Some(run) = &self.run {
                        run.forget(&record);
                    }
                }
            }
        }
        if self.run.as_ref().is_some_and(RunDir::is_empty) {
            self.run = None;
        }
    }
}

/// Removes System V object `id` (a segment if `segment`, else a queue).
fn remove_sysv_id(id: i32, segment: bool) {
    // SAFETY: IPC_RMID with a null buffer only removes the object.
    unsafe {
        if segment {
            libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut());
        } else {
            libc::msgctl(id, libc::IPC_RMID, std::ptr::null_mut());
        }
    }
}

impl Drop for Resources {
    fn drop(&mut self) {
        self.release_early();
        for record in self.late.drain(..) {
            record.remove();
        }
        // Then the folder, with its notes.
        self.run = None;
    }
}

// ---------------------------------------------------------------------------
// Where files go

const TMPFS_MAGIC: i64 = 0x0102_1994;

/// The file system type of `dir`, by statfs magic.
pub fn filesystem(dir: &Path) -> Option<String> {
    let c = CString::new(dir.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: statfs fills the zeroed struct we pass.
    let magic = unsafe {
        let mut st: libc::statfs = std::mem::zeroed();
        if libc::statfs(c.as_ptr(), &mut st) != 0 {
            return None;
        }
        st.f_type as i64
    };
    Some(
        match magic {
            0xEF53 => "ext4",
            0x5846_5342 => "xfs",
            0x9123_683E => "btrfs",
            TMPFS_MAGIC => "tmpfs",
            0x794C_7630 => "overlayfs",
            0x6969 => "nfs",
            0x0102_1997 => "9p",
            0x6573_5546 => "fuse",
            0x858458F6 => "ramfs",
            _ => return Some(format!("fs magic {magic:#x}")),
        }
        .to_string(),
    )
}

/// Bytes free for an unprivileged writer in the file system of `dir`.
pub fn free_bytes(dir: &Path) -> Option<u64> {
    let c = CString::new(dir.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: statvfs fills the zeroed struct we pass.
    unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(c.as_ptr(), &mut st) != 0 {
            return None;
        }
        Some(st.f_bavail as u64 * st.f_frsize as u64)
    }
}

/// The default folder in which a run of a file mechanism makes its private
/// folder and unnamed files: the system temp dir unless it is tmpfs (where
/// O_DIRECT means nothing), else `target/` under the current directory.
pub fn default_dir() -> PathBuf {
    crate::process::rundir::disk_default()
}

/// Where a run of `mechanism` keeps its files and private folder: `dir` when the
/// caller chose one, else a disk for file mechanisms, else the per-user runtime
/// folder (or the temp dir).
fn base_for(mechanism: &Mechanism, dir: Option<&Path>) -> Result<Base, IpcError> {
    Ok(match dir {
        Some(dir) => Base::chosen(dir)?,
        None if mechanism.uses_files => Base::disk()?,
        None => Base::runtime()?,
    })
}

// ---------------------------------------------------------------------------
// Validation

fn out_of_range(name: &'static str, value: u64, min: u64, max: u64) -> IpcError {
    IpcError::OutOfRange {
        name,
        value: ByteSize(value).to_string(),
        min: ByteSize(min).to_string(),
        max: ByteSize(max).to_string(),
    }
}

/// The chunk a mechanism uses with `params`, checked.
fn chunk_for(mechanism: &Mechanism, params: &IpcParams) -> Result<u64, IpcError> {
    let io_experiment = matches!(mechanism.id, "direct-io" | "buffered-io");
    let default = match mechanism.id {
        "direct-io" | "buffered-io" => KIB,
        "sysv-msgqueue" => {
            let limits = sysv::SysvLimits::read();
            super::DEFAULT_CHUNK.min(limits.msgmax).min(limits.msgmnb)
        }
        _ => super::DEFAULT_CHUNK,
    };
    let chunk = params.chunk.map_or(default, |c| c.bytes());
    let min = if io_experiment { 512 } else { 8 };
    if !(min..=super::MAX_CHUNK).contains(&chunk) {
        return Err(out_of_range("chunk", chunk, min, super::MAX_CHUNK));
    }
    if !chunk.is_multiple_of(8) {
        return Err(IpcError::Invalid(format!(
            "chunk = {chunk} must be a multiple of 8 bytes"
        )));
    }
    if io_experiment && !chunk.is_multiple_of(512) {
        return Err(IpcError::Invalid(format!(
            "chunk = {chunk} must be a multiple of 512 bytes for aligned (O_DIRECT) reads"
        )));
    }
    Ok(chunk)
}

/// The bytes a run of `id` asked to move `asked` bytes really moves: all of them,
/// except for `direct-io`, whose 1 KiB device requests are capped (the run says so
/// in a note).
pub fn effective_bytes(id: &str, asked: u64) -> u64 {
    if id == "direct-io" {
        asked.min(files::DIRECT_IO_MAX_BYTES)
    } else {
        asked
    }
}

/// Checks `params` for `id` without running anything.
pub fn validate(id: &str, params: &IpcParams) -> Result<(Mechanism, u64), IpcError> {
    let mechanism = super::find(id).ok_or_else(|| IpcError::UnknownMechanism {
        id: id.to_string(),
        known: super::ids().join(", "),
    })?;
    let bytes = params.bytes.bytes();
    if !(1..=super::MAX_BYTES).contains(&bytes) {
        return Err(out_of_range("bytes", bytes, 1, super::MAX_BYTES));
    }
    let chunk = chunk_for(&mechanism, params)?;
    match mechanism.id {
        "sysv-msgqueue" => sysv::SysvLimits::read().check_message(chunk)?,
        "sysv-shm" => sysv::SysvLimits::read().check_segment(shared::HEADER + bytes)?,
        "posix-shm" => {
            shared::check_dev_shm(shared::HEADER + bytes, free_bytes(Path::new("/dev/shm")))?
        }
        _ => {}
    }
    Ok((mechanism, chunk))
}

// ---------------------------------------------------------------------------
// Ends

/// A running end; dropping it kills and reaps the process.
#[derive(Debug)]
struct EndProcess {
    role: Role,
    child: Child,
    report: Option<File>,
    status: Option<ExitStatus>,
}

impl EndProcess {
    fn kill(&mut self) {
        if self.status.is_none() {
            let _ = self.child.kill();
            self.status = self.child.wait().ok();
        }
    }
}

impl Drop for EndProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

fn setup_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> IpcError {
    let what = what.into();
    move |source| IpcError::Setup { what, source }
}

/// A copy of `fd` numbered 100 or above, so dup2 onto 3 and 4 in the child can
/// never clobber a source descriptor.
fn high_dup(fd: RawFd) -> Result<OwnedFd, IpcError> {
    // SAFETY: F_DUPFD_CLOEXEC returns a new descriptor we own, or -1.
    let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 100) };
    if new < 0 {
        return Err(IpcError::Setup {
            what: "duplicate a descriptor".into(),
            source: std::io::Error::last_os_error(),
        });
    }
    // SAFETY: `new` is a fresh descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(new) })
}

/// The descriptors the harness hands an end (moved into it: the harness keeps
/// no copy).
#[derive(Debug, Default)]
struct Handed {
    data: Option<OwnedFd>,
    src: Option<File>,
    dst: Option<File>,
}

fn spawn_end(
    spec: &EndSpec,
    handed: Handed,
    control: &ControlRegion,
    program: Option<&EndProgram>,
) -> Result<EndProcess, IpcError> {
    let (report_read, report_write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
        .map_err(|e| IpcError::Setup {
            what: "create the report pipe".into(),
            source: e.into(),
        })?;
    let report_fd = high_dup(report_write.as_raw_fd())?;
    drop(report_write);
    let dup = |fd: Option<RawFd>| fd.map(high_dup).transpose();
    let data_fd = dup(handed.data.as_ref().map(AsRawFd::as_raw_fd))?;
    let src_fd = dup(handed.src.as_ref().map(AsRawFd::as_raw_fd))?;
    let dst_fd = dup(handed.dst.as_ref().map(AsRawFd::as_raw_fd))?;
    drop(handed);
    let control_fd = dup(control.fd().map(|fd| fd.as_raw_fd()))?;
    let report_raw = report_fd.as_raw_fd();
    let raw = |fd: &Option<OwnedFd>| fd.as_ref().map(|fd| fd.as_raw_fd());
    let moves = [
        (raw(&data_fd), DATA_FD),
        (raw(&control_fd), CONTROL_FD),
        (raw(&src_fd), SRC_FD),
        (raw(&dst_fd), DST_FD),
    ];
    let spec = EndSpec {
        has_fd: data_fd.is_some(),
        has_control: control_fd.is_some(),
        has_src: src_fd.is_some(),
        has_dst: dst_fd.is_some(),
        ..spec.clone()
    };
    let program = match program {
        Some(program) => program.clone(),
        None => EndProgram::current_exe(&[]).map_err(setup_err("find the pipebench executable"))?,
    };
    let mut command = Command::new(&program.exe);
    command
        .args(&program.prefix)
        .arg("ipc-end")
        .arg(OsString::from(
            serde_json::to_string(&spec).expect("specs serialise"),
        ))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // SAFETY: only async-signal-safe calls (dup2, prctl) between fork and exec.
    unsafe {
        command.pre_exec(move || {
            if libc::dup2(report_raw, REPORT_FD) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            for (from, to) in moves {
                if let Some(from) = from {
                    if libc::dup2(from, to) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
            }
            // Die with the harness thread: no end outlives a killed harness.
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = command
        .spawn()
        .map_err(setup_err(format!("start the {}", spec.role.name())))?;
    drop((report_fd, data_fd, control_fd, src_fd, dst_fd));
    Ok(EndProcess {
        role: spec.role,
        child,
        report: Some(File::from(report_read)),
        status: None,
    })
}

fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        _ => status.to_string(),
    }
}

fn collect(end: &mut EndProcess) -> Result<EndReport, IpcError> {
    let mut stderr = String::new();
    if let Some(mut pipe) = end.child.stderr.take() {
        let _ = pipe.read_to_string(&mut stderr);
    }
    let status = end.status.expect("collected after exit");
    let mut text = String::new();
    if let Some(mut file) = end.report.take() {
        let _ = file.read_to_string(&mut text);
    }
    let failed = |message: String| IpcError::EndFailed {
        role: end.role.name().to_string(),
        status: describe(status),
        message,
    };
    if !status.success() {
        let message = stderr
            .lines()
            .map(|l| l.split_once("error: ").map_or(l, |(_, m)| m))
            .collect::<Vec<_>>()
            .join("; ");
        return Err(failed(if message.is_empty() {
            "no message (killed?)".into()
        } else {
            message
        }));
    }
    serde_json::from_str(text.trim()).map_err(|e| failed(format!("unreadable report: {e}")))
}

/// How often [`wait_all`] wakes while the ends run, for progress, cancel and the
/// timeout; an end's exit wakes it at once (through its pidfd).
const WAIT_TICK: Duration = Duration::from_millis(20);

/// Waits for every end; kills the others as soon as one fails, and all of them
/// on cancel or timeout.
///
/// It sleeps in `poll` on the ends' pidfds, so an exit is seen at once without
/// waking hundreds of times a second on a machine whose CPUs the ends need;
/// without pidfds (Linux before 5.3) it falls back to short sleeps. On the tick
/// after both ends of a pair say they hold the run's named object, it removes
/// the name (`res`'s early part).
fn wait_all(
    ends: &mut [EndProcess],
    control: &ControlRegion,
    params: &IpcParams,
    res: &mut Resources,
) -> Result<(), IpcError> {
    let started = Instant::now();
    let publish = || {
        if let Some(progress) = &params.progress {
            let received = control.shared().reader_bytes.load(Ordering::Relaxed);
            progress.store(received, Ordering::Relaxed);
        }
    };
    let pidfds: Option<Vec<OwnedFd>> = ends
        .iter()
        .map(|end| {
            let pid = rustix::process::Pid::from_child(&end.child);
            rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
        })
        .collect();
    loop {
        publish();
        if ends.len() == 2 && control.shared().holding.load(Ordering::Acquire) >= 2 {
            res.release_early();
        }
        for end in ends.iter_mut() {
            if end.status.is_none() {
                end.status = end.child.try_wait().map_err(setup_err("wait for an end"))?;
            }
        }
        let failed = ends.iter().any(|e| e.status.is_some_and(|s| !s.success()));
        if failed || ends.iter().all(|e| e.status.is_some()) {
            ends.iter_mut().for_each(EndProcess::kill);
            // The receiver may have stored its last count after the read above.
            publish();
            return Ok(());
        }
        if params
            .cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
        {
            ends.iter_mut().for_each(EndProcess::kill);
            return Err(IpcError::Cancelled);
        }
        if started.elapsed() > params.timeout {
            ends.iter_mut().for_each(EndProcess::kill);
            return Err(IpcError::Timeout(params.timeout));
        }
        match &pidfds {
            Some(pidfds) => {
                let mut running: Vec<rustix::event::PollFd<'_>> = pidfds
                    .iter()
                    .zip(ends.iter())
                    .filter(|(_, end)| end.status.is_none())
                    .map(|(fd, _)| rustix::event::PollFd::new(fd, rustix::event::PollFlags::IN))
                    .collect();
                let tick = rustix::time::Timespec {
                    tv_sec: 0,
                    tv_nsec: WAIT_TICK.as_nanos() as _,
                };
                // EINTR or any other failure only means: look again.
                let _ = rustix::event::poll(&mut running, Some(&tick));
            }
            None => std::thread::sleep(Duration::from_millis(2)),
        }
    }
}

/// Writes `bytes` of the pattern into `file` (the run's, with no name).
pub(crate) fn write_pattern(file: &mut File, bytes: u64, sync: bool) -> Result<(), IpcError> {
    let what = "write the source file";
    let mut buf = vec![0u8; MIB as usize];
    let mut offset = 0;
    while offset < bytes {
        let n = (bytes - offset).min(MIB) as usize;
        data::fill(&mut buf[..n], offset);
        file.write_all(&buf[..n]).map_err(setup_err(what))?;
        offset += n as u64;
    }
    if sync {
        file.sync_all().map_err(setup_err(what))?;
    }
    Ok(())
}

/// Runs `mechanism` once with `params` and returns its measurement.
///
/// Blocking. Everything the run creates is removed before it returns, whether it
/// succeeded, failed, was cancelled through `params.cancel`, or unwound; what a
/// killed harness leaves is in its private folder for the next
/// [`crate::process::rundir::sweep`].
pub fn run(mechanism: &str, params: &IpcParams) -> Result<IpcResult, IpcError> {
    let (mechanism, chunk) = validate(mechanism, params)?;
    let mut bytes = params.bytes.bytes();
    let base = base_for(&mechanism, params.dir.as_deref())?;
    let dir = base.path().to_path_buf();
    let fs = if mechanism.uses_files {
        filesystem(&dir)
    } else {
        None
    };
    let mut notes = Vec::new();
    let mut res = Resources::new(base);

    let needs_src = mechanism.pair && mechanism.uses_files && !mechanism.id.starts_with("file-");
    let files_needed = match mechanism.id {
        "file-flock" | "file-mmap" | "lines-mmap" | "lines-read" | "direct-io" | "buffered-io" => 1,
        _ if needs_src => 2,
        _ => 0,
    };
    if files_needed > 0 {
        let needed = files_needed * bytes + MIB;
        if let Some(available) = free_bytes(&dir) {
            if available < needed {
                return Err(IpcError::DirTooSmall {
                    dir: dir.display().to_string(),
                    needed,
                    available,
                });
            }
        }
    }

    let mut spec = EndSpec {
        role: Role::Producer,
        mechanism: mechanism.id.to_string(),
        bytes,
        chunk,
        has_src: false,
        has_dst: false,
        shared: None,
        shm_name: None,
        sysv_id: None,
        port: None,
        has_fd: false,
        has_control: false,
    };
    let mut producer = Handed::default();
    let mut consumer = Handed::default();
    let mut expected_lines = None;
    if needs_src {
        let mut src = res.unnamed_file("src")?;
        write_pattern(&mut src, bytes, false)?;
        producer.src = Some(src);
        consumer.dst = Some(res.unnamed_file("dst")?);
    }
    match mechanism.id {
        "fifo-rw" | "fifo-splice" => {
            spec.shared = Some(res.fifo("fifo")?);
        }
        "pipe-rw" | "pipe-splice" => {
            let (r, w) =
                rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).map_err(|e| {
                    IpcError::Setup {
                        what: "create the pipe".into(),
                        source: e.into(),
                    }
                })?;
            producer.data = Some(w);
            consumer.data = Some(r);
        }
        "tcp-rw" | "tcp-sendfile" | "tcp-splice" => {
            let (listener, port) = sockets::listen(params.port.unwrap_or(0))?;
            spec.port = Some(port);
            consumer.data = Some(listener);
        }
        "unix-stream" | "memfd-scm" => {
            let (a, b) = sockets::socketpair()?;
            producer.data = Some(a);
            consumer.data = Some(b);
        }
        "sysv-msgqueue" => {
            let id = sysv::create_queue()?;
            res.sysv(Record::msg_queue(id), id, false)?;
            spec.sysv_id = Some(id);
        }
        "sysv-shm" => {
            let id = sysv::create_segment(shared::HEADER + bytes)?;
            res.sysv(Record::sysv_shm(id), id, true)?;
            spec.sysv_id = Some(id);
        }
        "posix-shm" => {
            spec.shm_name = Some(res.posix_shm(shared::HEADER + bytes)?);
        }
        "file-flock" => {
            spec.shared = Some(res.shared_file("shared", 0)?);
        }
        "file-mmap" => {
            spec.shared = Some(res.shared_file("shared", shared::HEADER + bytes)?);
        }
        "lines-mmap" | "lines-read" => {
            let mut text = res.unnamed_file("text")?;
            expected_lines = Some(files::write_text(&mut text, bytes)?);
            producer.src = Some(text);
        }
        "direct-io" | "buffered-io" => {
            let mut data = res.unnamed_file("data")?;
            if mechanism.id == "direct-io" {
                if fs.as_deref() == Some("tmpfs") {
                    return Err(IpcError::DirectIoOnTmpfs {
                        dir: dir.display().to_string(),
                    });
                }
                files::probe_direct_io(&data, &dir, fs.as_deref().unwrap_or("unknown"))?;
            } else if fs.as_deref() == Some("tmpfs") {
                notes.push(
                    "buffered reads on tmpfs read memory: there is no disk behind the page cache"
                        .into(),
                );
            }
            let capped = effective_bytes(mechanism.id, bytes);
            if capped < bytes {
                bytes = capped;
                spec.bytes = bytes;
                notes.push(format!(
                    "direct-io reads at most {} (each 1 KiB O_DIRECT read is a device request)",
                    ByteSize(bytes)
                ));
            }
            write_pattern(&mut data, bytes, mechanism.id == "direct-io")?;
            producer.src = Some(data);
        }
        _ => {}
    }

    let control = ControlRegion::create().map_err(|e| IpcError::Setup {
        what: "create the progress page".into(),
        source: std::io::Error::other(e),
    })?;
    let mut ends = Vec::new();
    if mechanism.pair {
        // Consumer first: it is ready (accepting, attached, blocked in read)
        // before the producer's clock starts.
        let consumer_spec = EndSpec {
            role: Role::Consumer,
            ..spec.clone()
        };
        ends.push(spawn_end(
            &consumer_spec,
            consumer,
            &control,
            params.program.as_ref(),
        )?);
        ends.push(spawn_end(
            &spec,
            producer,
            &control,
            params.program.as_ref(),
        )?);
    } else {
        spec.role = Role::Solo;
        ends.push(spawn_end(
            &spec,
            producer,
            &control,
            params.program.as_ref(),
        )?);
    }
    wait_all(&mut ends, &control, params, &mut res)?;
    let mut reports = Vec::new();
    let mut first_error = None;
    for end in ends.iter_mut() {
        match collect(end) {
            Ok(report) => reports.push((end.role, report)),
            Err(e) => {
                // A consumer's "unexpected end of data" only echoes a failed
                // producer; report the cause.
                if first_error.is_none() || end.role == Role::Producer {
                    first_error = Some(e);
                }
            }
        }
    }
    drop(ends);
    if let Some(e) = first_error {
        return Err(e);
    }
    let start = reports.iter().filter_map(|(_, r)| r.start_ns).min();
    let end = reports.iter().filter_map(|(_, r)| r.end_ns).max();
    let elapsed_ms = match (start, end) {
        (Some(s), Some(e)) => e.saturating_sub(s) as f64 / 1e6,
        _ => 0.0,
    };
    let receiver = reports
        .iter()
        .find(|(role, _)| *role != Role::Producer)
        .map(|(_, r)| r.clone())
        .unwrap_or_default();
    let checksum_ok = match (mechanism.id, receiver.checksum, expected_lines) {
        (_, _, Some(lines)) => receiver.lines == Some(lines),
        ("cow-fork", _, _) => receiver
            .cow
            .is_some_and(|c| c.parent_sees_original && c.child_sees_its_write),
        (_, Some(got), _) => {
            let expected = data::expected_checksum(bytes);
            if got != expected || receiver.bytes != bytes {
                return Err(IpcError::ChecksumMismatch {
                    expected,
                    got,
                    bytes: receiver.bytes,
                });
            }
            true
        }
        (_, None, _) => false,
    };
    notes.extend(reports.iter().flat_map(|(_, r)| r.notes.iter().cloned()));
    // A one-process experiment says what it went through: the text file ends on
    // a whole line (a little under the size asked), the fork's child writes what
    // it writes.
    let moved = if mechanism.pair {
        bytes
    } else {
        receiver.bytes
    };
    Ok(IpcResult {
        mechanism: mechanism.id.to_string(),
        bytes: moved,
        chunk,
        elapsed_ms,
        gib_per_s: gib_per_s(moved, elapsed_ms),
        mib_per_s: gib_per_s(moved, elapsed_ms) * (GIB / MIB) as f64,
        copies: mechanism.copies,
        kernel_functions: mechanism
            .kernel_functions
            .iter()
            .map(|s| s.to_string())
            .collect(),
        survey_ms: mechanism.survey.map(|s| s.ms),
        survey_bytes: mechanism.survey.map(|s| s.bytes),
        checksum_ok,
        ends: reports
            .iter()
            .map(|(role, r)| IpcEnd {
                role: role.name().to_string(),
                usage: r.usage,
            })
            .collect(),
        lines: receiver.lines,
        cow: receiver.cow,
        filesystem: fs,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_dir_kind_is_detected() {
        assert_eq!(filesystem(Path::new("/dev/shm")).as_deref(), Some("tmpfs"));
        assert_ne!(filesystem(&default_dir()).as_deref(), Some("tmpfs"));
    }
}
