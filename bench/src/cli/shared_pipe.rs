//! `pipebench shared-pipe --writers 1,2,4 --readers 1,2 --msg-size 4KiB,64KiB
//! [--bytes SIZE] [--profile [--profile-dir DIR]] [--json]`: many writers and
//! readers on one pipe, each point's ends counted, and profiled when asked.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use serde_json::json;

use pipebench::engine::event::{Event, Finished, ProfileOutcome};
use pipebench::engine::job::{Job, Observer, Stop};
use pipebench::engine::shared_pipe::{SharedPipeJob, SharedPipeResult, DEFAULT_BYTES};
use pipebench::engine::sweep::parse_values;
use pipebench::process::rundir;
use pipebench::profile;
use pipebench::size::ByteSize;

use super::report::{print_json, print_profile_end, write_flame_graphs};
use super::{context, finished, JsonFlag, Terminal, UsageError};

/// How long one point may take before it is killed.
const POINT_TIMEOUT: Duration = Duration::from_secs(120);

/// `pipebench shared-pipe`'s flags.
#[derive(Debug, Args)]
pub struct SharedPipeArgs {
    /// Writer counts, e.g. `1,2,4` (1 to 16 each).
    #[arg(long, value_name = "N,N", default_value = "1,2,4")]
    writers: String,
    /// Reader counts, e.g. `1,2`.
    #[arg(long, value_name = "N,N", default_value = "1,2")]
    readers: String,
    /// Bytes per message, each one write(2) call and one read(2) call: a list
    /// `4KiB,64KiB` or a doubling range `1KiB..64KiB`.
    #[arg(long, value_name = "SIZES", default_value = "4KiB,64KiB")]
    msg_size: String,
    /// Bytes each point moves, split between its writers.
    #[arg(long, value_name = "SIZE", default_value_t = ByteSize(DEFAULT_BYTES))]
    bytes: ByteSize,
    /// Record each point's writers, and its readers, with `perf record -g`: where
    /// their time goes (the pipe's lock, wakeups), with flame graphs. The ends
    /// wait while perf attaches and share the CPUs with it, so the figures of a
    /// profiled sweep are not clean ones.
    #[arg(long)]
    profile: bool,
    /// Where to keep the perf data and flame graphs with --profile, a folder per
    /// point (`2w-1r-4096/writers.svg`); default: a private folder, removed.
    #[arg(long, value_name = "DIR", requires = "profile")]
    profile_dir: Option<PathBuf>,
    #[command(flatten)]
    out: JsonFlag,
}

fn counts(flag: &str, text: &str) -> Result<Vec<usize>> {
    text.split(',')
        .map(|t| {
            t.trim()
                .parse::<usize>()
                .map_err(|_| UsageError(format!("{flag} {text}: {t:?} is not a count")).into())
        })
        .collect()
}

