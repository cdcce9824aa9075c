//! The compare card from the page: a `compare` message's fields, the server's
//! bounds on pairs and on the "run until resolved" budget, and the page's
//! comparison as the engine's [`CompareJob`], driven run by run through the
//! queue (like a sweep) so other pages' runs can take their turn in between.
//!
//! Every run of a comparison is quiet (the engine makes it so): a watched run
//! pays for its watching, and a comparison must charge that to neither side.

use pipebench::engine::compare::{CompareJob, ComparePlanError, Contender};
use pipebench::engine::event::Event;
use pipebench::engine::result::RunResult;
use pipebench::stats::verdict::Verdict;
use pipebench::steps::plan::{Limits, PlanError, RunParams, RunPlan};
use serde::Deserialize;

use crate::page_defaults;
use crate::past_page::{PastRefusal, TunedVariants};

/// Pairs a comparison runs unless the page asks for another number.
pub const DEFAULT_PAGE_PAIRS: usize = 5;

/// Fewest pairs a comparison from the page runs: one pair has no spread.
pub const MIN_PAGE_PAIRS: usize = 2;

/// Most pairs the page may ask for up front.
pub const MAX_PAGE_PAIRS: usize = 20;

/// The compare card's first value for its pairs: one A B B A block and a pair.
pub const CARD_PAIRS: usize = 3;

/// The compare card's first value for its budget, "run until resolved".
pub const CARD_BUDGET: usize = 12;

/// Most pairs a comparison from the page may reach, "run until resolved"
/// included: each run is a real run on a shared queue.
pub const MAX_PAGE_BUDGET: usize = 40;

/// Pairs added at a time while a budget lasts: two keep the A B B A blocks whole.
const EXTEND_BY: usize = 2;

/// `{"type":"compare","a":STEP,"b":STEP,"pairs":N,"budget":M,"params":{...}}`:
/// `a` and `b` are catalog step ids; `params` (the run parameters, shared by
/// both sides) as a run's; `budget` is how many pairs it may reach in all while
/// the verdict is not resolved (default: `pairs`, no extension). With `prior`
/// (`{"a":[GiB/s...],"b":[...]}`, the `a_gib_per_s` and `b_gib_per_s` of the
/// verdict it follows) it takes that comparison up: those pairs count first,
/// `pairs` more follow, and `budget` counts them all.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompareRequest {
    /// The first step (the verdict says how it does against `b`).
    pub a: String,
    /// The second step.
    pub b: String,
    /// Pairs to run first.
    #[serde(default)]
    pub pairs: Option<usize>,
    /// Pairs it may reach while not resolved.
    #[serde(default)]
    pub budget: Option<usize>,
    /// Both sides' run parameters.
    #[serde(default)]
    pub params: RunParams,
    /// The earlier pairs of the comparison this one takes up.
    #[serde(default)]
    pub prior: Option<PriorRuns>,
}

/// A comparison's pairs so far, as its `verdict` gave them: the page sends them
/// back to ask for more pairs of the same comparison. They are the page's own
/// figures and only its own verdict uses them (nothing of them is saved), so a
/// page that altered them would mislead no one but itself.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriorRuns {
    /// A's rates (GiB/s), in the order they ran.
    pub a: Vec<f64>,
    /// B's rates.
    pub b: Vec<f64>,
}

/// Why a comparison from the page was refused.
#[derive(Debug, thiserror::Error)]
pub enum ComparePageError {
    /// Pairs out of the page's bounds.
    #[error("pairs = {0} is out of range: allowed {MIN_PAGE_PAIRS} to {MAX_PAGE_PAIRS}")]
    Pairs(usize),
    /// A budget below the pairs or past the page's bound.
    #[error("budget = {budget} is out of range: allowed {pairs} (the pairs) to {MAX_PAGE_BUDGET}")]
    Budget {
        /// Asked.
        budget: usize,
        /// The pairs asked.
        pairs: usize,
    },
    /// A side names a tuned variant no search found on this runner, or asks
    /// it at other sizes than its search's.
    #[error("side {side}: {source}")]
    Tuned {
        /// `A` or `B`.
        side: &'static str,
        /// Why.
        #[source]
        source: PastRefusal,
    },
    /// A side's run is not valid.
    #[error("side {side}: {source}")]
    Plan {
        /// `A` or `B`.
        side: &'static str,
        /// Why.
        #[source]
        source: PlanError,
    },
    /// More earlier pairs than a comparison from the page may reach with the
    /// pairs asked.
    #[error("{prior} earlier pairs and {pairs} more is past the page's bound of {MAX_PAGE_BUDGET} pairs")]
    Prior {
        /// The earlier pairs sent.
        prior: usize,
        /// The pairs asked.
        pairs: usize,
    },
    /// The engine refused the comparison.
    #[error(transparent)]
    Compare(#[from] ComparePlanError),
}

/// A comparison from the page under way.
#[derive(Debug)]
pub struct PageCompare {
    job: CompareJob,
    budget: usize,
    stopped: bool,
}

/// Checks a `compare` message into the page's comparison. A side may be a
/// tuned variant (`tuned-STEP`) of `tuned`, run at its search's sizes as a
/// `run` of it is, so its card can set it against its own step head to head.
pub fn plan(
    request: &CompareRequest,
    limits: &Limits,
    tuned: Option<&TunedVariants>,
) -> Result<PageCompare, ComparePageError> {
    let pairs = request.pairs.unwrap_or(DEFAULT_PAGE_PAIRS);
    if !(MIN_PAGE_PAIRS..=MAX_PAGE_PAIRS).contains(&pairs) {
        return Err(ComparePageError::Pairs(pairs));
    }
    let prior = request
        .prior
        .as_ref()
        .map_or(0, |p| p.a.len().max(p.b.len()));
    if prior + pairs > MAX_PAGE_BUDGET {
        return Err(ComparePageError::Prior { prior, pairs });
    }
    let budget = request.budget.unwrap_or(prior + pairs);
    if !(prior + pairs..=MAX_PAGE_BUDGET).contains(&budget) {
        return Err(ComparePageError::Budget {
            budget,
            pairs: prior + pairs,
        });
    }
    let side = |side: &'static str, step: &str| -> Result<Contender, ComparePageError> {
        let params = match tuned {
            Some(tuned) => tuned
                .params_for(step, &request.params)
                .map_err(|source| ComparePageError::Tuned { side, source })?,
            None => request.params.clone(),
        };
        let plan = page_defaults::plan(step, &params, limits)
            .map_err(|source| ComparePageError::Plan { side, source })?;
        Ok(Contender {
            label: step.to_string(),
            plan,
        })
    };
    let (a, b) = (side("A", &request.a)?, side("B", &request.b)?);
    let job = match &request.prior {
        Some(prior) => CompareJob::resume(a, b, &prior.a, &prior.b, pairs)?,
        None => CompareJob::new(a, b, pairs)?,
    };
    Ok(PageCompare {
        job,
        budget,
        stopped: false,
    })
}

