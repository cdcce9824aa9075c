//! Start-up, serving and shutdown.

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use pipebench::plan::Limits;
use pipebench::runner::EndProgram;
use pipebench::system::SystemInfo;
use tokio::net::TcpListener;
use tokio::sync::{watch, Notify};

use crate::app::{router, AppState};
use crate::book::{self, BookError, BuiltBook};
use crate::history::{self, History, HistoryError};
use crate::scheduler::Scheduler;
use crate::security::{HostPolicy, Token};
use crate::site::{Site, SiteError};

/// How many runs may wait behind the running one.
pub const MAX_WAITING: usize = 8;

/// How long shutdown waits for a running run's children to be killed and reaped.
const KILL_TIMEOUT: Duration = Duration::from_secs(2);

/// How long shutdown waits for open connections before exiting anyway.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(3);

/// What the server needs to know.
#[derive(Debug, Clone)]
pub struct Config {
    /// Address to listen on.
    pub bind: IpAddr,
    /// Port; 0 picks a free one.
    pub port: u16,
    /// Directory holding book.toml.
    pub book_root: PathBuf,
    /// Where to build the book, instead of book.toml's build-dir.
    pub build_dir: Option<PathBuf>,
    /// Where the results history lives.
    pub state_dir: PathBuf,
    /// More host names to answer to (e.g. a classroom server's name).
    pub allow_hosts: Vec<String>,
}

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
    #[error("cannot listen on {addr}: {source}{hint}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The I/O error.
        source: std::io::Error,
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
    #[error("cannot open the results history: {0}")]
    History(#[from] HistoryError),
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

/// Builds the book (blocking).
pub fn build_book(config: &Config) -> Result<BuiltBook, BookError> {
    book::build(&config.book_root, config.build_dir.as_deref())
}

async fn bind(config: &Config) -> Result<TcpListener, ServeError> {
    let addr = SocketAddr::new(config.bind, config.port);
    TcpListener::bind(addr)
        .await
        .map_err(|source| match source.kind() {
            std::io::ErrorKind::AddrInUse => ServeError::PortInUse { addr },
            std::io::ErrorKind::PermissionDenied => ServeError::Bind {
                addr,
                source,
                hint: "; ports below 1024 need privileges: use e.g. --port 8000",
            },
            std::io::ErrorKind::AddrNotAvailable => ServeError::Bind {
                addr,
                source,
                hint: "; --bind must be an address of this machine, e.g. 127.0.0.1",
            },
            _ => ServeError::Bind {
                addr,
                source,
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

/// Builds the book, serves it until SIGINT or SIGTERM, and stops cleanly.
pub async fn serve(config: Config) -> Result<(), ServeError> {
    // Bind first: a busy port should fail at once, not after building the book.
    let listener = bind(&config).await?;
    let addr = listener.local_addr().map_err(ServeError::Io)?;
    if !config.bind.is_loopback() {
        tracing::warn!(
            "listening on {addr}, which is not a loopback address: anyone who can reach \
             it can run the benchmark programs on this machine"
        );
    }
    let system = tokio::task::spawn_blocking(|| {
        serde_json::to_vec(&SystemInfo::probe()).expect("system info serialises")
    });
    let build_config = config.clone();
    let built = blocking(move || build_book(&build_config)).await??;
    let token = Arc::new(Token::generate());
    let (site_dir, site_token) = (built.dir.clone(), Arc::clone(&token));
    let site = blocking(move || Site::load(&site_dir, &site_token)).await??;
    tracing::info!(
        "book built in {:.1} s: {} pages in {}",
        built.elapsed.as_secs_f64(),
        site.page_count(),
        built.dir.display()
    );
    let history = Arc::new(History::open(&config.state_dir, history::DEFAULT_LIMIT)?);
    tracing::info!(
        "{} past results in {}",
        history.len(),
        history.path().display()
    );
    let program = EndProgram::current_exe(&["end"]).map_err(ServeError::OwnExe)?;
    let scheduler = Scheduler::new(program, Arc::clone(&history), MAX_WAITING);
    let (stop_sender, stopping) = watch::channel(false);
    let system_json = system.await.map_err(|e| ServeError::Task(e.to_string()))?;
    let state = AppState {
        site: Arc::new(site),
        token,
        hosts: Arc::new(HostPolicy::new(
            config.bind,
            addr.port(),
            &config.allow_hosts,
        )),
        scheduler: scheduler.clone(),
        limits: Arc::new(Limits::default()),
        steps_json: Bytes::from(
            serde_json::to_vec(&pipebench::plan::published_catalog(&Limits::default()))
                .expect("catalog serialises"),
        ),
        system_json: Bytes::from(system_json),
        history,
        stopping,
    };
    release_build_memory();
    let shown = match addr.ip() {
        ip if ip.is_unspecified() => SocketAddr::new(IpAddr::from([127, 0, 0, 1]), addr.port()),
        _ => addr,
    };
    // The one line on stdout: tests and scripts read the URL from it.
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(
        stdout,
        "pipebook: serving http://{shown}/ (book built in {:.1} s)",
        built.elapsed.as_secs_f64()
    );
    let _ = stdout.flush();
    drop(stdout);

    let signalled = Arc::new(Notify::new());
    let on_signal = Arc::clone(&signalled);
    let shutdown = async move {
        wait_for_signal().await;
        tracing::info!("shutting down: stopping runs and closing connections");
        on_signal.notify_one();
        scheduler.shutdown(KILL_TIMEOUT).await;
        let _ = stop_sender.send(true);
    };
    let server = axum::serve(listener, router(state)).with_graceful_shutdown(shutdown);
    tokio::select! {
        served = server => served.map_err(ServeError::Io)?,
        () = async {
            signalled.notified().await;
            tokio::time::sleep(KILL_TIMEOUT + DRAIN_TIMEOUT).await;
        } => tracing::warn!("connections still open after {DRAIN_TIMEOUT:?}; exiting anyway"),
    }
    tracing::info!("stopped");
    Ok(())
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

async fn wait_for_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = match signal(SignalKind::terminate()) {
        Ok(term) => term,
        Err(err) => {
            tracing::error!("cannot listen for SIGTERM: {err}");
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}
