//! A comparison of A against B from interleaved pairs of runs: the ratio of
//! medians with its 95% interval, the signed-rank p-value, a verdict and, when
//! the verdict is not reached, about how many more pairs would reach it.
//!
//! The verdict follows the interval alone: A is faster when the whole interval
//! lies above 1, slower when it lies below, otherwise not resolved. The p-value
//! is reported beside it as a second, assumption-light view of the same pairs
//! (with 5 pairs it cannot go below 1/16, so it could never decide alone).

use serde::{Deserialize, Serialize};

use super::bootstrap::{self, RatioInterval};
use super::signed_rank::signed_rank;

/// The confidence level of every interval pipebook states.
pub const LEVEL: f64 = 0.95;

/// The difference "pairs to resolve" is sized for: 10%.
pub const RESOLVE_DIFFERENCE: f64 = 1.10;

/// What the pairs say about A against B.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The whole interval lies above 1: A is faster.
    Faster,
    /// The whole interval lies below 1: A is slower.
    Slower,
    /// The interval holds 1.
    NotResolved,
}

/// Why pairs could not be compared.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompareError {
    /// Fewer than two pairs.
    #[error("a comparison needs at least 2 pairs, got {0}")]
    TooFewPairs(usize),
    /// A and B hold different numbers of runs.
    #[error("A has {a} runs and B has {b}: they must pair up")]
    Unpaired {
        /// Runs of A.
        a: usize,
        /// Runs of B.
        b: usize,
    },
    /// A rate of zero, negative or not a number.
    #[error("every rate must be a positive number, got {0}")]
    BadRate(f64),
}

/// A comparison of A's rates against B's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// median(A) / median(B).
    pub ratio: f64,
    /// The 95% interval's lower end.
    pub ci_low: f64,
    /// The 95% interval's upper end.
    pub ci_high: f64,
    /// Pairs compared.
    pub pairs: usize,
    /// Two-sided exact Wilcoxon signed-rank p-value of the pairs' log-ratios
    /// (`None` past the exact test's size).
    pub p_value: Option<f64>,
    /// The verdict.
    pub verdict: Verdict,
    /// About how many more pairs would resolve a 10% difference at the noise
    /// these pairs show (0 when the interval is already that narrow).
    pub more_pairs: usize,
}

