//! A real program as one end of the pipe (`pipebench tool`): a tool of the
//! vetted table ([`crate::steps::tools`]) started through the one launcher, its
//! stdout (as the writer) or stdin (as the reader) the pipe, and pipebench's own
//! end on the other side, on a thread of the job, counting what moves.
//!
//! As the writer, the tool's bytes are counted as pipebench reads them (an
//! endless tool such as `yes` is cut off at the size: the pipe is closed and the
//! tool dies of SIGPIPE). As the reader, pipebench writes the size and keeps a
//! duplicate of the read end, so once the tool has exited it can ask the pipe how
//! much was left unread: what the tool took is what was written minus that.
//!
//! What the tool does per call is counted on the tool's process
//! ([`Counting::open_pid`]): context switches, faults, the kernel's events and,
//! with `trace_syscalls`, its data calls (`syscalls:sys_enter_*`). The counters
//! attach right after the start; the pipe is one page until then, so at most a
//! page's worth of the tool's calls comes before them.

pub mod report;

pub use report::{PipeCalls, ToolResult};

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rustix::io::Errno;

use crate::engine::event::{Event, Failure, Finished, Progress};
use crate::engine::observer::{JobContext, Observer, Stop, PROGRESS_INTERVAL};
use crate::process::counts::{Counted, Counting, Counts, Request};
use crate::process::launch::{Child, EndProgram, Launch, LaunchError};
use crate::process::rundir::{Base, RunDir, RunDirError};
use crate::size::gib_per_s;
use crate::steps::tools::{self, Input, Program, Tool, ToolEnd, TOOLS};

/// The least a tool run moves.
pub(crate) const MIN_BYTES: u64 = 1 << 20;
/// The most a tool run moves (the file a writer reads is this large at most).
pub const MAX_BYTES: u64 = 1 << 30;
/// What a tool run moves unless told.
pub const DEFAULT_BYTES: u64 = 256 << 20;
/// The pipe's capacity while the tool runs: a shell's pipe, the kernel's default.
pub(crate) const PIPE_CAPACITY: usize = 64 << 10;
/// The bytes per call of pipebench's own end: the article's, as its ends take them.
const OWN_CALL: usize = crate::ends::options::DEFAULT_BUF_SIZE.0 as usize;
/// The data calls counted on the tool when its calls are traced.
const TOOL_CALLS: [&str; 9] = [
    "read",
    "write",
    "readv",
    "writev",
    "splice",
    "vmsplice",
    "tee",
    "sendfile64",
    "copy_file_range",
];
/// Calls that move pages instead of copying bytes through user memory.
const ZERO_COPY_CALLS: [&str; 5] = ["splice", "vmsplice", "tee", "sendfile64", "copy_file_range"];

/// A checked request to run one tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolJob {
    /// The tool's id in the table.
    pub tool: String,
    /// Which end it is.
    pub side: ToolEnd,
    /// Bytes to move.
    pub bytes: u64,
    /// Count the tool's data calls in the kernel (slows every system call of the
    /// machine while it runs).
    pub trace_syscalls: bool,
    /// Kill the run after this long.
    pub timeout: Duration,
}

