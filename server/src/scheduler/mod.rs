//! One run at a time, machine-wide; the others wait in a bounded FIFO queue.
//!
//! Benchmarks pin both ends to CPUs, so two runs at once would measure each
//! other. A connection [`Scheduler::submit`]s a plan and gets a [`Ticket`] plus a
//! channel of [`RunEvent`]s for that run. This module owns a run's whole life: the
//! queue, the run's own thread ([`worker`]) and its cancellation; what the events
//! look like on the wire is the connection's business ([`crate::protocol`]). When a
//! run ends its thread starts the next one in line. Dropping a ticket (the page
//! went away) cancels the run, whether it is waiting or running.

mod worker;

use std::collections::VecDeque;
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use pipebench::error::EndErrorKind;
use pipebench::findings::Finding;
use pipebench::inspect::PagesReport;
use pipebench::ipc::{IpcError, IpcErrorKind};
use pipebench::options::WriterOptions;
use pipebench::plan::RunPlan;
use pipebench::profile::{ProfileError, ProfileReport};
use pipebench::report::RunResult;
use pipebench::runner::{EndProgram, Progress, RunError};
use pipebench::wakeup::WakeupFigures;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use crate::history::History;
use crate::ipc::{IpcRecord, IpcRequest};
use crate::shutdown::Shutdown;
use crate::statefile::SaveError;

/// What the scheduler runs: a pipe step, or a mechanism of the IPC lab. Both take
/// the machine for themselves, so both wait in the one queue.
#[derive(Debug, Clone)]
pub enum Work {
    /// Two pinned ends of a pipe step (boxed: a plan carries both ends' options and
    /// dwarfs the other kinds of work).
    Pipe(Box<RunPlan>),
    /// A producer and a consumer (or one process) of the IPC lab.
    Ipc(IpcRequest),
    /// The blocking and busy ping-pong of `pipebench wakeup`: a probe, queued like
    /// a run so it never runs beside a benchmark.
    Wakeup,
    /// The page inspector on a step's writer buffers: it faults in megabytes of
    /// memory and would disturb a benchmark, so it waits its turn too.
    Pages {
        /// Step id, for the answer.
        step: String,
        /// The writer options whose buffers to look at.
        writer: Box<WriterOptions>,
    },
}

impl From<RunPlan> for Work {
    fn from(plan: RunPlan) -> Self {
        Work::Pipe(Box::new(plan))
    }
}

impl From<IpcRequest> for Work {
    fn from(request: IpcRequest) -> Self {
        Work::Ipc(request)
    }
}

/// What happens to a run, in order: at most one `Queued` per change of place,
/// `Started` (or `IpcStarted`), `Progress` samples (pipe runs only), and exactly
/// one of `Finished`, `IpcFinished`, `Cancelled` or `Failed` at the end; a
/// `Finished` or `IpcFinished` is followed by one `Saved` once the history has
/// it (or could not take it).
#[derive(Debug, Clone)]
pub enum RunEvent {
    /// Waiting; 1 means next.
    Queued {
        /// Place in the queue, from 1.
        position: usize,
    },
    /// Both ends are running.
    Started {
        /// The plan in force.
        plan: Box<RunPlan>,
        /// Writer and reader process ids.
        pids: [u32; 2],
    },
    /// An IPC lab run is starting its ends.
    IpcStarted(Box<IpcRequest>),
    /// A progress sample.
    Progress(Progress),
    /// A profiled run's profile (sent just before `Finished`), or why there is none.
    Profile(Box<Result<ProfileReport, ProfileError>>),
    /// The run finished with this result.
    Finished(Box<RunResult>),
    /// An IPC lab run finished with this result.
    IpcFinished(Box<IpcRecord>),
    /// A wakeup measurement finished: its figures and the findings with them.
    Measured(Box<WakeupReport>),
    /// A page inspection finished with this report.
    Pages(Box<PagesDone>),
    /// The run was cancelled.
    Cancelled,
    /// The run failed.
    Failed(RunFailure),
    /// After `Finished` or `IpcFinished` (never before): whether the result
    /// is in the history, or why not (a profiled run's is never kept).
    Saved(Result<(), SaveError>),
}

impl RunEvent {
    /// Whether nothing more will come for this run.
    pub fn is_final(&self) -> bool {
        matches!(
            self,
            RunEvent::Finished(_)
                | RunEvent::IpcFinished(_)
                | RunEvent::Measured(_)
                | RunEvent::Pages(_)
                | RunEvent::Cancelled
                | RunEvent::Failed(_)
        )
    }
}

