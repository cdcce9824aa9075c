//! `pipebench tune STEP [--budget SECONDS] [--seed N] [--json]`: bytes per call ×
//! pipe capacity searched for one step, against the step's own configuration in
//! the same session.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use pipebench::engine::event::{Event, Finished};
use pipebench::engine::job::Job;
use pipebench::engine::tune::{self, TuneJob};
use pipebench::size::ByteSize;

use super::{context, JsonFlag, Terminal, UsageError};

/// `pipebench tune`'s flags.
#[derive(Debug, Args)]
pub struct TuneArgs {
    /// The step to tune (`pipebench list`).
    step: String,
    /// Seconds of runs in all (2 to 600); set-up comes on top.
    #[arg(long, default_value_t = 30.0)]
    budget: f64,
    /// Seed of the rounds' order, to repeat a session exactly.
    #[arg(long)]
    seed: Option<u64>,
    #[command(flatten)]
    out: JsonFlag,
}

/// `pipebench tune`.
pub fn tune(args: TuneArgs) -> Result<ExitCode> {
    let job = TuneJob {
        step: args.step,
        budget: args.budget,
        seed: args.seed,
    };
    tune::check(&job).map_err(|e| match e {
        tune::TuneError::Plan(plan) => anyhow::Error::new(plan),
        other => UsageError(other.to_string()).into(),
    })?;
    let mut terminal = Terminal::new(false, 0, "tune");
    let result = match Job::Tune(job).run(&context(None)?, &mut terminal) {
        Some(Event::Result(Finished::Tune(result))) => result,
        Some(Event::Error(failure)) => return Err(failure.into()),
        other => anyhow::bail!("the search ended without a result ({other:?})"),
    };
    if args.out.json {
        println!("{}", serde_json::to_string_pretty(&result)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{}: {} rounds of {:.2} s runs (GiB/s, median of the rounds)",
        result.step, result.rounds, result.seconds_per_run
    );
    println!(
        "{:>10} {:>10} {:>8} {:>8} {:>8}",
        "per call", "pipe", "median", "min", "max"
    );
    let line = |label: &str, buf: u64, pipe: Option<u64>, s: &pipebench::output::stats::Summary| {
        println!(
            "{:>10} {:>10} {:>8.2} {:>8.2} {:>8.2} {label}",
            ByteSize(buf).to_string(),
            pipe.map_or("-".into(), |p| ByteSize(p).to_string()),
            s.median,
            s.min,
            s.max
        );
    };
    let pages = |huge: Option<bool>| match huge {
        Some(true) => "huge pages ",
        Some(false) => "small pages ",
        None => "",
    };
    for cell in &result.cells {
        line(
            pages(cell.huge_pages),
            cell.buf_size,
            cell.pipe_capacity,
            &cell.summary,
        );
    }
    line(
        &format!("{}(the step's own)", pages(result.baseline.huge_pages)),
        result.baseline.buf_size,
        result.baseline.pipe_capacity,
        &result.baseline.summary,
    );
    if result.own_fastest {
        println!("the step's own configuration was the fastest: no configuration searched beat it");
    }
    println!(
        "{}: {} = {} per call, {} pipe{}: {:.2}x the step's own (spread {:.2}x to {:.2}x{})",
        if result.own_fastest {
            "best of the others"
        } else {
            "best"
        },
        result.best.id,
        ByteSize(result.best.buf_size),
        ByteSize(result.best.pipe_size),
        match result.best.huge_pages {
            Some(true) => ", huge pages",
            Some(false) => ", small pages",
            None => "",
        },
        result.gain.ratio,
        result.gain.low,
        result.gain.high,
        match (result.gain.ci_low, result.gain.ci_high) {
            (Some(low), Some(high)) => format!(
                "; 95% interval {low:.2}x to {high:.2}x over {} rounds",
                result.rounds
            ),
            _ => String::new(),
        }
    );
    println!("again: {}", result.best.argv.join(" "));
    for warning in &result.warnings {
        println!("warning: {warning}");
    }
    Ok(ExitCode::SUCCESS)
}
