//! What a comparison says: a `leg` per run ([`Leg`]) and the `verdict`
//! ([`CompareReport`]). Apart from the job that runs it, so the engine's
//! `Event` can carry it without depending on how it is run.

use serde::{Deserialize, Serialize};

use crate::engine::result::RunResult;
use crate::stats::verdict::Judgement;

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
    /// The judgement so far, at each look of the comparison's design (only
    /// looks decide; between them it is absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comparison: Option<Judgement>,
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
    /// The judgement (ratio, interval, verdict, method, design, sentence).
    #[serde(flatten)]
    pub judgement: Judgement,
    /// The server's id of these pairs, which "more pairs" names to take them
    /// up (absent from the CLI).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub series: Option<String>,
    /// The pairs at the next planned look "more pairs" would run to (the
    /// server's, with `series`); absent when the verdict is final: its plan's
    /// last look is spent (a one-look comparison's at once).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_look: Option<usize>,
    /// Every kind of warning the runs carried, once, with how many more had it.
    pub warnings: Vec<String>,
}
