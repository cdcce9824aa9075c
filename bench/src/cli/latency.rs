//! `pipebench latency`: how long one message takes, mechanism by mechanism.

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use indicatif::ProgressBar;
use rand::seq::SliceRandom;
use serde_json::json;

use pipebench::engine::event::{Event, Finished};
use pipebench::engine::job::{Job, Observer, Stop};
use pipebench::latency::{
    self, LatencyConfig, LatencyError, LatencyMechanism, LatencyResult, Mode,
};
use pipebench::machine::system::SystemInfo;
use pipebench::process::rundir;

use super::report::{self, print_json, write_chart};
use super::{context, finished, styled_bar, SessionArgs};

/// `pipebench latency`.
#[derive(Debug, Args)]
pub struct LatencyArgs {
    /// Mechanisms to run (default: all; `--list` shows them).
    mechanisms: Vec<String>,
    /// Message sizes: a list `1,64,4KiB` or a doubling range `64..64KiB`.
    #[arg(long, default_value = latency::DEFAULT_SIZES, value_name = "SIZES")]
    sizes: String,
    /// The ping end's CPU and the pong end's, `A,B` (the same one twice for one
    /// CPU; default: the two the pipe steps use, the first two this process
    /// may use).
    #[arg(long, value_name = "A,B", conflicts_with = "pair")]
    cpus: Option<String>,
    /// Choose the two CPUs by how they sit: `separate-cores`, `smt-siblings`
    /// (two hyperthreads of one core) or `same-cpu`.
    #[arg(long, value_name = "PLACEMENT", value_parser = parse_placement)]
    pair: Option<latency::pair::Placement>,
    /// Round trips timed per configuration (a tenth more run first, untimed).
    #[arg(long, default_value_t = latency::DEFAULT_ROUND_TRIPS)]
    round_trips: u32,
    /// How the ends wait: blocking, busy or both.
    #[arg(long, default_value = "both")]
    mode: String,
    #[command(flatten)]
    out: SessionArgs,
    /// List the mechanisms and how each waits, then exit.
    #[arg(long)]
    list: bool,
}

/// The configurations asked for, in shuffled order, and those that do not
/// exist with why.
/// Configurations a command line left out, each with why.
type Skipped = Vec<(String, String)>;

fn plan(args: &LatencyArgs) -> Result<(Vec<LatencyConfig>, Skipped), LatencyError> {
    let mechanisms = match args.mechanisms.is_empty() {
        true => LatencyMechanism::ALL.to_vec(),
        false => args
            .mechanisms
            .iter()
            .map(|m| LatencyMechanism::parse(m))
            .collect::<Result<_, _>>()?,
    };
    let sizes = latency::parse_sizes(&args.sizes)?;
    let modes = Mode::parse_list(&args.mode)?;
    let cpus = match (&args.cpus, args.pair) {
        (Some(text), _) => latency::parse_cpus(text)?,
        (None, Some(want)) => latency::cpus_placed(want)?,
        (None, None) => latency::default_cpus(),
    };
    if !latency::ROUND_TRIPS.contains(&args.round_trips) {
        return Err(LatencyError::BadRoundTrips {
            round_trips: args.round_trips,
        });
    }
    let mut configs = Vec::new();
    let mut skipped = Vec::new();
    let mut first_refusal = None;
    for mechanism in mechanisms {
        for &mode in &modes {
            for &size in &sizes {
                let config = LatencyConfig {
                    mechanism,
                    mode,
                    size,
                    cpus,
                    round_trips: args.round_trips,
                };
                match config.check() {
                    Ok(()) => configs.push(config),
                    Err(err) if err.is_not_applicable() => {
                        skipped.push((
                            format!("{} {} {} B", mechanism.id(), mode.as_str(), size),
                            err.to_string(),
                        ));
                        first_refusal.get_or_insert(err);
                    }
                    Err(err) => return Err(err),
                }
            }
        }
    }
    // Nothing left to run: what was asked for does not exist here, and says why.
    match (configs.is_empty(), first_refusal) {
        (true, Some(err)) => Err(err),
        _ => Ok((configs, skipped)),
    }
}

/// `--pair`: one of the placements a pair can be chosen by.
fn parse_placement(text: &str) -> Result<latency::pair::Placement, String> {
    use latency::pair::Placement;
    [
        Placement::SeparateCores,
        Placement::SmtSiblings,
        Placement::SameCpu,
    ]
    .into_iter()
    .find(|p| p.as_str() == text)
    .ok_or_else(|| format!("`{text}`: use separate-cores, smt-siblings or same-cpu"))
}

