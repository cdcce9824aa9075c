//! The engine: a job's life, from plan to result, and its observation.
//!
//! [`job`] is the one life every kind of job has, and dispatches each kind to its
//! own module: [`pipe_job`] (a pipe step, over [`pipe_run`]'s two pinned ends,
//! with [`occupancy`] watching its pipe and [`counts`] judging the kernel's counts),
//! [`ipc`], [`latency`], [`wakeup`], [`probe`] (the behaviour probes), [`pages`] (the page inspector), [`tool`],
//! [`shared_pipe`] and [`tune`]; [`sweep`] (one step over several values of one
//! parameter) and [`compare`] (two configurations head to head in interleaved
//! pairs) are jobs of pipe jobs. [`observer`] is who drives a job and hears it,
//! [`event`] what a job says (the one type the CLI prints and the server streams),
//! [`result`] what it leaves. A kind that says things of its own keeps them in its
//! folder's `report.rs`, which [`event`] reads.
//!
//! May use every layer below it: [`crate::ipc`], [`crate::latency`], [`crate::profile`],
//! [`crate::machine`], [`crate::memory`], [`crate::steps`], [`crate::ends`],
//! [`crate::process`], [`crate::stats`], [`crate::size`] ([`crate::output`] sits
//! above it: it draws the engine's results for the command line).

pub mod compare;
pub mod counts;
pub mod event;
pub mod ipc;
pub mod job;
pub mod latency;
pub mod observer;
pub mod occupancy;
pub mod pages;
pub mod pipe_job;
pub mod pipe_run;
pub mod probe;
pub mod result;
pub mod shared_pipe;
pub mod sweep;
pub mod tool;
pub mod tune;
pub mod wakeup;
