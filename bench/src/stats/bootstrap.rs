//! The ratio of medians of two sets of runs, and its 95% interval by the
//! percentile bootstrap: over pairs when the runs were taken in pairs, over each
//! set on its own when they were not (a lab's tasks).
//!
//! Pairs are resampled whole (never A's runs apart from B's): the two runs of a
//! pair were taken back to back, so what drifted over the session (a clock, a
//! neighbour's load) moved both, and keeping them together keeps that out of the
//! interval instead of counting it as noise twice.
//!
//! The plain percentile interval is too narrow with few pairs (it ignores that
//! the spread itself is estimated from them), and comparisons here often have 5
//! to 20. So the percentiles taken are widened as Hesterberg's "expanded
//! percentile interval" does (T. Hesterberg, "What Teachers Should Know About
//! the Bootstrap", The American Statistician 69(4), 2015): for a 95% interval over
//! n pairs, the tails are Φ(−sqrt(n/(n−1)) · t(0.975, n−1)) instead of 2.5%.

use super::rng::SplitMix64;
use super::{median, quantile_sorted};

/// Resamples drawn for an interval: enough for the 2.5% and 97.5% points to sit
/// well inside the draws, and cheap (a few milliseconds for hundreds of pairs).
pub const RESAMPLES: usize = 4000;

/// The seed every comparison uses unless told otherwise, so the same runs always
/// give the same interval (a report can be judged again, in Rust or in JS).
pub const DEFAULT_SEED: u64 = 0x7069_7065_626f_6f6b; // "pipebook"

/// A ratio of medians and its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatioInterval {
    /// median(a) / median(b) over all pairs.
    pub ratio: f64,
    /// The interval's lower end.
    pub low: f64,
    /// The interval's upper end.
    pub high: f64,
}

/// median(a) / median(b) with its `level` (0.95 for 95%) percentile-bootstrap
/// interval over the pairs `(a[i], b[i])`, drawing `resamples` times from a
/// generator seeded with `seed`. `None` with fewer than two pairs, unequal lengths,
/// or a value that is not a positive number (a rate of zero has no ratio).
pub fn ratio_of_medians(
    a: &[f64],
    b: &[f64],
    level: f64,
    resamples: usize,
    seed: u64,
) -> Option<RatioInterval> {
    let n = a.len();
    if n < 2 || b.len() != n || resamples == 0 {
        return None;
    }
    if a.iter().chain(b).any(|v| !(v.is_finite() && *v > 0.0)) {
        return None;
    }
    let ratio = median(a)? / median(b)?;
    let mut rng = SplitMix64::new(seed);
    let mut ratios = Vec::with_capacity(resamples);
    let (mut ra, mut rb) = (vec![0.0; n], vec![0.0; n]);
    for _ in 0..resamples {
        for slot in 0..n {
            let pick = rng.below(n);
            ra[slot] = a[pick];
            rb[slot] = b[pick];
        }
        ratios.push(median(&ra)? / median(&rb)?);
    }
    ratios.sort_by(f64::total_cmp);
    let tail = expanded_tail(level, n);
    Some(RatioInterval {
        ratio,
        low: quantile_sorted(&ratios, tail)?,
        high: quantile_sorted(&ratios, 1.0 - tail)?,
    })
}

/// median(a) / median(b) with its `level` interval when `a` and `b` are two
/// separate sets of runs, not pairs (a lab's tasks run one after the other, in
/// any order and any number): each resample draws `a.len()` runs from `a`, then
/// `b.len()` from `b`, from one generator seeded with `seed`, so the page can
/// repeat the draws exactly. The tails are widened as for pairs, taking the
/// smaller set's size as n: the interval can only be as sure as its thinner
/// side. `None` when either set has fewer than two runs (one run shows no
/// spread, and would give an interval of zero width) or a value is not a
/// positive number.
pub fn ratio_of_medians_unpaired(
    a: &[f64],
    b: &[f64],
    level: f64,
    resamples: usize,
    seed: u64,
) -> Option<RatioInterval> {
    if a.len() < 2 || b.len() < 2 || resamples == 0 {
        return None;
    }
    if a.iter().chain(b).any(|v| !(v.is_finite() && *v > 0.0)) {
        return None;
    }
    let ratio = median(a)? / median(b)?;
    let mut rng = SplitMix64::new(seed);
    let mut ratios = Vec::with_capacity(resamples);
    let (mut ra, mut rb) = (vec![0.0; a.len()], vec![0.0; b.len()]);
    for _ in 0..resamples {
        for slot in ra.iter_mut() {
            *slot = a[rng.below(a.len())];
        }
        for slot in rb.iter_mut() {
            *slot = b[rng.below(b.len())];
        }
        ratios.push(median(&ra)? / median(&rb)?);
    }
    ratios.sort_by(f64::total_cmp);
    let tail = expanded_tail(level, a.len().min(b.len()));
    Some(RatioInterval {
        ratio,
        low: quantile_sorted(&ratios, tail)?,
        high: quantile_sorted(&ratios, 1.0 - tail)?,
    })
}

