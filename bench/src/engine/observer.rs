//! Who drives a job and how it talks to them: the [`Observer`] hears a job's
//! events and says when it must stop ([`Stop`]); [`JobContext`] is what every
//! job needs from its driver. Every kind of job depends on this, and this on
//! nothing of theirs, so a kind can run other jobs (a sweep, a search) without
//! an import circle through `job`.

use std::path::PathBuf;
use std::time::Duration;

use crate::engine::event::Event;
use crate::process::launch::EndProgram;

/// How often a job samples its progress and tells its observer: 20 a second.
pub const PROGRESS_INTERVAL: Duration = Duration::from_millis(50);

/// How often a quiet run is looked at: only to enforce its budget and notice its
/// end or a stop.
pub const QUIET_INTERVAL: Duration = Duration::from_millis(200);

/// Why an observer wants a job stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Asked to cancel: the job ends with [`Event::Cancelled`].
    Cancel,
    /// Nobody is listening any more: the job ends without a final event.
    Gone,
    /// The program is stopping: the job ends with an error that says so.
    Shutdown,
}

/// Who drives a job: hears its events and decides when it stops.
pub trait Observer {
    /// Something happened (started, a progress sample, a profile, ...). The final
    /// event is returned by [`crate::engine::job::Job::run`] instead.
    fn event(&mut self, event: Event);

    /// Waits up to `timeout` (the job's next sample is due then) and says whether
    /// the job must stop.
    fn wait(&mut self, timeout: Duration) -> Option<Stop>;
}

/// What every job needs from its driver.
#[derive(Debug, Clone)]
pub struct JobContext {
    /// The program that acts as the job's children (`pipebench` itself, or
    /// `pipebook end`).
    pub program: EndProgram,
    /// Where a profiled run keeps perf's data and flame graphs (kept there);
    /// `None`: a private folder removed after the run.
    pub profile_dir: Option<PathBuf>,
}

impl Stop {
    /// The final event of a job stopped for this reason.
    pub(crate) fn final_event(self) -> Option<Event> {
        match self {
            Stop::Cancel => Some(Event::Cancelled),
            Stop::Gone => None,
            Stop::Shutdown => Some(Event::error("the server is shutting down")),
        }
    }
}
