//! `/api/system`'s body: the machine report probed at start, whose behaviour
//! probes a `probe` job replaces. [`crate::jobs::saving`] hands the fresh answers
//! here before the page hears them, so a page that reads `/api/system` after
//! its `behaviour` event sees them, and the labs judge by them from then on.

use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use axum::body::Bytes;
use pipebench::machine::behaviour::Probe;
use serde_json::Value;

/// The machine report as the server serves it. Shared behind an `Arc`.
pub(crate) struct SystemCache {
    inner: RwLock<Cached>,
}

struct Cached {
    /// The report, with `behaviour` and `behaviour_probed_at_ms`.
    report: Value,
    /// `report`, serialised once per change.
    json: Bytes,
    /// `report.behaviour`, read once per change.
    behaviour: Vec<Probe>,
}

impl Cached {
    fn of(report: Value) -> Cached {
        let behaviour = report
            .get("behaviour")
            .cloned()
            .and_then(|list| serde_json::from_value(list).ok())
            .unwrap_or_default();
        let json = Bytes::from(serde_json::to_vec(&report).expect("a JSON value serialises"));
        Cached {
            report,
            json,
            behaviour,
        }
    }
}

impl SystemCache {
    /// The cache of `report` (a serialised `SystemReport`).
    pub(crate) fn new(report: Value) -> SystemCache {
        SystemCache {
            inner: RwLock::new(Cached::of(report)),
        }
    }

    fn read(&self) -> RwLockReadGuard<'_, Cached> {
        // A panic elsewhere must not take /api/system down with it.
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Cached> {
        self.inner.write().unwrap_or_else(|e| e.into_inner())
    }

    /// `/api/system`'s body.
    pub(crate) fn json(&self) -> Bytes {
        self.read().json.clone()
    }

    /// The report as a JSON value (a lab report carries it).
    pub(crate) fn report(&self) -> Value {
        self.read().report.clone()
    }

    /// What this kernel does, as last probed.
    pub(crate) fn behaviour(&self) -> Vec<Probe> {
        self.read().behaviour.clone()
    }

    /// Replaces the behaviour probes' answers and when they were probed.
    pub(crate) fn replace_behaviour(&self, behaviour: &[Probe], probed_at_ms: u64) {
        let mut cached = self.write();
        let mut report = std::mem::take(&mut cached.report);
        if !report.is_object() {
            report = Value::Object(serde_json::Map::new());
        }
        report["behaviour"] = serde_json::to_value(behaviour).expect("probes serialise");
        report["behaviour_probed_at_ms"] = Value::from(probed_at_ms);
        *cached = Cached::of(report);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pipebench::machine::behaviour::every_outcome;

    #[test]
    fn fresh_answers_replace_the_old_ones_and_their_time() {
        let old = every_outcome("old");
        let cache = SystemCache::new(serde_json::json!({
            "kernel": "6.12",
            "behaviour": old[..1],
            "behaviour_probed_at_ms": 1,
        }));
        assert_eq!(cache.behaviour(), old[..1].to_vec());
        let fresh = every_outcome("fresh");
        cache.replace_behaviour(&fresh[1..3], 42);
        let served: Value = serde_json::from_slice(&cache.json()).unwrap();
        assert_eq!(served["kernel"], "6.12", "the rest of the report stays");
        assert_eq!(served["behaviour_probed_at_ms"], 42);
        assert_eq!(served["behaviour"].as_array().unwrap().len(), 2);
        assert_eq!(cache.behaviour(), fresh[1..3].to_vec());
        assert_eq!(cache.report(), served);
    }
}
