//! The `pipebench ipc` matrix as people read it: one row per mechanism (median,
//! fastest and slowest of its runs beside the survey's figure), as aligned text,
//! CSV or an SVG bar chart.

use serde::Serialize;

use super::chart::{self, ChartError, ChartText};
use super::stats::TableRow;
use crate::ipc::IpcResult;
use crate::size::{ByteSize, GIB};
use crate::stats::{summarize, Summary};
use crate::steps::catalog::StepKind;

/// One row of the `pipebench ipc` table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IpcRow {
    /// Mechanism id.
    pub mechanism: String,
    /// Its title.
    pub title: String,
    /// Copies per byte.
    pub copies: Option<u32>,
    /// Runs.
    pub runs: usize,
    /// Bytes per run.
    pub bytes: u64,
    /// Median milliseconds.
    pub median_ms: f64,
    /// Fastest run, ms.
    pub min_ms: f64,
    /// Slowest run, ms.
    pub max_ms: f64,
    /// Throughput at the median, GiB/s.
    pub gib_per_s: f64,
    /// The survey's milliseconds.
    pub survey_ms: Option<f64>,
    /// For how many bytes.
    pub survey_bytes: Option<u64>,
}

impl IpcRow {
    /// The survey's figure as GiB/s, comparable whatever its size.
    pub(crate) fn survey_gib_per_s(&self) -> Option<f64> {
        let (ms, bytes) = (self.survey_ms?, self.survey_bytes?);
        Some(bytes as f64 / GIB as f64 / (ms / 1000.0))
    }
}

/// The table, in the lab's order.
pub fn table(results: &[IpcResult]) -> Vec<IpcRow> {
    crate::ipc::mechanisms()
        .into_iter()
        .filter_map(|m| {
            let runs: Vec<&IpcResult> = results.iter().filter(|r| r.mechanism == m.id).collect();
            let ms: Vec<f64> = runs.iter().map(|r| r.elapsed_ms).collect();
            let summary = summarize(&ms)?;
            let bytes = runs[0].bytes;
            Some(IpcRow {
                mechanism: m.id.to_string(),
                title: m.title.to_string(),
                copies: m.copies,
                runs: summary.runs,
                bytes,
                median_ms: summary.median,
                min_ms: summary.min,
                max_ms: summary.max,
                gib_per_s: crate::size::gib_per_s(bytes, summary.median),
                survey_ms: m.survey.map(|s| s.ms),
                survey_bytes: m.survey.map(|s| s.bytes),
            })
        })
        .collect()
}

fn survey_text(row: &IpcRow) -> String {
    match (row.survey_ms, row.survey_bytes) {
        (Some(ms), Some(bytes)) if bytes == row.bytes => format!("{ms:.0}"),
        (Some(ms), Some(bytes)) => format!("{ms:.0} ({})", ByteSize(bytes)),
        _ => "-".into(),
    }
}

/// The table as aligned text.
pub fn render_text(rows: &[IpcRow]) -> String {
    let mut out = format!(
        "{:<14} {:>6} {:>4} {:>9} {:>9} {:>9} {:>7} {:>14}\n",
        "mechanism", "copies", "runs", "median ms", "min ms", "max ms", "GiB/s", "survey ms"
    );
    for row in rows {
        out.push_str(&format!(
            "{:<14} {:>6} {:>4} {:>9.1} {:>9.1} {:>9.1} {:>7.2} {:>14}\n",
            row.mechanism,
            row.copies.map_or("-".into(), |c| c.to_string()),
            row.runs,
            row.median_ms,
            row.min_ms,
            row.max_ms,
            row.gib_per_s,
            survey_text(row),
        ));
    }
    out.push_str("survey: the BiscuitOS zero-copy survey, Linux 6.10 x86_64 in an emulator (its size in brackets when it differs)\n");
    out
}

/// The table as CSV.
pub fn render_csv(rows: &[IpcRow]) -> String {
    let mut out = String::from(
        "mechanism,copies,runs,bytes,median_ms,min_ms,max_ms,gib_per_s,survey_ms,survey_bytes\n",
    );
    for row in rows {
        out.push_str(&format!(
            "{},{},{},{},{:.3},{:.3},{:.3},{:.4},{},{}\n",
            row.mechanism,
            row.copies.map_or(String::new(), |c| c.to_string()),
            row.runs,
            row.bytes,
            row.median_ms,
            row.min_ms,
            row.max_ms,
            row.gib_per_s,
            row.survey_ms.map_or(String::new(), |v| format!("{v}")),
            row.survey_bytes.map_or(String::new(), |v| v.to_string()),
        ));
    }
    out
}

/// Horizontal bars of GiB/s per mechanism with the survey's figure as a tick.
pub fn render_svg(rows: &[IpcRow], machine: &str) -> Result<String, ChartError> {
    let bars: Vec<TableRow> = rows
        .iter()
        .map(|r| {
            let gib = |ms: f64| crate::size::gib_per_s(r.bytes, ms);
            TableRow {
                step: r.mechanism.clone(),
                title: r.title.clone(),
                kind: StepKind::Variant,
                summary: Summary {
                    runs: r.runs,
                    median: r.gib_per_s,
                    // The slowest run is the lowest throughput.
                    min: gib(r.max_ms),
                    max: gib(r.min_ms),
                },
                article_gib_s: r.survey_gib_per_s(),
                reference_gib_s: None,
                speedup: None,
            }
        })
        .collect();
    chart::render_svg_with(
        &bars,
        &ChartText {
            caption: format!("IPC throughput: {machine} vs the zero-copy survey"),
            ours: format!("{machine}: median, with min-max"),
            published: "survey (Linux 6.10 x86_64, emulated)".into(),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn survey_figures_convert_to_gib_per_s() {
        let row = IpcRow {
            mechanism: "x".into(),
            title: "x".into(),
            copies: Some(0),
            runs: 1,
            bytes: 200 << 20,
            median_ms: 100.0,
            min_ms: 100.0,
            max_ms: 100.0,
            gib_per_s: 1.953125,
            survey_ms: Some(1000.0),
            survey_bytes: Some(200 << 20),
        };
        assert!((row.survey_gib_per_s().unwrap() - 0.1953125).abs() < 1e-9);
        let svg = render_svg(&[row], "here").unwrap();
        assert!(svg.contains("<svg"));
    }
}