/// Why a tool run could not be done.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// No such tool in the table.
    #[error("there is no tool {name:?}; the tools here are: {}", list(present))]
    Unknown {
        /// The name asked for.
        name: String,
        /// The tools of the table installed here.
        present: Vec<String>,
    },
    /// The tool is in the table but its program is not installed.
    #[error(
        "{name} is not installed here (no {program} on PATH that only root or this user \
         could have put there{}); the tools here are: {}",
        passed_over(refused),
        list(present)
    )]
    Missing {
        /// The tool.
        name: String,
        /// Its program.
        program: String,
        /// Candidates on PATH passed over, each with why.
        refused: Vec<String>,
        /// The tools of the table installed here.
        present: Vec<String>,
    },
    /// The tool cannot be that end.
    #[error("{name} cannot be the {side} of a pipe")]
    Side {
        /// The tool.
        name: String,
        /// `writer` or `reader`.
        side: &'static str,
    },
    /// The size is out of bounds.
    #[error("--bytes {bytes} is out of range: a tool run moves {min} to {max} bytes")]
    OutOfRange {
        /// What was asked.
        bytes: u64,
        /// The least.
        min: u64,
        /// The most.
        max: u64,
    },
    /// The run's folder or file could not be made.
    #[error("cannot prepare the run's file: {0}")]
    RunDir(#[from] RunDirError),
    /// The pipe or a descriptor could not be made.
    #[error("cannot prepare the pipe: {0}")]
    Pipe(std::io::Error),
    /// The tool could not be started.
    #[error(transparent)]
    Launch(#[from] LaunchError),
    /// The tool failed, or moved fewer bytes than it had to.
    #[error("{name} as the {side}: {message}")]
    Failed {
        /// The tool.
        name: String,
        /// `writer` or `reader`.
        side: &'static str,
        /// What happened.
        message: String,
    },
}

impl ToolError {
    /// Whether the request itself was unusable (exit code 2).
    pub fn is_input_error(&self) -> bool {
        matches!(
            self,
            ToolError::Unknown { .. } | ToolError::Missing { .. } | ToolError::Side { .. }
        ) || matches!(self, ToolError::OutOfRange { .. })
    }
}

fn passed_over(refused: &[String]) -> String {
    match refused.is_empty() {
        true => String::new(),
        false => format!("; passed over: {}", refused.join("; ")),
    }
}

fn list(present: &[String]) -> String {
    match present.is_empty() {
        true => "none".into(),
        false => present.join(", "),
    }
}

/// The tools of the table whose program is here, by id.
pub fn present() -> Vec<String> {
    TOOLS
        .iter()
        .filter(|tool| locate(tool).is_some())
        .map(|tool| tool.id.to_string())
        .collect()
}

/// Where a tool's program is (`None` for pipebench's own, found by the job's
/// context; `Some(None)` when it is not installed).
fn locate(tool: &Tool) -> Option<Option<PathBuf>> {
    match tool.program {
        Program::Own => Some(None),
        Program::OnPath(name) => on_path(name).map(Some),
    }
}

/// The first executable regular file `name` in `PATH`'s folders that no
/// other user could have planted or changed (`launch::trusted_on_path`): a
/// tool the page names runs with the server's rights.
fn on_path(name: &str) -> Option<PathBuf> {
    crate::process::launch::trusted_on_path(name)
}

/// Checks a request against the table and the machine.
pub fn check(
    name: &str,
    side: ToolEnd,
    bytes: u64,
) -> Result<(&'static Tool, Option<PathBuf>), ToolError> {
    let tool = tools::find(name).ok_or_else(|| ToolError::Unknown {
        name: name.to_string(),
        present: present(),
    })?;
    if tool.usage(side).is_none() {
        return Err(ToolError::Side {
            name: name.to_string(),
            side: side.name(),
        });
    }
    if !(MIN_BYTES..=MAX_BYTES).contains(&bytes) {
        return Err(ToolError::OutOfRange {
            bytes,
            min: MIN_BYTES,
            max: MAX_BYTES,
        });
    }
    match locate(tool) {
        Some(exe) => Ok((tool, exe)),
        None => Err(ToolError::Missing {
            name: name.to_string(),
            program: tool.program_name().to_string(),
            refused: match tool.program {
                Program::OnPath(program) => crate::process::launch::lookup_on_path(program)
                    .err()
                    .unwrap_or_default()
                    .iter()
                    .map(ToString::to_string)
                    .collect(),
                Program::Own => Vec::new(),
            },
            present: present(),
        }),
    }
}

/// Runs `job`; the final event (`result` with a [`ToolResult`], `cancelled`,
/// `error`), or none when the observer went away.
pub fn run(job: &ToolJob, context: &JobContext, observer: &mut dyn Observer) -> Option<Event> {
    match measure(job, context, observer) {
        Ok(Some(result)) => Some(Event::Result(Finished::Tool(Box::new(result)))),
        Ok(None) => None,
        Err(Ended::Stopped(stop)) => match stop {
            Stop::Cancel => Some(Event::Cancelled),
            Stop::Gone => None,
            Stop::Shutdown => Some(Event::error("the server is shutting down")),
        },
        Err(Ended::Failed(err)) => Some(Event::Error(Failure {
            message: err.to_string(),
            reason: None,
        })),
    }
}

/// Runs `job` without an observer that stops it (the CLI): the result or why not.
pub fn run_to_end(job: &ToolJob, context: &JobContext) -> Result<ToolResult, ToolError> {
    struct Quiet;
    impl Observer for Quiet {
        fn event(&mut self, _: Event) {}
        fn wait(&mut self, timeout: Duration) -> Option<Stop> {
            std::thread::sleep(timeout);
            None
        }
    }
    match measure(job, context, &mut Quiet) {
        Ok(Some(result)) => Ok(result),
        Ok(None) | Err(Ended::Stopped(_)) => Err(ToolError::Failed {
            name: job.tool.clone(),
            side: job.side.name(),
            message: "the run was stopped".into(),
        }),
        Err(Ended::Failed(err)) => Err(err),
    }
}

enum Ended {
    Stopped(Stop),
    Failed(ToolError),
}

impl From<ToolError> for Ended {
    fn from(err: ToolError) -> Self {
        Ended::Failed(err)
    }
}

/// The run's private file of `bytes` bytes (text lines, as a tool would meet),
/// written now, so it is in the page cache.
fn make_file(dir: &RunDir, bytes: u64) -> Result<PathBuf, ToolError> {
    use std::io::Write;
    let mut file = dir.create_file("input")?;
    let line = b"pipebook: bytes a tool reads from the page cache and writes into a pipe\n";
    let block: Vec<u8> = line.iter().copied().cycle().take(1 << 20).collect();
    let mut left = bytes;
    while left > 0 {
        let n = left.min(block.len() as u64) as usize;
        file.write_all(&block[..n]).map_err(ToolError::Pipe)?;
        left -= n as u64;
    }
    Ok(dir.path().join("input"))
}

fn measure(
    job: &ToolJob,
    context: &JobContext,
    observer: &mut dyn Observer,
) -> Result<Option<ToolResult>, Ended> {
    let (tool, exe) = check(&job.tool, job.side, job.bytes)?;
    let usage = tool.usage(job.side).expect("checked");
    let failed = |message: String| ToolError::Failed {
        name: tool.id.to_string(),
        side: job.side.name(),
        message,
    };
    let (dir, file) = input_file(job, &usage)?;
    // A system tool runs as found; a tool of pipebench's own is its end program.
    let program = exe.map_or_else(
        || context.program.clone(),
        |exe| EndProgram {
            exe,
            prefix: Vec::new(),
        },
    );
    let args = fill_args(&usage, file.as_deref(), job.bytes);

    let (ours, theirs, spare) = open_pipe(job.side)?;
    let cpus = Cpus::allowed();
    let spare_read = Mutex::new(spare);
    // Let go of the spare read end, so pipebench's writer, blocked on a pipe
    // nobody reads any more, gets EPIPE.
    let let_go = || drop(spare_read.lock().map(|mut s| s.take()));
    let os_args: Vec<OsString> = args.iter().map(OsString::from).collect();
    let launch = Launch::program(format!("tool {}", tool.id), &program, os_args);
    let launch = connect(launch, job.side, theirs, usage.input, file.as_deref())
        .map_err(|e| failed(format!("cannot open its input: {e}")))?;
    let mut child = launch.spawn().map_err(ToolError::from)?;
    let pid = child.pid();
    let counting = watch_tool(pid, cpus.tool_pin(), job.trace_syscalls);
    let capacity =
        rustix::pipe::fcntl_setpipe_size(&ours, PIPE_CAPACITY).unwrap_or(PIPE_CAPACITY) as u64;

    let flags = Flags {
        moved: AtomicU64::new(0),
        abandon: AtomicBool::new(false),
        early: AtomicBool::new(false),
    };
    let (own, stop) = sample(
        job,
        observer,
        &mut child,
        ours,
        cpus.own_pin(),
        &flags,
        &let_go,
    );
    if let Some(stop) = stop {
        return Err(Ended::Stopped(stop));
    }
    let own = own
        .map_err(|_| failed("pipebench's end panicked".into()))?
        .map_err(|e| failed(format!("pipebench's end failed: {e}")))?;
    if flags.abandon.load(Ordering::Relaxed) {
        return Err(failed(format!(
            "it did not finish within {} s",
            job.timeout.as_secs()
        ))
        .into());
    }
    // The tool has what it gets; it ends on its own (at the end of its input, or
    // of SIGPIPE). Its counts are read before it is reaped.
    let Some((counts, status, exit)) = reap(&mut child, counting) else {
        return Err(failed("it did not exit after the pipe was done".into()).into());
    };
    let left = left_in_pipe(spare_read.lock().ok().and_then(|mut s| s.take()));
    let early = flags.early.load(Ordering::Relaxed);
    let bytes =
        moved_bytes(job, usage.endless, &own, left, early, status, &exit).map_err(failed)?;
    drop(dir);
    let (calls, counts) = tool_counts(counts, job.side, bytes);
    let elapsed_ms = own.elapsed.as_secs_f64() * 1000.0;
    Ok(Some(ToolResult {
        kind: "tool",
        tool: tool.id.to_string(),
        title: tool.title.to_string(),
        side: job.side,
        argv: std::iter::once(tool.program_name().to_string())
            .chain(args)
            .collect(),
        bytes,
        requested_bytes: job.bytes,
        elapsed_ms,
        gib_per_s: gib_per_s(bytes, elapsed_ms),
        pipe_capacity: capacity,
        cpus: [cpus.tool, cpus.own],
        exit,
        counts,
        calls,
        warnings: cpus.warnings(),
        finished_at_ms: now_ms(),
    }))
}

/// A pipe as (pipebench's end, the tool's end, a spare read end for a reading
/// tool, through which pipebench sees what it left).
fn open_pipe(side: ToolEnd) -> Result<(OwnedFd, OwnedFd, Option<OwnedFd>), ToolError> {
    let (read_end, write_end) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
        .map_err(|e| ToolError::Pipe(e.into()))?;
    // One page until the counters are on the tool: a writer that starts before
    // them gets at most a page in.
    let _ = rustix::pipe::fcntl_setpipe_size(&write_end, 4096);
    let spare = match side {
        ToolEnd::Reader => Some(
            rustix::io::fcntl_dupfd_cloexec(&read_end, 0).map_err(|e| ToolError::Pipe(e.into()))?,
        ),
        ToolEnd::Writer => None,
    };
    Ok(match side {
        ToolEnd::Writer => (read_end, write_end, spare),
        ToolEnd::Reader => (write_end, read_end, spare),
    })
}

/// Pins the started tool to its CPU and starts counting its calls.
fn watch_tool(pid: u32, cpu: Option<usize>, trace_syscalls: bool) -> Counting {
    if let Some(cpu) = cpu {
        let mut set = rustix::thread::CpuSet::new();
        set.set(cpu);
        let _ = rustix::thread::sched_setaffinity(rustix::thread::Pid::from_raw(pid as i32), &set);
    }
    let mut counting = Counting::open_pid(
        pid,
        &Request {
            calls: TOOL_CALLS.to_vec(),
            // A tool's counts are the chapter's account of it, and no article
            // figure is set against its speed.
            per_wakeup: true,
            trace_syscalls,
        },
    );
    counting.start();
    counting
}

/// Waits for the tool to end on its own (at the end of its input, or of
/// SIGPIPE), reads its counts before it is reaped, and reaps it: its counts,
/// status and status in words; none (the tool killed) when it did not exit.
fn reap(
    child: &mut Child,
    counting: Counting,
) -> Option<(Counted, Option<std::process::ExitStatus>, String)> {
    let exited = exited_by(child.pid(), Instant::now() + Duration::from_secs(10));
    let counts = counting.stop(BTreeMap::new());
    if !exited {
        child.kill();
        return None;
    }
    let _ = child.wait_until(Instant::now() + Duration::from_secs(5));
    Some((counts, child.status(), child.describe_status()))
}

/// The private file a writer reads, in a private run folder that goes with
/// the returned `RunDir`; none for a reader, or a writer that reads no file.
fn input_file(
    job: &ToolJob,
    usage: &tools::ToolInvocation,
) -> Result<(Option<RunDir>, Option<PathBuf>), ToolError> {
    let needs_file = job.side == ToolEnd::Writer
        && (usage.input == Input::File || usage.args.iter().any(|a| a.contains("{file}")));
    if !needs_file {
        return Ok((None, None));
    }
    let dir = Base::runtime()
        .and_then(|base| RunDir::create(&base))
        .map_err(ToolError::from)?;
    let file = make_file(&dir, job.bytes)?;
    Ok((Some(dir), Some(file)))
}

/// The tool's arguments, with `{file}` and `{bytes}` filled in.
fn fill_args(usage: &tools::ToolInvocation, file: Option<&Path>, bytes: u64) -> Vec<String> {
    let fill = |arg: &str| {
        let with_file = match file {
            Some(path) => arg.replace("{file}", &path.to_string_lossy()),
            None => arg.to_string(),
        };
        with_file.replace("{bytes}", &bytes.to_string())
    };
    usage.args.iter().map(|a| fill(a)).collect()
}

/// The CPUs the tool and pipebench's end run on: the first two allowed.
struct Cpus {
    tool: Option<usize>,
    own: Option<usize>,
    /// Pinning only separates them when there are two.
    two: bool,
}

impl Cpus {
    fn allowed() -> Self {
        let cpus = crate::process::cpu::allowed_cpus();
        let tool = cpus.first().copied();
        Cpus {
            tool,
            own: cpus.get(1).copied().or(tool),
            two: cpus.len() > 1,
        }
    }

    fn tool_pin(&self) -> Option<usize> {
        self.tool.filter(|_| self.two)
    }

    fn own_pin(&self) -> Option<usize> {
        self.own.filter(|_| self.two)
    }

    fn warnings(&self) -> Vec<String> {
        match self.two {
            true => Vec::new(),
            false => vec![
                "only one CPU is allowed: the tool and pipebench's end take turns on it"
                    .to_string(),
            ],
        }
    }
}

/// Puts the tool's end of the pipe on its stdout (writer) or stdin (reader);
/// a writer that reads a file gets it on stdin.
fn connect<'a>(
    launch: Launch<'a>,
    side: ToolEnd,
    theirs: OwnedFd,
    input: Input,
    file: Option<&Path>,
) -> std::io::Result<Launch<'a>> {
    Ok(match side {
        ToolEnd::Writer => {
            let launch = launch.stdout(theirs);
            match (input, file) {
                (Input::File, Some(path)) => launch.stdin(std::fs::File::open(path)?),
                _ => launch,
            }
        }
        ToolEnd::Reader => launch.stdin(theirs),
    })
}