/// The lower tail probability of the expanded percentile interval at `level`
/// over `n` pairs (see the module's documentation).
pub fn expanded_tail(level: f64, n: usize) -> f64 {
    let df = (n - 1) as f64;
    let z = normal_quantile_upper((1.0 - level) / 2.0);
    normal_cdf(-(n as f64 / df).sqrt() * student_t_quantile(z, df))
}

/// The upper `p` quantile of the standard normal: z with P(Z > z) = p, by
/// bisection on [`normal_cdf`] (60 halvings reach f64's precision).
fn normal_quantile_upper(p: f64) -> f64 {
    let (mut low, mut high) = (-10.0, 10.0);
    for _ in 0..60 {
        let mid = (low + high) / 2.0;
        if 1.0 - normal_cdf(mid) > p {
            low = mid;
        } else {
            high = mid;
        }
    }
    (low + high) / 2.0
}

/// Student's t quantile matching the normal quantile `z` at `df` degrees of
/// freedom, by the Cornish-Fisher expansion of Abramowitz and Stegun 26.7.5
/// (within 0.3% of the tables from 3 degrees of freedom; at 1 and 2 it is
/// smaller than the table, but such tails lie beyond every resample anyway).
fn student_t_quantile(z: f64, df: f64) -> f64 {
    let (z3, z5, z7, z9) = (z.powi(3), z.powi(5), z.powi(7), z.powi(9));
    z + (z3 + z) / (4.0 * df)
        + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * df.powi(2))
        + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * df.powi(3))
        + (79.0 * z9 + 776.0 * z7 + 1482.0 * z5 - 1920.0 * z3 - 945.0 * z) / (92160.0 * df.powi(4))
}

