//! `pipebench shared-pipe --writers 1,2,4 --readers 1,2 --msg-size 4KiB,64KiB
//! [--bytes SIZE] [--json]`: many writers and readers on one pipe.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use clap::Args;

use pipebench::engine::event::{Event, Finished};
use pipebench::engine::job::Job;
use pipebench::engine::shared_pipe::{SharedPipeJob, DEFAULT_BYTES};
use pipebench::engine::sweep::parse_values;
use pipebench::size::ByteSize;

use super::{context, JsonFlag, Terminal, UsageError};

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
    let msg_sizes = parse_values(&args.msg_size)
        .map_err(|e| UsageError(format!("--msg-size {}: {e}", args.msg_size)))?;
    let job = SharedPipeJob {
        writers: counts("--writers", &args.writers)?,
        readers: counts("--readers", &args.readers)?,
        msg_sizes: msg_sizes.iter().map(|s| s.bytes()).collect(),
        bytes: args.bytes.bytes(),
        timeout: POINT_TIMEOUT,
    };
    job.check().map_err(|e| UsageError(e.to_string()))?;
    let points = job.writers.len() * job.readers.len() * job.msg_sizes.len();
    let mut terminal = Terminal::new(!args.out.json, job.bytes * points as u64, "shared-pipe");
    let result = match Job::SharedPipe(job).run(&context(None)?, &mut terminal) {
        Some(Event::Result(Finished::SharedPipe(result))) => result,
        Some(Event::Error(failure)) => return Err(failure.into()),
        other => anyhow::bail!("the sweep ended without a result ({other:?})"),
    };
    drop(terminal);
    if args.out.json {
        println!("{}", serde_json::to_string_pretty(&result)?);
        return Ok(ExitCode::SUCCESS);
    }
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
    for warning in &result.warnings {
        println!("warning: {warning}");
    }
    Ok(ExitCode::SUCCESS)
}
