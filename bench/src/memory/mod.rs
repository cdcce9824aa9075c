//! Pages and page tables: the page inspector ([`inspect`]) and the page-table
//! walk of an address ([`paging`]).
//!
//! May use: [`crate::ends`] (the inspector allocates buffers with the writer's own
//! code and reads them with its huge-page check, so it sees what the writer
//! would), [`crate::process`], [`crate::size`].

pub mod inspect;
pub mod paging;
