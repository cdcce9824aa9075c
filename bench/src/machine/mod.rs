//! The machine: what it is ([`system`]), what that explains ([`findings`]), what
//! one wakeup costs here ([`wakeup`]), and whether vmsplice maps or copies on this
//! kernel ([`vmsplice_probe`]), and its state over one run ([`state`]: governor,
//! boost, steal, other work, throttling).
//!
//! May use: [`crate::profile`] (is perf there), [`crate::memory`], [`crate::ends`],
//! [`crate::process`], [`crate::size`].

pub mod findings;
pub mod state;
pub mod system;
pub mod vmsplice_probe;
pub mod wakeup;
