//! What a shared-pipe sweep says: `started` ([`SharedStarted`]), a
//! `shared_point` per point ([`SharedPoint`]) and its result
//! ([`SharedPipeResult`]). Apart from the job that runs it, so the engine's
//! `Event` can carry it without depending on how it is run.

use serde::Serialize;

/// The whole sweep (`"kind":"shared_pipe"`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SharedPipeResult {
    /// Always `shared_pipe`.
    pub kind: &'static str,
    /// The CPUs this process may use.
    pub cpus: usize,
    /// One per writers × readers × message size.
    pub points: Vec<SharedPoint>,
    /// Things to know when reading the figures.
    pub warnings: Vec<String>,
    /// When it finished, ms since the epoch.
    pub finished_at_ms: u64,
}

/// One configuration's run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SharedPoint {
    /// Writer processes.
    pub writers: usize,
    /// Reader processes.
    pub readers: usize,
    /// Bytes per message (each write call, each read call).
    pub msg_size: u64,
    /// Whether a message is at most `PIPE_BUF`, so its write is atomic.
    pub atomic: bool,
    /// Bytes the readers received.
    pub bytes: u64,
    /// From the first byte any reader got to the last.
    pub elapsed_ms: f64,
    /// GiB/s over that time.
    pub gib_per_s: f64,
    /// Bytes each writer wrote, by writer.
    pub written: Vec<u64>,
    /// Bytes of each writer the readers received, by writer.
    pub received: Vec<u64>,
    /// Bytes each reader received, by reader.
    pub per_reader: Vec<u64>,
    /// Messages found interleaved with another inside a read (0 when atomic).
    pub torn_messages: u64,
    /// Reads that ended inside a message (not a tear: the rest of it came in
    /// the next read, this reader's or another's).
    pub split_messages: u64,
    /// Voluntary context switches of all writers and of all readers (sleeps
    /// on the pipe's lock or on a full or empty pipe).
    pub sleeps: [u64; 2],
    /// More ends than CPUs: they take turns.
    pub oversubscribed: bool,
    /// What the kernel did for the ends over their loops: `writers` (every
    /// writer's counts summed) and `readers`, with what could not be counted
    /// and why (a count one end lacks is missing from the sum).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<crate::engine::counts::Counts>,
}

/// A sweep as it starts (`started {kind:"shared_pipe", ...}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SharedStarted {
    /// Always `shared_pipe`.
    pub kind: &'static str,
    /// Writer counts.
    pub writers: Vec<usize>,
    /// Reader counts.
    pub readers: Vec<usize>,
    /// Message sizes, bytes.
    pub msg_sizes: Vec<u64>,
    /// Bytes each point moves.
    pub bytes: u64,
    /// Points in all.
    pub points: usize,
    /// The CPUs this process may use.
    pub cpus: usize,
}
