//! The results history, kept in `<state-dir>/results.jsonl`: one JSON result a line.
//!
//! A save never rewrites what is there: the new line is written in one
//! `write_all` to a file opened with `O_APPEND`, under an exclusive `flock`, and
//! fsynced. So two servers sharing a state folder (the default folder is per
//! checkout, so two instances started there do) keep every result of both, and
//! each sees the other's results because readers re-read the lines appended
//! since they last looked. A crash mid-save can only leave a torn last line:
//! readers skip it, and the next save ends it with a newline before its own.
//!
//! Lines that are not a result (hand edits, a torn line, an older format) are
//! skipped, counted, and copied once to `results.rejected.jsonl` beside the file.
//! A `results.json` of the previous format (one JSON array) is imported once and
//! renamed to `results.json.imported`.
//!
//! Every file here is opened through [`crate::store::statefile`]: never through a
//! symbolic link, only regular files of the server's own user, created 0600
//! (the rejected lines and the archives are copies of the history's own lines,
//! so no more readable than it). A folder the server cannot write to is still
//! read and served, with saving off; a save that fails says why.
//!
//! Only the newest results are served, so the file need not grow for ever: once
//! it holds more than [`ROTATE_FACTOR`] times the limit, the save that crossed
//! the line (still holding the lock) keeps the whole file as
//! `results-<ms>.jsonl` beside it and renames a new `results.jsonl` holding the
//! newest results over it. Nothing is deleted, start-up reads a bounded file,
//! and other servers notice the new file and read it from its start.

use crate::store::jsonl::now_ms;
use std::collections::{HashSet, VecDeque};
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use pipebench::engine::result::{KeptResult, RunResult};

use crate::store::statefile::{self, io, SaveError, SaveStatus, StateError};

/// How many results are served: the newest ones.
pub(crate) const DEFAULT_LIMIT: usize = 1000;

/// The file is rotated when it holds more lines than this many times the limit.
pub(crate) const ROTATE_FACTOR: usize = 2;

const FILE_NAME: &str = "results.jsonl";
/// Where a rotation writes the new file before renaming it into place.
const ROTATING_NAME: &str = "results.jsonl.rotating";
const REJECTED_NAME: &str = "results.rejected.jsonl";
const OLD_FILE_NAME: &str = "results.json";
const IMPORTED_NAME: &str = "results.json.imported";

/// Why the history could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// A state file could not be used: refused (a link, another user's file)
    /// or an I/O failure.
    #[error(transparent)]
    State(#[from] StateError),
}

impl HistoryError {
    /// The state file's error underneath.
    pub(crate) fn state(&self) -> &StateError {
        match self {
            HistoryError::State(err) => err,
        }
    }
}

/// What opening the history found, for the start-up log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct LoadReport {
    /// Results served (at most the limit).
    pub(crate) results: usize,
    /// Lines that are not a result, set aside in `results.rejected.jsonl`.
    pub(crate) rejected: usize,
    /// Whether the last line is incomplete (a save was interrupted).
    pub(crate) torn_tail: bool,
    /// Results imported from an old `results.json`.
    pub(crate) imported: usize,
    /// Whether the rejected lines could be copied to `results.rejected.jsonl`
    /// (not in a folder that cannot be written).
    pub(crate) set_aside: bool,
}

/// The lines read so far: where reading stopped, and the newest valid lines.
#[derive(Debug, Default)]
struct Cache {
    /// Device and inode of the file read, to notice a replaced file.
    identity: Option<(u64, u64)>,
    /// Bytes consumed, always at a line end.
    offset: u64,
    /// Valid result lines, oldest first, at most the limit.
    lines: VecDeque<String>,
    /// Complete lines read from this file so far, served or not.
    on_disk: usize,
}

/// What one read of the new lines found.
#[derive(Debug, Default)]
struct Scan {
    rejected: Vec<Vec<u8>>,
    torn_tail: bool,
}

