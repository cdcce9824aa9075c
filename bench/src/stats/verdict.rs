//! A judgement of A against B: the ratio A/B, its interval and a verdict, with
//! the method, the design and the level that stand behind the "95%".
//!
//! - Runs in pairs (a comparison's A B B A order): the signed-rank interval of
//!   the pairs' log-ratios ln(a/b), so each pair cancels what the machine did
//!   while it ran.
//! - Runs on their own (a lab's tasks, a table's rows): the rank-sum interval
//!   of the shift between ln(a) and ln(b).
//!
//! Ratios are exp() of the log-scale estimate and ends. The verdict follows the
//! interval: A is faster when it lies wholly above 1, slower wholly below,
//! otherwise not resolved; with fewer values than can reach the level at all
//! (6 pairs, 4 runs a side at 95%) there is no interval and the verdict is
//! `too_few`, never a claim.
//!
//! Looking again as runs arrive and stopping at the first clear interval (run
//! until resolved) would claim a difference far more often than 1 time in 20.
//! A [`Design::Sequential`] run fixes its number of looks K in advance and
//! spends the 5% evenly across them (Bonferroni: each look's interval at
//! 1 - 0.05/K), so the chance of any false claim over all K looks stays at
//! most 5% whatever the looks' sizes and however the runs drift.

use serde::{Deserialize, Serialize};

use super::intervals::{
    min_pairs, min_runs_a_side, rank_sum_interval, signed_rank_interval, ShiftInterval,
};

/// The confidence level of every interval pipebook states.
pub const LEVEL: f64 = 0.95;

/// Most looks a sequential design may take: each costs its share of the 5%.
pub const MAX_LOOKS: usize = 10;

/// What the runs say about A against B.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The whole interval lies above 1: A is faster.
    Faster,
    /// The whole interval lies below 1: A is slower.
    Slower,
    /// The interval holds 1.
    NotResolved,
    /// Too few runs for any interval to reach the level: no verdict.
    TooFew,
}

/// Which interval judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Wilcoxon signed rank over pairs.
    SignedRank,
    /// Mann-Whitney rank sum over two separate sets of runs.
    RankSum,
}

/// When the judgement is taken: once at a size fixed in advance, or at look
/// `look` (from 1) of `looks` fixed in advance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Design {
    /// One look.
    Fixed,
    /// One of several looks, the error spent evenly across them.
    Sequential {
        /// This look, from 1.
        look: usize,
        /// Looks planned.
        looks: usize,
    },
}

impl Design {
    /// The level of this look's interval: 95% for a fixed design,
    /// 1 - 0.05 / K at each of K looks.
    pub fn level_this_look(&self) -> f64 {
        match self {
            Design::Fixed => LEVEL,
            Design::Sequential { looks, .. } => 1.0 - (1.0 - LEVEL) / *looks as f64,
        }
    }

    /// A design from a look and a number of looks (both or neither).
    pub fn of(look: Option<usize>, looks: Option<usize>) -> Result<Design, CompareError> {
        match (look, looks) {
            (None, None) => Ok(Design::Fixed),
            (Some(look), Some(looks)) if (1..=looks).contains(&look) && looks <= MAX_LOOKS => {
                Ok(Design::Sequential { look, looks })
            }
            _ => Err(CompareError::BadLook {
                look: look.unwrap_or(0),
                looks: looks.unwrap_or(0),
            }),
        }
    }
}

/// Why runs could not be judged.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompareError {
    /// Paired runs with A and B of different lengths.
    #[error("A has {a} runs and B has {b}: paired runs must pair up")]
    Unpaired {
        /// Runs of A.
        a: usize,
        /// Runs of B.
        b: usize,
    },
    /// A rate of zero, negative or not a number.
    #[error("every rate must be a positive finite number, got {0}")]
    BadRate(f64),
    /// A look outside its design.
    #[error(
        "look {look} of {looks} is not a design: give both, look from 1 to looks, looks at \
         most {MAX_LOOKS}"
    )]
    BadLook {
        /// The look asked.
        look: usize,
        /// The looks asked.
        looks: usize,
    },
}

