//! A latency configuration as a job: [`crate::latency::run`] with its samples
//! turned into `latency_progress` events and its callback into a chance to stop.

use std::time::Duration;

use crate::engine::event::{Event, Failure, Finished, LatencyProgress, Started};
use crate::engine::observer::{JobContext, Observer, Stop};
use crate::engine::result::{LatencyRecord, LatencyTag};
use crate::latency::{self, LatencyConfig, LatencyError};

/// One latency configuration. The harness starts both ends from this thread
/// (they die with it) and calls back every 50 ms: each call is a progress event
/// and a chance to stop, which kills both ends before the harness returns.
pub(crate) fn run(
    config: &LatencyConfig,
    context: &JobContext,
    observer: &mut dyn Observer,
) -> Option<Event> {
    observer.event(Event::Started(Started::Latency {
        kind: LatencyTag::Latency,
        mechanism: config.mechanism.id().to_string(),
        mode: config.mode,
        size: config.size,
        cpus: config.cpus,
        round_trips: config.round_trips,
    }));
    // No stepping aside here: the ends are started inside the harness and
    // inherit this thread's CPUs, and they must be free to pin themselves. The
    // harness sleeps 50 ms between looks, which costs the ends nothing.
    let mut stop = None;
    let outcome = latency::run(config, &context.program, |sample| {
        observer.event(Event::LatencyProgress(LatencyProgress {
            done: sample.done,
            of: sample.of,
            buckets: sample.buckets,
        }));
        stop = observer.wait(Duration::ZERO);
        stop.is_some()
    });
    match outcome {
        Ok(result) => Some(Event::Result(Finished::Latency(Box::new(
            LatencyRecord::now(result),
        )))),
        Err(LatencyError::Cancelled) => stop.unwrap_or(Stop::Cancel).final_event(),
        Err(err) => Some(Event::Error(Failure::from(&err))),
    }
}
