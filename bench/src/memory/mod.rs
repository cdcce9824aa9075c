//! Pages and page tables: the page inspector ([`inspect`]), huge-page checks
//! ([`hugepage`]) and the page-table walk of an address ([`paging`]).
//!
//! May use: [`crate::ends`] (the inspector allocates buffers with the writer's own
//! code, so it sees what the writer would), [`crate::process`], [`crate::size`].

pub mod hugepage;
pub mod inspect;
pub mod paging;
