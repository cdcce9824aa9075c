//! The tuned variants a search (`tune`) found on this machine, kept in
//! `tuned.jsonl` across restarts and compacted to the newest line of each; a
//! `run` of `tuned-STEP` runs one again at the sizes its search found.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use pipebench::engine::tune::{self, Best};
use pipebench::size::ByteSize;
use pipebench::steps::catalog;
use pipebench::steps::plan::{Limits, RunParams, RunPlan};
use serde::{Deserialize, Serialize};

use crate::store::statefile::{self, SaveError, SaveErrorKind, StateError};

/// Why a run of a tuned variant is refused, in the page's own field names.
#[derive(Debug, thiserror::Error)]
pub(crate) enum VariantRefusal {
    /// A run of a tuned variant no search has found on this runner.
    #[error(
        "no search has found `{id}` on this runner since it started: tune {base} first \
         (the tuning card), then run its best configuration"
    )]
    NotTuned {
        /// The variant asked for.
        id: String,
        /// The step it varies.
        base: String,
    },
    /// A run of a tuned variant with other sizes than the search found.
    #[error(
        "`{id}` runs at the {field} its search found ({found} bytes), not {asked}: \
         leave {field} out, or run {base} with it"
    )]
    TunedSize {
        /// The variant.
        id: String,
        /// The step it varies.
        base: String,
        /// `buf_size` or `pipe_size`.
        field: &'static str,
        /// What the search found.
        found: u64,
        /// What the page asked.
        asked: u64,
    },
    /// A tuned variant asked to run with the other pages than its search chose.
    #[error("`{id}` runs with huge_pages = {chosen}, as its search found, not {asked}: leave huge_pages out")]
    TunedPages {
        /// The variant.
        id: String,
        /// What the search chose.
        chosen: bool,
        /// What the page asked.
        asked: bool,
    },
}

/// A tuned variant found on this runner: `tuned-STEP` at the sizes its search
/// found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct TunedVariant {
    /// `tuned-STEP`.
    pub(crate) id: String,
    /// The step it varies.
    pub(crate) base: String,
    /// Bytes per call.
    pub(crate) buf_size: u64,
    /// Pipe capacity.
    pub(crate) pipe_size: u64,
    /// The writer's huge pages, where its search tried both settings (absent
    /// for a step whose writer copies, and in lines written before the knob).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) huge_pages: Option<bool>,
    /// The search's median for it, GiB/s.
    pub(crate) median: f64,
    /// The command line that runs it (`pipebench run tuned-STEP` at its sizes),
    /// made from the validated fields, never read from a file.
    pub(crate) argv: Vec<String>,
}

/// One line of `tuned.jsonl`: what a search found, without the command line
/// (which is made again from these fields when read back).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TunedLine {
    id: String,
    base: String,
    buf_size: u64,
    pipe_size: u64,
    /// Absent in a line of a search that did not try both (and in lines
    /// written before huge pages were a knob): the step's own pages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    huge_pages: Option<bool>,
    median: f64,
    found_at_ms: u64,
}

/// Where the tuned variants are kept in the state folder.
pub(crate) const TUNED_FILE: &str = "tuned.jsonl";
/// Where a compaction writes the new file before renaming it over the old one.
const TUNED_COMPACTING: &str = "tuned.jsonl.compacting";
/// Most bytes of `tuned.jsonl` read: a line is about 150 bytes and the file is
/// compacted to a line per step past [`TUNED_COMPACT_LINES`], so a bigger file
/// was not written by pipebook.
pub(crate) const MAX_TUNED_READ: u64 = 1 << 20;
/// Lines past which a save compacts the file to the newest line of each variant.
const TUNED_COMPACT_LINES: usize = 64;
/// The fastest figure a line may claim, GiB/s: far past any memory bus.
const MAX_TUNED_MEDIAN: f64 = 10_000.0;

