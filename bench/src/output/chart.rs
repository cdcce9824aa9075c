//! The "this machine vs the article" bar chart of `pipebench all`, as SVG.
//!
//! One row per step, first step at the top: a bar for this machine's median with a
//! min-max whisker, an orange tick at the article's figure and a purple band for
//! the C++ reference on the project's VM.

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::output::stats::TableRow;

/// Why the chart could not be drawn.
#[derive(Debug, thiserror::Error)]
#[error("cannot draw the chart: {0}")]
pub struct ChartError(pub(crate) String);

const OURS: RGBColor = RGBColor(0x2b, 0x6c, 0xb0);
const ARTICLE: RGBColor = RGBColor(0xdd, 0x7a, 0x1c);
const REFERENCE: RGBColor = RGBColor(0x7b, 0x4f, 0xb8);
const GRID: RGBColor = RGBColor(0xe4, 0xe7, 0xeb);

/// The words on a chart: its caption and the legend of the comparison tick.
#[derive(Debug, Clone)]
pub(crate) struct ChartText {
    /// Caption at the top.
    pub caption: String,
    /// Legend of this machine's bars.
    pub ours: String,
    /// Legend of the orange tick (the published figure).
    pub published: String,
}

/// Draws median GiB/s per step beside the article's figure and the C++ reference.
pub fn render_svg(rows: &[TableRow], machine: &str) -> Result<String, ChartError> {
    render_svg_with(
        rows,
        &ChartText {
            caption: format!("Pipe throughput: {machine} vs the article"),
            ours: format!("{machine}: median, with min-max"),
            published: "article (i7-8550U, Linux 5.17)".into(),
        },
    )
}

/// Draws the bars of [`render_svg`] with other words, for other comparisons (the
/// IPC lab against the zero-copy survey).
pub(crate) fn render_svg_with(rows: &[TableRow], text: &ChartText) -> Result<String, ChartError> {
    let mut svg = String::new();
    let n = rows.len().max(1);
    {
        let height = 130 + 40 * n as u32;
        let root = SVGBackend::with_string(&mut svg, (900, height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let top = x_top(rows);
        let mut chart = axes(&root, rows, &text.caption, top)?;
        draw_bars(&mut chart, rows, &text.ours)?;
        draw_reference(&mut chart, rows, top)?;
        draw_published(&mut chart, rows, &text.published)?;
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .label_font(("sans-serif", 13))
            .background_style(WHITE.mix(0.92))
            .border_style(GRID)
            .draw()
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// A chart's drawing surface with numbers along both axes (here GiB/s along x,
/// one row per step along y).
pub(crate) type Plane<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Any drawing failure, as the chart's error.
pub(crate) fn err(e: impl std::fmt::Display) -> ChartError {
    ChartError(e.to_string())
}

/// Row `i` of `rows` is drawn at y = n - 1 - i so the first step sits at the top.
fn y_of(rows: &[TableRow], i: usize) -> f64 {
    (rows.len().max(1) - 1 - i) as f64
}

/// The right end of the x axis: a little past the largest figure drawn.
fn x_top(rows: &[TableRow]) -> f64 {
    rows.iter()
        .flat_map(|r| {
            [
                r.summary.max,
                r.article_gib_s.unwrap_or(0.0),
                r.reference_gib_s.map_or(0.0, |g| g.high),
            ]
        })
        .fold(1.0f64, f64::max)
        * 1.08
}

/// The caption, the axes and the steps' names down the left.
fn axes<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, Shift>,
    rows: &[TableRow],
    caption: &str,
    top: f64,
) -> Result<Plane<'a, 'b>, ChartError> {
    let n = rows.len().max(1);
    let mut chart = ChartBuilder::on(root)
        .caption(caption, ("sans-serif", 20))
        .margin(18)
        .x_label_area_size(48)
        .y_label_area_size(170)
        .build_cartesian_2d(0.0..top, -0.6..(n as f64 - 0.4))
        .map_err(err)?;
    let labels: Vec<String> = rows.iter().map(|r| r.step.clone()).collect();
    chart
        .configure_mesh()
        .disable_y_mesh()
        .light_line_style(GRID)
        .bold_line_style(GRID)
        .x_desc("GiB/s (2^30 bytes per second)")
        .y_labels(n)
        .y_label_formatter(&|v| {
            let k = v.round();
            if (v - k).abs() > 1e-6 || k < 0.0 || k as usize >= n {
                return String::new();
            }
            labels.get(n - 1 - k as usize).cloned().unwrap_or_default()
        })
        .label_style(("sans-serif", 13))
        .draw()
        .map_err(err)?;
    Ok(chart)
}

/// This machine's medians as bars, each with its min-max whisker.
fn draw_bars(chart: &mut Plane, rows: &[TableRow], label: &str) -> Result<(), ChartError> {
    chart
        .draw_series(rows.iter().enumerate().map(|(i, r)| {
            let y = y_of(rows, i);
            Rectangle::new([(0.0, y - 0.3), (r.summary.median, y + 0.3)], OURS.filled())
        }))
        .map_err(err)?
        .label(label)
        .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], OURS.filled()));
    chart
        .draw_series(rows.iter().enumerate().map(|(i, r)| {
            let y = y_of(rows, i);
            PathElement::new(
                vec![(r.summary.min, y), (r.summary.max, y)],
                BLACK.stroke_width(2),
            )
        }))
        .map_err(err)?;
    Ok(())
}

