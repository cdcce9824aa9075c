//! What every kind of job plans into, and the contract a kind keeps: a page's
//! message becomes the engine's `Job`, or a series of pipe runs queued one at
//! a time (a sweep, a comparison). Each kind's own file checks its fields
//! against its lab task (when tagged), the server's bounds and the machine
//! ([`Kind::plan`]); the WebSocket connection (`ws`) submits what comes out
//! and the scheduler steps a series, so a new kind of job costs nothing here.

use pipebench::engine::event::{Event, Failure};
use pipebench::engine::job::{Job, PipeJob};
use pipebench::steps::plan::RunPlan;

use crate::jobs::message::MessageError;
use crate::labs::LabTag;
use crate::state::AppState;

/// One kind of job from the page: its message, read by `protocol`, planned
/// here. Each kind's file implements it for its message struct.
pub(crate) trait Kind: Sized {
    /// A good message of this kind, quoted when one is refused.
    const EXAMPLE: &'static str;
    /// Checks what a message's fields alone can say (bounds that need no
    /// machine), filling in what the check decides; a refusal here is a bad
    /// message.
    fn checked(self) -> Result<Self, MessageError> {
        Ok(self)
    }
    /// Checks the request against its lab task (when tagged), the server's
    /// bounds and the machine, and plans it; a refusal is the `error` the
    /// page hears.
    fn plan(self, state: &AppState) -> Result<Planned, Failure>;
}

/// What a request becomes.
pub(crate) struct Planned {
    /// The job to queue now.
    pub(crate) job: Job,
    /// The rest of a series (a sweep or a comparison) when the job is its first run.
    pub(crate) series: Option<Box<dyn Series>>,
    /// The lab task its results are recorded for.
    pub(crate) lab: Option<LabTag>,
}

impl Planned {
    /// One job, recorded for `lab` when tagged.
    pub(crate) fn one(job: Job, lab: Option<LabTag>) -> Self {
        Planned {
            job,
            series: None,
            lab,
        }
    }

    /// A series whose first run is queued now; `None` when it has no run.
    pub(crate) fn series(
        mut series: Box<dyn Series>,
        lab: Option<LabTag>,
    ) -> Result<Self, Failure> {
        let first = series
            .next_run()
            .ok_or_else(|| refuse(format!("a {} needs at least one run", series.noun())))?;
        Ok(Planned {
            job: pipe_job(first),
            series: Some(series),
            lab,
        })
    }
}

/// The engine's job for a page's pipe run: watched (its occupancy sampled, its
/// progress sent) unless the reader asked for a quiet run (then the observer
/// stays out of the way).
pub(crate) fn pipe_job(plan: RunPlan) -> Job {
    let watched = !plan.quiet;
    Job::Pipe(Box::new(PipeJob {
        plan,
        occupancy: watched,
        progress: watched,
    }))
}

/// Pipe runs the server queues one by one for one request, each when the one
/// before it ended, so other pages' runs take their turn in between: a sweep
/// (each result a `point`, then `done`) or a comparison (each result a `leg`,
/// then the `verdict`).
pub(crate) trait Series: Send {
    /// What it is called in a message: "sweep", "comparison".
    fn noun(&self) -> &'static str;
    /// The next run, or `None` when it is over.
    fn next_run(&mut self) -> Option<RunPlan>;
    /// The event the page hears for the result of the run handed out last.
    fn on_result(&mut self, result: pipebench::engine::result::RunResult) -> Event;
    /// Its last word once the last run's `saved` went out, as JSON (tagged
    /// with that run's id `run` or not, as the kind's contract says).
    fn last_word(&self, run: u64) -> String;
    /// What it still says when a run of it was cancelled.
    fn on_cancel(&self) -> Option<Event> {
        None
    }
    /// Hands out no more runs (a cancel).
    fn stop(&mut self);
    /// The swept value, in bytes, of the run handed out last (a lab's measurement records it).
    fn current_value(&self) -> Option<u64> {
        None
    }
}

/// A refusal of the page's request: the `error` the page hears.
pub(crate) fn refuse(reason: impl ToString) -> Failure {
    Failure {
        message: reason.to_string(),
        reason: None,
    }
}
