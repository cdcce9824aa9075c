//! Comparisons: two configurations run head to head in interleaved pairs
//! (`pipebench compare`, and the page's compare card through the server), judged
//! by [`crate::stats::verdict`].
//!
//! The order is balanced, A B B A A B B A ...: what drifts over a session (a
//! clock warming, a neighbour starting) falls on both sides alike, and neither
//! side always runs first (right after the other has warmed the caches, or
//! filled the page cache). Every run is quiet (not watched, no progress): a
//! watched run pays for its watching, and a comparison must not charge that to
//! either side.
//!
//! Like a sweep it is a job of jobs: the CLI runs it whole ([`CompareJob::run`]);
//! the server takes [`CompareJob::next_run`] and queues each run on its own,
//! reporting each result through [`CompareJob::leg`]. "Run until resolved"
//! ([`CompareJob::until_resolved`]) is a sequential design planned before the
//! first run: a few looks at sizes fixed in advance, each judged at its share
//! of the 5% ([`crate::stats::verdict::Schedule`]), so looking again cannot
//! turn the 95% into less.

pub mod report;

pub use report::{CompareReport, Leg, Side};

use crate::engine::event::{Event, Finished};
use crate::engine::observer::{JobContext, Observer};
use crate::engine::pipe_job::PipeJob;
use crate::engine::result::RunResult;
use crate::stats::intervals::min_pairs;
use crate::stats::verdict::{self, CompareError, Design, Judgement, Schedule, LEVEL};
use crate::steps::plan::RunPlan;

/// Most pairs one comparison may run, extensions included.
pub(crate) const MAX_PAIRS: usize = 200;

/// Why a comparison was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ComparePlanError {
    /// Fewer pairs than can reach 95% at all.
    #[error(
        "{0} pairs cannot resolve at 95%: a signed-rank interval needs at least {min} pairs",
        min = min_pairs(LEVEL)
    )]
    TooFewPairs(usize),
    /// A budget below the pairs or past [`MAX_PAIRS`].
    #[error(
        "a budget of {budget} pairs is out of range: allowed {pairs} (the pairs) to {MAX_PAIRS}"
    )]
    Budget {
        /// Asked.
        budget: usize,
        /// The pairs planned.
        pairs: usize,
    },
    /// More than [`MAX_PAIRS`].
    #[error("{0} pairs is more than a comparison may run ({MAX_PAIRS})")]
    TooManyPairs(usize),
    /// Earlier runs to take up that do not pair up.
    #[error("the earlier runs do not pair up: {a} of A and {b} of B")]
    UnevenPrior {
        /// Earlier runs of A.
        a: usize,
        /// Earlier runs of B.
        b: usize,
    },
    /// An earlier rate of zero, negative or not a number.
    #[error("every earlier rate must be a positive number of GiB/s, got {0}")]
    BadPriorRate(f64),
    /// Pairs taken up after the last look of their plan.
    #[error(
        "this comparison took the last of its {looks} planned look(s), so its verdict is final \
         (another look would spend more than the 5%): start a new comparison, with run until \
         resolved to plan several looks"
    )]
    Final {
        /// The looks its plan had.
        looks: usize,
    },
}

/// One side of a comparison: what it is called and what it runs.
#[derive(Debug, Clone)]
pub struct Contender {
    /// How it is named in the verdict (the step id, or its argv-style text).
    pub label: String,
    /// The validated run.
    pub plan: RunPlan,
}

/// The side that runs at position `index` (from 0) of the balanced order
/// A B B A A B B A ...
pub(crate) fn side_at(index: usize) -> Side {
    match index % 4 {
        0 | 3 => Side::A,
        _ => Side::B,
    }
}

