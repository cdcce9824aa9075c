//! The machine: what it is ([`system`]), what that explains ([`findings`]), what
//! one wakeup costs here ([`wakeup`]), and whether vmsplice maps or copies on this
//! kernel ([`vmsplice_probe`]).
//!
//! May use: [`crate::profile`] (is perf there), [`crate::memory`], [`crate::ends`],
//! [`crate::process`], [`crate::size`].

pub mod findings;
pub mod system;
pub mod vmsplice_probe;
pub mod wakeup;
