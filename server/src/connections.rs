//! Who holds the server's connections, and which one to drop when a new page
//! needs the room.
//!
//! Every accepted TCP connection is read through [`Metered`], which counts the
//! bytes that arrive ([`Activity`]): after a WebSocket upgrade the socket is
//! still read through it, so the WebSocket's own loop can tell a message in
//! progress (bytes arrived, no whole message yet) from a silent socket.
//!
//! [`Registry`] keeps one [`Slot`] per open HTTP connection and per open
//! WebSocket: whether it is busy and since when it is in its current state.
//! When a cap is reached, [`Registry::evict_one`] asks the connection most
//! worth dropping to close: a WebSocket stuck in the middle of a message for
//! the longest time, else the one idle the longest (never one with a run
//! queued or running); an HTTP connection idle (waiting for a request) the
//! longest, else one whose request has been answered for the longest time,
//! past the header timeout (a client that does not read its response).

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;

/// Bytes received on one connection so far.
#[derive(Debug, Default)]
pub(crate) struct Activity {
    bytes_read: AtomicU64,
}

impl Activity {
    /// Bytes read from the socket so far.
    pub(crate) fn bytes_read(&self) -> u64 {
        self.bytes_read.load(Ordering::Relaxed)
    }

    /// Counts `bytes` more read from the socket.
    pub(crate) fn record(&self, bytes: u64) {
        self.bytes_read.fetch_add(bytes, Ordering::Relaxed);
    }
}

/// A stream whose reads are counted in an [`Activity`].
pub(crate) struct Metered<S> {
    inner: S,
    activity: Arc<Activity>,
}

