//! The parent's side of a latency run: makes what the mechanism needs, starts
//! the two ends through [`crate::process::launch`] and watches them with
//! [`crate::process::supervise`] (when one ends, the other has a grace to
//! follow), samples progress from the shared region, and removes everything it
//! made.
//!
//! What is named, and for how long: the FIFOs live in a private run folder
//! ([`RunDir`]) until both ends have opened them; the POSIX queues get a random
//! `/pipebook-<hex>` name, created O_EXCL 0600 and unlinked as soon as the
//! harness holds them, before any end starts (an mqd_t is a descriptor the ends
//! inherit); the System V queue is IPC_PRIVATE, noted in a run folder so that a
//! killed harness's queue is swept at the next start, and removed at the end.
//! Sockets, pipes, eventfds and the region have no name. The one thing another
//! user can reach is the TCP pair's listener, for the moment between its
//! listen and the harness's own connect ([`loopback_pair`]): the harness takes
//! the connection from its own client's address only, refuses any other
//! unread (and says so in the result's warnings), and closes the listener
//! before an end starts.

use std::ffi::{CString, OsString};
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::channel::LatencyRole;
use super::end::{LatencyEndOutcome, LatencyEndSpec, LatencyEndUsage, PingReport};
use super::shared::LatencyRegion;
use super::{LatencyConfig, LatencyError, LatencyMechanism, LatencyResult, Mode};
use crate::process::counts::Counts;
use crate::process::launch::{EndProgram, Launch};
use crate::process::rundir::{Base, NamedObject, RunDir};
use crate::process::supervise::{
    supervise, Ending, Flow, Policy, Reaped, SuperviseError, Supervised,
};

/// The subcommand both ends run.
pub(crate) const END_SUBCOMMAND: &str = "latency-end";

/// How often the harness looks at its ends and tells its caller.
const TICK: Duration = Duration::from_millis(50);

/// A progress sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveSample {
    /// Round trips timed so far.
    pub done: u64,
    /// Round trips to time.
    pub of: u64,
    /// The live distribution (quarter-octave buckets, [`super::shared`]).
    pub buckets: Vec<u64>,
}

/// How long a configuration may take before it is stopped: generous, since a
/// busy-polling pair on one CPU hands over only when the scheduler preempts.
pub(crate) fn timeout_for(config: &LatencyConfig) -> Duration {
    let per = match (config.mode, config.cpus[0] == config.cpus[1]) {
        (Mode::Busy, true) => Duration::from_millis(10),
        _ => Duration::from_micros(200) + Duration::from_nanos(config.size),
    };
    let total = u64::from(config.warm_up()) + config.window();
    (Duration::from_secs(30) + per * total.min(u32::MAX as u64) as u32)
        .min(Duration::from_secs(3600))
}

/// What a run holds until its ends are gone.
#[derive(Default)]
struct Held {
    /// The FIFOs' folder: dropped (removed) once both ends hold them.
    fifo_dir: Option<RunDir>,
    /// The System V queue, with its note's folder.
    sysv: Option<(i32, NamedObject, RunDir)>,
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Some((id, record, dir)) = self.sysv.take() {
            // SAFETY: msgctl with IPC_RMID on the queue this run made.
            if unsafe { libc::msgctl(id, libc::IPC_RMID, std::ptr::null_mut()) } == 0 {
                dir.forget(&record);
            }
        }
    }
}

fn setup(what: &str) -> impl FnOnce(std::io::Error) -> LatencyError + '_ {
    move |source| LatencyError::Setup {
        what: what.to_string(),
        source,
    }
}

/// The descriptors one end is handed: (stdin, stdout, data).
type Fds = (Option<OwnedFd>, Option<OwnedFd>, Option<OwnedFd>);

/// What the two ends are told and handed.
struct Ends {
    ping: LatencyEndSpec,
    pong: LatencyEndSpec,
    ping_fds: Fds,
    pong_fds: Fds,
}

