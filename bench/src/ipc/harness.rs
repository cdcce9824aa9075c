//! The harness of the IPC lab: validation, the two ends, and the result.
//!
//! [`run`] creates what a mechanism needs ([`super::resources`]: files, a FIFO,
//! a pipe, a listening socket, a System V queue or segment, a POSIX shared
//! memory object), then starts the current program as `pipebench ipc-end SPEC`
//! for each end through the one launcher ([`crate::process::launch`]), with the
//! descriptors of its one map: the report pipe on fd 3, the control page on
//! fd 4, the data descriptor (if any) on fd 5, the source and destination files
//! (if any) on fds 6 and 7, and `PR_SET_PDEATHSIG(SIGKILL)`, so the ends die
//! with the harness thread. The ends are watched and reaped by
//! [`crate::process::supervise`]: the run is over when an end fails (the other
//! is killed at once) or both have exited.
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
use std::time::Duration;

use super::data;
use super::end::{IpcEndReport, IpcEndSpec, IpcRole};
pub use super::resources::default_dir;
use super::resources::{base_for, setup_err, Resources};
use super::{
    files, shared, sockets, sysv, zerocopy, IpcEnd, IpcError, IpcParams, IpcResult, Mechanism,
    MechanismInfo,
};
use crate::ends::control::ControlRegion;
pub use crate::process::filesystem::{filesystem, free_bytes};
use crate::process::launch::{EndProgram, Launch};
use crate::process::rundir::NamedObject;
use crate::process::supervise::{
    supervise, Ending, Flow, Policy, Reaped, SuperviseError, Supervised,
};
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
// Objects

/// The descriptors the harness hands an end (moved into it: the harness keeps
/// no copy).
#[derive(Debug, Default)]
struct Handed {
    data: Option<OwnedFd>,
    src: Option<File>,
    dst: Option<File>,
}

/// What a run made for its ends: their spec, what each is handed, and what the
/// result needs to know of it.
#[derive(Debug)]
struct Made {
    /// The producer's (or the solo end's) spec; the consumer's differs only by
    /// its role. Its `bytes` are those the ends are asked to move (capped for
    /// `direct-io`).
    spec: IpcEndSpec,
    producer: Handed,
    consumer: Handed,
    /// The lines a text experiment must count.
    expected_lines: Option<u64>,
    /// What the result says beside its figures.
    notes: Vec<String>,
}

/// Where a run makes its files, and the file system there (for the mechanisms
/// that use files).
#[derive(Debug, Clone, Copy)]
struct Place<'a> {
    dir: &'a Path,
    fs: Option<&'a str>,
}

/// Whether the run writes the pattern into a source file, and makes a
/// destination beside it.
fn needs_src(mechanism: Mechanism, info: &MechanismInfo) -> bool {
    use Mechanism::*;
    (info.pair && info.uses_files && !matches!(mechanism, FileFlock | FileMmap))
        || matches!(mechanism, CopyFileRange | Ficlone)
}

/// Refuses a folder with no room for the files the run writes, before any is
/// made.
fn check_room(
    mechanism: Mechanism,
    info: &MechanismInfo,
    bytes: u64,
    dir: &Path,
) -> Result<(), IpcError> {
    use Mechanism::*;
    let files_needed = match mechanism {
        FileFlock | FileMmap | LinesMmap | LinesRead | DirectIo | BufferedIo => 1,
        _ if needs_src(mechanism, info) => 2,
        _ => 0,
    };
    if files_needed == 0 {
        return Ok(());
    }
    let needed = files_needed * bytes + MIB;
    match free_bytes(dir) {
        Some(available) if available < needed => Err(IpcError::DirTooSmall {
            dir: dir.display().to_string(),
            needed,
            available,
        }),
        _ => Ok(()),
    }
}

/// Makes everything the ends of `mechanism` need, owned by `res`.
fn make_objects(
    mechanism: Mechanism,
    info: &MechanismInfo,
    params: &IpcParams,
    chunk: u64,
    place: Place<'_>,
    res: &mut Resources,
) -> Result<Made, IpcError> {
    let mut made = Made {
        spec: IpcEndSpec {
            role: IpcRole::Producer,
            mechanism,
            bytes: params.bytes.bytes(),
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
        },
        producer: Handed::default(),
        consumer: Handed::default(),
        expected_lines: None,
        notes: Vec::new(),
    };
    if needs_src(mechanism, info) {
        make_source(place, res, &mut made)?;
    }
    make_channel(params, place, res, &mut made)?;
    Ok(made)
}

