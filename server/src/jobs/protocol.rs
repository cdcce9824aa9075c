//! The WebSocket protocol of `/api/run`: JSON text messages tagged by `type`.
//!
//! What the page sends is read here into a [`ClientMessage`]: a job's message
//! is its kind's own struct (in the kind's file under `jobs/`), listed once in
//! [`kinds!`]'s invocation below, which makes the tagged enum, the list of
//! types and the dispatch to each kind's plan. What a run says goes out as the
//! engine's own events (`pipebench::engine::event`); the `saved` reply is the
//! store's ([`crate::jobs::saving`]).

use pipebench::engine::event::Failure;
use serde::Deserialize;
use serde_json::Value;

use crate::jobs::message::{Located, MessageError, EXAMPLE};
use crate::jobs::planned::Planned;
use crate::jobs::requests::Kind;
use crate::state::AppState;

/// A message from the page: a job for the runner, or one about no job.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ClientMessage {
    /// A job to queue: a run, a sweep, an IPC or latency run, ... (see
    /// [`JobRequest`]).
    Job(JobRequest),
    /// `{"type":"cancel"}`: stops the run, or the whole sweep.
    Cancel,
    /// `{"type":"predict","lab":LAB,"value":V}`: the student's prediction.
    Predict {
        /// Lab id.
        lab: String,
        /// A number, or a task id for a choice question.
        value: Value,
    },
    /// `{"type":"reset_lab","lab":LAB}`: start a lab over.
    ResetLab {
        /// Lab id.
        lab: String,
    },
}

/// The kinds of job, one line each: the variant, its `type` as the page spells
/// it, and its message struct (which implements [`Kind`]). Makes
/// [`JobRequest`], the tagged [`Wire`], [`TYPES`], [`example`] and
/// [`JobRequest::plan`].
macro_rules! kinds {
    ($($variant:ident($tag:literal, $message:ty),)*) => {
        /// What the page asks the runner to do, one variant per kind of job;
        /// each holds its kind's message.
        #[derive(Debug, Clone, PartialEq)]
        pub(crate) enum JobRequest {
            $(
                #[doc = concat!("`{\"type\":\"", $tag, "\",...}`")]
                $variant($message),
            )*
        }

        /// Every message the page may send, tagged by `type`: each kind's
        /// fields are its struct's, and a field the struct does not know is
        /// refused, so a typo is never ignored.
        #[derive(Debug, Deserialize)]
        #[serde(tag = "type")]
        enum Wire {
            $(
                #[serde(rename = $tag)]
                $variant(Located<$message>),
            )*
            #[serde(rename = "cancel")]
            Cancel(Located<Nothing>),
            #[serde(rename = "predict")]
            Predict(Located<PredictMessage>),
            #[serde(rename = "reset_lab")]
            ResetLab(Located<ResetLabMessage>),
        }

        /// Every message type the page may send, as it spells them.
        pub(crate) const TYPES: &[&str] = &[$($tag,)* "cancel", "predict", "reset_lab"];

        /// A good message of each type, quoted when one of that type is refused.
        pub(crate) fn example(kind: &str) -> &'static str {
            match kind {
                $($tag => <$message as Kind>::EXAMPLE,)*
                "predict" => r#"{"type":"predict","lab":"variance","value":5}"#,
                "reset_lab" => r#"{"type":"reset_lab","lab":"variance"}"#,
                "cancel" => r#"{"type":"cancel"}"#,
                _ => EXAMPLE,
            }
        }

        impl Wire {
            /// The message, its kind's own checks passed; `invalid` makes
            /// the refusal of a field.
            fn checked(
                self,
                invalid: impl Fn(String) -> MessageError,
            ) -> Result<ClientMessage, MessageError> {
                Ok(match self {
                    $(Wire::$variant(Located(m)) => {
                        ClientMessage::Job(JobRequest::$variant(m.checked()?))
                    })*
                    Wire::Cancel(Located(Nothing {})) => ClientMessage::Cancel,
                    Wire::Predict(Located(m)) => match m.value {
                        value @ (Value::Number(_) | Value::String(_)) => {
                            ClientMessage::Predict { lab: m.lab, value }
                        }
                        _ => return Err(invalid("`value` must be a number or a choice".into())),
                    },
                    Wire::ResetLab(Located(m)) => ClientMessage::ResetLab { lab: m.lab },
                })
            }
        }

        impl JobRequest {
            /// Plans the request through its kind ([`Kind::plan`]); a refusal
            /// is the `error` the page hears.
            pub(crate) fn plan(self, state: &AppState) -> Result<Planned, Failure> {
                match self {
                    $(JobRequest::$variant(m) => m.plan(state),)*
                }
            }
        }
    };
}

kinds! {
    Run("run", crate::jobs::run::RunMessage),
    Sweep("sweep", crate::jobs::sweep::SweepMessage),
    Ipc("ipc", crate::jobs::ipc::IpcMessage),
    Latency("latency", crate::jobs::latency::LatencyMessage),
    Pages("pages", crate::jobs::pages::PagesMessage),
    Wakeup("wakeup", crate::jobs::wakeup::WakeupMessage),
    Probe("probe", crate::jobs::probe::ProbeMessage),
    Tool("tool", crate::jobs::tool::ToolMessage),
    Tune("tune", crate::jobs::tune::TuneMessage),
    SharedPipe("shared_pipe", crate::jobs::shared_pipe::SharedMessage),
    Compare("compare", crate::jobs::compare::CompareRequest),
}

impl From<JobRequest> for ClientMessage {
    fn from(request: JobRequest) -> Self {
        ClientMessage::Job(request)
    }
}

/// A message with no field but its `type` (`cancel`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Nothing {}

/// `{"type":"predict","lab":LAB,"value":V}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PredictMessage {
    lab: String,
    value: Value,
}

/// `{"type":"reset_lab","lab":LAB}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ResetLabMessage {
    lab: String,
}

/// Reads a message; the error says what is wrong and shows a good one.
pub(crate) fn parse(text: &str) -> Result<ClientMessage, MessageError> {
    let value: Value = serde_json::from_str(text).map_err(|e| MessageError::NotJson {
        reason: e.to_string(),
    })?;
    let Value::Object(object) = &value else {
        return Err(MessageError::NotAnObject);
    };
    let Some(kind) = object.get("type").and_then(Value::as_str) else {
        return Err(MessageError::NoType);
    };
    let Some(&kind) = TYPES.iter().find(|&&known| known == kind) else {
        return Err(MessageError::UnknownType {
            kind: kind.to_string(),
            known: TYPES,
        });
    };
    let invalid = |reason: String| MessageError::Invalid {
        kind,
        reason,
        example: example(kind),
    };
    let wire: Wire = serde_json::from_value(value).map_err(|e| invalid(e.to_string()))?;
    wire.checked(invalid)
}

#[cfg(test)]
mod tests;
