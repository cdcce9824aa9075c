//! Start-up, serving and shutdown.

use std::future::Future;
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use pipebench::machine::findings::SystemReport;
use pipebench::process::launch::EndProgram;
use pipebench::steps::plan::Limits;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

use crate::book::BookError;
use crate::config::{build_book, Config};
use crate::connections::{Activity, Metered, Registry};
use crate::http::app::router;
use crate::http::peer::{Admission, PeerPolicy};
use crate::http::security::{HostPolicy, Token};
use crate::http::site::{Site, SiteError};
use crate::jobs::saving::Stores;
use crate::jobs::scheduler::Scheduler;
use crate::labs::store::{LabStore, StoreError};
use crate::shutdown::Shutdown;
use crate::state::{raise_fd_limit, AppState};
use crate::store::history::{self, History, HistoryError};
use crate::store::statefile::StateError;
use crate::store::system_cache::SystemCache;
use crate::store::tuned::{TunedLoad, TunedVariants, TUNED_FILE};

/// How many runs may wait behind the running one.
pub(crate) const MAX_WAITING: usize = 8;

/// How long shutdown waits for a running run's children to be killed and reaped.
const KILL_TIMEOUT: Duration = Duration::from_secs(2);

/// How long shutdown waits for open connections before exiting anyway.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(3);

/// How long a stopping server gives a connection with no request in progress.
const IDLE_GRACE: Duration = Duration::from_millis(100);

