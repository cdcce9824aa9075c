//! Statistics for comparisons that say how sure they are: two sets of runs
//! become a ratio with a confidence interval that holds its level, and a
//! verdict in words. This is the one place pipebook judges: the CLI, the
//! server's compare jobs, the lab checks and `/api/judge` (for the page) all
//! call [`verdict`].
//!
//! Pure and deterministic: the same runs always give the same judgement, so a
//! verdict can be judged again from a saved report.
//!
//! - [`intervals`]: the signed-rank and rank-sum intervals (exact counts).
//! - [`verdict`]: the judgement (ratio, interval, verdict, design, sentence).
//! - [`rng`]: a seeded generator (SplitMix64) for replays of null data.
//! - [`summarize`]: the median, slowest and fastest of repeated runs.
//!
//! May use: nothing of the crate (pure arithmetic).

pub mod intervals;
pub mod rng;
pub mod verdict;

#[cfg(test)]
mod null_replay;

/// Pairs a comparison runs unless told otherwise (the CLI, the compare card):
/// above the 6 that can reach 95% at all, enough to find a 1.25x difference at
/// a run-to-run spread of 10% nearly always (see the replays' test).
pub const DEFAULT_PAIRS: usize = 8;

/// Runs a side that separate sets of runs (a lab's tasks) take: above the 4
/// that can reach 95% at all, enough to find a 1.25x difference at a spread
/// of 10% four times in five (at 4 a side, about 3 in 5).
#[cfg(test)]
pub(crate) const DEFAULT_RUNS_A_SIDE: usize = 6;

/// Median, min and max of a set of runs.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Summary {
    /// Number of runs.
    pub runs: usize,
    /// Median GiB/s.
    pub median: f64,
    /// Slowest run.
    pub min: f64,
    /// Fastest run.
    pub max: f64,
}

/// Summarises `values`; None when empty.
pub fn summarize(values: &[f64]) -> Option<Summary> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    Some(Summary {
        runs: sorted.len(),
        median: median(&sorted)?,
        min: *sorted.first()?,
        max: *sorted.last()?,
    })
}

/// The median of `values` (the mean of the middle two for an even count); `None`
/// when empty. NaNs sort last and are the caller's to keep out.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    Some(match n % 2 {
        1 => sorted[n / 2],
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    })
}

/// The `q` quantile (0..=1) of sorted `values`, interpolated linearly between the
/// two nearest ranks (the "type 7" rule of R and numpy's default). Only the
/// tests call it now.
#[cfg(test)]
pub(crate) fn quantile_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let h = (sorted.len() - 1) as f64 * q.clamp(0.0, 1.0);
    let low = h.floor() as usize;
    let high = h.ceil() as usize;
    Some(sorted[low] + (h - low as f64) * (sorted[high] - sorted[low]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn quantiles_interpolate_like_numpy() {
        // numpy.quantile([1, 2, 3, 4, 10], [0.025, 0.5, 0.975]) with the default
        // (linear) method: 1.1, 3.0, 9.4.
        let sorted = [1.0, 2.0, 3.0, 4.0, 10.0];
        let got: Vec<f64> = [0.025, 0.5, 0.975]
            .iter()
            .map(|q| quantile_sorted(&sorted, *q).unwrap())
            .collect();
        for (g, want) in got.iter().zip([1.1, 3.0, 9.4]) {
            assert!((g - want).abs() < 1e-12, "{got:?}");
        }
    }
}
