//! What a page's message or a lab task may ask of the kinds whose parameters the
//! server reads itself (the IPC lab's run, the latency lab's run), checked into
//! the engine's job. Below both `jobs` and `labs`, which read them the same way.

pub(crate) mod ipc;
pub(crate) mod latency;
