//! The labs' progress, kept in `<state-dir>/labs.jsonl` beside the results: one
//! record a line (a prediction, a measurement with its full result, or a fresh
//! start), written like the results history (see `jsonl`), opened like it (see
//! `statefile`: no links, the server's own regular file, 0600). A lab's state
//! is the fold of its records, so a reload or a restart of the server shows the
//! same.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use pipebench::engine::result::KeptResult;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::measurement::Measurement;
use crate::store::statefile::{self, SaveError, SaveStatus, StateError};

const FILE_NAME: &str = "labs.jsonl";

/// One line of `labs.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum Record {
    /// The student's prediction (a later one replaces it).
    Prediction {
        /// Lab id.
        lab: String,
        /// A number, or a task id for a choice.
        value: Value,
        /// When, Unix ms.
        at_ms: u64,
    },
    /// A result recorded for a lab task.
    Measurement {
        /// Lab id.
        lab: String,
        /// Task id.
        task: String,
        /// The swept value, for a sweep task.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        value: Option<u64>,
        /// The run's result: a pipe result, an IPC record or a latency record.
        result: KeptResult,
        /// Recorded by a runner whose checks judge at planned looks (absent in
        /// older records: they are judged again under that rule, and say so).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        planned_looks: bool,
        /// When, Unix ms.
        at_ms: u64,
    },
    /// Start the lab over: earlier predictions and measurements no longer count.
    Reset {
        /// Lab id.
        lab: String,
        /// When, Unix ms.
        at_ms: u64,
    },
}

impl Record {
    /// The lab it belongs to.
    pub(crate) fn lab(&self) -> &str {
        match self {
            Record::Prediction { lab, .. }
            | Record::Measurement { lab, .. }
            | Record::Reset { lab, .. } => lab,
        }
    }
}

/// A prediction as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PredictionRecord {
    /// What was predicted.
    pub value: Value,
    /// When.
    pub at_ms: u64,
}

/// Where one lab stands.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LabState {
    /// The latest prediction since the last fresh start.
    pub prediction: Option<PredictionRecord>,
    /// Results since the last fresh start, oldest first.
    pub measurements: Vec<Measurement>,
}

/// Every lab's state, and what reading found.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LabsState {
    /// By lab id.
    pub labs: BTreeMap<String, LabState>,
    /// Lines that are not a record (skipped).
    pub rejected: usize,
    /// Whether the last line is incomplete (a save was interrupted).
    pub torn_tail: bool,
}

/// Why the lab records could not be read or written.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct StoreError(#[from] StateError);

impl StoreError {
    /// The state file's error underneath.
    pub fn state(&self) -> &StateError {
        &self.0
    }
}

/// The lab records of one state folder.
#[derive(Debug)]
pub(crate) struct LabStore {
    dir: PathBuf,
    saving: Arc<SaveStatus>,
}

impl LabStore {
    /// The store in `dir` (created on first write), with its own record of
    /// whether saving works.
    pub(crate) fn new(dir: &Path) -> LabStore {
        LabStore::sharing(dir, Arc::new(SaveStatus::default()))
    }

    /// The store in `dir`, recording whether saving works in `saving` (the
    /// results history's, for one answer about the folder).
    pub(crate) fn sharing(dir: &Path, saving: Arc<SaveStatus>) -> LabStore {
        LabStore {
            dir: dir.to_path_buf(),
            saving,
        }
    }

    /// Where the records are.
    pub(crate) fn path(&self) -> PathBuf {
        self.dir.join(FILE_NAME)
    }

    /// Refuses a `labs.jsonl` that is a link, not a regular file or another
    /// user's (at start-up, before anything reads it).
    pub(crate) fn check(&self) -> Result<(), StoreError> {
        Ok(statefile::check_existing(&self.path())?)
    }

    /// Appends one record durably (0600, never through a link). Blocking.
    pub(crate) fn append(&self, record: &Record) -> Result<(), StoreError> {
        let mut line = serde_json::to_vec(record).expect("records serialise");
        line.push(b'\n');
        let outcome = statefile::prepare_dir(&self.dir)
            .and_then(|()| crate::store::jsonl::append(&self.dir, FILE_NAME, &line))
            .map_err(StoreError::from);
        match &outcome {
            Ok(()) => self.saving.record(Ok(())),
            Err(err) => self.saving.record(Err(&SaveError::from_error(
                "a lab record was not saved",
                err.state(),
            ))),
        }
        outcome
    }

    /// Every lab's state. Blocking: reads the whole file (a class's labs are
    /// a few hundred lines; at most [`statefile::MAX_STATE_READ`] bytes).
    pub(crate) fn state(&self) -> Result<LabsState, StoreError> {
        let bytes = statefile::read_all(&self.path())?;
        Ok(fold(&bytes))
    }
}

/// The state the records in `bytes` describe.
pub(crate) fn fold(bytes: &[u8]) -> LabsState {
    let (lines, torn_tail) = crate::store::jsonl::complete_lines(bytes);
    let mut state = LabsState {
        torn_tail,
        ..LabsState::default()
    };
    for line in lines {
        let Ok(record) = serde_json::from_slice::<Record>(line) else {
            state.rejected += 1;
            continue;
        };
        let lab = state.labs.entry(record.lab().to_string()).or_default();
        match record {
            Record::Prediction { value, at_ms, .. } => {
                lab.prediction = Some(PredictionRecord { value, at_ms })
            }
            Record::Measurement {
                task,
                value,
                result,
                planned_looks,
                ..
            } => lab.measurements.push(Measurement {
                task,
                value,
                result: serde_json::to_value(&result).expect("results serialise"),
                planned_looks,
            }),
            Record::Reset { .. } => *lab = LabState::default(),
        }
    }
    state
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn prediction(lab: &str, value: f64) -> Record {
        Record::Prediction {
            lab: lab.into(),
            value: json!(value),
            at_ms: 1,
        }
    }

    #[test]
    fn records_survive_a_new_store_and_a_torn_line() {
        let dir = tempfile::tempdir().unwrap();
        let store = LabStore::new(dir.path());
        store.append(&prediction("variance", 3.0)).unwrap();
        store.append(&prediction("sizes", 2.0)).unwrap();
        // A save that died mid-line.
        std::fs::OpenOptions::new()
            .append(true)
            .open(store.path())
            .and_then(|mut f| std::io::Write::write_all(&mut f, b"{\"kind\":\"predic"))
            .unwrap();
        let state = LabStore::new(dir.path()).state().unwrap();
        assert!(state.torn_tail);
        assert_eq!(
            state.labs["variance"].prediction.as_ref().unwrap().value,
            json!(3.0)
        );
        // The next save ends the torn line first and is read back whole.
        store.append(&prediction("variance", 4.0)).unwrap();
        let state = store.state().unwrap();
        assert_eq!((state.torn_tail, state.rejected), (false, 1));
        assert_eq!(
            state.labs["variance"].prediction.as_ref().unwrap().value,
            json!(4.0)
        );
    }

    #[test]
    fn a_fresh_start_forgets_the_lab_only() {
        let dir = tempfile::tempdir().unwrap();
        let store = LabStore::new(dir.path());
        store.append(&prediction("variance", 3.0)).unwrap();
        store.append(&prediction("sizes", 2.0)).unwrap();
        store
            .append(&Record::Reset {
                lab: "variance".into(),
                at_ms: 2,
            })
            .unwrap();
        let state = store.state().unwrap();
        assert_eq!(state.labs["variance"], LabState::default());
        assert!(state.labs["sizes"].prediction.is_some());
    }
}
