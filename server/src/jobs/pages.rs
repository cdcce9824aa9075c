//! The `pages` kind: the step's writer buffers looked at page by page (the
//! page inspector in a child), `touch` deciding whether they are written first.

use pipebench::ends::options::WriterOptions;
use pipebench::engine::event::Failure;
use pipebench::engine::job::Job;
use pipebench::engine::pages::PagesJob;
use pipebench::steps::catalog;
use pipebench::steps::plan::PlanError;
use serde::Deserialize;

use crate::jobs::planned::{refuse, Planned};
use crate::jobs::requests::Kind;
use crate::state::AppState;

/// `{"type":"pages","step":ID,"touch":BOOL}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PagesMessage {
    /// Step id.
    pub(crate) step: String,
    /// Write the buffers before looking (default: as the step's writer does).
    #[serde(default)]
    pub(crate) touch: Option<bool>,
}

impl Kind for PagesMessage {
    const EXAMPLE: &'static str = r#"{"type":"pages","step":"huge-pages","touch":false}"#;

    fn plan(self, _state: &AppState) -> Result<Planned, Failure> {
        let writer = inspected_writer(&self.step, self.touch).map_err(refuse)?;
        let job = Job::Pages(PagesJob {
            step: self.step,
            writer: Box::new(writer),
        });
        Ok(Planned::one(job, None))
    }
}

/// The writer options whose buffers a `pages` message looks at: the step's own,
/// with `touch` (when given) deciding whether they are written first. Only
/// catalog steps: the sizes are the catalog's, so nothing is unbounded.
pub(crate) fn inspected_writer(
    step: &str,
    touch: Option<bool>,
) -> Result<WriterOptions, PlanError> {
    let mut writer = catalog::find(step)
        .ok_or_else(|| PlanError::UnknownStep {
            id: step.to_string(),
            known: catalog::ids().join(", "),
        })?
        .writer;
    if let Some(touch) = touch {
        writer.dont_touch_pages = !touch;
    }
    // Buffers the inspector lists live for a moment only: no mlock.
    writer.common.lock_memory = false;
    Ok(writer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_look_at_the_steps_writer_buffers() {
        let writer = inspected_writer("huge-pages", None).unwrap();
        assert!(writer.common.huge_pages && writer.vmsplice && !writer.dont_touch_pages);
        assert!(
            inspected_writer("huge-pages", Some(false))
                .unwrap()
                .dont_touch_pages
        );
        let err = inspected_writer("nope", None).unwrap_err().to_string();
        assert!(err.contains("unknown step `nope`"), "{err}");
    }
}
