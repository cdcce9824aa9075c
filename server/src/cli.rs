//! The command line: `pipebook [serve]`, `pipebook build`, and the hidden
//! `pipebook end write|read|ipc-end` that runs use to start their ends.

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use pipebench::entry::EndCommand;

use crate::config::Config;
use crate::state::ConnectionLimits;

/// Serve "How fast can a Linux pipe go?" and run its steps on this machine.
#[derive(Debug, Parser)]
#[command(name = "pipebook", version, about, long_about = None)]
pub struct Cli {
    /// What to do (default: serve).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Where and what to serve.
    #[command(flatten)]
    pub options: Options,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build the book and serve it with the runner (the default).
    Serve,
    /// Build the book only, then exit.
    Build,
    /// For translators: extract the English into `po/messages.pot` and say how much
    /// of it each edition (`po/zh-CN.po`) translates.
    ///
    /// Run it in a checkout (or pass --book-root). Then bring an edition up to date
    /// with gettext's `msgmerge --update po/zh-CN.po po/messages.pot`: changed
    /// paragraphs become "fuzzy" (shown as older than the English) until translated
    /// again. Exit status: 0 when every edition is complete, 3 when one is not.
    Translations,
    /// Merge students' exported lab reports into one class table and page.
    ///
    /// Each file is validated first (a regular file of at most 8 MiB: links,
    /// FIFOs and devices are refused; JSON, schema version, digest, names and
    /// ids of 1 to 64 characters without control characters, figures that can
    /// be, checks that follow from the measurements); a file that fails is named
    /// with the reason and left out. CSV cells a spreadsheet would evaluate
    /// (starting with = + - @, tab or CR, plain negative numbers excepted) are
    /// prefixed with '. At most 500 files at once. Exit status: 0 when every
    /// file was merged, 3 when some were left out, 1 on an error (e.g. OUT not
    /// writable, or too many files).
    Report(ReportArgs),
    /// One end of a run (internal: the server starts itself as writer and reader,
    /// or as an IPC lab run's producer and consumer).
    #[command(hide = true)]
    End {
        /// `write` or `read`, with their options.
        #[command(subcommand)]
        end: EndCommand,
    },
}

/// `pipebook report FILES... [--html OUT] [--csv OUT]`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The students' `pipebook-lab-report.json` files (regular files, at most 8 MiB each).
    #[arg(required = true, value_name = "FILES")]
    pub files: Vec<PathBuf>,
    /// Write the class page (HTML) here.
    #[arg(long, value_name = "OUT")]
    pub html: Option<PathBuf>,
    /// Write the class table (CSV) here; without --html or --csv it goes to stdout.
    #[arg(long, value_name = "OUT")]
    pub csv: Option<PathBuf>,
}

/// Options of `serve` and `build`.
#[derive(Debug, Args)]
pub struct Options {
    /// Address to listen on. Anything but loopback lets others run programs here.
    #[arg(long, global = true, default_value = "127.0.0.1", value_name = "ADDR")]
    pub(crate) bind: IpAddr,
    /// Port to listen on; 0 picks a free one.
    #[arg(long, global = true, default_value_t = 8000)]
    pub(crate) port: u16,
    /// Build the book from the sources in this directory (the one holding
    /// book.toml), for authors editing chapters [default: the book carried in this
    /// program].
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) book_root: Option<PathBuf>,
    /// Rebuild the book whenever a file under --book-root changes, as `mdbook
    /// serve` does; reload the page to see it.
    #[arg(long, global = true, requires = "book_root")]
    pub(crate) watch: bool,
    /// Build the book here instead of book.toml's build-dir.
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) build_dir: Option<PathBuf>,
    /// Where the results history is kept [default: BOOK_ROOT/target/pipebook-state,
    /// without --book-root this workspace's, else the current directory's].
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) state_dir: Option<PathBuf>,
    /// Also answer to this host name (e.g. a classroom server's name); repeatable.
    #[arg(long = "allow-host", global = true, value_name = "NAME")]
    pub(crate) allow_hosts: Vec<String>,
    /// Serve pages, the API and the runner to every local user, not only to the
    /// user running this server (a classroom server behind a proxy). Off by
    /// default: the pages carry the token that runs programs as this user.
    #[arg(long, global = true)]
    pub(crate) allow_other_users: bool,
    /// Seconds a connection may take to send a request head (also the idle
    /// keep-alive timeout). Hidden: for tests that must not wait 10 s.
    #[arg(long, global = true, hide = true, value_name = "SECS", value_parser = parse_seconds)]
    pub(crate) header_timeout: Option<Duration>,
    /// Most HTTP connections open at once (hidden: for tests).
    #[arg(long, global = true, hide = true, value_name = "N")]
    pub(crate) max_connections: Option<usize>,
    /// Most WebSockets open at once (hidden: for tests).
    #[arg(long, global = true, hide = true, value_name = "N")]
    pub(crate) max_websockets: Option<usize>,
    /// Seconds one WebSocket message may take to arrive once begun (hidden: for tests).
    #[arg(long, global = true, hide = true, value_name = "SECS", value_parser = parse_seconds)]
    pub(crate) ws_message_timeout: Option<Duration>,
    /// Seconds a WebSocket with no run may stay silent (hidden: for tests).
    #[arg(long, global = true, hide = true, value_name = "SECS", value_parser = parse_seconds)]
    pub(crate) ws_idle_timeout: Option<Duration>,
}

