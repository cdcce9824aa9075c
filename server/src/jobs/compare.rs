//! The `compare` kind: a `compare` message's fields, the server's
//! bounds on pairs and on the "run until resolved" budget, and the page's
//! comparison as the engine's [`CompareJob`], driven run by run through the
//! queue (like a sweep) so other pages' runs can take their turn in between.
//!
//! Every run of a comparison is quiet (the engine makes it so): a watched run
//! pays for its watching, and a comparison must charge that to neither side.

use std::sync::Arc;

use pipebench::engine::compare::{CompareJob, ComparePlanError, Contender};
use pipebench::engine::event::{Event, Failure};
use pipebench::engine::result::RunResult;
use pipebench::stats::verdict::Schedule;
use pipebench::steps::plan::{Limits, PlanError, RunParams, RunPlan};
use serde::Deserialize;

use crate::jobs::planned::{refuse, Planned, Series};
use crate::jobs::requests::Kind;
use crate::jobs::run;
use crate::state::AppState;
use crate::store::compare_series::{new_series_id, SeriesPairs, SeriesStore};
use crate::store::tuned::{TunedVariants, VariantRefusal};

/// Pairs a comparison runs unless the page asks for another number: the
/// CLI's default, above the 6 a 95% interval needs.
pub(crate) const DEFAULT_PAGE_PAIRS: usize = pipebench::stats::DEFAULT_PAIRS;

/// Fewest pairs a comparison from the page runs: fewer cannot reach 95% at all
/// (the signed-rank interval of 5 pairs all one way is still only 93.75%).
pub(crate) const MIN_PAGE_PAIRS: usize = 6;

/// Most pairs the page may ask for up front.
pub(crate) const MAX_PAGE_PAIRS: usize = 20;

/// The compare card's first value for its pairs.
pub(crate) const CARD_PAIRS: usize = DEFAULT_PAGE_PAIRS;

/// The compare card's first value for its budget, "run until resolved".
pub(crate) const CARD_BUDGET: usize = 16;

/// Most pairs a comparison from the page may reach, "run until resolved"
/// included: each run is a real run on a shared queue.
pub(crate) const MAX_PAGE_BUDGET: usize = 40;

/// Looks a comparison run until resolved takes, at sizes spread evenly from
/// its pairs to its budget, each judged at 1 - 5%/looks.
pub(crate) const UNTIL_RESOLVED_LOOKS: usize = Schedule::DEFAULT_LOOKS;

/// `{"type":"compare","a":STEP,"b":STEP,"pairs":N,"budget":M,"params":{...}}`:
/// `a` and `b` are catalog step ids; `params` (the run parameters, shared by
/// both sides) as a run's; `budget` is how many pairs it may reach in all while
/// the verdict is not resolved (default: `pairs`, no extension). With `more_of`
/// (the `series` of a verdict this server gave, and no `pairs` or `budget`) it
/// takes that comparison up in the plan of looks it had from its first run:
/// its pairs, as this server measured them, count first, and pairs follow up
/// to the next look of the plan (the verdict's `next_look`), judged at that
/// look's share of the 5%; once the plan's last look is spent (at once for a
/// comparison of one look) the verdict is final and `more_of` is refused. The
/// old `prior` (figures sent back by the page) is refused: a verdict may rest
/// only on pairs this server measured.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CompareRequest {
    /// The first step (the verdict says how it does against `b`).
    pub(crate) a: String,
    /// The second step.
    pub(crate) b: String,
    /// Pairs to run first.
    #[serde(default)]
    pub(crate) pairs: Option<usize>,
    /// Pairs it may reach while not resolved.
    #[serde(default)]
    pub(crate) budget: Option<usize>,
    /// Both sides' run parameters.
    #[serde(default)]
    pub(crate) params: RunParams,
    /// The series id of the comparison this one takes up.
    #[serde(default)]
    pub(crate) more_of: Option<String>,
    /// Figures of earlier pairs sent by the page: always refused (kept in the
    /// message's shape so an older page hears why, not "unknown field").
    #[serde(default)]
    pub(crate) prior: Option<serde_json::Value>,
}

