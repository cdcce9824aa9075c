//! The IPC lab from the page: what a page may ask for (a mechanism, bytes and a
//! chunk, bounded tighter than the command line), the request the scheduler runs,
//! the record a finished run leaves in the history, and the mechanisms as
//! published at `/api/ipc`.

use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use pipebench::ipc::{self, IpcError, IpcParams, IpcResult, Mechanism};
use pipebench::runner::EndProgram;
use pipebench::size::{ByteSize, GIB};
use serde::{Deserialize, Serialize};

/// Most bytes one run from a page may move: the survey's 200 MiB is the default,
/// the splice question needs 512 MiB, and a click should not fill the disk.
pub const MAX_BYTES: u64 = GIB;

/// Smallest chunk (bytes per call) a page may ask for.
pub const MIN_CHUNK: u64 = 8;

/// How long one run from the page may take before it is stopped.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(180);

/// What a page may choose about a run. Unknown fields are refused so a typo is
/// not silently ignored; where files go and which port is used are the server's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IpcRunParams {
    /// Bytes to move (default 200 MiB, at most [`MAX_BYTES`]).
    #[serde(default)]
    pub bytes: Option<ByteSize>,
    /// Bytes per call (default: the mechanism's).
    #[serde(default)]
    pub chunk: Option<ByteSize>,
}

/// A checked run of one mechanism, ready for the scheduler.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IpcRequest {
    /// Mechanism id.
    pub mechanism: String,
    /// Bytes to move.
    pub bytes: u64,
    /// Bytes per call, as the lab will use it.
    pub chunk: u64,
}

impl IpcRequest {
    /// The library's parameters for this request: ends started by `program`,
    /// stopped when `cancel` turns true, the receiving end's byte count copied into
    /// `progress`, files where the lab puts them by default (without a name on the
    /// temp dir's file system, or `target/` where that is tmpfs; what needs a name
    /// in a private run folder there). The page cannot choose the folder.
    pub fn params(
        &self,
        program: &EndProgram,
        cancel: Arc<AtomicBool>,
        progress: Arc<AtomicU64>,
    ) -> IpcParams {
        IpcParams {
            bytes: ByteSize(self.bytes),
            chunk: Some(ByteSize(self.chunk)),
            dir: None,
            port: None,
            timeout: RUN_TIMEOUT,
            cancel: Some(cancel),
            program: Some(program.clone()),
            progress: Some(progress),
        }
    }
}

/// Checks a page's request: a known mechanism, bytes within the server's limit,
/// a chunk the mechanism and this kernel's limits accept.
pub fn plan(mechanism: &str, params: &IpcRunParams) -> Result<IpcRequest, IpcError> {
    let bytes = params.bytes.map_or(ipc::DEFAULT_BYTES, |b| b.bytes());
    if !(1..=MAX_BYTES).contains(&bytes) {
        return Err(IpcError::OutOfRange {
            name: "bytes",
            value: ByteSize(bytes).to_string(),
            min: ByteSize(1).to_string(),
            max: ByteSize(MAX_BYTES).to_string(),
        });
    }
    let lib = IpcParams {
        bytes: ByteSize(bytes),
        chunk: params.chunk,
        ..IpcParams::default()
    };
    let (mechanism, chunk) = ipc::harness::validate(mechanism, &lib)?;
    Ok(IpcRequest {
        mechanism: mechanism.id.to_string(),
        // What will move, so the page's `started` and its progress bar say it.
        bytes: ipc::harness::effective_bytes(mechanism.id, bytes),
        chunk,
    })
}

/// The tag of an IPC line in the history and of an IPC result on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecordKind {
    /// A run of the IPC lab.
    Ipc,
}

/// A finished IPC run as the page and the history see it: `"kind":"ipc"`, the
/// lab's result fields, and when it finished. Pipe results have no `kind`, so
/// every older history line still reads as what it was.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IpcRecord {
    /// Always `ipc`.
    pub kind: RecordKind,
    /// The lab's result.
    #[serde(flatten)]
    pub result: IpcResult,
    /// Wall-clock milliseconds since the epoch when the run ended.
    pub finished_at_ms: u64,
}