/// `pipebench shared-pipe`.
pub fn shared_pipe(args: SharedPipeArgs) -> Result<ExitCode> {
    let job = plan(&args)?;
    let kept = args.profile_dir.clone();
    if let Some(dir) = &kept {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let (result, by_point) = run(job, kept.clone(), args.out.json)?;
    let kept_in = keep_flame_graphs(&result, &by_point, kept.as_deref())?;
    if args.out.json {
        print_json(&with_profiles(&result, &by_point, &kept_in)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    print_points(&result);
    print_counts(&result);
    print_profiles(&result, &by_point, &kept_in);
    for warning in &result.warnings {
        println!("warning: {warning}");
    }
    Ok(ExitCode::SUCCESS)
}

/// The job the flags ask for, checked; with `--profile`, a machine that
/// cannot profile says why before anything runs.
fn plan(args: &SharedPipeArgs) -> Result<SharedPipeJob> {
    let msg_sizes = parse_values(&args.msg_size)
        .map_err(|e| UsageError(format!("--msg-size {}: {e}", args.msg_size)))?;
    let job = SharedPipeJob {
        writers: counts("--writers", &args.writers)?,
        readers: counts("--readers", &args.readers)?,
        msg_sizes: msg_sizes.iter().map(|s| s.bytes()).collect(),
        bytes: args.bytes.bytes(),
        timeout: POINT_TIMEOUT,
        profile: args.profile,
    };
    job.check().map_err(|e| UsageError(e.to_string()))?;
    if args.profile {
        // What a killed run of this user left goes first.
        rundir::remove_dead(&[]);
        profile::probe(&profile::perf_program(), profile::DEFAULT_FREQUENCY)?;
    }
    Ok(job)
}

/// Runs every point with the terminal's bar (not with `--json`); the result
/// and each point's profile outcome, in the points' order.
fn run(
    job: SharedPipeJob,
    kept: Option<PathBuf>,
    json: bool,
) -> Result<(SharedPipeResult, Vec<Option<ProfileOutcome>>)> {
    let points = job.writers.len() * job.readers.len() * job.msg_sizes.len();
    let terminal = Terminal::new(!json, job.bytes * points as u64, "shared-pipe");
    let mut observer = Profiles {
        terminal,
        pending: None,
        by_point: Vec::new(),
    };
    let last = Job::SharedPipe(job).run(&context(kept)?, &mut observer);
    let result = finished(last, "sweep", |done| match done {
        Finished::SharedPipe(result) => Ok(*result),
        other => Err(other),
    })?;
    Ok((result, observer.by_point))
}

/// Writes each profiled point's flame graphs into its folder under `kept`; the
/// folders, one per point (None when nothing is kept).
fn keep_flame_graphs(
    result: &SharedPipeResult,
    by_point: &[Option<ProfileOutcome>],
    kept: Option<&Path>,
) -> Result<Vec<Option<PathBuf>>> {
    let mut kept_in = Vec::new();
    for (point, outcome) in result.points.iter().zip(by_point) {
        let folder = kept.map(|dir| {
            dir.join(format!(
                "{}w-{}r-{}",
                point.writers, point.readers, point.msg_size
            ))
        });
        if let (Some(folder), Some(Some(report))) = (&folder, outcome.as_ref().map(|o| &o.report)) {
            write_flame_graphs(
                folder,
                [("writers", &report.writer), ("readers", &report.reader)],
            )?;
        }
        kept_in.push(folder);
    }
    Ok(kept_in)
}

/// The result as JSON, each point with its `profile` (and its folder as
/// `data`) or its `profile_error`.
fn with_profiles(
    result: &SharedPipeResult,
    by_point: &[Option<ProfileOutcome>],
    kept_in: &[Option<PathBuf>],
) -> Result<serde_json::Value> {
    let mut value = serde_json::to_value(result)?;
    for (i, outcome) in by_point.iter().enumerate() {
        let point = &mut value["points"][i];
        match outcome {
            Some(ProfileOutcome {
                report: Some(report),
                ..
            }) => {
                point["profile"] = serde_json::to_value(report)?;
                if let Some(Some(folder)) = kept_in.get(i) {
                    point["profile"]["data"] = json!(folder);
                }
            }
            Some(ProfileOutcome {
                error: Some(problem),
                ..
            }) => point["profile_error"] = serde_json::to_value(problem)?,
            _ => {}
        }
    }
    Ok(value)
}

/// The table: one line per point.
fn print_points(result: &SharedPipeResult) {
    println!(
        "{:>7} {:>7} {:>9} {:>9} {:>6} {:>13} {:>15}",
        "writers", "readers", "msg_size", "GiB/s", "torn", "split reads", "sleeps (w / r)"
    );
    for p in &result.points {
        println!(
            "{:>7} {:>7} {:>9} {:>9.2} {:>6} {:>13} {:>15}",
            p.writers,
            p.readers,
            ByteSize(p.msg_size).to_string(),
            p.gib_per_s,
            p.torn_messages,
            p.split_messages,
            format!("{} / {}", p.sleeps[0], p.sleeps[1])
        );
    }
}

/// Each counted point's context switches and wakeups, writers and readers,
/// then what could not be counted.
fn print_counts(result: &SharedPipeResult) {
    for p in &result.points {
        let Some(counts) = &p.counts else { continue };
        let side = |name: &str| {
            counts
                .ends
                .get(name)
                .map_or("not counted".to_string(), |c| {
                    let wakeups = c.wakeups.map_or("wakeups not counted".to_string(), |n| {
                        format!("{n} wakeups")
                    });
                    format!("{} context switches, {wakeups}", c.context_switches)
                })
        };
        println!(
            "{} writers, {} readers, {}: writers {}; readers {}",
            p.writers,
            p.readers,
            ByteSize(p.msg_size),
            side("writers"),
            side("readers")
        );
    }
    if let Some(counts) = result.points.iter().find_map(|p| p.counts.as_ref()) {
        for missing in &counts.missing {
            println!("  not counted: {}", missing.message);
        }
    }
}

/// Each profiled point: its writers' and readers' top functions, or why it
/// has no profile.
fn print_profiles(
    result: &SharedPipeResult,
    by_point: &[Option<ProfileOutcome>],
    kept_in: &[Option<PathBuf>],
) {
    for ((p, outcome), folder) in result.points.iter().zip(by_point).zip(kept_in) {
        let Some(outcome) = outcome else { continue };
        println!(
            "profile of {} writers, {} readers, {} messages:",
            p.writers,
            p.readers,
            ByteSize(p.msg_size)
        );
        if let Some(problem) = &outcome.error {
            println!("  no profile: {}", problem.message);
        }
        let Some(report) = &outcome.report else {
            continue;
        };
        for (role, end) in [("writers", &report.writer), ("readers", &report.reader)] {
            print_profile_end(role, end, 8, folder.as_deref());
        }
        for note in &report.setup.notes {
            println!("  note: {}", note.message);
        }
    }
}

/// The terminal's bar, and each point's profile in the order the points come
/// (a point's `profile` event comes before its `shared_point`).
struct Profiles {
    terminal: Terminal,
    pending: Option<ProfileOutcome>,
    by_point: Vec<Option<ProfileOutcome>>,
}

impl Observer for Profiles {
    fn event(&mut self, event: Event) {
        match &event {
            Event::Profile(outcome) => self.pending = Some(outcome.clone()),
            Event::SharedPoint(_) => self.by_point.push(self.pending.take()),
            _ => {}
        }
        self.terminal.event(event);
    }

    fn wait(&mut self, timeout: Duration) -> Option<Stop> {
        self.terminal.wait(timeout)
    }
}
