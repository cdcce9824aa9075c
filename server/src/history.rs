//! The results history, kept in `<state-dir>/results.json`.
//!
//! Every save writes the whole list to a temporary file in the same directory,
//! fsyncs it, renames it over the old file and fsyncs the directory. A rename is
//! atomic, so after a crash the file holds either the old list or the new one,
//! never half of either: nothing already saved can be lost.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use pipebench::report::RunResult;

/// How many results are kept; older ones drop off the front.
pub const DEFAULT_LIMIT: usize = 1000;

const FILE_NAME: &str = "results.json";
const TEMP_PREFIX: &str = ".results.json.tmp-";

/// Why the history could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// A file operation failed.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// On which path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// Results of past runs, oldest first, mirrored on disk.
#[derive(Debug)]
pub struct History {
    dir: PathBuf,
    limit: usize,
    results: Mutex<VecDeque<RunResult>>,
}

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> HistoryError {
    let path = path.to_path_buf();
    move |source| HistoryError::Io {
        action,
        path,
        source,
    }
}

impl History {
    /// Opens (creating) `dir` and loads its history. Leftover temporary files of an
    /// interrupted save are removed; an unreadable results file is moved aside
    /// (never overwritten) and the history starts empty.
    pub fn open(dir: &Path, limit: usize) -> Result<History, HistoryError> {
        std::fs::create_dir_all(dir).map_err(io_error("cannot create", dir))?;
        for entry in std::fs::read_dir(dir)
            .map_err(io_error("cannot list", dir))?
            .flatten()
        {
            if entry.file_name().to_string_lossy().starts_with(TEMP_PREFIX) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        let path = dir.join(FILE_NAME);
        let results = match std::fs::read(&path) {
            Ok(bytes) => match serde_json::from_slice::<VecDeque<RunResult>>(&bytes) {
                Ok(results) => results,
                Err(err) => {
                    let aside = dir.join(format!("{FILE_NAME}.unreadable-{}", now_ms()));
                    std::fs::rename(&path, &aside).map_err(io_error("cannot move aside", &path))?;
                    tracing::warn!(
                        "{} is not a results list ({err}); moved it to {} and starting a new history",
                        path.display(),
                        aside.display()
                    );
                    VecDeque::new()
                }
            },
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => VecDeque::new(),
            Err(err) => return Err(io_error("cannot read", &path)(err)),
        };
        let mut history = History {
            dir: dir.to_path_buf(),
            limit,
            results: Mutex::new(results),
        };
        history.trim();
        Ok(history)
    }

    fn trim(&mut self) {
        let limit = self.limit;
        let results = self.results.get_mut().unwrap_or_else(|e| e.into_inner());
        while results.len() > limit {
            results.pop_front();
        }
    }

    /// Where the history is saved.
    pub fn path(&self) -> PathBuf {
        self.dir.join(FILE_NAME)
    }

    /// All results, oldest first, as JSON.
    pub fn to_json(&self) -> Vec<u8> {
        let results = self.results.lock().unwrap_or_else(|e| e.into_inner());
        serde_json::to_vec(&*results).expect("results serialise")
    }

    /// Number of results kept.
    pub fn len(&self) -> usize {
        self.results.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds a result and saves the list. The lock is held while saving so two
    /// saves never interleave and the file always matches memory.
    pub fn append(&self, result: RunResult) -> Result<(), HistoryError> {
        let mut results = self.results.lock().unwrap_or_else(|e| e.into_inner());
        results.push_back(result);
        while results.len() > self.limit {
            results.pop_front();
        }
        let json = serde_json::to_vec(&*results).expect("results serialise");
        write_atomically(&self.dir, FILE_NAME, &json)
    }
}

fn now_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}

/// Replaces `dir/name` with `bytes` so that a crash at any point leaves either
/// the old content or the new one.
fn write_atomically(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), HistoryError> {
    let temp = dir.join(format!("{TEMP_PREFIX}{}", std::process::id()));
    let target = dir.join(name);
    let result = (|| {
        let mut file = File::create(&temp).map_err(io_error("cannot create", &temp))?;
        file.write_all(bytes)
            .map_err(io_error("cannot write", &temp))?;
        file.sync_all().map_err(io_error("cannot sync", &temp))?;
        drop(file);
        std::fs::rename(&temp, &target).map_err(io_error("cannot rename onto", &target))?;
        // The rename lives in the directory: sync it too, or a power cut may undo it.
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(io_error("cannot sync", dir))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use pipebench::report::{EndSummary, RunOptions};

    fn result(step: &str, bytes: u64) -> RunResult {
        let plan = pipebench::plan::RunPlan::for_step_id(
            step,
            &Default::default(),
            &pipebench::plan::Limits::default(),
        )
        .unwrap();
        RunResult {
            step: step.into(),
            options: RunOptions {
                writer: plan.writer,
                reader: plan.reader,
            },
            bytes,
            elapsed_ms: 10.0,
            gib_per_s: 1.0,
            iterations: 1,
            bytes_per_call: 256 << 10,
            pipe_capacity: Some(65536),
            stopped_by_budget: false,
            writer: EndSummary::default(),
            reader: EndSummary::default(),
            huge_pages: None,
            corrupted_bytes: None,
            argv: Vec::new(),
            pipeline: String::new(),
            warnings: Vec::new(),
            finished_at_ms: 1,
        }
    }

    #[test]
    fn survives_reopening_and_keeps_the_newest() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::open(dir.path(), 3).unwrap();
        for i in 0..5 {
            history.append(result("write-read", i)).unwrap();
        }
        drop(history);
        let again = History::open(dir.path(), 3).unwrap();
        let list: Vec<RunResult> = serde_json::from_slice(&again.to_json()).unwrap();
        assert_eq!(list.iter().map(|r| r.bytes).collect::<Vec<_>>(), [2, 3, 4]);
    }

    #[test]
    fn a_crash_mid_save_loses_nothing_saved() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::open(dir.path(), 10).unwrap();
        history.append(result("busy-loop", 7)).unwrap();
        let saved = std::fs::read(history.path()).unwrap();
        // A save that died after writing half its temporary file.
        let temp = dir.path().join(format!("{TEMP_PREFIX}99999"));
        std::fs::write(&temp, &saved[..saved.len() / 2]).unwrap();
        drop(history);
        let again = History::open(dir.path(), 10).unwrap();
        assert_eq!(again.len(), 1);
        assert!(!temp.exists(), "leftover temporary file is cleaned up");
        assert_eq!(std::fs::read(again.path()).unwrap(), saved);
    }

    #[test]
    fn an_unreadable_file_is_kept_aside_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE_NAME), b"{ not json").unwrap();
        let history = History::open(dir.path(), 10).unwrap();
        assert!(history.is_empty());
        let aside: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains("unreadable"))
            .collect();
        assert_eq!(aside.len(), 1);
        assert_eq!(std::fs::read(aside[0].path()).unwrap(), b"{ not json");
    }
}