/// A comparison as a job of jobs.
#[derive(Debug, Clone)]
pub struct CompareJob {
    a: Contender,
    b: Contender,
    /// Pairs planned so far.
    pairs: usize,
    /// Runs handed out so far.
    started: usize,
    /// Finished rates (GiB/s) of each side, in the order they ran.
    rates_a: Vec<f64>,
    rates_b: Vec<f64>,
    /// Warnings of the runs (a run whose CPUs were taken from it, ...): each
    /// shape once (its digits masked), its first text and how many runs had it.
    warnings: Vec<(String, String, usize)>,
    stopped: bool,
    /// The looks of this comparison (one, at `pairs`, unless run until
    /// resolved), kept by a comparison taken up ("more pairs").
    schedule: Schedule,
}

impl CompareJob {
    /// A comparison of `pairs` pairs, nothing run yet; its runs are made quiet.
    pub fn new(a: Contender, b: Contender, pairs: usize) -> Result<Self, ComparePlanError> {
        check_pairs(pairs)?;
        let quiet = |mut c: Contender| {
            c.plan.quiet = true;
            c
        };
        Ok(CompareJob {
            a: quiet(a),
            b: quiet(b),
            pairs,
            started: 0,
            rates_a: Vec::new(),
            rates_b: Vec::new(),
            warnings: Vec::new(),
            stopped: false,
            schedule: Schedule::new(pairs, pairs, 1),
        })
    }

    /// Takes up a comparison where an earlier one of the same two sides ended
    /// ("more pairs" after a verdict), in the plan of looks it was given
    /// before its first run: its rates so far, pair by pair in the order they
    /// ran, count as this job's first pairs, and pairs follow in the same
    /// balanced order up to the next look of `schedule` it has not spent
    /// ([`Schedule::look_after`]), judged at that look's level; from there it
    /// goes on as the plan says (to the first look that resolves, or the
    /// last). Never a fresh 95% verdict: once the last look is spent (and
    /// always after a one-look comparison) it is refused as final.
    pub fn take_up(
        a: Contender,
        b: Contender,
        prior_a: &[f64],
        prior_b: &[f64],
        schedule: Schedule,
    ) -> Result<Self, ComparePlanError> {
        let done = prior_a.len().min(prior_b.len());
        let next = schedule.look_after(done).ok_or(ComparePlanError::Final {
            looks: schedule.sizes().len(),
        })?;
        let mut job = CompareJob::resume(a, b, prior_a, prior_b, next - done)?;
        job.schedule = schedule;
        Ok(job)
    }

    /// The earlier rates of the same two sides as this job's first pairs,
    /// and `more` pairs after them, under a one-look plan.
    fn resume(
        a: Contender,
        b: Contender,
        prior_a: &[f64],
        prior_b: &[f64],
        more: usize,
    ) -> Result<Self, ComparePlanError> {
        if prior_a.len() != prior_b.len() {
            return Err(ComparePlanError::UnevenPrior {
                a: prior_a.len(),
                b: prior_b.len(),
            });
        }
        if let Some(bad) = prior_a
            .iter()
            .chain(prior_b)
            .find(|v| !(v.is_finite() && **v > 0.0))
        {
            return Err(ComparePlanError::BadPriorRate(*bad));
        }
        let done = prior_a.len();
        let mut job = CompareJob::new(a, b, done + more)?;
        job.started = done * 2;
        job.rates_a = prior_a.to_vec();
        job.rates_b = prior_b.to_vec();
        Ok(job)
    }

    /// The two sides' labels.
    pub fn labels(&self) -> (&str, &str) {
        (&self.a.label, &self.b.label)
    }

    /// Runs planned now (two per pair).
    pub fn total(&self) -> usize {
        self.pairs * 2
    }

    /// Runs until resolved: looks at up to `looks` sizes from the pairs
    /// planned to `budget`, stopping at the first look that resolves.
    pub fn until_resolved(&mut self, budget: usize, looks: usize) -> Result<(), ComparePlanError> {
        if !(self.pairs..=MAX_PAIRS).contains(&budget) {
            return Err(ComparePlanError::Budget {
                budget,
                pairs: self.pairs,
            });
        }
        self.schedule = Schedule::new(self.pairs, budget, looks);
        Ok(())
    }