/// Results of past runs, oldest first, on disk and shared by every server
/// using the same state folder.
#[derive(Debug)]
pub(crate) struct History {
    dir: PathBuf,
    limit: usize,
    cache: Mutex<Cache>,
    report: LoadReport,
    saving: Arc<SaveStatus>,
}

impl History {
    /// Opens (creating, 0700) `dir`, imports an old `results.json` once, and
    /// reads the history. Unreadable lines are set aside (never deleted) and
    /// counted; a torn last line is reported, not fatal. A state folder that is
    /// a symbolic link or another user's, or state files that are links, not
    /// regular or not this user's, are refused. A folder the server cannot
    /// write to is read all the same: saving is then off ([`Self::saving`]
    /// says why) until a save works.
    pub(crate) fn open(dir: &Path, limit: usize) -> Result<History, HistoryError> {
        statefile::prepare_dir(dir)?;
        for name in [FILE_NAME, REJECTED_NAME, OLD_FILE_NAME] {
            statefile::check_existing(&dir.join(name))?;
        }
        let mut history = History {
            dir: dir.to_path_buf(),
            limit,
            cache: Mutex::new(Cache::default()),
            report: LoadReport::default(),
            saving: Arc::new(SaveStatus::default()),
        };
        // Can results be saved here? Opening the file for appending tells.
        let writable = match history.open_locked() {
            Ok(_) => true,
            Err(HistoryError::State(err)) if !err.is_refusal() => {
                history
                    .saving
                    .record(Err(&SaveError::from_error("results cannot be saved", &err)));
                false
            }
            Err(err) => return Err(err),
        };
        let (imported, mut scan) = if writable {
            history.import_old_file()?
        } else {
            if history.dir.join(OLD_FILE_NAME).exists() {
                tracing::warn!(
                    "{} is not imported: the state folder cannot be written",
                    history.dir.join(OLD_FILE_NAME).display()
                );
            }
            (0, Scan::default())
        };
        let later = {
            let mut cache = history.cache.lock().unwrap_or_else(|e| e.into_inner());
            history.refresh(&mut cache)?
        };
        scan.rejected.extend(later.rejected);
        scan.torn_tail |= later.torn_tail;
        let set_aside = match history.set_aside(&scan.rejected) {
            Ok(()) => true,
            Err(err) => {
                // Skipped and counted all the same: a copy that cannot be made
                // (a read-only folder) must not keep the history from being served.
                tracing::warn!(
                    "cannot copy unreadable lines aside: {}",
                    crate::error_chain(&err)
                );
                false
            }
        };
        history.report = LoadReport {
            results: history.len(),
            rejected: scan.rejected.len(),
            torn_tail: scan.torn_tail,
            imported,
            set_aside,
        };
        Ok(history)
    }

    /// What opening found.
    pub(crate) fn load_report(&self) -> &LoadReport {
        &self.report
    }

    /// Whether saving works (as the latest save, or opening, found), shared
    /// with the lab records of the same folder.
    pub(crate) fn saving(&self) -> Arc<SaveStatus> {
        Arc::clone(&self.saving)
    }

    /// Where the history is saved.
    pub(crate) fn path(&self) -> PathBuf {
        self.dir.join(FILE_NAME)
    }

    /// Where unreadable lines are copied.
    pub(crate) fn rejected_path(&self) -> PathBuf {
        self.dir.join(REJECTED_NAME)
    }

    /// The newest results (at most the limit), oldest first, as a JSON array,
    /// including those other servers on this state folder saved.
    pub(crate) fn to_json(&self) -> Vec<u8> {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(err) = self.refresh(&mut cache) {
            // Serve what was read before: an error now must not hide all results.
            tracing::warn!("cannot read new results: {}", crate::error_chain(&err));
        }
        let size = cache.lines.iter().map(|l| l.len() + 1).sum::<usize>() + 2;
        let mut json = Vec::with_capacity(size);
        json.push(b'[');
        for (index, line) in cache.lines.iter().enumerate() {
            if index > 0 {
                json.push(b',');
            }
            json.extend_from_slice(line.as_bytes());
        }
        json.push(b']');
        json
    }