/// Why a comparison from the page was refused.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ComparePageError {
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
        source: VariantRefusal,
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
    /// "More pairs" with pairs or a budget of its own: it runs to the next
    /// look its comparison planned, no more and no fewer.
    #[error(
        "more pairs run to the next look the comparison planned (its verdict's `next_look`): \
         leave out `pairs` and `budget`"
    )]
    PlannedLook,
    /// Figures of earlier pairs sent by the page.
    #[error(
        "a comparison takes up only pairs this server measured: send `more_of` with the \
         `series` of its verdict, not the figures (`prior`)"
    )]
    ForeignPrior,
    /// A series id this server does not hold (never given, or forgotten since).
    #[error(
        "no comparison `{0}` is held by this server (it restarted, or the id is not one it \
         gave): start a new comparison"
    )]
    UnknownSeries(String),
    /// "More pairs" of a series for other sides or other parameters.
    #[error("more pairs must be of the same two steps with the same parameters as the comparison they take up")]
    OtherSeries,
    /// The engine refused the comparison.
    #[error(transparent)]
    Compare(#[from] ComparePlanError),
}

/// A comparison from the page under way.
#[derive(Debug)]
pub(crate) struct PageCompare {
    job: CompareJob,
    stopped: bool,
    /// Its series id and where its pairs are kept once it ends.
    series: String,
    store: Arc<SeriesStore>,
    params: RunParams,
}

/// Checks a `compare` message into the page's comparison. A side may be a
/// tuned variant (`tuned-STEP`) of `tuned`, run at its search's sizes as a
/// `run` of it is, so its card can set it against its own step head to head.
pub(crate) fn plan(
    request: &CompareRequest,
    limits: &Limits,
    tuned: Option<&TunedVariants>,
    store: &Arc<SeriesStore>,
) -> Result<PageCompare, ComparePageError> {
    if request.prior.is_some() {
        return Err(ComparePageError::ForeignPrior);
    }
    let earlier = match &request.more_of {
        Some(id) => {
            let held = store
                .take_up(id)
                .ok_or_else(|| ComparePageError::UnknownSeries(id.clone()))?;
            if held.a != request.a || held.b != request.b || held.params != request.params {
                return Err(ComparePageError::OtherSeries);
            }
            Some(held)
        }
        None => None,
    };
    let side = |side: &'static str, step: &str| -> Result<Contender, ComparePageError> {
        let params = match tuned {
            Some(tuned) => tuned
                .params_for(step, &request.params)
                .map_err(|source| ComparePageError::Tuned { side, source })?,
            None => request.params.clone(),
        };
        let plan = run::plan(step, &params, limits)
            .map_err(|source| ComparePageError::Plan { side, source })?;
        Ok(Contender {
            label: step.to_string(),
            plan,
        })
    };
    let (a, b) = (side("A", &request.a)?, side("B", &request.b)?);
    let job = match &earlier {
        Some(held) => {
            if request.pairs.is_some() || request.budget.is_some() {
                return Err(ComparePageError::PlannedLook);
            }
            CompareJob::take_up(a, b, &held.rates_a, &held.rates_b, held.schedule.clone())?
        }
        None => {
            let (pairs, budget) = bounded(request)?;
            let mut job = CompareJob::new(a, b, pairs)?;
            job.until_resolved(budget, UNTIL_RESOLVED_LOOKS)?;
            job
        }
    };
    Ok(PageCompare {
        job,
        stopped: false,
        series: request.more_of.clone().unwrap_or_else(new_series_id),
        store: Arc::clone(store),
        params: request.params.clone(),
    })
}