/// The source file, with the pattern, and the destination: the producer's, or
/// the consumer's to write into.
fn make_source(place: Place<'_>, res: &mut Resources, made: &mut Made) -> Result<(), IpcError> {
    let mechanism = made.spec.mechanism;
    let mut src = res.unnamed_file("src")?;
    let dst = res.unnamed_file("dst")?;
    if mechanism == Mechanism::Ficlone {
        // Before the pattern is written: the file system says at once
        // whether it shares extents at all.
        zerocopy::probe_reflink(&src, &dst, place.dir, place.fs.unwrap_or("unknown"))?;
    }
    write_pattern(&mut src, made.spec.bytes, false)?;
    made.producer.src = Some(src);
    if matches!(mechanism, Mechanism::CopyFileRange | Mechanism::Ficlone) {
        made.producer.dst = Some(dst);
    } else {
        made.consumer.dst = Some(dst);
    }
    Ok(())
}

/// What carries the bytes between the ends: a FIFO, a pipe, sockets, a kernel
/// object, a shared file, or the one process's file.
fn make_channel(
    params: &IpcParams,
    place: Place<'_>,
    res: &mut Resources,
    made: &mut Made,
) -> Result<(), IpcError> {
    use Mechanism::*;
    let bytes = made.spec.bytes;
    let spec = &mut made.spec;
    match spec.mechanism {
        FifoRw | FifoSplice => spec.shared = Some(res.fifo("fifo")?),
        PipeRw | PipeSplice => {
            let (r, w) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
                .map_err(|e| setup_err("create the pipe")(e.into()))?;
            made.producer.data = Some(w);
            made.consumer.data = Some(r);
        }
        m if m.is_tcp() => {
            let (listener, port) = sockets::listen(params.port.unwrap_or(0))?;
            // The producer's address is taken now, by a socket of the run's
            // own: the consumer will take no connection from anywhere else.
            let (socket, peer_port) = sockets::bound_socket()?;
            spec.port = Some(port);
            spec.peer_port = Some(peer_port);
            made.consumer.data = Some(listener);
            made.producer.data = Some(socket);
        }
        UnixStream | MemfdScm => {
            let (a, b) = sockets::socketpair()?;
            made.producer.data = Some(a);
            made.consumer.data = Some(b);
        }
        SysvMsgqueue => {
            let id = sysv::create_queue()?;
            res.sysv(NamedObject::msg_queue(id), id, false)?;
            spec.sysv_id = Some(id);
        }
        SysvShm => {
            let id = sysv::create_segment(shared::HEADER + bytes)?;
            res.sysv(NamedObject::sysv_shm(id), id, true)?;
            spec.sysv_id = Some(id);
        }
        PosixShm => spec.shm_name = Some(res.posix_shm(shared::HEADER + bytes)?),
        FileFlock => spec.shared = Some(res.shared_file("shared", 0)?),
        FileMmap => spec.shared = Some(res.shared_file("shared", shared::HEADER + bytes)?),
        LinesMmap | LinesRead => {
            let mut text = res.unnamed_file("text")?;
            made.expected_lines = Some(files::write_text(&mut text, bytes)?);
            made.producer.src = Some(text);
        }
        DirectIo | BufferedIo => make_io_data(place, res, made)?,
        _ => {}
    }
    Ok(())
}

/// The file the IO experiments read: refused or noted on tmpfs, probed for
/// O_DIRECT, capped for `direct-io` (the spec's bytes then say so).
fn make_io_data(place: Place<'_>, res: &mut Resources, made: &mut Made) -> Result<(), IpcError> {
    let mechanism = made.spec.mechanism;
    let mut data = res.unnamed_file("data")?;
    if mechanism == Mechanism::DirectIo {
        if place.fs == Some("tmpfs") {
            return Err(IpcError::DirectIoOnTmpfs {
                dir: place.dir.display().to_string(),
            });
        }
        files::probe_direct_io(&data, place.dir, place.fs.unwrap_or("unknown"))?;
    } else if place.fs == Some("tmpfs") {
        made.notes.push(
            "buffered reads on tmpfs read memory: there is no disk behind the page cache".into(),
        );
    }
    let capped = effective_bytes(mechanism, made.spec.bytes);
    if capped < made.spec.bytes {
        made.spec.bytes = capped;
        made.notes.push(format!(
            "direct-io reads at most {} (each 1 KiB O_DIRECT read is a device request)",
            ByteSize(capped)
        ));
    }
    write_pattern(&mut data, made.spec.bytes, mechanism == Mechanism::DirectIo)?;
    made.producer.src = Some(data);
    Ok(())
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

// ---------------------------------------------------------------------------
// Ends

/// How often the harness wakes while the ends run, for progress, cancel and the
/// timeout; an end's exit wakes it at once.
const WAIT_TICK: Duration = Duration::from_millis(20);

/// One end's launch through the one launcher, with the descriptors of its map.
fn launch_end<'a>(
    spec: &IpcEndSpec,
    handed: Handed,
    control: &'a ControlRegion,
    program: &'a EndProgram,
) -> Launch<'a> {
    let spec = IpcEndSpec {
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
    launch
}

