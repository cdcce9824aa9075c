//! `pipebook`: builds the book and serves it with a live runner for its steps.
//!
//! Start-up ([`server`], asked by a [`config`]) builds the book with mdBook as a library ([`book`]),
//! loads it ([`site`]) and serves it ([`app`], [`serve_book`]) next to a JSON API
//! ([`api`]) and the WebSocket runner ([`ws`], [`protocol`]). Runs go through one
//! machine-wide queue ([`scheduler`]), each on its own thread ([`worker`]), also
//! the runs of the IPC lab ([`ipc_page`]) and of the latency lab ([`latency_page`]), and their results are kept across
//! restarts ([`history`]). Course labs, their progress, the exported reports and
//! the instructor's merge live in [`labs`]. [`security`] holds the
//! checks that keep a server which runs programs on click local.

#![warn(missing_docs)]

pub(crate) mod api;
pub mod app;
pub mod book;
pub mod cli;
pub(crate) mod compare_page;
pub mod config;
pub(crate) mod connections;
pub(crate) mod error;
pub(crate) mod history;
pub(crate) mod html;
pub(crate) mod ipc_page;
pub(crate) mod jsonl;
pub(crate) mod judge_api;
pub mod labs;
pub(crate) mod latency_page;
pub(crate) mod page_defaults;
pub(crate) mod page_params;
pub(crate) mod past_page;
pub mod peer;
pub(crate) mod protocol;
pub(crate) mod requests;
pub(crate) mod saving;
pub(crate) mod scheduler;
pub(crate) mod security;
pub(crate) mod serve_book;
pub mod server;
pub mod shutdown;
pub(crate) mod site;
pub mod state;
pub(crate) mod statefile;
pub(crate) mod system_cache;
pub(crate) mod watch;
pub(crate) mod ws;

/// An error and its causes, each once: `outer: cause: root cause`. Errors here
/// never repeat their source in their own message, so logs print the chain.
pub fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