/// Makes what the configuration's mechanism needs: descriptors for the ends,
/// named objects held in `held`, and in `warnings` what the result must say
/// (connections refused).
fn make_objects(
    config: &LatencyConfig,
    held: &mut Held,
    warnings: &mut Vec<String>,
) -> Result<Ends, LatencyError> {
    let spec = |role| LatencyEndSpec {
        role,
        config: config.clone(),
        fifos: None,
        msg_queue: None,
        ring_params: None,
    };
    let mut ends = Ends {
        ping: spec(LatencyRole::Ping),
        pong: spec(LatencyRole::Pong),
        ping_fds: (None, None, None),
        pong_fds: (None, None, None),
    };
    let fds = match config.mechanism {
        LatencyMechanism::Pipe | LatencyMechanism::IoUring => pipes()?,
        LatencyMechanism::Eventfd => {
            let make = || {
                rustix::event::eventfd(0, rustix::event::EventfdFlags::CLOEXEC)
                    .map_err(|e| unsupported_or(config, "make an eventfd", e.into()))
            };
            crossed(make()?, make()?)?
        }
        LatencyMechanism::Fifo => {
            let fifos = fifos(held)?;
            ends.ping.fifos = Some(fifos.clone());
            ends.pong.fifos = Some(fifos);
            return Ok(ends);
        }
        LatencyMechanism::UnixStream | LatencyMechanism::UnixDgram => socket_pair(config)?,
        LatencyMechanism::Tcp => {
            let (client, server, refused) = loopback_pair(|_| {})?;
            warnings.extend(refused);
            (
                (None, None, Some(OwnedFd::from(client))),
                (None, None, Some(OwnedFd::from(server))),
            )
        }
        LatencyMechanism::PosixMq => crossed(posix_queue(config)?, posix_queue(config)?)?,
        LatencyMechanism::SysvMq => {
            let id = sysv_queue(config, held)?;
            ends.ping.msg_queue = Some(id);
            ends.pong.msg_queue = Some(id);
            return Ok(ends);
        }
        LatencyMechanism::IoUringMsgRing => {
            // Both rings exist before either end starts: MSG_RING names its
            // target by a descriptor in the sender's own table, SCM_RIGHTS
            // refuses to pass an io_uring's, and an inherited one is the same
            // open ring. Each end gets its own at fd 0 and the other's at fd 1.
            let (ping_ring, ping_params) = message_ring(config)?;
            let (pong_ring, pong_params) = message_ring(config)?;
            ends.ping.ring_params = Some(ping_params);
            ends.pong.ring_params = Some(pong_params);
            crossed(pong_ring, ping_ring)?
        }
        LatencyMechanism::Futex | LatencyMechanism::ShmRing => return Ok(ends),
    };
    (ends.ping_fds, ends.pong_fds) = fds;
    Ok(ends)
}

/// Two pipes, crossed: each end reads on stdin what the other writes on its
/// stdout.
fn pipes() -> Result<(Fds, Fds), LatencyError> {
    let pipe = || rustix::pipe::pipe().map_err(|e| setup("make a pipe")(e.into()));
    let ((a_r, a_w), (b_r, b_w)) = (pipe()?, pipe()?);
    Ok(((Some(b_r), Some(a_w), None), (Some(a_r), Some(b_w), None)))
}

/// Two objects each end may read and write, crossed: ping waits on `b` (its
/// stdin) and signals `a` (its stdout), pong the other way round.
fn crossed(a: OwnedFd, b: OwnedFd) -> Result<(Fds, Fds), LatencyError> {
    let (a2, b2) = (dup(&a)?, dup(&b)?);
    Ok(((Some(b), Some(a), None), (Some(a2), Some(b2), None)))
}