/// Compares the pairs `(a[i], b[i])` (rates: higher is faster) with the
/// bootstrap seeded by `seed`.
pub fn compare(a: &[f64], b: &[f64], seed: u64) -> Result<Comparison, CompareError> {
    if a.len() != b.len() {
        return Err(CompareError::Unpaired {
            a: a.len(),
            b: b.len(),
        });
    }
    if a.len() < 2 {
        return Err(CompareError::TooFewPairs(a.len()));
    }
    if let Some(bad) = a.iter().chain(b).find(|v| !(v.is_finite() && **v > 0.0)) {
        return Err(CompareError::BadRate(*bad));
    }
    let RatioInterval { ratio, low, high } =
        bootstrap::ratio_of_medians(a, b, LEVEL, bootstrap::RESAMPLES, seed)
            .ok_or(CompareError::TooFewPairs(a.len()))?;
    let logs: Vec<f64> = a.iter().zip(b).map(|(x, y)| (x / y).ln()).collect();
    let verdict = judge(low, high, 1.0);
    Ok(Comparison {
        ratio,
        ci_low: low,
        ci_high: high,
        pairs: a.len(),
        p_value: signed_rank(&logs).map(|t| t.p_value),
        verdict,
        more_pairs: more_pairs(a.len(), low, high, RESOLVE_DIFFERENCE),
    })
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

/// About how many more pairs would narrow the interval to ±`difference`
/// (1.10 for 10%) around its centre: an interval's width shrinks as
/// 1/sqrt(pairs), so the pairs needed are `pairs * (half-width / target)^2`,
/// both measured on the log scale where ratios are symmetric.
pub fn more_pairs(pairs: usize, low: f64, high: f64, difference: f64) -> usize {
    let half = (high.ln() - low.ln()) / 2.0;
    let target = difference.ln();
    if !(half.is_finite() && target > 0.0) || half <= target {
        return 0;
    }
    let needed = (pairs as f64 * (half / target).powi(2)).ceil() as usize;
    needed.saturating_sub(pairs)
}

impl Comparison {
    /// The verdict in words, naming A and B: "busy-loop is 3.10x write-read
    /// (2.95 to 3.30, 5 pairs)", or why it is not resolved.
    pub fn sentence(&self, a: &str, b: &str) -> String {
        let figures = format!(
            "{a} is {:.2}x {b} ({:.2} to {:.2}, {} pairs",
            self.ratio, self.ci_low, self.ci_high, self.pairs
        );
        let p = self
            .p_value
            .map_or(String::new(), |p| format!("; signed-rank p = {p:.3}"));
        match self.verdict {
            Verdict::Faster => format!("{figures}{p}): {a} is faster"),
            Verdict::Slower => format!("{figures}{p}): {a} is slower"),
            Verdict::NotResolved if self.more_pairs == 0 => format!(
                "not resolved: {figures}{p}); the interval holds 1.0 and already rules \
                 out a difference of 10% or more"
            ),
            Verdict::NotResolved => format!(
                "not resolved: {figures}{p}); the interval holds 1.0; about {} more \
                 pairs would resolve a 10% difference at this noise",
                self.more_pairs
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::bootstrap::DEFAULT_SEED;

    #[test]
    fn a_clear_difference_is_faster_one_way_and_slower_the_other() {
        let fast = [40.0, 41.0, 39.0, 40.5, 39.5];
        let slow = [13.0, 12.5, 13.5, 12.8, 13.2];
        let got = compare(&fast, &slow, DEFAULT_SEED).unwrap();
        assert_eq!(got.verdict, Verdict::Faster);
        assert_eq!(got.more_pairs, 0);
        assert!((got.p_value.unwrap() - 0.0625).abs() < 1e-12);
        let back = compare(&slow, &fast, DEFAULT_SEED).unwrap();
        assert_eq!(back.verdict, Verdict::Slower);
        assert!(got
            .sentence("busy-loop", "write-read")
            .contains("busy-loop is faster"));
    }

    #[test]
    fn the_same_noise_on_both_sides_is_not_resolved() {
        let a = [10.0, 12.0, 9.0, 11.5, 10.2];
        let b = [11.0, 9.5, 10.8, 10.0, 11.9];
        let got = compare(&a, &b, DEFAULT_SEED).unwrap();
        assert_eq!(got.verdict, Verdict::NotResolved);
        // scipy.stats.wilcoxon(numpy.log(a / b)) gives statistic 7.0, p 1.0.
        assert_eq!(got.p_value, Some(1.0));
        assert!(got.ci_low < 1.0 && got.ci_high > 1.0);
        assert!(got.sentence("a", "b").starts_with("not resolved"));
    }

    #[test]
    fn judging_an_interval_against_a_threshold() {
        assert_eq!(judge(1.2, 1.5, 1.1), Verdict::Faster);
        assert_eq!(judge(0.5, 0.9, 1.1), Verdict::Slower);
        assert_eq!(judge(1.0, 1.3, 1.1), Verdict::NotResolved);
    }

    #[test]
    fn pairs_needed_grow_with_the_square_of_the_width() {
        // Half-width ln(1.21)/2 = ln(1.1): already enough.
        assert_eq!(more_pairs(5, 1.0, 1.21, 1.10), 0);
        // Twice that half-width needs four times the pairs: 20 in all, 15 more.
        assert_eq!(more_pairs(5, 1.0, 1.21f64.powi(2), 1.10), 15);
    }

    /// The crafted comparisons the page's `compareRuns` (verdict.js) is held to
    /// as well: the same ratio, interval, verdict and pairs to resolve here.
    #[test]
    fn the_page_and_the_runner_judge_the_crafted_comparisons_alike() {
        use crate::stats::bootstrap::{ratio_of_medians_unpaired, RESAMPLES};
        let vectors: serde_json::Value =
            serde_json::from_str(include_str!("../../../book/tests/compare-vectors.json")).unwrap();
        let floats = |v: &serde_json::Value| -> Vec<f64> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect()
        };
        let cases = vectors["cases"].as_array().unwrap();
        assert!(cases.len() >= 6);
        for case in cases {
            let name = case["name"].as_str().unwrap();
            let (a, b) = (floats(&case["a"]), floats(&case["b"]));
            let (ratio, low, high) = if case["paired"] == true {
                let c = compare(&a, &b, DEFAULT_SEED).unwrap();
                (c.ratio, c.ci_low, c.ci_high)
            } else {
                let i = ratio_of_medians_unpaired(&a, &b, LEVEL, RESAMPLES, DEFAULT_SEED).unwrap();
                (i.ratio, i.low, i.high)
            };
            let verdict = serde_json::to_value(judge(low, high, 1.0)).unwrap();
            assert_eq!(verdict, case["verdict"], "{name}");
            let more = more_pairs(a.len().min(b.len()), low, high, RESOLVE_DIFFERENCE);
            assert_eq!(Some(more as u64), case["more_pairs"].as_u64(), "{name}");
            for (got, key) in [(ratio, "ratio"), (low, "ci_low"), (high, "ci_high")] {
                let want = case[key].as_f64().unwrap();
                assert!(
                    (got - want).abs() < 1e-9,
                    "{name}: {key} {got} against {want}"
                );
            }
        }
    }

    #[test]
    fn refuses_what_cannot_be_compared() {
        assert_eq!(
            compare(&[1.0], &[1.0], 1),
            Err(CompareError::TooFewPairs(1))
        );
        assert!(matches!(
            compare(&[1.0, 2.0], &[1.0], 1),
            Err(CompareError::Unpaired { .. })
        ));
        assert!(matches!(
            compare(&[1.0, -2.0], &[1.0, 1.0], 1),
            Err(CompareError::BadRate(_))
        ));
    }
}
