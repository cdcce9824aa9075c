//! Processes: starting a child with the one descriptor map ([`launch`]), a run's
//! children watched from start to reaping ([`supervise`]), and the
//! CPUs it may run on ([`cpu`]), the kernel's page sizes ([`page_size`]), the folders its private files go in ([`rundir`],
//! [`filesystem`]).
//!
//! The lowest layer of the crate beside [`crate::size`]: it knows nothing of
//! steps, ends or mechanisms.
//!
//! May use: [`crate::size`].

pub mod counts;
pub mod cpu;
pub mod filesystem;
#[cfg(test)]
pub(crate) mod intruder;
pub mod launch;
pub mod page_size;
pub mod rundir;
pub(crate) mod supervise;