/// How long the accept loop pauses after an accept error such as EMFILE.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// Why the server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Someone else listens on the port.
    #[error(
        "{addr} is already in use (is another pipebook running?): stop it, or choose \
         another port with --port, e.g. --port {}, or --port 0 for any free port",
        .addr.port().wrapping_add(1)
    )]
    PortInUse {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// Listening failed otherwise.
    #[error("cannot listen on {addr}: {cause}{hint}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The I/O error (in the message, so not also a source).
        cause: std::io::Error,
        /// What to try.
        hint: &'static str,
    },
    /// The book did not build.
    #[error(transparent)]
    Book(#[from] BookError),
    /// The built book could not be loaded.
    #[error(transparent)]
    Site(#[from] SiteError),
    /// The results history could not be opened.
    #[error("cannot open the results history")]
    History(#[from] HistoryError),
    /// The lab records cannot be used.
    #[error("cannot use the lab records")]
    Labs(#[from] StoreError),
    /// The tuned variants' file cannot be used.
    #[error("cannot use the tuned variants")]
    Tuned(#[source] StateError),
    /// This executable's path is unknown, so runs cannot start it as an end.
    #[error("cannot find this program's own path to start runs with: {0}")]
    OwnExe(std::io::Error),
    /// Serving failed.
    #[error("the server failed: {0}")]
    Io(std::io::Error),
    /// A start-up task panicked.
    #[error("a start-up task failed: {0}")]
    Task(String),
}

async fn bind(config: &Config) -> Result<TcpListener, ServeError> {
    let addr = SocketAddr::new(config.bind, config.port);
    TcpListener::bind(addr)
        .await
        .map_err(|cause| match cause.kind() {
            std::io::ErrorKind::AddrInUse => ServeError::PortInUse { addr },
            std::io::ErrorKind::PermissionDenied => ServeError::Bind {
                addr,
                cause,
                hint: "; ports below 1024 need privileges: use e.g. --port 8000",
            },
            std::io::ErrorKind::AddrNotAvailable => ServeError::Bind {
                addr,
                cause,
                hint: "; --bind must be an address of this machine, e.g. 127.0.0.1",
            },
            _ => ServeError::Bind {
                addr,
                cause,
                hint: "",
            },
        })
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ServeError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ServeError::Task(e.to_string()))
}

/// Binds the configured address and, on loopback, the other IP version's
/// loopback at the same port, so `http://[::1]:PORT/` and a `localhost` that
/// resolves to ::1 work too.
async fn bind_all(config: &Config) -> Result<Vec<TcpListener>, ServeError> {
    let first = bind(config).await?;
    let port = first.local_addr().map_err(ServeError::Io)?.port();
    let mut listeners = vec![first];
    let twin: Option<IpAddr> = match config.bind {
        IpAddr::V4(v4) if v4 == Ipv4Addr::LOCALHOST => Some(Ipv6Addr::LOCALHOST.into()),
        IpAddr::V6(v6) if v6 == Ipv6Addr::LOCALHOST => Some(Ipv4Addr::LOCALHOST.into()),
        _ => None,
    };
    if let Some(ip) = twin {
        let addr = SocketAddr::new(ip, port);
        match TcpListener::bind(addr).await {
            Ok(listener) => listeners.push(listener),
            Err(err) => tracing::warn!(
                "also listening on {addr} failed ({err}); serving on {} only",
                config.bind
            ),
        }
    }
    Ok(listeners)
}

/// A server ready to accept connections: what [`prepare`] made.
pub struct Prepared {
    /// What every handler shares; hand it to [`run`].
    pub state: AppState,
    /// How long the book took to build.
    pub book_built_in: Duration,
}

/// Everything before accepting: builds the book, loads it with a fresh token,
/// opens the history, probes the machine and sets up the scheduler, whose runs
/// start `program` as their ends. `port` is the one the listeners got (the Host
/// check names it). Tests call this to serve in-process with [`run`].
pub async fn prepare(
    config: &Config,
    port: u16,
    program: EndProgram,
) -> Result<Prepared, ServeError> {
    let system = tokio::task::spawn_blocking(|| {
        serde_json::to_value(SystemReport::probe()).expect("system info serialises")
    });
    let build_config = config.clone();
    let built = blocking(move || build_book(&build_config)).await??;
    let token = Arc::new(Token::generate());
    let (site_dir, site_token, unpacked) = (
        built.dir.clone(),
        Arc::clone(&token),
        built.unpacked.clone(),
    );
    let site = blocking(move || Site::load_holding(&site_dir, &site_token, unpacked)).await??;
    tracing::info!(
        "book built in {:.1} s: {} pages in {}",
        built.elapsed.as_secs_f64(),
        site.page_count(),
        built.dir.display()
    );
    // Every state file is checked before any is created or read: a refused
    // labs.jsonl must not leave a fresh results.jsonl behind.
    LabStore::new(&config.state_dir).check()?;
    crate::store::statefile::check_existing(&config.state_dir.join(TUNED_FILE))
        .map_err(ServeError::Tuned)?;
    let state_dir = config.state_dir.clone();
    let history =
        Arc::new(blocking(move || History::open(&state_dir, history::DEFAULT_LIMIT)).await??);
    log_history(&history);
    let labs = Arc::new(LabStore::sharing(&config.state_dir, history.saving()));
    let tuned_dir = config.state_dir.clone();
    let tuned = Arc::new(log_tuned(
        blocking(move || TunedVariants::open(&tuned_dir))
            .await?
            .map_err(ServeError::Tuned)?,
    ));
    let shutdown = Shutdown::new();
    let system = Arc::new(SystemCache::new(
        system.await.map_err(|e| ServeError::Task(e.to_string()))?,
    ));
    let stores = Stores {
        system: Arc::clone(&system),
        history: Arc::clone(&history),
        labs: Arc::clone(&labs),
        tuned: Arc::clone(&tuned),
    };
    let scheduler = Scheduler::new(program, stores, MAX_WAITING, shutdown.clone());
    let connections = Arc::new(config.connections.fit_to_fd_limit());
    let hosts = HostPolicy::new(config.bind, port, &config.allow_hosts);
    if !config.bind.is_loopback() {
        tracing::warn!(
            "listening on {}, which is not a loopback address: anyone who can reach \
             it can run the benchmark programs on this machine. Pages are served only to \
             the host names {}: to let others in by this machine's name or address, \
             add --allow-host NAME (repeatable)",
            SocketAddr::new(config.bind, port),
            hosts.names().join(", ")
        );
    }
    let peers = PeerPolicy::new(config.allow_other_users);
    if peers.allows_other_users() {
        tracing::warn!(
            "--allow-other-users: every user of this machine who can reach the port gets \
             the pages, their token and the runner, which runs programs as this server's \
             user; use it only behind a proxy that decides who gets in"
        );
    }
    let state = AppState {
        peers: Arc::new(peers),
        site: Arc::new(site),
        token,
        hosts: Arc::new(hosts),
        scheduler,
        limits: Arc::new(Limits::default()),
        steps_json: Bytes::from(
            serde_json::to_vec(&pipebench::steps::plan::published_catalog(
                &Limits::default(),
            ))
            .expect("catalog serialises"),
        ),
        ipc_json: Bytes::from(crate::params::ipc::published_json()),
        system,
        history,
        labs,
        shutdown,
        websockets: Arc::new(Semaphore::new(connections.max_websockets)),
        websocket_slots: Arc::new(Registry::default()),
        connections,
        tuned,
        compare_series: Arc::default(),
    };
    release_build_memory();
    Ok(Prepared {
        state,
        book_built_in: built.elapsed,
    })
}

/// Builds the book, serves it until SIGINT, SIGTERM or SIGHUP, and stops cleanly.
pub async fn serve(config: Config) -> Result<(), ServeError> {
    // Bind first: a busy port should fail at once, not after building the book.
    let listeners = bind_all(&config).await?;
    // Before the caps are fitted to it: as many descriptors as this user may have.
    raise_fd_limit();
    let addr = listeners[0].local_addr().map_err(ServeError::Io)?;
    let program = EndProgram::current_exe(&["end"]).map_err(ServeError::OwnExe)?;
    let sources = if config.rebuild {
        crate::http::rebuild::baseline(&config)
    } else {
        None
    };
    let prepared = prepare(&config, addr.port(), program).await?;
    let shown = match addr.ip() {
        ip if ip.is_unspecified() => SocketAddr::new(IpAddr::from([127, 0, 0, 1]), addr.port()),
        _ => addr,
    };
    for listener in &listeners[1..] {
        if let Ok(also) = listener.local_addr() {
            tracing::info!("also listening on http://{also}/");
        }
    }
    if config.rebuild {
        crate::http::rebuild::spawn(config.clone(), prepared.state.clone(), sources);
    }
    let signals = stop_signals();
    // The one line on stdout: tests and scripts read the URL from it.
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(
        stdout,
        "pipebook: serving http://{shown}/ (book built in {:.1} s)",
        prepared.book_built_in.as_secs_f64()
    );
    let _ = stdout.flush();
    drop(stdout);
    run(listeners, prepared.state, signals).await;
    Ok(())
}

/// Says what `tuned.jsonl` held: the variants taken and each line refused, with why.
fn log_tuned((tuned, load): (TunedVariants, TunedLoad)) -> TunedVariants {
    let path = tuned.path().unwrap_or_default();
    if load.variants > 0 {
        tracing::info!(
            "{} tuned variant(s) found by earlier searches, in {}",
            load.variants,
            path.display()
        );
    }
    for (line, why) in &load.refused {
        tracing::warn!(
            "{} line {line} is refused, not offered as a step: {}",
            path.display(),
            crate::error_chain(why)
        );
    }
    if load.torn_tail {
        tracing::warn!(
            "the last line of {} is incomplete (a save was interrupted): skipped",
            path.display()
        );
    }
    tuned
}

fn log_history(history: &History) {
    let report = history.load_report();
    tracing::info!(
        "{} past results in {}",
        report.results,
        history.path().display()
    );
    if report.rejected > 0 && report.set_aside {
        tracing::warn!(
            "{} line(s) of {} are not results: skipped, and set aside in {}",
            report.rejected,
            history.path().display(),
            history.rejected_path().display()
        );
    } else if report.rejected > 0 {
        tracing::warn!(
            "{} line(s) of {} are not results: skipped (they could not be copied aside)",
            report.rejected,
            history.path().display()
        );
    }
    if report.torn_tail {
        tracing::warn!(
            "the last line of {} is incomplete (a save was interrupted): skipped",
            history.path().display()
        );
    }
    if let Some(problem) = history.saving().problem() {
        tracing::warn!(
            "serving the history read from {}, but saving is off until a save works: {}",
            history.path().display(),
            problem.message
        );
    }
}

/// Serves `state` on `listeners` until `shutdown` resolves (or the state's stop
/// switch is turned on), then stops: runs are killed and reaped, WebSockets say
/// why and close, HTTP connections finish their response, and whatever is still
/// open after a short drain is dropped.
pub async fn run(listeners: Vec<TcpListener>, state: AppState, shutdown: impl Future<Output = ()>) {
    let limits = Arc::clone(&state.connections);
    let connections = Arc::new(Semaphore::new(limits.max_connections));
    let slots = Arc::new(Registry::default());
    let mut http = http1::Builder::new();
    // hyper starts this timer whenever a connection waits for a request head:
    // it bounds a slow header and an idle kept-alive connection alike.
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    let service = TowerToHyperService::new(router(state.clone()));
    let accepting: Vec<_> = listeners
        .into_iter()
        .map(|listener| {
            tokio::spawn(accept_loop(
                listener,
                Accepting {
                    connections: Arc::clone(&connections),
                    slots: Arc::clone(&slots),
                    slow_after: limits.header_timeout,
                    http: http.clone(),
                    service: service.clone(),
                    shutdown: state.shutdown.clone(),
                    peers: Arc::clone(&state.peers),
                },
            ))
        })
        .collect();
    tokio::select! {
        () = shutdown => {}
        () = state.shutdown.wait() => {}
    }
    tracing::info!("shutting down: stopping runs and closing connections");
    state.shutdown.trigger();
    state.scheduler.shutdown(KILL_TIMEOUT).await;
    for task in accepting {
        let _ = task.await;
    }
    // Every connection and socket gives its permit back when it ends.
    let drained = tokio::time::timeout(DRAIN_TIMEOUT, async {
        let _ = connections
            .acquire_many(count(limits.max_connections))
            .await;
        let _ = state
            .websockets
            .acquire_many(count(limits.max_websockets))
            .await;
    })
    .await;
    if drained.is_err() {
        tracing::warn!("connections still open after {DRAIN_TIMEOUT:?}; closing them");
    }
    tracing::info!("stopped");
}

fn count(permits: usize) -> u32 {
    u32::try_from(permits).unwrap_or(u32::MAX)
}

/// The service every connection runs: the routes, as hyper wants them.
type Service = TowerToHyperService<axum::Router>;

/// What an accept loop shares with the others and hands each connection.
struct Accepting {
    /// One permit per open HTTP connection.
    connections: Arc<Semaphore>,
    /// The open HTTP connections, to pick one to drop.
    slots: Arc<Registry>,
    /// A request answered for longer than this is a slow client's.
    slow_after: Duration,
    http: http1::Builder,
    service: Service,
    shutdown: Shutdown,
    /// Which local users are served.
    peers: Arc<PeerPolicy>,
}

/// Accepts connections. When every slot is taken, the connection idle the
/// longest (or, none idle, the slowest) is asked to close and the new one
/// waits for its slot: idle clients cannot lock a new page out. Whatever waits
/// beyond that waits in the kernel's backlog, spending no descriptor.
async fn accept_loop(listener: TcpListener, accepting: Accepting) {
    let Accepting {
        connections,
        slots,
        slow_after,
        http,
        service,
        shutdown,
        peers,
    } = accepting;
    let mut failing = false;
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = shutdown.wait() => return,
        };
        match accepted {
            Ok((stream, peer)) => {
                if failing {
                    tracing::info!("accepting connections again");
                    failing = false;
                }
                let permit = match Arc::clone(&connections).try_acquire_owned() {
                    Ok(permit) => permit,
                    Err(_) => {
                        if !slots.evict_one(Some(slow_after)) {
                            tracing::debug!("every connection is busy: the new one waits");
                        }
                        tokio::select! {
                            permit = Arc::clone(&connections).acquire_owned() => match permit {
                                Ok(permit) => permit,
                                Err(_) => return,
                            },
                            () = shutdown.wait() => return,
                        }
                    }
                };
                let (http, service, shutdown, slots, peers) = (
                    http.clone(),
                    service.clone(),
                    shutdown.clone(),
                    Arc::clone(&slots),
                    Arc::clone(&peers),
                );
                tokio::spawn(async move {
                    let service = match admit(&peers, &stream, peer).await {
                        Admission::Served => service,
                        Admission::Refused { peer_uid, owner } => refused(peer_uid, owner),
                    };
                    serve_connection(stream, http, service, shutdown, &slots).await;
                    drop(permit);
                });
            }
            // That one client gave up: not the listener's fault.
            Err(err)
                if matches!(
                    err.kind(),
                    std::io::ErrorKind::ConnectionAborted | std::io::ErrorKind::ConnectionReset
                ) => {}
            Err(err) => {
                // E.g. EMFILE: retrying at once would spin; log once per episode.
                if !failing {
                    tracing::warn!("accept error: {err}; retrying every {ACCEPT_BACKOFF:?}");
                    failing = true;
                }
                tokio::time::sleep(ACCEPT_BACKOFF).await;
            }
        }
    }
}

/// Whether the user on the other end of `stream` may use the server (the
/// kernel's socket tables are read on a blocking thread).
async fn admit(peers: &Arc<PeerPolicy>, stream: &TcpStream, peer: SocketAddr) -> Admission {
    let Ok(local) = stream.local_addr() else {
        return Admission::Refused {
            peer_uid: None,
            owner: rustix::process::geteuid().as_raw(),
        };
    };
    let policy = Arc::clone(peers);
    let admission = tokio::task::spawn_blocking(move || policy.admit(local, peer))
        .await
        .unwrap_or(Admission::Refused {
            peer_uid: None,
            owner: rustix::process::geteuid().as_raw(),
        });
    if let Admission::Refused { peer_uid, .. } = &admission {
        tracing::warn!(
            "refused a connection from {peer}: {}, not this server's user",
            peer_uid.map_or("a user that cannot be identified".into(), |uid| format!(
                "uid {uid}"
            ))
        );
    }
    admission
}

/// The service a refused connection gets: 403 and the page that says whose
/// server this is, for every path (pages, `/api/*`, the WebSocket upgrade).
fn refused(peer_uid: Option<u32>, owner: u32) -> Service {
    use axum::http::{header, StatusCode};
    use axum::response::IntoResponse;
    let page = crate::http::peer::refusal_page(peer_uid, owner);
    TowerToHyperService::new(axum::Router::new().fallback(move || {
        let page = page.clone();
        async move {
            (
                StatusCode::FORBIDDEN,
                [
                    (header::CONTENT_TYPE, "text/html; charset=utf-8"),
                    (header::CACHE_CONTROL, "no-store"),
                    (header::CONTENT_SECURITY_POLICY, "default-src 'none'"),
                    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
                ],
                page,
            )
                .into_response()
        }
    }))
}

/// One HTTP connection (and its WebSocket upgrade) until it ends, the registry
/// asks it to make room, or the server stops. Then a request being answered is
/// finished; a connection that is only waiting for a request (silent, or
/// half-sent) is dropped at once: hyper would otherwise wait for its header
/// timeout. Its bytes are counted ([`Activity`], handed to the routes as a
/// request extension) so a WebSocket it becomes can see a message in progress.
fn serve_connection(
    stream: TcpStream,
    http: http1::Builder,
    service: Service,
    shutdown: Shutdown,
    slots: &Arc<Registry>,
) -> impl Future<Output = ()> {
    let entry = Arc::new(slots.register());
    let activity = Arc::new(Activity::default());
    let in_flight = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&in_flight);
    let busy = Arc::clone(&entry);
    let seen = Arc::clone(&activity);
    let counted = service_fn(move |mut request: hyper::Request<hyper::body::Incoming>| {
        counter.fetch_add(1, Ordering::SeqCst);
        busy.begin_busy();
        let done = InFlight(Arc::clone(&counter), Arc::clone(&busy));
        request.extensions_mut().insert(Arc::clone(&seen));
        let response = hyper::service::Service::call(&service, request);
        async move {
            let response = response.await;
            drop(done);
            response
        }
    });
    async move {
        let connection = http
            .serve_connection(TokioIo::new(Metered::new(stream, activity)), counted)
            .with_upgrades();
        tokio::pin!(connection);
        tokio::select! {
            result = connection.as_mut() => {
                if let Err(err) = result {
                    // Timeouts and clients that hang up: routine, not worth a warning.
                    tracing::debug!("connection ended: {err}");
                }
            }
            () = entry.slot().evicted() => {
                tracing::debug!("closed a stale connection to make room for a new one");
            }
            () = shutdown.wait() => {
                connection.as_mut().graceful_shutdown();
                let grace = if in_flight.load(Ordering::SeqCst) > 0 {
                    DRAIN_TIMEOUT
                } else {
                    // Only the end of a response already handed over may still be going out.
                    IDLE_GRACE
                };
                let _ = tokio::time::timeout(grace, connection).await;
            }
        }
    }
}

