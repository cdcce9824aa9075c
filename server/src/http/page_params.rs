//! `GET /api/params`: the bounds and first values of the fields the cards
//! type themselves (a comparison's pairs and budget, the latency cards' round
//! trips, a sweep's runs per value), read from the constants the server checks
//! the same messages with, so the page never types a bound of its own.
//! (A run's own parameters are published with each step by `/api/steps`; the
//! IPC lab's by `/api/ipc`.)

use pipebench::stats::intervals::{min_pairs, min_runs_a_side};
use pipebench::stats::verdict::{Schedule, LEVEL, MAX_LOOKS};
use serde::Serialize;

use crate::jobs::compare::{
    CARD_BUDGET, CARD_PAIRS, DEFAULT_PAGE_PAIRS, MAX_PAGE_BUDGET, MAX_PAGE_PAIRS, MIN_PAGE_PAIRS,
};
use crate::jobs::sweep::{DEFAULT_SWEEP_REPEATS, MAX_SWEEP_REPEATS, MIN_SWEEP_REPEATS};
use crate::params::latency::{MATRIX_ROUND_TRIPS, PAGE_MAX_ROUND_TRIPS, PAGE_ROUND_TRIPS};

/// One whole-number field: what the server accepts, what it takes when the
/// message leaves the field out, and what the card shows first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct Bound {
    /// Smallest accepted.
    pub(crate) min: u64,
    /// Largest accepted.
    pub(crate) max: u64,
    /// The server's value when the message has none (absent: none is taken,
    /// as a comparison's budget, which is then its pairs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) default: Option<u64>,
    /// The card's first value.
    pub(crate) start: u64,
}

/// The compare card's fields.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CompareBounds {
    /// Pairs asked up front.
    pub(crate) pairs: Bound,
    /// Pairs in all while "run until resolved" adds them.
    pub(crate) budget: Bound,
}

/// The latency cards' fields.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct LatencyBounds {
    /// One mechanism's card.
    pub(crate) round_trips: Bound,
    /// The matrix card, each configuration.
    pub(crate) matrix_round_trips: Bound,
}

/// The sweep card's fields.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SweepBounds {
    /// Runs per value.
    pub(crate) repeats: Bound,
}

/// What the runner's judgements rest on, for the page's own "until resolved"
/// paths: the level, the fewest runs that can reach it, and the looks a
/// sequential design takes (each at 1 - (1 - level) / looks), which the page
/// passes to `/api/judge` as `look` and `looks`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct JudgeParams {
    /// The overall level (0.95).
    pub(crate) level: f64,
    /// Fewest pairs a paired judgement can resolve with.
    pub(crate) min_pairs: usize,
    /// Fewest runs a side an unpaired judgement can resolve with.
    pub(crate) min_runs_a_side: usize,
    /// Looks a run until resolved takes.
    pub(crate) looks: usize,
    /// Most looks `/api/judge` accepts.
    pub(crate) max_looks: usize,
}

/// What `/api/params` publishes.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct PageParams {
    /// `compare` messages.
    pub(crate) compare: CompareBounds,
    /// The judgements' level, sizes and looks.
    pub(crate) judge: JudgeParams,
    /// `latency` messages.
    pub(crate) latency: LatencyBounds,
    /// `sweep` messages.
    pub(crate) sweep: SweepBounds,
}

/// The bounds, from the constants the messages are checked with.
pub(crate) fn page_params() -> PageParams {
    let round_trips = |start: u32| Bound {
        min: u64::from(*pipebench::latency::ROUND_TRIPS.start()),
        max: u64::from(PAGE_MAX_ROUND_TRIPS),
        default: Some(u64::from(PAGE_ROUND_TRIPS)),
        start: u64::from(start),
    };
    PageParams {
        compare: CompareBounds {
            pairs: Bound {
                min: MIN_PAGE_PAIRS as u64,
                max: MAX_PAGE_PAIRS as u64,
                default: Some(DEFAULT_PAGE_PAIRS as u64),
                start: CARD_PAIRS as u64,
            },
            budget: Bound {
                min: MIN_PAGE_PAIRS as u64,
                max: MAX_PAGE_BUDGET as u64,
                default: None,
                start: CARD_BUDGET as u64,
            },
        },
        latency: LatencyBounds {
            round_trips: round_trips(PAGE_ROUND_TRIPS),
            matrix_round_trips: round_trips(MATRIX_ROUND_TRIPS),
        },
        judge: JudgeParams {
            level: LEVEL,
            min_pairs: min_pairs(LEVEL),
            min_runs_a_side: min_runs_a_side(LEVEL),
            looks: Schedule::DEFAULT_LOOKS,
            max_looks: MAX_LOOKS,
        },
        sweep: SweepBounds {
            repeats: Bound {
                min: MIN_SWEEP_REPEATS as u64,
                max: MAX_SWEEP_REPEATS as u64,
                default: Some(DEFAULT_SWEEP_REPEATS as u64),
                start: DEFAULT_SWEEP_REPEATS as u64,
            },
        },
    }
}

/// The JSON of `/api/params`.
pub(crate) fn published_json() -> Vec<u8> {
    serde_json::to_vec(&page_params()).expect("bounds serialise")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each card's first value is one the server accepts.
    #[test]
    fn every_first_value_is_within_its_bounds() {
        let p = page_params();
        for (name, bound) in [
            ("compare.pairs", p.compare.pairs),
            ("compare.budget", p.compare.budget),
            ("latency.round_trips", p.latency.round_trips),
            ("latency.matrix_round_trips", p.latency.matrix_round_trips),
            ("sweep.repeats", p.sweep.repeats),
        ] {
            assert!(bound.min <= bound.max, "{name}: {bound:?}");
            assert!(
                (bound.min..=bound.max).contains(&bound.start),
                "{name}: {bound:?}"
            );
            if let Some(default) = bound.default {
                assert!(
                    (bound.min..=bound.max).contains(&default),
                    "{name}: {bound:?}"
                );
            }
        }
        assert!(p.compare.pairs.max <= p.compare.budget.max);
        // No card starts below what can reach the level.
        assert!(p.compare.pairs.min >= p.judge.min_pairs as u64);
        assert_eq!((p.judge.min_pairs, p.judge.min_runs_a_side), (6, 4));
    }
}
