//! The `wakeup` kind: one wakeup's cost measured by a pipe ping-pong, queued
//! like a run.

use pipebench::engine::event::Failure;
use pipebench::engine::job::Job;
use serde::Deserialize;

use crate::jobs::planned::Planned;
use crate::jobs::requests::Kind;
use crate::state::AppState;

/// `{"type":"wakeup"}`: no field but its type.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct WakeupMessage {}

impl Kind for WakeupMessage {
    const EXAMPLE: &'static str = r#"{"type":"wakeup"}"#;

    fn plan(self, _state: &AppState) -> Result<Planned, Failure> {
        let job = Job::Wakeup {
            round_trips: pipebench::engine::wakeup::DEFAULT_ROUND_TRIPS,
        };
        Ok(Planned::one(job, None))
    }
}
