//! The `pipebench` command line: the two ends, and the harness around them.

mod commands;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use pipebench::end::EndCommand;

/// Measure how fast a Linux pipe can go, step by step.
#[derive(Debug, Parser)]
#[command(name = "pipebench", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    #[command(flatten)]
    End(EndCommand),
    /// Run one step: both ends, pinned to two CPUs, with a progress bar.
    Run(commands::RunArgs),
    /// Run the whole catalog several times in shuffled order and print a table.
    All(commands::AllArgs),
    /// List the steps.
    List(commands::ListArgs),
    /// Describe this machine: kernel, CPU, THP, pipe limits, perf, pagemap.
    System(commands::SystemArgs),
    /// What one wakeup costs: a one-byte ping-pong between two pinned processes,
    /// blocking and busy-polling.
    Wakeup(commands::WakeupArgs),
    /// Does vmsplice map or copy on this kernel, and what early buffer reuse does.
    Reuse(commands::ReuseArgs),
    /// Show the pages behind a writer buffer: page-table indices, frames, huge pages.
    Pages(commands::PagesArgs),
    /// Run one step over several values of one parameter: the curve of a knob.
    Sweep(commands::SweepArgs),
    /// The zero-copy IPC lab: move bytes between two processes every way Linux offers.
    Ipc(commands::IpcArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            // clap uses 2 for usage errors and 0 for --help/--version.
            return ExitCode::from(err.exit_code() as u8);
        }
    };
    let outcome = match cli.command {
        Command::End(end) => return end.main(),
        Command::Run(args) => commands::run(args),
        Command::All(args) => commands::all(args),
        Command::List(args) => commands::list(args),
        Command::System(args) => commands::system(args),
        Command::Wakeup(args) => commands::wakeup(args),
        Command::Reuse(args) => commands::reuse(args),
        Command::Pages(args) => commands::pages(args),
        Command::Sweep(args) => commands::sweep(args),
        Command::Ipc(args) => commands::ipc(args),
    };
    match outcome {
        Ok(code) => code,
        Err(err) => {
            eprintln!("pipebench: error: {err:#}");
            ExitCode::from(commands::exit_code_for(&err))
        }
    }
}