/// Why a run failed: a sentence, and its typed cause when there is one (so the
/// page can explain it without reading the sentence).
#[derive(Debug, Clone, PartialEq)]
pub struct RunFailure {
    /// What happened and what to do.
    pub message: String,
    /// What failed, when the run itself did.
    pub cause: Option<FailureCause>,
}

/// The typed part of a [`RunFailure`].
#[derive(Debug, Clone, PartialEq)]
pub enum FailureCause {
    /// An end of a pipe run failed: `writer` or `reader`, and how.
    End(&'static str, EndErrorKind),
    /// An IPC lab run failed or was refused: the kind of [`IpcError`], and the
    /// end (`producer`, `consumer`, `solo`) when one failed.
    Ipc(IpcErrorKind, Option<String>),
}

impl RunFailure {
    /// A failure that is no end's fault (the server stopping, a lost thread).
    pub fn other(message: impl Into<String>) -> Self {
        RunFailure {
            message: message.into(),
            cause: None,
        }
    }
}

impl From<&RunError> for RunFailure {
    fn from(err: &RunError) -> Self {
        RunFailure {
            message: err.to_string(),
            cause: err
                .end_failure()
                .map(|(role, failure)| FailureCause::End(role, failure.kind)),
        }
    }
}

impl From<&IpcError> for RunFailure {
    fn from(err: &IpcError) -> Self {
        RunFailure {
            message: err.to_string(),
            cause: Some(FailureCause::Ipc(
                err.kind(),
                err.role().map(str::to_string),
            )),
        }
    }
}

/// A finished page inspection: what was asked and the report.
#[derive(Debug, Clone)]
pub struct PagesDone {
    /// Step id.
    pub step: String,
    /// Whether the buffers were written before the look.
    pub touch: bool,
    /// The inspector's report.
    pub report: Box<PagesReport>,
}

/// Why a run was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubmitError {
    /// The queue is full.
    #[error("busy: {waiting} runs are already waiting; try again in a moment")]
    Busy {
        /// How many are waiting.
        waiting: usize,
    },
    /// The server is stopping.
    #[error("the server is shutting down")]
    ShuttingDown,
}

/// A wakeup measurement's outcome, as the page gets it.
#[derive(Debug, Clone, PartialEq)]
pub struct WakeupReport {
    /// The round trips.
    pub wakeup: WakeupFigures,
    /// The machine's findings, the wakeup's cost among them.
    pub findings: Vec<Finding>,
}

/// A run waiting for its turn, or being handed to its thread.
pub(crate) struct Job {
    /// Scheduler-wide id.
    pub id: u64,
    /// What to run.
    pub work: Work,
    /// Where to send messages for the page.
    pub events: UnboundedSender<RunEvent>,
    /// Receives `()` on cancel; disconnects when the ticket is dropped.
    pub stop: std_mpsc::Receiver<()>,
}

impl Job {
    /// Sends an event to the connection; a page that went away is not an error.
    pub(crate) fn send(&self, message: RunEvent) {
        let _ = self.events.send(message);
    }
}

#[derive(Default)]
struct State {
    next_id: u64,
    running: Option<u64>,
    waiting: VecDeque<Job>,
    /// Results sent to their page but not yet in the history: shutdown waits
    /// for them, so a result a page saw is never lost.
    saving: usize,
}

/// What the run threads share with the scheduler.
pub(crate) struct Shared {
    state: Mutex<State>,
    /// How the ends are started.
    pub program: EndProgram,
    /// Where results go.
    pub history: Arc<History>,
    /// The server's stop switch: once on, running threads kill their run.
    pub shutdown: Shutdown,
    max_waiting: usize,
}

/// The machine-wide run queue. Cheap to clone.
#[derive(Clone)]
pub struct Scheduler {
    shared: Arc<Shared>,
}

/// A submitted run. Dropping it cancels the run.
pub struct Ticket {
    id: u64,
    shared: Arc<Shared>,
    stop: std_mpsc::Sender<()>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere must not wedge the queue for everyone.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Called by a run thread when its run is over: start the next one.
    /// With `saving`, the run's result is still to be saved (call [`Self::saved`]
    /// after), and shutdown waits for it.
    pub(crate) fn finished_saving(self: &Arc<Self>, id: u64, saving: bool) {
        let mut state = self.lock();
        if state.running == Some(id) {
            state.running = None;
        }
        if saving {
            state.saving += 1;
        }
        self.start_next(&mut state);
    }

