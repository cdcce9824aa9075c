//! One run at a time, machine-wide; the others wait in a bounded FIFO queue.
//!
//! Benchmarks pin both ends to CPUs, so two runs at once would measure each
//! other. A connection [`Scheduler::submit`]s what a request planned (a
//! [`Job`], or the first run of a [`Series`]) and gets a [`Ticket`] plus a
//! channel of [`Update`]s, each tagged with its run's id. This module owns the
//! queue, the job's own thread ([`worker`], which drives the engine's one job
//! life, saves what it left and steps a series: each run's result becomes the
//! series' own event, its next run re-enters the queue at the back, and its
//! last word follows the last run's saves) and cancellation. When a job ends
//! its thread starts the next one in line. Dropping a ticket (the page went
//! away) cancels the job or series, whether it is waiting or running.

mod worker;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use pipebench::engine::event::{Event, ForRun};
use pipebench::engine::job::Job;
use pipebench::process::launch::EndProgram;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use crate::jobs::planned::{Planned, Series};
use crate::jobs::saving::{Keep, Reply, Stores};
use crate::shutdown::Shutdown;

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

/// A run waiting for its turn, or being handed to its thread: one job, or the
/// current run of a series (whose next run re-enters the queue as a new
/// `Queued` when this one's result is saved).
pub(crate) struct Queued {
    /// Scheduler-wide id of this run (a series' runs each have their own),
    /// given when it enters the queue.
    pub(crate) id: u64,
    /// What to run.
    pub(crate) job: Job,
    /// What its result is kept for besides the history (a lab task).
    pub(crate) keep: Keep,
    /// The page's end: where updates go, and the stop channel.
    pub(crate) link: Link,
    /// The rest of the series this run belongs to, if any.
    pub(crate) series: Option<Box<dyn Series>>,
}

/// The page's side of a submission. It follows a series from run to run, so
/// one [`Ticket`] cancels the whole series wherever it is.
pub(crate) struct Link {
    /// The ticket's id, which its runs keep while their own ids change.
    ticket: u64,
    /// Where to send the runs' updates for the page.
    updates: UnboundedSender<Update>,
    /// Receives `()` on cancel; disconnects when the ticket is dropped.
    pub(crate) stop: std_mpsc::Receiver<()>,
}

/// What the scheduler tells a page about its submission, in order: each run's
/// events, then (after a result, never before) its `Saved`s
/// ([`crate::jobs::saving`]): the lab's and the tuned store's when it has
/// them, then exactly one for the history; for a series, each run's result as
/// the series' own event (a `point`, a `leg`), and after the last run's last
/// `Saved` the series' last word.
#[derive(Debug)]
pub(crate) enum Update {
    /// An event of run `run`. `closes_session` on the last thing the page
    /// waits for before it may submit again (a run's final event, a series'
    /// last result, cancel or error); what follows it is only saves and last words.
    Event {
        /// The run it is about (`None`: the series it belongs to, as a
        /// refusal of its next run, which never got an id).
        run: Option<u64>,
        /// What happened.
        event: Event,
        /// Whether the page's session closes with it.
        closes_session: bool,
    },
    /// Whether a store has what run `run` left (a profiled run's result is
    /// never in the history).
    Saved {
        /// The run it is about.
        run: u64,
        /// The store's answer.
        reply: Reply,
    },
    /// A series' last word, as JSON (tagged with a run or not, as its kind says).
    LastWord(String),
}

impl Update {
    /// The message the page gets, tagged with its run's id.
    pub(crate) fn to_json(&self) -> String {
        match self {
            Update::Event {
                run: Some(run),
                event,
                ..
            } => ForRun { run: *run, event }.to_json(),
            Update::Event {
                run: None, event, ..
            } => event.to_json(),
            Update::Saved { run, reply } => reply.to_json_for_run(*run),
            Update::LastWord(json) => json.clone(),
        }
    }

    /// Whether the page's session closes with it.
    pub(crate) fn closes_session(&self) -> bool {
        matches!(
            self,
            Update::Event {
                closes_session: true,
                ..
            }
        )
    }
}

impl Link {
    /// Sends an event of run `run`; a page that went away is not an error.
    pub(crate) fn send(&self, run: Option<u64>, event: Event, closes_session: bool) {
        let _ = self.updates.send(Update::Event {
            run,
            event,
            closes_session,
        });
    }

    /// Tells the page whether a store has what run `run` left.
    pub(crate) fn saved(&self, run: u64, reply: Reply) {
        let _ = self.updates.send(Update::Saved { run, reply });
    }

    /// A series' last word.
    pub(crate) fn last_word(&self, json: String) {
        let _ = self.updates.send(Update::LastWord(json));
    }
}

impl Queued {
    /// Sends an event of this run that is not its last (its place in the queue).
    fn send(&self, event: Event) {
        self.link.send(Some(self.id), event, false);
    }

    /// Ends it without running it (cancelled, or the server stopping): the
    /// page hears `event`, and a cancelled series what it still says.
    fn end_unrun(self, event: Event) {
        let cancelled = matches!(event, Event::Cancelled);
        self.link.send(Some(self.id), event, true);
        if let (true, Some(series)) = (cancelled, &self.series) {
            if let Some(last) = series.on_cancel() {
                self.link.send(Some(self.id), last, false);
            }
        }
    }
}

#[derive(Default)]
struct State {
    next_id: u64,
    running: Option<u64>,
    waiting: VecDeque<Queued>,
    /// Finished jobs whose records are still being saved: shutdown waits
    /// for them, so a result a page saw is never lost.
    saving: usize,
}

