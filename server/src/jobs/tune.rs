//! The `tune` kind: bytes per call × pipe capacity (× huge pages) searched for
//! a step within the server's budget bounds; its best is kept as a tuned
//! variant ([`crate::store::tuned`]).

use pipebench::engine::event::Failure;
use pipebench::engine::job::Job;
use pipebench::engine::tune::{self, TuneJob};
use serde::Deserialize;

use crate::jobs::message::OutOfRange;
use crate::jobs::planned::{refuse, Planned};
use crate::jobs::requests::Kind;
use crate::state::AppState;

/// A search's budget unless the page says, seconds: a dozen configurations,
/// three rounds, runs of about half a second.
pub(crate) const DEFAULT_TUNE_BUDGET: f64 = 20.0;
/// The most a search from the page may take, seconds of runs: the queue is
/// one at a time, and a search holds it for all of them.
pub(crate) const MAX_TUNE_BUDGET: f64 = 120.0;
/// The least, seconds (the engine's own least).
pub(crate) const MIN_TUNE_BUDGET: f64 = tune::BUDGET_BOUNDS.0;

/// `{"type":"tune","step":ID,"budget":SECONDS}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TuneMessage {
    /// Step id.
    pub(crate) step: String,
    /// Seconds of runs in all (default: [`DEFAULT_TUNE_BUDGET`]).
    #[serde(default)]
    pub(crate) budget: Option<f64>,
}

impl Kind for TuneMessage {
    const EXAMPLE: &'static str = r#"{"type":"tune","step":"busy-loop","budget":20}"#;

    fn plan(self, _state: &AppState) -> Result<Planned, Failure> {
        let job = tune_job(&self.step, self.budget).map_err(refuse)?;
        Ok(Planned::one(Job::Tune(job), None))
    }
}

/// Why a search from the page is refused.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TuneRefusal {
    /// A budget outside the server's bounds.
    #[error(transparent)]
    OutOfRange(#[from] OutOfRange),
    /// The engine refuses the search (an unknown step, a step it cannot vary).
    #[error(transparent)]
    Tune(#[from] tune::TuneError),
}

/// The page's search of `step` within the server's budget bounds.
pub(crate) fn tune_job(step: &str, budget: Option<f64>) -> Result<TuneJob, TuneRefusal> {
    let budget = budget.unwrap_or(DEFAULT_TUNE_BUDGET);
    if !(MIN_TUNE_BUDGET..=MAX_TUNE_BUDGET).contains(&budget) {
        return Err(OutOfRange {
            field: "budget",
            value: budget.to_string(),
            bounds: format!("{MIN_TUNE_BUDGET} to {MAX_TUNE_BUDGET} seconds"),
        }
        .into());
    }
    let job = TuneJob {
        step: step.to_string(),
        budget,
        seed: None,
    };
    tune::check(&job)?;
    Ok(job)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_budget_is_bounded_by_the_server() {
        assert!(tune_job("busy-loop", None).is_ok());
        for budget in [0.5, MAX_TUNE_BUDGET + 1.0, f64::NAN] {
            let err = tune_job("busy-loop", Some(budget)).unwrap_err();
            assert!(
                matches!(
                    err,
                    TuneRefusal::OutOfRange(OutOfRange {
                        field: "budget",
                        ..
                    })
                ),
                "{err}"
            );
        }
        assert!(matches!(tune_job("nope", None), Err(TuneRefusal::Tune(_))));
    }
}
