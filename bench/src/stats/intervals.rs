//! Distribution-free confidence intervals of a shift, from ranks.
//!
//! - Paired: the Wilcoxon signed-rank interval of the centre of the differences,
//!   with the Hodges-Lehmann estimate (the median of the Walsh averages).
//! - Unpaired: the Mann-Whitney (rank-sum) interval of the shift between two
//!   samples, with the Hodges-Lehmann estimate (the median of all the pairwise
//!   differences).
//!
//! Why these: they hold their level for any continuous distribution symmetric
//! about its centre (paired) or any two samples of one shape (unpaired), with no
//! estimate of the spread to get wrong at 6 pairs, and their coverage is exact
//! where it matters here: the null distributions of the rank statistics are
//! counted exactly below 50 a side (as R's `wilcox.test` does), and past that a
//! normal approximation with a continuity correction is within a hair of it.
//!
//! The interval is the k-th smallest to the k-th largest of the Walsh averages
//! (or differences), where k is the smallest count with P(T <= k - 1) < alpha/2
//! under the null; with too few values not even the widest interval (k = 1)
//! reaches the level, and there is then no interval at all.

use statrs::distribution::{ContinuousCDF, Normal};

/// Sizes below which the rank statistics' null distributions are counted
/// exactly (R's `wilcox.test` draws the same line).
pub(crate) const EXACT_BELOW: usize = 50;

/// A shift estimate and its interval, on the scale of the values given.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ShiftInterval {
    /// The Hodges-Lehmann estimate.
    pub estimate: f64,
    /// Lower end.
    pub low: f64,
    /// Upper end.
    pub high: f64,
    /// Whether the null distribution was counted exactly (else: the normal
    /// approximation).
    pub exact: bool,
}

/// Counts of the signed-rank statistic W+ for `n` untied values: entry t is
/// how many of the 2^n sign patterns give W+ = t.
pub(crate) fn signed_rank_counts(n: usize) -> Vec<f64> {
    let total = n * (n + 1) / 2;
    let mut counts = vec![0.0f64; total + 1];
    counts[0] = 1.0;
    let mut reach = 0;
    for rank in 1..=n {
        for t in (0..=reach).rev() {
            counts[t + rank] += counts[t];
        }
        reach += rank;
    }
    counts
}

/// Counts of the Mann-Whitney statistic U (pairs with x above y) for samples
/// of `m` and `n`: entry u is how many of the C(m+n, m) orderings give U = u.
pub(crate) fn rank_sum_counts(m: usize, n: usize) -> Vec<f64> {
    // f(i, j) = f(i-1, j) shifted by j + f(i, j-1): the largest of the i + j
    // values is either an x (above all j y's) or a y (above no x).
    let mut prev: Vec<Vec<f64>> = (0..=n).map(|_| vec![1.0]).collect();
    for i in 1..=m {
        let mut row: Vec<Vec<f64>> = vec![vec![1.0]];
        for j in 1..=n {
            let mut f = vec![0.0; i * j + 1];
            for (u, c) in prev[j].iter().enumerate() {
                f[u + j] += c;
            }
            for (u, c) in row[j - 1].iter().enumerate() {
                f[u] += c;
            }
            row.push(f);
        }
        prev = row;
    }
    prev.swap_remove(n)
}

/// The k of the interval from exact null counts: the smallest k whose lower
/// tail P(T <= k) reaches `alpha / 2` (R's `qsignrank` / `qwilcox`), or `None`
/// when even P(T <= 0) is past it, so no interval reaches the level.
fn k_exact(counts: &[f64], alpha: f64) -> Option<usize> {
    let total: f64 = counts.iter().sum();
    let mut below = 0.0;
    for (k, c) in counts.iter().enumerate() {
        below += c / total;
        if below >= alpha / 2.0 * (1.0 - 1e-12) {
            return (k > 0).then_some(k);
        }
    }
    None
}

/// The k of the interval from the normal approximation of a statistic with
/// `mean` and `sd`, continuity corrected: the largest k with
/// P(T <= k - 1) ~ Phi((k - 1 + 0.5 - mean) / sd) <= alpha / 2.
fn k_normal(mean: f64, sd: f64, alpha: f64) -> Option<usize> {
    let z = Normal::standard().inverse_cdf(1.0 - alpha / 2.0);
    let k = (mean - z * sd - 0.5).floor() + 1.0;
    (k >= 1.0).then_some(k as usize)
}

