//! What a comparison says: a `leg` per run ([`Leg`]) and the `verdict`
//! ([`CompareReport`]). Apart from the job that runs it, so the engine's
//! `Event` can carry it without depending on how it is run.

use serde::{Deserialize, Serialize};

use crate::engine::result::RunResult;
use crate::stats::verdict::Comparison;

/// Which side of a comparison a run belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// The first configuration named.
    A,
    /// The second.
    B,
}

/// A run's place in a comparison and its result: the `leg` event's content.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Leg {
    /// Its side.
    pub side: Side,
    /// This run's place, from 1.
    pub index: usize,
    /// How many runs are planned now.
    pub of: usize,
    /// The comparison so far, once two whole pairs have run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comparison: Option<Comparison>,
    /// The run's result.
    pub result: Box<RunResult>,
}

/// A finished comparison: the `verdict` event's content.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareReport {
    /// A's label.
    pub a: String,
    /// B's label.
    pub b: String,
    /// A's rates (GiB/s) in the order they ran.
    pub a_gib_per_s: Vec<f64>,
    /// B's rates.
    pub b_gib_per_s: Vec<f64>,
    /// The statistics and the verdict.
    #[serde(flatten)]
    pub comparison: Comparison,
    /// The verdict in words.
    pub sentence: String,
    /// Every kind of warning the runs carried, once, with how many more had it.
    pub warnings: Vec<String>,
}
