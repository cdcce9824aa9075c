//! What the commands print and write the same way: JSON, a chart file, the
//! kernel's counts per GiB, a profile's ends and their flame graphs.

use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;

use pipebench::machine::system::SystemInfo;
use pipebench::output::counts::{self, PerGib};
use pipebench::profile::EndProfile;

/// Prints `value` as indented JSON on stdout.
pub(super) fn print_json(value: &impl Serialize) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

/// `--list`: the table as JSON, or each entry as `line` prints it.
pub(super) fn print_list<T: Serialize>(table: Vec<T>, json: bool, line: impl Fn(&T)) -> Result<()> {
    if json {
        return print_json(&table);
    }
    table.iter().for_each(line);
    Ok(())
}

/// Writes a chart to `path` and says so on stderr.
pub(super) fn write_chart(path: &Path, svg: &str) -> Result<()> {
    std::fs::write(path, svg).with_context(|| format!("cannot write {}", path.display()))?;
    eprintln!("chart written to {}", path.display());
    Ok(())
}

/// How a chart names this machine: its kernel, and whether it is a VM.
pub(super) fn machine_label(system: &SystemInfo) -> String {
    if system.virtualization.is_some() {
        format!("this machine ({}, VM)", system.kernel)
    } else {
        format!("this machine ({})", system.kernel)
    }
}

/// The kernel's counts per GiB, one row per label (when any row was counted),
/// after a blank line.
pub(super) fn print_kernel_counts<'a>(
    label_width: usize,
    rows: impl IntoIterator<Item = (String, Option<&'a PerGib>)> + Clone,
) {
    if !rows.clone().into_iter().any(|(_, c)| c.is_some()) {
        return;
    }
    println!(
        "\nwhat the kernel did (medians per GiB moved; model: the book's predictions that held)"
    );
    println!("{}", counts::compact_heading(label_width));
    for (label, c) in rows {
        println!("{}", counts::compact_row(&label, label_width, c));
    }
}

/// Writes each end's flame graph into `dir` as `ROLE.svg`.
pub(super) fn write_flame_graphs(dir: &Path, ends: [(&str, &EndProfile); 2]) -> Result<()> {
    for (role, end) in ends {
        let svg = dir.join(format!("{role}.svg"));
        std::fs::write(&svg, &end.flamegraph_svg)
            .with_context(|| format!("cannot write {}", svg.display()))?;
    }
    Ok(())
}

/// One end of a profile: its samples, its `top` functions, and where its
/// flame graph is when it was kept in `dir`.
pub(super) fn print_profile_end(role: &str, end: &EndProfile, top: usize, dir: Option<&Path>) {
    println!(
        "  {role}: {} samples; children% self% function",
        end.samples
    );
    for f in end.functions.iter().take(top) {
        println!(
            "    {:6.2}% {:6.2}%  {}{}",
            f.children_percent,
            f.self_percent,
            f.symbol,
            if f.kernel { " [k]" } else { "" }
        );
    }
    if let Some(dir) = dir {
        println!(
            "    flame graph: {}",
            dir.join(format!("{role}.svg")).display()
        );
    }
}