    /// Number of results served.
    pub(crate) fn len(&self) -> usize {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        let _ = self.refresh(&mut cache);
        cache.lines.len()
    }

    /// Whether there are none.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends a result as one line, whatever its kind. Blocking: it waits
    /// for the file lock and for the disk. The outcome also goes to
    /// [`Self::saving`].
    pub(crate) fn append(&self, result: &KeptResult) -> Result<(), HistoryError> {
        self.save_line(result.to_line().as_bytes())
    }

    /// Appends one line, records whether that worked, and copies aside what
    /// reading found that is no result (best effort: the line is saved).
    fn save_line(&self, line: &[u8]) -> Result<(), HistoryError> {
        match self.append_lines(line) {
            Ok(scan) => {
                self.saving.record(Ok(()));
                if let Err(err) = self.set_aside(&scan.rejected) {
                    tracing::warn!(
                        "cannot copy unreadable lines aside: {}",
                        crate::error_chain(&err)
                    );
                }
                Ok(())
            }
            Err(err) => {
                self.saving.record(Err(&SaveError::from_error(
                    "a result was not saved",
                    err.state(),
                )));
                Err(err)
            }
        }
    }

    /// Appends complete lines under the lock, after closing a torn last line;
    /// rotates the file if that made it too long. Returns what reading the new
    /// lines found (lines that are not results are for the caller to set aside,
    /// once the lock is released). Once the lines are on disk the save has
    /// worked: a failure to read them back or to rotate is only logged.
    fn append_lines(&self, lines: &[u8]) -> Result<Scan, HistoryError> {
        let file = self.open_locked()?;
        crate::store::jsonl::append_locked(&file, &self.dir, FILE_NAME, lines)?;
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        let scan = match self.refresh(&mut cache) {
            Ok(scan) => scan,
            Err(err) => {
                tracing::warn!(
                    "saved, but cannot read the history back: {}",
                    crate::error_chain(&err)
                );
                return Ok(Scan::default());
            }
        };
        if cache.on_disk > ROTATE_FACTOR * self.limit && !cache.lines.is_empty() {
            if let Err(err) = self.rotate(&mut cache) {
                let _ = statefile::remove(&self.dir.join(ROTATING_NAME));
                tracing::warn!(
                    "saved, but cannot rotate the history: {}",
                    crate::error_chain(&err)
                );
            }
        }
        // The lock goes with `file`, after any rotation.
        drop(file);
        Ok(scan)
    }

