//! The engine: a job's life, from plan to result, and its observation.
//!
//! [`pipe_run`] runs one pipe step as two pinned processes; [`occupancy`] watches
//! its pipe; [`sweep`] plans one step over several values of one parameter.
//!
//! May use every layer below it: [`crate::ipc`], [`crate::profile`],
//! [`crate::machine`], [`crate::memory`], [`crate::steps`], [`crate::ends`],
//! [`crate::process`], [`crate::output`], [`crate::size`].

pub mod occupancy;
pub mod pipe_run;
pub mod result;
pub mod sweep;
