//! The harness of the IPC lab: validation, the two ends, and the result.
//!
//! [`run`] creates what a mechanism needs ([`super::resources`]: files, a FIFO,
//! a pipe, a listening socket, a System V queue or segment, a POSIX shared
//! memory object), then starts the current program as `pipebench ipc-end SPEC`
//! for each end through the one launcher ([`crate::process::launch`]), with the
//! descriptors of its one map: the report pipe on fd 3, the control page on
//! fd 4, the data descriptor (if any) on fd 5, the source and destination files
//! (if any) on fds 6 and 7, and `PR_SET_PDEATHSIG(SIGKILL)`, so the ends die
//! with the harness thread.
//!
//! `PR_SET_PDEATHSIG` fires when the spawning *thread* exits: call [`run`] from a
//! thread that lives until it returns.
//!
//! Progress: every end gets the control page ([`ControlRegion`]) in which the
//! receiving end stores how many bytes it has taken after each chunk, one
//! relaxed store and no system call; the harness copies it into
//! [`IpcParams::progress`] while it waits, for whoever shows the run live.
//!
//! Counts: each end counts its own window ([`crate::process::counts`]) and sends
//! it in its report; [`run`] puts them in [`IpcResult::counts`], keyed by role.

use std::ffi::OsString;
use std::fs::File;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::data;
use super::end::{EndReport, EndSpec, Role};
pub use super::resources::default_dir;
use super::resources::{base_for, setup_err, Resources};
use super::{
    files, shared, sockets, sysv, zerocopy, IpcEnd, IpcError, IpcParams, IpcResult, Mechanism,
    MechanismInfo,
};
use crate::ends::control::ControlRegion;
pub use crate::process::filesystem::{filesystem, free_bytes};
use crate::process::launch::{Child, EndProgram, Launch};
use crate::process::rundir::Record;
use crate::size::gib_per_s;
use crate::size::{ByteSize, GIB, KIB, MIB};

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
fn chunk_for(mechanism: Mechanism, params: &IpcParams) -> Result<u64, IpcError> {
    use Mechanism::*;
    let io_experiment = matches!(mechanism, DirectIo | BufferedIo);
    let default = match mechanism {
        DirectIo | BufferedIo => KIB,
        SysvMsgqueue => {
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
    if mechanism == TcpZerocopyReceive && !chunk.is_multiple_of(zerocopy::page()) {
        return Err(IpcError::Invalid(format!(
            "chunk = {chunk} must be a multiple of the page size ({}) to be mapped",
            zerocopy::page()
        )));
    }
    Ok(chunk)
}

/// The bytes a run of `mechanism` asked to move `asked` bytes really moves: all
/// of them, except for `direct-io`, whose 1 KiB device requests are capped (the
/// run says so in a note).
pub fn effective_bytes(mechanism: Mechanism, asked: u64) -> u64 {
    if mechanism == Mechanism::DirectIo {
        asked.min(files::DIRECT_IO_MAX_BYTES)
    } else {
        asked
    }
}

/// Checks `params` for `mechanism` without running anything: the bounds, the
/// system's limits, and what the kernel must offer (the zero-copy mechanisms'
/// preconditions).
pub fn validate(
    mechanism: Mechanism,
    params: &IpcParams,
) -> Result<(MechanismInfo, u64), IpcError> {
    use Mechanism::*;
    let info = mechanism.info();
    let bytes = params.bytes.bytes();
    if !(1..=super::MAX_BYTES).contains(&bytes) {
        return Err(out_of_range("bytes", bytes, 1, super::MAX_BYTES));
    }
    let chunk = chunk_for(mechanism, params)?;
    match mechanism {
        SysvMsgqueue => sysv::SysvLimits::read().check_message(chunk)?,
        SysvShm => sysv::SysvLimits::read().check_segment(shared::HEADER + bytes)?,
        PosixShm => {
            shared::check_dev_shm(shared::HEADER + bytes, free_bytes(Path::new("/dev/shm")))?
        }
        TcpMsgZerocopy | TcpZerocopyReceive | UringSendZc => zerocopy::check(mechanism)?,
        _ => {}
    }
    Ok((info, chunk))
}

/// Checks, without running, that `mechanism` can run here with `params`: what
/// [`validate`] checks, and for a reflink whether the folder's file system
/// shares blocks (probed on two empty files with no name, removed at once).
pub fn check_here(mechanism: Mechanism, params: &IpcParams) -> Result<(), IpcError> {
    let (info, _) = validate(mechanism, params)?;
    if mechanism == Mechanism::Ficlone {
        let base = base_for(&info, params.dir.as_deref())?;
        let dir = base.path().to_path_buf();
        let fs = filesystem(&dir).unwrap_or_else(|| "unknown".into());
        let mut res = Resources::new(base);
        let src = res.unnamed_file("probe-src")?;
        let dst = res.unnamed_file("probe-dst")?;
        zerocopy::probe_reflink(&src, &dst, &dir, &fs)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Ends

/// A running end; dropping it kills and reaps the process.
#[derive(Debug)]
struct EndProcess {
    role: Role,
    child: Child,
}

/// The descriptors the harness hands an end (moved into it: the harness keeps
/// no copy).
#[derive(Debug, Default)]
struct Handed {
    data: Option<OwnedFd>,
    src: Option<File>,
    dst: Option<File>,
}

/// Starts one end through the one launcher, with the descriptors of its map.
fn spawn_end(
    spec: &EndSpec,
    handed: Handed,
    control: &ControlRegion,
    program: &EndProgram,
) -> Result<EndProcess, IpcError> {
    let spec = EndSpec {
        has_fd: handed.data.is_some(),
        has_control: control.fd().is_some(),
        has_src: handed.src.is_some(),
        has_dst: handed.dst.is_some(),
        ..spec.clone()
    };
    let json = serde_json::to_string(&spec).expect("specs serialise");
    let mut launch = Launch::new(
        spec.role.name(),
        program,
        "ipc-end",
        vec![OsString::from(json)],
    );
    if let Some(fd) = control.fd() {
        launch = launch.control(fd);
    }
    if let Some(data) = handed.data {
        launch = launch.data(data);
    }
    if let Some(src) = handed.src {
        launch = launch.source(src.into());
    }
    if let Some(dst) = handed.dst {
        launch = launch.destination(dst.into());
    }
    let child = launch.spawn().map_err(|err| IpcError::Setup {
        what: format!("start the {}", spec.role.name()),
        source: std::io::Error::other(err),
    })?;
    Ok(EndProcess {
        role: spec.role,
        child,
    })
}

/// The end's report, or why it failed: its stderr's messages, without the
/// `pipebench ipc-end ROLE: error:` prefix.
fn collect(end: &mut EndProcess) -> Result<EndReport, IpcError> {
    let status = end.child.status();
    let outcome = end.child.outcome::<EndReport>();
    let failed = |message: String| IpcError::EndFailed {
        role: end.role.name().to_string(),
        status: end.child.describe_status(),
        message,
    };
    match outcome {
        Ok(report) if status.is_some_and(|s| s.success()) => Ok(report),
        Ok(_) => Err(failed("it reported, then failed".into())),
        Err(silent) => Err(failed(
            silent
                .stderr
                .split("; ")
                .map(|l| l.split_once("error: ").map_or(l, |(_, m)| m))
                .collect::<Vec<_>>()
                .join("; "),
        )),
    }
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
            let pid = rustix::process::Pid::from_raw(end.child.pid() as i32)?;
            rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
        })
        .collect();
    let kill_all = |ends: &mut [EndProcess]| ends.iter_mut().for_each(|e| e.child.kill());
    loop {
        publish();
        if ends.len() == 2 && control.shared().holding.load(Ordering::Acquire) >= 2 {
            res.release_early();
        }
        for end in ends.iter_mut() {
            end.child.try_wait().map_err(setup_err("wait for an end"))?;
        }
        let status = |e: &EndProcess| e.child.status();
        let failed = ends.iter().any(|e| status(e).is_some_and(|s| !s.success()));
        if failed || ends.iter().all(|e| status(e).is_some()) {
            kill_all(ends);
            // The receiver may have stored its last count after the read above.
            publish();
            return Ok(());
        }
        if params
            .cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
        {
            kill_all(ends);
            return Err(IpcError::Cancelled);
        }
        if started.elapsed() > params.timeout {
            kill_all(ends);
            return Err(IpcError::Timeout(params.timeout));
        }
        match &pidfds {
            Some(pidfds) => {
                let mut running: Vec<rustix::event::PollFd<'_>> = pidfds
                    .iter()
                    .zip(ends.iter())
                    .filter(|(_, end)| end.child.status().is_none())
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
pub fn run(mechanism: Mechanism, params: &IpcParams) -> Result<IpcResult, IpcError> {
    use Mechanism::*;
    let (info, chunk) = validate(mechanism, params)?;
    let mut bytes = params.bytes.bytes();
    let base = base_for(&info, params.dir.as_deref())?;
    let dir = base.path().to_path_buf();
    let fs = if info.uses_files {
        filesystem(&dir)
    } else {
        None
    };
    let mut notes = Vec::new();
    let mut res = Resources::new(base);

    let copies_files = matches!(mechanism, CopyFileRange | Ficlone);
    let needs_src = (info.pair && info.uses_files && !matches!(mechanism, FileFlock | FileMmap))
        || copies_files;
    let files_needed = match mechanism {
        FileFlock | FileMmap | LinesMmap | LinesRead | DirectIo | BufferedIo => 1,
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
        mechanism,
        bytes,
        chunk,
        has_src: false,
        has_dst: false,
        shared: None,
        shm_name: None,
        sysv_id: None,
        port: None,
        peer_port: None,
        has_fd: false,
        has_control: false,
        no_counts: params.no_counts,
    };
    let mut producer = Handed::default();
    let mut consumer = Handed::default();
    let mut expected_lines = None;
    if needs_src {
        let mut src = res.unnamed_file("src")?;
        let dst = res.unnamed_file("dst")?;
        if mechanism == Ficlone {
            // Before the pattern is written: the file system says at once
            // whether it shares extents at all.
            zerocopy::probe_reflink(&src, &dst, &dir, fs.as_deref().unwrap_or("unknown"))?;
        }
        write_pattern(&mut src, bytes, false)?;
        producer.src = Some(src);
        if copies_files {
            producer.dst = Some(dst);
        } else {
            consumer.dst = Some(dst);
        }
    }
    match mechanism {
        FifoRw | FifoSplice => {
            spec.shared = Some(res.fifo("fifo")?);
        }
        PipeRw | PipeSplice => {
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
        m if m.is_tcp() => {
            let (listener, port) = sockets::listen(params.port.unwrap_or(0))?;
            // The producer's address is taken now, by a socket of the run's
            // own: the consumer will take no connection from anywhere else.
            let (socket, peer_port) = sockets::bound_socket()?;
            spec.port = Some(port);
            spec.peer_port = Some(peer_port);
            consumer.data = Some(listener);
            producer.data = Some(socket);
        }
        UnixStream | MemfdScm => {
            let (a, b) = sockets::socketpair()?;
            producer.data = Some(a);
            consumer.data = Some(b);
        }
        SysvMsgqueue => {
            let id = sysv::create_queue()?;
            res.sysv(Record::msg_queue(id), id, false)?;
            spec.sysv_id = Some(id);
        }
        SysvShm => {
            let id = sysv::create_segment(shared::HEADER + bytes)?;
            res.sysv(Record::sysv_shm(id), id, true)?;
            spec.sysv_id = Some(id);
        }
        PosixShm => {
            spec.shm_name = Some(res.posix_shm(shared::HEADER + bytes)?);
        }
        FileFlock => {
            spec.shared = Some(res.shared_file("shared", 0)?);
        }
        FileMmap => {
            spec.shared = Some(res.shared_file("shared", shared::HEADER + bytes)?);
        }
        LinesMmap | LinesRead => {
            let mut text = res.unnamed_file("text")?;
            expected_lines = Some(files::write_text(&mut text, bytes)?);
            producer.src = Some(text);
        }
        DirectIo | BufferedIo => {
            let mut data = res.unnamed_file("data")?;
            if mechanism == DirectIo {
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
            let capped = effective_bytes(mechanism, bytes);
            if capped < bytes {
                bytes = capped;
                spec.bytes = bytes;
                notes.push(format!(
                    "direct-io reads at most {} (each 1 KiB O_DIRECT read is a device request)",
                    ByteSize(bytes)
                ));
            }
            write_pattern(&mut data, bytes, mechanism == DirectIo)?;
            producer.src = Some(data);
        }
        _ => {}
    }

    let control = ControlRegion::create().map_err(|e| IpcError::Setup {
        what: "create the progress page".into(),
        source: std::io::Error::other(e),
    })?;
    let program = match &params.program {
        Some(program) => program.clone(),
        None => EndProgram::current_exe(&[]).map_err(setup_err("find the pipebench executable"))?,
    };
    let mut ends = Vec::new();
    if info.pair {
        // Consumer first: it is ready (accepting, attached, blocked in read)
        // before the producer's clock starts.
        let consumer_spec = EndSpec {
            role: Role::Consumer,
            ..spec.clone()
        };
        ends.push(spawn_end(&consumer_spec, consumer, &control, &program)?);
        ends.push(spawn_end(&spec, producer, &control, &program)?);
    } else {
        spec.role = Role::Solo;
        ends.push(spawn_end(&spec, producer, &control, &program)?);
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
    let checksum_ok = match (mechanism, receiver.checksum, expected_lines) {
        (_, _, Some(lines)) => receiver.lines == Some(lines),
        (CowFork, _, _) => receiver
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
    let moved = if info.pair { bytes } else { receiver.bytes };
    let ends: Vec<IpcEnd> = reports
        .iter()
        .map(|(role, r)| IpcEnd {
            role: role.name().to_string(),
            usage: r.usage,
            call_bytes: r.call_bytes.clone(),
        })
        .collect();
    // The ends' windows under their roles, once: the record's `counts`.
    let counts = crate::process::counts::Counts::of(
        reports
            .iter()
            .map(|(role, r)| (role.name(), r.counts.as_ref())),
    );
    Ok(IpcResult {
        mechanism: mechanism.id().to_string(),
        bytes: moved,
        chunk,
        elapsed_ms,
        gib_per_s: gib_per_s(moved, elapsed_ms),
        mib_per_s: gib_per_s(moved, elapsed_ms) * (GIB / MIB) as f64,
        copies: info.copies,
        kernel_functions: info
            .kernel_functions
            .iter()
            .map(|s| s.to_string())
            .collect(),
        survey_ms: info.survey.map(|s| s.ms),
        survey_bytes: info.survey.map(|s| s.bytes),
        checksum_ok,
        model: super::model::judge(mechanism, moved, &ends, counts.as_ref()),
        counts,
        page_size: Some(crate::ends::buffer::page_size() as u64),
        ends,
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
