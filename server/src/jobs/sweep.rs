//! The `sweep` kind: one step over several values of a parameter, each run
//! queued on its own (a series: each result a `point`, then `done`), with the
//! same defaults as a single run; each repeat visits the values in a fresh
//! shuffled order.

use pipebench::engine::event::{Event, Failure};
use pipebench::engine::sweep::{SweepError, SweepJob, SweepParam, SweepPlan};
use pipebench::size::ByteSize;
use pipebench::steps::plan::{Limits, RunParams, RunPlan};
use serde::Deserialize;

use crate::jobs::message::{from_str, null_as_default, MessageError, OutOfRange};
use crate::jobs::planned::{refuse, Planned, Series};
use crate::jobs::requests::Kind;
use crate::jobs::run::with_page_defaults;
use crate::labs::{self, LabTag};
use crate::state::AppState;

/// Most runs per value a sweep from the page may ask for.
pub(crate) const MAX_SWEEP_REPEATS: usize = 5;

/// Fewest runs per value: a sweep runs each value.
pub(crate) const MIN_SWEEP_REPEATS: usize = 1;

/// Runs per value of a sweep that does not say.
pub(crate) const DEFAULT_SWEEP_REPEATS: usize = 1;

/// `{"type":"sweep","step":ID,"param":"pipe_size","values":[...],"repeats":N,"params":{...}}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SweepMessage {
    /// Step id.
    pub(crate) step: String,
    /// What varies.
    #[serde(deserialize_with = "from_str")]
    pub(crate) param: SweepParam,
    /// Its values (numbers of bytes or strings like "64KiB"), increasing.
    pub(crate) values: Vec<ByteSize>,
    /// Runs per value ([`DEFAULT_SWEEP_REPEATS`] once checked, when left out).
    #[serde(default)]
    pub(crate) repeats: Option<u64>,
    /// The rest of each run's parameters.
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) params: RunParams,
    /// The lab task this sweep is for.
    #[serde(default)]
    pub(crate) lab: Option<LabTag>,
}

impl Kind for SweepMessage {
    const EXAMPLE: &'static str = r#"{"type":"sweep","step":"write-read","param":"pipe_size","values":["16KiB","64KiB"],"params":{"seconds":1}}"#;

    fn checked(self) -> Result<Self, MessageError> {
        let repeats = self.repeats.unwrap_or(DEFAULT_SWEEP_REPEATS as u64);
        if !(MIN_SWEEP_REPEATS as u64..=MAX_SWEEP_REPEATS as u64).contains(&repeats) {
            return Err(OutOfRange {
                field: "repeats",
                value: repeats.to_string(),
                bounds: format!("{MIN_SWEEP_REPEATS} to {MAX_SWEEP_REPEATS}"),
            }
            .into());
        }
        Ok(SweepMessage {
            repeats: Some(repeats),
            ..self
        })
    }

    fn plan(self, state: &AppState) -> Result<Planned, Failure> {
        let SweepMessage {
            step,
            param,
            values,
            repeats,
            params,
            lab,
        } = self;
        let repeats = repeats.map_or(DEFAULT_SWEEP_REPEATS, |n| n as usize);
        let params = match &lab {
            Some(tag) => {
                labs::lab_sweep(tag, &step, param, &values, repeats, &params).map_err(refuse)?
            }
            None => params,
        };
        let planned =
            sweep(&step, param, &values, repeats, &params, &state.limits).map_err(refuse)?;
        Planned::series(Box::new(SweepJob::new(planned)), lab)
    }
}

/// Validates a sweep from the page, every value up front, with the same defaults
/// as a single run; each repeat visits the values in a fresh shuffled order.
pub(crate) fn sweep(
    step: &str,
    param: SweepParam,
    values: &[ByteSize],
    repeats: usize,
    params: &RunParams,
    limits: &Limits,
) -> Result<SweepPlan, SweepError> {
    SweepPlan::new(
        step,
        param,
        values,
        &with_page_defaults(params, limits),
        repeats,
        limits,
        &mut rand::rng(),
    )
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
