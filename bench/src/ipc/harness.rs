//! The harness of the IPC lab: resources, the two ends, and cleanup.
//!
//! [`run`] creates what a mechanism needs (files, a FIFO, a pipe, a listening
//! socket, a System V queue or segment, a POSIX shared memory object), each owned
//! by a guard that removes it on drop, then re-executes the current program as
//! `pipebench ipc-end SPEC` for each end. The ends get the report pipe on fd 3 and
//! their data descriptor (if any) on fd 4, and `PR_SET_PDEATHSIG(SIGKILL)`, so they
//! die with the harness thread. Names carry the harness pid
//! (`pipebench-ipc-<pid>-<n>-...`), and System V objects are listed in a registry
//! file of the same name, so a later run removes what a killed harness left.
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
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
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
use crate::size::gib_per_s;
use crate::size::{ByteSize, GIB, KIB, MIB};

/// Prefix of every name the lab creates.
pub(crate) const PREFIX: &str = "pipebench-ipc-";
/// The report pipe's descriptor number in an end.
const REPORT_FD: RawFd = 3;
/// The data descriptor's number in an end.
pub(crate) const DATA_FD: RawFd = 4;
/// The control page's descriptor number in an end.
const CONTROL_FD: RawFd = 5;

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
    /// Source file (pattern or text), for mechanisms that read one.
    pub(crate) src: Option<PathBuf>,
    /// Destination file, for consumers that write one.
    pub(crate) dst: Option<PathBuf>,
    /// The shared object: FIFO, shared file, or POSIX shm name.
    pub(crate) shared: Option<PathBuf>,
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
    // we take ownership exactly once.
    let fd = spec
        .has_fd
        .then(|| unsafe { OwnedFd::from_raw_fd(DATA_FD) });
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
    match run_end(&spec, fd, &received) {
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
}

fn run_end(
    spec: &EndSpec,
    fd: Option<OwnedFd>,
    received: &Received,
) -> Result<EndReport, EndError> {
    match spec.mechanism.as_str() {
        "sysv-msgqueue" => sysv::msgqueue_end(spec, received),
        "fifo-rw" | "fifo-splice" | "pipe-rw" | "pipe-splice" => pipes::end(spec, fd, received),
        "tcp-rw" | "tcp-sendfile" | "tcp-splice" | "unix-stream" => {
            sockets::end(spec, fd, received)
        }
        "file-flock" | "file-mmap" | "sysv-shm" | "posix-shm" | "memfd-scm" => {
            shared::end(spec, fd, received)
        }
        "lines-mmap" | "lines-read" | "direct-io" | "buffered-io" | "cow-fork" => {
            files::end(spec, received)
        }
        other => Err(EndError::Protocol(format!("unknown mechanism {other}"))),
    }
}

// ---------------------------------------------------------------------------
// Resources

static RUN_COUNTER: AtomicU32 = AtomicU32::new(0);

/// A System V object kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SysvKind {
    /// Message queue.
    Msg,
    /// Shared memory segment.
    Shm,
}

/// Everything one run created; dropping it removes all of it.
#[derive(Debug)]
pub(crate) struct Resources {
    paths: Vec<PathBuf>,
    sysv: Vec<(SysvKind, i32)>,
    registry: Option<PathBuf>,
}

impl Resources {
    /// Removes `path` (file, FIFO or /dev/shm object) when the run ends.
    pub(crate) fn track(&mut self, path: PathBuf) -> PathBuf {
        self.paths.push(path.clone());
        path
    }

    /// Records a System V object, first in the registry file so that a harness
    /// killed right after creating it still leaves a trail for the next run.
    pub(crate) fn track_sysv(&mut self, kind: SysvKind, id: i32, key: i32) {
        if let Some(registry) = &self.registry {
            let line = format!(
                "{} {id} {key}\n",
                if kind == SysvKind::Msg { "msg" } else { "shm" }
            );
            let _ = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(registry)
                .and_then(|mut f| f.write_all(line.as_bytes()));
        }
        self.sysv.push((kind, id));
    }
}