/// A new comparison's pairs and budget, within the page's bounds.
fn bounded(request: &CompareRequest) -> Result<(usize, usize), ComparePageError> {
    let pairs = request.pairs.unwrap_or(DEFAULT_PAGE_PAIRS);
    if !(MIN_PAGE_PAIRS..=MAX_PAGE_PAIRS).contains(&pairs) {
        return Err(ComparePageError::Pairs(pairs));
    }
    let budget = request.budget.unwrap_or(pairs);
    if !(pairs..=MAX_PAGE_BUDGET).contains(&budget) {
        return Err(ComparePageError::Budget { budget, pairs });
    }
    Ok((pairs, budget))
}

impl PageCompare {
    /// The next run to queue (quiet), or `None` when the comparison is over:
    /// its looks are taken up to the first that resolves, or the last.
    pub(crate) fn next_run(&mut self) -> Option<RunPlan> {
        if self.stopped {
            return None;
        }
        self.job.next_run().map(|(_, plan)| plan)
    }

    /// The `leg` event of the run handed out last.
    pub(crate) fn leg(&mut self, result: RunResult) -> Event {
        self.job.leg(result)
    }

    /// Hands out no more runs (a cancel).
    pub(crate) fn stop(&mut self) {
        self.stopped = true;
        self.job.stop();
    }

    /// The `verdict` event over the pairs run, carrying the series id "more
    /// pairs" names and the pairs of the next planned look it would run to
    /// (none when the verdict is final); the pairs are kept under the id. An
    /// error when they cannot be compared.
    pub(crate) fn verdict(&self) -> Event {
        match self.job.verdict() {
            Ok(Event::Verdict(mut report)) => {
                let (a, b) = self.job.labels();
                self.store.keep(
                    self.series.clone(),
                    SeriesPairs {
                        a: a.to_string(),
                        b: b.to_string(),
                        params: self.params.clone(),
                        rates_a: report.a_gib_per_s.clone(),
                        rates_b: report.b_gib_per_s.clone(),
                        schedule: self.job.schedule().clone(),
                    },
                );
                report.series = Some(self.series.clone());
                report.next_look = self.job.next_look();
                Event::Verdict(report)
            }
            Ok(other) => other,
            Err(err) => Event::error(format!("the comparison stopped: {err}")),
        }
    }
}

impl Kind for CompareRequest {
    const EXAMPLE: &'static str =
        r#"{"type":"compare","a":"busy-loop","b":"write-read","pairs":5}"#;

    fn plan(self, state: &AppState) -> Result<Planned, Failure> {
        let planned = plan(
            &self,
            &state.limits,
            Some(&state.tuned),
            &state.compare_series,
        )
        .map_err(refuse)?;
        Planned::series(Box::new(planned), None)
    }
}

