//! `pipebook`: builds the book and serves it with a live runner for its steps.
//!
//! Start-up ([`server`]) builds the book with mdBook as a library ([`book`]),
//! loads it ([`site`]) and serves it ([`app`], [`pages`]) next to a JSON API
//! ([`api`]) and the WebSocket runner ([`ws`], [`protocol`]). Runs go through one
//! machine-wide queue ([`scheduler`]), each on its own thread ([`worker`]), also
//! the runs of the IPC lab ([`ipc`]), and their results are kept across
//! restarts ([`history`]). Course labs, their progress, the exported reports and
//! the instructor's merge live in [`labs`]. [`security`] holds the
//! checks that keep a server which runs programs on click local.

#![warn(missing_docs)]

pub mod api;
pub mod app;
pub mod book;
pub mod cli;
pub mod connections;
pub mod history;
pub mod html;
pub mod ipc;
pub(crate) mod jsonl;
pub mod labs;
pub mod pages;
pub mod plan;
pub mod protocol;
pub mod scheduler;
pub mod security;
pub mod server;
pub mod shutdown;
pub mod site;
pub mod state;
pub mod statefile;
pub mod ws;

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
