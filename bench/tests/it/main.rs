//! pipebench's integration tests, one binary: real processes, real pipes, real
//! kernel objects. Tests that run steps pin both CPUs and take `common::cpus()`,
//! so they never overlap, whichever module they live in.

mod common;

mod bad_input;
mod behaviour;
mod cleanup;
mod cli_counts;
mod compare;
mod counts;
mod ipc;
mod ipc_counts;
mod latency;
mod pages;
mod paging_vectors;
mod path_tools;
mod planted;
mod profile;
mod racer;
mod readme;
mod shared_pipe;
mod steps;
mod tool;
mod trust;
mod tune;
mod wakeup;
