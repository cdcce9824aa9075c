//! The one switch that stops the server: the signal handler turns it on, and
//! the accept loop, every connection, every WebSocket and the run threads watch it.

use std::sync::Arc;

use tokio::sync::watch;

/// Whether the server is stopping. Cheap to clone; all clones share one switch.
#[derive(Debug, Clone)]
pub struct Shutdown {
    switch: Arc<watch::Sender<bool>>,
}

impl Default for Shutdown {
    fn default() -> Self {
        Shutdown::new()
    }
}

impl Shutdown {
    /// A switch that is off.
    pub fn new() -> Shutdown {
        Shutdown {
            switch: Arc::new(watch::Sender::new(false)),
        }
    }

    /// Turns it on (again is harmless).
    pub fn trigger(&self) {
        self.switch.send_replace(true);
    }

    /// Whether it is on; cheap enough for a run thread's 50 ms loop.
    pub fn is_triggered(&self) -> bool {
        *self.switch.borrow()
    }

    /// Resolves once it is on.
    pub async fn wait(&self) {
        let mut receiver = self.switch.subscribe();
        // The sender lives in `self`, so this cannot fail while we wait.
        let _ = receiver.wait_for(|on| *on).await;
    }
}
