//! The `pipebench` command line: the two ends, and the harness around them.

mod cli;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use pipebench::entry::EndCommand;

/// Measure how fast a Linux pipe can go, step by step.
#[derive(Debug, Parser)]
#[command(name = "pipebench", version, about, long_about = None)]
struct Pipebench {
    #[command(subcommand)]
    command: PipebenchCommand,
}

#[derive(Debug, Subcommand)]
enum PipebenchCommand {
    #[command(flatten)]
    End(EndCommand),
    /// Run one step: both ends, pinned to two CPUs, with a progress bar.
    Run(cli::RunArgs),
    /// Run the whole catalog several times in shuffled order and print a table.
    All(cli::AllArgs),
    /// List the steps.
    List(cli::ListArgs),
    /// Describe this machine: kernel, CPU, THP, pipe limits, perf, pagemap.
    System(cli::SystemArgs),
    /// What one wakeup costs: a one-byte ping-pong between two pinned processes,
    /// blocking and busy-polling.
    Wakeup(cli::WakeupArgs),
    /// Does vmsplice map or copy on this kernel, and what early buffer reuse does.
    Reuse(cli::ReuseArgs),
    /// Show the pages behind a writer buffer: page-table indices, frames, huge pages.
    Pages(cli::PagesArgs),
    /// Run one step over several values of one parameter: the curve of a knob.
    Sweep(cli::SweepArgs),
    /// The zero-copy IPC lab: move bytes between two processes every way Linux offers.
    Ipc(cli::IpcArgs),
    /// Two configurations head to head in interleaved pairs: a ratio with its
    /// interval and a verdict.
    Compare(cli::CompareArgs),
    /// How long one message takes: round trips between two pinned processes,
    /// mechanism by mechanism, blocking and busy-polling, as percentiles.
    Latency(cli::LatencyArgs),
    /// A real program (yes, cat, dd, pv, tee, head) as the pipe's writer or reader,
    /// pipebench's end on the other side: its speed and what it does per call.
    Tool(cli::ToolArgs),
    /// Many writers and readers on one pipe: throughput, and whether every
    /// message of at most PIPE_BUF (4096 bytes) arrives whole.
    SharedPipe(cli::SharedPipeArgs),
    /// Search bytes per call × pipe capacity for one step, against the step's own
    /// configuration in the same session: the best, its gain, the argv.
    Tune(cli::TuneArgs),
}

fn main() -> ExitCode {
    let cli = match Pipebench::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            // clap uses 2 for usage errors and 0 for --help/--version.
            return ExitCode::from(err.exit_code() as u8);
        }
    };
    let outcome = match cli.command {
        PipebenchCommand::End(end) => return end.main(),
        PipebenchCommand::Run(args) => cli::run(args),
        PipebenchCommand::All(args) => cli::all(args),
        PipebenchCommand::List(args) => cli::list(args),
        PipebenchCommand::System(args) => cli::system(args),
        PipebenchCommand::Wakeup(args) => cli::wakeup(args),
        PipebenchCommand::Reuse(args) => cli::reuse(args),
        PipebenchCommand::Pages(args) => cli::pages(args),
        PipebenchCommand::Sweep(args) => cli::sweep(args),
        PipebenchCommand::Ipc(args) => cli::ipc(args),
        PipebenchCommand::Compare(args) => cli::compare(args),
        PipebenchCommand::Latency(args) => cli::latency(args),
        PipebenchCommand::Tool(args) => cli::tool(args),
        PipebenchCommand::SharedPipe(args) => cli::shared_pipe(args),
        PipebenchCommand::Tune(args) => cli::tune(args),
    };
    match outcome {
        Ok(code) => code,
        Err(err) => {
            eprintln!("pipebench: error: {err:#}");
            ExitCode::from(cli::exit_code_for(&err))
        }
    }
}
