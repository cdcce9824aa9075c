//! The `ipc` kind: one run of the IPC lab from the page, as its lab task (when
//! tagged) and the server's bounds ([`params`]) allow.

use pipebench::engine::event::Failure;
use pipebench::engine::job::Job;
use serde::Deserialize;

use crate::jobs::message::null_as_default;
use crate::jobs::planned::{refuse, Planned};
use crate::jobs::requests::Kind;
use crate::labs::{self, LabTag};
use crate::params::ipc::{plan, IpcRunParams};
use crate::state::AppState;

/// `{"type":"ipc","mechanism":ID,"params":{"bytes":...,"chunk":...},"lab":{...}}`:
/// one run of the IPC lab.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct IpcMessage {
    /// Mechanism id.
    pub(crate) mechanism: String,
    /// What the reader chose.
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) params: IpcRunParams,
    /// The lab task this run is for.
    #[serde(default)]
    pub(crate) lab: Option<LabTag>,
}

impl Kind for IpcMessage {
    const EXAMPLE: &'static str =
        r#"{"type":"ipc","mechanism":"posix-shm","params":{"bytes":"200MiB","chunk":"64KiB"}}"#;

    fn plan(self, _state: &AppState) -> Result<Planned, Failure> {
        let IpcMessage {
            mechanism,
            params,
            lab,
        } = self;
        let params = match &lab {
            Some(tag) => labs::lab_ipc(tag, &mechanism, &params).map_err(refuse)?,
            None => params,
        };
        let job = plan(&mechanism, &params).map_err(|err| Failure::from(&err))?;
        Ok(Planned::one(Job::Ipc(job), lab))
    }
}
