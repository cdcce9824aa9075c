//! A job's one life: plan → start → observe → cancel → finish.
//!
//! Every kind of measurement is a [`Job`], one variant per kind, each run by its
//! own module of the engine: a pipe step ([`crate::engine::pipe_job`]: watched
//! for occupancy, profiled with perf, as asked), a run of an IPC mechanism
//! ([`crate::engine::ipc`]), the wakeup probe ([`crate::engine::wakeup`]), the behaviour probes
//! ([`crate::engine::probe`]), the page
//! inspector ([`crate::engine::pages`]), a latency configuration
//! ([`crate::engine::latency`]), a tool run ([`crate::engine::tool`]), a shared
//! pipe ([`crate::engine::shared_pipe`]) and a tuning search
//! ([`crate::engine::tune`]). [`Job::run`] starts it on the calling thread, reports what
//! happens to an [`Observer`] as [`Event`]s, asks the observer between samples
//! whether to stop, and returns the final event once everything it started is dead
//! and reaped. The CLI's observer draws a progress bar; the server's sends the
//! events to the page. A sweep is a job of jobs ([`crate::engine::sweep`]).

use crate::engine::event::Event;
use crate::engine::ipc::IpcJob;
pub use crate::engine::observer::{JobContext, Observer, Stop, PROGRESS_INTERVAL, QUIET_INTERVAL};
use crate::engine::pages::PagesJob;
pub use crate::engine::pipe_job::PipeJob;
use crate::latency::LatencyConfig;

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
    /// The behaviour probes, asked again ([`crate::engine::probe`]; its event on
    /// the wire is `behaviour`).
    Probe,
    /// The page inspector on a step's writer buffers (memory pages; its event on
    /// the wire is `pages`).
    Pages(PagesJob),
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

impl Job {
    /// Runs the job to its end on this thread (its children die with the thread);
    /// returns the final event, or `None` when the observer went away.
    pub fn run(&self, context: &JobContext, observer: &mut dyn Observer) -> Option<Event> {
        match self {
            Job::Pipe(job) => job.run(context, observer),
            Job::Ipc(job) => crate::engine::ipc::run(job, context, observer),
            Job::Wakeup { round_trips } => Some(crate::engine::wakeup::run(*round_trips, context)),
            Job::Pages(job) => Some(crate::engine::pages::run(job, context)),
            Job::Probe => Some(crate::engine::probe::run()),
            Job::Latency(config) => crate::engine::latency::run(config, context, observer),
            Job::Tool(job) => crate::engine::tool::run(job, context, observer),
            Job::SharedPipe(job) => crate::engine::shared_pipe::run(job, context, observer),
            Job::Tune(job) => crate::engine::tune::run(job, context, observer),
        }
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
