//! A job's one life: plan → start → observe → cancel → finish.
//!
//! Every kind of measurement is a [`Job`]: a pipe step (watched for occupancy,
//! profiled with perf, as asked), a run of an IPC mechanism, the wakeup probe, the
//! page inspector. [`Job::run`] starts it on the calling thread, reports what
//! happens to an [`Observer`] as [`Event`]s, asks the observer between samples
//! whether to stop, and returns the final event once everything it started is dead
//! and reaped. The CLI's observer draws a progress bar; the server's sends the
//! events to the page. A sweep is a job of jobs ([`crate::engine::sweep`]).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::ends::options::WriterOptions;
use crate::engine::event::{
    Event, Failure, Finished, IpcEffective, LatencyProgress, Progress, Started,
};
pub use crate::engine::observer::{JobContext, Observer, Stop, PROGRESS_INTERVAL, QUIET_INTERVAL};
pub use crate::engine::pipe_job::PipeJob;
use crate::engine::result::{IpcRecord, LatencyRecord, LatencyTag, RecordKind};
use crate::ipc::{self, IpcError, IpcParams};
use crate::latency::{self, LatencyConfig, LatencyError};
use crate::machine::{findings, system::SystemInfo, wakeup};
use crate::memory::inspect;
use crate::size::{gib_per_s, ByteSize};

/// Something to measure.
#[derive(Debug, Clone)]
pub enum Job {
    /// Two pinned ends of a pipe step (boxed: a plan carries both ends' options
    /// and dwarfs the other kinds).
    Pipe(Box<PipeJob>),
    /// A producer and a consumer (or one process) of the IPC lab.
    Ipc(IpcJob),
    /// The blocking and busy ping-pong of `pipebench wakeup`.
    Wakeup {
        /// Round trips per mode.
        round_trips: u32,
    },
    /// The page inspector on a step's writer buffers (memory pages; its event on
    /// the wire is `pages`).
    Inspect(InspectJob),
    /// One configuration of the latency lab: round trips of one message between
    /// two pinned ends.
    Latency(LatencyConfig),
    /// A real program (`yes`, `cat`, `dd`, ...) as one end of a pipe, pipebench's
    /// own end on the other ([`crate::engine::tool`]).
    Tool(crate::engine::tool::ToolJob),
    /// W writers and R readers on one pipe, over counts and message sizes
    /// ([`crate::engine::shared_pipe`]).
    SharedPipe(crate::engine::shared_pipe::SharedPipeJob),
    /// A search of bytes per call × pipe capacity for one step, a job of pipe
    /// jobs ([`crate::engine::tune`]).
    Tune(crate::engine::tune::TuneJob),
}

/// A checked run of one IPC mechanism.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IpcJob {
    /// The mechanism.
    pub mechanism: ipc::Mechanism,
    /// Bytes to move.
    pub bytes: u64,
    /// Bytes per call, as the lab will use it.
    pub chunk: u64,
    /// Kill the run after this long.
    pub timeout: Duration,
    /// Leave the kernel's events uncounted in the ends (as `pipebench ipc
    /// --no-counts`): calls, faults and context switches are still counted.
    pub no_counts: bool,
    /// Not watched: no `progress` while it runs and the job's thread looks at
    /// it only every [`QUIET_INTERVAL`], so a comparison charges no watching to
    /// it; its record says `watched: false`.
    pub quiet: bool,
}

/// The page inspector's request.
#[derive(Debug, Clone)]
pub struct InspectJob {
    /// Step id, for the answer.
    pub step: String,
    /// The writer options whose buffers to look at.
    pub writer: Box<WriterOptions>,
}

impl Job {
    /// Runs the job to its end on this thread (its children die with the thread);
    /// returns the final event, or `None` when the observer went away.
    pub fn run(&self, context: &JobContext, observer: &mut dyn Observer) -> Option<Event> {
        match self {
            Job::Pipe(job) => job.run(context, observer),
            Job::Ipc(job) => run_ipc(job, context, observer),
            Job::Wakeup { round_trips } => Some(measure_wakeup(*round_trips, context)),
            Job::Inspect(job) => Some(inspect_pages(job, context)),
            Job::Latency(config) => run_latency(config, context, observer),
            Job::Tool(job) => crate::engine::tool::run(job, context, observer),
            Job::SharedPipe(job) => crate::engine::shared_pipe::run(job, context, observer),
            Job::Tune(job) => crate::engine::tune::run(job, context, observer),
        }
    }

    /// Whether its result is a figure for the history: a profiled run was paused
    /// while perf attached and shares the CPUs with it, so it is not.
    pub fn is_clean_measurement(&self) -> bool {
        !matches!(self, Job::Pipe(job) if job.plan.profile)
    }

    /// Why its result does not go into the results history, when it does not: a
    /// profiled run is no clean figure, and the history holds pipe steps and IPC
    /// runs only (a tool run's result is the page's to show).
    pub fn not_kept_because(&self) -> Option<&'static str> {
        match self {
            Job::Pipe(job) if job.plan.profile => Some(
                "a profiled run is not kept in the history: its ends were paused while \
                 perf attached, so its figure is not a clean one",
            ),
            Job::Tool(_) => {
                Some("a tool run is not kept in the history, which holds pipe steps and IPC runs")
            }
            Job::Tune(_) => Some(
                "a tuning search is not kept in the history, which holds pipe steps and IPC \
                 runs: run its best configuration (tuned-STEP) and that result is kept",
            ),
            Job::SharedPipe(_) => Some(
                "a shared-pipe sweep is not kept in the history, which holds pipe steps and \
                 IPC runs",
            ),
            _ => None,
        }
    }
}

