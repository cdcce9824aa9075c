//! `pipebench compare A B`: two configurations head to head in interleaved,
//! quiet pairs, and a verdict that says how sure it is.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use clap::{Args, Parser};
use indicatif::ProgressBar;

use pipebench::engine::compare::{CompareJob, Contender};
use pipebench::engine::event::Event;
use pipebench::engine::job::{Observer, Stop};
use pipebench::machine::state;
use pipebench::size::ByteSize;
use pipebench::stats::verdict::Verdict;
use pipebench::steps::plan::{Limits, RunParams, RunPlan, SWEEP_SECONDS};

use super::{context, session_bar, RunFlags, Shape, SweepShape, UsageError};

/// How long the machine is watched before a comparison.
const PRECHECK: Duration = Duration::from_millis(300);

/// `pipebench compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The first configuration: a step id, or a step id with its own run flags
    /// in one argument, such as "write-read --pipe-size 1MiB".
    a: String,
    /// The second configuration, written the same way.
    b: String,
    /// Pairs of runs (each pair one run of A and one of B, in the order
    /// A B B A A B B A ...); at least 6, the fewest a 95% interval can come from.
    #[arg(long, default_value_t = pipebench::stats::DEFAULT_PAIRS)]
    pairs: usize,
    /// Flags both sides take (a side's own flags win).
    #[command(flatten)]
    shape: RunFlags<SweepShape>,
    /// Print the comparison as JSON (`ratio`, `ci_low`, `ci_high`, `pairs`,
    /// `verdict`, `method`, `design`, `min_n`, every run's GiB/s, the sentence).
    #[arg(long)]
    json: bool,
}

/// One side as written on the command line: a step id and its own flags.
#[derive(Debug, Parser)]
#[command(name = "configuration", no_binary_name = true)]
struct Configuration {
    step: String,
    #[command(flatten)]
    shape: RunFlags<Shape>,
}

/// `given`'s parameters, each falling back to `shared`'s.
fn merged(given: &RunParams, shared: &RunParams) -> RunParams {
    RunParams {
        bytes: given.bytes.or(shared.bytes),
        buf_size: given.buf_size.or(shared.buf_size),
        pipe_size: given.pipe_size.or(shared.pipe_size),
        seconds: given.seconds.or(shared.seconds),
        writer_cpu: given.writer_cpu.or(shared.writer_cpu),
        reader_cpu: given.reader_cpu.or(shared.reader_cpu),
        verify: given.verify.or(shared.verify),
        quiet: given.quiet.or(shared.quiet),
        profile: given.profile.or(shared.profile),
        counts: given.counts.or(shared.counts),
        trace_syscalls: given.trace_syscalls.or(shared.trace_syscalls),
        huge_pages: given.huge_pages.or(shared.huge_pages),
    }
}

/// Parses one side (`"write-read --pipe-size 1MiB"`) into a validated run.
fn contender(text: &str, shared: &RunParams, limits: &Limits) -> Result<Contender> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let configuration = Configuration::try_parse_from(&words)
        .map_err(|e| UsageError(format!("configuration `{text}`: {}", e.render())))?;
    let mut params = merged(&configuration.shape.params, shared);
    // Like a sweep's runs: a time budget per run unless bytes are given, so a
    // comparison of ten pairs takes tens of seconds rather than minutes.
    if params.bytes.is_none() && params.seconds.is_none() {
        params.seconds = Some(SWEEP_SECONDS);
    }
    params.bytes = Some(params.bytes.unwrap_or(ByteSize(limits.max_bytes)));
    let plan = RunPlan::for_step_id(&configuration.step, &params, limits)?;
    Ok(Contender {
        label: words.join(" "),
        plan,
    })
}

/// The terminal's view of a comparison: "run 3/10 [=====   ] A 12.3 GiB/s".
struct CompareBar(Option<ProgressBar>);

impl Observer for CompareBar {
    fn event(&mut self, event: Event) {
        let (Event::Leg(leg), Some(bar)) = (&event, &self.0) else {
            return;
        };
        bar.set_length(leg.of as u64);
        bar.set_position(leg.index as u64);
        let so_far = leg.comparison.as_ref().map_or(String::new(), |c| {
            match (c.ratio, c.ci_low, c.ci_high) {
                (Some(r), Some(low), Some(high)) => {
                    format!(", so far {r:.2}x ({low:.2} to {high:.2})")
                }
                _ => String::new(),
            }
        });
        bar.set_message(format!(
            "{:?} {:.2} GiB/s{so_far}",
            leg.side, leg.result.gib_per_s
        ));
    }

    fn wait(&mut self, timeout: Duration) -> Option<Stop> {
        std::thread::sleep(timeout);
        None
    }
}

impl Drop for CompareBar {
    fn drop(&mut self) {
        if let Some(bar) = self.0.take() {
            bar.finish_and_clear();
        }
    }
}

/// `pipebench compare A B [--pairs N] [--json]`; exits 0 whatever the verdict.
pub fn compare(args: CompareArgs) -> Result<ExitCode> {
    let limits = Limits::default();
    let shared = &args.shape.params;
    let a = contender(&args.a, shared, &limits)?;
    let b = contender(&args.b, shared, &limits)?;
    let cpus: Vec<usize> = [&a.plan, &b.plan]
        .iter()
        .flat_map(|plan| [plan.writer.common.cpu, plan.reader.common.cpu])
        .flatten()
        .collect();
    let mut job = CompareJob::new(a, b, args.pairs).map_err(|e| UsageError(e.to_string()))?;
    // A short look at the machine first: what would widen the interval, and
    // what to do about it, before minutes go into the pairs.
    let advice = state::precheck(&cpus, PRECHECK);
    match advice.is_empty() {
        true => eprintln!("machine check: nothing seen that would make these runs noisy"),
        false => {
            for line in &advice {
                eprintln!("machine check: {line}");
            }
        }
    }
    let mut bar = CompareBar(session_bar(job.total()));
    let end = job.run(&context(None)?, &mut bar);
    drop(bar);
    let report = match end {
        Some(Event::Verdict(report)) => report,
        Some(Event::Error(failure)) => return Err(failure.into()),
        other => anyhow::bail!("the comparison ended early ({other:?})"),
    };
    if args.json {
        let mut value = serde_json::to_value(&report)?;
        value["precheck"] = serde_json::json!(advice);
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        for warning in &report.warnings {
            eprintln!("pipebench: warning: {warning}");
        }
        println!("{}", report.judgement.sentence);
        let verdict = match report.judgement.verdict {
            Verdict::Faster | Verdict::Slower => "resolved",
            Verdict::NotResolved => "not resolved",
            Verdict::TooFew => "too few pairs",
        };
        println!(
            "  {verdict}: Hodges-Lehmann ratio of quiet runs, 95% Wilcoxon signed-rank interval \
             over the pairs' log-ratios; GiB/s = 2^30 bytes per second"
        );
    }
    Ok(ExitCode::SUCCESS)
}
