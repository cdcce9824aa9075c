//! Every child's entry point: the two ends of a pipe step (`write`, `read`), an
//! end of an IPC mechanism (`ipc-end`), an end of a latency run (`latency-end`),
//! the page inspector (`inspect-pages`) and a writer or reader of a shared pipe
//! (`shared-end`), shared by `pipebench` and by any other binary (the `pipebook`
//! server) that starts itself as a child. Each answers with one outcome line on
//! its report fd ([`crate::process::launch`]).

use std::io::Write;
use std::os::fd::AsFd;
use std::process::ExitCode;

use clap::Subcommand;

use crate::ends::control::ControlRegion;
use crate::ends::error::{EndError, EndFailure};
use crate::ends::options::{CommonOptions, ReaderOptions, WriterOptions};
use crate::ends::report::{EndOutcome, EndReport};
use crate::ends::{reader, writer};
use crate::memory::inspect::InspectOutcome;
use crate::process::launch;
use crate::size::gib_per_s;
use crate::size::ByteSize;

/// The two ends as subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum EndCommand {
    /// The writing end: writes (or vmsplices) into stdout, which must be a pipe.
    Write(WriterOptions),
    /// The reading end: reads (or splices) stdin to the end and reports throughput.
    Read(ReaderOptions),
    /// One end of an IPC lab run (started by the lab's harness, [`crate::ipc::run`]).
    #[command(hide = true)]
    IpcEnd {
        /// The end's specification, as JSON.
        spec: String,
    },
    /// One end of a latency run (started by [`crate::latency::run`]).
    #[command(hide = true)]
    LatencyEnd {
        /// The end's specification, as JSON.
        spec: String,
    },
    /// The page inspector: allocates the writer's buffers for these options and
    /// prints their pages as JSON (internal: started by the runner for the page).
    #[command(hide = true)]
    InspectPages(WriterOptions),
    /// One writer or reader of a shared pipe (started by `pipebench shared-pipe`).
    #[command(hide = true)]
    SharedEnd {
        /// The end's specification, as JSON.
        spec: String,
    },
}

impl EndCommand {
    /// Runs the end and turns the outcome into an exit code, printing errors.
    pub fn main(&self) -> ExitCode {
        let (role, common, outcome) = match self {
            EndCommand::InspectPages(options) => return inspect_main(options),
            EndCommand::Write(options) => ("write", &options.common, run_writer(options)),
            EndCommand::Read(options) => ("read", &options.common, run_reader(options)),
            // The lab's ends report on their own fds, in their own format.
            EndCommand::IpcEnd { spec } => return crate::ipc::end_main(spec),
            EndCommand::LatencyEnd { spec } => return crate::latency::end::end_main(spec),
            EndCommand::SharedEnd { spec } => return crate::ends::shared_end::end_main(spec),
        };
        match outcome {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                // The harness reads the typed failure; a person reads stderr.
                let failure = EndOutcome::Failed {
                    error: EndFailure::from(&err),
                };
                let _ = send_outcome(common, &failure);
                eprintln!("pipebench {role}: error: {err}");
                ExitCode::from(err.exit_code())
            }
        }
    }
}

/// `inspect-pages`: the outcome on the report fd when the harness gave one (the
/// report, or why there is none), else the report on stdout, or the reason on
/// stderr and exit 1.
fn inspect_main(options: &WriterOptions) -> ExitCode {
    let outcome = crate::memory::inspect::inspect(options);
    if let Some(fd) = options.common.report_fd {
        let message = outcome.as_ref().err().map(ToString::to_string);
        let sent = launch::send_outcome(fd, &InspectOutcome::from(outcome));
        return match (sent, message) {
            (Ok(()), None) => ExitCode::SUCCESS,
            (_, message) => {
                eprintln!(
                    "pipebench inspect-pages: error: {}",
                    message.unwrap_or_else(|| "cannot write the report".into())
                );
                ExitCode::FAILURE
            }
        };
    }
    match outcome {
        Ok(report) => {
            let line = serde_json::to_string(&report).expect("reports serialise");
            // A reader that went away (a closed pipe) is not worth a panic.
            match writeln!(std::io::stdout().lock(), "{line}") {
                Ok(()) => ExitCode::SUCCESS,
                Err(_) => ExitCode::FAILURE,
            }
        }
        Err(err) => {
            eprintln!("pipebench inspect-pages: error: {err}");
            ExitCode::FAILURE
        }
    }
}

fn prepare(common: &CommonOptions) -> Result<ControlRegion, EndError> {
    if let Some(cpu) = common.cpu {
        crate::process::cpu::pin_to(cpu).map_err(|e| EndError::BadCpu {
            cpu: e.cpu,
            allowed: e.allowed,
        })?;
    }
    let control = match common.control_fd {
        Some(fd) => ControlRegion::attach(fd),
        None => ControlRegion::local(),
    };
    control.map_err(|e| EndError::Invalid(e.to_string()))
}

fn send_report(common: &CommonOptions, report: &EndReport) -> Result<(), EndError> {
    send_outcome(
        common,
        &EndOutcome::Done {
            report: Box::new(report.clone()),
        },
    )
}

/// Writes the one outcome line on the report fd, if the harness gave one.
fn send_outcome(common: &CommonOptions, outcome: &EndOutcome) -> Result<(), EndError> {
    let Some(fd) = common.report_fd else {
        return Ok(());
    };
    launch::send_outcome(fd, outcome).map_err(|e| EndError::Sys {
        call: "write (report)",
        source: e,
    })
}

fn run_writer(options: &WriterOptions) -> Result<(), EndError> {
    let control = prepare(&options.common)?;
    let stdout = std::io::stdout();
    let report = writer::run(options, stdout.as_fd(), control.shared())?;
    send_report(&options.common, &report)
}

fn run_reader(options: &ReaderOptions) -> Result<(), EndError> {
    let control = prepare(&options.common)?;
    let stdin = std::io::stdin();
    let report = reader::run(options, stdin.as_fd(), control.shared())?;
    send_report(&options.common, &report)?;
    if options.common.report_fd.is_none() {
        if options.json {
            println!(
                "{}",
                serde_json::to_string_pretty(&report).expect("reports serialise")
            );
        } else {
            println!("{}", human_summary(&report));
        }
    }
    Ok(())
}

/// One line for a person: how much, how fast, and what it cost the reader.
pub(crate) fn human_summary(report: &EndReport) -> String {
    let mut line = format!(
        "{} in {:.2} s: {:.2} GiB/s (reader: {} calls, {} minor faults, {} voluntary / {} involuntary context switches)",
        ByteSize(report.bytes),
        report.elapsed_ms / 1000.0,
        gib_per_s(report.bytes, report.elapsed_ms),
        report.iterations,
        report.usage.minor_faults,
        report.usage.voluntary_ctx_switches,
        report.usage.involuntary_ctx_switches,
    );
    if let Some(bad) = report.corrupted_bytes {
        line.push_str(&format!(", {bad} corrupted bytes"));
    }
    line
}
