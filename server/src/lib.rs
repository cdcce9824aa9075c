//! `pipebook`: builds the book and serves it with a live runner for its steps.
//!
//! Start-up ([`server`], asked by a [`config`]) builds the book with mdBook as a
//! library ([`book`]) and serves it in three rooms: [`http`] (the routes, the
//! built book, the JSON API and the checks that keep a server which runs
//! programs on click local), [`jobs`] (a page's job from its WebSocket message
//! to its result: one file per kind of job, one machine-wide queue) and
//! [`store`] (the state files: results history, tuned variants, the one append
//! path). Course labs, their progress, the exported reports and the
//! instructor's merge live in [`labs`]; what the IPC and latency kinds may be
//! asked, which jobs and labs both read, in `params`.
//!
//! Rooms, each using only those after it: `cli` > `server` > `http` > `config` >
//! `book` > `jobs` > `labs` > `store` > `params`. Any room may use: `state` (what
//! every handler shares, built by `server`), `shutdown`, `connections`, `error`,
//! `html`. (`server/tests/it/layers.rs` holds both crates to their orders.)

#![warn(unreachable_pub)]
#![warn(missing_docs)]

pub mod book;
pub mod cli;
pub mod config;
pub(crate) mod connections;
pub(crate) mod error;
pub(crate) mod html;
pub mod http;
pub(crate) mod jobs;
pub mod labs;
pub(crate) mod params;
pub mod server;
pub mod shutdown;
pub mod state;
pub(crate) mod store;

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