impl<S> Metered<S> {
    /// `inner`, counted in `activity`.
    pub(crate) fn new(inner: S, activity: Arc<Activity>) -> Self {
        Metered { inner, activity }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Metered<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        let read = (buf.filled().len() - before) as u64;
        if read > 0 {
            self.activity.record(read);
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Metered<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

/// One connection's state, as the registry sees it.
#[derive(Debug)]
pub(crate) struct Slot {
    /// Requests being answered (HTTP), or runs queued, running or being saved
    /// (WebSocket): a busy WebSocket is never dropped.
    busy: AtomicUsize,
    /// A WebSocket message has been arriving since `since_ms`.
    partial: AtomicBool,
    /// When the connection entered its current state, ms after the registry's start.
    since_ms: AtomicU64,
    /// Asked to close (once).
    evicting: AtomicBool,
    /// Wakes the connection's task to close.
    evict: Notify,
}

impl Slot {
    /// Resolves when the registry asks this connection to close.
    pub(crate) async fn evicted(&self) {
        self.evict.notified().await;
    }

    /// Whether the registry has asked this connection to close.
    #[cfg(test)]
    pub(crate) fn is_evicting(&self) -> bool {
        self.evicting.load(Ordering::SeqCst)
    }

    /// The connection will not close after all (it became busy): it may be
    /// chosen again later.
    pub(crate) fn spare(&self) {
        self.evicting.store(false, Ordering::SeqCst);
    }
}

/// The open connections of one kind (HTTP or WebSocket).
#[derive(Debug)]
pub(crate) struct Registry {
    start: Instant,
    next: AtomicU64,
    slots: Mutex<HashMap<u64, Arc<Slot>>>,
}

impl Default for Registry {
    fn default() -> Self {
        Registry {
            start: Instant::now(),
            next: AtomicU64::new(0),
            slots: Mutex::new(HashMap::new()),
        }
    }
}

/// A connection's place in the registry: gone when dropped.
pub(crate) struct Registration {
    registry: Arc<Registry>,
    id: u64,
    slot: Arc<Slot>,
}

impl Registration {
    /// The slot, to share with the connection's task.
    pub(crate) fn slot(&self) -> &Arc<Slot> {
        &self.slot
    }

    /// Marks the start of a busy stretch (a request, a run).
    pub(crate) fn begin_busy(&self) {
        self.slot.busy.fetch_add(1, Ordering::SeqCst);
        self.touch();
    }

    /// Marks the end of a busy stretch.
    pub(crate) fn end_busy(&self) {
        self.slot.busy.fetch_sub(1, Ordering::SeqCst);
        self.touch();
    }

    /// Sets whether the connection is busy (a WebSocket with a run or not);
    /// the clock restarts when it changes.
    pub(crate) fn set_busy(&self, busy: bool) {
        let was = self.slot.busy.swap(usize::from(busy), Ordering::SeqCst) > 0;
        if was != busy {
            self.touch();
        }
    }

    /// Sets whether a WebSocket message is arriving; the clock restarts when
    /// one starts, and when it ends.
    pub(crate) fn set_partial(&self, partial: bool) {
        if self.slot.partial.swap(partial, Ordering::SeqCst) != partial {
            self.touch();
        }
    }

    /// Restarts the clock of the current state (e.g. a whole message arrived).
    pub(crate) fn touch(&self) {
        self.slot
            .since_ms
            .store(self.registry.now_ms(), Ordering::SeqCst);
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.registry
            .slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.id);
    }
}

impl Registry {
    fn now_ms(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Adds a connection, idle from now.
    pub(crate) fn register(self: &Arc<Self>) -> Registration {
        let id = self.next.fetch_add(1, Ordering::SeqCst);
        let slot = Arc::new(Slot {
            busy: AtomicUsize::new(0),
            partial: AtomicBool::new(false),
            since_ms: AtomicU64::new(self.now_ms()),
            evicting: AtomicBool::new(false),
            evict: Notify::new(),
        });
        self.slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, Arc::clone(&slot));
        Registration {
            registry: Arc::clone(self),
            id,
            slot,
        }
    }

    /// How many connections are open.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.slots.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Asks the connection most worth dropping to close: among those not busy,
    /// one with a message in progress for the longest time, else the one idle
    /// the longest; with `busy_after`, a connection busy for longer than that
    /// when none is idle (a client that does not read its answer). Returns
    /// whether one was asked.
    pub(crate) fn evict_one(&self, busy_after: Option<Duration>) -> bool {
        let slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        let now = self.now_ms();
        let since = |slot: &Slot| slot.since_ms.load(Ordering::SeqCst);
        let candidates = slots
            .values()
            .filter(|slot| !slot.evicting.load(Ordering::SeqCst));
        let mut best: Option<(u8, u64, &Arc<Slot>)> = None;
        for slot in candidates {
            let busy = slot.busy.load(Ordering::SeqCst) > 0;
            // Lower rank goes first: a stuck message, then idleness, then slowness.
            let rank = match (busy, slot.partial.load(Ordering::SeqCst)) {
                (false, true) => 0,
                (false, false) => 1,
                (true, _) => match busy_after {
                    Some(after) if now.saturating_sub(since(slot)) >= after.as_millis() as u64 => 2,
                    _ => continue,
                },
            };
            let key = (rank, since(slot));
            if best.is_none_or(|(r, s, _)| key < (r, s)) {
                best = Some((rank, since(slot), slot));
            }
        }
        match best {
            Some((_, _, slot)) => {
                slot.evicting.store(true, Ordering::SeqCst);
                slot.evict.notify_one();
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stuck_then_the_oldest_idle_go_first_and_busy_ones_stay() {
        let registry = Arc::new(Registry::default());
        let busy = registry.register();
        busy.begin_busy();
        let old_idle = registry.register();
        std::thread::sleep(Duration::from_millis(5));
        let new_idle = registry.register();
        let stuck = registry.register();
        stuck.set_partial(true);
        assert!(registry.evict_one(None));
        assert!(stuck.slot().is_evicting());
        assert!(registry.evict_one(None));
        assert!(old_idle.slot().is_evicting());
        assert!(registry.evict_one(None));
        assert!(new_idle.slot().is_evicting());
        // Only the busy one is left: kept, unless it is slow.
        assert!(!registry.evict_one(None));
        assert!(!registry.evict_one(Some(Duration::from_secs(60))));
        assert!(registry.evict_one(Some(Duration::ZERO)));
        assert!(busy.slot().is_evicting());
        drop(stuck);
        assert_eq!(registry.len(), 3);
    }
}
