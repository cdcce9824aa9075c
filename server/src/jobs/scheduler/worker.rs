//! The body of a job's thread: the engine runs the job here, with an observer that
//! sends its events to the page and turns a cancel, a page that went away or the
//! server stopping into a stop; then what it left is saved (`crate::store::saving`). Whatever the job started
//! is dead and reaped before the thread ends.

use std::sync::mpsc::{RecvTimeoutError, TryRecvError};
use std::sync::Arc;
use std::time::Duration;

use pipebench::engine::event::Event;
use pipebench::engine::job::{JobContext, Observer, Stop};

use super::{Entry, Shared};
use crate::store::saving::Said;

/// The page's side of a running job.
struct Page<'a> {
    shared: &'a Shared,
    entry: &'a Entry,
}

impl Observer for Page<'_> {
    fn event(&mut self, event: Event) {
        self.entry.send(event);
    }

    fn wait(&mut self, timeout: Duration) -> Option<Stop> {
        match self.entry.stop.recv_timeout(timeout) {
            Ok(()) => Some(Stop::Cancel),
            Err(RecvTimeoutError::Disconnected) => Some(Stop::Gone),
            Err(RecvTimeoutError::Timeout) if self.shared.shutdown.is_triggered() => {
                Some(Stop::Shutdown)
            }
            Err(RecvTimeoutError::Timeout) => None,
        }
    }
}

/// Runs `entry`'s job to its end on the calling thread, then hands the machine to
/// the next.
pub(super) fn run(shared: &Arc<Shared>, entry: Entry) {
    // Cancelled between leaving the queue and getting here?
    let last = match entry.stop.try_recv() {
        Ok(()) => Some(Event::Cancelled),
        Err(TryRecvError::Disconnected) => None,
        Err(TryRecvError::Empty) => {
            let context = JobContext {
                program: shared.program.clone(),
                profile_dir: None,
            };
            let mut page = Page {
                shared,
                entry: &entry,
            };
            let last = entry.job.run(&context, &mut page);
            log(&entry, last.as_ref());
            last
        }
    };
    // Free the machine before saying the job ended, so a page that hears its
    // result, `cancelled` or `error` finds the runner free and its next run
    // starts at once; shutdown still waits for the saves.
    shared.finished_saving(entry.id, last.is_some());
    if last.is_some() {
        let not_kept = entry.job.not_kept_because();
        shared
            .stores
            .finish(last, not_kept, &entry.keep, |said| match said {
                Said::Event(event) => entry.send(event),
                Said::Saved(reply) => entry.saved(reply),
            });
        shared.saved();
    }
}

/// One log line for the end of a job.
fn log(entry: &Entry, last: Option<&Event>) {
    let id = entry.id;
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
