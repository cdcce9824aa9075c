//! Summaries of repeated runs and the `pipebench all` table.

use serde::Serialize;

use crate::engine::result::RunResult;
use crate::steps::catalog::{self, GibRange, StepKind, BASELINE_ID};

// The summary of repeated runs is plain statistics, below the engine that
// summarises its own runs with it; it stays reachable here for the tables.
pub use crate::stats::{summarize, Summary};

/// One row of the `pipebench all` table.
#[derive(Debug, Clone, Serialize)]
pub struct TableRow {
    /// Step id.
    pub step: String,
    /// Step title.
    pub title: String,
    /// Article step, variant or experiment.
    pub kind: StepKind,
    /// This machine's runs.
    pub summary: Summary,
    /// The article's figure.
    pub article_gib_s: Option<f64>,
    /// The C++ reference on the project's machine type.
    pub reference_gib_s: Option<GibRange>,
    /// Median over the baseline's median.
    pub speedup: Option<f64>,
}

/// Builds the table from results, in catalog order.
pub fn table(results: &[RunResult]) -> Vec<TableRow> {
    let median_of = |id: &str| {
        let values: Vec<f64> = results
            .iter()
            .filter(|r| r.step == id)
            .map(|r| r.gib_per_s)
            .collect();
        summarize(&values)
    };
    let baseline = median_of(BASELINE_ID).map(|s| s.median);
    catalog::catalog()
        .into_iter()
        .filter_map(|step| {
            let summary = median_of(step.id)?;
            Some(TableRow {
                step: step.id.into(),
                title: step.title.into(),
                kind: step.kind,
                summary,
                article_gib_s: step.article_gib_s,
                reference_gib_s: step.reference_gib_s,
                speedup: baseline.filter(|b| *b > 0.0).map(|b| summary.median / b),
            })
        })
        .collect()
}

fn fmt_opt(value: Option<f64>) -> String {
    value.map_or("-".into(), |v| format!("{v:.1}"))
}

fn fmt_range(range: Option<GibRange>) -> String {
    match range {
        None => "-".into(),
        Some(r) if (r.low - r.high).abs() < 1e-9 => format!("{:.1}", r.low),
        Some(r) => format!("{:.1}-{:.1}", r.low, r.high),
    }
}

/// The table as aligned text for a terminal.
pub fn render_text(rows: &[TableRow]) -> String {
    let mut out = format!(
        "{:<22} {:>4} {:>8} {:>8} {:>8} {:>8} {:>10} {:>8}\n",
        "step", "runs", "median", "min", "max", "article", "C++ (VM)", "speedup"
    );
    for row in rows {
        out.push_str(&format!(
            "{:<22} {:>4} {:>8.2} {:>8.2} {:>8.2} {:>8} {:>10} {:>8}\n",
            row.step,
            row.summary.runs,
            row.summary.median,
            row.summary.min,
            row.summary.max,
            fmt_opt(row.article_gib_s),
            fmt_range(row.reference_gib_s),
            row.speedup.map_or("-".into(), |s| format!("{s:.1}x")),
        ));
    }
    out.push_str("GiB/s = 2^30 bytes per second; article: i7-8550U, Linux 5.17; C++ (VM): the article's C++ on a 2-core EPYC KVM guest\n");
    out
}

/// The table as CSV.
pub fn render_csv(rows: &[TableRow]) -> String {
    let mut out = String::from("step,runs,median_gib_s,min_gib_s,max_gib_s,article_gib_s,reference_low,reference_high,speedup\n");
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.3}"));
    for row in rows {
        out.push_str(&format!(
            "{},{},{:.3},{:.3},{:.3},{},{},{},{}\n",
            row.step,
            row.summary.runs,
            row.summary.median,
            row.summary.min,
            row.summary.max,
            opt(row.article_gib_s),
            opt(row.reference_gib_s.map(|r| r.low)),
            opt(row.reference_gib_s.map(|r| r.high)),
            opt(row.speedup),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(summarize(&[3.0, 1.0, 2.0]).unwrap().median, 2.0);
        assert_eq!(summarize(&[4.0, 1.0, 2.0, 3.0]).unwrap().median, 2.5);
        let s = summarize(&[5.0, 1.0, 9.0]).unwrap();
        assert_eq!((s.min, s.max, s.runs), (1.0, 9.0, 3));
        assert!(summarize(&[]).is_none());
    }
}
