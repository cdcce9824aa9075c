//! The jobs room: a page's job from its WebSocket message to its result. The
//! socket ([`ws`]) reads a message, [`protocol`] reads its `type` into the
//! kind's message, [`requests`] plans it through the kind's own file into the
//! engine's `Job` (or a series of runs), and the [`scheduler`] runs one job at
//! a time machine-wide, its worker the job's `Observer`.
//!
//! One file per kind of job: its message (a serde struct that refuses unknown
//! fields), its bounds and defaults, and its plan. A new kind is one file here
//! and one line in [`protocol`]'s list of kinds.
//!
//! May use: [`crate::store`] (saving a result, the tuned variants),
//! [`crate::labs`] (lab-tagged runs), [`crate::state`], `pipebench`; nothing of
//! [`crate::http`].

pub(crate) mod compare;
pub(crate) mod ipc;
pub(crate) mod latency;
pub(crate) mod protocol;
pub(crate) mod requests;
pub(crate) mod run;
pub(crate) mod scheduler;
pub(crate) mod ws;
