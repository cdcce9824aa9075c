//! The harness subcommands of the `pipebench` binary.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use indicatif::{HumanBytes, ProgressBar, ProgressDrawTarget, ProgressStyle};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde_json::json;

use pipebench::catalog::{self, StepKind};
use pipebench::error::EndError;
use pipebench::findings::{self, Finding, SystemReport};
use pipebench::inspect;
use pipebench::ipc;
use pipebench::options::WriterOptions;
use pipebench::paging::{self, PageSize, Paging};
use pipebench::plan::{Limits, PlanError, RunParams, RunPlan, DEFAULT_RUN_BYTES};
use pipebench::report::RunResult;
use pipebench::rundir::{self, Base, RunDir};
use pipebench::runner::{EndProgram, RunHandle};
use pipebench::size::ByteSize;
use pipebench::sweep::{self, SweepParam, SweepPlan};
use pipebench::system::SystemInfo;
use pipebench::wakeup;
use pipebench::{chart, occupancy, occupancy_chart, profile, stats, vmsplice_probe};

/// A command line that cannot be used as given (exit code 2, like clap's own).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// The exit code for an error that reached `main`: 2 for unusable input.
pub fn exit_code_for(err: &anyhow::Error) -> u8 {
    if err.downcast_ref::<PlanError>().is_some() || err.downcast_ref::<UsageError>().is_some() {
        return 2;
    }
    if let Some(ipc) = err.downcast_ref::<ipc::IpcError>() {
        return if ipc.is_input_error() { 2 } else { 1 };
    }
    if let Some(end) = err.downcast_ref::<EndError>() {
        return end.exit_code();
    }
    1
}

/// Options shared by `run` and `all` that shape a run.
#[derive(Debug, Clone, Args)]
pub struct ShapeArgs {
    /// Bytes per run (default 4GiB).
    #[arg(long, value_name = "SIZE")]
    bytes: Option<ByteSize>,
    /// Bytes per call at both ends (default: the step's, 256KiB).
    #[arg(long, value_name = "SIZE")]
    buf_size: Option<ByteSize>,
    /// Pipe capacity (default: the kernel's 64KiB for write steps, half of one
    /// buffer for vmsplice steps, as the reference programs run them).
    #[arg(long, value_name = "SIZE")]
    pipe_size: Option<ByteSize>,
    /// Stop each run after this many seconds instead of at --bytes.
    #[arg(long, value_name = "SECONDS")]
    seconds: Option<f64>,
    /// CPU for the writer (default: the first allowed CPU).
    #[arg(long, value_name = "CPU")]
    writer_cpu: Option<usize>,
    /// CPU for the reader (default: the next allowed CPU).
    #[arg(long, value_name = "CPU")]
    reader_cpu: Option<usize>,
    /// Check every byte at the reader (slower; for correctness, not speed).
    #[arg(long)]
    verify: bool,
}

impl ShapeArgs {
    fn params(&self) -> RunParams {
        RunParams {
            bytes: Some(self.bytes.unwrap_or(DEFAULT_RUN_BYTES)),
            buf_size: self.buf_size,
            pipe_size: self.pipe_size,
            seconds: self.seconds,
            writer_cpu: self.writer_cpu,
            reader_cpu: self.reader_cpu,
            verify: self.verify.then_some(true),
            quiet: None,
            // `run --profile` takes its own path (run_profiled).
            profile: None,
        }
    }
}

/// `pipebench run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Step id (see `pipebench list`).
    step: String,
    #[command(flatten)]
    shape: ShapeArgs,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
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

/// `pipebench all`.
#[derive(Debug, Args)]
pub struct AllArgs {
    #[command(flatten)]
    shape: ShapeArgs,
    /// Runs per step.
    #[arg(long, default_value_t = 5)]
    repeats: usize,
    /// Only these steps (comma-separated ids); default: article steps and variants.
    #[arg(long, value_delimiter = ',')]
    steps: Vec<String>,
    #[command(flatten)]
    out: SessionArgs,
}

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
    /// Bytes per run (the cap, with --seconds).
    #[arg(long, value_name = "SIZE")]
    bytes: Option<ByteSize>,
    /// Seconds per run (default 2 when --bytes is not given).
    #[arg(long, value_name = "SECONDS")]
    seconds: Option<f64>,
    /// Runs per value (medians, min and max over them).
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    #[command(flatten)]
    out: SessionArgs,
}