/// The machine-wide runner: the queue, and what every run thread needs.
pub(crate) struct Runner {
    state: Mutex<State>,
    /// How the ends are started.
    pub(crate) program: EndProgram,
    /// Where a finished job's records go.
    pub(crate) stores: Stores,
    /// The server's stop switch: once on, running threads kill their run.
    pub(crate) shutdown: Shutdown,
    max_waiting: usize,
    /// The next ticket's id.
    next_ticket: AtomicU64,
}

/// The machine-wide run queue. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Scheduler {
    shared: Arc<Runner>,
}

/// A submitted run. Dropping it cancels the run.
pub(crate) struct Ticket {
    id: u64,
    shared: Arc<Runner>,
    stop: std_mpsc::Sender<()>,
}

impl Runner {
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

    /// Puts `queued` at the back of the queue under a new run id, or starts it
    /// if nothing runs. A series' next run comes back here, so other pages'
    /// runs take their turn between two of its runs. Refused, it comes back
    /// with why.
    pub(crate) fn enqueue(
        self: &Arc<Self>,
        mut queued: Queued,
    ) -> Result<u64, Box<(Queued, SubmitError)>> {
        if self.shutdown.is_triggered() {
            return Err(Box::new((queued, SubmitError::ShuttingDown)));
        }
        let mut state = self.lock();
        let busy = state.running.is_some() || !state.waiting.is_empty();
        if busy && state.waiting.len() >= self.max_waiting {
            let waiting = state.waiting.len();
            return Err(Box::new((queued, SubmitError::Busy { waiting })));
        }
        state.next_id += 1;
        let id = state.next_id;
        queued.id = id;
        if busy {
            queued.send(Event::Queued {
                position: state.waiting.len() + 1,
            });
        }
        state.waiting.push_back(queued);
        self.start_next(&mut state);
        Ok(id)
    }

    fn start_next(self: &Arc<Self>, state: &mut State) {
        while state.running.is_none() && !self.shutdown.is_triggered() {
            let Some(queued) = state.waiting.pop_front() else {
                return;
            };
            announce_positions(state);
            let id = queued.id;
            state.running = Some(id);
            let shared = Arc::clone(self);
            // The thread owns the run from start to reaping: PR_SET_PDEATHSIG ties
            // the children's lives to the thread that spawned them.
            let spawned = std::thread::Builder::new()
                .name(format!("run-{id}"))
                .spawn(move || worker::run(&shared, queued));
            if let Err(err) = spawned {
                tracing::error!("cannot start a run thread: {err}");
                state.running = None;
            }
        }
    }
}

fn announce_positions(state: &State) {
    for (index, queued) in state.waiting.iter().enumerate() {
        queued.send(Event::Queued {
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
    /// ([`pipebench::process::rundir::remove_dead`]).
    pub(crate) fn new(
        program: EndProgram,
        stores: Stores,
        max_waiting: usize,
        shutdown: Shutdown,
    ) -> Scheduler {
        let removed = pipebench::process::rundir::remove_dead(&[]);
        if removed != pipebench::process::rundir::Removed::default() {
            tracing::info!(
                folders = removed.folders,
                objects = removed.objects,
                "removed what killed runs left"
            );
        }
        Scheduler {
            shared: Arc::new(Runner {
                state: Mutex::new(State::default()),
                program,
                stores,
                shutdown,
                max_waiting,
                next_ticket: AtomicU64::new(1),
            }),
        }
    }

    /// Queues what a page's request planned (one job, or the first run of a
    /// series, whose next runs the scheduler queues itself), or starts it if
    /// nothing runs; results are kept for its lab task besides the history.
    pub(crate) fn submit(
        &self,
        planned: Planned,
    ) -> Result<(Ticket, UnboundedReceiver<Update>), SubmitError> {
        let (updates, receiver) = unbounded_channel();
        let (stop_sender, stop) = std_mpsc::channel();
        let Planned { job, series, lab } = planned;
        let value = series.as_ref().and_then(|series| series.current_value());
        let ticket = self.shared.next_ticket.fetch_add(1, Ordering::Relaxed);
        let queued = Queued {
            id: 0,
            job,
            keep: Keep { lab, value },
            link: Link {
                ticket,
                updates,
                stop,
            },
            series,
        };
        self.shared.enqueue(queued).map_err(|refused| refused.1)?;
        let ticket = Ticket {
            id: ticket,
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
            for queued in state.waiting.drain(..) {
                queued.end_unrun(Event::error("the server is shutting down"));
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
    /// Cancels the run (a series' current one, and with it the series): a
    /// waiting one leaves the queue, a running one is killed. Either way the
    /// page gets `cancelled` through the channel.
    pub(crate) fn cancel(&self) {
        if let Some(queued) = self.leave_queue() {
            queued.end_unrun(Event::Cancelled);
        } else {
            // Running (or about to): its thread checks this channel every 50 ms.
            let _ = self.stop.send(());
        }
    }

    fn leave_queue(&self) -> Option<Queued> {
        let mut state = self.shared.lock();
        let index = state
            .waiting
            .iter()
            .position(|queued| queued.link.ticket == self.id)?;
        let queued = state.waiting.remove(index);
        announce_positions(&state);
        queued
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        // Waiting: leave the queue. Running: dropping `stop` disconnects the
        // thread's channel, which it takes as "kill the run".
        self.leave_queue();
    }
}