/// A run folder of the runtime directory's.
fn run_dir() -> Result<RunDir, LatencyError> {
    let base =
        Base::runtime().map_err(|e| setup("find a private folder")(std::io::Error::other(e)))?;
    RunDir::create(&base).map_err(|e| setup("make a run folder")(std::io::Error::other(e)))
}

/// The two FIFOs (towards pong, towards ping), in a run folder `held` keeps
/// until both ends have opened them.
fn fifos(held: &mut Held) -> Result<[PathBuf; 2], LatencyError> {
    let dir = run_dir()?;
    let fifo = |name| {
        dir.create_fifo(name)
            .map_err(|e| setup("make a FIFO")(std::io::Error::other(e)))
    };
    let fifos = [fifo("to-pong")?, fifo("to-ping")?];
    held.fifo_dir = Some(dir);
    Ok(fifos)
}

/// A Unix socket pair; a datagram pair's buffers fit a message whole.
fn socket_pair(config: &LatencyConfig) -> Result<(Fds, Fds), LatencyError> {
    let kind = match config.mechanism {
        LatencyMechanism::UnixStream => rustix::net::SocketType::STREAM,
        _ => rustix::net::SocketType::DGRAM,
    };
    let (a, b) = rustix::net::socketpair(
        rustix::net::AddressFamily::UNIX,
        kind,
        rustix::net::SocketFlags::CLOEXEC,
        None,
    )
    .map_err(|e| setup("make a socket pair")(e.into()))?;
    if config.mechanism == LatencyMechanism::UnixDgram {
        // A datagram must fit the send buffer whole.
        let room = (2 * config.size as usize + 4096).max(65536);
        for fd in [&a, &b] {
            let _ = rustix::net::sockopt::set_socket_send_buffer_size(fd, room);
            let _ = rustix::net::sockopt::set_socket_recv_buffer_size(fd, room);
        }
    }
    Ok(((None, None, Some(a)), (None, None, Some(b))))
}

/// A private System V queue, noted in a run folder (for the sweep after a
/// killed harness) and held in `held`, which removes it.
fn sysv_queue(config: &LatencyConfig, held: &mut Held) -> Result<i32, LatencyError> {
    let dir = run_dir()?;
    // SAFETY: msgget takes plain integers; IPC_PRIVATE has no key to find.
    let id = unsafe { libc::msgget(libc::IPC_PRIVATE, libc::IPC_CREAT | 0o600) };
    if id < 0 {
        return Err(unsupported_or(
            config,
            "make a System V message queue",
            std::io::Error::last_os_error(),
        ));
    }
    let record = NamedObject::msg_queue(id);
    let noted = record.and_then(|record| {
        dir.record(&record)
            .map(|()| record)
            .map_err(std::io::Error::other)
    });
    match noted {
        Ok(record) => held.sysv = Some((id, record, dir)),
        Err(e) => {
            // SAFETY: removes the queue just made.
            unsafe { libc::msgctl(id, libc::IPC_RMID, std::ptr::null_mut()) };
            return Err(setup("note the System V queue")(e));
        }
    }
    Ok(id)
}

/// The order the ends start in: pong, the end that answers, before ping, the
/// end that asks (and times).
const START_ORDER: [LatencyRole; 2] = [LatencyRole::Pong, LatencyRole::Ping];

/// How long the end still running after its partner ended may take to follow
/// before it is killed: it may wait for a message that will never come.
const GRACE: Duration = Duration::from_secs(2);

/// One end's launch through the one launcher: its spec as JSON, the region as
/// its control page, and its descriptors.
fn launch_end<'a>(
    spec: &LatencyEndSpec,
    fds: Fds,
    region: &'a LatencyRegion,
    program: &'a EndProgram,
) -> Launch<'a> {
    let json = serde_json::to_string(spec).expect("specs serialise");
    let mut launch = Launch::new(
        format!("{} end", spec.role.as_str()),
        program,
        END_SUBCOMMAND,
        vec![OsString::from(json)],
    )
    .control(region.fd());
    if let Some(fd) = fds.0 {
        launch = launch.stdin(fd);
    }
    if let Some(fd) = fds.1 {
        launch = launch.stdout(fd);
    }
    if let Some(fd) = fds.2 {
        launch = launch.data(fd);
    }
    launch
}