/// `pipebench list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print the catalog as JSON.
    #[arg(long)]
    json: bool,
}

/// `pipebench system`.
#[derive(Debug, Args)]
pub struct SystemArgs {
    /// Print as JSON.
    #[arg(long)]
    json: bool,
}

/// `pipebench reuse`.
#[derive(Debug, Args)]
pub struct ReuseArgs {
    /// Bytes for the early-reuse stream.
    #[arg(long, default_value = "256MiB")]
    bytes: ByteSize,
    /// Print as JSON.
    #[arg(long)]
    json: bool,
}

/// `pipebench pages`.
#[derive(Debug, Args)]
pub struct PagesArgs {
    /// Just split this virtual address for a page-table walk (e.g. the article's
    /// 0x0000f2705af953c0).
    #[arg(long, value_name = "ADDR")]
    address: Option<String>,
    /// With --address: 4- or 5-level paging (default: 4 where the address is
    /// canonical with 48 bits, else 5).
    #[arg(long, value_name = "4|5", requires = "address", value_parser = clap::value_parser!(u32).range(4..=5))]
    levels: Option<u32>,
    /// Inspect the writer's buffers of this step (see `pipebench list`); the
    /// options below change them.
    #[arg(long, value_name = "STEP")]
    step: Option<String>,
    /// Bytes per buffer (the writer's chunk); default 256KiB or the step's.
    #[arg(long, value_name = "SIZE")]
    buf_size: Option<ByteSize>,
    /// Put the buffers in transparent huge pages.
    #[arg(long)]
    huge_pages: bool,
    /// Leave the buffers untouched (nothing will be mapped yet).
    #[arg(long, conflicts_with = "touch")]
    dont_touch_pages: bool,
    /// Write to the buffers first, even if the step does not.
    #[arg(long)]
    touch: bool,
    /// Start each buffer this many bytes into a page, as malloc does (the step's
    /// offset by default).
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u16).range(0..4096))]
    buffer_offset: Option<u16>,
    /// Two buffers, as the vmsplice double buffer has.
    #[arg(long)]
    vmsplice: bool,
    /// Print as JSON.
    #[arg(long)]
    json: bool,
}

impl PagesArgs {
    /// The writer options whose buffers to inspect: the step's, changed by the flags.
    fn writer(&self) -> Result<WriterOptions> {
        let mut writer = match &self.step {
            Some(id) => {
                catalog::find(id)
                    .ok_or_else(|| {
                        UsageError(format!(
                            "--step `{id}` is not a step; known: {}",
                            catalog::ids().join(", ")
                        ))
                    })?
                    .writer
            }
            None => WriterOptions::default(),
        };
        if let Some(size) = self.buf_size {
            writer.common.buf_size = size;
        }
        writer.common.huge_pages |= self.huge_pages;
        writer.vmsplice |= self.vmsplice;
        if let Some(offset) = self.buffer_offset {
            writer.common.buffer_offset = Some(offset);
        }
        if self.dont_touch_pages {
            writer.dont_touch_pages = true;
        }
        if self.touch {
            writer.dont_touch_pages = false;
        }
        Ok(writer)
    }
}

