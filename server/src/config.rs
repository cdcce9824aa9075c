//! What the server is asked to do ([`Config`], from the command line or a test) and
//! the one step both a start and the `--watch` rebuilds take with it: building the book.
//! Kept apart from `server` so that `http::rebuild` can rebuild without reaching into it.

use std::net::IpAddr;
use std::path::PathBuf;

use crate::book::{self, BookError, BuiltBook};
use crate::state::ConnectionLimits;

/// What the server needs to know.
#[derive(Debug, Clone)]
pub struct Config {
    /// Address to listen on.
    pub bind: IpAddr,
    /// Port; 0 picks a free one.
    pub port: u16,
    /// Directory holding book.toml; `None` serves the book carried in the binary.
    pub book_root: Option<PathBuf>,
    /// Rebuild the book when its sources under `book_root` change.
    pub rebuild: bool,
    /// Where to build the book, instead of book.toml's build-dir.
    pub build_dir: Option<PathBuf>,
    /// Where the results history lives.
    pub state_dir: PathBuf,
    /// More host names to answer to (e.g. a classroom server's name).
    pub allow_hosts: Vec<String>,
    /// Timeouts and caps on client connections.
    pub connections: ConnectionLimits,
    /// Serve other local users too (`--allow-other-users`): by default a
    /// connection from this machine is served only to the server's own user.
    pub allow_other_users: bool,
}

/// Builds the book (blocking): from `book_root`, or the one carried in the binary.
pub fn build_book(config: &Config) -> Result<BuiltBook, BookError> {
    match &config.book_root {
        Some(root) => book::build(root, config.build_dir.as_deref()),
        None => book::build_embedded(config.build_dir.as_deref()),
    }
}