/// What the watching thread and pipebench's end share while the tool runs.
struct Flags {
    /// Bytes pipebench's end has moved so far.
    moved: AtomicU64,
    /// Set when the run is stopped or late: pipebench's end gives up.
    abandon: AtomicBool,
    /// Set when a reading tool exited before the end.
    early: AtomicBool,
}

/// Runs pipebench's end on its own thread while this one reports progress
/// each interval; on a stop or at the deadline it kills the tool and lets go
/// of the spare read end, so pipebench's end returns.
fn sample(
    job: &ToolJob,
    observer: &mut dyn Observer,
    child: &mut Child,
    ours: OwnedFd,
    own_cpu: Option<usize>,
    flags: &Flags,
    let_go: &dyn Fn(),
) -> (std::thread::Result<Result<OwnEnd, Errno>>, Option<Stop>) {
    let pid = child.pid();
    let deadline = Instant::now() + job.timeout;
    std::thread::scope(|scope| {
        let own = scope.spawn(|| {
            if let Some(cpu) = own_cpu {
                let _ = crate::process::cpu::pin_to(cpu);
            }
            own_end(job.side, ours, job.bytes, &flags.moved, &flags.abandon)
        });
        let started = Instant::now();
        let mut last = (started, 0u64);
        let mut stop = None;
        while !own.is_finished() {
            let now = Instant::now();
            let bytes = flags.moved.load(Ordering::Relaxed);
            observer.event(Event::Progress(Progress {
                bytes,
                elapsed_ms: now.duration_since(started).as_secs_f64() * 1000.0,
                gib_per_s: gib_per_s(
                    bytes.saturating_sub(last.1),
                    now.duration_since(last.0).as_secs_f64() * 1000.0,
                ),
                pipe_bytes: None,
            }));
            last = (now, bytes);
            stop = observer.wait(PROGRESS_INTERVAL);
            if stop.is_some() || Instant::now() >= deadline {
                // The tool dies, so pipebench's end sees the end of the pipe.
                flags.abandon.store(true, Ordering::Relaxed);
                child.kill();
                let_go();
                break;
            }
            if job.side == ToolEnd::Reader && exited_by(pid, Instant::now()) {
                // The reader quit before the end: nothing will take the rest.
                flags.early.store(true, Ordering::Relaxed);
                let_go();
            }
        }
        (own.join(), stop)
    })
}