/// Counts a request as answered when dropped, even if its future is cancelled.
struct InFlight(Arc<AtomicUsize>, Arc<crate::connections::Registration>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
        self.1.end_busy();
    }
}

/// Hands the allocator's free memory back to the system: building the book
/// allocates far more than serving it needs, and glibc keeps freed heap pages.
fn release_build_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns unused heap memory to the kernel.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Listens for SIGINT, SIGTERM and SIGHUP from now on (not from the first
/// poll: a signal sent right after the serving line must not be missed), and
/// returns a future that resolves on the first of them.
fn stop_signals() -> impl Future<Output = ()> {
    use tokio::signal::unix::{signal, SignalKind};
    // A closed terminal (SIGHUP) stops the server as cleanly as Ctrl-C or SIGTERM.
    let kinds = [
        SignalKind::interrupt(),
        SignalKind::terminate(),
        SignalKind::hangup(),
    ];
    let mut streams = Vec::new();
    for kind in kinds {
        match signal(kind) {
            Ok(stream) => streams.push(stream),
            Err(err) => tracing::error!("cannot listen for signal {kind:?}: {err}"),
        }
    }
    async move {
        let waits = streams.iter_mut().map(|stream| Box::pin(stream.recv()));
        if waits.len() == 0 {
            return std::future::pending().await;
        }
        futures_util::future::select_all(waits).await;
    }
}
