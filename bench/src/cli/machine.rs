//! The machine's commands: `list` (the steps), `system` (what this machine is and what that explains), `wakeup` (one wakeup's cost), `reuse` (does vmsplice map or copy here).

use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use serde_json::json;

use pipebench::engine::wakeup;
use pipebench::machine::behaviour;
use pipebench::machine::findings::{self, Finding, SystemReport};
use pipebench::machine::system::SystemInfo;
use pipebench::machine::vmsplice_probe;
use pipebench::process::launch::EndProgram;
use pipebench::size::ByteSize;
use pipebench::steps::catalog::{self};
use pipebench::steps::plan::{Limits, RunParams, RunPlan};

use super::{run_plan, JsonFlag, UsageError};

/// `pipebench list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    out: JsonFlag,
}

/// `pipebench system`.
#[derive(Debug, Args)]
pub struct SystemArgs {
    #[command(flatten)]
    out: JsonFlag,
}

/// `pipebench reuse`.
#[derive(Debug, Args)]
pub struct ReuseArgs {
    /// Bytes for the early-reuse stream.
    #[arg(long, default_value = "256MiB")]
    bytes: ByteSize,
    #[command(flatten)]
    out: JsonFlag,
}

/// `pipebench list`.
pub fn list(args: ListArgs) -> Result<ExitCode> {
    let steps = catalog::catalog();
    if args.out.json {
        let published = pipebench::steps::plan::published_catalog(&Limits::default());
        println!("{}", serde_json::to_string_pretty(&published)?);
        return Ok(ExitCode::SUCCESS);
    }
    for step in steps {
        println!(
            "{:<22} {:<10} {:>8}  {}",
            step.id,
            format!("{:?}", step.kind).to_lowercase(),
            step.article_gib_s.map_or("-".into(), |a| format!("{a:.1}")),
            step.title
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `pipebench system`.
pub fn system(args: SystemArgs) -> Result<ExitCode> {
    let report = SystemReport::probe();
    if args.out.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    let info = &report.info;
    println!("kernel:         {}", info.kernel);
    println!(
        "cpu:            {} ({} online, allowed {:?})",
        info.cpu_model, info.cpus_online, info.cpus_allowed
    );
    println!(
        "virtualization: {}",
        info.virtualization.as_deref().unwrap_or("none detected")
    );
    println!(
        "THP:            {} (defrag {})",
        info.thp_mode.as_deref().unwrap_or("unknown"),
        info.thp_defrag.as_deref().unwrap_or("unknown")
    );
    println!(
        "pipe-max-size:  {}",
        info.pipe_max_size
            .map_or("unknown".into(), |s| ByteSize(s).to_string())
    );
    println!("perf:           {}", info.perf.detail);
    println!("pagemap:        {}", info.pagemap.detail);
    println!(
        "1 GiB pages:    {}",
        if info.gigantic_pages {
            "supported (pdpe1gb)"
        } else {
            "not supported"
        }
    );
    if let Some(v) = info.vmsplice {
        println!("vmsplice:       {}", v.explain());
    }
    println!("mitigations:    {}", info.mitigations.len());
    print_findings(&report.findings);
    print!("{}", behaviour::text(&report.behaviour));
    Ok(ExitCode::SUCCESS)
}

fn print_findings(findings: &[Finding]) {
    println!();
    println!("what explains the differences from the article:");
    for f in findings {
        println!("- {}", f.title);
        println!("    seen: {}", f.evidence);
        println!("    so:   {}", f.effect);
    }
}

/// `pipebench wakeup`.
#[derive(Debug, Args)]
pub struct WakeupArgs {
    /// Round trips timed per mode (100 to 1000000).
    #[arg(long, default_value_t = wakeup::DEFAULT_ROUND_TRIPS)]
    round_trips: u32,
    #[command(flatten)]
    out: JsonFlag,
}

/// `pipebench wakeup`: the blocking and busy ping-pong, and the findings with them.
pub fn wakeup(args: WakeupArgs) -> Result<ExitCode> {
    let program = EndProgram::current_exe(&[]).context("cannot find the pipebench executable")?;
    let figures = wakeup::measure(&program, None, args.round_trips).map_err(|e| match e {
        wakeup::WakeupError::BadRoundTrips(_) => anyhow::Error::new(UsageError(e.to_string())),
        other => other.into(),
    })?;
    let info = SystemInfo::probe();
    let found = findings::findings(&info, Some(&figures));
    if args.out.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({ "wakeup": figures, "findings": found }))?
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "one-byte round trip between CPUs {} and {} (median of {}):",
        figures.cpus[0], figures.cpus[1], figures.round_trips
    );
    println!(
        "  blocking:     {:8.2} µs (two sleeps and two wakeups)",
        figures.blocking_us
    );
    println!("  busy-polling: {:8.2} µs (nobody sleeps)", figures.busy_us);
    print_findings(&found);
    Ok(ExitCode::SUCCESS)
}

/// `pipebench reuse`.
pub fn reuse(args: ReuseArgs) -> Result<ExitCode> {
    let behaviour = vmsplice_probe::probe()?;
    let params = RunParams {
        bytes: Some(args.bytes),
        ..Default::default()
    };
    let plan = RunPlan::for_step_id("vmsplice-reuse", &params, &Limits::default())?;
    let result = run_plan(&plan, !args.out.json)?;
    let corrupted = result.corrupted_bytes.unwrap_or(0);
    if args.out.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "vmsplice": behaviour,
                "explanation": behaviour.explain(),
                "corrupted_bytes": corrupted,
                "run": result,
            }))?
        );
    } else {
        println!("probe: {}", behaviour.explain());
        println!(
            "early reuse: the reader found {corrupted} corrupted bytes in {} ({:.4}%)",
            ByteSize(result.bytes),
            100.0 * corrupted as f64 / result.bytes.max(1) as f64
        );
    }
    Ok(ExitCode::SUCCESS)
}