/// The standard normal's distribution function, through erfc (Numerical
/// Recipes' Chebyshev fit, error below 1.2e-7: ample for a tail probability).
fn normal_cdf(x: f64) -> f64 {
    let z = x.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let erfc = t * poly.exp();
    match x >= 0.0 {
        true => 1.0 - erfc / 2.0,
        false => erfc / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_and_t_quantiles_match_the_tables() {
        // Normal: P(Z > 1.959964) = 0.025. Student's t(0.975): 2.776 at 4
        // degrees of freedom, 2.228 at 10, 2.042 at 30 (any t table).
        assert!((normal_quantile_upper(0.025) - 1.959964).abs() < 1e-5);
        assert!((normal_cdf(1.0) - 0.841345).abs() < 1e-6);
        let z = 1.959964;
        for (df, want) in [(4.0, 2.776), (10.0, 2.228), (30.0, 2.042)] {
            let got = student_t_quantile(z, df);
            assert!((got - want).abs() / want < 0.003, "df {df}: {got}");
        }
    }

    #[test]
    fn the_tails_widen_with_few_pairs_and_tend_to_the_plain_ones() {
        // Hesterberg's example sizes: at n = 5 the 95% interval takes about the
        // 0.1% and 99.9% points; with many pairs, 2.5% and 97.5%.
        let five = expanded_tail(0.95, 5);
        assert!(five > 0.0005 && five < 0.002, "{five}");
        let many = expanded_tail(0.95, 10_000);
        assert!((many - 0.025).abs() < 0.0005, "{many}");
    }

    #[test]
    fn the_same_runs_give_the_same_interval() {
        let a = [10.0, 11.0, 9.5, 10.5, 10.2, 9.9];
        let b = [5.0, 5.5, 5.2, 4.9, 5.1, 5.3];
        let one = ratio_of_medians(&a, &b, 0.95, RESAMPLES, DEFAULT_SEED).unwrap();
        let two = ratio_of_medians(&a, &b, 0.95, RESAMPLES, DEFAULT_SEED).unwrap();
        assert_eq!(one, two);
        assert!(one.low <= one.ratio && one.ratio <= one.high, "{one:?}");
    }

    #[test]
    fn agrees_with_numpy_and_scipy_on_the_same_draws() {
        // Reference: the same SplitMix64 draws written in Python, numpy.median and
        // numpy.quantile (linear) for the statistics, and the expanded tail from
        // scipy's exact distributions, norm.cdf(-sqrt(6/5) * t.ppf(0.975, 5)) =
        // 0.0024318 (numpy 2, scipy 1.17): ratio 1.9611650485436891, interval
        // 1.8269230769230769 .. 2.142857142857143. The tails here come from the
        // approximations above, so the ends agree to a few parts in ten thousand.
        let a = [10.0, 11.0, 9.5, 10.5, 10.2, 9.9];
        let b = [5.0, 5.5, 5.2, 4.9, 5.1, 5.3];
        assert!((expanded_tail(0.95, 6) - 0.0024318031746115667).abs() < 2e-5);
        assert!((expanded_tail(0.95, 5) - 0.0009541005518824907).abs() < 2e-5);
        let got = ratio_of_medians(&a, &b, 0.95, RESAMPLES, DEFAULT_SEED).unwrap();
        assert!((got.ratio - 1.9611650485436891).abs() < 1e-12, "{got:?}");
        assert!((got.low - 1.8269230769230769).abs() < 1e-3, "{got:?}");
        assert!((got.high - 2.142857142857143).abs() < 1e-3, "{got:?}");
    }

    #[test]
    fn separated_sets_give_an_interval_clear_of_one() {
        // Every resampled median of a lies within a's range, and likewise for b,
        // so the interval can be no wider than min(a)/max(b) .. max(a)/min(b).
        let a = [10.0, 11.0, 9.5, 10.5, 10.2];
        let b = [5.0, 5.5, 5.2, 4.9, 5.1];
        let got = ratio_of_medians(&a, &b, 0.95, RESAMPLES, 7).unwrap();
        assert!(got.low >= 9.5 / 5.5 && got.high <= 11.0 / 4.9, "{got:?}");
        assert!((got.ratio - 10.2 / 5.1).abs() < 1e-12);
    }

    #[test]
    fn overlapping_sets_hold_one() {
        let a = [10.0, 9.0, 11.0, 10.5, 9.5, 10.2, 9.8];
        let b = [9.9, 10.4, 9.2, 10.8, 9.6, 10.1, 10.0];
        let got = ratio_of_medians(&a, &b, 0.95, RESAMPLES, DEFAULT_SEED).unwrap();
        assert!(got.low < 1.0 && got.high > 1.0, "{got:?}");
    }

    #[test]
    fn unpaired_sets_of_two_span_their_extremes() {
        // With two runs a side the tails are far beyond any resample (n = 2), and
        // 4000 draws certainly include a resample of a's top run twice against
        // b's bottom run twice (1 in 16 each draw): the interval is exactly
        // min(a)/max(b) .. max(a)/min(b).
        let a = [3.0, 3.3];
        let b = [1.0, 1.2];
        let got = ratio_of_medians_unpaired(&a, &b, 0.95, RESAMPLES, DEFAULT_SEED).unwrap();
        assert!((got.ratio - 3.15 / 1.1).abs() < 1e-12, "{got:?}");
        assert_eq!((got.low, got.high), (3.0 / 1.2, 3.3 / 1.0));
    }

    #[test]
    fn unpaired_sets_may_differ_in_size_and_repeat_exactly() {
        let a = [10.0, 11.0, 9.5, 10.5, 10.2];
        let b = [5.0, 5.5, 5.2];
        let one = ratio_of_medians_unpaired(&a, &b, 0.95, RESAMPLES, DEFAULT_SEED).unwrap();
        let two = ratio_of_medians_unpaired(&a, &b, 0.95, RESAMPLES, DEFAULT_SEED).unwrap();
        assert_eq!(one, two);
        assert!((one.ratio - 10.2 / 5.2).abs() < 1e-12);
        assert!(one.low >= 9.5 / 5.5 && one.high <= 11.0 / 5.0, "{one:?}");
        assert!(one.low <= one.ratio && one.ratio <= one.high, "{one:?}");
        assert!(ratio_of_medians_unpaired(&a, &[5.0], 0.95, 10, 1).is_none());
        assert!(ratio_of_medians_unpaired(&a, &[5.0, 0.0], 0.95, 10, 1).is_none());
    }

    #[test]
    fn refuses_what_has_no_ratio() {
        assert!(ratio_of_medians(&[1.0], &[1.0], 0.95, 10, 1).is_none());
        assert!(ratio_of_medians(&[1.0, 2.0], &[1.0], 0.95, 10, 1).is_none());
        assert!(ratio_of_medians(&[1.0, 0.0], &[1.0, 1.0], 0.95, 10, 1).is_none());
        assert!(ratio_of_medians(&[1.0, f64::NAN], &[1.0, 1.0], 0.95, 10, 1).is_none());
    }
}
