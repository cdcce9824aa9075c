//! What a kind's plan hands the scheduler: one job, or the first run of a
//! series (a sweep, a comparison) whose next runs the scheduler queues itself.
//! Apart from [`crate::jobs::requests`], which needs the server's state to plan,
//! so that the scheduler, which that state holds, does not depend on it.

use pipebench::engine::event::{Event, Failure};
use pipebench::engine::job::{Job, PipeJob};
use pipebench::steps::plan::RunPlan;

use crate::labs::LabTag;

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
