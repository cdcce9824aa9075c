//! The behaviour probes as a job (its event is `behaviour`): what this kernel
//! does where the chapters depend on it ([`crate::machine::behaviour`]), asked
//! again when a reader wants a fresh answer. The probes measure (they time
//! wakeups and count page allocations), so they run as a job in the one queue,
//! never beside another job's measurement.

use crate::engine::event::Event;
use crate::machine::behaviour;

/// Every probe, one after another on this thread; they take under two seconds
/// together and are not cancellable midway.
pub(crate) fn run() -> Event {
    let behaviour = behaviour::probe_all();
    Event::Behaviour {
        behaviour,
        probed_at_ms: behaviour::now_ms(),
    }
}
