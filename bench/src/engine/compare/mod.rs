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
//! reporting each result through [`CompareJob::leg`], and may [`CompareJob::extend`]
//! it ("run until resolved") while a budget lasts.

pub mod report;

pub use report::{CompareReport, Leg, Side};

use crate::engine::event::{Event, Finished};
use crate::engine::observer::{JobContext, Observer};
use crate::engine::pipe_job::PipeJob;
use crate::engine::result::RunResult;
use crate::stats::bootstrap::DEFAULT_SEED;
use crate::stats::verdict::{self, CompareError, Comparison};
use crate::steps::plan::RunPlan;

/// Most pairs one comparison may run, extensions included.
pub const MAX_PAIRS: usize = 200;

/// Why a comparison was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ComparePlanError {
    /// Fewer than two pairs.
    #[error("a comparison needs at least 2 pairs, got {0}")]
    TooFewPairs(usize),
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
pub fn side_at(index: usize) -> Side {
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
    seed: u64,
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
            seed: DEFAULT_SEED,
        })
    }

    /// Takes up a comparison where an earlier one of the same two sides ended
    /// ("more pairs" after a verdict): its rates so far, pair by pair in the order
    /// they ran, count as this job's first pairs, and `more` pairs follow them in
    /// the same balanced order, so the verdict is over all of them.
    pub fn resume(
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

    /// Plans `more` pairs beyond those planned ("run until resolved").
    pub fn extend(&mut self, more: usize) -> Result<(), ComparePlanError> {
        check_pairs(self.pairs + more)?;
        self.pairs += more;
        self.stopped = false;
        Ok(())
    }

    /// The next run and its side, or `None` when every planned run was handed out.
    pub fn next_run(&mut self) -> Option<(Side, RunPlan)> {
        if self.stopped || self.started >= self.total() {
            return None;
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
        let side = side_at(self.started.saturating_sub(1));
        match side {
            Side::A => self.rates_a.push(result.gib_per_s),
            Side::B => self.rates_b.push(result.gib_per_s),
        }
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
            comparison: self.comparison().ok(),
            result: Box::new(result),
        })
    }

    /// Hands out no more runs.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// The comparison over the whole pairs run so far.
    pub fn comparison(&self) -> Result<Comparison, CompareError> {
        let whole = self.rates_a.len().min(self.rates_b.len());
        verdict::compare(&self.rates_a[..whole], &self.rates_b[..whole], self.seed)
    }

    /// The `verdict` event over the whole pairs run so far.
    pub fn verdict(&self) -> Result<Event, CompareError> {
        let comparison = self.comparison()?;
        Ok(Event::Verdict(Box::new(CompareReport {
            a: self.a.label.clone(),
            b: self.b.label.clone(),
            a_gib_per_s: self.rates_a.clone(),
            b_gib_per_s: self.rates_b.clone(),
            sentence: comparison.sentence(&self.a.label, &self.b.label),
            comparison,
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
                watch: false,
                live: false,
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
        0 | 1 => Err(ComparePlanError::TooFewPairs(pairs)),
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
        let mut job = CompareJob::new(contender("busy-loop"), contender("write-read"), 3).unwrap();
        let runs: Vec<(Side, String)> = std::iter::from_fn(|| job.next_run())
            .map(|(side, plan)| (side, plan.step))
            .collect();
        assert_eq!(runs.len(), 6);
        assert_eq!(runs[0], (A, "busy-loop".to_string()));
        assert_eq!(runs[1], (B, "write-read".to_string()));
        assert_eq!(runs[2], (B, "write-read".to_string()));
    }

    #[test]
    fn runs_are_quiet_and_pairs_are_bounded() {
        let mut job = CompareJob::new(contender("write-read"), contender("write-read"), 2).unwrap();
        assert!(job.next_run().unwrap().1.quiet);
        assert_eq!(
            CompareJob::new(contender("write-read"), contender("write-read"), 1).err(),
            Some(ComparePlanError::TooFewPairs(1))
        );
        assert!(job.extend(MAX_PAIRS).is_err());
        job.extend(1).unwrap();
        assert_eq!(job.total(), 6);
    }

    #[test]
    fn a_resumed_comparison_counts_the_earlier_pairs_and_keeps_the_order() {
        let (a, b) = ([40.0, 41.0], [13.0, 12.5]);
        let mut job =
            CompareJob::resume(contender("busy-loop"), contender("write-read"), &a, &b, 2).unwrap();
        assert_eq!(job.total(), 8);
        assert_eq!(job.comparison().unwrap().pairs, 2);
        // Runs 5 to 8 of A B B A A B B A: A, B, B, A.
        let sides: Vec<Side> = std::iter::from_fn(|| job.next_run())
            .map(|(side, _)| side)
            .collect();
        assert_eq!(sides, vec![Side::A, Side::B, Side::B, Side::A]);
        assert_eq!(
            CompareJob::resume(
                contender("busy-loop"),
                contender("write-read"),
                &a,
                &[13.0],
                2
            )
            .err(),
            Some(ComparePlanError::UnevenPrior { a: 2, b: 1 })
        );
        assert_eq!(
            CompareJob::resume(
                contender("busy-loop"),
                contender("write-read"),
                &[40.0, -1.0],
                &b,
                2
            )
            .err(),
            Some(ComparePlanError::BadPriorRate(-1.0))
        );
    }
}