/// The bytes the tool moved (for a reader, what pipebench wrote less what it
/// left in the pipe), or why the run does not count.
fn moved_bytes(
    job: &ToolJob,
    endless: bool,
    own: &OwnEnd,
    left: u64,
    early: bool,
    status: Option<std::process::ExitStatus>,
    exit: &str,
) -> Result<u64, String> {
    if early && own.bytes < job.bytes {
        return Err(format!(
            "it ended ({exit}) before it had read the {} bytes",
            job.bytes
        ));
    }
    let bytes = match job.side {
        ToolEnd::Writer => own.bytes,
        // What the tool took: written minus what it left in the pipe.
        ToolEnd::Reader => own.bytes.saturating_sub(left),
    };
    let clean_exit = status.is_some_and(|s| s.success());
    if !endless && !clean_exit {
        return Err(format!("it ended with {exit}"));
    }
    if bytes != job.bytes {
        return Err(format!(
            "{bytes} bytes went through the pipe, not {}",
            job.bytes
        ));
    }
    Ok(bytes)
}

/// Bytes still in the pipe, read through the spare read end (closed here).
fn left_in_pipe(spare: Option<OwnedFd>) -> u64 {
    spare
        .as_ref()
        .map(|fd| rustix::io::ioctl_fionread(fd.as_fd()).unwrap_or(0))
        .unwrap_or(0)
}

