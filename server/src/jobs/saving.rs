//! Saving, in one place: what a finished job leaves in the state folder (its
//! result in the history, its measurement in a lab, a search's best among the
//! tuned variants), and the lab records a page writes itself (a prediction, a
//! fresh start).
//!
//! A finished job's records all go through [`Stores::finish`], on the job's own
//! thread, in the one order the page relies on: what the page will read as soon
//! as it hears the result (the lab's measurement, the tuned variant it may run
//! next) is on disk before the result goes out; the history is written after it
//! (a result is never held back for the history's lock and fsync). Every save
//! is then said to the page as one `saved` ([`Reply::Saved`]): its store, and
//! when it failed the typed [`SaveErrorKind`], never read from an error's
//! wording.

use std::sync::Arc;

use pipebench::engine::event::{Event, Finished};
use pipebench::engine::result::KeptResult;

use serde::Serialize;

use crate::labs::store::{LabStore, Record};
use crate::labs::LabTag;
use crate::store::history::History;
use crate::store::jsonl::now_ms;
use crate::store::statefile::{SaveError, SaveErrorKind};
use crate::store::system_cache::SystemCache;
use crate::store::tuned::TunedVariants;

/// The state folder's stores a finished job's records go to.
pub(crate) struct Stores {
    /// `results.jsonl`.
    pub(crate) history: Arc<History>,
    /// `labs.jsonl`.
    pub(crate) labs: Arc<LabStore>,
    /// `tuned.jsonl`, and the variants runnable here.
    pub(crate) tuned: Arc<TunedVariants>,
    /// `/api/system`, whose behaviour a `probe` job's answers replace.
    pub(crate) system: Arc<SystemCache>,
}

/// What a queued job's result is kept for besides the history: the lab task
/// that asked for it, and the swept value of a sweep's run (recorded with
/// the measurement).
#[derive(Debug, Clone, Default)]
pub(crate) struct Keep {
    /// The lab task the result is a measurement of.
    pub(crate) lab: Option<LabTag>,
    /// A sweep's value for this run, in bytes.
    pub(crate) value: Option<u64>,
}

/// What [`Stores::finish`] hands the page, in order.
pub(crate) enum Said {
    /// The job's last event, as the engine said it.
    Event(Event),
    /// A save's outcome.
    Saved(Reply),
}

impl Stores {
    /// The one path of a finished job's records. `last` is the job's last
    /// event (none when the page went away), `not_kept` why the job's kind is
    /// never kept in the history (`Job::not_kept_because`), `keep` what it was
    /// queued for. Says to `say`, in order: the lab's and the tuned store's
    /// outcomes are on disk first, then `last`, their `saved`s, and last the
    /// history's `saved` (after every `result`: written, refused, or
    /// `not_kept`). Blocking: call it on the job's thread.
    pub(crate) fn finish(
        &self,
        last: Option<Event>,
        not_kept: Option<&'static str>,
        keep: &Keep,
        mut say: impl FnMut(Said),
    ) {
        let Some(last) = last else {
            return;
        };
        if let Event::Behaviour {
            behaviour,
            probed_at_ms,
        } = &last
        {
            // Before the page hears it: its next /api/system has the answers.
            self.system.replace_behaviour(behaviour, *probed_at_ms);
        }
        let Event::Result(finished) = &last else {
            say(Said::Event(last));
            return;
        };
        let kept = not_kept.is_none().then(|| finished.kept()).flatten();
        let mut before = Vec::new();
        if let (Some(tag), Some(result)) = (&keep.lab, &kept) {
            let record = Record::Measurement {
                lab: tag.id.clone(),
                task: tag.task.clone(),
                value: keep.value,
                result: result.clone(),
                // This runner's checks judge at planned looks.
                planned_looks: true,
                at_ms: now_ms(),
            };
            let outcome = self.lab_record(&record);
            before.push(Reply::saved(SaveStore::Labs, Some(tag.id.clone()), outcome));
        }
        if let Finished::Tune(result) = finished {
            let outcome = self.tuned.register(&result.best).map_err(|err| {
                tracing::warn!("{}", crate::error_chain(&err));
                err.to_save_error()
            });
            before.push(Reply::saved(SaveStore::Tuned, None, outcome));
        }
        say(Said::Event(last));
        for reply in before {
            say(Said::Saved(reply));
        }
        let history = match (not_kept, kept) {
            (Some(why), _) => Err(SaveError {
                kind: SaveErrorKind::NotKept,
                message: why.into(),
            }),
            (None, Some(result)) => self.history_record(&result),
            // A kind with nothing to keep, said to be kept: nothing to say.
            (None, None) => return,
        };
        say(Said::Saved(Reply::saved(SaveStore::History, None, history)));
    }

