//! `pipebench run STEP`: one step, both ends pinned, with a progress bar, its pipe's occupancy or a perf profile.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use serde_json::json;

use pipebench::engine::event::ProfileOutcome;
use pipebench::engine::job::PipeJob;
use pipebench::engine::result::RunResult;
use pipebench::output::{self, occupancy_chart};
use pipebench::process::rundir;
use pipebench::profile;
use pipebench::size::ByteSize;
use pipebench::steps::catalog::{self};
use pipebench::steps::plan::{Limits, RunPlan};

use super::report::{print_json, print_profile_end, write_flame_graphs};
use super::{context, run_job, run_plan_watched, JsonFlag, RunFlags, Shape, Terminal};

/// `pipebench run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Step id (see `pipebench list`).
    step: String,
    #[command(flatten)]
    shape: RunFlags<Shape>,
    #[command(flatten)]
    out: JsonFlag,
    /// Also record both ends with `perf` and print their hottest symbols.
    #[arg(long)]
    profile: bool,
    /// Where to keep the perf data and the flame graphs with --profile (default:
    /// a private folder, removed when the run ends).
    #[arg(long, value_name = "DIR", requires = "profile")]
    profile_dir: Option<PathBuf>,
    /// Also sample how many bytes sit in the pipe (every 5 ms, 20 ms when every CPU
    /// runs an end) and how often each
    /// end slept: the result gains an `occupancy` series.
    #[arg(long, conflicts_with = "profile")]
    occupancy: bool,
    /// With --occupancy: draw the occupancy over time as an SVG file.
    #[arg(long, value_name = "FILE", requires = "occupancy")]
    svg: Option<PathBuf>,
    /// The writer's buffers in huge pages (on) or small ones (off), where the
    /// step's writer vmsplices its own pages; default: as the step has them.
    /// `tune` chooses it, and its argv repeats the choice.
    #[arg(long, value_name = "on|off", value_parser = ["on", "off"])]
    huge_pages: Option<String>,
}

fn print_result(result: &RunResult) {
    let step = catalog::find(&result.step);
    println!(
        "{}: {} in {:.2} s = {:.2} GiB/s{}",
        result.step,
        ByteSize(result.bytes),
        result.elapsed_ms / 1000.0,
        result.gib_per_s,
        step.and_then(|s| s.article_gib_s)
            .map_or(String::new(), |a| format!(" (article: {a:.1} GiB/s)")),
    );
    println!(
        "  {} per call, pipe capacity {}",
        ByteSize(result.bytes_per_call),
        result.pipe_capacity.map_or("unknown".into(), |c| format!(
            "{} ({} slots of {})",
            ByteSize(c),
            c / pipebench::engine::occupancy::slot_bytes(),
            ByteSize(pipebench::engine::occupancy::slot_bytes())
        )),
    );
    for (name, end) in [("writer", &result.writer), ("reader", &result.reader)] {
        println!(
            "  {name}: cpu {}, {} calls, {} EAGAIN retries, {} minor faults, {} voluntary / {} involuntary context switches",
            end.cpu.map_or("-".into(), |c| c.to_string()),
            end.iterations,
            end.retries,
            end.minor_faults,
            end.voluntary_ctx_switches,
            end.involuntary_ctx_switches,
        );
    }
    if let Some(huge) = &result.huge_pages {
        println!(
            "  huge pages: {} of {} checked bytes ({}, THP {}){}",
            ByteSize(huge.huge_bytes),
            ByteSize(huge.checked_bytes),
            huge.method,
            huge.thp_mode,
            huge.note
                .as_ref()
                .map_or(String::new(), |n| format!(": {n}")),
        );
    }
    if let Some(bad) = result.corrupted_bytes {
        println!("  corrupted bytes seen by the reader: {bad}");
    }
    if result.stopped_by_budget {
        println!("  (stopped at the time budget)");
    }
    if let Some(o) = &result.occupancy {
        println!(
            "  pipe occupancy: full {:.0}% and empty {:.0}% of {} samples (every {} ms); \
             the writer slept {} times, the reader {}",
            100.0 * o.full_share,
            100.0 * o.empty_share,
            o.samples,
            o.interval_ms,
            o.writer_sleeps,
            o.reader_sleeps,
        );
    }
    if let Some(counts) = &result.counts {
        print!(
            "{}",
            output::counts::render_text(counts, result.bytes, &["writer", "reader"])
        );
    }
    let thp = result.machine.as_ref().and_then(|m| m.thp.as_ref());
    if let Some(thp) = thp.filter(|t| !t.is_empty() || result.options.writer.common.huge_pages) {
        let moved: Vec<String> = thp.iter().map(|(k, v)| format!("{k} {v}")).collect();
        println!(
            "  machine-wide THP counters over the run (/proc/vmstat, any process): {}",
            if moved.is_empty() {
                "none moved".to_string()
            } else {
                moved.join(", ")
            }
        );
    }
    println!("  again: {}", result.argv.join(" "));
    for warning in &result.warnings {
        eprintln!("pipebench: warning: {warning}");
    }
}