impl Series for PageCompare {
    fn noun(&self) -> &'static str {
        "comparison"
    }
    fn next_run(&mut self) -> Option<RunPlan> {
        PageCompare::next_run(self)
    }
    fn on_result(&mut self, result: RunResult) -> Event {
        self.leg(result)
    }
    fn last_word(&self, run: u64) -> String {
        pipebench::engine::event::ForRun {
            run,
            event: &self.verdict(),
        }
        .to_json()
    }
    fn on_cancel(&self) -> Option<Event> {
        // A cancel after some pairs still gets the verdict over the pairs run.
        match self.verdict() {
            verdict @ Event::Verdict(_) => Some(verdict),
            _ => None,
        }
    }
    fn stop(&mut self) {
        PageCompare::stop(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pipebench::engine::compare::ComparePlanError;

    fn request(pairs: Option<usize>, budget: Option<usize>) -> CompareRequest {
        CompareRequest {
            a: "busy-loop".into(),
            b: "write-read".into(),
            pairs,
            budget,
            params: RunParams::default(),
            more_of: None,
            prior: None,
        }
    }

    fn store() -> Arc<SeriesStore> {
        Arc::new(SeriesStore::default())
    }

    #[test]
    fn pairs_and_budget_are_bounded() {
        let limits = Limits::default();
        assert!(plan(&request(None, None), &limits, None, &store()).is_ok());
        for bad in [Some(0), Some(1), Some(5), Some(MAX_PAGE_PAIRS + 1)] {
            assert!(matches!(
                plan(&request(bad, None), &limits, None, &store()),
                Err(ComparePageError::Pairs(_))
            ));
        }
        assert!(matches!(
            plan(&request(Some(8), Some(7)), &limits, None, &store()),
            Err(ComparePageError::Budget { .. })
        ));
        assert!(matches!(
            plan(
                &request(Some(8), Some(MAX_PAGE_BUDGET + 1)),
                &limits,
                None,
                &store()
            ),
            Err(ComparePageError::Budget { .. })
        ));
        let mut bad_step = request(None, None);
        bad_step.b = "no-such-step".into();
        assert!(matches!(
            plan(&bad_step, &limits, None, &store()),
            Err(ComparePageError::Plan { side: "B", .. })
        ));
    }

    #[test]
    fn every_run_is_quiet_and_a_plain_comparison_stops_at_its_pairs() {
        let mut compare =
            plan(&request(Some(6), None), &Limits::default(), None, &store()).unwrap();
        let steps: Vec<(String, bool)> = std::iter::from_fn(|| compare.next_run())
            .map(|plan| (plan.step.clone(), plan.quiet))
            .collect();
        assert_eq!(steps.len(), 12);
        assert!(steps.iter().all(|(_, quiet)| *quiet));
        assert_eq!(steps[0].0, "busy-loop");
        assert_eq!(steps[1].0, "write-read");
    }

    #[test]
    fn figures_sent_back_by_the_page_are_refused_and_only_a_held_series_is_taken_up() {
        let limits = Limits::default();
        let store = store();
        let mut forged = request(Some(2), None);
        forged.prior = Some(serde_json::json!({"a": [1e300, 40.0], "b": [1e-300, 13.0]}));
        assert!(matches!(
            plan(&forged, &limits, None, &store),
            Err(ComparePageError::ForeignPrior)
        ));
        let mut unknown = request(Some(2), None);
        unknown.more_of = Some("0123456789abcdef".into());
        assert!(matches!(
            plan(&unknown, &limits, None, &store),
            Err(ComparePageError::UnknownSeries(_))
        ));
        // A series the server holds: its pairs come first, the pairs asked follow.
        let id = new_series_id();
        store.keep(
            id.clone(),
            SeriesPairs {
                a: "busy-loop".into(),
                b: "write-read".into(),
                params: RunParams::default(),
                rates_a: vec![40.0, 41.0, 39.0, 40.5, 39.5, 40.2],
                rates_b: vec![13.0, 12.5, 13.5, 12.8, 13.2, 13.1],
                schedule: Schedule::new(6, 10, 3),
            },
        );
        let mut more = request(None, None);
        more.more_of = Some(id.clone());
        let mut compare = plan(&more, &limits, None, &store).unwrap();
        // Runs 13 to 16 of the balanced order: A, B, B, A.
        let steps: Vec<String> = std::iter::from_fn(|| compare.next_run())
            .take(4)
            .map(|plan| plan.step)
            .collect();
        assert_eq!(
            steps,
            ["busy-loop", "write-read", "write-read", "busy-loop"]
        );
        let mut other = more.clone();
        other.b = "vmsplice".into();
        assert!(matches!(
            plan(&other, &limits, None, &store),
            Err(ComparePageError::OtherSeries)
        ));
        // More pairs run to the planned look, never to a number asked.
        more.pairs = Some(2);
        assert!(matches!(
            plan(&more, &limits, None, &store),
            Err(ComparePageError::PlannedLook)
        ));
        // A one-look comparison spent its 5% at that look: final.
        let spent = new_series_id();
        store.keep(
            spent.clone(),
            SeriesPairs {
                schedule: Schedule::new(6, 6, 3),
                ..store.take_up(&id).unwrap()
            },
        );
        let mut after_final = request(None, None);
        after_final.more_of = Some(spent);
        let err = plan(&after_final, &limits, None, &store).err().unwrap();
        assert!(
            matches!(
                err,
                ComparePageError::Compare(ComparePlanError::Final { looks: 1 })
            ),
            "{err}"
        );
    }

    /// A run's result at `gib_per_s`, as a leg of a comparison hears it.
    fn result_at(template: &RunResult, gib_per_s: f64) -> RunResult {
        RunResult {
            gib_per_s,
            ..template.clone()
        }
    }

    /// A result of `step` to copy figures into.
    fn template(step: &str) -> RunResult {
        RunResult {
            elapsed_ms: 100.0,
            iterations: 1,
            watched: Some(false),
            ..RunResult::forged(step).unwrap()
        }
    }

    /// Runs `compare` to its end on made-up rates drawn by `rate` (given the
    /// run's place in the whole series) and returns its verdict.
    fn finish(
        compare: &mut PageCompare,
        template: &RunResult,
        place: &mut usize,
        rate: &mut impl FnMut(usize) -> f64,
    ) -> Box<pipebench::engine::compare::CompareReport> {
        while compare.next_run().is_some() {
            compare.leg(result_at(template, rate(*place)));
            *place += 1;
        }
        match compare.verdict() {
            Event::Verdict(report) => report,
            other => panic!("no verdict: {other:?}"),
        }
    }

    /// Null replays of the compare card's "More pairs" through the server's
    /// own path (plan, the kept series, the job, the verdict): A and B drawn
    /// alike (log-normal, log-sd 0.1, and in every other try a drift of 20%
    /// across the run order). A reader runs a comparison, plain (8 pairs)
    /// or until resolved (8 to 16 pairs, 3 looks), then presses "More pairs"
    /// whenever the verdict offers another look (`next_look`), whatever it
    /// said, until it is final; a try is a false claim when any verdict it
    /// showed claims a difference. 2,000 tries each: the share may pass 5%
    /// only by the binomial margin (2.33 standard errors: 6.13%).
    #[test]
    fn pressing_more_pairs_whenever_offered_is_wrong_at_most_one_time_in_twenty() {
        use pipebench::stats::rng::SplitMix64;
        use pipebench::stats::verdict::Verdict;
        let limits = Limits::default();
        let tries = 2000;
        let bound = 0.05 + 2.33 * (0.05f64 * 0.95 / tries as f64).sqrt();
        let template = template("write-read");
        for (budget, seed) in [(None, 100), (Some(16), 101)] {
            let store = store();
            let mut rng = SplitMix64::new(seed);
            let (mut claims, mut taken_up, mut finals) = (0, 0, 0);
            for t in 0..tries {
                let mut rate = |place: usize| {
                    let drift = match t % 2 {
                        1 => 1.2f64.ln() * place as f64 / 80.0,
                        _ => 0.0,
                    };
                    (0.1 * rng.normal() + drift).exp()
                };
                let mut asked = CompareRequest {
                    a: "write-read".into(),
                    ..request(Some(8), budget)
                };
                let mut place = 0;
                let mut claimed = false;
                loop {
                    let mut compare = plan(&asked, &limits, None, &store).unwrap();
                    let verdict = finish(&mut compare, &template, &mut place, &mut rate);
                    claimed |=
                        matches!(verdict.judgement.verdict, Verdict::Faster | Verdict::Slower);
                    if verdict.next_look.is_none() {
                        // Final: "More pairs" is refused, as the card no longer offers it.
                        asked.more_of = verdict.series.clone();
                        (asked.pairs, asked.budget) = (None, None);
                        assert!(plan(&asked, &limits, None, &store).is_err());
                        finals += 1;
                        break;
                    }
                    taken_up += 1;
                    asked.more_of = verdict.series.clone();
                    (asked.pairs, asked.budget) = (None, None);
                }
                claims += usize::from(claimed);
            }
            let share = claims as f64 / tries as f64;
            eprintln!(
                "more pairs whenever offered, budget {budget:?}: {share} claims, {taken_up} taken up"
            );
            assert!(share <= bound, "{budget:?}: {share}");
            assert_eq!(finals, tries);
            if budget.is_some() {
                // Resolved early, it was taken up to a later look.
                assert!(taken_up > 0, "{budget:?}");
            }
        }
    }
}
