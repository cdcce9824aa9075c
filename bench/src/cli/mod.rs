//! The command line of the `pipebench` binary, one file per subcommand: [`run`],
//! [`all`], [`sweep`], [`ipc`], [`latency`], [`pages`], [`compare`], and the machine's commands in
//! [`machine`]. This file holds what they share: the exit codes, the flags that
//! shape a run and a session, and the terminal's observer of a job.
//!
//! May use: every layer of the library (it is the top: nothing imports it).

mod all;
mod compare;
mod ipc;
mod latency;
mod machine;
mod pages;
mod params;
mod report;
mod run;
mod shared_pipe;
mod sweep;
mod tool;
mod tune;

pub use all::{all, AllArgs};
pub use compare::{compare, CompareArgs};
pub use ipc::{ipc, IpcArgs};
pub use latency::{latency, LatencyArgs};
pub use machine::{list, reuse, system, wakeup, ListArgs, ReuseArgs, SystemArgs, WakeupArgs};
pub use pages::{pages, PagesArgs};
pub(crate) use params::{RunFlags, Shape, SweepShape};
pub use run::{run, RunArgs};
pub use shared_pipe::{shared_pipe, SharedPipeArgs};
pub use sweep::{sweep, SweepArgs};
pub use tool::{tool, ToolArgs};
pub use tune::{tune, TuneArgs};

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rand::SeedableRng;

use pipebench::ends::error::EndError;
use pipebench::engine::event::{Event, Finished, ProfileOutcome};
use pipebench::engine::job::{Job, JobContext, Observer, PipeJob, Stop};
use pipebench::engine::result::RunResult;
use pipebench::process::launch::EndProgram;
use pipebench::steps::plan::{PlanError, RunPlan};

/// A command line that cannot be used as given (exit code 2, like clap's own).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// The exit code for an error that reached `main`: 2 for unusable input.
pub fn exit_code_for(err: &anyhow::Error) -> u8 {
    if err.downcast_ref::<PlanError>().is_some() || err.downcast_ref::<UsageError>().is_some() {
        return 2;
    }
    if let Some(ipc) = err.downcast_ref::<pipebench::ipc::IpcError>() {
        return if ipc.is_input_error() { 2 } else { 1 };
    }
    if let Some(latency) = err.downcast_ref::<pipebench::latency::LatencyError>() {
        return if latency.is_input_error() { 2 } else { 1 };
    }
    if tool::is_input_error(err) {
        return 2;
    }
    if let Some(end) = err.downcast_ref::<EndError>() {
        return end.exit_code();
    }
    1
}

/// `--json`, for the commands that print one thing.
#[derive(Debug, Clone, Copy, Args)]
pub struct JsonFlag {
    /// Print it as JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// How a session of repeated runs (`all`, `sweep`, `ipc`) is ordered and reported:
/// each flag defined once for the three.
#[derive(Debug, Clone, Args)]
pub struct SessionArgs {
    /// Seed for the shuffled order, to repeat a session exactly.
    #[arg(long)]
    seed: Option<u64>,
    /// Print the summary and every run as JSON.
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// Print the summary as CSV.
    #[arg(long)]
    csv: bool,
    /// Also draw the summary's chart as an SVG file.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
}

impl SessionArgs {
    /// The shuffling generator: seeded when asked, else from the OS.
    fn rng(&self) -> rand::rngs::StdRng {
        match self.seed {
            Some(seed) => rand::rngs::StdRng::seed_from_u64(seed),
            None => rand::rngs::StdRng::from_os_rng(),
        }
    }
}

/// A bar on stderr over `total` units, drawn with `template`.
fn styled_bar(total: u64, template: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr_with_hz(10));
    bar.set_style(
        ProgressStyle::with_template(template)
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar
}

fn progress_bar(total: u64, label: &str) -> ProgressBar {
    let bar = styled_bar(
        total,
        "{prefix:>22} [{bar:30}] {binary_bytes}/{binary_total_bytes} {msg}",
    );
    bar.set_prefix(label.to_string());
    bar
}

/// "run 3/12 [=====     ]" on a terminal, for a session of `total` runs.
fn session_bar(total: usize) -> Option<ProgressBar> {
    std::io::stderr()
        .is_terminal()
        .then(|| styled_bar(total as u64, "run {pos}/{len} [{bar:30}] {msg}"))
}

/// The terminal's side of a job: a progress bar when stderr is a terminal, and
/// the profile when one comes.
struct Terminal {
    bar: Option<ProgressBar>,
    profile: Option<ProfileOutcome>,
}

impl Terminal {
    /// A bar for `total` bytes labelled `label`, when `show` and stderr is a terminal.
    fn new(show: bool, total: u64, label: &str) -> Self {
        Terminal {
            bar: (show && std::io::stderr().is_terminal()).then(|| progress_bar(total, label)),
            profile: None,
        }
    }
}

impl Observer for Terminal {
    fn event(&mut self, event: Event) {
        match event {
            Event::Progress(p) => {
                if let Some(bar) = &self.bar {
                    bar.set_position(p.bytes);
                    bar.set_message(format!("{:.2} GiB/s", p.gib_per_s));
                }
            }
            Event::Profile(profile) => self.profile = Some(profile),
            _ => {}
        }
    }

    fn wait(&mut self, timeout: Duration) -> Option<Stop> {
        // Ctrl-C kills the process; the ends die with it (PR_SET_PDEATHSIG).
        std::thread::sleep(timeout);
        None
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

/// What the CLI's jobs share: this executable as their children.
fn context(profile_dir: Option<PathBuf>) -> Result<JobContext> {
    Ok(JobContext {
        program: EndProgram::current_exe(&[]).context("cannot find the pipebench executable")?,
        profile_dir,
    })
}

/// Runs a pipe job through the engine, with `terminal` watching; the result, or
/// the job's failure as an error.
fn run_job(job: PipeJob, context: &JobContext, terminal: &mut Terminal) -> Result<RunResult> {
    let last = Job::Pipe(Box::new(job)).run(context, terminal);
    finished(last, "run", |done| match done {
        Finished::Pipe(result) => Ok(*result),
        other => Err(other),
    })
}

/// What a job's last event says: what it finished with, as `pick` takes it,
/// or its failure as an error (`what` names the job when it ended otherwise).
fn finished<T>(
    last: Option<Event>,
    what: &str,
    pick: impl FnOnce(Finished) -> Result<T, Finished>,
) -> Result<T> {
    let other = match last {
        Some(Event::Result(done)) => match pick(done) {
            Ok(picked) => return Ok(picked),
            Err(other) => Some(Event::Result(other)),
        },
        Some(Event::Error(failure)) => return Err(failure.into()),
        other => other,
    };
    anyhow::bail!("the {what} ended without a result ({other:?})")
}

/// Runs one plan to completion with an optional progress bar.
fn run_plan(plan: &RunPlan, show_progress: bool) -> Result<RunResult> {
    run_plan_watched(plan, show_progress, false)
}

/// [`run_plan`], with the pipe's occupancy sampled when `occupancy` is set.
fn run_plan_watched(plan: &RunPlan, show_progress: bool, occupancy: bool) -> Result<RunResult> {
    let mut terminal = Terminal::new(show_progress, plan.writer.common.bytes.bytes(), &plan.step);
    let job = PipeJob {
        plan: plan.clone(),
        occupancy,
        progress: true,
    };
    run_job(job, &context(None)?, &mut terminal)
}
