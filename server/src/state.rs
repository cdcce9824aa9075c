//! What every part of the server shares: the state handed to each request, and
//! the bounds on client connections.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use pipebench::steps::plan::Limits;
use tokio::sync::Semaphore;

use crate::connections::Registry;
use crate::http::security::{HostPolicy, Token};
use crate::http::site::Site;
use crate::jobs::scheduler::Scheduler;
use crate::labs::store::LabStore;
use crate::shutdown::Shutdown;
use crate::store::history::History;

/// Everything a request handler may need. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    /// The built book.
    pub(crate) site: Arc<Site>,
    /// This start's secret.
    pub(crate) token: Arc<Token>,
    /// Which Host and Origin values are ours.
    pub(crate) hosts: Arc<HostPolicy>,
    /// The run queue.
    pub(crate) scheduler: Scheduler,
    /// Bounds on run parameters.
    pub(crate) limits: Arc<Limits>,
    /// `/api/steps`, serialised once.
    pub(crate) steps_json: Bytes,
    /// `/api/ipc`, serialised once.
    pub(crate) ipc_json: Bytes,
    /// `/api/system`, probed at start-up; its behaviour probes again on request.
    pub(crate) system: Arc<crate::store::system_cache::SystemCache>,
    /// Past results.
    pub(crate) history: Arc<History>,
    /// The labs' predictions and measurements.
    pub(crate) labs: Arc<LabStore>,
    /// The server's stop switch; WebSocket connections close when it turns on.
    pub shutdown: Shutdown,
    /// One permit per open WebSocket: past the cap, the stalest socket is
    /// asked to close, and only when none can be, upgrades get a 503.
    pub(crate) websockets: Arc<Semaphore>,
    /// The open WebSockets: which is busy, stuck or idle, to pick one to drop.
    pub(crate) websocket_slots: Arc<Registry>,
    /// Timeouts and caps on connections (as fitted to the open-file limit).
    pub(crate) connections: Arc<ConnectionLimits>,
    /// The tuned variants found by searches since start (`tuned-STEP`).
    pub(crate) tuned: Arc<crate::store::tuned::TunedVariants>,
    /// Which local users are served (the server's own only, unless opted out).
    pub(crate) peers: Arc<crate::http::peer::PeerPolicy>,
    /// The pairs of the comparisons run, for "more pairs" to take up.
    pub(crate) compare_series: Arc<crate::store::compare_series::SeriesStore>,
}

/// Descriptors kept for everything but client connections: listeners, the
/// runtime, logs, and the pipes and processes of a run.
const FD_RESERVE: u64 = 64;

/// Bounds on client connections, so idle or slow clients cannot take every
/// file descriptor and lock everyone else out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// How long a connection may take to send a request head, counted from when
    /// it starts waiting for one: a new connection, or a kept-alive one between
    /// requests (so this is the idle keep-alive timeout too).
    pub(crate) header_timeout: Duration,
    /// Most HTTP connections open at once; more clients wait to be accepted.
    pub(crate) max_connections: usize,
    /// Most WebSockets open at once; past it a stale one is dropped for the
    /// newcomer, or (none stale) the upgrade gets 503.
    pub(crate) max_websockets: usize,
    /// How long one WebSocket message may take to arrive once it has begun.
    pub(crate) ws_message_timeout: Duration,
    /// How long a WebSocket with no run queued, running or being saved may
    /// stay silent.
    pub(crate) ws_idle_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_timeout: Duration::from_secs(10),
            max_connections: 512,
            max_websockets: 128,
            ws_message_timeout: Duration::from_secs(10),
            ws_idle_timeout: Duration::from_secs(120),
        }
    }
}

/// Raises this process's soft open-file limit to its hard limit (as far as
/// the kernel's `nr_open` allows), so the connection caps fitted to it are as
/// generous as the machine lets this user be. Returns the soft limit in force.
pub(crate) fn raise_fd_limit() -> u64 {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let limit = getrlimit(Resource::Nofile);
    let ceiling = std::fs::read_to_string("/proc/sys/fs/nr_open")
        .ok()
        .and_then(|text| text.trim().parse::<u64>().ok())
        .unwrap_or(1 << 20);
    let target = limit.maximum.unwrap_or(u64::MAX).min(ceiling);
    let current = limit.current.unwrap_or(u64::MAX);
    if current >= target {
        return current;
    }
    match setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(target),
            maximum: limit.maximum,
        },
    ) {
        Ok(()) => {
            tracing::debug!("open-file limit raised from {current} to {target}");
            target
        }
        Err(err) => {
            tracing::warn!("cannot raise the open-file limit from {current} to {target}: {err}");
            current
        }
    }
}

impl ConnectionLimits {
    /// These limits, lowered if this process's open-file limit could not hold
    /// them with [`FD_RESERVE`] descriptors to spare.
    pub(crate) fn fit_to_fd_limit(&self) -> ConnectionLimits {
        let soft = rustix::process::getrlimit(rustix::process::Resource::Nofile)
            .current
            .unwrap_or(u64::MAX);
        let fitted = self.fit_to(soft);
        if fitted != *self {
            tracing::info!(
                "open-file limit {soft}: serving at most {} connections and {} WebSockets",
                fitted.max_connections,
                fitted.max_websockets
            );
        }
        fitted
    }

    fn fit_to(&self, open_files: u64) -> ConnectionLimits {
        let budget = usize::try_from(open_files.saturating_sub(FD_RESERVE)).unwrap_or(usize::MAX);
        let mut fitted = self.clone();
        if fitted.max_connections.saturating_add(fitted.max_websockets) > budget {
            fitted.max_websockets = fitted.max_websockets.min(budget / 4).max(1);
            fitted.max_connections = fitted
                .max_connections
                .min(budget.saturating_sub(fitted.max_websockets))
                .max(1);
        }
        fitted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_caps_fit_the_open_file_limit() {
        let limits = ConnectionLimits::default();
        assert_eq!(limits.fit_to(20_000), limits);
        let small = limits.fit_to(256);
        // 192 descriptors for clients: a quarter for WebSockets, the rest for HTTP.
        assert_eq!((small.max_connections, small.max_websockets), (144, 48));
        let tiny = limits.fit_to(10);
        assert_eq!((tiny.max_connections, tiny.max_websockets), (1, 1));
        assert_eq!(tiny.header_timeout, limits.header_timeout);
    }
}
