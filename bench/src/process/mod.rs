//! Processes: starting a child, and the CPUs it may run on.
//!
//! The lowest layer of the crate beside [`crate::size`]: it knows nothing of
//! steps, ends or mechanisms.

pub mod cpu;
