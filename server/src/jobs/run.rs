//! The `run` kind: one step of the catalog from the page, with the server's
//! defaults for what the reader leaves unsaid; a tuned variant runs at the
//! sizes its search found, a lab-tagged run as its task says.

use pipebench::engine::event::Failure;
use pipebench::size::ByteSize;
use pipebench::steps::plan::{Limits, PlanError, RunParams, RunPlan, DEFAULT_SECONDS};
use serde::Deserialize;

use crate::jobs::message::{null_as_default, EXAMPLE};
use crate::jobs::planned::{pipe_job, refuse, Planned};
use crate::jobs::requests::Kind;
use crate::labs::{self, LabTag};
use crate::state::AppState;

/// `{"type":"run","step":ID,"params":{...},"lab":{"id":LAB,"task":TASK}}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunMessage {
    /// Step id.
    pub(crate) step: String,
    /// What the reader changed (sizes as numbers or strings like "1GiB").
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) params: RunParams,
    /// The lab task this run is for.
    #[serde(default)]
    pub(crate) lab: Option<LabTag>,
}

impl Kind for RunMessage {
    const EXAMPLE: &'static str = EXAMPLE;

    fn plan(self, state: &AppState) -> Result<Planned, Failure> {
        let RunMessage { step, params, lab } = self;
        // A tuned variant runs at the sizes its search found on this runner.
        let params = state.tuned.params_for(&step, &params).map_err(refuse)?;
        let params = match &lab {
            Some(tag) => labs::lab_run(tag, &step, &params).map_err(refuse)?,
            None => params,
        };
        let plan = plan(&step, &params, &state.limits).map_err(refuse)?;
        Ok(Planned::one(pipe_job(plan), lab))
    }
}

/// The server's defaults for what the page leaves out: no bytes and no seconds
/// means [`DEFAULT_SECONDS`]; a time budget without bytes means the budget alone
/// decides (bytes capped at the limit).
pub(crate) fn with_page_defaults(params: &RunParams, limits: &Limits) -> RunParams {
    let mut params = params.clone();
    if params.bytes.is_none() {
        params.bytes = Some(ByteSize(limits.max_bytes));
        params.seconds.get_or_insert(DEFAULT_SECONDS);
    }
    params
}

/// Validates a run request from the page, filling in the server's defaults.
pub(crate) fn plan(step: &str, params: &RunParams, limits: &Limits) -> Result<RunPlan, PlanError> {
    RunPlan::for_step_id(step, &with_page_defaults(params, limits), limits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn defaults_to_a_short_time_budget() {
        let limits = Limits::default();
        let plan = plan("write-read", &RunParams::default(), &limits).unwrap();
        assert_eq!(plan.time_budget, Some(Duration::from_secs(4)));
        assert_eq!(plan.writer.common.bytes.bytes(), limits.max_bytes);
    }

    #[test]
    fn keeps_what_the_reader_asked() {
        let limits = Limits::default();
        let bytes_only = RunParams {
            bytes: Some(ByteSize(1 << 20)),
            ..Default::default()
        };
        let plan = plan("write-read", &bytes_only, &limits).unwrap();
        assert_eq!(
            (plan.time_budget, plan.writer.common.bytes),
            (None, ByteSize(1 << 20))
        );
        let seconds_only = RunParams {
            seconds: Some(1.5),
            ..Default::default()
        };
        let plan = super::plan("write-read", &seconds_only, &limits).unwrap();
        assert_eq!(plan.time_budget, Some(Duration::from_secs_f64(1.5)));
        assert_eq!(plan.writer.common.bytes.bytes(), limits.max_bytes);
    }

    #[test]
    fn refuses_what_pipebench_refuses() {
        let err = plan("rm-rf", &RunParams::default(), &Limits::default()).unwrap_err();
        assert!(err.to_string().contains("unknown step"));
    }
}
