//! `pipebench`: the native pipe steps of "How fast are Linux pipes anyway?" and the
//! engine that runs them and every other measurement of the book.
//!
//! The crate is both a library and the `pipebench` binary. Its folders are its
//! layers, each using only the ones listed after it:
//!
//! - [`output`]: tables, medians and charts for people, of the engine's and the
//!   IPC lab's results.
//! - [`engine`]: a job's life (a pipe step, a sweep) and its observation
//!   (progress, occupancy), the one thing the CLI and the server drive.
//! - [`ipc`]: the zero-copy lab beyond pipes, its mechanisms and their harness.
//! - [`latency`]: how long one message takes, mechanism by mechanism: two
//!   pinned ends, round trips timed into an HDR histogram.
//! - [`machine`]: the machine report and what it explains (findings, the cost of
//!   a wakeup, whether vmsplice maps or copies here).
//! - [`profile`]: perf call graphs of a run's two ends, against the article's.
//! - [`memory`]: pages and page tables: the page inspector, huge-page checks, the
//!   page-table walk of an address.
//! - [`steps`]: the step catalog and a run's validated parameters.
//! - [`ends`]: the two ends of a pipe step (hot loops, buffers, the pipe's set-up,
//!   the shared control page) and what they report.
//! - [`process`]: starting a child with the one fd map, and CPU sets.
//! - [`size`]: byte sizes and rates.
//! - [`stats`]: comparisons that say how sure they are (intervals, rank tests, verdicts).
//!
//! [`entry`] is every child's entry point (`pipebench write|read|ipc-end|...`);
//! the binary's `cli` module is the command line.

#![warn(unreachable_pub)]
// Items no other crate uses are `pub(crate)`; the module docs still link them,
// for the crate's own readers (`cargo doc --document-private-items`).
#![allow(rustdoc::private_intra_doc_links)]
pub mod ends;
pub mod engine;
pub mod entry;
pub mod ipc;
pub mod latency;
pub mod machine;
pub mod memory;
pub mod output;
pub mod process;
pub mod profile;
pub mod size;
pub mod stats;
pub mod steps;
