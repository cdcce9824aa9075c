//! The HTTP room: the routes and what serves them. The built book in memory
//! with its CSP, the JSON API, the `/api/run` upgrade handed to [`crate::jobs`],
//! and the checks that keep a server which runs programs on click local (Host,
//! Origin, token, the peer's user).
//!
//! May use: [`crate::jobs`] (the socket, each kind's bounds for `/api/params`),
//! [`crate::store`], [`crate::labs`], [`crate::state`], [`crate::error`]. Nothing in
//! `jobs` or `store` uses this room.

pub(crate) mod api;
pub mod app;
pub(crate) mod judge_api;
pub(crate) mod page_params;
pub(crate) mod peer;
pub(crate) mod rebuild;
pub(crate) mod security;
pub(crate) mod serve_book;
pub(crate) mod site;
