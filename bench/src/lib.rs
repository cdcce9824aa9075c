//! `pipebench`: the native pipe steps of "How fast are Linux pipes anyway?" and the
//! harness that runs them.
//!
//! The crate is both a library and the `pipebench` binary. The library holds the one
//! step [`catalog`], the two ends ([`writer`], [`reader`]), the [`runner`] that spawns
//! them pinned to two CPUs and samples their progress through shared memory, and the
//! tables and charts of `pipebench all`. The `pipebook` server drives runs through
//! [`runner`] too, so a figure in the browser comes from the same code as one in a
//! terminal.

pub mod article_profile;
pub mod buffer;
pub mod catalog;
pub mod chart;
pub mod control;
pub mod end;
pub mod error;
pub mod findings;
pub mod hugepage;
pub mod inspect;
pub mod ipc;
pub mod occupancy;
pub mod occupancy_chart;
pub mod options;
pub mod paging;
pub mod pattern;
pub mod pipe_setup;
pub mod plan;
pub mod profile;
pub mod reader;
pub mod report;
pub mod rundir;
pub mod runner;
pub mod size;
pub mod stats;
pub mod sweep;
pub mod system;
pub mod usage;
pub mod vmsplice_probe;
pub mod wakeup;
pub mod writer;
