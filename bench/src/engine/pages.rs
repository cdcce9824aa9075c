//! The page inspector as a job: a step's writer buffers inspected in a child
//! (`inspect-pages`, [`crate::memory::inspect`]); its event is `pages`.

use crate::ends::options::WriterOptions;
use crate::engine::event::Event;
use crate::engine::observer::JobContext;
use crate::memory::inspect;

/// The page inspector's request.
#[derive(Debug, Clone)]
pub struct PagesJob {
    /// Step id, for the answer.
    pub step: String,
    /// The writer options whose buffers to look at.
    pub writer: Box<WriterOptions>,
}

/// The page inspector as a child (`inspect-pages`): its buffers live and die in
/// their own process, as the writer's do. It takes well under a second, so the
/// thread simply waits for it.
pub(crate) fn run(job: &PagesJob, context: &JobContext) -> Event {
    match inspect::run_child(&context.program, &job.writer, inspect::CHILD_TIMEOUT) {
        Ok(report) => Event::Pages {
            step: job.step.clone(),
            touch: !job.writer.dont_touch_pages,
            report: Box::new(report),
        },
        Err(err) => Event::error(err.to_string()),
    }
}