/// The ends to start, in order, with their roles: for a pair the consumer
/// first, so that it is ready (accepting, attached, blocked in read) before the
/// producer's clock starts; else the one solo end.
fn start_order<'a>(
    pair: bool,
    spec: IpcEndSpec,
    producer: Handed,
    consumer: Handed,
    control: &'a ControlRegion,
    program: &'a EndProgram,
) -> (Vec<IpcRole>, Vec<Launch<'a>>) {
    if !pair {
        let spec = IpcEndSpec {
            role: IpcRole::Solo,
            ..spec
        };
        return (
            vec![IpcRole::Solo],
            vec![launch_end(&spec, producer, control, program)],
        );
    }
    let consumer_spec = IpcEndSpec {
        role: IpcRole::Consumer,
        ..spec.clone()
    };
    (
        vec![IpcRole::Consumer, IpcRole::Producer],
        vec![
            launch_end(&consumer_spec, consumer, control, program),
            launch_end(&spec, producer, control, program),
        ],
    )
}

/// Copies the receiver's count from the control page for whoever shows the
/// run live.
fn publish(control: &ControlRegion, params: &IpcParams) {
    if let Some(progress) = &params.progress {
        let received = control.shared().reader_bytes.load(Ordering::Relaxed);
        progress.store(received, Ordering::Relaxed);
    }
}

/// Runs the ends to their end: kills the others as soon as one fails, all of
/// them on cancel or timeout; publishes progress meanwhile, and on the tick
/// after both ends of a pair say they hold the run's named object, removes the
/// name (`res`'s early part). Returns each end's report, or the failure to
/// report.
fn run_ends(
    roles: &[IpcRole],
    launches: Vec<Launch<'_>>,
    control: &ControlRegion,
    params: &IpcParams,
    res: &mut Resources,
) -> Result<Vec<(IpcRole, IpcEndReport)>, IpcError> {
    let policy = Policy {
        tick: WAIT_TICK,
        timeout: params.timeout,
        ending: Ending::FailureOrAll,
        grace: Duration::ZERO,
    };
    let cancelled = || {
        params
            .cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
    };
    let supervised = supervise::<IpcEndReport>(launches, &policy, || {
        publish(control, params);
        if roles.len() == 2 && control.shared().holding.load(Ordering::Acquire) >= 2 {
            res.release_early();
        }
        if cancelled() {
            Flow::Stop
        } else {
            Flow::Go
        }
    })
    .map_err(|err| match err {
        SuperviseError::Start { index, source } => IpcError::Setup {
            what: format!("start the {}", roles[index].name()),
            source: std::io::Error::other(source),
        },
        SuperviseError::Wait { source, .. } => setup_err("wait for an end")(source),
    })?;
    let reaped = match supervised {
        Supervised::Ended(reaped) => reaped,
        Supervised::Stopped => return Err(IpcError::Cancelled),
        Supervised::TimedOut => return Err(IpcError::Timeout(params.timeout)),
    };
    // The receiver may have stored its last count after the last tick.
    publish(control, params);
    let mut reports = Vec::new();
    let mut cause: Option<(u8, IpcError)> = None;
    for (&role, end) in roles.iter().zip(reaped) {
        let rank = cause_rank(role, end.by_itself);
        match collect(role, end) {
            Ok(report) => reports.push((role, report)),
            Err(e) if cause.as_ref().is_none_or(|(best, _)| rank < *best) => {
                cause = Some((rank, e))
            }
            Err(_) => {}
        }
    }
    cause.map_or(Ok(reports), |(_, e)| Err(e))
}

/// Which failed end's error is the run's (lowest first): an end that failed by
/// itself before one the harness killed because another had failed (its
/// "killed by signal 9" only echoes the cause); among those, the producer, as
/// a consumer's "unexpected end of data" only echoes a failed producer.
fn cause_rank(role: IpcRole, by_itself: bool) -> u8 {
    match (by_itself, role == IpcRole::Producer) {
        (true, true) => 0,
        (true, false) => 1,
        (false, true) => 2,
        (false, false) => 3,
    }
}

/// The end's report, or why it failed: its stderr's messages, without the
/// `pipebench ipc-end ROLE: error:` prefix.
fn collect(role: IpcRole, end: Reaped<IpcEndReport>) -> Result<IpcEndReport, IpcError> {
    let failed = |message: String| IpcError::EndFailed {
        role: role.name().to_string(),
        status: end.status.clone(),
        message,
    };
    match end.outcome {
        Ok(report) if end.success => Ok(report),
        Ok(_) => Err(failed("it reported, then failed".into())),
        Err(ref silent) => Err(failed(
            silent
                .stderr
                .split("; ")
                .map(|l| l.split_once("error: ").map_or(l, |(_, m)| m))
                .collect::<Vec<_>>()
                .join("; "),
        )),
    }
}