/// The tool's pipe calls and its counts keyed by its end, as results carry them.
fn tool_counts(counts: Counted, side: ToolEnd, bytes: u64) -> (Option<PipeCalls>, Counts) {
    let calls = pipe_calls(&counts, side, bytes);
    // The tool's calls by kind are the kernel's count of them (it cannot count
    // its own); untraced, they stay empty and `missing` says why.
    let mut counts = counts;
    if let Some(traced) = &counts.counts.syscalls_traced {
        counts.counts.syscalls = traced.clone();
    }
    // Keyed by the tool's end as the result names it, like every result's counts.
    let counts = Counts::of([(side.name(), Some(&counts))]).unwrap_or_default();
    (calls, counts)
}

/// The tool's calls on its side of the pipe, from its traced counts.
fn pipe_calls(counts: &Counted, side: ToolEnd, bytes: u64) -> Option<PipeCalls> {
    let traced = counts.counts.syscalls_traced.as_ref()?;
    let get = |call: &str| traced.get(call).copied().unwrap_or(0);
    let plain = match side {
        ToolEnd::Writer => get("write") + get("writev"),
        ToolEnd::Reader => get("read") + get("readv"),
    };
    let zero_copy: u64 = ZERO_COPY_CALLS.iter().map(|c| get(c)).sum();
    let on_pipe = plain + zero_copy;
    Some(PipeCalls {
        on_pipe,
        bytes_per_call: (on_pipe > 0).then(|| bytes as f64 / on_pipe as f64),
        zero_copy: zero_copy > 0,
    })
}

