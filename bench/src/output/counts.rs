//! A run's kernel counts for a terminal: per GiB moved, each end side by side,
//! and the book's model beside the figures it predicts.

use crate::engine::counts::{Counts, Verdict};
use crate::process::counts::EndCounts;

/// One row of the table: what is counted, and how to read it off an end.
struct Row {
    label: &'static str,
    value: fn(&EndCounts) -> Option<f64>,
}

const ROWS: [Row; 9] = [
    Row {
        label: "data calls",
        // An end that does not count its calls (most IPC ends) says nothing
        // here rather than 0.
        value: |c| (!c.syscalls.is_empty()).then(|| c.syscalls.values().sum::<u64>() as f64),
    },
    Row {
        label: "sleeps (voluntary switches)",
        value: |c| Some(c.voluntary_switches as f64),
    },
    Row {
        label: "preemptions",
        value: |c| Some(c.involuntary_switches as f64),
    },
    Row {
        label: "page faults",
        value: |c| Some(c.page_faults as f64),
    },
    Row {
        label: "page allocations",
        value: |c| c.page_allocs.map(|v| v as f64),
    },
    Row {
        label: "pages freed",
        value: |c| c.page_frees.map(|v| v as f64),
    },
    Row {
        label: "wakeups issued",
        value: |c| c.wakeups.map(|v| v as f64),
    },
    Row {
        label: "IPIs sent",
        value: |c| c.ipis.map(|v| v as f64),
    },
    Row {
        label: "CPU migrations",
        value: |c| c.cpu_migrations.map(|v| v as f64),
    },
];

/// A figure per GiB, or a dash when it was not counted.
fn cell(value: Option<f64>, gib: f64) -> String {
    match value {
        Some(v) if gib > 0.0 => {
            let per = v / gib;
            if per >= 100.0 {
                format!("{:.0}", per)
            } else {
                format!("{per:.1}")
            }
        }
        Some(_) => "-".into(),
        None => "n/a".into(),
    }
}

/// The table for a run that moved `bytes`: one line per count, the ends (in the
/// order `ends` names them) as columns, per GiB; then the model's verdicts and
/// what could not be counted.
pub fn render_text(counts: &Counts, bytes: u64, ends: &[&str]) -> String {
    let gib = bytes as f64 / (1u64 << 30) as f64;
    let mut out = format!("  what the kernel did, per GiB moved:{:>7}", "");
    for end in ends {
        out.push_str(&format!("{end:>12}"));
    }
    out.push('\n');
    for row in &ROWS {
        out.push_str(&format!("    {:<38}", row.label));
        for end in ends {
            let value = counts.ends.get(*end).and_then(row.value);
            out.push_str(&format!("{:>12}", cell(value, gib)));
        }
        out.push('\n');
    }
    for judgement in &counts.model {
        let mark = match judgement.verdict {
            Verdict::Agrees => "agrees",
            Verdict::Disagrees => "DISAGREES",
            Verdict::Unknown => "not counted",
        };
        let measured = judgement
            .measured
            .map_or("n/a".into(), |m| format!("{m:.3}"));
        out.push_str(&format!(
            "    model, {} {}: {measured} ({mark}; the book: {})\n",
            judgement.end, judgement.what, judgement.model
        ));
    }
    for missing in &counts.missing {
        let names: Vec<String> = missing.counts.iter().map(|c| format!("{c:?}")).collect();
        out.push_str(&format!(
            "    not counted ({}): {}\n",
            names.join(", "),
            missing.message
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn the_table_says_per_gib_and_marks_what_is_missing() {
        let writer = EndCounts {
            syscalls: BTreeMap::from([("write".into(), 4096)]),
            voluntary_switches: 16_000,
            page_allocs: Some(230_000),
            ..EndCounts::default()
        };
        let counts = Counts {
            ends: BTreeMap::from([("writer".into(), writer)]),
            ..Counts::default()
        };
        let text = render_text(&counts, 2 << 30, &["writer", "reader"]);
        assert!(text.contains("2048"), "{text}");
        assert!(text.contains("115000"), "{text}");
        assert!(text.contains("n/a"), "{text}");
    }
}
