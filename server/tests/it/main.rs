//! pipebook's integration tests, one binary with one helper module (`common`):
//! the real server (in-process or as its binary), real HTTP and WebSocket, the
//! real native ends, and Debian's headless Chromium for the book.
//!
//! Tests that run steps pin both CPUs of a two-core machine: they hold
//! `common::RUN_LOCK` for as long as runs may happen, whichever module they live
//! in. The browser tests hold it too (they also time page loads), which is also
//! how they take turns at the one browser they share.

mod common;

mod a11y;
mod api_edges;

mod bad_input;
mod binary;
mod book;
mod browser;
mod build_links;
mod compare;
mod deploy;
mod editions;
mod http;
mod ipc;
mod kernel_probe;
mod labs;
mod layers;
mod lifecycle;
mod lighthouse;
mod map;
mod measure;
mod message_bounds;
mod pages;
mod past;
mod peers;
mod profile;
mod prose;
mod queue;
mod report_extremes;
mod report_files;
mod runs;
mod search_print;
mod setup;
mod sockets;
mod state_files;
mod state_swap;
mod tool_path;
mod trust;
mod tuned;
mod ws_security;