/// The C++ reference's range as a thin band under each bar that has one.
fn draw_reference(chart: &mut Plane, rows: &[TableRow], top: f64) -> Result<(), ChartError> {
    let has_reference = rows.iter().any(|r| r.reference_gib_s.is_some());
    let reference = chart
        .draw_series(rows.iter().enumerate().filter_map(|(i, r)| {
            let g = r.reference_gib_s?;
            let y = y_of(rows, i);
            let high = g.high.max(g.low + top * 0.004);
            Some(Rectangle::new(
                [(g.low, y - 0.42), (high, y - 0.34)],
                REFERENCE.filled(),
            ))
        }))
        .map_err(err)?;
    // No legend entry for a band no row has (the IPC lab's chart).
    if has_reference {
        reference
            .label("C++ on the project's 2-core VM")
            .legend(|(x, y)| Rectangle::new([(x, y - 2), (x + 14, y + 2)], REFERENCE.filled()));
    }
    Ok(())
}

/// The published figure as an orange tick across each row that has one.
fn draw_published(chart: &mut Plane, rows: &[TableRow], label: &str) -> Result<(), ChartError> {
    chart
        .draw_series(rows.iter().enumerate().filter_map(|(i, r)| {
            let a = r.article_gib_s?;
            let y = y_of(rows, i);
            Some(PathElement::new(
                vec![(a, y - 0.4), (a, y + 0.4)],
                ARTICLE.stroke_width(4),
            ))
        }))
        .map_err(err)?
        .label(label)
        .legend(|(x, y)| {
            PathElement::new(
                vec![(x + 7, y - 6), (x + 7, y + 6)],
                ARTICLE.stroke_width(4),
            )
        });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::summarize;
    use crate::steps::catalog::{self, StepKind};

    /// The catalog's rows with made-up runs: every step at 1, 2 and 3 GiB/s.
    fn rows() -> Vec<TableRow> {
        catalog::catalog()
            .into_iter()
            .map(|step| TableRow {
                step: step.id.into(),
                title: step.title.into(),
                kind: step.kind,
                summary: summarize(&[1.0, 2.0, 3.0]).unwrap(),
                article_gib_s: step.article_gib_s,
                reference_gib_s: step.reference_gib_s,
                speedup: None,
            })
            .filter(|row| row.kind != StepKind::Experiment)
            .collect()
    }

    /// Whether `svg` writes `text` as one of its texts.
    fn has_text(svg: &str, text: &str) -> bool {
        svg.contains(&format!(">\n{text}\n</text>"))
    }

    #[test]
    fn the_chart_names_each_step_and_says_what_its_marks_are() {
        let rows = rows();
        assert!(rows.iter().any(|r| r.reference_gib_s.is_some()));
        let svg = render_svg(&rows, "this machine (test)").unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
        for text in [
            "Pipe throughput: this machine (test) vs the article",
            "this machine (test): median, with min-max",
            "article (i7-8550U, Linux 5.17)",
            "C++ on the project&apos;s 2-core VM",
        ] {
            assert!(has_text(&svg, text), "no {text:?}");
        }
        for row in &rows {
            assert!(has_text(&svg, &row.step), "{} has no label", row.step);
        }
    }

    #[test]
    fn a_chart_without_reference_figures_has_no_legend_for_them() {
        let rows: Vec<TableRow> = rows()
            .into_iter()
            .map(|r| TableRow {
                reference_gib_s: None,
                ..r
            })
            .collect();
        let text = ChartText {
            caption: "IPC".into(),
            ours: "here".into(),
            published: "survey".into(),
        };
        let svg = render_svg_with(&rows, &text).unwrap();
        assert!(has_text(&svg, "survey") && has_text(&svg, "here"));
        assert!(!svg.contains("2-core VM"));
    }
}