    /// Appends a result to the history.
    fn history_record(&self, result: &KeptResult) -> Result<(), SaveError> {
        self.history.append(result).map_err(|err| {
            tracing::error!("could not save the result: {}", crate::error_chain(&err));
            SaveError::from_error("the result was not saved in the history", err.state())
        })
    }

    /// Appends a lab record.
    fn lab_record(&self, record: &Record) -> Result<(), SaveError> {
        self.labs.append(record).map_err(|err| {
            let err = SaveError::from_error("the lab record was not saved", err.state());
            tracing::error!("{}", err.message);
            err
        })
    }
}

/// Why a lab record of the page's own was not saved.
pub(crate) enum NoteRefused {
    /// Not allowed (a prediction once the runs have started): a sentence.
    Refused(String),
    /// The disk said no.
    Failed(SaveError),
}

/// Appends a lab record the page sent itself (a prediction, a fresh start),
/// off the async threads. A prediction comes before the runs: once a lab has a
/// measurement, its prediction is locked until the lab starts over.
pub(crate) async fn page_note(labs: &Arc<LabStore>, record: Record) -> Result<(), NoteRefused> {
    let store = Arc::clone(labs);
    let saved = tokio::task::spawn_blocking(move || {
        if let Record::Prediction { lab, .. } = &record {
            let started = store
                .state()
                .map_err(|err| SaveError::from_error("the lab record was not saved", err.state()))?
                .labs
                .get(lab)
                .is_some_and(|l| !l.measurements.is_empty());
            if started {
                return Ok(Err(format!(
                    "the runs of lab `{lab}` have started, so its prediction is locked: \
                     start the lab over to predict again"
                )));
            }
        }
        store
            .append(&record)
            .map(Ok)
            .map_err(|err| SaveError::from_error("the lab record was not saved", err.state()))
    })
    .await;
    match saved {
        Ok(Ok(Ok(()))) => Ok(()),
        Ok(Ok(Err(refused))) => Err(NoteRefused::Refused(refused)),
        Ok(Err(err)) => {
            tracing::error!("{}", err.message);
            Err(NoteRefused::Failed(err))
        }
        Err(err) => Err(NoteRefused::Failed(SaveError {
            kind: SaveErrorKind::Failed,
            message: format!("the lab record was not saved: {err}"),
        })),
    }
}

/// A reply to a message that is not about a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub(crate) enum Reply {
    /// Whether something was saved, and why not: a lab record (a prediction,
    /// a fresh start, or a lab-tagged result, then right after that result or
    /// point) or a result in the history (after every `result` and `point`,
    /// once the disk has it or could not take it), or a search's best in
    /// `tuned.jsonl` (right after the search's result). For a run it carries
    /// `"run"`; a sweep's `done` comes after its last run's.
    Saved {
        /// Which file: the results history, the lab records or the tuned variants.
        store: SaveStore,
        /// The lab, for a lab record.
        #[serde(skip_serializing_if = "Option::is_none")]
        lab: Option<String>,
        /// Whether it is on disk.
        ok: bool,
        /// Why not: `kind` (`not_kept`, `no_space`, `quota`, `read_only`,
        /// `unsafe_file`, `failed`, `not_runnable`) and a sentence.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<SaveError>,
    },
}

/// The file a `saved` message is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum SaveStore {
    /// `results.jsonl`.
    History,
    /// `labs.jsonl`.
    Labs,
    /// `tuned.jsonl`: a search's best, kept for the next start (after the
    /// search's `result`).
    Tuned,
}

impl Reply {
    /// The `saved` message of a save's outcome in `store` (for `lab`).
    pub(crate) fn saved(
        store: SaveStore,
        lab: Option<String>,
        outcome: Result<(), SaveError>,
    ) -> Self {
        Reply::Saved {
            store,
            lab,
            ok: outcome.is_ok(),
            error: outcome.err(),
        }
    }

    /// The JSON text of a reply that belongs to run `run`, tagged `"run": N`
    /// first as the run's own events are.
    pub(crate) fn to_json_for_run(&self, run: u64) -> String {
        pipebench::engine::event::ForRun { run, event: self }.to_json()
    }

    /// The JSON text.
    pub(crate) fn to_json(&self) -> String {
        serde_json::to_string(self).expect("replies serialise")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_about_a_run_carries_its_id_first() {
        let json = Reply::saved(SaveStore::History, None, Ok(())).to_json_for_run(7);
        assert_eq!(
            json,
            r#"{"run":7,"type":"saved","store":"history","ok":true}"#
        );
        let json = Reply::saved(SaveStore::Labs, Some("lab-1".into()), Ok(())).to_json_for_run(3);
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value["run"], 3);
        assert_eq!(value["lab"], "lab-1");
    }
}