/// Runs both ends to their end, telling `tick` of progress (and once more at
/// the end), and removing the FIFOs' folder once both ends hold them. Returns
/// both ends, reaped, in [`START_ORDER`].
fn run_ends(
    config: &LatencyConfig,
    launches: Vec<Launch<'_>>,
    region: &LatencyRegion,
    held: &mut Held,
    tick: &mut impl FnMut(LiveSample) -> bool,
) -> Result<Vec<Reaped<LatencyEndOutcome>>, LatencyError> {
    let sample = || LiveSample {
        done: region.done(),
        of: u64::from(config.round_trips),
        buckets: region.buckets(),
    };
    let policy = Policy {
        tick: TICK,
        timeout: timeout_for(config),
        ending: Ending::AnyExit,
        grace: GRACE,
    };
    let supervised = supervise::<LatencyEndOutcome>(launches, &policy, || {
        let holding = region.header().holding.0.load(Ordering::Acquire);
        if held.fifo_dir.is_some() && holding >= 2 {
            // Both ends hold the FIFOs: the names (and the folder) can go.
            held.fifo_dir = None;
        }
        if tick(sample()) {
            Flow::Stop
        } else {
            Flow::Go
        }
    })
    .map_err(|err| match err {
        SuperviseError::Start { index, source } => LatencyError::End {
            role: START_ORDER[index].as_str(),
            message: source.to_string(),
        },
        SuperviseError::Wait { index, source } => {
            setup(&format!("wait for the {} end", START_ORDER[index].as_str()))(source)
        }
    })?;
    let reaped = match supervised {
        Supervised::Ended(reaped) => reaped,
        Supervised::Stopped => return Err(LatencyError::Cancelled),
        Supervised::TimedOut => {
            return Err(LatencyError::Timeout {
                seconds: timeout_for(config).as_secs(),
            })
        }
    };
    tick(sample());
    Ok(reaped)
}

/// The ping end's report and the pong end's usage, or the failure to report:
/// that of the end that failed first, one that died without a word (killed)
/// rather than its partner, which then only saw the other end gone; never one
/// the harness killed itself, waiting for a message that could not come.
fn reports(
    ping: Reaped<LatencyEndOutcome>,
    pong: Reaped<LatencyEndOutcome>,
) -> Result<(PingReport, LatencyEndUsage), LatencyError> {
    let outcome = |end: Reaped<LatencyEndOutcome>, role: &'static str| {
        end.outcome.map_err(|silent| LatencyError::End {
            role,
            message: format!("it died ({}): {}", silent.status, silent.stderr),
        })
    };
    let (ping_by_itself, pong_by_itself) = (ping.by_itself, pong.by_itself);
    let failed = |role, message| Err(LatencyError::End { role, message });
    match (outcome(ping, "ping"), outcome(pong, "pong")) {
        (Err(died), _) if ping_by_itself => Err(died),
        (_, Err(died)) if pong_by_itself => Err(died),
        (Ok(LatencyEndOutcome::Failed { message }), _) => failed("ping", message),
        (_, Ok(LatencyEndOutcome::Failed { message })) => failed("pong", message),
        (Err(died), _) | (_, Err(died)) => Err(died),
        (Ok(LatencyEndOutcome::Ping(report)), Ok(LatencyEndOutcome::Pong(usage))) => {
            Ok((*report, usage))
        }
        // Failures were returned above.
        _ => failed("ping", "the ends answered out of turn".into()),
    }
}

