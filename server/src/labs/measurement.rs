//! One result recorded for a lab task: what the store keeps, the checks judge
//! and the report carries, apart from all three so none of them imports another
//! for it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One result recorded for a lab task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// The lab task it belongs to.
    pub task: String,
    /// The swept value (bytes), for a sweep task's point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<u64>,
    /// The run's result, as pipebench reports it.
    pub result: Value,
    /// Whether it was recorded by a runner whose checks judge at planned
    /// looks (the checks' `LAB_LOOKS`); absent (false) in records from before, which
    /// are judged again under that rule, and the outcome says so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub planned_looks: bool,
}

impl Measurement {
    /// Whether the run says it was watched (its progress streamed, its pipe
    /// sampled). Watching costs a run its speed, so no check on a figure that
    /// watching moves counts such a run (the checks' `moved_by_watching`): the lab card
    /// has made only quiet runs since runs said so, and an older watched one
    /// is left out (a record that does not say, from before the field, counts
    /// as it always did). As labchecks.js decides.
    pub fn watched(&self) -> bool {
        self.result.get("watched").and_then(Value::as_bool) == Some(true)
    }
}