/// Runs one mechanism of the IPC lab. The lab's harness blocks until its ends are
/// reaped, so it runs on a scoped thread (which lives until the harness returns,
/// as `PR_SET_PDEATHSIG` requires), while this thread samples the receiving end's
/// byte count and turns a stop into the harness's cancel flag; the harness then
/// kills its ends and removes every resource before it returns.
fn run_ipc(job: &IpcJob, context: &JobContext, observer: &mut dyn Observer) -> Option<Event> {
    let cancel = Arc::new(AtomicBool::new(false));
    let received = Arc::new(AtomicU64::new(0));
    let params = IpcParams {
        bytes: ByteSize(job.bytes),
        chunk: Some(ByteSize(job.chunk)),
        dir: None,
        port: None,
        timeout: job.timeout,
        cancel: Some(Arc::clone(&cancel)),
        program: Some(context.program.clone()),
        // A quiet run publishes nothing: nobody reads the count.
        progress: (!job.quiet).then(|| Arc::clone(&received)),
        no_counts: job.no_counts,
    };
    observer.event(Event::Started(Started::Ipc {
        kind: RecordKind::Ipc,
        mechanism: job.mechanism.id().to_string(),
        params: IpcEffective {
            bytes: job.bytes,
            chunk: job.chunk,
        },
    }));
    let (outcome, stop) = std::thread::scope(|scope| {
        let harness = std::thread::Builder::new()
            .name(format!("ipc-{}", job.mechanism))
            .spawn_scoped(scope, || ipc::run(job.mechanism, &params));
        let harness = match harness {
            Ok(harness) => harness,
            Err(err) => {
                return (
                    Err(Event::error(format!(
                        "cannot start the run's thread: {err}"
                    ))),
                    None,
                )
            }
        };
        let mut stop = None;
        let started = Instant::now();
        let mut last = (started, 0u64);
        let interval = if job.quiet {
            QUIET_INTERVAL
        } else {
            PROGRESS_INTERVAL
        };
        while !harness.is_finished() {
            if !job.quiet {
                let now = Instant::now();
                let bytes = received.load(Ordering::Relaxed);
                let window_ms = now.duration_since(last.0).as_secs_f64() * 1000.0;
                observer.event(Event::Progress(Progress {
                    bytes,
                    elapsed_ms: now.duration_since(started).as_secs_f64() * 1000.0,
                    gib_per_s: gib_per_s(bytes.saturating_sub(last.1), window_ms),
                    pipe_bytes: None,
                }));
                last = (now, bytes);
            }
            stop = observer.wait(interval);
            if stop.is_some() {
                cancel.store(true, Ordering::Relaxed);
                break;
            }
        }
        let outcome = harness
            .join()
            .map_err(|_| Event::error("the IPC run's thread panicked"));
        (outcome, stop)
    });
    match (outcome, stop) {
        (Err(event), _) => Some(event),
        (Ok(Ok(result)), _) => {
            let mut record = IpcRecord::now(result);
            record.watched = Some(!job.quiet);
            Some(Event::Result(Finished::Ipc(Box::new(record))))
        }
        (Ok(Err(IpcError::Cancelled)), stop) => stop.unwrap_or(Stop::Cancel).final_event(),
        (Ok(Err(err)), _) => Some(Event::Error(Failure::from(&err))),
    }
}

/// The page inspector as a child (`inspect-pages`): its buffers live and die in
/// their own process, as the writer's do. It takes well under a second, so the
/// thread simply waits for it.
fn inspect_pages(job: &InspectJob, context: &JobContext) -> Event {
    match inspect::run_child(&context.program, &job.writer, inspect::CHILD_TIMEOUT) {
        Ok(report) => Event::Pages {
            step: job.step.clone(),
            touch: !job.writer.dont_touch_pages,
            report: Box::new(report),
        },
        Err(err) => Event::error(err.to_string()),
    }
}

/// The wakeup ping-pong on this thread, and the machine's findings with its
/// figures. A probe takes a second or two and is not cancellable midway; each mode
/// stops by itself within its time limit.
fn measure_wakeup(round_trips: u32, context: &JobContext) -> Event {
    match wakeup::measure(&context.program, None, round_trips) {
        Ok(wakeup) => {
            let info = SystemInfo::probe();
            let findings = findings::findings(&info, Some(&wakeup));
            Event::Wakeup { wakeup, findings }
        }
        Err(err) => Event::error(err.to_string()),
    }
}

/// One latency configuration. The harness starts both ends from this thread
/// (they die with it) and calls back every 50 ms: each call is a progress event
/// and a chance to stop, which kills both ends before the harness returns.
fn run_latency(
    config: &LatencyConfig,
    context: &JobContext,
    observer: &mut dyn Observer,
) -> Option<Event> {
    observer.event(Event::Started(Started::Latency {
        kind: LatencyTag::Latency,
        mechanism: config.mechanism.id().to_string(),
        mode: config.mode,
        size: config.size,
        cpus: config.cpus,
        round_trips: config.round_trips,
    }));
    // No stepping aside here: the ends are started inside the harness and
    // inherit this thread's CPUs, and they must be free to pin themselves. The
    // harness sleeps 50 ms between looks, which costs the ends nothing.
    let mut stop = None;
    let outcome = latency::run(config, &context.program, |sample| {
        observer.event(Event::LatencyProgress(LatencyProgress {
            done: sample.done,
            of: sample.of,
            buckets: sample.buckets,
        }));
        stop = observer.wait(Duration::ZERO);
        stop.is_some()
    });
    match outcome {
        Ok(result) => Some(Event::Result(Finished::Latency(Box::new(
            LatencyRecord::now(result),
        )))),
        Err(LatencyError::Cancelled) => stop.unwrap_or(Stop::Cancel).final_event(),
        Err(err) => Some(Event::Error(Failure::from(&err))),
    }
}
