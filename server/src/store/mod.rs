//! The store room: the server's state, in files under the state folder and
//! in memory. The one path of a finished job's records and its `saved` reply,
//! the results history, the tuned variants a search found, the one append
//! path of the JSON-lines files, the state folder that is never entered
//! through a link, and `/api/system`'s body a probe job refreshes.
//!
//! May use: [`crate::labs`] (the lab records it saves), `pipebench`, and
//! nothing of [`crate::http`] or [`crate::jobs`].

pub(crate) mod compare_series;
pub(crate) mod history;
pub(crate) mod jsonl;

pub(crate) mod statefile;
pub(crate) mod system_cache;
pub(crate) mod tuned;
