//! The two ends of a pipe step and what they share with the harness.
//!
//! The hot loops ([`writer`], [`reader`]), their [`buffer`]s and the verify
//! [`pattern`], the pipe's set-up ([`pipe_setup`]), the shared [`control`] page the
//! harness samples, the ends' flags ([`options`]), the writer's huge-page check of
//! its buffers ([`hugepage`]), what an end reports ([`report`], [`usage`]) and how
//! it fails ([`error`]). A shared pipe's writers and readers are ends too
//! ([`shared_end`], tagging and judging their words with [`shared_tag`]).
//!
//! May use: [`crate::process`], [`crate::size`].

pub mod buffer;
pub mod control;
pub mod error;
pub mod hugepage;
pub mod options;
pub mod pattern;
pub mod pipe_setup;
pub mod reader;
pub mod report;
pub mod shared_end;
pub mod shared_tag;
pub mod usage;
pub mod writer;
