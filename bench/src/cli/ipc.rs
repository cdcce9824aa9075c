//! `pipebench ipc`: the zero-copy lab beyond pipes.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use indicatif::{HumanBytes, ProgressBar};
use serde_json::json;

use pipebench::ipc;
use pipebench::machine::system::SystemInfo;
use pipebench::output;
use pipebench::output::counts::render_text;
use pipebench::process::rundir;
use pipebench::size::ByteSize;

use super::report::{self, machine_label, print_json, write_chart};
use super::{session_bar, SessionArgs};

/// `pipebench ipc`.
#[derive(Debug, Args)]
pub struct IpcArgs {
    /// Mechanisms or experiments to run (default: all; `--list` shows them).
    mechanisms: Vec<ipc::Mechanism>,
    /// Bytes per run (default: the survey's 200 MiB).
    #[arg(long, value_name = "SIZE", default_value_t = ByteSize(ipc::DEFAULT_BYTES))]
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
    /// Leave the kernel's events uncounted in the ends (wakeups, IPIs, TLB
    /// flushes): each end's counts then lack them and say why; calls, faults
    /// and context switches are counted anyway, at no cost.
    #[arg(long)]
    no_counts: bool,
    #[command(flatten)]
    out: SessionArgs,
    /// List the mechanisms (copies, kernel functions, survey figures) and exit.
    #[arg(long)]
    list: bool,
}

/// `pipebench ipc`.
pub fn ipc(args: IpcArgs) -> Result<ExitCode> {
    if args.list {
        print_list(args.out.json)?;
        return Ok(ExitCode::SUCCESS);
    }
    let order = ipc::matrix::plan(&args.mechanisms, args.repeats, args.out.seed)?;
    // What a killed run of this user left (files, FIFOs, shared memory, queues)
    // goes first.
    let extra: Vec<&Path> = args.dir.as_deref().into_iter().collect();
    rundir::remove_dead(&extra);
    let received = Arc::new(AtomicU64::new(0));
    let params = ipc::IpcParams {
        bytes: args.bytes,
        chunk: args.chunk,
        dir: args.dir.clone(),
        port: args.port,
        progress: Some(Arc::clone(&received)),
        no_counts: args.no_counts,
        ..Default::default()
    };
    let results = run_matrix(&args, &order, &params, &received)?;
    let rows = output::ipc_matrix::table(&results);
    let system = SystemInfo::probe();
    if let Some(path) = &args.out.svg {
        write_chart(
            path,
            &output::ipc_matrix::render_svg(&rows, &machine_label(&system))?,
        )?;
    }
    let dir = params.dir.clone().unwrap_or_else(ipc::harness::default_dir);
    if args.out.json {
        print_json(&json!({
            "system": system, "dir": dir, "table": rows, "runs": results,
        }))?;
    } else if args.out.csv {
        print!("{}", output::ipc_matrix::render_csv(&rows));
    } else {
        print_text(&args, &system, &dir, &rows, &results);
    }
    Ok(ExitCode::SUCCESS)
}

/// `--list`: each mechanism, its copies, and where they happen.
fn print_list(json: bool) -> Result<()> {
    report::print_list(ipc::mechanisms(), json, |m| {
        println!(
            "{:<14} {:>6}  {}\n{:<22}{}",
            m.id,
            m.copies.map_or("-".into(), |c| format!("{c} cp")),
            m.title,
            "",
            m.copy_path
        );
    })
}

/// Runs every mechanism in `order`, with a bar on a terminal that also says how
/// far the current run has got (`received` counts its bytes).
fn run_matrix(
    args: &IpcArgs,
    order: &[ipc::Mechanism],
    params: &ipc::IpcParams,
    received: &AtomicU64,
) -> Result<Vec<ipc::IpcResult>> {
    let bar = session_bar(order.len());
    let finished = AtomicBool::new(false);
    let results = std::thread::scope(|scope| {
        // Large runs of the slow mechanisms take seconds each.
        if let Some(bar) = &bar {
            scope.spawn(|| show_current_run(bar, order, args.bytes, received, &finished));
        }
        let results = ipc::matrix::run_all(
            order,
            params,
            |r| {
                if let Some(bar) = &bar {
                    bar.println(format!(
                        "{:<14} {:>9.1} ms {:>7.2} GiB/s",
                        r.mechanism, r.elapsed_ms, r.gib_per_s
                    ));
                    bar.inc(1);
                }
            },
            |mechanism, why| {
                eprintln!("{mechanism}: skipped: {why}");
                if let Some(bar) = &bar {
                    bar.inc(args.repeats as u64);
                }
            },
        );
        finished.store(true, Ordering::Relaxed);
        results
    })?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(results)
}