    /// Keeps the current file whole under an archive name and puts a file
    /// holding only the served results in its place. Called with the file lock
    /// held and the cache just refreshed; a crash part-way leaves either the old
    /// file in place (perhaps also under its archive name) or the new one.
    fn rotate(&self, cache: &mut Cache) -> Result<(), HistoryError> {
        let path = self.path();
        let fresh = self.dir.join(ROTATING_NAME);
        let mut text = String::with_capacity(cache.lines.iter().map(|l| l.len() + 1).sum());
        for line in &cache.lines {
            text.push_str(line);
            text.push('\n');
        }
        // A file left by a rotation that died is ours to replace (the lock is
        // held); the new one is created afresh, 0600, never through a link.
        match statefile::remove(&fresh) {
            Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
                return Err(io("cannot remove", &fresh)(err).into())
            }
            _ => {}
        }
        let mut file = statefile::create_new(&fresh)?;
        file.write_all(text.as_bytes())
            .map_err(io("cannot write", &fresh))?;
        file.sync_all().map_err(io("cannot sync", &fresh))?;
        let stamp = now_ms();
        let mut archive = self.dir.join(format!("results-{stamp}.jsonl"));
        let mut n = 0;
        loop {
            match statefile::hard_link(&path, &archive) {
                Ok(()) => break,
                // Two rotations in one millisecond (tiny limits): number them.
                Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
                    n += 1;
                    archive = self.dir.join(format!("results-{stamp}-{n}.jsonl"));
                }
                Err(err) => return Err(io("cannot archive", &path)(err).into()),
            }
        }
        statefile::rename(&fresh, &path).map_err(io("cannot replace", &path))?;
        sync_dir(&self.dir)?;
        let meta = file.metadata().map_err(io("cannot read", &path))?;
        cache.identity = Some((meta.dev(), meta.ino()));
        cache.offset = text.len() as u64;
        cache.on_disk = cache.lines.len();
        tracing::info!(
            archive = %archive.display(),
            kept = cache.lines.len(),
            "results history rotated"
        );
        Ok(())
    }

    /// The results file opened for appending, under an exclusive lock that is
    /// released when the file is closed.
    fn open_locked(&self) -> Result<File, HistoryError> {
        crate::store::jsonl::open_locked(&self.path()).map_err(HistoryError::from)
    }

    /// Reads the lines appended since the last read.
    fn refresh(&self, cache: &mut Cache) -> Result<Scan, HistoryError> {
        let path = self.path();
        let Some(mut file) = statefile::open_read(&path)? else {
            *cache = Cache::default();
            return Ok(Scan::default());
        };
        let meta = file.metadata().map_err(io("cannot read", &path))?;
        let identity = Some((meta.dev(), meta.ino()));
        if cache.identity != identity || meta.len() < cache.offset {
            // Replaced or truncated by hand: read it again from the start.
            *cache = Cache {
                identity,
                ..Cache::default()
            };
        }
        file.seek(SeekFrom::Start(cache.offset))
            .map_err(io("cannot read", &path))?;
        let bytes = statefile::read_capped(&file, &path)?;
        // Only whole lines: a line without its newline is still being written or torn.
        let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let mut scan = Scan {
            torn_tail: complete < bytes.len(),
            ..Scan::default()
        };
        for line in bytes[..complete].split(|&b| b == b'\n') {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            cache.on_disk += 1;
            match is_record(line) {
                true => cache
                    .lines
                    .push_back(String::from_utf8_lossy(line).into_owned()),
                false => scan.rejected.push(line.to_vec()),
            }
        }
        while cache.lines.len() > self.limit {
            cache.lines.pop_front();
        }
        cache.offset += complete as u64;
        Ok(scan)
    }

    /// Copies unreadable lines to the rejected file, each once even when several
    /// servers start on this folder.
    fn set_aside(&self, lines: &[Vec<u8>]) -> Result<(), HistoryError> {
        if lines.is_empty() {
            return Ok(());
        }
        let _lock = self.open_locked()?;
        let path = self.rejected_path();
        let known = statefile::read_all(&path)?;
        let mut seen: HashSet<&[u8]> = known.split(|&b| b == b'\n').collect();
        let mut new = Vec::new();
        for line in lines {
            if seen.insert(line) {
                new.extend_from_slice(line);
                new.push(b'\n');
            }
        }
        if new.is_empty() {
            return Ok(());
        }
        // 0600 like everything here, and never through a link: these are
        // the history's own lines, no more readable than the history.
        let mut file = statefile::open_append(&path)?;
        file.write_all(&new)
            .map_err(io("cannot append to", &path))?;
        file.sync_all().map_err(io("cannot sync", &path))?;
        Ok(())
    }

    /// Imports a `results.json` of the previous format once; returns how many
    /// results it held and what reading them back found. One that cannot be
    /// parsed is renamed aside, not lost.
    fn import_old_file(&self) -> Result<(usize, Scan), HistoryError> {
        let old = self.dir.join(OLD_FILE_NAME);
        if statefile::identity(&old).is_err() {
            return Ok((0, Scan::default()));
        }
        // Under the lock, so two servers starting together import it once.
        let lock = self.open_locked()?;
        let Some(file) = statefile::open_read(&old)? else {
            return Ok((0, Scan::default()));
        };
        let bytes = statefile::read_capped(&file, &old)?;
        // Entry by entry: one bad entry must not hide the others.
        let entries = match serde_json::from_slice::<Vec<serde_json::Value>>(&bytes) {
            Ok(entries) => entries,
            Err(err) => {
                let aside = self
                    .dir
                    .join(format!("{OLD_FILE_NAME}.unreadable-{}", now_ms()));
                statefile::rename(&old, &aside).map_err(io("cannot move aside", &old))?;
                tracing::warn!(
                    "{} is not a results list ({err}); moved it to {}",
                    old.display(),
                    aside.display()
                );
                return Ok((0, Scan::default()));
            }
        };
        let mut lines = String::new();
        let mut imported = 0;
        for entry in entries {
            let line = serde_json::to_string(&entry).expect("JSON values serialise");
            if serde_json::from_value::<RunResult>(entry).is_ok() {
                imported += 1;
            }
            // Bad entries go in too: the scan that follows sets them aside, counted.
            lines.push_str(&line);
            lines.push('\n');
        }
        drop(lock);
        let scan = if lines.is_empty() {
            Scan::default()
        } else {
            self.append_lines(lines.as_bytes())?
        };
        let _lock = self.open_locked()?;
        let renamed = self.dir.join(IMPORTED_NAME);
        statefile::rename(&old, &renamed).map_err(io("cannot rename", &old))?;
        sync_dir(&self.dir)?;
        tracing::info!(
            "imported {imported} results from {} (kept as {})",
            old.display(),
            renamed.display()
        );
        Ok((imported, scan))
    }
}

