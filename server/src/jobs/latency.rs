//! The `latency` kind: one configuration of the latency lab from the page, as
//! its lab task (when tagged) and the server's bounds ([`params`]) allow.

use pipebench::engine::event::Failure;
use pipebench::engine::job::Job;
use pipebench::latency::Mode;
use pipebench::size::ByteSize;
use serde::Deserialize;

use crate::jobs::planned::{refuse, Planned};
use crate::jobs::requests::Kind;
use crate::labs::{self, LabTag};
use crate::params::latency::{plan, two_cpus, LatencyRunParams};
use crate::state::AppState;

/// `{"type":"latency","mechanism":ID,"mode":M,"size":S,"cpus":[A,B],"round_trips":N,"lab":{...}}`:
/// the latency card's fields ([`LatencyRunParams`]) and a lab tag.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LatencyMessage {
    /// LatencyMechanism id.
    pub(crate) mechanism: String,
    /// `blocking` (default) or `busy`.
    #[serde(default)]
    pub(crate) mode: Option<Mode>,
    /// Bytes per message.
    #[serde(default)]
    pub(crate) size: Option<ByteSize>,
    /// The ping end's CPU and the pong end's.
    #[serde(default, deserialize_with = "two_cpus")]
    pub(crate) cpus: Option<[usize; 2]>,
    /// Round trips to time.
    #[serde(default)]
    pub(crate) round_trips: Option<u32>,
    /// The lab task this run is for.
    #[serde(default)]
    pub(crate) lab: Option<LabTag>,
}

impl Kind for LatencyMessage {
    const EXAMPLE: &'static str =
        r#"{"type":"latency","mechanism":"pipe","mode":"blocking","size":64}"#;

    fn plan(self, _state: &AppState) -> Result<Planned, Failure> {
        let params = LatencyRunParams {
            mechanism: self.mechanism,
            mode: self.mode,
            size: self.size,
            cpus: self.cpus,
            round_trips: self.round_trips,
        };
        let params = match &self.lab {
            Some(tag) => labs::lab_latency(tag, &params).map_err(refuse)?,
            None => params,
        };
        let config = plan(&params).map_err(|err| Failure::from(&err))?;
        Ok(Planned::one(Job::Latency(config), self.lab))
    }
}
