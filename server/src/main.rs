//! `pipebook`: builds the book and serves it with a live runner for its steps.

use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use pipebook::cli::{Cli, Command, ReportArgs};
use pipebook::labs::merge::{write_output, Class};
use pipebook::server;
use tracing_subscriber::EnvFilter;

/// mdBook logs every build step at info; keep its warnings only.
const DEFAULT_LOG: &str =
    "info,mdbook_driver=warn,mdbook_html=warn,mdbook_core=warn,handlebars=warn";

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The ends must start fast and print nothing but their own errors.
    if let Some(Command::End { end }) = &cli.command {
        return end.main();
    }
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_LOG)),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    if let Some(Command::Report(args)) = &cli.command {
        return match report(args) {
            Ok(code) => code,
            Err(err) => {
                eprintln!("pipebook report: error: {err:#}");
                ExitCode::FAILURE
            }
        };
    }
    if let Some(Command::Translations) = &cli.command {
        return match translations(&cli.options.config()) {
            Ok(code) => code,
            Err(err) => {
                eprintln!("pipebook translations: error: {err:#}");
                ExitCode::FAILURE
            }
        };
    }
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("pipebook: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// Exit status of `pipebook report` when some files were left out.
const SOME_SKIPPED: u8 = 3;

/// `pipebook report`: merges, writes, and says which files were left out and why.
fn report(args: &ReportArgs) -> anyhow::Result<ExitCode> {
    let most = pipebook::labs::merge::MAX_REPORT_FILES;
    if args.files.len() > most {
        anyhow::bail!(
            "{} files given, but at most {most} are merged at once (each report is held \
             until the table is written): merge the class in parts of {most} or fewer",
            args.files.len()
        );
    }
    let class = Class::load(&args.files);
    // Escaped: a report's content and a file's name can both hold escape sequences.
    for line in class.skipped_lines() {
        eprintln!("pipebook report: {line}");
    }
    // Written beside and renamed over: a link planted at OUT is not followed.
    if let Some(out) = &args.html {
        write_output(out, &class.html())
            .with_context(|| format!("cannot write {}", out.display()))?;
    }
    if let Some(out) = &args.csv {
        write_output(out, &class.csv())
            .with_context(|| format!("cannot write {}", out.display()))?;
    }
    if args.html.is_none() && args.csv.is_none() {
        print!("{}", class.csv());
    }
    eprintln!(
        "pipebook report: merged {} report(s), skipped {}",
        class.students.len(),
        class.skipped.len()
    );
    Ok(if class.skipped.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(SOME_SKIPPED)
    })
}

/// `pipebook translations`: the template from the English, and each edition's coverage.
fn translations(config: &pipebook::config::Config) -> anyhow::Result<ExitCode> {
    let root = match &config.book_root {
        Some(root) => root.clone(),
        None => std::env::current_dir()?,
    };
    if !root.join("book.toml").is_file() {
        anyhow::bail!(
            "{} has no book.toml: run this in a checkout of pipebook, or pass --book-root",
            root.display()
        );
    }
    let editions = pipebook::book::i18n::update_template(&root)?;
    println!("pipebook: wrote {}", root.join("po/messages.pot").display());
    let mut complete = true;
    for (edition, coverage) in &editions {
        complete &= coverage.is_complete();
        println!(
            "{}: {} translated, {} older than the English (fuzzy), {} not translated, {} no longer used",
            edition.tag,
            coverage.translated,
            coverage.stale.len(),
            coverage.untranslated.len(),
            coverage.obsolete.len()
        );
    }
    if !complete {
        println!(
            "bring them up to date: msgmerge --update po/TAG.po po/messages.pot, then translate what is empty or fuzzy"
        );
    }
    Ok(if complete {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(SOME_SKIPPED)
    })
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let config = cli.options.config();
    match cli.command {
        Some(Command::Build) => {
            let mut config = config;
            // The book carried in the binary is unpacked into a temporary folder:
            // its static build must land somewhere that stays.
            if config.book_root.is_none() && config.build_dir.is_none() {
                config.build_dir = Some(pipebook::cli::default_home().join("target").join("book"));
            }
            let built = pipebook::config::build_book(&config)?;
            println!(
                "pipebook: built the book in {:.1} s into {}",
                built.elapsed.as_secs_f64(),
                built.dir.display()
            );
            Ok(())
        }
        None | Some(Command::Serve) => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .context("cannot start the async runtime")?
            .block_on(server::serve(config))
            .map_err(Into::into),
        Some(Command::End { .. } | Command::Report(_) | Command::Translations) => {
            unreachable!("handled before logging starts")
        }
    }
}
