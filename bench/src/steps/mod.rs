//! The steps: the one [`catalog`] (the article's five steps, their variants and
//! experiments) and a run's validated parameters ([`plan`]).
//!
//! May use: [`crate::ends`] (the ends' options), [`crate::process`], [`crate::size`].

pub mod catalog;
pub mod plan;
pub mod tools;