/// A judgement of A's runs against B's (the `/api/judge` answer, a comparison's
/// `leg` and `verdict`, `pipebench compare --json`, a lab check's `judged`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    /// Which interval.
    pub method: Method,
    /// The overall level promised (0.95).
    pub level: f64,
    /// `fixed` or `sequential`.
    pub design: DesignName,
    /// The look this is, for a sequential design.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub look: Option<usize>,
    /// The looks planned, for a sequential design.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub looks: Option<usize>,
    /// The level of this look's interval.
    pub level_this_look: f64,
    /// Runs of A.
    pub n_a: usize,
    /// Runs of B.
    pub n_b: usize,
    /// Pairs, for paired runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs: Option<usize>,
    /// The estimate of A/B (Hodges-Lehmann on the log scale); null when too few.
    pub ratio: Option<f64>,
    /// The interval's lower end; null when too few.
    pub ci_low: Option<f64>,
    /// Its upper end; null when too few.
    pub ci_high: Option<f64>,
    /// The verdict.
    pub verdict: Verdict,
    /// The fewest runs (pairs, or runs a side) that can reach this look's level.
    pub min_n: usize,
    /// The judgement in words.
    pub sentence: String,
}

/// A design's name in a [`Judgement`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DesignName {
    /// One look.
    Fixed,
    /// Several looks.
    Sequential,
}

fn check_rates(a: &[f64], b: &[f64]) -> Result<(), CompareError> {
    match a.iter().chain(b).find(|v| !(v.is_finite() && **v > 0.0)) {
        Some(bad) => Err(CompareError::BadRate(*bad)),
        None => Ok(()),
    }
}

/// Judges the pairs `(a[i], b[i])` (rates or any positive figure; the ratio is
/// A/B) with the signed-rank interval of their log-ratios.
pub fn judge_paired(a: &[f64], b: &[f64], design: Design) -> Result<Judgement, CompareError> {
    if a.len() != b.len() {
        return Err(CompareError::Unpaired {
            a: a.len(),
            b: b.len(),
        });
    }
    check_rates(a, b)?;
    let level = design.level_this_look();
    let min_n = min_pairs(level);
    // ln a - ln b, not ln(a / b): the quotient of extreme rates could overflow.
    let logs: Vec<f64> = a.iter().zip(b).map(|(x, y)| x.ln() - y.ln()).collect();
    let interval = (a.len() >= min_n)
        .then(|| signed_rank_interval(&logs, level))
        .flatten();
    Ok(Judgement::new(
        Method::SignedRank,
        design,
        (a.len(), b.len()),
        interval,
        min_n,
    ))
}

/// Judges two separate sets of runs with the rank-sum interval of the shift
/// between ln(a) and ln(b).
pub fn judge_unpaired(a: &[f64], b: &[f64], design: Design) -> Result<Judgement, CompareError> {
    check_rates(a, b)?;
    let level = design.level_this_look();
    let min_n = min_runs_a_side(level);
    let ln = |v: &[f64]| v.iter().map(|x| x.ln()).collect::<Vec<f64>>();
    let interval = (a.len().min(b.len()) >= min_n)
        .then(|| rank_sum_interval(&ln(a), &ln(b), level))
        .flatten();
    Ok(Judgement::new(
        Method::RankSum,
        design,
        (a.len(), b.len()),
        interval,
        min_n,
    ))
}

/// Where an interval `low..high` lies against `threshold`: above it is faster,
/// below it slower, across it not resolved.
pub fn judge(low: f64, high: f64, threshold: f64) -> Verdict {
    if low > threshold {
        Verdict::Faster
    } else if high < threshold {
        Verdict::Slower
    } else {
        Verdict::NotResolved
    }
}

