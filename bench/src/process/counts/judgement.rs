//! A prediction beside the count that tests it: what the book (or a chapter)
//! says a run's counts should be, and whether this run agrees. The pipe steps'
//! model (`engine::counts::model`) and the IPC lab's (`ipc::model`) both judge
//! into these.

use serde::{Deserialize, Serialize};

/// Whether a run agrees with the book's model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelVerdict {
    /// The measured figure is what the model predicts.
    Agrees,
    /// It is not: a finding about this machine or kernel.
    Disagrees,
    /// The count is missing here (see `missing`).
    Unknown,
}

/// One prediction of the book, beside the figure that tests it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelCheck {
    /// A stable name for the prediction, e.g. `writer_page_allocs`.
    pub id: String,
    /// The end it is about.
    pub end: String,
    /// What is measured, with its unit, e.g. "page allocations per 4 KiB moved".
    pub what: String,
    /// The figure, when it was counted.
    pub measured: Option<f64>,
    /// What the book predicts, in words.
    pub model: String,
    /// Whether this run agrees.
    pub verdict: ModelVerdict,
}

impl ModelVerdict {
    /// The verdict on a `measured` figure by the model's test `holds`:
    /// unknown where nothing was measured.
    pub(crate) fn of(measured: Option<f64>, holds: impl Fn(f64) -> bool) -> ModelVerdict {
        match measured {
            None => ModelVerdict::Unknown,
            Some(x) if holds(x) => ModelVerdict::Agrees,
            Some(_) => ModelVerdict::Disagrees,
        }
    }
}
