//! Past the article from the page: a tuning search (`tune`), many writers and
//! readers on one pipe (`shared_pipe`), checked against the server's bounds into
//! their engine jobs; the tuned variants a search found on this machine, which a
//! `run` of `tuned-STEP` runs again; and the tool table the page chooses from.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use pipebench::engine::shared_pipe::{self, SharedPipeJob};
use pipebench::engine::tune::{self, Best, TuneJob};
use pipebench::size::ByteSize;
use pipebench::steps::catalog;
use pipebench::steps::plan::RunParams;
use serde::Serialize;

/// A search's budget unless the page says, seconds: a dozen configurations,
/// three rounds, runs of about half a second.
pub const DEFAULT_TUNE_BUDGET: f64 = 20.0;
/// The most a search from the page may take, seconds of runs: the queue is
/// one at a time, and a search holds it for all of them.
pub const MAX_TUNE_BUDGET: f64 = 120.0;
/// The least, seconds (the engine's own least).
pub const MIN_TUNE_BUDGET: f64 = tune::BUDGET_BOUNDS.0;

/// Writers or readers a point from the page may have.
pub const MAX_SHARED_ENDS: usize = 8;
/// Points (writers × readers × sizes) a sweep from the page may have.
pub const MAX_SHARED_POINTS: usize = 12;
/// Bytes a point moves unless the page says.
pub const DEFAULT_SHARED_BYTES: u64 = 16 << 20;
/// The most bytes a point from the page may move.
pub const MAX_SHARED_BYTES: u64 = 256 << 20;
/// How long one point may take before it is killed.
const SHARED_TIMEOUT: Duration = Duration::from_secs(60);