/// `pipebench run STEP`.
pub fn run(args: RunArgs) -> Result<ExitCode> {
    // The plan's warnings travel in the result, printed after it.
    let mut params = args.shape.params.clone();
    params.huge_pages = args.huge_pages.as_deref().map(|on| on == "on");
    let plan = RunPlan::for_step_id(&args.step, &params, &Limits::default())?;
    if args.profile {
        return run_profiled(&args, &plan);
    }
    let result = run_plan_watched(&plan, !args.out.json, args.occupancy)?;
    if let Some(path) = &args.svg {
        let occupancy = result
            .occupancy
            .as_ref()
            .context("the run ended before any byte moved, so there is no occupancy to draw")?;
        let svg = occupancy_chart::render_svg(occupancy, &result.step)?;
        std::fs::write(path, svg).with_context(|| format!("cannot write {}", path.display()))?;
    }
    if args.out.json {
        print_json(&result)?;
    } else {
        print_result(&result);
    }
    Ok(ExitCode::SUCCESS)
}

/// `pipebench run STEP --profile`: the run with `perf record -g` on each end.
fn run_profiled(args: &RunArgs, plan: &RunPlan) -> Result<ExitCode> {
    // What a killed run of this user left (perf data, kernel objects) goes first.
    rundir::remove_dead(&[]);
    // Before the run: a machine that cannot profile says why, and nothing runs.
    profile::probe(&profile::perf_program(), profile::DEFAULT_FREQUENCY)?;
    // The perf data goes where the user said (and stays), or into a private
    // folder of the run's own that goes with it.
    let kept = args.profile_dir.clone();
    if let Some(dir) = &kept {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let mut plan = plan.clone();
    plan.profile = true;
    let mut terminal = Terminal::new(false, 0, &plan.step);
    let job = PipeJob {
        plan: plan.clone(),
        occupancy: false,
        progress: false,
    };
    let result = run_job(job, &context(kept.clone())?, &mut terminal)?;
    let report = match terminal.profile.take() {
        Some(ProfileOutcome {
            report: Some(report),
            ..
        }) => *report,
        Some(ProfileOutcome {
            error: Some(problem),
            ..
        }) => return Err(problem.error.into()),
        _ => anyhow::bail!("the run finished without a profile"),
    };
    if let Some(dir) = &kept {
        write_flame_graphs(
            dir,
            [("writer", &report.writer), ("reader", &report.reader)],
        )?;
    }
    if args.out.json {
        let mut value = serde_json::to_value(&result)?;
        value["profile"] = serde_json::to_value(&report)?;
        if let Some(dir) = &kept {
            value["profile"]["data"] = json!(dir);
        }
        print_json(&value)?;
        return Ok(ExitCode::SUCCESS);
    }
    print_result(&result);
    println!(
        "  sampled {} at {} Hz",
        report.setup.event, report.setup.frequency
    );
    for note in &report.setup.notes {
        println!("    note: {}", note.message);
    }
    for (role, end) in [("writer", &report.writer), ("reader", &report.reader)] {
        print_profile_end(role, end, 12, kept.as_deref());
    }
    if let Some(rows) = &report.comparison {
        println!("  the article's writer profile (Linux 5.17) against this one:");
        for row in rows {
            let here = match (&row.measured_function, row.children_percent) {
                (Some(name), Some(pct)) => format!("{pct:6.2}%  as {name}"),
                _ => "  not sampled".into(),
            };
            println!(
                "    {:<30} {:6.2}%  {here}",
                row.article_function, row.article_percent
            );
        }
    }
    match &kept {
        Some(dir) => println!(
            "  perf data kept in {} (open with `perf report -i`)",
            dir.display()
        ),
        None => println!("  (pass --profile-dir DIR to keep the perf data and the flame graphs)"),
    }
    Ok(ExitCode::SUCCESS)
}
