//! The Wilcoxon signed-rank test, exact, on paired differences.
//!
//! Why this test: the runs come in interleaved pairs, so the natural unit is the
//! pair, and its log-ratio ln(a/b) is scale-free (a 2x in either direction weighs
//! the same). The signed-rank test asks whether those log-ratios sit
//! symmetrically around zero; unlike Mann-Whitney, which would treat the two sets
//! as independent samples, it lets each pair cancel what the machine did while
//! the pair ran. Exact rather than the normal approximation because comparisons
//! are often 5 to 20 pairs, where the approximation is poor.
//!
//! Zeros are dropped (Wilcoxon's own rule, scipy's default `zero_method="wilcox"`);
//! tied magnitudes share their average rank and the p-value is the exact one of
//! the permutation distribution given those ranks.

/// The test's outcome.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SignedRank {
    /// Sum of the ranks of the positive differences (W+).
    pub w_plus: f64,
    /// Sum of the ranks of the negative differences (W-).
    pub w_minus: f64,
    /// Differences that were not zero (the test's n).
    pub n: usize,
    /// Two-sided exact p-value.
    pub p_value: f64,
}

/// Most non-zero differences the exact distribution is computed for: its table
/// grows as n^3 (n = 400 is about 30 million steps, well under a second).
pub const MAX_EXACT: usize = 400;

/// The exact two-sided signed-rank test of `differences` against zero; `None`
/// when a difference is not finite or there are more than [`MAX_EXACT`] non-zero
/// ones. With no non-zero difference the p-value is 1.
pub fn signed_rank(differences: &[f64]) -> Option<SignedRank> {
    if differences.iter().any(|d| !d.is_finite()) {
        return None;
    }
    let mut nonzero: Vec<f64> = differences.iter().copied().filter(|d| *d != 0.0).collect();
    let n = nonzero.len();
    if n > MAX_EXACT {
        return None;
    }
    nonzero.sort_by(|x, y| x.abs().total_cmp(&y.abs()));
    // Ranks doubled, so average ranks of ties (k + 0.5) stay integers.
    let mut doubled = vec![0usize; n];
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && nonzero[j + 1].abs() == nonzero[i].abs() {
            j += 1;
        }
        // Ranks i+1 ..= j+1 share their mean; doubled: (i+1) + (j+1).
        for slot in &mut doubled[i..=j] {
            *slot = i + j + 2;
        }
        i = j + 1;
    }
    let w_plus2: usize = nonzero
        .iter()
        .zip(&doubled)
        .filter(|(d, _)| **d > 0.0)
        .map(|(_, r)| r)
        .sum();
    let total2: usize = doubled.iter().sum();
    // Under the null each rank carries a + or - with probability 1/2: the
    // distribution of doubled W+ by dynamic programming over the ranks.
    let mut dist = vec![0.0f64; total2 + 1];
    dist[0] = 1.0;
    let mut reach = 0;
    for &r in &doubled {
        for s in (0..=reach).rev() {
            let p = dist[s] / 2.0;
            dist[s] = p;
            dist[s + r] += p;
        }
        reach += r;
    }
    let cdf: f64 = dist[..=w_plus2].iter().sum();
    let sf: f64 = dist[w_plus2..].iter().sum();
    let p_value = (2.0 * cdf.min(sf)).min(1.0);
    Some(SignedRank {
        w_plus: w_plus2 as f64 / 2.0,
        w_minus: (total2 - w_plus2) as f64 / 2.0,
        n,
        p_value,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn darwins_plants_as_in_scipys_documentation() {
        // scipy.stats.wilcoxon's documented example: the height differences of
        // Darwin's cross- and self-fertilised plants (Fisher, The Design of
        // Experiments). wilcoxon(d) gives statistic 24.0 (W-, the smaller sum)
        // and p-value 0.041259765625 (exact, two-sided).
        let d = [
            6.0, 8.0, 14.0, 16.0, 23.0, 24.0, 28.0, 29.0, 41.0, -48.0, 49.0, 56.0, 60.0, -67.0,
            75.0,
        ];
        let got = signed_rank(&d).unwrap();
        assert_eq!(got.w_minus, 24.0);
        assert_eq!(got.w_plus, 96.0);
        assert_eq!(got.n, 15);
        assert!((got.p_value - 0.041259765625).abs() < 1e-12, "{got:?}");
    }

    #[test]
    fn five_pairs_all_one_way_is_the_smallest_p_five_can_give() {
        // 2 of the 32 equally likely sign patterns are this extreme: p = 1/16.
        let got = signed_rank(&[0.1, 0.2, 0.3, 0.4, 0.5]).unwrap();
        assert!((got.p_value - 0.0625).abs() < 1e-15, "{got:?}");
        let flipped = signed_rank(&[-0.1, -0.2, -0.3, -0.4, -0.5]).unwrap();
        assert_eq!(flipped.p_value, got.p_value);
    }

    #[test]
    fn zeros_are_dropped_and_ties_share_a_rank() {
        let got = signed_rank(&[0.0, 1.0, -1.0, 2.0]).unwrap();
        assert_eq!(got.n, 3);
        // |1| and |-1| share rank 1.5; 2 is rank 3.
        assert_eq!((got.w_plus, got.w_minus), (4.5, 1.5));
        assert_eq!(signed_rank(&[0.0, 0.0]).unwrap().p_value, 1.0);
        assert!(signed_rank(&[f64::NAN]).is_none());
    }
}
