//! The pairs of the comparisons this server ran, in memory, kept so "more
//! pairs" can take one up at its plan's next look.

use std::collections::VecDeque;
use std::sync::Mutex;

use pipebench::stats::verdict::Schedule;
use pipebench::steps::plan::RunParams;

/// The pairs of a comparison this server ran, kept to be taken up by "more
/// pairs": the two sides, their parameters, the rates in the order they ran,
/// and the plan of looks they were run under (each look spends its share of
/// the 5%, so "more pairs" may only go on to the plan's next look).
#[derive(Debug, Clone)]
pub(crate) struct SeriesPairs {
    /// The first side's step.
    pub(crate) a: String,
    /// The second side's step.
    pub(crate) b: String,
    /// Both sides' run parameters.
    pub(crate) params: RunParams,
    /// The first side's rates, GiB/s, in the order they ran.
    pub(crate) rates_a: Vec<f64>,
    /// The second side's rates.
    pub(crate) rates_b: Vec<f64>,
    /// The plan of looks they were run under.
    pub(crate) schedule: Schedule,
}

/// Most comparisons' pairs kept at once; the oldest go first.
const KEPT_SERIES: usize = 64;

/// The pairs of the comparisons this server ran, by a random id the page
/// hears in the verdict (`series`). In memory only: a restart forgets them,
/// and "more pairs" then starts afresh.
#[derive(Debug, Default)]
pub(crate) struct SeriesStore {
    kept: Mutex<VecDeque<(String, SeriesPairs)>>,
}

impl SeriesStore {
    /// Keeps `pairs` under `id`, the oldest kept going first past [`KEPT_SERIES`].
    pub(crate) fn keep(&self, id: String, pairs: SeriesPairs) {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.retain(|(k, _)| *k != id);
        if kept.len() >= KEPT_SERIES {
            kept.pop_front();
        }
        kept.push_back((id, pairs));
    }

    /// The pairs kept under `id`, to be taken up by "more pairs".
    pub(crate) fn take_up(&self, id: &str) -> Option<SeriesPairs> {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.iter().find(|(k, _)| k == id).map(|(_, p)| p.clone())
    }
}

/// A fresh id for a series: 128 random bits in hex.
pub(crate) fn new_series_id() -> String {
    let bits: u128 = rand::random();
    format!("{bits:032x}")
}