/// Runs one configuration: both ends pinned, `tick` told of progress every
/// 50 ms (it returns true to stop the run).
pub fn run(
    config: &LatencyConfig,
    program: &EndProgram,
    mut tick: impl FnMut(LiveSample) -> bool,
) -> Result<LatencyResult, LatencyError> {
    config.check()?;
    let size = config.size as usize;
    let region = LatencyRegion::create(size).map_err(setup("make the shared region (memfd)"))?;
    let mut held = Held::default();
    // What the result says beside its figures (connections refused).
    let mut warnings = Vec::new();
    let ends = make_objects(config, &mut held, &mut warnings)?;
    let launches = vec![
        launch_end(&ends.pong, ends.pong_fds, &region, program),
        launch_end(&ends.ping, ends.ping_fds, &region, program),
    ];
    let mut reaped = run_ends(config, launches, &region, &mut held, &mut tick)?;
    let (ping, pong) = (reaped.pop(), reaped.pop());
    let (report, pong_usage) = reports(
        ping.expect("two ends were started"),
        pong.expect("two ends were started"),
    )?;
    drop(held);
    Ok(result(config, report, pong_usage, warnings))
}

/// The TCP pair over loopback, made by the harness before either end starts:
/// a listener on a free port of 127.0.0.1, the harness's own connection to it,
/// and the accepted side of *that* connection, told from any other by its
/// address (the client's own port, which no other socket can hold while the
/// client does). Another local program that saw the listener in
/// /proc/net/tcp and connected first is closed unread; the listener is gone
/// before any end starts. `between` runs between listen and connect (the
/// moment an intruder could come first; tests use it). Returns the two sides
/// and, if any connection was refused, a warning saying how many.
pub(crate) fn loopback_pair(
    between: impl FnOnce(std::net::SocketAddr),
) -> Result<(std::net::TcpStream, std::net::TcpStream, Option<String>), LatencyError> {
    let listener =
        std::net::TcpListener::bind(("127.0.0.1", 0)).map_err(setup("listen on 127.0.0.1"))?;
    let address = listener
        .local_addr()
        .map_err(setup("listen on 127.0.0.1"))?;
    between(address);
    let client = std::net::TcpStream::connect(address).map_err(setup("connect over loopback"))?;
    let ours = client
        .local_addr()
        .map_err(setup("read the client's address"))?;
    // The client's connection is complete once connect returns, so it is in
    // the listener's queue: at most the queue's earlier entries come first.
    let mut refused = 0u64;
    let server = loop {
        let (server, from) = listener.accept().map_err(setup("accept over loopback"))?;
        if from == ours {
            break server;
        }
        refused += 1;
    };
    drop(listener);
    for s in [&client, &server] {
        s.set_nodelay(true).map_err(setup("set TCP_NODELAY"))?;
    }
    let warning = (refused > 0).then(|| {
        format!(
            "{refused} connection{} to the run's loopback port came from another socket than its own client ({ours}) and {} closed unread: another local program connected to it",
            if refused == 1 { "" } else { "s" },
            if refused == 1 { "was" } else { "were" },
        )
    });
    Ok((client, server, warning))
}

fn result(
    config: &LatencyConfig,
    r: PingReport,
    pong: LatencyEndUsage,
    warnings: Vec<String>,
) -> LatencyResult {
    // Both ends' usage covers the whole window, untimed blocks included.
    let per = |x: u64| x as f64 / config.window().max(1) as f64;
    LatencyResult {
        mechanism: config.mechanism.id().to_string(),
        mode: config.mode,
        size: config.size,
        cpus: config.cpus,
        placement: super::pair::Topology::read(&config.cpus).placement(config.cpus),
        count: r.count,
        warm_up: config.warm_up(),
        min: r.min,
        mean: r.mean,
        p50: r.p50,
        p90: r.p90,
        p99: r.p99,
        p999: r.p999,
        max: r.max,
        cdf: r.cdf,
        ping_cpu_ns: per(r.usage.cpu_ns),
        pong_cpu_ns: per(pong.cpu_ns),
        ping_sleeps: per(r.usage.sleeps),
        pong_sleeps: per(pong.sleeps),
        counts: Counts::of([
            ("ping", Some(&r.usage.counted())),
            ("pong", Some(&pong.counted())),
        ])
        .unwrap_or_default(),
        clock_ns: r.clock_ns,
        clock_read_ns: r.clock_read_ns,
        batch_mean_ns: r.batch_mean_ns,
        timing_overhead: if r.batch_mean_ns > 0.0 {
            r.clock_ns / r.batch_mean_ns
        } else {
            0.0
        },
        clock: r.clock,
        elapsed_ms: r.elapsed_ms,
        warnings,
    }
}

