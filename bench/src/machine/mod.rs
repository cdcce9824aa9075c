//! The machine: what it is ([`system`]), what that explains ([`findings`]), what
//! one wakeup costs here ([`wakeup`]), and whether vmsplice maps or copies on this
//! kernel ([`vmsplice_probe`]), what this kernel does where the book's chapters
//! depend on it ([`behaviour`]: measured, never read off the version), and its
//! state over one run ([`state`]: governor,
//! boost, steal, other work, throttling).
//!
//! May use: [`crate::profile`] (is perf there), [`crate::memory`], [`crate::ends`],
//! [`crate::process`], [`crate::size`].

pub mod behaviour;
pub mod findings;
pub mod state;
pub mod system;
pub mod vmsplice_probe;
pub mod wakeup;
