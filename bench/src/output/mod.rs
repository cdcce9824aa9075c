//! What people read: medians and tables ([`stats`]), bar charts ([`chart`]), the
//! pipe's occupancy over a run ([`occupancy_chart`]), a run's kernel counts
//! ([`counts`]) and the IPC matrix's table ([`ipc_matrix`]).
//!
//! May use: [`crate::steps`] (the catalog's figures), [`crate::size`],
//! [`crate::stats`], and the result types it draws (the engine's, the IPC lab's).

pub mod chart;
pub mod counts;
pub mod ipc_matrix;
pub mod occupancy_chart;
pub mod stats;