    /// The plan of looks, which "more pairs" keeps.
    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// The pairs at the next look of the plan that the pairs judged so far
    /// have not spent, which "more pairs" runs to; `None` when the verdict is
    /// final.
    pub fn next_look(&self) -> Option<usize> {
        self.schedule
            .look_after(self.rates_a.len().min(self.rates_b.len()))
    }

    /// The design a judgement of `n` pairs is taken under.
    fn design_at(&self, n: usize) -> Design {
        self.schedule.design_at(n)
    }

    /// The next run and its side, or `None` when every planned run was handed out.
    /// Once every planned run is in, a run until resolved judges at its look
    /// and plans up to its next look, or ends.
    pub fn next_run(&mut self) -> Option<(Side, RunPlan)> {
        if self.stopped {
            return None;
        }
        if self.started >= self.total() {
            let judgement = self.comparison().ok()?;
            self.pairs = self.schedule.go_on(self.pairs, &judgement)?;
        }
        let side = side_at(self.started);
        self.started += 1;
        let plan = match side {
            Side::A => self.a.plan.clone(),
            Side::B => self.b.plan.clone(),
        };
        Some((side, plan))
    }

    /// Records the result of the run handed out last; its `leg` event.
    pub fn leg(&mut self, result: RunResult) -> Event {
        let side = self.record(result.gib_per_s);
        for warning in &result.warnings {
            // "this run lasted 406 ms" and "... 290 ms" are one warning: keep the
            // first of each shape and count the rest.
            let shape = shape_of(warning);
            match self.warnings.iter_mut().find(|(s, _, _)| *s == shape) {
                Some((_, _, count)) => *count += 1,
                None => self.warnings.push((shape, warning.clone(), 1)),
            }
        }
        Event::Leg(Leg {
            side,
            index: self.rates_a.len() + self.rates_b.len(),
            of: self.total(),
            comparison: self
                .schedule
                .is_look(self.rates_b.len())
                .then(|| self.comparison().ok())
                .flatten()
                .filter(|_| self.rates_a.len() == self.rates_b.len()),
            result: Box::new(result),
        })
    }

    /// Records the rate of the run handed out last on its side; the side.
    pub(crate) fn record(&mut self, gib_per_s: f64) -> Side {
        let side = side_at(self.started.saturating_sub(1));
        match side {
            Side::A => self.rates_a.push(gib_per_s),
            Side::B => self.rates_b.push(gib_per_s),
        }
        side
    }

    /// Hands out no more runs.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// The judgement of the whole pairs run so far, under this job's design.
    pub fn comparison(&self) -> Result<Judgement, CompareError> {
        let whole = self.rates_a.len().min(self.rates_b.len());
        verdict::judge_paired(
            &self.rates_a[..whole],
            &self.rates_b[..whole],
            self.design_at(whole),
        )
        .map(|j| j.named(&self.a.label, &self.b.label))
    }

    /// The `verdict` event over the whole pairs run so far.
    pub fn verdict(&self) -> Result<Event, CompareError> {
        let judgement = self.comparison()?;
        Ok(Event::Verdict(Box::new(CompareReport {
            a: self.a.label.clone(),
            b: self.b.label.clone(),
            a_gib_per_s: self.rates_a.clone(),
            b_gib_per_s: self.rates_b.clone(),
            judgement,
            series: None,
            next_look: None,
            warnings: self
                .warnings
                .iter()
                .map(|(_, first, count)| match count {
                    1 => first.clone(),
                    n => format!("{first} (and {} more runs like it)", n - 1),
                })
                .collect(),
        })))
    }