impl PageCompare {
    /// The next run to queue (quiet), or `None` when the comparison is over:
    /// its planned pairs are run and either the verdict is resolved or the
    /// budget is spent.
    pub fn next_run(&mut self) -> Option<RunPlan> {
        if self.stopped {
            return None;
        }
        if let Some((_, plan)) = self.job.next_run() {
            return Some(plan);
        }
        let pairs = self.job.total() / 2;
        let open = self
            .job
            .comparison()
            .is_ok_and(|c| c.verdict == Verdict::NotResolved);
        if !open || pairs >= self.budget {
            return None;
        }
        self.job.extend(EXTEND_BY.min(self.budget - pairs)).ok()?;
        self.job.next_run().map(|(_, plan)| plan)
    }

    /// The `leg` event of the run handed out last.
    pub fn leg(&mut self, result: RunResult) -> Event {
        self.job.leg(result)
    }

    /// Hands out no more runs (a cancel).
    pub fn stop(&mut self) {
        self.stopped = true;
        self.job.stop();
    }

    /// The `verdict` event over the pairs run, or an error when they cannot be
    /// compared.
    pub fn verdict(&self) -> Event {
        self.job
            .verdict()
            .unwrap_or_else(|err| Event::error(format!("the comparison stopped: {err}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(pairs: Option<usize>, budget: Option<usize>) -> CompareRequest {
        CompareRequest {
            a: "busy-loop".into(),
            b: "write-read".into(),
            pairs,
            budget,
            params: RunParams::default(),
            prior: None,
        }
    }

    #[test]
    fn pairs_and_budget_are_bounded() {
        let limits = Limits::default();
        assert!(plan(&request(None, None), &limits, None).is_ok());
        for bad in [Some(0), Some(1), Some(MAX_PAGE_PAIRS + 1)] {
            assert!(matches!(
                plan(&request(bad, None), &limits, None),
                Err(ComparePageError::Pairs(_))
            ));
        }
        assert!(matches!(
            plan(&request(Some(5), Some(4)), &limits, None),
            Err(ComparePageError::Budget { .. })
        ));
        assert!(matches!(
            plan(&request(Some(5), Some(MAX_PAGE_BUDGET + 1)), &limits, None),
            Err(ComparePageError::Budget { .. })
        ));
        let mut bad_step = request(None, None);
        bad_step.b = "no-such-step".into();
        assert!(matches!(
            plan(&bad_step, &limits, None),
            Err(ComparePageError::Plan { side: "B", .. })
        ));
    }

    #[test]
    fn every_run_is_quiet_and_a_plain_comparison_stops_at_its_pairs() {
        let mut compare = plan(&request(Some(2), None), &Limits::default(), None).unwrap();
        let steps: Vec<(String, bool)> = std::iter::from_fn(|| compare.next_run())
            .map(|plan| (plan.step.clone(), plan.quiet))
            .collect();
        assert_eq!(steps.len(), 4);
        assert!(steps.iter().all(|(_, quiet)| *quiet));
        assert_eq!(steps[0].0, "busy-loop");
        assert_eq!(steps[1].0, "write-read");
    }

    #[test]
    fn more_pairs_take_up_the_earlier_ones_within_the_bound() {
        let limits = Limits::default();
        let mut more = request(Some(2), None);
        more.prior = Some(PriorRuns {
            a: vec![40.0, 41.0, 39.0],
            b: vec![13.0, 12.5, 13.5],
        });
        let mut compare = plan(&more, &limits, None).unwrap();
        // Runs 7 to 10 of the balanced order: B, A, A, B.
        let steps: Vec<String> = std::iter::from_fn(|| compare.next_run())
            .map(|plan| plan.step)
            .collect();
        assert_eq!(
            steps,
            ["write-read", "busy-loop", "busy-loop", "write-read"]
        );
        more.prior = Some(PriorRuns {
            a: vec![40.0; MAX_PAGE_BUDGET - 1],
            b: vec![13.0; MAX_PAGE_BUDGET - 1],
        });
        assert!(matches!(
            plan(&more, &limits, None),
            Err(ComparePageError::Prior { .. })
        ));
        more.prior = Some(PriorRuns {
            a: vec![40.0, 41.0],
            b: vec![13.0],
        });
        assert!(matches!(
            plan(&more, &limits, None),
            Err(ComparePageError::Compare(_))
        ));
    }
}
