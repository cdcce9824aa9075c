//! The IPC lab as a job: one mechanism of [`crate::ipc`] run on a scoped thread
//! while the job's thread reports its progress and turns a stop into the
//! harness's cancel flag.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::engine::event::{Event, Failure, Finished, IpcEffective, Progress, Started};
use crate::engine::observer::{JobContext, Observer, Stop, PROGRESS_INTERVAL, QUIET_INTERVAL};
use crate::engine::result::{IpcRecord, RecordKind};
use crate::ipc::{self, IpcError, IpcParams};
use crate::size::{gib_per_s, ByteSize};

/// A checked run of one IPC mechanism.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IpcJob {
    /// The mechanism.
    pub mechanism: ipc::Mechanism,
    /// Bytes to move.
    pub bytes: u64,
    /// Bytes per call, as the lab will use it.
    pub chunk: u64,
    /// Kill the run after this long.
    pub timeout: Duration,
    /// Leave the kernel's events uncounted in the ends (as `pipebench ipc
    /// --no-counts`): calls, faults and context switches are still counted.
    pub no_counts: bool,
    /// Not watched: no `progress` while it runs and the job's thread looks at
    /// it only every [`QUIET_INTERVAL`], so a comparison charges no watching to
    /// it; its record says `watched: false`.
    pub quiet: bool,
}

/// Runs one mechanism of the IPC lab. The lab's harness blocks until its ends are
/// reaped, so it runs on a scoped thread (which lives until the harness returns,
/// as `PR_SET_PDEATHSIG` requires), while this thread samples the receiving end's
/// byte count and turns a stop into the harness's cancel flag; the harness then
/// kills its ends and removes every resource before it returns.
pub(crate) fn run(
    job: &IpcJob,
    context: &JobContext,
    observer: &mut dyn Observer,
) -> Option<Event> {
    let cancel = Arc::new(AtomicBool::new(false));
    let received = Arc::new(AtomicU64::new(0));
    let params = IpcParams {
        bytes: ByteSize(job.bytes),
        chunk: Some(ByteSize(job.chunk)),
        dir: None,
        port: None,
        timeout: job.timeout,
        cancel: Some(Arc::clone(&cancel)),
        program: Some(context.program.clone()),
        // A quiet run publishes nothing: nobody reads the count.
        progress: (!job.quiet).then(|| Arc::clone(&received)),
        no_counts: job.no_counts,
    };
    observer.event(Event::Started(Started::Ipc {
        kind: RecordKind::Ipc,
        mechanism: job.mechanism.id().to_string(),
        params: IpcEffective {
            bytes: job.bytes,
            chunk: job.chunk,
        },
    }));
    let (outcome, stop) = std::thread::scope(|scope| {
        let harness = std::thread::Builder::new()
            .name(format!("ipc-{}", job.mechanism))
            .spawn_scoped(scope, || ipc::run(job.mechanism, &params));
        let harness = match harness {
            Ok(harness) => harness,
            Err(err) => {
                return (
                    Err(Event::error(format!(
                        "cannot start the run's thread: {err}"
                    ))),
                    None,
                )
            }
        };
        let mut stop = None;
        let started = Instant::now();
        let mut last = (started, 0u64);
        let interval = if job.quiet {
            QUIET_INTERVAL
        } else {
            PROGRESS_INTERVAL
        };
        while !harness.is_finished() {
            if !job.quiet {
                let now = Instant::now();
                let bytes = received.load(Ordering::Relaxed);
                let window_ms = now.duration_since(last.0).as_secs_f64() * 1000.0;
                observer.event(Event::Progress(Progress {
                    bytes,
                    elapsed_ms: now.duration_since(started).as_secs_f64() * 1000.0,
                    gib_per_s: gib_per_s(bytes.saturating_sub(last.1), window_ms),
                    pipe_bytes: None,
                }));
                last = (now, bytes);
            }
            stop = observer.wait(interval);
            if stop.is_some() {
                cancel.store(true, Ordering::Relaxed);
                break;
            }
        }
        let outcome = harness
            .join()
            .map_err(|_| Event::error("the IPC run's thread panicked"));
        (outcome, stop)
    });
    match (outcome, stop) {
        (Err(event), _) => Some(event),
        (Ok(Ok(result)), _) => {
            let mut record = IpcRecord::now(result);
            record.watched = Some(!job.quiet);
            Some(Event::Result(Finished::Ipc(Box::new(record))))
        }
        (Ok(Err(IpcError::Cancelled)), stop) => stop.unwrap_or(Stop::Cancel).final_event(),
        (Ok(Err(err)), _) => Some(Event::Error(Failure::from(&err))),
    }
}