/// What pipebench's end did.
struct OwnEnd {
    bytes: u64,
    elapsed: Duration,
}

/// pipebench's end: reads up to `size` bytes (or to the end of the pipe), or
/// writes `size` bytes, in the article's 256 KiB calls; closes its end on return.
fn own_end(
    side: ToolEnd,
    fd: OwnedFd,
    size: u64,
    moved: &AtomicU64,
    abandon: &AtomicBool,
) -> Result<OwnEnd, Errno> {
    let mut buffer = vec![b'p'; OWN_CALL];
    let mut done = 0u64;
    let mut first: Option<Instant> = None;
    while done < size && !abandon.load(Ordering::Relaxed) {
        let want = (size - done).min(OWN_CALL as u64) as usize;
        let n = match side {
            ToolEnd::Writer => rustix::io::read(&fd, &mut buffer[..want]),
            ToolEnd::Reader => rustix::io::write(&fd, &buffer[..want]),
        };
        match n {
            Ok(0) => break,
            Ok(n) => {
                first.get_or_insert_with(Instant::now);
                done += n as u64;
                moved.store(done, Ordering::Relaxed);
            }
            Err(Errno::INTR) => {}
            // The tool closed its end early (it exited): what went through is counted.
            Err(Errno::PIPE) => break,
            Err(e) => return Err(e),
        }
    }
    let elapsed = first.map(|f| f.elapsed()).unwrap_or_default();
    drop(fd);
    Ok(OwnEnd {
        bytes: done,
        elapsed,
    })
}

/// Waits until process `pid` (our child) has exited, without reaping it, at
/// most until `deadline`; whether it did.
fn exited_by(pid: u32, deadline: Instant) -> bool {
    loop {
        // SAFETY: waitid fills the siginfo we pass; WNOWAIT leaves the child to
        // be reaped by its `Child`.
        let exited = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let rc = libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            );
            rc == 0 && info.si_pid() != 0
        };
        if exited {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