/// Why a message of this family is refused, in the page's own field names.
#[derive(Debug, thiserror::Error)]
pub enum PastRefusal {
    /// A number outside the server's bounds.
    #[error("{field} = {value} is out of range: allowed {bounds}")]
    OutOfRange {
        /// The message's field.
        field: &'static str,
        /// The value given.
        value: String,
        /// What is allowed.
        bounds: String,
    },
    /// The engine refuses the search (an unknown step, a step it cannot vary).
    #[error(transparent)]
    Tune(#[from] tune::TuneError),
    /// The engine refuses the sweep.
    #[error(transparent)]
    Shared(#[from] shared_pipe::SharedPipeError),
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
}

/// The page's search of `step` within the server's budget bounds.
pub fn tune_job(step: &str, budget: Option<f64>) -> Result<TuneJob, PastRefusal> {
    let budget = budget.unwrap_or(DEFAULT_TUNE_BUDGET);
    if !(MIN_TUNE_BUDGET..=MAX_TUNE_BUDGET).contains(&budget) {
        return Err(PastRefusal::OutOfRange {
            field: "budget",
            value: budget.to_string(),
            bounds: format!("{MIN_TUNE_BUDGET} to {MAX_TUNE_BUDGET} seconds"),
        });
    }
    let job = TuneJob {
        step: step.to_string(),
        budget,
        seed: None,
    };
    tune::check(&job)?;
    Ok(job)
}

/// What a `shared_pipe` message asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedRequest {
    /// Writer counts.
    pub writers: Vec<usize>,
    /// Reader counts.
    pub readers: Vec<usize>,
    /// Message sizes.
    pub msg_sizes: Vec<ByteSize>,
    /// Bytes per point (default [`DEFAULT_SHARED_BYTES`]).
    pub bytes: Option<ByteSize>,
}

/// The page's shared-pipe sweep within the server's bounds.
pub fn shared_job(request: &SharedRequest) -> Result<SharedPipeJob, PastRefusal> {
    let join = |v: &[usize]| {
        v.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(",")
    };
    for (field, counts) in [("writers", &request.writers), ("readers", &request.readers)] {
        if counts.is_empty() || counts.iter().any(|&n| n == 0 || n > MAX_SHARED_ENDS) {
            return Err(PastRefusal::OutOfRange {
                field,
                value: format!("[{}]", join(counts)),
                bounds: format!("one or more counts from 1 to {MAX_SHARED_ENDS}"),
            });
        }
    }
    let (least, most) = shared_pipe::MSG_BOUNDS;
    let sizes: Vec<u64> = request.msg_sizes.iter().map(|s| s.bytes()).collect();
    if sizes.is_empty() || sizes.iter().any(|&s| s < least || s > most || s % 8 != 0) {
        return Err(PastRefusal::OutOfRange {
            field: "msg_sizes",
            value: format!(
                "[{}]",
                sizes
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            bounds: format!(
                "one or more sizes from {} to {}, multiples of 8 bytes",
                ByteSize(least),
                ByteSize(most)
            ),
        });
    }
    let points = request.writers.len() * request.readers.len() * sizes.len();
    if points > MAX_SHARED_POINTS {
        return Err(PastRefusal::OutOfRange {
            field: "points (writers × readers × msg_sizes)",
            value: points.to_string(),
            bounds: format!("1 to {MAX_SHARED_POINTS}"),
        });
    }
    let bytes = request.bytes.map_or(DEFAULT_SHARED_BYTES, |b| b.bytes());
    if !(1 << 20..=MAX_SHARED_BYTES).contains(&bytes) {
        return Err(PastRefusal::OutOfRange {
            field: "bytes",
            value: bytes.to_string(),
            bounds: format!("{} to {}", ByteSize(1 << 20), ByteSize(MAX_SHARED_BYTES)),
        });
    }
    let job = SharedPipeJob {
        writers: request.writers.clone(),
        readers: request.readers.clone(),
        msg_sizes: sizes,
        bytes,
        timeout: SHARED_TIMEOUT,
    };
    job.check()?;
    Ok(job)
}

/// A tuned variant found on this runner: `tuned-STEP` at the sizes its search
/// found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TunedVariant {
    /// `tuned-STEP`.
    pub id: String,
    /// The step it varies.
    pub base: String,
    /// Bytes per call.
    pub buf_size: u64,
    /// Pipe capacity.
    pub pipe_size: u64,
    /// The search's median for it, GiB/s.
    pub median: f64,
    /// The command line that runs it.
    pub argv: Vec<String>,
}

/// The tuned variants found since the server started, by id; the newest search
/// of a step replaces the one before.
#[derive(Debug, Default)]
pub struct TunedVariants(Mutex<BTreeMap<String, TunedVariant>>);

impl TunedVariants {
    /// Registers a search's best configuration as a runnable variant.
    pub fn register(&self, best: &Best) {
        // Only ids of the engine's own form: a variant always varies a catalog step.
        if catalog::tuned_base(&best.id).is_none() {
            return;
        }
        let variant = TunedVariant {
            id: best.id.clone(),
            base: best.base.clone(),
            buf_size: best.buf_size,
            pipe_size: best.pipe_size,
            median: best.summary.median,
            argv: best.argv.clone(),
        };
        self.lock().insert(variant.id.clone(), variant);
    }