fn percent(level: f64) -> String {
    let p = level * 100.0;
    if (p - p.round()).abs() < 1e-9 {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

impl Judgement {
    fn new(
        method: Method,
        design: Design,
        (n_a, n_b): (usize, usize),
        interval: Option<ShiftInterval>,
        min_n: usize,
    ) -> Judgement {
        let (name, look, looks) = match design {
            Design::Fixed => (DesignName::Fixed, None, None),
            Design::Sequential { look, looks } => (DesignName::Sequential, Some(look), Some(looks)),
        };
        let exp = |f: fn(&ShiftInterval) -> f64| interval.as_ref().map(|i| f(i).exp());
        let (ratio, ci_low, ci_high) = (exp(|i| i.estimate), exp(|i| i.low), exp(|i| i.high));
        let verdict = match (ci_low, ci_high) {
            (Some(low), Some(high)) => judge(low, high, 1.0),
            _ => Verdict::TooFew,
        };
        let mut judgement = Judgement {
            method,
            level: LEVEL,
            design: name,
            look,
            looks,
            level_this_look: design.level_this_look(),
            n_a,
            n_b,
            pairs: (method == Method::SignedRank).then_some(n_a),
            ratio,
            ci_low,
            ci_high,
            verdict,
            min_n,
            sentence: String::new(),
        };
        judgement.sentence = judgement.sentence_for("A", "B");
        judgement
    }

    /// The same judgement with its sentence naming A and B.
    pub fn named(mut self, a: &str, b: &str) -> Judgement {
        self.sentence = self.sentence_for(a, b);
        self
    }

    /// The runs judged, in words: "8 pairs", "5 and 4 runs".
    fn runs(&self) -> String {
        match self.method {
            Method::SignedRank => format!("{} pairs", self.n_a),
            Method::RankSum if self.n_a == self.n_b => format!("{} runs a side", self.n_a),
            Method::RankSum => format!("{} and {} runs", self.n_a, self.n_b),
        }
    }

    /// The level of the interval, and for a sequential design which look.
    fn level_text(&self) -> String {
        match (self.look, self.looks) {
            (Some(look), Some(looks)) => format!(
                "{} interval, look {look} of {looks}, {} overall",
                percent(self.level_this_look),
                percent(self.level)
            ),
            _ => format!("{} interval", percent(self.level)),
        }
    }

    /// The judgement in words, naming A and B.
    pub(crate) fn sentence_for(&self, a: &str, b: &str) -> String {
        let method = match self.method {
            Method::SignedRank => "signed rank",
            Method::RankSum => "rank sum",
        };
        let (Some(ratio), Some(low), Some(high)) = (self.ratio, self.ci_low, self.ci_high) else {
            let unit = match self.method {
                Method::SignedRank => "pairs",
                Method::RankSum => "runs a side",
            };
            return format!(
                "{} cannot resolve at {}: a {method} interval needs at least {} {unit} \
                 (no verdict)",
                self.runs(),
                percent(self.level_this_look),
                self.min_n
            );
        };
        let figures = format!(
            "{a} is {ratio:.2}x {b} ({} {low:.2} to {high:.2}, {}, {method})",
            self.level_text(),
            self.runs()
        );
        match self.verdict {
            Verdict::Faster => format!("{figures}: {a} is faster"),
            Verdict::Slower => format!("{figures}: {a} is slower"),
            _ => format!("not resolved: {figures}; the interval holds 1.0"),
        }
    }
}

/// Looks at fixed sizes, planned before the first run: a sequential design's
/// schedule from `first` runs (pairs) to at most `last`, adding runs between.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    sizes: Vec<usize>,
}

impl Schedule {
    /// Up to `max_looks` looks, evenly spaced from `first` to `last`
    /// (`first` <= `last`); one look (a fixed design) when they are equal.
    pub fn new(first: usize, last: usize, max_looks: usize) -> Schedule {
        let last = last.max(first);
        let looks = max_looks.clamp(1, MAX_LOOKS).min(last - first + 1);
        let sizes = match looks {
            1 => vec![last],
            k => (0..k)
                .map(|i| first + ((last - first) * i).div_ceil(k - 1))
                .collect(),
        };
        Schedule { sizes }
    }

    /// The sizes at which it looks.
    pub fn sizes(&self) -> &[usize] {
        &self.sizes
    }

    /// The design of a judgement taken at `n`: its look when `n` is one of
    /// the sizes, else the look it is heading to (for a look between).
    pub fn design_at(&self, n: usize) -> Design {
        let looks = self.sizes.len();
        if looks == 1 {
            return Design::Fixed;
        }
        let look = self.sizes.iter().position(|s| *s >= n).unwrap_or(looks - 1) + 1;
        Design::Sequential { look, looks }
    }

    /// Whether `n` is a size at which it looks.
    pub(crate) fn is_look(&self, n: usize) -> bool {
        self.sizes.contains(&n)
    }

    /// The next size to run to after `n`, if any.
    pub fn next_after(&self, n: usize) -> Option<usize> {
        self.sizes.iter().copied().find(|s| *s > n)
    }

    /// The size of the first look not yet spent once `n` runs were judged:
    /// a judgement of `n` spends the look [`Schedule::design_at`] gives it
    /// (between two sizes, after a cancel, the look it was heading to), so
    /// taking the runs up again goes on from the look after. `None` once the
    /// last look is spent, and always for a one-look (fixed) design, whose
    /// single look spent the whole 5%.
    pub(crate) fn look_after(&self, n: usize) -> Option<usize> {
        match self.design_at(n) {
            Design::Fixed => None,
            Design::Sequential { look, .. } => self.sizes.get(look).copied(),
        }
    }

    /// What to do after `judgement` of `n` runs: stop (`None`) once a look
    /// resolved it or the last look is taken, else the size to run to next.
    /// Every until-resolved path the runner drives decides by this alone.
    pub(crate) fn go_on(&self, n: usize, judgement: &Judgement) -> Option<usize> {
        let resolved = matches!(judgement.verdict, Verdict::Faster | Verdict::Slower);
        if resolved && self.is_look(n) {
            return None;
        }
        self.next_after(n)
    }

    /// The looks a default "until resolved" of this many runs takes: a few,
    /// since each look's share of the 5% narrows every interval.
    pub const DEFAULT_LOOKS: usize = 3;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clear_difference_is_faster_one_way_and_slower_the_other() {
        let fast = [40.0, 41.0, 39.0, 40.5, 39.5, 40.2];
        let slow = [13.0, 12.5, 13.5, 12.8, 13.2, 13.1];
        let got = judge_paired(&fast, &slow, Design::Fixed).unwrap();
        assert_eq!(got.verdict, Verdict::Faster);
        assert_eq!(
            (got.method, got.min_n, got.pairs),
            (Method::SignedRank, 6, Some(6))
        );
        let back = judge_paired(&slow, &fast, Design::Fixed).unwrap();
        assert_eq!(back.verdict, Verdict::Slower);
        assert!(got
            .named("busy-loop", "write-read")
            .sentence
            .ends_with("busy-loop is faster"));
    }

    #[test]
    fn five_pairs_all_one_way_are_too_few_for_a_verdict() {
        let got = judge_paired(&[2.0; 5], &[1.0; 5], Design::Fixed).unwrap();
        assert_eq!(got.verdict, Verdict::TooFew);
        assert_eq!((got.ratio, got.ci_low, got.ci_high), (None, None, None));
        assert!(
            got.sentence.starts_with("5 pairs cannot resolve at 95%"),
            "{}",
            got.sentence
        );
        let got = judge_unpaired(&[2.0; 3], &[1.0; 3], Design::Fixed).unwrap();
        assert_eq!((got.verdict, got.min_n), (Verdict::TooFew, 4));
        let got = judge_unpaired(&[2.0, 2.1, 1.9, 2.05], &[1.0; 4], Design::Fixed).unwrap();
        assert_eq!(got.verdict, Verdict::Faster);
    }

    #[test]
    fn the_same_noise_on_both_sides_is_not_resolved() {
        let a = [10.0, 12.0, 9.0, 11.5, 10.2, 10.9];
        let b = [11.0, 9.5, 10.8, 10.0, 11.9, 10.1];
        let got = judge_paired(&a, &b, Design::Fixed).unwrap();
        assert_eq!(got.verdict, Verdict::NotResolved);
        assert!(got.ci_low.unwrap() < 1.0 && got.ci_high.unwrap() > 1.0);
        assert!(got.sentence.starts_with("not resolved"));
    }

    #[test]
    fn a_sequential_look_spends_its_share_of_the_error() {
        let design = Design::of(Some(2), Some(3)).unwrap();
        assert!((design.level_this_look() - (1.0 - 0.05 / 3.0)).abs() < 1e-12);
        // 6 pairs cannot reach 98.3%: 7 can.
        let got = judge_paired(&[2.0; 6], &[1.0; 6], design).unwrap();
        assert_eq!((got.verdict, got.min_n), (Verdict::TooFew, 7));
        let json = serde_json::to_value(&got).unwrap();
        assert_eq!(json["design"], "sequential");
        assert_eq!(json["look"], 2);
        assert!(json["ratio"].is_null());
        assert!(Design::of(Some(4), Some(3)).is_err());
        assert!(Design::of(Some(1), None).is_err());
        assert_eq!(Design::of(None, None), Ok(Design::Fixed));
    }

    #[test]
    fn a_schedule_spreads_its_looks_from_first_to_last() {
        let s = Schedule::new(8, 12, 3);
        assert_eq!(s.sizes(), &[8, 10, 12]);
        assert_eq!(s.design_at(8), Design::Sequential { look: 1, looks: 3 });
        assert_eq!(s.design_at(9), Design::Sequential { look: 2, looks: 3 });
        assert_eq!(s.next_after(10), Some(12));
        assert_eq!(Schedule::new(8, 8, 3).design_at(8), Design::Fixed);
        assert_eq!(Schedule::new(8, 9, 3).sizes(), &[8, 9]);
        // Taken up again after a judgement: the look after the one it spent.
        assert_eq!(s.look_after(8), Some(10));
        assert_eq!(s.look_after(9), Some(12));
        assert_eq!(s.look_after(12), None);
        assert_eq!(Schedule::new(8, 8, 3).look_after(8), None);
    }

    #[test]
    fn refuses_what_cannot_be_judged() {
        assert!(matches!(
            judge_paired(&[1.0, 2.0], &[1.0], Design::Fixed),
            Err(CompareError::Unpaired { .. })
        ));
        assert!(matches!(
            judge_unpaired(&[1.0, -2.0], &[1.0, 1.0], Design::Fixed),
            Err(CompareError::BadRate(_))
        ));
        assert!(matches!(
            judge_paired(&[f64::INFINITY], &[1.0], Design::Fixed),
            Err(CompareError::BadRate(_))
        ));
    }
}
