//! `pipebench sweep`: one step over several values of one parameter.

use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use serde_json::json;

use std::time::Duration;

use pipebench::engine::event::Event;
use pipebench::engine::job::{Observer, Stop};
use pipebench::engine::sweep::{self, SweepJob, SweepParam, SweepPlan, SweepPoint};
use pipebench::machine::system::SystemInfo;
use pipebench::output::counts;
use pipebench::size::ByteSize;
use pipebench::steps::plan::{Limits, RunParams, SWEEP_SECONDS};

use super::report::{print_json, print_kernel_counts, write_chart};
use super::{context, RunFlags, SessionArgs, SweepShape, UsageError};

/// `pipebench sweep`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["pipe_size", "buf_size"])))]
pub struct SweepArgs {
    /// Step id (see `pipebench list`).
    step: String,
    /// Pipe capacities: a list `16KiB,64KiB,256KiB,1MiB` or a range `4KiB..1MiB`
    /// (doubling from the first value to the last).
    #[arg(long, value_name = "VALUES")]
    pipe_size: Option<String>,
    /// Bytes per call, as a list or a doubling range such as `4KiB..4MiB`.
    #[arg(long, value_name = "VALUES")]
    buf_size: Option<String>,
    #[command(flatten)]
    shape: RunFlags<SweepShape>,
    /// Runs per value (medians, min and max over them).
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    #[command(flatten)]
    out: SessionArgs,
}

/// One line on stderr per finished run of a sweep.
struct PointLines {
    param: SweepParam,
}

impl Observer for PointLines {
    fn event(&mut self, event: Event) {
        if let Event::Point {
            value,
            index,
            of,
            result,
        } = event
        {
            eprintln!(
                "run {index:>3}/{of}  {} {:>8}  {:>7.2} GiB/s",
                self.param.name(),
                ByteSize(value).to_string(),
                result.gib_per_s
            );
        }
    }

    fn wait(&mut self, timeout: Duration) -> Option<Stop> {
        std::thread::sleep(timeout);
        None
    }
}

/// `pipebench sweep STEP --pipe-size VALUES | --buf-size VALUES`.
pub fn sweep(args: SweepArgs) -> Result<ExitCode> {
    let (param, text) = match (&args.pipe_size, &args.buf_size) {
        (Some(text), None) => (SweepParam::PipeSize, text),
        (None, Some(text)) => (SweepParam::BufSize, text),
        _ => unreachable!("clap requires exactly one of --pipe-size and --buf-size"),
    };
    let values = sweep::parse_values(text).map_err(|e| UsageError(e.to_string()))?;
    let plan = plan(&args, param, &values)?;
    let job = run(plan, param)?;
    let points = job.points();
    let plan = job.plan();
    if let Some(path) = &args.out.svg {
        write_chart(path, &sweep::render_svg(&plan.step, param, &points)?)?;
    }
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    // Each value's counts per GiB: medians over its runs.
    let point_counts: Vec<Option<counts::PerGib>> =
        points.iter().map(|p| counts::per_gib(&p.runs)).collect();
    if args.out.json {
        print_json(&json!({
            "step": plan.step,
            "param": param.name(),
            "command": command,
            "system": SystemInfo::probe(),
            "points": points,
            "counts": points
                .iter()
                .zip(&point_counts)
                .map(|(p, c)| json!({ "value": p.value, "per_gib": c }))
                .collect::<Vec<_>>(),
        }))?;
    } else if args.out.csv {
        print!("{}", sweep::render_csv(param, &points));
    } else {
        println!(
            "{} over {}, {} run(s) per value: {command}",
            plan.step,
            param.label(),
            args.repeats
        );
        print_table(param, &points);
        print_kernel_counts(
            10,
            points
                .iter()
                .zip(&point_counts)
                .map(|(p, c)| (ByteSize(p.value).to_string(), c.as_ref())),
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The sweep's runs in shuffled order: the run flags, where a sweep's own
/// defaults (the largest size, [`SWEEP_SECONDS`]) fill what is not given; the
/// first run's first warning on stderr.
fn plan(args: &SweepArgs, param: SweepParam, values: &[ByteSize]) -> Result<SweepPlan> {
    let limits = Limits::default();
    let given = &args.shape.params;
    let base = RunParams {
        bytes: Some(given.bytes.unwrap_or(ByteSize(limits.max_bytes))),
        seconds: match (given.bytes, given.seconds) {
            (None, None) => Some(SWEEP_SECONDS),
            (_, seconds) => seconds,
        },
        ..given.clone()
    };
    let mut rng = args.out.rng();
    let plan = SweepPlan::new(
        &args.step,
        param,
        values,
        &base,
        args.repeats,
        &limits,
        &mut rng,
    )
    .map_err(|e| UsageError(e.to_string()))?;
    if let Some(warning) = plan.runs.first().and_then(|(_, p)| p.warnings.first()) {
        eprintln!("pipebench: warning: {warning}");
    }
    Ok(plan)
}

/// Runs the sweep, a line on stderr per run; a failure names the value it
/// failed at.
fn run(plan: SweepPlan, param: SweepParam) -> Result<SweepJob> {
    let mut job = SweepJob::new(plan);
    let mut lines = PointLines { param };
    match job.run(&context(None)?, &mut lines, false) {
        Some(Event::Done { .. }) => Ok(job),
        Some(Event::Error(failure)) => {
            let value = job.current_value().map_or(String::new(), |v| v.to_string());
            Err(anyhow::Error::from(failure)).with_context(|| format!("{} = {value}", param.name()))
        }
        other => anyhow::bail!("the sweep ended early ({other:?})"),
    }
}

/// Each value's median, min and max GiB/s.
fn print_table(param: SweepParam, points: &[SweepPoint]) {
    println!(
        "{:>10}  {:>8}  {:>8}  {:>8}",
        param.name(),
        "median",
        "min",
        "max"
    );
    for p in points {
        println!(
            "{:>10}  {:>8.2}  {:>8.2}  {:>8.2}",
            ByteSize(p.value).to_string(),
            p.summary.median,
            p.summary.min,
            p.summary.max
        );
    }
    println!("GiB/s = 2^30 bytes per second");
}