/// The terminal's observer of a latency run: one bar over every round trip of
/// the session.
struct LatencyBar {
    bar: Option<ProgressBar>,
    before: u64,
}

impl Observer for LatencyBar {
    fn event(&mut self, event: Event) {
        if let (Some(bar), Event::LatencyProgress(p)) = (&self.bar, event) {
            bar.set_position(self.before + p.done);
        }
    }

    fn wait(&mut self, _timeout: Duration) -> Option<Stop> {
        // Ctrl-C kills the process; the ends die with it (PR_SET_PDEATHSIG).
        None
    }
}

/// `pipebench latency`.
pub fn latency(args: LatencyArgs) -> Result<ExitCode> {
    if args.list {
        print_list(args.out.json)?;
        return Ok(ExitCode::SUCCESS);
    }
    let (mut configs, skipped) = plan(&args)?;
    // Shuffled, so a drift of the machine's speed spreads over every mechanism.
    configs.shuffle(&mut args.out.rng());
    // What a killed run of this user left (a FIFO folder, a noted queue) goes first.
    rundir::remove_dead(&[]);
    let mut results = run_all(&configs)?;
    results.sort_by(|a, b| (&a.mechanism, a.mode, a.size).cmp(&(&b.mechanism, b.mode, b.size)));
    let clock = clock_overhead(&results);
    if let Some(path) = &args.out.svg {
        write_svg(path, &results)?;
    }
    if args.out.json {
        print_json(&json!({
            "results": results,
            "skipped": skipped.iter().map(|(what, why)| json!({"configuration": what, "reason": why})).collect::<Vec<_>>(),
            "clock": clock,
        }))?;
    } else if args.out.csv {
        print_csv(&results);
    } else {
        print_text(&results, clock.as_ref(), &skipped);
    }
    Ok(ExitCode::SUCCESS)
}

/// `--list`: each mechanism and how it waits in each mode.
fn print_list(json: bool) -> Result<()> {
    report::print_list(latency::mechanisms(), json, |m| {
        println!("{:<17} {}", m.id, m.title);
        println!(
            "{:<19}blocking: {}",
            "",
            m.blocking.or(m.missing_mode).unwrap_or("-")
        );
        println!("{:<19}busy:     {}", "", m.busy.unwrap_or("-"));
    })
}

/// A configuration as the bar and the errors name it.
fn named(config: &LatencyConfig) -> String {
    format!(
        "{} {} {} B",
        config.mechanism.id(),
        config.mode.as_str(),
        config.size
    )
}

/// Runs each configuration in turn, one bar over all their round trips.
fn run_all(configs: &[LatencyConfig]) -> Result<Vec<LatencyResult>> {
    let context = context(None)?;
    let total: u64 = configs.iter().map(|c| u64::from(c.round_trips)).sum();
    let bar = std::io::stderr()
        .is_terminal()
        .then(|| styled_bar(total, "round trips [{bar:30}] {pos}/{len} {msg}"));
    let mut observer = LatencyBar { bar, before: 0 };
    let mut results: Vec<LatencyResult> = Vec::new();
    for config in configs {
        if let Some(bar) = &observer.bar {
            bar.set_message(named(config));
        }
        let last = Job::Latency(config.clone()).run(&context, &mut observer);
        let record = finished(last, "run", |done| match done {
            Finished::Latency(record) => Ok(record),
            other => Err(other),
        })
        .with_context(|| named(config))?;
        results.push(record.result);
        observer.before += u64::from(config.round_trips);
    }
    if let Some(bar) = observer.bar.take() {
        bar.finish_and_clear();
    }
    Ok(results)
}

/// `--svg`: the round trips' chart, titled with this machine and the CPUs.
fn write_svg(path: &Path, results: &[LatencyResult]) -> Result<()> {
    let system = SystemInfo::probe();
    let title = format!(
        "Round trips, this machine ({}, CPUs {:?}, {})",
        system.kernel,
        results.first().map(|r| r.cpus),
        results.first().map_or("", |r| r.placement.words())
    );
    write_chart(path, &latency::chart::render_svg(results, &title))
}

