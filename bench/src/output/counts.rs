//! A run's kernel counts for a terminal: per GiB moved, each end side by side,
//! and the book's model beside the figures it predicts.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::engine::counts::{Counts, ModelVerdict};
use crate::engine::result::RunResult;
use crate::output::stats::summarize;
use crate::process::counts::EndCounts;

/// One row of the table: what is counted, and how to read it off an end.
struct Row {
    key: &'static str,
    label: &'static str,
    value: fn(&EndCounts) -> Option<f64>,
}

const ROWS: [Row; 10] = [
    Row {
        key: "data_calls",
        label: "data calls",
        // An end that does not count its calls (most IPC ends) says nothing
        // here rather than 0.
        value: |c| (!c.syscalls.is_empty()).then(|| c.syscalls.values().sum::<u64>() as f64),
    },
    Row {
        key: "voluntary_switches",
        label: "sleeps (voluntary switches)",
        value: |c| Some(c.voluntary_switches as f64),
    },
    Row {
        key: "involuntary_switches",
        label: "preemptions",
        value: |c| Some(c.involuntary_switches as f64),
    },
    Row {
        key: "page_faults",
        label: "page faults",
        value: |c| Some(c.page_faults as f64),
    },
    Row {
        key: "page_allocs",
        label: "page allocations",
        value: |c| c.page_allocs.map(|v| v as f64),
    },
    Row {
        key: "page_frees",
        label: "pages freed",
        value: |c| c.page_frees.map(|v| v as f64),
    },
    Row {
        key: "huge_page_allocs",
        label: "huge pages allocated",
        value: |c| c.huge_page_allocs.map(|v| v as f64),
    },
    Row {
        key: "wakeups",
        label: "wakeups issued",
        value: |c| c.wakeups.map(|v| v as f64),
    },
    Row {
        key: "ipis",
        label: "IPIs sent",
        value: |c| c.ipis.map(|v| v as f64),
    },
    Row {
        key: "cpu_migrations",
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
            ModelVerdict::Agrees => "agrees",
            ModelVerdict::Disagrees => "DISAGREES",
            ModelVerdict::Unknown => "not counted",
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

/// Several runs' counts in one line per end: the median per GiB of each count over
/// the runs that counted it, and how often each of the book's predictions held.
/// What `pipebench all` (per step) and `pipebench sweep` (per value) print and carry.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PerGib {
    /// Runs that carried counts.
    pub runs: usize,
    /// Per end, per count (`data_calls`, `page_allocs`, ...): the median per GiB;
    /// a count no run had is left out, never 0.
    pub ends: BTreeMap<String, BTreeMap<&'static str, f64>>,
    /// Per prediction id: runs that agreed and runs that disagreed.
    pub model: BTreeMap<String, Tally>,
    /// Why counts were missing, once per reason, as the runs said it.
    pub missing: Vec<String>,
}

/// How often one of the book's predictions held over several runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// Runs that agreed.
    pub agrees: usize,
    /// Runs that disagreed.
    pub disagrees: usize,
}

/// The medians per GiB of the counts of `results`; None when no run counted.
pub fn per_gib<'a>(results: impl IntoIterator<Item = &'a RunResult>) -> Option<PerGib> {
    per_gib_of(results.into_iter().map(|r| (r.bytes, r.counts.as_ref())))
}