    /// Runs every planned run in turn on this thread, telling `observer` of each
    /// run's events and of each `leg`; returns `verdict`, or the event that ended
    /// it early (an error, a cancel), or `None` when the observer went away.
    pub fn run(&mut self, context: &JobContext, observer: &mut dyn Observer) -> Option<Event> {
        while let Some((_, plan)) = self.next_run() {
            let job = PipeJob {
                plan,
                occupancy: false,
                progress: false,
            };
            match job.run(context, observer)? {
                Event::Result(Finished::Pipe(result)) => {
                    let leg = self.leg(*result);
                    observer.event(leg);
                }
                other => return Some(other),
            }
        }
        Some(
            self.verdict()
                .unwrap_or_else(|err| Event::error(err.to_string())),
        )
    }
}

/// A warning with its figures masked, to tell one kind of warning from another.
fn shape_of(warning: &str) -> String {
    warning
        .chars()
        .map(|c| {
            if c.is_ascii_digit() || c == '.' {
                '#'
            } else {
                c
            }
        })
        .collect()
}

fn check_pairs(pairs: usize) -> Result<(), ComparePlanError> {
    match pairs {
        p if p < min_pairs(LEVEL) => Err(ComparePlanError::TooFewPairs(pairs)),
        p if p > MAX_PAIRS => Err(ComparePlanError::TooManyPairs(p)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::steps::plan::{Limits, RunParams};

    fn contender(step: &str) -> Contender {
        Contender {
            label: step.to_string(),
            plan: RunPlan::for_step_id(step, &RunParams::default(), &Limits::default()).unwrap(),
        }
    }

    #[test]
    fn the_order_is_balanced() {
        let order: Vec<Side> = (0..8).map(side_at).collect();
        use Side::{A, B};
        assert_eq!(order, vec![A, B, B, A, A, B, B, A]);
        let mut job = CompareJob::new(contender("busy-loop"), contender("write-read"), 6).unwrap();
        let runs: Vec<(Side, String)> = std::iter::from_fn(|| job.next_run())
            .map(|(side, plan)| (side, plan.step))
            .collect();
        assert_eq!(runs.len(), 12);
        assert_eq!(runs[0], (A, "busy-loop".to_string()));
        assert_eq!(runs[1], (B, "write-read".to_string()));
        assert_eq!(runs[2], (B, "write-read".to_string()));
    }

    #[test]
    fn runs_are_quiet_and_pairs_are_bounded() {
        let mut job = CompareJob::new(contender("write-read"), contender("write-read"), 6).unwrap();
        assert!(job.next_run().unwrap().1.quiet);
        let five = CompareJob::new(contender("write-read"), contender("write-read"), 5).err();
        assert_eq!(five, Some(ComparePlanError::TooFewPairs(5)));
        assert!(five
            .unwrap()
            .to_string()
            .starts_with("5 pairs cannot resolve at 95%"));
        assert!(job.until_resolved(MAX_PAIRS + 1, 3).is_err());
        assert!(job.until_resolved(5, 3).is_err());
        job.until_resolved(10, 3).unwrap();
        assert_eq!(job.total(), 12);
    }

    /// "More pairs" takes a comparison up at the next look of its plan,
    /// judged at that look's level, in the same balanced order; after a
    /// one-look comparison, or the last look, it is refused as final.
    #[test]
    fn a_comparison_taken_up_goes_on_to_its_next_planned_look() {
        let (a, b) = (
            [40.0, 41.0, 40.5, 39.0, 40.1, 40.2],
            [13.0, 12.5, 13.1, 12.9, 13.0, 13.2],
        );
        let take_up = |rates_b: &[f64], schedule: Schedule| {
            CompareJob::take_up(
                contender("busy-loop"),
                contender("write-read"),
                &a,
                rates_b,
                schedule,
            )
        };
        let plan = Schedule::new(6, 10, 3);
        assert_eq!(plan.sizes(), &[6, 8, 10]);
        let mut job = take_up(&b, plan.clone()).unwrap();
        assert_eq!((job.total(), job.next_look()), (16, Some(8)));
        let so_far = job.comparison().unwrap();
        assert_eq!(so_far.pairs, Some(6));
        assert_eq!((so_far.look, so_far.looks), (Some(1), Some(3)));
        // Runs 13 to 16 of A B B A A B B A: A, B, B, A.
        let mut sides = Vec::new();
        while let Some((side, _)) = job.next_run() {
            sides.push(side);
            job.record(if side == Side::A { 40.0 } else { 13.0 });
        }
        assert_eq!(sides, vec![Side::A, Side::B, Side::B, Side::A]);
        let second = job.comparison().unwrap();
        assert_eq!(
            (second.look, second.looks, second.pairs),
            (Some(2), Some(3), Some(8))
        );
        assert!((second.level_this_look - (1.0 - 0.05 / 3.0)).abs() < 1e-12);
        assert_eq!(job.next_look(), Some(10));
        // A one-look comparison spent its 5% at once, and a last look is last.
        let final_ = |r: Result<CompareJob, ComparePlanError>| r.err();
        assert_eq!(
            final_(take_up(&b, Schedule::new(6, 6, 3))),
            Some(ComparePlanError::Final { looks: 1 })
        );
        let ten = [40.0; 10];
        assert_eq!(
            final_(CompareJob::take_up(
                contender("busy-loop"),
                contender("write-read"),
                &ten,
                &[13.0; 10],
                plan.clone()
            )),
            Some(ComparePlanError::Final { looks: 3 })
        );
        assert!(ComparePlanError::Final { looks: 1 }
            .to_string()
            .contains("its verdict is final"));
        assert_eq!(
            final_(take_up(&[13.0], plan.clone())),
            Some(ComparePlanError::UnevenPrior { a: 6, b: 1 })
        );
        let mut bad = b;
        bad[1] = -1.0;
        assert_eq!(
            final_(take_up(&bad, plan)),
            Some(ComparePlanError::BadPriorRate(-1.0))
        );
    }

    /// The job's own until-resolved loop on null data: A and B drawn alike
    /// (log-normal, log-sd 0.1, plus a drift of 20% across the run order in
    /// every other try), the job deciding after each look whether to go on.
    /// 2,000 tries per budget: the share that ends in a claim stays within 5%
    /// plus 2.33 binomial standard errors (6.13%).
    #[test]
    fn the_jobs_until_resolved_loop_claims_at_most_one_time_in_twenty() {
        use crate::stats::rng::SplitMix64;
        use crate::stats::verdict::Verdict;
        let (a, b) = (contender("write-read"), contender("write-read"));
        let tries = 2000;
        let bound = 0.05 + 2.33 * (0.05f64 * 0.95 / tries as f64).sqrt();
        for (budget, seed) in [(16, 90), (40, 91)] {
            let mut rng = SplitMix64::new(seed);
            let (mut claims, mut to_last) = (0, 0);
            for t in 0..tries {
                let mut job =
                    CompareJob::new(a.clone(), b.clone(), crate::stats::DEFAULT_PAIRS).unwrap();
                job.until_resolved(budget, crate::stats::verdict::Schedule::DEFAULT_LOOKS)
                    .unwrap();
                let mut position = 0;
                while job.next_run().is_some() {
                    let drift = match t % 2 {
                        1 => 1.2f64.ln() * position as f64 / (2 * budget) as f64,
                        _ => 0.0,
                    };
                    job.record((0.1 * rng.normal() + drift).exp());
                    position += 1;
                }
                let judged = job.comparison().unwrap();
                claims += usize::from(matches!(judged.verdict, Verdict::Faster | Verdict::Slower));
                to_last += usize::from(judged.pairs == Some(budget));
            }
            let share = claims as f64 / tries as f64;
            eprintln!("the job's until resolved to {budget} pairs, null: {share}");
            assert!(share <= bound, "{budget}: {share}");
            // It did look again: most tries ran to the last look.
            assert!(to_last > tries / 2, "{budget}: {to_last}");
        }
    }
}