/// Until `finished`, puts the current run's bytes so far in the bar's message.
fn show_current_run(
    bar: &ProgressBar,
    order: &[ipc::Mechanism],
    bytes: ByteSize,
    received: &AtomicU64,
    finished: &AtomicBool,
) {
    while !finished.load(Ordering::Relaxed) {
        if let Some(id) = order.get(bar.position() as usize) {
            let total = ipc::harness::effective_bytes(*id, bytes.bytes());
            let bytes = received.load(Ordering::Relaxed).min(total);
            bar.set_message(format!(
                "{id}: {} of {}",
                HumanBytes(bytes),
                HumanBytes(total)
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The text report: the session, the table, the copy-on-write check, each
/// mechanism's counts, and the notes once each.
fn print_text(
    args: &IpcArgs,
    system: &SystemInfo,
    dir: &Path,
    rows: &[output::ipc_matrix::IpcRow],
    results: &[ipc::IpcResult],
) {
    println!(
        "{} x {} runs of {} on {} ({}), files in {} ({})",
        rows.len(),
        args.repeats,
        args.bytes,
        system.cpu_model,
        system.kernel,
        dir.display(),
        ipc::harness::filesystem(dir).unwrap_or_else(|| "unknown".into()),
    );
    print!("{}", output::ipc_matrix::render_text(rows));
    if let Some(cow) = results.iter().find_map(|r| r.cow.as_ref()) {
        println!(
            "cow-fork: the child's minor faults went {} -> {} writing {} pages; the parent {} the original",
            cow.child_faults_before,
            cow.child_faults_after,
            cow.pages,
            if cow.parent_sees_original { "still sees" } else { "does NOT see" },
        );
    }
    print!("{}", counts_text(results));
    let mut notes: Vec<&String> = results.iter().flat_map(|r| &r.notes).collect();
    notes.sort();
    notes.dedup();
    for note in notes {
        println!("note: {note}");
    }
}

/// What the kernel did for each mechanism's ends, per GiB moved, from the first
/// run of each (the ends as the result names them: producer and consumer, or
/// solo).
fn counts_text(results: &[ipc::IpcResult]) -> String {
    let mut out = String::new();
    let mut seen = Vec::new();
    for result in results {
        if seen.contains(&&result.mechanism) {
            continue;
        }
        seen.push(&result.mechanism);
        let Some(mut counts) = result.counts.clone() else {
            continue;
        };
        counts.model = result.model.iter().map(|p| p.judgement.clone()).collect();
        let roles: Vec<&str> = result.ends.iter().map(|e| e.role.as_str()).collect();
        out.push_str(&format!("{}:\n", result.mechanism));
        out.push_str(&render_text(&counts, result.bytes, &roles));
        out.push_str(&calls_text(result));
    }
    out
}

/// Each end's data calls: how many of each kind, and the bytes per call.
fn calls_text(result: &ipc::IpcResult) -> String {
    let mut out = String::new();
    let Some(counts) = &result.counts else {
        return out;
    };
    for end in &result.ends {
        let Some(counted) = counts.ends.get(&end.role) else {
            continue;
        };
        let calls: Vec<String> = counted
            .syscalls
            .iter()
            .map(|(kind, &n)| match end.call_bytes.get(kind) {
                Some(&bytes) if n > 0 => {
                    format!("{n} {kind} ({} per call)", HumanBytes(bytes / n))
                }
                _ => format!("{n} {kind}"),
            })
            .collect();
        out.push_str(&format!(
            "    {} data calls: {}\n",
            end.role,
            if calls.is_empty() {
                "none".to_string()
            } else {
                calls.join(", ")
            }
        ));
    }
    out
}