/// The median of sorted `values` (not empty).
fn median_sorted(values: &[f64]) -> f64 {
    let n = values.len();
    match n % 2 {
        1 => values[n / 2],
        _ => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// The interval over sorted `values` with that k; `None` without one.
fn interval(values: &[f64], k: Option<usize>, exact: bool) -> Option<ShiftInterval> {
    let k = k?;
    let count = values.len();
    if k > count / 2 + 1 || count == 0 {
        return None;
    }
    Some(ShiftInterval {
        estimate: median_sorted(values),
        low: values[k - 1],
        high: values[count - k],
        exact,
    })
}

/// The signed-rank interval at `level` (0.95) of the centre of `differences`
/// (finite), with its Hodges-Lehmann estimate; `None` when there are too few
/// to reach the level.
pub(crate) fn signed_rank_interval(differences: &[f64], level: f64) -> Option<ShiftInterval> {
    let n = differences.len();
    if n == 0 || differences.iter().any(|d| !d.is_finite()) {
        return None;
    }
    let mut walsh = Vec::with_capacity(n * (n + 1) / 2);
    for i in 0..n {
        for j in i..n {
            walsh.push((differences[i] + differences[j]) / 2.0);
        }
    }
    walsh.sort_by(f64::total_cmp);
    let alpha = 1.0 - level;
    let exact = n < EXACT_BELOW;
    let k = if exact {
        k_exact(&signed_rank_counts(n), alpha)
    } else {
        let nf = n as f64;
        let mean = nf * (nf + 1.0) / 4.0;
        let sd = (nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0).sqrt();
        k_normal(mean, sd, alpha)
    };
    interval(&walsh, k, exact)
}

/// The rank-sum interval at `level` of the shift of `x` against `y` (finite),
/// with its Hodges-Lehmann estimate; `None` when there are too few to reach
/// the level.
pub(crate) fn rank_sum_interval(x: &[f64], y: &[f64], level: f64) -> Option<ShiftInterval> {
    let (m, n) = (x.len(), y.len());
    if m == 0 || n == 0 || x.iter().chain(y).any(|v| !v.is_finite()) {
        return None;
    }
    let mut differences: Vec<f64> = x
        .iter()
        .flat_map(|a| y.iter().map(move |b| a - b))
        .collect();
    differences.sort_by(f64::total_cmp);
    let alpha = 1.0 - level;
    let exact = m < EXACT_BELOW && n < EXACT_BELOW;
    let k = if exact {
        k_exact(&rank_sum_counts(m, n), alpha)
    } else {
        let (mf, nf) = (m as f64, n as f64);
        let mean = mf * nf / 2.0;
        let sd = (mf * nf * (mf + nf + 1.0) / 12.0).sqrt();
        k_normal(mean, sd, alpha)
    };
    interval(&differences, k, exact)
}

/// Smallest number of pairs whose signed-rank interval can reach `level`.
pub fn min_pairs(level: f64) -> usize {
    (1..EXACT_BELOW)
        .find(|n| k_exact(&signed_rank_counts(*n), 1.0 - level).is_some())
        .unwrap_or(EXACT_BELOW)
}

/// Smallest number of runs a side (the same on both) whose rank-sum interval
/// can reach `level`.
pub fn min_runs_a_side(level: f64) -> usize {
    (1..EXACT_BELOW)
        .find(|n| k_exact(&rank_sum_counts(*n, *n), 1.0 - level).is_some())
        .unwrap_or(EXACT_BELOW)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two-sided 5% critical values of the tables (reject when T <= c),
    /// e.g. Hollander and Wolfe's, are k - 1 of the interval.
    #[test]
    fn the_exact_ks_match_the_printed_critical_values() {
        // Signed rank: n = 6 -> 0, 8 -> 3, 10 -> 8, 15 -> 25, 20 -> 52.
        for (n, critical) in [(6, 0), (8, 3), (10, 8), (15, 25), (20, 52)] {
            assert_eq!(
                k_exact(&signed_rank_counts(n), 0.05),
                Some(critical + 1),
                "n = {n}"
            );
        }
        assert_eq!(k_exact(&signed_rank_counts(5), 0.05), None);
        // Mann-Whitney U: 4 and 4 -> 0, 5 and 5 -> 2, 8 and 8 -> 13, 10 and 10 -> 23.
        for (n, critical) in [(4, 0), (5, 2), (8, 13), (10, 23)] {
            assert_eq!(
                k_exact(&rank_sum_counts(n, n), 0.05),
                Some(critical + 1),
                "n = {n}"
            );
        }
        assert_eq!(k_exact(&rank_sum_counts(3, 3), 0.05), None);
        assert_eq!(min_pairs(0.95), 6);
        assert_eq!(min_runs_a_side(0.95), 4);
    }

    #[test]
    fn the_counts_are_those_of_every_sign_pattern_and_ordering() {
        // Brute force: all 2^9 sign patterns of ranks 1..9.
        let n = 9;
        let mut brute = vec![0.0; n * (n + 1) / 2 + 1];
        for pattern in 0u32..(1 << n) {
            let w: usize = (0..n)
                .filter(|i| pattern >> i & 1 == 1)
                .map(|i| i + 1)
                .sum();
            brute[w] += 1.0;
        }
        assert_eq!(signed_rank_counts(n), brute);
        // All C(8, 3) choices of which 3 of 8 ordered values are x's.
        let (m, k) = (3, 5);
        let mut brute = vec![0.0; m * k + 1];
        for pick in 0u32..(1 << (m + k)) {
            if pick.count_ones() as usize != m {
                continue;
            }
            // U: for each x, the y's below it.
            let u: usize = (0..m + k)
                .filter(|i| pick >> i & 1 == 1)
                .map(|i| (0..i).filter(|j| pick >> j & 1 == 0).count())
                .sum();
            brute[u] += 1.0;
        }
        assert_eq!(rank_sum_counts(m, k), brute);
        assert_eq!(rank_sum_counts(k, m), brute);
    }

    #[test]
    fn intervals_by_hand() {
        // 1..=6: the 21 Walsh averages run from 1 to 6 and k = 1, so the interval
        // is [1, 6]; their median is 3.5 (R: wilcox.test(1:6, conf.int = TRUE)
        // gives the same ends and estimate).
        let got = signed_rank_interval(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 0.95).unwrap();
        assert_eq!((got.low, got.high, got.estimate), (1.0, 6.0, 3.5));
        assert!(got.exact);
        // 1..=10: k = 9; the 9th smallest Walsh average is 3 and the 9th
        // largest 8; the estimate 5.5.
        let ten: Vec<f64> = (1..=10).map(f64::from).collect();
        let got = signed_rank_interval(&ten, 0.95).unwrap();
        assert_eq!((got.low, got.high, got.estimate), (3.0, 8.0, 5.5));
        // x = 11..=14, y = 1..=4: differences 7 to 13, k = 1: [7, 13], HL 10.
        let got =
            rank_sum_interval(&[11.0, 12.0, 13.0, 14.0], &[1.0, 2.0, 3.0, 4.0], 0.95).unwrap();
        assert_eq!((got.low, got.high, got.estimate), (7.0, 13.0, 10.0));
        assert!(signed_rank_interval(&[1.0; 5], 0.95).is_none());
        assert!(rank_sum_interval(&[1.0; 3], &[2.0; 3], 0.95).is_none());
    }

    #[test]
    fn the_normal_approximation_takes_over_close_to_the_exact_counts() {
        // At 49 (the last exact size) both ways must agree within one rank.
        let n = 49.0f64;
        let exact = k_exact(&signed_rank_counts(49), 0.05).unwrap() as f64;
        let mean = n * (n + 1.0) / 4.0;
        let sd = (n * (n + 1.0) * (2.0 * n + 1.0) / 24.0).sqrt();
        let approx = k_normal(mean, sd, 0.05).unwrap() as f64;
        assert!((exact - approx).abs() <= 1.0, "{exact} against {approx}");
        let exact = k_exact(&rank_sum_counts(49, 49), 0.05).unwrap() as f64;
        let sd = (49.0f64 * 49.0 * 99.0 / 12.0).sqrt();
        let approx = k_normal(49.0 * 49.0 / 2.0, sd, 0.05).unwrap() as f64;
        assert!((exact - approx).abs() <= 1.0, "{exact} against {approx}");
        let big: Vec<f64> = (0..120).map(|i| f64::from(i % 7) - 3.0).collect();
        let got = signed_rank_interval(&big, 0.95).unwrap();
        assert!(!got.exact && got.low <= 0.0 && got.high >= 0.0);
    }
}
