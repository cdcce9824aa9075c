//! The engine: a job's life, from plan to result, and its observation.
//!
//! [`job`] is the one life every kind of job has (a pipe step, an IPC mechanism,
//! the wakeup probe, the page inspector) and the [`job::Observer`] that drives it;
//! [`event`] is what a job says, the one type the CLI prints and the server
//! streams; [`result`] what it leaves. [`pipe_run`] runs one pipe step as two
//! pinned processes; [`occupancy`] watches its pipe; [`sweep`] is a job of jobs,
//! one step over several values of one parameter; [`compare`] another, two
//! configurations head to head in interleaved pairs.
//!
//! May use every layer below it: [`crate::ipc`], [`crate::profile`],
//! [`crate::machine`], [`crate::memory`], [`crate::steps`], [`crate::ends`],
//! [`crate::process`], [`crate::output`], [`crate::stats`], [`crate::size`].

pub mod compare;
pub mod counts;
pub mod event;
pub mod job;
pub mod observer;
pub mod occupancy;
pub mod pipe_job;
pub mod pipe_run;
pub mod result;
pub mod shared_pipe;
pub mod sweep;
pub mod tool;
pub mod tune;
