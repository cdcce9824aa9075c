//! `pipebench all`: the whole catalog, repeated in shuffled order, as a table and a chart.

use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use rand::seq::SliceRandom;
use serde_json::json;

use pipebench::engine::result::RunResult;
use pipebench::machine::system::SystemInfo;
use pipebench::output::{chart, counts, stats};
use pipebench::size::ByteSize;
use pipebench::steps::catalog::{self, StepKind};
use pipebench::steps::plan::{Limits, RunPlan};

use super::report::{machine_label, print_json, print_kernel_counts, write_chart};
use super::{run_plan, session_bar, RunFlags, SessionArgs, Shape, UsageError};

/// `pipebench all`.
#[derive(Debug, Args)]
pub struct AllArgs {
    #[command(flatten)]
    shape: RunFlags<Shape>,
    /// Runs per step.
    #[arg(long, default_value_t = 5)]
    repeats: usize,
    /// Only these steps (comma-separated ids); default: article steps and variants.
    #[arg(long, value_delimiter = ',')]
    steps: Vec<String>,
    #[command(flatten)]
    out: SessionArgs,
}

/// `pipebench all`.
pub fn all(args: AllArgs) -> Result<ExitCode> {
    let ids = step_ids(&args);
    let mut plans = plans(&args, &ids)?;
    // Shuffled, as the reference's measure.py does, so drift (thermal, noisy
    // neighbours) spreads over all steps instead of biasing the last ones.
    let mut rng = args.out.rng();
    plans.shuffle(&mut rng);
    let results = run_plans(&plans)?;
    let rows = stats::table(&results);
    // Each step's counts per GiB, in the table's order: medians over its runs.
    let step_counts: Vec<(String, Option<counts::PerGib>)> = rows
        .iter()
        .map(|row| {
            let of_step = results.iter().filter(|r| r.step == row.step);
            (row.step.clone(), counts::per_gib(of_step))
        })
        .collect();
    let system = SystemInfo::probe();
    if let Some(path) = &args.out.svg {
        write_chart(path, &chart::render_svg(&rows, &machine_label(&system))?)?;
    }
    if args.out.json {
        print_json(&json!({
            "system": system,
            "table": rows,
            "counts": step_counts
                .iter()
                .map(|(step, c)| json!({ "step": step, "per_gib": c }))
                .collect::<Vec<_>>(),
            "runs": results,
        }))?;
    } else if args.out.csv {
        print!("{}", stats::render_csv(&rows));
    } else {
        println!(
            "{} x {} runs of {} each on {} ({}{})",
            ids.len(),
            args.repeats,
            ByteSize(plans[0].writer.common.bytes.bytes()),
            system.cpu_model,
            system.kernel,
            system
                .virtualization
                .as_ref()
                .map_or(String::new(), |v| format!(", {v} guest")),
        );
        print!("{}", stats::render_text(&rows));
        print_kernel_counts(
            24,
            step_counts
                .iter()
                .map(|(step, c)| (step.clone(), c.as_ref())),
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The steps asked for: `--steps`, else every article step and variant.
fn step_ids(args: &AllArgs) -> Vec<String> {
    if args.steps.is_empty() {
        catalog::catalog()
            .into_iter()
            .filter(|s| s.kind != StepKind::Experiment)
            .map(|s| s.id.to_string())
            .collect()
    } else {
        args.steps.clone()
    }
}

/// Each step's plan, `--repeats` times, in catalog order; the first plan's
/// first warning on stderr.
fn plans(args: &AllArgs, ids: &[String]) -> Result<Vec<RunPlan>> {
    if args.repeats == 0 {
        anyhow::bail!(UsageError("--repeats must be at least 1".into()));
    }
    let limits = Limits::default();
    let mut plans = Vec::new();
    for id in ids {
        let plan = RunPlan::for_step_id(id, &args.shape.params, &limits)?;
        for _ in 0..args.repeats {
            plans.push(plan.clone());
        }
    }
    if let Some(warning) = plans.first().and_then(|p| p.warnings.first()) {
        eprintln!("pipebench: warning: {warning}");
    }
    Ok(plans)
}

/// Runs the plans in turn, a line on stderr for each (above the bar on a
/// terminal).
fn run_plans(plans: &[RunPlan]) -> Result<Vec<RunResult>> {
    let overall = session_bar(plans.len());
    let mut results = Vec::with_capacity(plans.len());
    for plan in plans {
        if let Some(bar) = &overall {
            bar.set_message(plan.step.clone());
        }
        let result = run_plan(plan, false).with_context(|| format!("step {}", plan.step))?;
        let line = format!("{:<22} {:>7.2} GiB/s", result.step, result.gib_per_s);
        if let Some(bar) = &overall {
            bar.println(line);
            bar.inc(1);
        } else {
            eprintln!("{line}");
        }
        results.push(result);
    }
    if let Some(bar) = overall {
        bar.finish_and_clear();
    }
    Ok(results)
}