impl Drop for Resources {
    fn drop(&mut self) {
        for (kind, id) in self.sysv.drain(..) {
            remove_sysv(kind, id);
        }
        for path in self.paths.drain(..) {
            let _ = std::fs::remove_file(&path);
        }
        if let Some(registry) = self.registry.take() {
            let _ = std::fs::remove_file(registry);
        }
    }
}

fn remove_sysv(kind: SysvKind, id: i32) {
    // SAFETY: IPC_RMID with a null buffer only removes the object.
    unsafe {
        match kind {
            SysvKind::Msg => libc::msgctl(id, libc::IPC_RMID, std::ptr::null_mut()),
            SysvKind::Shm => libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut()),
        };
    }
}

/// A System V key that names this harness: `0x5` in the top nibble, the pid, and
/// a per-process run counter.
pub(crate) fn sysv_key(run: u32) -> i32 {
    ((0x5u32 << 28) | ((std::process::id() & 0x3f_ffff) << 6) | (run & 0x3f)) as i32
}

fn pid_alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// The pid in a name `pipebench-ipc-<pid>-...`.
fn owner_pid(name: &str) -> Option<u32> {
    name.strip_prefix(PREFIX)?
        .split(['-', '.'])
        .next()?
        .parse()
        .ok()
}

/// The key of System V object `id` from /proc/sysvipc/{msg,shm}.
fn sysv_key_of(kind: SysvKind, id: i32) -> Option<i32> {
    let table = match kind {
        SysvKind::Msg => "/proc/sysvipc/msg",
        SysvKind::Shm => "/proc/sysvipc/shm",
    };
    let text = std::fs::read_to_string(table).ok()?;
    text.lines().skip(1).find_map(|line| {
        let mut fields = line.split_whitespace();
        let key: i64 = fields.next()?.parse().ok()?;
        let found: i32 = fields.next()?.parse().ok()?;
        (found == id).then_some(key as i32)
    })
}

/// Removes what harnesses that no longer exist left in `dirs`: files, FIFOs,
/// /dev/shm objects, and the System V objects their registries list (only when
/// the object still carries the recorded key, so a reused id is left alone).
pub fn remove_stale(dirs: &[&Path]) -> usize {
    let mut removed = 0;
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(pid) = owner_pid(&name) else {
                continue;
            };
            if pid_alive(pid) {
                continue;
            }
            if name.ends_with(".sysv") {
                for line in std::fs::read_to_string(entry.path())
                    .unwrap_or_default()
                    .lines()
                {
                    let parts: Vec<&str> = line.split_whitespace().collect();
                    let [kind, id, key] = parts[..] else { continue };
                    let kind = if kind == "msg" {
                        SysvKind::Msg
                    } else {
                        SysvKind::Shm
                    };
                    let (Ok(id), Ok(key)) = (id.parse::<i32>(), key.parse::<i32>()) else {
                        continue;
                    };
                    if sysv_key_of(kind, id) == Some(key) {
                        remove_sysv(kind, id);
                        removed += 1;
                    }
                }
            }
            if std::fs::remove_file(entry.path()).is_ok() {
                removed += 1;
            }
        }
    }
    removed
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