    /// A result announced by [`Self::finished_saving`] is in the history.
    pub(crate) fn saved(&self) {
        let mut state = self.lock();
        state.saving = state.saving.saturating_sub(1);
    }

    fn start_next(self: &Arc<Self>, state: &mut State) {
        while state.running.is_none() && !self.shutdown.is_triggered() {
            let Some(job) = state.waiting.pop_front() else {
                return;
            };
            announce_positions(state);
            let id = job.id;
            state.running = Some(id);
            let shared = Arc::clone(self);
            // The thread owns the run from start to reaping: PR_SET_PDEATHSIG ties
            // the children's lives to the thread that spawned them.
            let spawned = std::thread::Builder::new()
                .name(format!("run-{id}"))
                .spawn(move || worker::run(&shared, job));
            if let Err(err) = spawned {
                tracing::error!("cannot start a run thread: {err}");
                state.running = None;
            }
        }
    }
}

fn announce_positions(state: &State) {
    for (index, job) in state.waiting.iter().enumerate() {
        job.send(RunEvent::Queued {
            position: index + 1,
        });
    }
}

impl Scheduler {
    /// A scheduler that starts ends with `program`, saves results to `history`,
    /// lets at most `max_waiting` runs wait, and stops when `shutdown` is on.
    pub fn new(
        program: EndProgram,
        history: Arc<History>,
        max_waiting: usize,
        shutdown: Shutdown,
    ) -> Scheduler {
        Scheduler {
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                program,
                history,
                shutdown,
                max_waiting,
            }),
        }
    }

    /// Queues `work` (a [`RunPlan`] or an [`IpcRequest`]), or starts it if
    /// nothing runs.
    pub fn submit(
        &self,
        work: impl Into<Work>,
    ) -> Result<(Ticket, UnboundedReceiver<RunEvent>), SubmitError> {
        let work = work.into();
        if self.shared.shutdown.is_triggered() {
            return Err(SubmitError::ShuttingDown);
        }
        let mut state = self.shared.lock();
        let busy = state.running.is_some() || !state.waiting.is_empty();
        if busy && state.waiting.len() >= self.shared.max_waiting {
            return Err(SubmitError::Busy {
                waiting: state.waiting.len(),
            });
        }
        state.next_id += 1;
        let id = state.next_id;
        let (events, receiver) = unbounded_channel();
        let (stop_sender, stop) = std_mpsc::channel();
        let job = Job {
            id,
            work,
            events,
            stop,
        };
        if busy {
            job.send(RunEvent::Queued {
                position: state.waiting.len() + 1,
            });
        }
        state.waiting.push_back(job);
        self.shared.start_next(&mut state);
        let ticket = Ticket {
            id,
            shared: Arc::clone(&self.shared),
            stop: stop_sender,
        };
        Ok((ticket, receiver))
    }

    /// Whether a run is going, and how many wait.
    pub fn status(&self) -> (bool, usize) {
        let state = self.shared.lock();
        (state.running.is_some(), state.waiting.len())
    }

    /// Turns the stop switch on (refusing new runs), fails the waiting runs, and
    /// waits up to `timeout` for the running one's thread to kill and reap its
    /// children.
    pub async fn shutdown(&self, timeout: Duration) {
        self.shared.shutdown.trigger();
        {
            let mut state = self.shared.lock();
            for job in state.waiting.drain(..) {
                job.send(RunEvent::Failed(RunFailure::other(
                    "the server is shutting down",
                )));
            }
        }
        let deadline = Instant::now() + timeout;
        let busy = || {
            let state = self.shared.lock();
            state.running.is_some() || state.saving > 0
        };
        while busy() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

impl Ticket {
    /// The run's id, unique in this server: pages get it as `"run"`.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Cancels the run: a waiting one leaves the queue, a running one is killed.
    /// Either way the page gets `cancelled` through the run's channel.
    pub fn cancel(&self) {
        if let Some(job) = self.leave_queue() {
            job.send(RunEvent::Cancelled);
        } else {
            // Running (or about to): its thread checks this channel every 50 ms.
            let _ = self.stop.send(());
        }
    }

    fn leave_queue(&self) -> Option<Job> {
        let mut state = self.shared.lock();
        let index = state.waiting.iter().position(|job| job.id == self.id)?;
        let job = state.waiting.remove(index);
        announce_positions(&state);
        job
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        // Waiting: leave the queue. Running: dropping `stop` disconnects the
        // thread's channel, which it takes as "kill the run".
        self.leave_queue();
    }
}