fn progress_bar(total: u64, label: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr_with_hz(10));
    bar.set_style(
        ProgressStyle::with_template(
            "{prefix:>22} [{bar:30}] {binary_bytes}/{binary_total_bytes} {msg}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    bar.set_prefix(label.to_string());
    bar
}

/// "run 3/12 [=====     ]" on a terminal, for a session of `total` runs.
fn session_bar(total: usize) -> Option<ProgressBar> {
    std::io::stderr().is_terminal().then(|| {
        let bar = ProgressBar::with_draw_target(
            Some(total as u64),
            ProgressDrawTarget::stderr_with_hz(10),
        );
        bar.set_style(
            ProgressStyle::with_template("run {pos}/{len} [{bar:30}] {msg}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar
    })
}

/// Runs one plan to completion with an optional progress bar.
fn run_plan(plan: &RunPlan, show_progress: bool) -> Result<RunResult> {
    run_plan_watched(plan, show_progress, false)
}

/// [`run_plan`], with the pipe's occupancy sampled when `watch` is set.
fn run_plan_watched(plan: &RunPlan, show_progress: bool, watch: bool) -> Result<RunResult> {
    let program = EndProgram::current_exe(&[]).context("cannot find the pipebench executable")?;
    let mut handle = match watch {
        true => {
            let ends = [plan.writer.common.cpu, plan.reader.common.cpu];
            RunHandle::start_watched(plan, &program, occupancy::interval_for(ends))?
        }
        false => RunHandle::start(plan, &program)?,
    };
    let bar = (show_progress && std::io::stderr().is_terminal())
        .then(|| progress_bar(plan.writer.common.bytes.bytes(), &plan.step));
    let result = handle.wait_with(Duration::from_millis(50), |p| {
        if let Some(bar) = &bar {
            bar.set_position(p.bytes);
            bar.set_message(format!("{:.2} GiB/s", p.gib_per_s));
        }
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(result?)
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
            "{} ({} slots of 4KiB)",
            ByteSize(c),
            c / 4096
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
    println!("  again: {}", result.argv.join(" "));
    for warning in &result.warnings {
        eprintln!("pipebench: warning: {warning}");
    }
}

/// `pipebench run STEP`.
pub fn run(args: RunArgs) -> Result<ExitCode> {
    // The plan's warnings travel in the result, printed after it.
    let plan = RunPlan::for_step_id(&args.step, &args.shape.params(), &Limits::default())?;
    if args.profile {
        return run_profiled(&args, &plan);
    }
    let result = run_plan_watched(&plan, !args.json, args.occupancy)?;
    if let Some(path) = &args.svg {
        let occupancy = result
            .occupancy
            .as_ref()
            .context("the run ended before any byte moved, so there is no occupancy to draw")?;
        let svg = occupancy_chart::render_svg(occupancy, &result.step)?;
        std::fs::write(path, svg).with_context(|| format!("cannot write {}", path.display()))?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&result)?);
    } else {
        print_result(&result);
    }
    Ok(ExitCode::SUCCESS)
}

/// `pipebench run STEP --profile`: the run with `perf record -g` on each end.
fn run_profiled(args: &RunArgs, plan: &RunPlan) -> Result<ExitCode> {
    // What a killed run of this user left (perf data, kernel objects) goes first.
    rundir::sweep(&[]);
    // Before the run: a machine that cannot profile says why, and nothing runs.
    let setup = profile::probe(&profile::perf_program(), profile::DEFAULT_FREQUENCY)?;
    // The perf data goes where the user said, or into a private folder of this
    // run's own that goes with it.
    let private: Option<RunDir>;
    let dir: &Path = match &args.profile_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            private = None;
            dir
        }
        None => {
            private = Some(RunDir::create(&Base::runtime()?)?);
            private.as_ref().expect("just made").path()
        }
    };
    let kept = args.profile_dir.is_some();
    let program = EndProgram::current_exe(&[]).context("cannot find the pipebench executable")?;
    let mut handle = RunHandle::start(plan, &program)?;
    // Attached right after the start, so the set-up before the first byte is
    // mostly missed and the hot loop dominates the samples.
    let session = profile::Session::attach(setup, handle.pids(), dir)?;
    let result = match handle.wait_with(Duration::from_millis(50), |_| {}) {
        Ok(result) => result,
        Err(err) => {
            session.abandon();
            return Err(err.into());
        }
    };
    let report = session.finish(&plan.step)?;
    for (role, end) in [("writer", &report.writer), ("reader", &report.reader)] {
        if kept {
            let svg = dir.join(format!("{role}.svg"));
            std::fs::write(&svg, &end.flamegraph_svg)
                .with_context(|| format!("cannot write {}", svg.display()))?;
        }
    }
    if args.json {
        let mut value = serde_json::to_value(&result)?;
        value["profile"] = serde_json::to_value(&report)?;
        if kept {
            value["profile"]["data"] = json!(dir);
        }
        println!("{}", serde_json::to_string_pretty(&value)?);
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
        println!(
            "  {role}: {} samples; children% self% function",
            end.samples
        );
        for f in end.functions.iter().take(12) {
            println!(
                "    {:6.2}% {:6.2}%  {}{}",
                f.children_percent,
                f.self_percent,
                f.symbol,
                if f.kernel { " [k]" } else { "" }
            );
        }
        if kept {
            println!(
                "    flame graph: {}",
                dir.join(format!("{role}.svg")).display()
            );
        }
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
    if kept {
        println!(
            "  perf data kept in {} (open with `perf report -i`)",
            dir.display()
        );
    } else {
        println!("  (pass --profile-dir DIR to keep the perf data and the flame graphs)");
    }
    drop(private);
    Ok(ExitCode::SUCCESS)
}

/// `pipebench all`.
pub fn all(args: AllArgs) -> Result<ExitCode> {
    let ids: Vec<String> = if args.steps.is_empty() {
        catalog::catalog()
            .into_iter()
            .filter(|s| s.kind != StepKind::Experiment)
            .map(|s| s.id.to_string())
            .collect()
    } else {
        args.steps.clone()
    };
    if args.repeats == 0 {
        anyhow::bail!(UsageError("--repeats must be at least 1".into()));
    }
    let limits = Limits::default();
    let mut plans = Vec::new();
    for id in &ids {
        let plan = RunPlan::for_step_id(id, &args.shape.params(), &limits)?;
        for _ in 0..args.repeats {
            plans.push(plan.clone());
        }
    }
    if let Some(warning) = plans.first().and_then(|p| p.warnings.first()) {
        eprintln!("pipebench: warning: {warning}");
    }
    // Shuffled, as the reference's measure.py does, so drift (thermal, noisy
    // neighbours) spreads over all steps instead of biasing the last ones.
    let mut rng = args.out.rng();
    plans.shuffle(&mut rng);
    let total = plans.len();
    let overall = session_bar(total);
    let mut results = Vec::with_capacity(total);
    for plan in &plans {
        if let Some(bar) = &overall {
            bar.set_message(plan.step.clone());
        }
        let result = run_plan(plan, false).with_context(|| format!("step {}", plan.step))?;
        if let Some(bar) = &overall {
            bar.println(format!(
                "{:<22} {:>7.2} GiB/s",
                result.step, result.gib_per_s
            ));
            bar.inc(1);
        } else {
            eprintln!("{:<22} {:>7.2} GiB/s", result.step, result.gib_per_s);
        }
        results.push(result);
    }
    if let Some(bar) = overall {
        bar.finish_and_clear();
    }
    let rows = stats::table(&results);
    let system = SystemInfo::probe();
    if let Some(path) = &args.out.svg {
        let label = if system.virtualization.is_some() {
            format!("this machine ({}, VM)", system.kernel)
        } else {
            format!("this machine ({})", system.kernel)
        };
        let svg = chart::render_svg(&rows, &label)?;
        std::fs::write(path, svg).with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("chart written to {}", path.display());
    }
    if args.out.json {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &json!({ "system": system, "table": rows, "runs": results })
            )?
        );
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
    }
    Ok(ExitCode::SUCCESS)
}

