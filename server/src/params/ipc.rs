//! The IPC lab's parameters from the page: what a page may ask for (a
//! mechanism, bytes and a chunk, bounded tighter than the command line),
//! checked into the engine's [`IpcJob`], and the mechanisms as published at
//! `/api/ipc`. Apart from the kind ([`super`]) because the labs read them too.

use std::time::Duration;

use pipebench::engine::ipc::IpcJob;
use pipebench::ipc::{self, IpcError, IpcParams, Mechanism, MechanismInfo};
use pipebench::size::{ByteSize, GIB};
use serde::{Deserialize, Serialize};

/// Most bytes one run from a page may move: the survey's size is the default
/// (`pipebench::ipc::DEFAULT_BYTES`), the splice question needs 512 MiB, and a
/// click should not fill the disk.
pub(crate) const MAX_BYTES: u64 = GIB;

/// Smallest chunk (bytes per call) a page may ask for.
pub(crate) const MIN_CHUNK: u64 = 8;

/// How long one run from the page may take before it is stopped.
pub(crate) const RUN_TIMEOUT: Duration = Duration::from_secs(180);

/// What a page may choose about a run. Unknown fields are refused so a typo is
/// not silently ignored; where files go and which port is used are the server's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct IpcRunParams {
    /// Bytes to move (default `pipebench::ipc::DEFAULT_BYTES`, at most [`MAX_BYTES`]).
    #[serde(default)]
    pub(crate) bytes: Option<ByteSize>,
    /// Bytes per call (default: the mechanism's).
    #[serde(default)]
    pub(crate) chunk: Option<ByteSize>,
    /// Count the kernel's events in the ends (default true); `false` is the
    /// CLI's `--no-counts`.
    #[serde(default)]
    pub(crate) counts: Option<bool>,
    /// A quiet run (default false): no `progress` while it runs, and its record
    /// says `watched: false`; the page's comparisons use only such runs.
    #[serde(default)]
    pub(crate) quiet: Option<bool>,
}

/// Checks a page's request: a known mechanism, bytes within the server's limit,
/// a chunk the mechanism and this kernel's limits accept.
pub(crate) fn plan(mechanism: &str, params: &IpcRunParams) -> Result<IpcJob, IpcError> {
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
    // The id is parsed here, once: everything after dispatches on the enum.
    let mechanism = Mechanism::parse(mechanism)?;
    let (_, chunk) = ipc::harness::validate(mechanism, &lib)?;
    Ok(IpcJob {
        mechanism,
        // What will move, so the page's `started` and its progress bar say it.
        bytes: ipc::harness::effective_bytes(mechanism, bytes),
        chunk,
        timeout: RUN_TIMEOUT,
        no_counts: !params.counts.unwrap_or(true),
        quiet: params.quiet.unwrap_or(false),
    })
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
    mechanisms: Vec<MechanismInfo>,
    params: Vec<ParamBounds>,
}

/// The JSON of `/api/ipc`: every mechanism (id, title, family, copies, copy path,
/// kernel functions, the survey's figure, the functions seen here) and the
/// bounds of the parameters a page may send.
pub(crate) fn published_json() -> Vec<u8> {
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
                help: "The survey's size is the default; try 512 MiB for its splice question.",
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
            ParamBounds {
                name: "counts",
                label: "Count kernel events",
                unit: "flag",
                default: Some(1),
                min: 0,
                max: 1,
                help: "Count what the kernel did for each end: calls, faults and context \
                       switches always, wakeups, IPIs and TLB flushes where permitted; off \
                       is the command line's --no-counts.",
            },
            ParamBounds {
                name: "quiet",
                label: "Quiet run",
                unit: "flag",
                default: Some(0),
                min: 0,
                max: 1,
                help: "No progress while it runs: nothing is drawn and the runner looks \
                       at it less often, so its figure carries no cost of watching; the \
                       page's comparisons use only quiet runs.",
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
            ..IpcRunParams::default()
        };
        let err = plan("posix-shm", &over).unwrap_err();
        assert_eq!(err.kind(), IpcErrorKind::OutOfRange);
        assert!(err.to_string().contains("1GiB"), "{err}");
        let err = plan("carrier-pigeon", &IpcRunParams::default()).unwrap_err();
        assert_eq!(err.kind(), IpcErrorKind::UnknownMechanism);
        let tiny = IpcRunParams {
            chunk: Some(ByteSize(4)),
            ..IpcRunParams::default()
        };
        assert_eq!(
            plan("pipe-rw", &tiny).unwrap_err().kind(),
            IpcErrorKind::OutOfRange
        );
    }

    #[test]
    fn counts_are_on_unless_the_page_turns_them_off() {
        assert!(!plan("pipe-rw", &IpcRunParams::default()).unwrap().no_counts);
        let off: IpcRunParams = serde_json::from_str(r#"{"counts":false}"#).unwrap();
        assert!(plan("pipe-rw", &off).unwrap().no_counts);
        let on: IpcRunParams = serde_json::from_str(r#"{"counts":true}"#).unwrap();
        assert!(!plan("pipe-rw", &on).unwrap().no_counts);
        assert!(serde_json::from_str::<IpcRunParams>(r#"{"counts":"no"}"#).is_err());
    }

    #[test]
    fn a_run_is_watched_unless_the_page_asks_for_a_quiet_one() {
        assert!(!plan("pipe-rw", &IpcRunParams::default()).unwrap().quiet);
        let quiet: IpcRunParams = serde_json::from_str(r#"{"quiet":true}"#).unwrap();
        assert!(plan("pipe-rw", &quiet).unwrap().quiet);
        let watched: IpcRunParams = serde_json::from_str(r#"{"quiet":false}"#).unwrap();
        assert!(!plan("pipe-rw", &watched).unwrap().quiet);
        assert!(serde_json::from_str::<IpcRunParams>(r#"{"quiet":"yes"}"#).is_err());
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