/// Makes one io_uring for the message-ring mechanism and lets go of its
/// mapping: its descriptor (close-on-exec; the launcher places it) and the
/// parameters the kernel filled in, as bytes for the end's specification.
fn message_ring(config: &LatencyConfig) -> Result<(OwnedFd, Vec<u8>), LatencyError> {
    let ring =
        io_uring::IoUring::new(8).map_err(|e| unsupported_or(config, "make an io_uring", e))?;
    // SAFETY: `Parameters` is a transparent wrapper of io_uring_params,
    // plain integers, read here as its bytes.
    let params = unsafe {
        std::slice::from_raw_parts(
            (ring.params() as *const io_uring::Parameters).cast::<u8>(),
            std::mem::size_of::<io_uring::Parameters>(),
        )
    }
    .to_vec();
    let fd = rustix::io::fcntl_dupfd_cloexec(
        // SAFETY: the ring's descriptor, open while `ring` lives.
        unsafe { std::os::fd::BorrowedFd::borrow_raw(std::os::fd::AsRawFd::as_raw_fd(&ring)) },
        0,
    )
    .map_err(|e| setup("duplicate an io_uring's descriptor")(e.into()))?;
    Ok((fd, params))
}

/// Whether this kernel lets a process make an io_uring with what the
/// mechanism needs (READ and WRITE, 5.6 and later; MSG_RING, 5.18 and later),
/// and if not, why: not built in, switched off by `kernel.io_uring_disabled`,
/// refused (a sandbox's seccomp filter), or the opcode missing.
pub(crate) fn io_uring_here(config: &LatencyConfig) -> Result<(), LatencyError> {
    let unsupported = |reason: String| LatencyError::Unsupported {
        mechanism: config.mechanism.id().to_string(),
        reason,
    };
    let ring = io_uring::IoUring::new(2).map_err(|err| {
        let disabled = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
            .ok()
            .map(|v| v.trim().to_string())
            .filter(|v| v != "0");
        unsupported(match (err.raw_os_error(), disabled) {
            (_, Some(value)) => format!(
                "io_uring is switched off (kernel.io_uring_disabled = {value}); \
                 `sysctl -w kernel.io_uring_disabled=0` turns it on"
            ),
            (Some(libc::ENOSYS), None) => "this kernel has no io_uring (5.1 and later)".into(),
            _ => format!("io_uring_setup was refused: {err}"),
        })
    })?;
    let mut probe = io_uring::register::Probe::new();
    ring.submitter()
        .register_probe(&mut probe)
        .map_err(|err| unsupported(format!("io_uring cannot say what it supports: {err}")))?;
    let needs: &[(u8, &str, &str)] = match config.mechanism {
        LatencyMechanism::IoUringMsgRing => &[(
            io_uring::opcode::MsgRingData::CODE,
            "IORING_OP_MSG_RING",
            "5.18",
        )],
        _ => &[
            (io_uring::opcode::Read::CODE, "IORING_OP_READ", "5.6"),
            (io_uring::opcode::Write::CODE, "IORING_OP_WRITE", "5.6"),
        ],
    };
    for &(code, name, since) in needs {
        if !probe.is_supported(code) {
            return Err(unsupported(format!(
                "this kernel's io_uring lacks {name} ({since} and later)"
            )));
        }
    }
    Ok(())
}

