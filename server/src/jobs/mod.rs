//! The jobs room: a page's job from its WebSocket message to its result. The
//! socket ([`ws`]) reads a message, [`protocol`] reads its `type` into the
//! kind's message, the kind plans it ([`requests::Kind`]) into the engine's
//! `Job` (or a series of runs), and the [`scheduler`] runs one job at a time
//! machine-wide, its worker the job's `Observer`.
//!
//! One file per kind of job: its message (a serde struct that refuses unknown
//! fields), its bounds and defaults, and its plan: [`run`], [`sweep`],
//! [`compare`], [`ipc`], [`latency`], [`pages`], [`wakeup`], [`probe`],
//! [`tool`], [`tune`], [`shared_pipe`]. A new kind is one file here, its `mod`
//! line, and one line in [`protocol`]'s list of kinds.
//!
//! May use: [`crate::store`] (saving a result, the tuned variants),
//! [`crate::labs`] (lab-tagged runs), [`crate::state`], `pipebench`; nothing of
//! [`crate::http`].

pub(crate) mod compare;
pub(crate) mod ipc;
pub(crate) mod latency;
pub(crate) mod message;
pub(crate) mod pages;
pub(crate) mod planned;
pub(crate) mod probe;
pub(crate) mod protocol;
pub(crate) mod requests;
pub(crate) mod run;
pub(crate) mod saving;
pub(crate) mod scheduler;
pub(crate) mod shared_pipe;
pub(crate) mod sweep;
pub(crate) mod tool;
pub(crate) mod tune;
pub(crate) mod wakeup;
pub(crate) mod ws;