/// Why a line of `tuned.jsonl` is not taken as a tuned variant.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TunedRefusal {
    /// Not JSON, or not the fields of a tuned variant (an unknown field too).
    #[error("it is not a tuned variant's record: {0}")]
    Malformed(#[source] serde_json::Error),
    /// The id is not `tuned-` and a catalog step.
    #[error("{id:?} is not `tuned-` followed by a step of the catalog")]
    UnknownId {
        /// The id given (shortened, control characters escaped by `{:?}`).
        id: String,
    },
    /// The base named is not the step the id varies.
    #[error("{id:?} varies {step}, but the line says {base:?}")]
    WrongBase {
        /// The id.
        id: String,
        /// The step the id varies.
        step: String,
        /// The base the line names.
        base: String,
    },
    /// A size no search tries.
    #[error("{field} = {value} is not a size a search tries ({tried})")]
    NotSearched {
        /// `buf_size` or `pipe_size`.
        field: &'static str,
        /// The value given.
        value: u64,
        /// The sizes a search tries.
        tried: String,
    },
    /// A median no run gives.
    #[error("median = {0} GiB/s is not a figure a run gives")]
    Median(f64),
    /// The planner refuses the variant at these sizes on this machine.
    #[error(transparent)]
    Plan(#[from] pipebench::steps::plan::PlanError),
}

/// At most 64 characters of text from a file, for a message.
fn shorten(text: &str) -> String {
    text.chars().take(64).collect()
}

impl TunedLine {
    /// The variant this line describes, if it is one a search on this machine
    /// could have found: a `tuned-` id of a catalog step, sizes of the search's
    /// grid that the planner accepts here, a median a run can give.
    fn validate(self) -> Result<TunedVariant, TunedRefusal> {
        let Some(step) = catalog::tuned_base(&self.id) else {
            return Err(TunedRefusal::UnknownId {
                id: shorten(&self.id),
            });
        };
        if step.id != self.base {
            return Err(TunedRefusal::WrongBase {
                id: self.id,
                step: step.id.to_string(),
                base: shorten(&self.base),
            });
        }
        for (field, value, grid) in [
            ("buf_size", self.buf_size, &tune::BUF_SIZES[..]),
            ("pipe_size", self.pipe_size, &tune::PIPE_SIZES[..]),
        ] {
            if !grid.contains(&value) {
                return Err(TunedRefusal::NotSearched {
                    field,
                    value,
                    tried: grid
                        .iter()
                        .map(|&b| ByteSize(b).to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            }
        }
        if !(self.median.is_finite() && (0.0..=MAX_TUNED_MEDIAN).contains(&self.median)) {
            return Err(TunedRefusal::Median(self.median));
        }
        // Huge pages only where a search tries them (the planner refuses a
        // setting the step's writer cannot have).
        let huge_pages = self
            .huge_pages
            .filter(|_| catalog::allows_huge_pages(&step));
        let argv = tuned_argv(&self.id, self.buf_size, self.pipe_size, self.huge_pages)?;
        Ok(TunedVariant {
            id: self.id,
            base: self.base,
            buf_size: self.buf_size,
            pipe_size: self.pipe_size,
            huge_pages,
            median: self.median,
            argv,
        })
    }
}

/// The command line that runs a tuned variant: the planner's own for
/// `tuned-STEP` at its sizes (so it fails where the planner would).
fn tuned_argv(
    id: &str,
    buf_size: u64,
    pipe_size: u64,
    huge_pages: Option<bool>,
) -> Result<Vec<String>, TunedRefusal> {
    let params = RunParams {
        buf_size: Some(ByteSize(buf_size)),
        pipe_size: Some(ByteSize(pipe_size)),
        huge_pages,
        ..RunParams::default()
    };
    Ok(RunPlan::for_step_id(id, &params, &Limits::default())?.argv())
}

/// What reading `tuned.jsonl` found, for the start-up log.
#[derive(Debug, Default)]
pub(crate) struct TunedLoad {
    /// Variants taken.
    pub(crate) variants: usize,
    /// Lines refused, each with its line number and why.
    pub(crate) refused: Vec<(usize, TunedRefusal)>,
    /// Whether the last line is incomplete (a save was interrupted).
    pub(crate) torn_tail: bool,
}

/// The newest valid variant of each id in `bytes` (a `tuned.jsonl`), and what
/// was refused.
fn fold_tuned(bytes: &[u8]) -> (BTreeMap<String, (TunedVariant, u64)>, TunedLoad) {
    let (lines, torn_tail) = crate::store::jsonl::complete_lines(bytes);
    let mut found = BTreeMap::new();
    let mut load = TunedLoad {
        torn_tail,
        ..TunedLoad::default()
    };
    for (index, line) in lines.enumerate() {
        let parsed = serde_json::from_slice::<TunedLine>(line).map_err(TunedRefusal::Malformed);
        match parsed.and_then(|line| {
            let at = line.found_at_ms;
            line.validate().map(|v| (v, at))
        }) {
            Ok((variant, at)) => {
                found.insert(variant.id.clone(), (variant, at));
            }
            Err(why) => load.refused.push((index + 1, why)),
        }
    }
    load.variants = found.len();
    (found, load)
}

/// The tuned variants found on this runner, by id, kept in the state folder's
/// `tuned.jsonl` so they outlive a restart; the newest search of a step
/// replaces the one before. Another server on the same state folder appends to
/// the same file, so the file is read again when it changed ([`Self::refresh`]).
#[derive(Debug, Default)]
pub(crate) struct TunedVariants {
    found: Mutex<Known>,
    /// The state folder (`None`: kept in memory only).
    dir: Option<PathBuf>,
}

/// The variants this server knows, each with when its search found it, and
/// which version of `tuned.jsonl` it last read.
#[derive(Debug, Default)]
struct Known {
    variants: BTreeMap<String, (TunedVariant, u64)>,
    seen: Option<Stamp>,
}

impl Known {
    /// Takes `variant` unless a newer search already gave its id. A tie goes
    /// to the later: two searches may end in the same millisecond, and the
    /// file's lines and this server's registrations come in the order made.
    fn take(&mut self, variant: TunedVariant, found_at_ms: u64) {
        match self.variants.get(&variant.id) {
            Some((_, known)) if *known > found_at_ms => {}
            _ => {
                self.variants
                    .insert(variant.id.clone(), (variant, found_at_ms));
            }
        }
    }
}

/// What identifies one version of `tuned.jsonl`: an append changes its size
/// and times, a compaction (a new file renamed over it) its inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    fn of(meta: &std::fs::Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt;
        Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }
}

/// What became of a search's best ([`TunedVariants::register`]).
#[derive(Debug, thiserror::Error)]
pub(crate) enum TunedSaveError {
    /// The planner refuses it here: neither runnable nor kept.
    #[error("the search's best is not a variant this runner can run: {0}")]
    Refused(#[from] TunedRefusal),
    /// Runnable until the server stops, but `tuned.jsonl` could not be used
    /// or written, so it will not be back after a restart.
    #[error("the tuned variant was not saved")]
    State(#[from] StateError),
}

impl TunedSaveError {
    /// The `saved {store: "tuned"}` the page hears: typed by the state error
    /// (a refused file, or the errno), never by its wording.
    pub(crate) fn to_save_error(&self) -> SaveError {
        match self {
            TunedSaveError::Refused(why) => SaveError {
                kind: SaveErrorKind::NotRunnable,
                message: format!(
                    "the search's best is not a variant this runner can run, so it is not \
                     offered: {}",
                    crate::error_chain(why)
                ),
            },
            TunedSaveError::State(err) => SaveError::from_error(
                "the tuned variant runs until the server stops, but it was not saved for the \
                 next start",
                err,
            ),
        }
    }
}

impl TunedVariants {
    /// The variants kept in `dir` (a checked state folder). A `tuned.jsonl` that
    /// is a link, not a regular file, another user's or larger than
    /// [`MAX_TUNED_READ`] is refused; lines that are not a variant a search
    /// could have found here are skipped, and said in the [`TunedLoad`].
    pub(crate) fn open(dir: &Path) -> Result<(TunedVariants, TunedLoad), StateError> {
        let path = dir.join(TUNED_FILE);
        let (bytes, seen) = match statefile::open_read(&path)? {
            Some(file) => {
                let stamp = stamp_of(&file, &path)?;
                (read_tuned(&file, &path)?, Some(stamp))
            }
            None => (Vec::new(), None),
        };
        let (variants, load) = fold_tuned(&bytes);
        let tuned = TunedVariants {
            found: Mutex::new(Known { variants, seen }),
            dir: Some(dir.to_path_buf()),
        };
        Ok((tuned, load))
    }

    /// Reads `tuned.jsonl` again if it changed since this server last read it
    /// (another server on the same state folder found a variant), under the
    /// same rules as at start: the file is refused if it is a link, not
    /// regular or another user's, and each line is validated. A variant read
    /// replaces one this server knows only if its search is newer; variants
    /// this server found but could not save stay. `Ok(None)`: nothing to read
    /// (no state folder, no file, or no change).
    pub(crate) fn refresh(&self) -> Result<Option<TunedLoad>, StateError> {
        let Some(dir) = &self.dir else {
            return Ok(None);
        };
        let path = dir.join(TUNED_FILE);
        let Some(file) = statefile::open_read(&path)? else {
            return Ok(None);
        };
        let stamp = stamp_of(&file, &path)?;
        if self.lock().seen == Some(stamp) {
            return Ok(None);
        }
        let bytes = read_tuned(&file, &path)?;
        let (found, load) = fold_tuned(&bytes);
        let mut known = self.lock();
        for (variant, found_at_ms) in found.into_values() {
            known.take(variant, found_at_ms);
        }
        known.seen = Some(stamp);
        Ok(Some(load))
    }

    /// [`Self::refresh`], with what it refused said in the log (a request
    /// still gets the variants this server knows).
    pub(crate) fn refresh_logged(&self) {
        let path = self.path().unwrap_or_default();
        match self.refresh() {
            Ok(Some(load)) => {
                for (line, why) in &load.refused {
                    tracing::warn!(
                        "{} line {line} is refused, not offered as a step: {}",
                        path.display(),
                        crate::error_chain(why)
                    );
                }
            }
            Ok(None) => {}
            Err(err) => tracing::warn!(
                "cannot read the tuned variants again: {}",
                crate::error_chain(&err)
            ),
        }
    }

    /// Where the variants are kept, if anywhere.
    pub(crate) fn path(&self) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.join(TUNED_FILE))
    }

    /// Registers a search's best configuration as a runnable variant, and keeps
    /// it in the state folder (blocking). A best the planner refuses here is
    /// not registered; a failed save leaves it runnable until the server stops.
    pub(crate) fn register(&self, best: &Best) -> Result<(), TunedSaveError> {
        let line = TunedLine {
            id: best.id.clone(),
            base: best.base.clone(),
            buf_size: best.buf_size,
            pipe_size: best.pipe_size,
            huge_pages: best.huge_pages,
            median: best.summary.median,
            found_at_ms: crate::store::jsonl::now_ms(),
        };
        // The same rule as a line read back: only what a search could find here.
        let variant = line.clone().validate()?;
        self.lock().take(variant, line.found_at_ms);
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        let mut text = serde_json::to_vec(&line).expect("a tuned line serialises");
        text.push(b'\n');
        statefile::prepare_dir(dir)?;
        let file = crate::store::jsonl::open_locked(&dir.join(TUNED_FILE))?;
        crate::store::jsonl::append_locked(&file, dir, TUNED_FILE, &text)?;
        // Still under the lock: a file past its bound becomes a line per variant.
        let path = dir.join(TUNED_FILE);
        let bytes = read_tuned(&file, &path)?;
        if crate::store::jsonl::complete_lines(&bytes).0.count() > TUNED_COMPACT_LINES {
            compact(dir, &bytes)?;
        }
        Ok(())
    }

    /// Every variant, by id.
    pub(crate) fn list(&self) -> Vec<TunedVariant> {
        self.lock()
            .variants
            .values()
            .map(|(v, _)| v.clone())
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Known> {
        // A panic elsewhere while holding it leaves a map that is still whole.
        self.found
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A run's parameters for `step`: unchanged for a catalog step; for a tuned
    /// variant, the sizes its search found filled in (and any other refused).
    /// A variant this server does not know may have been found by another
    /// server on the same state folder: `tuned.jsonl` is read again first (a
    /// file of at most [`MAX_TUNED_READ`], on this rare path only).
    pub(crate) fn params_for(
        &self,
        step: &str,
        params: &RunParams,
    ) -> Result<RunParams, VariantRefusal> {
        let Some(base) = catalog::tuned_base(step) else {
            return Ok(params.clone());
        };
        if !self.lock().variants.contains_key(step) {
            self.refresh_logged();
        }
        let Some(found) = self.lock().variants.get(step).map(|(v, _)| v.clone()) else {
            return Err(VariantRefusal::NotTuned {
                id: step.to_string(),
                base: base.id.to_string(),
            });
        };
        let mut params = params.clone();
        for (field, slot, value) in [
            ("buf_size", &mut params.buf_size, found.buf_size),
            ("pipe_size", &mut params.pipe_size, found.pipe_size),
        ] {
            match slot {
                Some(asked) if asked.bytes() != value => {
                    return Err(VariantRefusal::TunedSize {
                        id: found.id.clone(),
                        base: found.base.clone(),
                        field,
                        found: value,
                        asked: asked.bytes(),
                    })
                }
                _ => *slot = Some(ByteSize(value)),
            }
        }
        // The pages its search chose, or (a line without them) the step's own:
        // a run under the tuned id is exactly its saved configuration, so no
        // other setting may be asked of it.
        let chosen = found.huge_pages.unwrap_or(base.writer.common.huge_pages);
        match params.huge_pages {
            Some(asked) if asked != chosen => {
                return Err(VariantRefusal::TunedPages {
                    id: found.id.clone(),
                    chosen,
                    asked,
                })
            }
            _ => params.huge_pages = found.huge_pages,
        }
        Ok(params)
    }
}

/// Which version of `tuned.jsonl` the open `file` is.
fn stamp_of(file: &std::fs::File, path: &Path) -> Result<Stamp, StateError> {
    Ok(Stamp::of(
        &file
            .metadata()
            .map_err(statefile::io("cannot inspect", path))?,
    ))
}

/// The whole of an open `tuned.jsonl`, from its start, at most [`MAX_TUNED_READ`].
fn read_tuned(file: &std::fs::File, path: &Path) -> Result<Vec<u8>, StateError> {
    use std::os::unix::fs::FileExt;
    let len = file
        .metadata()
        .map_err(statefile::io("cannot inspect", path))?
        .len();
    if len > MAX_TUNED_READ {
        return Err(StateError::TooLarge {
            path: path.to_path_buf(),
            limit: MAX_TUNED_READ,
        });
    }
    let mut bytes = vec![0; len as usize];
    file.read_exact_at(&mut bytes, 0)
        .map_err(statefile::io("cannot read", path))?;
    Ok(bytes)
}

/// Rewrites `tuned.jsonl` (whose content is `bytes`) as the newest valid line
/// of each variant. Called with the file's lock held; the new file is created
/// afresh (0600, never through a link) and renamed over the old one, so a
/// crash leaves one or the other whole.
fn compact(dir: &Path, bytes: &[u8]) -> Result<(), StateError> {
    let (found, _) = fold_tuned(bytes);
    let mut text = Vec::new();
    for (variant, found_at_ms) in found.into_values() {
        let line = TunedLine {
            id: variant.id,
            base: variant.base,
            buf_size: variant.buf_size,
            pipe_size: variant.pipe_size,
            huge_pages: variant.huge_pages,
            median: variant.median,
            found_at_ms,
        };
        text.extend(serde_json::to_vec(&line).expect("a tuned line serialises"));
        text.push(b'\n');
    }
    let fresh = dir.join(TUNED_COMPACTING);
    // One left by a compaction that died is ours to replace: the lock is held.
    match statefile::remove(&fresh) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
            return Err(statefile::io("cannot remove", &fresh)(err))
        }
        _ => {}
    }
    let mut file = statefile::create_new(&fresh)?;
    file.write_all(&text)
        .map_err(statefile::io("cannot write", &fresh))?;
    file.sync_all()
        .map_err(statefile::io("cannot sync", &fresh))?;
    let path = dir.join(TUNED_FILE);
    statefile::rename(&fresh, &path).map_err(statefile::io("cannot replace", &path))?;
    crate::store::jsonl::sync_dir(dir)
}

#[cfg(test)]
mod tests;
