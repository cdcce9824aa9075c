//! The `probe` kind: the kernel asked again what it does (the behaviour
//! probes, queued like a run; their answers replace `/api/system`'s).

use pipebench::engine::event::Failure;
use pipebench::engine::job::Job;
use serde::Deserialize;

use crate::jobs::planned::Planned;
use crate::jobs::requests::Kind;
use crate::state::AppState;

/// `{"type":"probe"}`: no field but its type.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProbeMessage {}

impl Kind for ProbeMessage {
    const EXAMPLE: &'static str = r#"{"type":"probe"}"#;

    fn plan(self, _state: &AppState) -> Result<Planned, Failure> {
        Ok(Planned::one(Job::Probe, None))
    }
}