// ---------------------------------------------------------------------------
// The result

/// Whether the receiver got what was sent: the text's lines, the fork's two
/// views, or the pattern's checksum over every byte (a mismatch is an error).
fn check_received(
    mechanism: Mechanism,
    bytes: u64,
    receiver: &IpcEndReport,
    expected_lines: Option<u64>,
) -> Result<bool, IpcError> {
    Ok(match (mechanism, receiver.checksum, expected_lines) {
        (_, _, Some(lines)) => receiver.lines == Some(lines),
        (Mechanism::CowFork, _, _) => receiver
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
    })
}

/// From the producer's first data call to the last byte's arrival, ms.
fn elapsed_ms(reports: &[(IpcRole, IpcEndReport)]) -> f64 {
    let start = reports.iter().filter_map(|(_, r)| r.start_ns).min();
    let end = reports.iter().filter_map(|(_, r)| r.end_ns).max();
    match (start, end) {
        (Some(s), Some(e)) => e.saturating_sub(s) as f64 / 1e6,
        _ => 0.0,
    }
}

/// The run's result from its ends' reports; `made` is what the run made (its
/// ends' parts already handed over).
fn result(
    info: &MechanismInfo,
    made: Made,
    reports: &[(IpcRole, IpcEndReport)],
    fs: Option<String>,
) -> Result<IpcResult, IpcError> {
    let (mechanism, bytes, chunk) = (info.mechanism, made.spec.bytes, made.spec.chunk);
    let receiver = reports
        .iter()
        .find(|(role, _)| *role != IpcRole::Producer)
        .map(|(_, r)| r.clone())
        .unwrap_or_default();
    let checksum_ok = check_received(mechanism, bytes, &receiver, made.expected_lines)?;
    let mut notes = made.notes;
    notes.extend(reports.iter().flat_map(|(_, r)| r.notes.iter().cloned()));
    // A one-process experiment says what it went through: the text file ends on
    // a whole line (a little under the size asked), the fork's child writes what
    // it writes.
    let moved = if info.pair { bytes } else { receiver.bytes };
    let elapsed_ms = elapsed_ms(reports);
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

/// Runs `mechanism` once with `params` and returns its measurement.
///
/// Blocking. Everything the run creates is removed before it returns, whether it
/// succeeded, failed, was cancelled through `params.cancel`, or unwound; what a
/// killed harness leaves is in its private folder for the next
/// [`crate::process::rundir::remove_dead`].
pub fn run(mechanism: Mechanism, params: &IpcParams) -> Result<IpcResult, IpcError> {
    let (info, chunk) = validate(mechanism, params)?;
    let base = base_for(&info, params.dir.as_deref())?;
    let dir = base.path().to_path_buf();
    let fs = if info.uses_files {
        filesystem(&dir)
    } else {
        None
    };
    let mut res = Resources::new(base);
    check_room(mechanism, &info, params.bytes.bytes(), &dir)?;
    let place = Place {
        dir: &dir,
        fs: fs.as_deref(),
    };
    let mut made = make_objects(mechanism, &info, params, chunk, place, &mut res)?;
    let control = ControlRegion::create().map_err(|e| IpcError::Setup {
        what: "create the progress page".into(),
        source: std::io::Error::other(e),
    })?;
    let program = match &params.program {
        Some(program) => program.clone(),
        None => EndProgram::current_exe(&[]).map_err(setup_err("find the pipebench executable"))?,
    };
    let (roles, launches) = start_order(
        info.pair,
        made.spec.clone(),
        std::mem::take(&mut made.producer),
        std::mem::take(&mut made.consumer),
        &control,
        &program,
    );
    let reports = run_ends(&roles, launches, &control, params, &mut res)?;
    result(&info, made, &reports, fs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_dir_kind_is_detected() {
        assert_eq!(filesystem(Path::new("/dev/shm")).as_deref(), Some("tmpfs"));
        assert_ne!(filesystem(&default_dir()).as_deref(), Some("tmpfs"));
    }

    #[test]
    fn the_run_reports_the_end_that_failed_by_itself_not_the_one_killed_after_it() {
        // A consumer that failed on its own beats the producer the harness
        // killed because of it.
        assert!(cause_rank(IpcRole::Consumer, true) < cause_rank(IpcRole::Producer, false));
        // Both failed on their own: the producer is the cause, the consumer's
        // short read its echo.
        assert!(cause_rank(IpcRole::Producer, true) < cause_rank(IpcRole::Consumer, true));
        assert!(cause_rank(IpcRole::Producer, false) < cause_rank(IpcRole::Consumer, false));
    }
}
