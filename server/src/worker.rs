//! The body of a run thread: start both ends, sample them every 50 ms, and make
//! sure they are dead and reaped before the thread ends.

use std::sync::mpsc::RecvTimeoutError;
use std::sync::Arc;
use std::time::Duration;

use pipebench::runner::RunHandle;

use crate::protocol::{EffectiveParams, ServerMessage};
use crate::scheduler::{Job, Shared};

/// How often progress is sampled and sent: 20 a second.
pub const SAMPLE_INTERVAL: Duration = Duration::from_millis(50);

/// Runs `job` to its end on the calling thread, then hands the machine to the next.
pub fn run(shared: &Arc<Shared>, job: Job) {
    let last = execute(shared, &job);
    // Free the machine before saying the run ended, so a page that hears
    // `cancelled` or `error` finds the runner free.
    shared.finished(job.id);
    if let Some(last) = last {
        job.send(last);
    }
}

/// Runs the job; returns the message that ends it, if it is still to be sent
/// (a result is sent, then saved, before the machine is freed).
fn execute(shared: &Shared, job: &Job) -> Option<ServerMessage> {
    // Cancelled between leaving the queue and getting here?
    match job.stop.try_recv() {
        Ok(()) => return Some(ServerMessage::Cancelled),
        Err(std::sync::mpsc::TryRecvError::Disconnected) => return None,
        Err(std::sync::mpsc::TryRecvError::Empty) => {}
    }
    let plan = &job.plan;
    let mut handle = match RunHandle::start(plan, &shared.program) {
        Ok(handle) => handle,
        Err(err) => return Some(ServerMessage::error(err.to_string())),
    };
    let (writer, reader) = handle.pids();
    tracing::info!(step = %plan.step, writer, reader, "run started");
    job.send(ServerMessage::Started {
        step: plan.step.clone(),
        params: EffectiveParams::from(plan),
        pids: [writer, reader],
        warnings: plan.warnings.clone(),
    });
    loop {
        match handle.poll() {
            Ok(Some(result)) => {
                // A last sample, so even a run shorter than one interval shows progress.
                job.send(handle.progress().into());
                tracing::info!(step = %result.step, gib_per_s = result.gib_per_s, bytes = result.bytes, "run finished");
                // The page first: saving waits for a file lock and the disk.
                job.send(ServerMessage::Result(Box::new(result.clone())));
                if let Err(err) = shared.history.append(&result) {
                    tracing::error!("could not save the result: {}", crate::error_chain(&err));
                }
                return None;
            }
            Ok(None) => job.send(handle.progress().into()),
            Err(err) => {
                tracing::warn!(step = %plan.step, "run failed: {err}");
                return Some(ServerMessage::error(err.to_string()));
            }
        }
        match job.stop.recv_timeout(SAMPLE_INTERVAL) {
            Ok(()) => {
                handle.kill();
                tracing::info!(step = %plan.step, "run cancelled");
                return Some(ServerMessage::Cancelled);
            }
            Err(RecvTimeoutError::Disconnected) => {
                handle.kill();
                tracing::info!(step = %plan.step, "run stopped: the page went away");
                return None;
            }
            Err(RecvTimeoutError::Timeout) if shared.shutdown.is_triggered() => {
                handle.kill();
                return Some(ServerMessage::error("the server is shutting down"));
            }
            Err(RecvTimeoutError::Timeout) => {}
        }
    }
}
