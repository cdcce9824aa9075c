//! One run at a time, machine-wide; the others wait in a bounded FIFO queue.
//!
//! Benchmarks pin both ends to CPUs, so two runs at once would measure each
//! other. A connection [`Scheduler::submit`]s a [`Job`] and gets a [`Ticket`] plus a
//! channel of the job's [`Update`]s (its events, then whether its result was saved). This module owns the queue, the job's own
//! thread ([`worker`], which drives the engine's one job life) and its
//! cancellation; the events go on the wire as they are. When a job ends its thread
//! starts the next one in line. Dropping a ticket (the page went away) cancels the
//! job, whether it is waiting or running.

mod worker;

use std::collections::VecDeque;
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use pipebench::engine::event::Event;
use pipebench::engine::job::Job;
use pipebench::process::launch::EndProgram;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use crate::shutdown::Shutdown;
use crate::store::saving::{Keep, Reply, Stores};

/// Why a run was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SubmitError {
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

/// A job waiting for its turn, or being handed to its thread.
pub(crate) struct Entry {
    /// Scheduler-wide id.
    pub(crate) id: u64,
    /// What to run.
    pub(crate) job: Job,
    /// What its result is kept for besides the history (a lab task).
    pub(crate) keep: Keep,
    /// Where to send the job's events for the page.
    pub(crate) events: UnboundedSender<Update>,
    /// Receives `()` on cancel; disconnects when the ticket is dropped.
    pub(crate) stop: std_mpsc::Receiver<()>,
}

/// What a job's thread tells its page, in order: the engine's events, and
/// after a result (never before) its `Saved`s ([`crate::store::saving`]): the lab's
/// and the tuned store's when it has them, then exactly one for the history,
/// whether it has the result or why not.
#[derive(Debug)]
pub(crate) enum Update {
    /// An event of the job, as the engine said it.
    Event(Event),
    /// Whether a store has what the job left (a profiled run's result is
    /// never in the history).
    Saved(Reply),
}

impl Entry {
    /// Sends an event to the connection; a page that went away is not an error.
    pub(crate) fn send(&self, event: Event) {
        let _ = self.events.send(Update::Event(event));
    }

    /// Tells the connection whether a store has what the job left.
    pub(crate) fn saved(&self, reply: Reply) {
        let _ = self.events.send(Update::Saved(reply));
    }
}

#[derive(Default)]
struct State {
    next_id: u64,
    running: Option<u64>,
    waiting: VecDeque<Entry>,
    /// Finished jobs whose records are still being saved: shutdown waits
    /// for them, so a result a page saw is never lost.
    saving: usize,
}

/// What the run threads share with the scheduler.
pub(crate) struct Shared {
    state: Mutex<State>,
    /// How the ends are started.
    pub(crate) program: EndProgram,
    /// Where a finished job's records go.
    pub(crate) stores: Stores,
    /// The server's stop switch: once on, running threads kill their run.
    pub(crate) shutdown: Shutdown,
    max_waiting: usize,
}

/// The machine-wide run queue. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Scheduler {
    shared: Arc<Shared>,
}

/// A submitted run. Dropping it cancels the run.
pub(crate) struct Ticket {
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
    /// With `saving`, what the run left is still to be saved (call
    /// [`Self::saved`] after), and shutdown waits for it.
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

    /// The saves announced by [`Self::finished_saving`] are done.
    pub(crate) fn saved(&self) {
        let mut state = self.lock();
        state.saving = state.saving.saturating_sub(1);
    }

    fn start_next(self: &Arc<Self>, state: &mut State) {
        while state.running.is_none() && !self.shutdown.is_triggered() {
            let Some(entry) = state.waiting.pop_front() else {
                return;
            };
            announce_positions(state);
            let id = entry.id;
            state.running = Some(id);
            let shared = Arc::clone(self);
            // The thread owns the run from start to reaping: PR_SET_PDEATHSIG ties
            // the children's lives to the thread that spawned them.
            let spawned = std::thread::Builder::new()
                .name(format!("run-{id}"))
                .spawn(move || worker::run(&shared, entry));
            if let Err(err) = spawned {
                tracing::error!("cannot start a run thread: {err}");
                state.running = None;
            }
        }
    }
}

fn announce_positions(state: &State) {
    for (index, entry) in state.waiting.iter().enumerate() {
        entry.send(Event::Queued {
            position: index + 1,
        });
    }
}

impl Scheduler {
    /// A scheduler that starts ends with `program`, saves what jobs leave in `stores`,
    /// lets at most `max_waiting` runs wait, and stops when `shutdown` is on.
    ///
    /// Before any run, it removes what runs of this user that died with their
    /// process (a server killed with -9) left: their private folders and the
    /// kernel objects noted there, each proven ours and dead first
    /// ([`pipebench::process::rundir::sweep`]).
    pub(crate) fn new(
        program: EndProgram,
        stores: Stores,
        max_waiting: usize,
        shutdown: Shutdown,
    ) -> Scheduler {
        let swept = pipebench::process::rundir::sweep(&[]);
        if swept != pipebench::process::rundir::Swept::default() {
            tracing::info!(
                folders = swept.folders,
                objects = swept.objects,
                "removed what killed runs left"
            );
        }
        Scheduler {
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                program,
                stores,
                shutdown,
                max_waiting,
            }),
        }
    }

    /// Queues `job`, or starts it if nothing runs; its result is kept for
    /// what `keep` says besides the history.
    pub(crate) fn submit(
        &self,
        job: Job,
        keep: Keep,
    ) -> Result<(Ticket, UnboundedReceiver<Update>), SubmitError> {
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
        let entry = Entry {
            id,
            job,
            keep,
            events,
            stop,
        };
        if busy {
            entry.send(Event::Queued {
                position: state.waiting.len() + 1,
            });
        }
        state.waiting.push_back(entry);
        self.shared.start_next(&mut state);
        let ticket = Ticket {
            id,
            shared: Arc::clone(&self.shared),
            stop: stop_sender,
        };
        Ok((ticket, receiver))
    }

    /// Whether a run is going, and how many wait.
    pub(crate) fn status(&self) -> (bool, usize) {
        let state = self.shared.lock();
        (state.running.is_some(), state.waiting.len())
    }

    /// Turns the stop switch on (refusing new runs), fails the waiting runs, and
    /// waits up to `timeout` for the running one's thread to kill and reap its
    /// children.
    pub(crate) async fn shutdown(&self, timeout: Duration) {
        self.shared.shutdown.trigger();
        {
            let mut state = self.shared.lock();
            for entry in state.waiting.drain(..) {
                entry.send(Event::error("the server is shutting down"));
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
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Cancels the run: a waiting one leaves the queue, a running one is killed.
    /// Either way the page gets `cancelled` through the run's channel.
    pub(crate) fn cancel(&self) {
        if let Some(entry) = self.leave_queue() {
            entry.send(Event::Cancelled);
        } else {
            // Running (or about to): its thread checks this channel every 50 ms.
            let _ = self.stop.send(());
        }
    }

    fn leave_queue(&self) -> Option<Entry> {
        let mut state = self.shared.lock();
        let index = state.waiting.iter().position(|entry| entry.id == self.id)?;
        let entry = state.waiting.remove(index);
        announce_positions(&state);
        entry
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        // Waiting: leave the queue. Running: dropping `stop` disconnects the
        // thread's channel, which it takes as "kill the run".
        self.leave_queue();
    }
}
