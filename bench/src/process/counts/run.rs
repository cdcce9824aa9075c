//! A run's counts: each end's window under the name the result gives it, and
//! what could not be counted, once per reason.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{merge, Counted, EndCounts, Missing, ModelCheck};

/// The counts of a run: one object per end, named as the result names its ends
/// (`writer` and `reader` for a pipe step, the roles of an IPC record:
/// `producer` and `consumer`, or `solo`), what could not be counted, and the
/// book's model beside the figures (a pipe step's; an IPC record keeps its
/// own `model` beside).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    /// Each end's counts.
    #[serde(flatten)]
    pub ends: BTreeMap<String, EndCounts>,
    /// What could not be counted, and why (one entry per reason).
    #[serde(default)]
    pub missing: Vec<Missing>,
    /// The book's predictions for this run's configuration, judged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub model: Vec<ModelCheck>,
}

impl Counts {
    /// The counts of ends `(name, counted)`; ends that counted nothing are left out.
    pub fn of<'a>(
        ends: impl IntoIterator<Item = (&'a str, Option<&'a Counted>)>,
    ) -> Option<Counts> {
        let mut counts = Counts::default();
        let mut missing = Vec::new();
        for (name, counted) in ends {
            let Some(counted) = counted else { continue };
            counts.ends.insert(name.to_string(), counted.counts.clone());
            missing.extend(counted.missing.iter().cloned());
        }
        if counts.ends.is_empty() {
            return None;
        }
        counts.missing = merge(missing);
        Some(counts)
    }
}