/// A positive number of seconds, fractions allowed.
fn parse_seconds(text: &str) -> Result<Duration, String> {
    match text.parse::<f64>() {
        Ok(secs) if secs > 0.0 && secs <= 3600.0 => Ok(Duration::from_secs_f64(secs)),
        _ => Err(format!(
            "`{text}` is not a number of seconds between 0 and 3600"
        )),
    }
}

/// The workspace this binary was built from, if it still has its book.toml;
/// else the current directory. Without --book-root, the results history and
/// `pipebook build`'s output go under its `target/`, as they always have.
pub fn default_home() -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent();
    match workspace {
        Some(root) if root.join("book.toml").is_file() => root.to_path_buf(),
        _ => std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
    }
}

impl Options {
    /// The server configuration these options describe.
    pub fn config(&self) -> Config {
        let home = self.book_root.clone().unwrap_or_else(default_home);
        let state_dir = self
            .state_dir
            .clone()
            .unwrap_or_else(|| home.join("target").join("pipebook-state"));
        Config {
            bind: self.bind,
            port: self.port,
            book_root: self.book_root.clone(),
            rebuild: self.watch,
            build_dir: self.build_dir.clone(),
            state_dir,
            allow_hosts: self.allow_hosts.clone(),
            allow_other_users: self.allow_other_users,
            connections: {
                let defaults = ConnectionLimits::default();
                ConnectionLimits {
                    header_timeout: self.header_timeout.unwrap_or(defaults.header_timeout),
                    max_connections: self
                        .max_connections
                        .unwrap_or(defaults.max_connections)
                        .max(1),
                    max_websockets: self
                        .max_websockets
                        .unwrap_or(defaults.max_websockets)
                        .max(1),
                    ws_message_timeout: self
                        .ws_message_timeout
                        .unwrap_or(defaults.ws_message_timeout),
                    ws_idle_timeout: self.ws_idle_timeout.unwrap_or(defaults.ws_idle_timeout),
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn defaults_serve_on_loopback_8000() {
        let cli = Cli::parse_from(["pipebook"]);
        assert!(cli.command.is_none());
        let config = cli.options.config();
        assert_eq!(
            (config.bind.to_string(), config.port),
            ("127.0.0.1".into(), 8000)
        );
        assert!(config.state_dir.ends_with("target/pipebook-state"));
        // The book carried in the binary, unless an author points at sources.
        assert_eq!(config.book_root, None);
        assert!(!config.rebuild);
    }

    #[test]
    fn watch_needs_a_book_root() {
        assert!(Cli::try_parse_from(["pipebook", "--watch"]).is_err());
        let cli = Cli::parse_from(["pipebook", "--book-root", "/b", "--watch"]);
        let config = cli.options.config();
        assert!(config.rebuild);
        assert_eq!(config.book_root.as_deref(), Some(Path::new("/b")));
        assert_eq!(config.state_dir, Path::new("/b/target/pipebook-state"));
    }

    #[test]
    fn report_help_states_the_size_cap() {
        let mut command = Cli::command();
        let report = command.find_subcommand_mut("report").unwrap();
        let help = report.render_long_help().to_string();
        let cap = format!("{} MiB", crate::labs::merge::MAX_REPORT_BYTES >> 20);
        assert!(help.contains(&cap), "{help}");
    }

    #[test]
    fn report_takes_files_and_outputs() {
        let cli = Cli::parse_from([
            "pipebook",
            "report",
            "a.json",
            "b.json",
            "--html",
            "class.html",
        ]);
        let Some(Command::Report(args)) = cli.command else {
            panic!("not a report command")
        };
        assert_eq!(args.files.len(), 2);
        assert_eq!(args.html.as_deref(), Some(Path::new("class.html")));
        assert!(Cli::try_parse_from(["pipebook", "report"]).is_err());
    }

    #[test]
    fn ipc_ends_are_end_subcommands_too() {
        let cli = Cli::parse_from(["pipebook", "end", "ipc-end", "{}"]);
        assert!(matches!(
            cli.command,
            Some(Command::End {
                end: EndCommand::IpcEnd { .. }
            })
        ));
    }

    #[test]
    fn end_subcommand_parses_end_options() {
        let cli = Cli::parse_from(["pipebook", "end", "write", "--vmsplice", "--bytes", "1MiB"]);
        assert!(matches!(
            cli.command,
            Some(Command::End {
                end: EndCommand::Write(_)
            })
        ));
    }
}