/// Whether a line is a result of a kind the server keeps ([`KeptResult`]).
fn is_record(line: &[u8]) -> bool {
    KeptResult::from_line(line).is_some()
}

fn sync_dir(dir: &Path) -> Result<(), HistoryError> {
    crate::store::jsonl::sync_dir(dir).map_err(HistoryError::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::OpenOptions;

    fn kept(step: &str, bytes: u64) -> KeptResult {
        KeptResult::Pipe(Box::new(result(step, bytes)))
    }

    fn result(step: &str, bytes: u64) -> RunResult {
        RunResult {
            bytes,
            elapsed_ms: 10.0,
            iterations: 1,
            page_size: None,
            ..RunResult::forged(step).unwrap()
        }
    }

    fn bytes_of(history: &History) -> Vec<u64> {
        let list: Vec<RunResult> = serde_json::from_slice(&history.to_json()).unwrap();
        list.iter().map(|r| r.bytes).collect()
    }

    #[test]
    fn survives_reopening_and_serves_the_newest() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::open(dir.path(), 3).unwrap();
        for i in 0..5 {
            history.append(&kept("write-read", i)).unwrap();
        }
        assert_eq!(bytes_of(&history), [2, 3, 4]);
        drop(history);
        let again = History::open(dir.path(), 3).unwrap();
        assert_eq!(bytes_of(&again), [2, 3, 4]);
        assert_eq!(again.load_report().results, 3);
    }

    #[test]
    fn two_histories_on_one_folder_keep_and_see_every_result() {
        let dir = tempfile::tempdir().unwrap();
        let a = History::open(dir.path(), 10).unwrap();
        let b = History::open(dir.path(), 10).unwrap();
        for i in 0..4 {
            let history = if i % 2 == 0 { &a } else { &b };
            history.append(&kept("write-read", i)).unwrap();
        }
        assert_eq!(bytes_of(&a), [0, 1, 2, 3]);
        assert_eq!(bytes_of(&b), [0, 1, 2, 3]);
    }

    /// Every result in the folder's files (the current one and the archives),
    /// once each, by bytes.
    fn everything_kept(dir: &Path) -> std::collections::BTreeSet<u64> {
        let mut all = std::collections::BTreeSet::new();
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name == FILE_NAME || (name.starts_with("results-") && name.ends_with(".jsonl")) {
                let text = std::fs::read_to_string(entry.path()).unwrap();
                for line in text.lines() {
                    all.insert(serde_json::from_str::<RunResult>(line).unwrap().bytes);
                }
            }
        }
        all
    }

    fn lines_in(path: &Path) -> usize {
        std::fs::read_to_string(path).unwrap().lines().count()
    }

    #[test]
    fn a_long_history_rotates_and_keeps_everything() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::open(dir.path(), 3).unwrap();
        for i in 0..20 {
            history.append(&kept("write-read", i)).unwrap();
            // The file never holds more than the rotation point.
            assert!(lines_in(&history.path()) <= ROTATE_FACTOR * 3, "after {i}");
            assert_eq!(bytes_of(&history).last(), Some(&i));
        }
        assert_eq!(bytes_of(&history), [17, 18, 19]);
        // Nothing was deleted: the archives and the file hold all twenty.
        assert_eq!(everything_kept(dir.path()), (0..20).collect());
        assert!(!dir.path().join(ROTATING_NAME).exists());
        drop(history);
        let again = History::open(dir.path(), 3).unwrap();
        assert_eq!(bytes_of(&again), [17, 18, 19]);
    }

    #[test]
    fn servers_sharing_a_folder_follow_each_others_rotations() {
        let dir = tempfile::tempdir().unwrap();
        let a = History::open(dir.path(), 2).unwrap();
        let b = History::open(dir.path(), 2).unwrap();
        for i in 0..15 {
            let history = if i % 3 == 0 { &a } else { &b };
            history.append(&kept("write-read", i)).unwrap();
            let newest = [i.saturating_sub(1), i];
            let expect: &[u64] = if i == 0 { &[0] } else { &newest };
            assert_eq!(bytes_of(&a), expect, "a after {i}");
            assert_eq!(bytes_of(&b), expect, "b after {i}");
        }
        assert_eq!(everything_kept(dir.path()), (0..15).collect());
    }

    #[test]
    fn a_save_waiting_for_the_lock_follows_a_rotation() {
        // A server that opened the file just before another rotated it must not
        // append to the archived copy nobody reads.
        let dir = tempfile::tempdir().unwrap();
        let history = History::open(dir.path(), 2).unwrap();
        history.append(&kept("write-read", 0)).unwrap();
        let held = history.open_locked().unwrap();
        let waiter = std::thread::spawn({
            let dir = dir.path().to_path_buf();
            move || {
                let other = History::open(&dir, 2).unwrap();
                other.append(&kept("write-read", 99)).unwrap();
            }
        });
        // Let the waiter open the old file and block on its lock, then replace it.
        std::thread::sleep(std::time::Duration::from_millis(200));
        std::fs::hard_link(history.path(), dir.path().join("results-0.jsonl")).unwrap();
        std::fs::write(dir.path().join(ROTATING_NAME), b"").unwrap();
        std::fs::rename(dir.path().join(ROTATING_NAME), history.path()).unwrap();
        drop(held);
        waiter.join().unwrap();
        assert_eq!(bytes_of(&history), [99]);
    }

    #[test]
    fn a_torn_last_line_is_reported_and_the_next_save_is_whole() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::open(dir.path(), 10).unwrap();
        history.append(&kept("busy-loop", 7)).unwrap();
        let line = serde_json::to_string(&result("busy-loop", 8)).unwrap();
        let mut file = OpenOptions::new()
            .append(true)
            .open(history.path())
            .unwrap();
        file.write_all(&line.as_bytes()[..line.len() / 2]).unwrap();
        drop(history);
        let again = History::open(dir.path(), 10).unwrap();
        assert!(again.load_report().torn_tail);
        assert_eq!(bytes_of(&again), [7]);
        again.append(&kept("busy-loop", 9)).unwrap();
        assert_eq!(bytes_of(&again), [7, 9]);
    }

    #[test]
    fn ipc_records_are_kept_beside_pipe_results() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::open(dir.path(), 10).unwrap();
        history.append(&kept("write-read", 1)).unwrap();
        let record = pipebench::engine::result::IpcRecord::now(pipebench::ipc::IpcResult {
            mechanism: "posix-shm".into(),
            bytes: 8,
            chunk: 8,
            elapsed_ms: 1.0,
            gib_per_s: 1.0,
            mib_per_s: 1024.0,
            copies: Some(0),
            kernel_functions: Vec::new(),
            survey_ms: None,
            survey_bytes: None,
            checksum_ok: true,
            ends: Vec::new(),
            lines: None,
            cow: None,
            filesystem: None,
            notes: Vec::new(),
            model: Vec::new(),
            page_size: None,
            counts: None,
        });
        history
            .append(&KeptResult::Ipc(Box::new(record.clone())))
            .unwrap();
        // An IPC line without its tag is not a result of either kind.
        let mut untagged = serde_json::to_value(&record).unwrap();
        untagged.as_object_mut().unwrap().remove("kind");
        history
            .append_lines(format!("{untagged}\n").as_bytes())
            .unwrap();
        let reopened = History::open(dir.path(), 10).unwrap();
        assert_eq!(reopened.load_report().rejected, 1);
        let list: Vec<serde_json::Value> = serde_json::from_slice(&reopened.to_json()).unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[0]["step"], "write-read");
        assert_eq!(list[1]["kind"], "ipc");
        assert_eq!(list[1]["mechanism"], "posix-shm");
    }

    #[test]
    fn bad_lines_are_set_aside_once_and_the_rest_kept() {
        let dir = tempfile::tempdir().unwrap();
        let good = serde_json::to_string(&result("write-read", 1)).unwrap();
        let bad = r#"{"step":"write-read"}"#;
        std::fs::write(
            dir.path().join(FILE_NAME),
            format!("{good}\n{bad}\n{good}\n"),
        )
        .unwrap();
        for _ in 0..2 {
            let history = History::open(dir.path(), 10).unwrap();
            assert_eq!(history.load_report().rejected, 1);
            assert_eq!(bytes_of(&history), [1, 1]);
        }
        let rejected = std::fs::read_to_string(dir.path().join(REJECTED_NAME)).unwrap();
        assert_eq!(rejected, format!("{bad}\n"));
    }

    #[test]
    fn an_old_results_file_is_imported_once() {
        let dir = tempfile::tempdir().unwrap();
        let mut old =
            serde_json::to_value(vec![result("write-read", 1), result("write-read", 2)]).unwrap();
        // One entry without a required field: the others are still kept.
        old.as_array_mut()
            .unwrap()
            .insert(1, serde_json::json!({"bytes": 5}));
        std::fs::write(
            dir.path().join(OLD_FILE_NAME),
            serde_json::to_vec(&old).unwrap(),
        )
        .unwrap();
        let history = History::open(dir.path(), 10).unwrap();
        assert_eq!(history.load_report().imported, 2);
        assert_eq!(history.load_report().rejected, 1);
        assert!(!dir.path().join(OLD_FILE_NAME).exists());
        assert!(dir.path().join(IMPORTED_NAME).is_file());
        drop(history);
        let again = History::open(dir.path(), 10).unwrap();
        assert_eq!(again.load_report().imported, 0);
        assert_eq!(bytes_of(&again), [1, 2]);
    }

    #[test]
    fn an_unreadable_old_file_is_kept_aside() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(OLD_FILE_NAME), b"{ not json").unwrap();
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
