//! The `shared_pipe` kind: W writers and R readers on one pipe, every word
//! tagged, over a few points (writers × readers × message sizes) within the
//! server's bounds.

use std::time::Duration;

use pipebench::engine::event::Failure;
use pipebench::engine::job::Job;
use pipebench::engine::shared_pipe::{self, SharedPipeJob};
use pipebench::size::ByteSize;
use serde::Deserialize;

use crate::jobs::message::OutOfRange;
use crate::jobs::planned::{refuse, Planned};
use crate::jobs::requests::Kind;
use crate::state::AppState;

/// Writers or readers a point from the page may have.
pub(crate) const MAX_SHARED_ENDS: usize = 8;
/// Points (writers × readers × sizes) a sweep from the page may have.
pub(crate) const MAX_SHARED_POINTS: usize = 12;
/// Bytes a point moves unless the page says.
pub(crate) const DEFAULT_SHARED_BYTES: u64 = 16 << 20;
/// The most bytes a point from the page may move.
pub(crate) const MAX_SHARED_BYTES: u64 = 256 << 20;
/// How long one point may take before it is killed.
const SHARED_TIMEOUT: Duration = Duration::from_secs(60);

/// `{"type":"shared_pipe","writers":[1,2],"readers":[1],"msg_sizes":["4KiB"],"bytes":"16MiB","profile":BOOL}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SharedMessage {
    /// Writer counts.
    pub(crate) writers: Vec<usize>,
    /// Reader counts.
    pub(crate) readers: Vec<usize>,
    /// Message sizes.
    pub(crate) msg_sizes: Vec<ByteSize>,
    /// Bytes per point (default [`DEFAULT_SHARED_BYTES`]).
    #[serde(default)]
    pub(crate) bytes: Option<ByteSize>,
    /// Record every point's writers and readers with perf (default: no).
    #[serde(default)]
    pub(crate) profile: Option<bool>,
}

impl Kind for SharedMessage {
    const EXAMPLE: &'static str = r#"{"type":"shared_pipe","writers":[1,2],"readers":[1],"msg_sizes":["4KiB","64KiB"],"bytes":"16MiB"}"#;

    fn plan(self, _state: &AppState) -> Result<Planned, Failure> {
        let job = shared_job(&self).map_err(refuse)?;
        Ok(Planned::one(Job::SharedPipe(job), None))
    }
}

/// Why a shared-pipe sweep from the page is refused.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SharedRefusal {
    /// A count, size or total outside the server's bounds.
    #[error(transparent)]
    OutOfRange(#[from] OutOfRange),
    /// The engine refuses the sweep.
    #[error(transparent)]
    Shared(#[from] shared_pipe::SharedPipeError),
}

/// The page's shared-pipe sweep within the server's bounds.
pub(crate) fn shared_job(request: &SharedMessage) -> Result<SharedPipeJob, SharedRefusal> {
    let join = |v: &[usize]| {
        v.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(",")
    };
    for (field, counts) in [("writers", &request.writers), ("readers", &request.readers)] {
        if counts.is_empty() || counts.iter().any(|&n| n == 0 || n > MAX_SHARED_ENDS) {
            return Err(OutOfRange {
                field,
                value: format!("[{}]", join(counts)),
                bounds: format!("one or more counts from 1 to {MAX_SHARED_ENDS}"),
            }
            .into());
        }
    }
    let (least, most) = shared_pipe::MSG_BOUNDS;
    let sizes: Vec<u64> = request.msg_sizes.iter().map(|s| s.bytes()).collect();
    if sizes.is_empty() || sizes.iter().any(|&s| s < least || s > most || s % 8 != 0) {
        return Err(OutOfRange {
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
        }
        .into());
    }
    let points = request.writers.len() * request.readers.len() * sizes.len();
    if points > MAX_SHARED_POINTS {
        return Err(OutOfRange {
            field: "points (writers × readers × msg_sizes)",
            value: points.to_string(),
            bounds: format!("1 to {MAX_SHARED_POINTS}"),
        }
        .into());
    }
    let bytes = request.bytes.map_or(DEFAULT_SHARED_BYTES, |b| b.bytes());
    if !(1 << 20..=MAX_SHARED_BYTES).contains(&bytes) {
        return Err(OutOfRange {
            field: "bytes",
            value: bytes.to_string(),
            bounds: format!("{} to {}", ByteSize(1 << 20), ByteSize(MAX_SHARED_BYTES)),
        }
        .into());
    }
    let job = SharedPipeJob {
        writers: request.writers.clone(),
        readers: request.readers.clone(),
        msg_sizes: sizes,
        bytes,
        timeout: SHARED_TIMEOUT,
        profile: request.profile.unwrap_or(false),
    };
    job.check()?;
    Ok(job)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_sizes_and_bytes_are_bounded_by_the_server() {
        let ok = SharedMessage {
            writers: vec![1, 2],
            readers: vec![1],
            msg_sizes: vec![ByteSize(4096)],
            bytes: None,
            profile: None,
        };
        assert_eq!(shared_job(&ok).unwrap().bytes, DEFAULT_SHARED_BYTES);
        let field = |request: SharedMessage| match shared_job(&request) {
            Err(SharedRefusal::OutOfRange(OutOfRange { field, .. })) => field,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            field(SharedMessage {
                writers: vec![0],
                ..ok.clone()
            }),
            "writers"
        );
        assert_eq!(
            field(SharedMessage {
                readers: vec![9],
                ..ok.clone()
            }),
            "readers"
        );
        assert_eq!(
            field(SharedMessage {
                msg_sizes: vec![ByteSize(100)],
                ..ok.clone()
            }),
            "msg_sizes"
        );
        assert_eq!(
            field(SharedMessage {
                bytes: Some(ByteSize(1 << 30)),
                ..ok.clone()
            }),
            "bytes"
        );
        assert!(field(SharedMessage {
            writers: vec![1, 2, 3, 4],
            readers: vec![1, 2],
            msg_sizes: vec![ByteSize(64), ByteSize(4096)],
            ..ok
        })
        .starts_with("points"));
    }
}
