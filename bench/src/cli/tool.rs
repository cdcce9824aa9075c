//! `pipebench tool NAME [--as writer|reader] [--bytes SIZE] [--json]`: a real
//! program of the vetted table as one end of a pipe, pipebench's end on the other.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use clap::Args;

use pipebench::engine::tool::{self, ToolError, ToolJob, DEFAULT_BYTES};
use pipebench::size::ByteSize;
use pipebench::steps::tools::ToolEnd;

use super::{context, JsonFlag};

/// How long a tool run may take before it is killed.
const TIMEOUT: Duration = Duration::from_secs(120);

/// `pipebench tool`'s flags.
#[derive(Debug, Args)]
pub struct ToolArgs {
    /// The tool's id (`yes`, `cat`, `dd`, `dd-1m`, `pv`, `tee`, `head`, `pipebench`).
    name: String,
    /// Which end of the pipe the tool is; pipebench is the other.
    #[arg(long = "as", value_enum, default_value = "writer")]
    side: ToolEnd,
    /// Bytes to move through the pipe (1MiB to 1GiB).
    #[arg(long, value_name = "SIZE", default_value_t = ByteSize(DEFAULT_BYTES))]
    bytes: ByteSize,
    /// Count the tool's data calls in the kernel (`syscalls:sys_enter_*`): its
    /// write or read size and whether it splices. Slows every system call of the
    /// machine while it runs, so the figure is lower.
    #[arg(long)]
    trace_syscalls: bool,
    #[command(flatten)]
    out: JsonFlag,
}

/// `pipebench tool`.
pub fn tool(args: ToolArgs) -> Result<ExitCode> {
    let job = ToolJob {
        tool: args.name,
        side: args.side,
        bytes: args.bytes.bytes(),
        trace_syscalls: args.trace_syscalls,
        timeout: TIMEOUT,
    };
    let result = tool::run_to_end(&job, &context(None)?)?;
    if args.out.json {
        println!("{}", serde_json::to_string_pretty(&result)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{} as the {}: {} in {:.1} ms, {:.2} GiB/s ({})",
        result.tool,
        result.side.name(),
        ByteSize(result.bytes),
        result.elapsed_ms,
        result.gib_per_s,
        result.argv.join(" ")
    );
    let Some(c) = result.counts.ends.get(result.side.name()) else {
        anyhow::bail!("the tool's result has no counts for its end");
    };
    println!(
        "  the tool: {} context switches ({} voluntary), {} page faults",
        c.context_switches, c.voluntary_switches, c.page_faults
    );
    if let Some(calls) = &result.calls {
        let traced = c.syscalls_traced.clone().unwrap_or_default();
        let listed: Vec<String> = traced
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(call, n)| format!("{call} {n}"))
            .collect();
        println!(
            "  its data calls: {}; {} on the pipe, {} per call{}",
            listed.join(", "),
            calls.on_pipe,
            calls
                .bytes_per_call
                .map_or("-".into(), |b| ByteSize(b.round() as u64).to_string()),
            if calls.zero_copy { ", zero-copy" } else { "" }
        );
    }
    for missing in &result.counts.missing {
        println!("  not counted: {}", missing.message);
    }
    for warning in &result.warnings {
        println!("  warning: {warning}");
    }
    Ok(ExitCode::SUCCESS)
}

/// The error for an unusable tool request is exit 2.
pub fn is_input_error(err: &anyhow::Error) -> bool {
    err.downcast_ref::<ToolError>()
        .is_some_and(ToolError::is_input_error)
}