    /// Every variant, by id.
    pub fn list(&self) -> Vec<TunedVariant> {
        self.lock().values().cloned().collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, TunedVariant>> {
        // A panic elsewhere while holding it leaves a map that is still whole.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A run's parameters for `step`: unchanged for a catalog step; for a tuned
    /// variant, the sizes its search found filled in (and any other refused).
    pub fn params_for(&self, step: &str, params: &RunParams) -> Result<RunParams, PastRefusal> {
        let Some(base) = catalog::tuned_base(step) else {
            return Ok(params.clone());
        };
        let Some(found) = self.lock().get(step).cloned() else {
            return Err(PastRefusal::NotTuned {
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
                    return Err(PastRefusal::TunedSize {
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
        Ok(params)
    }
}

/// One program of the tool table as the page sees it.
#[derive(Debug, Clone, Serialize)]
pub struct ToolEntry {
    /// Its id (what a `tool` message names).
    pub id: &'static str,
    /// What it is.
    pub title: &'static str,
    /// The program, as a person would type it.
    pub program: &'static str,
    /// Whether it is installed here.
    pub present: bool,
    /// The ends it can be: `writer`, `reader`.
    pub sides: Vec<&'static str>,
}

/// `/api/tools`: the vetted table, with what is installed here.
pub fn tool_table() -> Vec<ToolEntry> {
    use pipebench::steps::tools::{Side, TOOLS};
    let present = pipebench::engine::tool::present();
    TOOLS
        .iter()
        .map(|tool| ToolEntry {
            id: tool.id,
            title: tool.title,
            program: tool.program_name(),
            present: present.iter().any(|p| p == tool.id),
            sides: [Side::Writer, Side::Reader]
                .into_iter()
                .filter(|side| tool.usage(*side).is_some())
                .map(Side::name)
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pipebench::output::stats::Summary;

    #[test]
    fn budgets_and_counts_are_bounded_by_the_server() {
        assert!(tune_job("busy-loop", None).is_ok());
        for budget in [0.5, MAX_TUNE_BUDGET + 1.0, f64::NAN] {
            let err = tune_job("busy-loop", Some(budget)).unwrap_err();
            assert!(
                matches!(
                    err,
                    PastRefusal::OutOfRange {
                        field: "budget",
                        ..
                    }
                ),
                "{err}"
            );
        }
        assert!(matches!(tune_job("nope", None), Err(PastRefusal::Tune(_))));
        let ok = SharedRequest {
            writers: vec![1, 2],
            readers: vec![1],
            msg_sizes: vec![ByteSize(4096)],
            bytes: None,
        };
        assert_eq!(shared_job(&ok).unwrap().bytes, DEFAULT_SHARED_BYTES);
        let field = |request: SharedRequest| match shared_job(&request) {
            Err(PastRefusal::OutOfRange { field, .. }) => field,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            field(SharedRequest {
                writers: vec![0],
                ..ok.clone()
            }),
            "writers"
        );
        assert_eq!(
            field(SharedRequest {
                readers: vec![9],
                ..ok.clone()
            }),
            "readers"
        );
        assert_eq!(
            field(SharedRequest {
                msg_sizes: vec![ByteSize(100)],
                ..ok.clone()
            }),
            "msg_sizes"
        );
        assert_eq!(
            field(SharedRequest {
                bytes: Some(ByteSize(1 << 30)),
                ..ok.clone()
            }),
            "bytes"
        );
        assert!(field(SharedRequest {
            writers: vec![1, 2, 3, 4],
            readers: vec![1, 2],
            msg_sizes: vec![ByteSize(64), ByteSize(4096)],
            ..ok
        })
        .starts_with("points"));
    }

    #[test]
    fn a_tuned_variant_runs_at_its_own_sizes_only_once_found() {
        let tuned = TunedVariants::default();
        let none = RunParams::default();
        let err = tuned.params_for("tuned-busy-loop", &none).unwrap_err();
        assert!(matches!(err, PastRefusal::NotTuned { .. }), "{err}");
        // Catalog steps pass through untouched.
        assert_eq!(tuned.params_for("busy-loop", &none).unwrap(), none);
        let summary = Summary {
            median: 10.0,
            min: 9.0,
            max: 11.0,
            runs: 3,
        };
        tuned.register(&Best {
            id: "tuned-busy-loop".into(),
            base: "busy-loop".into(),
            buf_size: 1 << 20,
            pipe_size: 1 << 20,
            summary,
            argv: vec![],
        });
        let params = tuned.params_for("tuned-busy-loop", &none).unwrap();
        assert_eq!(params.buf_size, Some(ByteSize(1 << 20)));
        assert_eq!(params.pipe_size, Some(ByteSize(1 << 20)));
        let other = RunParams {
            pipe_size: Some(ByteSize(64 << 10)),
            ..RunParams::default()
        };
        assert!(matches!(
            tuned.params_for("tuned-busy-loop", &other),
            Err(PastRefusal::TunedSize {
                field: "pipe_size",
                ..
            })
        ));
        assert_eq!(tuned.list().len(), 1);
    }
}