/// `pipebench list`.
pub fn list(args: ListArgs) -> Result<ExitCode> {
    let steps = catalog::catalog();
    if args.json {
        let published = pipebench::plan::published_catalog(&Limits::default());
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
    if args.json {
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
    /// Print the figures and the findings they feed as JSON.
    #[arg(long)]
    json: bool,
}

/// `pipebench wakeup`: the blocking and busy ping-pong, and the findings with them.
pub fn wakeup(args: WakeupArgs) -> Result<ExitCode> {
    let figures = wakeup::measure(None, args.round_trips).map_err(|e| match e {
        wakeup::WakeupError::BadRoundTrips(_) => anyhow::Error::new(UsageError(e.to_string())),
        other => other.into(),
    })?;
    let info = SystemInfo::probe();
    let found = findings::findings(&info, Some(&figures));
    if args.json {
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
    let result = run_plan(&plan, !args.json)?;
    let corrupted = result.corrupted_bytes.unwrap_or(0);
    if args.json {
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

/// `pipebench pages`.
pub fn pages(args: PagesArgs) -> Result<ExitCode> {
    if let Some(text) = &args.address {
        return split_address(text, args.levels, args.json);
    }
    let writer = args.writer()?;
    let report = inspect::inspect(&writer).map_err(|err| match err {
        inspect::InspectError::TooLarge { .. } => anyhow::Error::new(UsageError(err.to_string())),
        other => anyhow::Error::new(other),
    })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    for (i, buffer) in report.buffers.iter().enumerate() {
        println!(
            "buffer {} of {}: {} at {:#x} ({} bytes into its page)",
            i + 1,
            report.buffers.len(),
            ByteSize(buffer.len),
            buffer.address,
            buffer.offset_in_page
        );
        print_walk(&buffer.walk);
        println!(
            "  {} pages of 4 KiB, {} present",
            buffer.pages.len(),
            buffer.present
        );
        if report.frames_visible {
            println!(
                "  {} in transparent huge pages: {} compound heads, {} tails",
                buffer.thp, buffer.heads, buffer.tails
            );
            for page in buffer.pages.iter().filter(|p| p.present).take(4) {
                let flags = page
                    .flags
                    .as_ref()
                    .map_or(String::new(), |f| format!(" [{}]", f.names.join(" ")));
                println!(
                    "    {:#x} -> frame {:#x}{flags}",
                    page.vaddr,
                    page.pfn.unwrap_or(0)
                );
            }
        }
        if let Some(huge) = &buffer.huge_pages {
            println!(
                "  huge pages: {} of {} ({})",
                ByteSize(huge.huge_bytes),
                ByteSize(huge.checked_bytes),
                huge.method
            );
        }
    }
    for limitation in &report.limitations {
        println!("note: {}", limitation.message);
    }
    Ok(ExitCode::SUCCESS)
}

/// `pipebench pages --address ADDR [--levels 4|5]`: the walk to a 4 KiB and to a
/// 2 MiB page.
fn split_address(text: &str, levels: Option<u32>, json: bool) -> Result<ExitCode> {
    let address = paging::parse_address(text).map_err(|e| UsageError(e.to_string()))?;
    let paging = match levels.and_then(Paging::from_levels) {
        Some(paging) => paging,
        // Auto: 48 bits where the address fits them, as Linux hands out by default.
        None if paging::is_canonical(address, Paging::FourLevel) => Paging::FourLevel,
        None => Paging::FiveLevel,
    };
    let note = (levels.is_none() && paging == Paging::FiveLevel).then(|| {
        format!("{address:#018x} is not canonical with 48 bits (bit 47 must be copied into bits 63..48), so it is split for 5-level paging")
    });
    let walks = [PageSize::Small, PageSize::Huge]
        .map(|page| paging::walk(address, paging, page).map_err(|e| UsageError(e.to_string())));
    let [small, huge] = walks;
    let (small, huge) = (small?, huge?);
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "address": format!("{address:#018x}"), "levels": paging.levels(),
                "walks": [small, huge], "note": note,
            }))?
        );
    } else {
        if let Some(note) = note {
            println!("note: {note}");
        }
        print_walk(&small);
        print_walk(&huge);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_walk(walk: &paging::Walk) {
    let steps: Vec<String> = walk
        .levels
        .iter()
        .map(|l| format!("{} {}", l.name, l.index))
        .collect();
    let page = match walk.page {
        PageSize::Small => "4 KiB",
        PageSize::Huge => "2 MiB",
    };
    println!(
        "{:#018x}: {} / offset {:#x} (a {page} page, {}-level paging)",
        walk.address,
        steps.join(" / "),
        walk.offset,
        walk.paging.levels()
    );
}

/// Seconds per sweep run when neither --bytes nor --seconds is given.
const SWEEP_SECONDS: f64 = 2.0;

/// `pipebench sweep STEP --pipe-size VALUES | --buf-size VALUES`.
pub fn sweep(args: SweepArgs) -> Result<ExitCode> {
    let (param, text) = match (&args.pipe_size, &args.buf_size) {
        (Some(text), None) => (SweepParam::PipeSize, text),
        (None, Some(text)) => (SweepParam::BufSize, text),
        _ => unreachable!("clap requires exactly one of --pipe-size and --buf-size"),
    };
    let values = sweep::parse_values(text).map_err(|e| UsageError(e.to_string()))?;
    let limits = Limits::default();
    let base = RunParams {
        bytes: Some(args.bytes.unwrap_or(ByteSize(limits.max_bytes))),
        seconds: match (args.bytes, args.seconds) {
            (None, None) => Some(SWEEP_SECONDS),
            (_, seconds) => seconds,
        },
        ..RunParams::default()
    };
    let mut rng = args.out.rng();
    let plan = SweepPlan::new(
        &args.step,
        param,
        &values,
        &base,
        args.repeats,
        &limits,
        &mut rng,
    )
    .map_err(|e| UsageError(e.to_string()))?;
    if let Some(warning) = plan.runs.first().and_then(|(_, p)| p.warnings.first()) {
        eprintln!("pipebench: warning: {warning}");
    }
    let total = plan.runs.len();
    let mut results = Vec::with_capacity(total);
    for (n, (index, run)) in plan.runs.iter().enumerate() {
        let result = run_plan(run, false)
            .with_context(|| format!("{} = {}", param.name(), plan.values[*index]))?;
        eprintln!(
            "run {:>3}/{total}  {} {:>8}  {:>7.2} GiB/s",
            n + 1,
            param.name(),
            plan.values[*index].to_string(),
            result.gib_per_s
        );
        results.push((*index, result));
    }
    let points = plan.points(&results);
    if let Some(path) = &args.out.svg {
        let svg = sweep::render_svg(&plan.step, param, &points)?;
        std::fs::write(path, svg).with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("chart written to {}", path.display());
    }
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    if args.out.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "step": plan.step,
                "param": param.name(),
                "command": command,
                "system": SystemInfo::probe(),
                "points": points,
            }))?
        );
    } else if args.out.csv {
        print!("{}", sweep::render_csv(param, &points));
    } else {
        println!(
            "{} over {}, {} run(s) per value: {command}",
            plan.step,
            param.label(),
            args.repeats
        );
        println!(
            "{:>10}  {:>8}  {:>8}  {:>8}",
            param.name(),
            "median",
            "min",
            "max"
        );
        for p in &points {
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
    Ok(ExitCode::SUCCESS)
}

/// `pipebench ipc`.
#[derive(Debug, Args)]
pub struct IpcArgs {
    /// Mechanisms or experiments to run (default: all; `--list` shows them).
    mechanisms: Vec<String>,
    /// Bytes per run.
    #[arg(long, default_value = "200MiB")]
    bytes: ByteSize,
    /// Bytes per call (default: 64KiB; msgmax for the message queue; 1KiB for the
    /// I/O experiments).
    #[arg(long, value_name = "SIZE")]
    chunk: Option<ByteSize>,
    /// Runs per mechanism.
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// Directory for files and FIFOs (default: the temp dir unless it is tmpfs,
    /// else ./target); O_DIRECT needs a disk file system such as ext4 or xfs.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// TCP port on 127.0.0.1 for the TCP mechanisms (default: any free port).
    #[arg(long)]
    port: Option<u16>,
    #[command(flatten)]
    out: SessionArgs,
    /// List the mechanisms (copies, kernel functions, survey figures) and exit.
    #[arg(long)]
    list: bool,
}

/// `pipebench ipc`.
pub fn ipc(args: IpcArgs) -> Result<ExitCode> {
    if args.list {
        let table = ipc::mechanisms();
        if args.out.json {
            println!("{}", serde_json::to_string_pretty(&table)?);
        } else {
            for m in table {
                println!(
                    "{:<14} {:>6}  {}\n{:<22}{}",
                    m.id,
                    m.copies.map_or("-".into(), |c| format!("{c} cp")),
                    m.title,
                    "",
                    m.copy_path
                );
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    let order = ipc::matrix::plan(&args.mechanisms, args.repeats, args.out.seed)?;
    // What a killed run of this user left (files, FIFOs, shared memory, queues)
    // goes first.
    let extra: Vec<&Path> = args.dir.as_deref().into_iter().collect();
    rundir::sweep(&extra);
    let received = Arc::new(AtomicU64::new(0));
    let params = ipc::IpcParams {
        bytes: args.bytes,
        chunk: args.chunk,
        dir: args.dir.clone(),
        port: args.port,
        progress: Some(Arc::clone(&received)),
        ..Default::default()
    };
    let bar = session_bar(order.len());
    let finished = AtomicBool::new(false);
    let results = std::thread::scope(|scope| {
        // On a terminal, the bar also says how far the current run has got:
        // large runs of the slow mechanisms take seconds each.
        if let Some(bar) = &bar {
            scope.spawn(|| {
                while !finished.load(Ordering::Relaxed) {
                    if let Some(id) = order.get(bar.position() as usize) {
                        let total = ipc::harness::effective_bytes(id, args.bytes.bytes());
                        let bytes = received.load(Ordering::Relaxed).min(total);
                        bar.set_message(format!(
                            "{id}: {} of {}",
                            HumanBytes(bytes),
                            HumanBytes(total)
                        ));
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
            });
        }
        let results = ipc::matrix::run_all(&order, &params, |r| {
            if let Some(bar) = &bar {
                bar.println(format!(
                    "{:<14} {:>9.1} ms {:>7.2} GiB/s",
                    r.mechanism, r.elapsed_ms, r.gib_per_s
                ));
                bar.inc(1);
            }
        });
        finished.store(true, Ordering::Relaxed);
        results
    })?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let rows = ipc::matrix::table(&results);
    let system = SystemInfo::probe();
    if let Some(path) = &args.out.svg {
        let label = format!(
            "this machine ({}{})",
            system.kernel,
            if system.virtualization.is_some() {
                ", VM"
            } else {
                ""
            }
        );
        let svg = ipc::matrix::render_svg(&rows, &label)?;
        std::fs::write(path, svg).with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("chart written to {}", path.display());
    }
    let dir = params.dir.clone().unwrap_or_else(ipc::harness::default_dir);
    if args.out.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "system": system, "dir": dir, "table": rows, "runs": results,
            }))?
        );
    } else if args.out.csv {
        print!("{}", ipc::matrix::render_csv(&rows));
    } else {
        println!(
            "{} x {} runs of {} on {} ({}), files in {} ({})",
            rows.len(),
            args.repeats,
            args.bytes,
            system.cpu_model,
            system.kernel,
            dir.display(),
            ipc::harness::filesystem(&dir).unwrap_or_else(|| "unknown".into()),
        );
        print!("{}", ipc::matrix::render_text(&rows));
        for r in &results {
            if let Some(cow) = &r.cow {
                println!(
                    "cow-fork: the child's minor faults went {} -> {} writing {} pages; the parent {} the original",
                    cow.child_faults_before,
                    cow.child_faults_after,
                    cow.pages,
                    if cow.parent_sees_original { "still sees" } else { "does NOT see" },
                );
                break;
            }
        }
        let mut notes: Vec<&String> = results.iter().flat_map(|r| &r.notes).collect();
        notes.sort();
        notes.dedup();
        for note in notes {
            println!("note: {note}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
