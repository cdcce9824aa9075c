//! A page's request for a job, planned into what the runner queues: the
//! engine's `Job`, or a series of pipe runs queued one at a time (a sweep, a
//! comparison). Each kind's arm hands its fields to its page module (the
//! server's bounds and defaults live there) and, for a lab-tagged request, to
//! `labs` first; the WebSocket connection (`ws`) only queues what comes out,
//! so a new kind of job costs an arm here and nothing there.

use pipebench::engine::event::{Event, Failure};
use pipebench::engine::inspect::InspectJob;
use pipebench::engine::job::Job;
use pipebench::engine::sweep::SweepJob;
use pipebench::steps::plan::RunPlan;

use crate::jobs::compare::{self, PageCompare};
use crate::jobs::protocol::JobRequest;
use crate::jobs::run;
use crate::labs::{self, LabTag};
use crate::state::AppState;

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
    fn one(job: Job, lab: Option<LabTag>) -> Self {
        Planned {
            job,
            series: None,
            lab,
        }
    }

    /// A series whose first run is queued now; `None` when it has no run.
    fn series(mut series: Box<dyn Series>, lab: Option<LabTag>) -> Result<Self, Failure> {
        let first = series
            .next_run()
            .ok_or_else(|| refuse(format!("a {} needs at least one run", series.noun())))?;
        Ok(Planned {
            job: run::pipe_job(first),
            series: Some(series),
            lab,
        })
    }
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

impl Series for SweepJob {
    fn noun(&self) -> &'static str {
        "sweep"
    }
    fn next_run(&mut self) -> Option<RunPlan> {
        SweepJob::next_run(self)
    }
    fn on_result(&mut self, result: pipebench::engine::result::RunResult) -> Event {
        self.point(result)
    }
    fn last_word(&self, _run: u64) -> String {
        // `done` belongs to the sweep, not to its last run.
        self.done().to_json()
    }
    fn stop(&mut self) {
        SweepJob::stop(self)
    }
    fn current_value(&self) -> Option<u64> {
        SweepJob::current_value(self).map(|v| v.bytes())
    }
}

impl Series for PageCompare {
    fn noun(&self) -> &'static str {
        "comparison"
    }
    fn next_run(&mut self) -> Option<RunPlan> {
        PageCompare::next_run(self)
    }
    fn on_result(&mut self, result: pipebench::engine::result::RunResult) -> Event {
        self.leg(result)
    }
    fn last_word(&self, run: u64) -> String {
        pipebench::engine::event::ForRun {
            run,
            event: &self.verdict(),
        }
        .to_json()
    }
    fn on_cancel(&self) -> Option<Event> {
        // A cancel after some pairs still gets the verdict over the pairs run.
        match self.verdict() {
            verdict @ Event::Verdict(_) => Some(verdict),
            _ => None,
        }
    }
    fn stop(&mut self) {
        PageCompare::stop(self)
    }
}

/// A refusal of the page's request: the `error` the page hears.
fn refuse(reason: impl ToString) -> Failure {
    Failure {
        message: reason.to_string(),
        reason: None,
    }
}

impl JobRequest {
    /// Checks the request against its lab task (when tagged), the server's
    /// bounds and the machine, and plans it; a refusal is the `error` the
    /// page hears.
    pub(crate) fn plan(self, state: &AppState) -> Result<Planned, Failure> {
        match self {
            JobRequest::Run { step, params, lab } => {
                // A tuned variant runs at the sizes its search found on this runner.
                let params = state.tuned.params_for(&step, &params).map_err(refuse)?;
                let params = match &lab {
                    Some(tag) => labs::lab_run(tag, &step, &params).map_err(refuse)?,
                    None => params,
                };
                let plan = run::plan(&step, &params, &state.limits).map_err(refuse)?;
                Ok(Planned::one(run::pipe_job(plan), lab))
            }
            JobRequest::Sweep {
                step,
                param,
                values,
                repeats,
                params,
                lab,
            } => {
                let params = match &lab {
                    Some(tag) => labs::lab_sweep(tag, &step, param, &values, repeats, &params)
                        .map_err(refuse)?,
                    None => params,
                };
                let planned = run::sweep(&step, param, &values, repeats, &params, &state.limits)
                    .map_err(refuse)?;
                Planned::series(Box::new(SweepJob::new(planned)), lab)
            }
            JobRequest::Compare(request) => {
                let planned = compare::plan(
                    &request,
                    &state.limits,
                    Some(&state.tuned),
                    &state.compare_series,
                )
                .map_err(refuse)?;
                Planned::series(Box::new(planned), None)
            }
            JobRequest::Ipc {
                mechanism,
                params,
                lab,
            } => {
                let params = match &lab {
                    Some(tag) => labs::lab_ipc(tag, &mechanism, &params).map_err(refuse)?,
                    None => params,
                };
                let job = crate::jobs::ipc::plan(&mechanism, &params)
                    .map_err(|err| Failure::from(&err))?;
                Ok(Planned::one(Job::Ipc(job), lab))
            }
            JobRequest::Latency { params, lab } => {
                let params = match &lab {
                    Some(tag) => labs::lab_latency(tag, &params).map_err(refuse)?,
                    None => params,
                };
                let config =
                    crate::jobs::latency::plan(&params).map_err(|err| Failure::from(&err))?;
                Ok(Planned::one(Job::Latency(config), lab))
            }
            JobRequest::Pages { step, touch } => {
                let writer = run::inspected_writer(&step, touch).map_err(refuse)?;
                let job = Job::Inspect(InspectJob {
                    step,
                    writer: Box::new(writer),
                });
                Ok(Planned::one(job, None))
            }
            JobRequest::Wakeup => Ok(Planned::one(
                Job::Wakeup {
                    round_trips: pipebench::engine::wakeup::DEFAULT_ROUND_TRIPS,
                },
                None,
            )),
            JobRequest::Probe => Ok(Planned::one(Job::Probe, None)),
            JobRequest::Tool { tool, side, bytes } => {
                let job = run::tool_job(&tool, side, bytes).map_err(refuse)?;
                Ok(Planned::one(Job::Tool(job), None))
            }
            JobRequest::Tune { step, budget } => {
                let job = crate::store::tuned::tune_job(&step, budget).map_err(refuse)?;
                Ok(Planned::one(Job::Tune(job), None))
            }
            JobRequest::SharedPipe(request) => {
                let job = crate::store::tuned::shared_job(&request).map_err(refuse)?;
                Ok(Planned::one(Job::SharedPipe(job), None))
            }
        }
    }
}