impl IpcRecord {
    /// Stamps `result` with the time now.
    pub fn now(result: IpcResult) -> IpcRecord {
        IpcRecord {
            kind: RecordKind::Ipc,
            result,
            finished_at_ms: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
        }
    }
}

/// One parameter's bounds as the page shows them.
#[derive(Debug, Clone, Serialize)]
struct ParamBounds {
    name: &'static str,
    label: &'static str,
    unit: &'static str,
    default: Option<u64>,
    min: u64,
    max: u64,
    help: &'static str,
}

/// What `/api/ipc` publishes.
#[derive(Debug, Clone, Serialize)]
struct Published {
    mechanisms: Vec<Mechanism>,
    params: Vec<ParamBounds>,
}

/// The JSON of `/api/ipc`: every mechanism (id, title, family, copies, copy path,
/// kernel functions, the survey's figure, the functions seen here) and the
/// bounds of the parameters a page may send.
pub fn published_json() -> Vec<u8> {
    let published = Published {
        mechanisms: ipc::mechanisms(),
        params: vec![
            ParamBounds {
                name: "bytes",
                label: "Bytes to move",
                unit: "bytes",
                default: Some(ipc::DEFAULT_BYTES),
                min: 1,
                max: MAX_BYTES,
                help: "The survey moved 200 MiB; try 512 MiB for its splice question.",
            },
            ParamBounds {
                name: "chunk",
                label: "Bytes per call",
                unit: "bytes",
                default: None,
                min: MIN_CHUNK,
                max: ipc::MAX_CHUNK,
                help: "Leave empty for the mechanism's default (64 KiB; the queue's \
                       message limit; 1 KiB for the I/O experiments).",
            },
        ],
    };
    serde_json::to_vec(&published).expect("the lab's table serialises")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pipebench::ipc::IpcErrorKind;
    use pipebench::size::MIB;

    #[test]
    fn plans_defaults_and_refuses_what_is_out_of_bounds() {
        let req = plan("posix-shm", &IpcRunParams::default()).unwrap();
        assert_eq!((req.bytes, req.chunk), (200 * MIB, 64 * 1024));
        let over = IpcRunParams {
            bytes: Some(ByteSize(MAX_BYTES + 1)),
            chunk: None,
        };
        let err = plan("posix-shm", &over).unwrap_err();
        assert_eq!(err.kind(), IpcErrorKind::OutOfRange);
        assert!(err.to_string().contains("1GiB"), "{err}");
        let err = plan("carrier-pigeon", &IpcRunParams::default()).unwrap_err();
        assert_eq!(err.kind(), IpcErrorKind::UnknownMechanism);
        let tiny = IpcRunParams {
            bytes: None,
            chunk: Some(ByteSize(4)),
        };
        assert_eq!(
            plan("pipe-rw", &tiny).unwrap_err().kind(),
            IpcErrorKind::OutOfRange
        );
    }

    #[test]
    fn page_params_refuse_unknown_fields() {
        let err = serde_json::from_str::<IpcRunParams>(r#"{"bytes":1,"dir":"/etc"}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("dir"), "{err}");
        let ok: IpcRunParams = serde_json::from_str(r#"{"bytes":"8MiB"}"#).unwrap();
        assert_eq!(ok.bytes, Some(ByteSize(8 * MIB)));
    }

    #[test]
    fn published_json_lists_every_mechanism_and_the_bounds() {
        let value: serde_json::Value = serde_json::from_slice(&published_json()).unwrap();
        assert_eq!(
            value["mechanisms"].as_array().unwrap().len(),
            ipc::ids().len()
        );
        assert_eq!(value["params"][0]["max"], MAX_BYTES);
        assert_eq!(value["mechanisms"][0]["id"], "sysv-msgqueue");
    }
}
