//! The body of a job's thread: the engine runs the job here, with an observer that
//! sends its events to the page and turns a cancel, a page that went away or the
//! server stopping into a stop; then what it left is saved (`crate::jobs::saving`),
//! and a series takes its next step. Whatever the job started is dead and reaped
//! before the thread ends.

use std::sync::mpsc::{RecvTimeoutError, TryRecvError};
use std::sync::Arc;
use std::time::Duration;

use pipebench::engine::event::{Event, Finished};
use pipebench::engine::job::{JobContext, Observer, Stop};
use pipebench::steps::plan::RunPlan;

use super::{Queued, Runner};
use crate::jobs::planned::{self, Series};
use crate::jobs::saving::{Keep, Said};

/// The page's side of a running job.
struct PageObserver<'a> {
    runner: &'a Runner,
    queued: &'a Queued,
}

impl Observer for PageObserver<'_> {
    fn event(&mut self, event: Event) {
        // A job's last event is its return value, never said through here.
        self.queued.send(event);
    }

    fn wait(&mut self, timeout: Duration) -> Option<Stop> {
        match self.queued.link.stop.recv_timeout(timeout) {
            Ok(()) => Some(Stop::Cancel),
            Err(RecvTimeoutError::Disconnected) => Some(Stop::Gone),
            Err(RecvTimeoutError::Timeout) if self.runner.shutdown.is_triggered() => {
                Some(Stop::Shutdown)
            }
            Err(RecvTimeoutError::Timeout) => None,
        }
    }
}

/// What a series does once a run's records are saved.
enum SeriesStep {
    /// Nothing: a single job, or a series that was cancelled or failed.
    Over,
    /// Queue this run next.
    Next(Box<RunPlan>),
    /// Say the series' last word: its last run is over.
    Last,
}

/// Runs `queued`'s job to its end on the calling thread, hands the machine to
/// the next, saves what the job left and, for a series, takes its next step.
pub(super) fn run(runner: &Arc<Runner>, queued: Queued) {
    let last = run_job(runner, &queued);
    // Free the machine before saying the job ended, so a page that hears its
    // result, `cancelled` or `error` finds the runner free and its next run
    // starts at once; shutdown still waits for the saves.
    runner.finished_saving(queued.id, last.is_some());
    let Some(last) = last else {
        return;
    };
    let not_kept = queued.job.not_kept_because();
    let Queued {
        id,
        keep,
        link,
        mut series,
        ..
    } = queued;
    let mut step = SeriesStep::Over;
    runner
        .stores
        .finish(Some(last), not_kept, &keep, |said| match said {
            Said::Event(event) => step = say(&link, id, series.as_deref_mut(), event),
            Said::Saved(reply) => link.saved(id, reply),
        });
    runner.saved();
    let Some(series) = series else {
        return;
    };
    match step {
        SeriesStep::Over => {}
        SeriesStep::Last => link.last_word(series.last_word(id)),
        SeriesStep::Next(plan) => {
            let noun = series.noun();
            let value = series.current_value();
            let next = Queued {
                id,
                job: planned::pipe_job(*plan),
                keep: Keep {
                    lab: keep.lab,
                    value,
                },
                link,
                series: Some(series),
            };
            if let Err(refused) = runner.enqueue(next) {
                let (next, err) = *refused;
                // Said as before the series: its next run never got an id.
                let stopped = Event::error(format!("the {noun} stopped: {err}"));
                next.link.send(None, stopped, true);
            }
        }
    }
}

/// The job's last event, or `None` when the page went away: cancelled if the
/// page asked between leaving the queue and getting here.
fn run_job(runner: &Runner, queued: &Queued) -> Option<Event> {
    let last = match queued.link.stop.try_recv() {
        Ok(()) => Some(Event::Cancelled),
        Err(TryRecvError::Disconnected) => None,
        Err(TryRecvError::Empty) => {
            let context = JobContext {
                program: runner.program.clone(),
                profile_dir: None,
            };
            let mut page = PageObserver { runner, queued };
            queued.job.run(&context, &mut page)
        }
    };
    log(queued.id, last.as_ref());
    last
}

/// Tells the page a run's last event. In a series a result becomes the
/// series' own event and says whether another run follows; a cancel is
/// followed by what the series still says.
fn say(
    link: &super::Link,
    run: u64,
    series: Option<&mut (dyn Series + '_)>,
    event: Event,
) -> SeriesStep {
    let Some(series) = series else {
        let ends = event.is_final();
        link.send(Some(run), event, ends);
        return SeriesStep::Over;
    };
    match event {
        Event::Result(Finished::Pipe(result)) => {
            // A cancel that came after the run ended, or a page gone: no more runs.
            if !matches!(link.stop.try_recv(), Err(TryRecvError::Empty)) {
                series.stop();
            }
            let own = series.on_result(*result);
            let next = series.next_run();
            link.send(Some(run), own, next.is_none());
            next.map_or(SeriesStep::Last, |plan| SeriesStep::Next(Box::new(plan)))
        }
        Event::Cancelled => {
            link.send(Some(run), Event::Cancelled, true);
            if let Some(last) = series.on_cancel() {
                link.send(Some(run), last, false);
            }
            SeriesStep::Over
        }
        other => {
            let ends = other.is_final();
            link.send(Some(run), other, ends);
            SeriesStep::Over
        }
    }
}

/// One log line for the end of a job.
fn log(id: u64, last: Option<&Event>) {
    match last {
        Some(Event::Result(finished)) => match finished.kept() {
            Some(kept) => tracing::info!(id, "finished: {}", kept.summary()),
            None => tracing::info!(id, "job finished"),
        },
        Some(Event::Error(failure)) => tracing::warn!(id, "job failed: {}", failure.message),
        Some(Event::Cancelled) => tracing::info!(id, "job cancelled"),
        Some(_) => tracing::info!(id, "job finished"),
        None => tracing::info!(id, "job stopped: the page went away"),
    }
}