/// The medians per GiB of runs given as (bytes moved, their counts).
fn per_gib_of<'a>(runs: impl IntoIterator<Item = (u64, Option<&'a Counts>)>) -> Option<PerGib> {
    let mut values: BTreeMap<(String, &'static str), Vec<f64>> = BTreeMap::new();
    let mut summary = PerGib::default();
    for (bytes, counts) in runs {
        let Some(counts) = counts else {
            continue;
        };
        let gib = bytes as f64 / (1u64 << 30) as f64;
        if gib <= 0.0 {
            continue;
        }
        summary.runs += 1;
        for (end, counted) in &counts.ends {
            for row in &ROWS {
                if let Some(v) = (row.value)(counted) {
                    values
                        .entry((end.clone(), row.key))
                        .or_default()
                        .push(v / gib);
                }
            }
        }
        for judgement in &counts.model {
            let tally = summary.model.entry(judgement.id.clone()).or_default();
            match judgement.verdict {
                ModelVerdict::Agrees => tally.agrees += 1,
                ModelVerdict::Disagrees => tally.disagrees += 1,
                ModelVerdict::Unknown => {}
            }
        }
        for missing in &counts.missing {
            if !summary.missing.contains(&missing.message) {
                summary.missing.push(missing.message.clone());
            }
        }
    }
    if summary.runs == 0 {
        return None;
    }
    for ((end, key), v) in values {
        if let Some(s) = summarize(&v) {
            summary.ends.entry(end).or_default().insert(key, s.median);
        }
    }
    Some(summary)
}

/// The compact columns `all` and `sweep` print: (end, count, heading).
const COMPACT: [(&str, &str, &str); 5] = [
    ("writer", "data_calls", "w calls"),
    ("reader", "data_calls", "r calls"),
    ("writer", "voluntary_switches", "w sleeps"),
    ("writer", "page_faults", "w faults"),
    ("writer", "page_allocs", "w allocs"),
];

/// The heading of the compact counts columns (per GiB), for a table whose rows
/// start with a `label_width` wide label.
pub fn compact_heading(label_width: usize) -> String {
    let mut out = format!("{:<label_width$}", "per GiB");
    for (_, _, heading) in COMPACT {
        out.push_str(&format!("{heading:>10}"));
    }
    out.push_str("  model");
    out
}

/// One row of the compact counts table: medians per GiB, `n/a` where not
/// counted, then the predictions that held over those that were judged.
pub fn compact_row(label: &str, label_width: usize, summary: Option<&PerGib>) -> String {
    let mut out = format!("{label:<label_width$}");
    let Some(summary) = summary else {
        out.push_str("  (not counted)");
        return out;
    };
    for (end, key, _) in COMPACT {
        let value = summary.ends.get(end).and_then(|e| e.get(key)).copied();
        out.push_str(&format!("{:>10}", cell(value, 1.0)));
    }
    let agrees: usize = summary.model.values().map(|t| t.agrees).sum();
    let judged: usize = summary.model.values().map(|t| t.agrees + t.disagrees).sum();
    out.push_str(&format!("  {agrees}/{judged} agree"));
    let disagreeing: Vec<&str> = summary
        .model
        .iter()
        .filter(|(_, t)| t.disagrees > 0)
        .map(|(id, _)| id.as_str())
        .collect();
    if !disagreeing.is_empty() {
        out.push_str(&format!(" (not: {})", disagreeing.join(", ")));
    }
    out
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn medians_per_gib_leave_out_what_no_run_counted_and_tally_the_model() {
        use crate::engine::counts::ModelCheck;
        let run = |calls: u64, allocs: Option<u64>, verdict: ModelVerdict| Counts {
            ends: BTreeMap::from([(
                "writer".into(),
                EndCounts {
                    syscalls: BTreeMap::from([("write".into(), calls)]),
                    page_allocs: allocs,
                    ..EndCounts::default()
                },
            )]),
            model: vec![ModelCheck {
                id: "writer_page_allocs".into(),
                end: "writer".into(),
                what: String::new(),
                measured: None,
                model: String::new(),
                verdict,
            }],
            ..Counts::default()
        };
        let (a, b, c) = (
            run(4096, Some(1000), ModelVerdict::Agrees),
            run(8192, None, ModelVerdict::Unknown),
            run(4096, Some(3000), ModelVerdict::Disagrees),
        );
        // 1 GiB, 2 GiB, 1 GiB: calls per GiB 4096, 4096, 4096; allocs 1000 and 3000.
        let summary = per_gib_of([
            (1 << 30, Some(&a)),
            (2 << 30, Some(&b)),
            (1 << 30, Some(&c)),
            (1 << 30, None),
        ])
        .unwrap();
        assert_eq!(summary.runs, 3);
        let writer = &summary.ends["writer"];
        assert_eq!(writer["data_calls"], 4096.0);
        assert_eq!(writer["page_allocs"], 2000.0);
        assert!(!writer.contains_key("wakeups"), "{writer:?}");
        assert_eq!(
            summary.model["writer_page_allocs"],
            Tally {
                agrees: 1,
                disagrees: 1
            }
        );
        let row = compact_row("write-read", 12, Some(&summary));
        assert!(row.contains("4096") && row.contains("2000"), "{row}");
        assert!(row.contains("1/2 agree (not: writer_page_allocs)"), "{row}");
        assert!(per_gib_of([(1 << 30, None)]).is_none());
    }
}