fn dup(fd: &OwnedFd) -> Result<OwnedFd, LatencyError> {
    fd.try_clone().map_err(setup("duplicate a descriptor"))
}

/// ENOSYS (and EPERM from a sandbox) mean this kernel will not do it; anything
/// else is a failure of the moment.
fn unsupported_or(config: &LatencyConfig, what: &str, err: std::io::Error) -> LatencyError {
    match err.raw_os_error() {
        Some(libc::ENOSYS) | Some(libc::EPERM) => LatencyError::Unsupported {
            mechanism: config.mechanism.id().to_string(),
            reason: format!("cannot {what}: {err}"),
        },
        _ => setup(what)(err),
    }
}

/// Opens a fresh POSIX queue for messages of the configuration's size under a
/// random name, and unlinks the name at once: the descriptor is all the ends
/// need.
fn posix_queue(config: &LatencyConfig) -> Result<OwnedFd, LatencyError> {
    let mut hex = [0u8; 16];
    rand::fill(&mut hex);
    let name: String = hex.iter().map(|b| format!("{b:02x}")).collect();
    let name = CString::new(format!("/{}{name}", crate::process::rundir::SHM_PREFIX))
        .expect("no NUL in a hex name");
    // SAFETY: mq_open with a valid name and an attr struct we own.
    let fd = unsafe {
        let mut attr: libc::mq_attr = std::mem::zeroed();
        attr.mq_maxmsg = 1;
        attr.mq_msgsize = config.size as _;
        libc::mq_open(
            name.as_ptr(),
            libc::O_CREAT | libc::O_EXCL | libc::O_RDWR | libc::O_CLOEXEC,
            0o600 as libc::mode_t,
            &attr as *const libc::mq_attr,
        )
    };
    if fd < 0 {
        let err = std::io::Error::last_os_error();
        return Err(match err.raw_os_error() {
            Some(libc::EINVAL) => LatencyError::TooLarge {
                mechanism: config.mechanism.id().to_string(),
                size: config.size,
                limit: LatencyMechanism::PosixMq.size_limit().map_or(0, |l| l.0),
                what: "/proc/sys/fs/mqueue/msgsize_max",
            },
            _ => unsupported_or(config, "open a POSIX message queue", err),
        });
    }
    // SAFETY: the name we just created.
    unsafe { libc::mq_unlink(name.as_ptr()) };
    // SAFETY: on Linux an mqd_t is a descriptor, ours alone.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::intruder::{can_listen_on, Intruder};
    use std::io::{Read, Write};

    #[test]
    fn an_intruder_that_connects_to_the_tcp_pair_first_is_refused_unread() {
        let mut intruder = None;
        let mut listener_port = 0;
        let (mut client, mut server, warning) = loopback_pair(|address| {
            listener_port = address.port();
            // As nobody, at the worst moment: listening, the client not yet
            // connected. It cannot stand in for the listener either.
            assert!(!can_listen_on(address.port()));
            intruder = Some(Intruder::connect(address, 4096));
        })
        .unwrap();
        let warning = warning.expect("the refused connection is counted");
        assert!(warning.starts_with("1 connection "), "{warning}");
        assert_eq!(server.peer_addr().unwrap(), client.local_addr().unwrap());
        // The pair is the harness's own: what the client sends, the server
        // reads, and none of the intruder's bytes.
        client.write_all(b"ping").unwrap();
        let mut got = [0u8; 4];
        server.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"ping");
        let outcome = intruder.unwrap().outcome();
        assert!(outcome.starts_with("error"), "closed unread: {outcome}");
        // Nor can it take the client's address.
        assert!(!can_listen_on(client.local_addr().unwrap().port()));
        assert_ne!(listener_port, 0);
    }
}
