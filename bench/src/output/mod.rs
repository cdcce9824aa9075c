//! What people read: medians and tables ([`stats`]), bar charts ([`chart`]) and the
//! pipe's occupancy over a run ([`occupancy_chart`]).
//!
//! May use: [`crate::steps`] (the catalog's figures), [`crate::size`], and the
//! result types it draws.

pub mod chart;
pub mod counts;
pub mod occupancy_chart;
pub mod stats;
