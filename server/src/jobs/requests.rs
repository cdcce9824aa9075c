//! The contract a kind of job keeps: a page's message becomes what
//! [`crate::jobs::planned`] holds (the engine's `Job`, or a series of pipe runs
//! queued one at a time). Each kind's own file checks its fields against its lab
//! task (when tagged), the server's bounds and the machine ([`Kind::plan`]); the
//! WebSocket connection (`ws`) submits what comes out and the scheduler steps a
//! series, so a new kind of job costs nothing here.

use pipebench::engine::event::Failure;

use crate::jobs::message::MessageError;
use crate::jobs::planned::Planned;
use crate::state::AppState;

/// One kind of job from the page: its message, read by `protocol`, planned
/// here. Each kind's file implements it for its message struct.
pub(crate) trait Kind: Sized {
    /// A good message of this kind, quoted when one is refused.
    const EXAMPLE: &'static str;
    /// Checks what a message's fields alone can say (bounds that need no
    /// machine), filling in what the check decides; a refusal here is a bad
    /// message.
    fn checked(self) -> Result<Self, MessageError> {
        Ok(self)
    }
    /// Checks the request against its lab task (when tagged), the server's
    /// bounds and the machine, and plans it; a refusal is the `error` the
    /// page hears.
    fn plan(self, state: &AppState) -> Result<Planned, Failure>;
}