/// `--csv`: one line per configuration.
fn print_csv(results: &[LatencyResult]) {
    println!("mechanism,mode,size,cpus,placement,count,p50,p90,p99,p999,max,ping_cpu_ns,pong_cpu_ns,ping_sleeps,pong_sleeps");
    for r in results {
        println!(
            "{},{},{},{}:{},{},{},{},{},{},{},{},{:.0},{:.0},{:.3},{:.3}",
            r.mechanism,
            r.mode.as_str(),
            r.size,
            r.cpus[0],
            r.cpus[1],
            r.placement.as_str(),
            r.count,
            r.p50,
            r.p90,
            r.p99,
            r.p999,
            r.max,
            r.ping_cpu_ns,
            r.pong_cpu_ns,
            r.ping_sleeps,
            r.pong_sleeps
        );
    }
}

/// The text table, the CPUs, what the clock cost, and what was skipped.
fn print_text(results: &[LatencyResult], clock: Option<&serde_json::Value>, skipped: &Skipped) {
    println!(
        "{:<17} {:<8} {:>8} {:>9} {:>9} {:>9} {:>9} {:>10} {:>7} {:>10} {:>10} {:>6}",
        "mechanism",
        "mode",
        "size",
        "p50 ns",
        "p90 ns",
        "p99 ns",
        "p99.9 ns",
        "max ns",
        "count",
        "ping CPU",
        "pong CPU",
        "sleeps"
    );
    for r in results {
        println!(
            "{:<17} {:<8} {:>8} {:>9} {:>9} {:>9} {:>9} {:>10} {:>7} {:>7.0} ns {:>7.0} ns {:>6.2}",
            r.mechanism,
            r.mode.as_str(),
            pipebench::size::ByteSize(r.size).to_string(),
            r.p50,
            r.p90,
            r.p99,
            r.p999,
            r.max,
            r.count,
            r.ping_cpu_ns,
            r.pong_cpu_ns,
            r.ping_sleeps + r.pong_sleeps,
        );
    }
    println!("(ns per round trip; CPU = user + system time per round trip at each end; sleeps = voluntary context switches per round trip, both ends)");
    if let Some(r) = results.first() {
        println!(
            "CPUs {} and {}: {}",
            r.cpus[0],
            r.cpus[1],
            r.placement.words()
        );
    }
    if let Some(clock) = clock {
        print_clock(clock);
    }
    for (what, why) in skipped {
        println!("skipped {what}: {why}");
    }
}

/// What timing the round trips cost, from [`clock_overhead`].
fn print_clock(clock: &serde_json::Value) {
    println!(
        "clock: timing a round trip added {:.1} ns, {:.2}% of the fastest median ({} {} {} B, {} ns); measured, timed blocks of round trips against untimed ones beside them",
        clock["clock_ns"].as_f64().unwrap_or(0.0),
        clock["share_of_fastest_p50"].as_f64().unwrap_or(0.0) * 100.0,
        clock["fastest"]["mechanism"].as_str().unwrap_or(""),
        clock["fastest"]["mode"].as_str().unwrap_or(""),
        clock["fastest"]["size"],
        clock["fastest"]["p50"],
    );
    println!(
        "timing each round trip added {:.1}% to its mean there (untimed blocks averaged {:.0} ns); one read alone costs {:.1} ns, issued while the message travels",
        clock["fastest_timing_overhead"].as_f64().unwrap_or(0.0) * 100.0,
        clock["fastest_batch_mean_ns"].as_f64().unwrap_or(0.0),
        clock["clock_read_ns"].as_f64().unwrap_or(0.0),
    );
}

/// What timing costs against the fastest median measured: what it added to
/// that configuration's round trips, measured there (timed blocks against
/// untimed ones), and what one read costs alone.
fn clock_overhead(results: &[LatencyResult]) -> Option<serde_json::Value> {
    let fastest = results.iter().min_by_key(|r| r.p50)?;
    let clock_read_ns = results
        .iter()
        .map(|r| r.clock_read_ns)
        .fold(f64::INFINITY, f64::min);
    Some(json!({
        "clock_ns": fastest.clock_ns,
        "share_of_fastest_p50": fastest.clock_ns / fastest.p50.max(1) as f64,
        "clock_read_ns": clock_read_ns,
        "fastest_timing_overhead": fastest.timing_overhead,
        "fastest_batch_mean_ns": fastest.batch_mean_ns,
        "fastest": {"mechanism": fastest.mechanism, "mode": fastest.mode, "size": fastest.size, "p50": fastest.p50},
    }))
}