/// The default directory for files: the system temp dir unless it is tmpfs (where
/// O_DIRECT means nothing), else `target/` under the current directory.
pub fn default_dir() -> PathBuf {
    let temp = std::env::temp_dir();
    if filesystem(&temp).as_deref() != Some("tmpfs") {
        return temp;
    }
    std::env::current_dir()
        .map(|d| d.join("target"))
        .unwrap_or(temp)
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

fn spawn_end(
    spec: &EndSpec,
    data: Option<OwnedFd>,
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
    let data_fd = data.map(|fd| high_dup(fd.as_raw_fd())).transpose()?;
    let control_fd = control
        .fd()
        .map(|fd| high_dup(fd.as_raw_fd()))
        .transpose()?;
    let report_raw = report_fd.as_raw_fd();
    let data_raw = data_fd.as_ref().map(|fd| fd.as_raw_fd());
    let control_raw = control_fd.as_ref().map(|fd| fd.as_raw_fd());
    let spec = EndSpec {
        has_control: control_raw.is_some(),
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
            for (from, to) in [(data_raw, DATA_FD), (control_raw, CONTROL_FD)] {
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
    drop((report_fd, data_fd, control_fd));
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
/// without pidfds (Linux before 5.3) it falls back to short sleeps.
fn wait_all(
    ends: &mut [EndProcess],
    control: &ControlRegion,
    params: &IpcParams,
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

/// Writes `bytes` of the pattern to a new file at `path`.
pub(crate) fn write_pattern_file(path: &Path, bytes: u64, sync: bool) -> Result<(), IpcError> {
    let what = || format!("write {}", path.display());
    let mut file = File::create(path).map_err(setup_err(what()))?;
    let mut buf = vec![0u8; MIB as usize];
    let mut offset = 0;
    while offset < bytes {
        let n = (bytes - offset).min(MIB) as usize;
        data::fill(&mut buf[..n], offset);
        file.write_all(&buf[..n]).map_err(setup_err(what()))?;
        offset += n as u64;
    }
    if sync {
        file.sync_all().map_err(setup_err(what()))?;
    }
    Ok(())
}

fn mkfifo(path: &Path) -> Result<(), IpcError> {
    let c = CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| IpcError::Invalid(format!("bad path {}", path.display())))?;
    // SAFETY: mkfifo reads the NUL-terminated path.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
        return Err(IpcError::Setup {
            what: format!("create the FIFO {}", path.display()),
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(())
}

/// Runs `mechanism` once with `params` and returns its measurement.
///
/// Blocking. Everything the run creates is removed before it returns, whether it
/// succeeded, failed, was cancelled through `params.cancel`, or unwound.
pub fn run(mechanism: &str, params: &IpcParams) -> Result<IpcResult, IpcError> {
    let (mechanism, chunk) = validate(mechanism, params)?;
    let mut bytes = params.bytes.bytes();
    let dir = params.dir.clone().unwrap_or_else(default_dir);
    let temp = std::env::temp_dir();
    remove_stale(&[&dir, Path::new("/dev/shm"), &temp]);
    let fs = if mechanism.uses_files {
        std::fs::create_dir_all(&dir).map_err(setup_err(format!("create {}", dir.display())))?;
        filesystem(&dir)
    } else {
        None
    };
    let mut notes = Vec::new();
    let run_no = RUN_COUNTER.fetch_add(1, Ordering::Relaxed);
    let base = format!("{PREFIX}{}-{run_no}-{}", std::process::id(), mechanism.id);
    let mut res = Resources {
        paths: Vec::new(),
        sysv: Vec::new(),
        registry: Some(temp.join(format!("{base}.sysv"))),
    };
    let file = |what: &str| dir.join(format!("{base}-{what}"));

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
        src: None,
        dst: None,
        shared: None,
        sysv_id: None,
        port: None,
        has_fd: false,
        has_control: false,
    };
    let mut producer_fd: Option<OwnedFd> = None;
    let mut consumer_fd: Option<OwnedFd> = None;
    let mut expected_lines = None;
    if needs_src {
        let src = res.track(file("src"));
        write_pattern_file(&src, bytes, false)?;
        spec.src = Some(src);
        spec.dst = Some(res.track(file("dst")));
    }
    match mechanism.id {
        "fifo-rw" | "fifo-splice" => {
            let fifo = res.track(file("fifo"));
            mkfifo(&fifo)?;
            spec.shared = Some(fifo);
        }
        "pipe-rw" | "pipe-splice" => {
            let (r, w) =
                rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).map_err(|e| {
                    IpcError::Setup {
                        what: "create the pipe".into(),
                        source: e.into(),
                    }
                })?;
            producer_fd = Some(w);
            consumer_fd = Some(r);
        }
        "tcp-rw" | "tcp-sendfile" | "tcp-splice" => {
            let (listener, port) = sockets::listen(params.port.unwrap_or(0))?;
            spec.port = Some(port);
            consumer_fd = Some(listener);
        }
        "unix-stream" | "memfd-scm" => {
            let (a, b) = sockets::socketpair()?;
            producer_fd = Some(a);
            consumer_fd = Some(b);
        }
        "sysv-msgqueue" => {
            let key = sysv_key(run_no);
            let id = sysv::create_queue(key)?;
            res.track_sysv(SysvKind::Msg, id, key);
            spec.sysv_id = Some(id);
        }
        "sysv-shm" => {
            let key = sysv_key(run_no);
            let id = sysv::create_segment(key, shared::HEADER + bytes)?;
            res.track_sysv(SysvKind::Shm, id, key);
            spec.sysv_id = Some(id);
        }
        "posix-shm" => {
            let path = res.track(Path::new("/dev/shm").join(format!("{base}-shm")));
            shared::create_file(&path, shared::HEADER + bytes)?;
            spec.shared = Some(path);
        }
        "file-flock" => {
            let path = res.track(file("shared"));
            shared::create_file(&path, 0)?;
            spec.shared = Some(path);
        }
        "file-mmap" => {
            let path = res.track(file("shared"));
            shared::create_file(&path, shared::HEADER + bytes)?;
            spec.shared = Some(path);
        }
        "lines-mmap" | "lines-read" => {
            let path = res.track(file("text"));
            expected_lines = Some(files::write_text_file(&path, bytes)?);
            spec.src = Some(path);
        }
        "direct-io" | "buffered-io" => {
            if mechanism.id == "direct-io" {
                if fs.as_deref() == Some("tmpfs") {
                    return Err(IpcError::DirectIoOnTmpfs {
                        dir: dir.display().to_string(),
                    });
                }
                files::probe_direct_io(&dir, fs.as_deref().unwrap_or("unknown"))?;
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
            let path = res.track(file("data"));
            write_pattern_file(&path, bytes, mechanism.id == "direct-io")?;
            spec.src = Some(path);
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
        let consumer = EndSpec {
            role: Role::Consumer,
            has_fd: consumer_fd.is_some(),
            ..spec.clone()
        };
        ends.push(spawn_end(
            &consumer,
            consumer_fd.take(),
            &control,
            params.program.as_ref(),
        )?);
        spec.has_fd = producer_fd.is_some();
        ends.push(spawn_end(
            &spec,
            producer_fd.take(),
            &control,
            params.program.as_ref(),
        )?);
    } else {
        spec.role = Role::Solo;
        ends.push(spawn_end(&spec, None, &control, params.program.as_ref())?);
    }
    wait_all(&mut ends, &control, params)?;
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
    fn keys_and_names_carry_the_pid() {
        let key = sysv_key(3);
        assert_eq!((key as u32) >> 28, 5);
        assert_eq!(
            ((key as u32) >> 6) & 0x3f_ffff,
            std::process::id() & 0x3f_ffff
        );
        let name = format!("{PREFIX}{}-0-posix-shm-shm", std::process::id());
        assert_eq!(owner_pid(&name), Some(std::process::id()));
        assert_eq!(owner_pid("pipebench-ipc-12.sysv"), Some(12));
        assert_eq!(owner_pid("other-12"), None);
    }

    #[test]
    fn stale_files_of_dead_pids_go_and_live_ones_stay() {
        let dir = tempfile::tempdir().unwrap();
        // pid_max is at most 2^22, so this pid cannot exist.
        let dead = dir
            .path()
            .join(format!("{PREFIX}{}-0-fifo-rw-src", 1u32 << 23));
        let live = dir
            .path()
            .join(format!("{PREFIX}{}-0-fifo-rw-src", std::process::id()));
        std::fs::write(&dead, b"x").unwrap();
        std::fs::write(&live, b"x").unwrap();
        remove_stale(&[dir.path()]);
        assert!(!dead.exists());
        assert!(live.exists());
    }

    #[test]
    fn temp_dir_kind_is_detected() {
        assert_eq!(filesystem(Path::new("/dev/shm")).as_deref(), Some("tmpfs"));
        assert_ne!(filesystem(&default_dir()).as_deref(), Some("tmpfs"));
    }
}
