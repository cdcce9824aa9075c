//! The "this machine vs the article" bar chart of `pipebench all`, as SVG.

use plotters::prelude::*;

use crate::stats::TableRow;

/// Why the chart could not be drawn.
#[derive(Debug, thiserror::Error)]
#[error("cannot draw the chart: {0}")]
pub struct ChartError(String);

/// Draws median GiB/s per step (with min-max whiskers) beside the article's figure.
pub fn render_svg(rows: &[TableRow], machine: &str) -> Result<String, ChartError> {
    let mut svg = String::new();
    let err = |e: &dyn std::fmt::Display| ChartError(e.to_string());
    {
        let height = 120 + 44 * rows.len() as u32;
        let root = SVGBackend::with_string(&mut svg, (900, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let top = rows
            .iter()
            .flat_map(|r| [r.summary.max, r.article_gib_s.unwrap_or(0.0)])
            .fold(1.0f64, f64::max)
            * 1.1;
        let n = rows.len().max(1) as i32;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("Pipe throughput: {machine} vs the article"),
                ("sans-serif", 20),
            )
            .margin(16)
            .x_label_area_size(36)
            .y_label_area_size(190)
            .build_cartesian_2d(0.0..top, (0..n).into_segmented())
            .map_err(|e| err(&e))?;
        let labels: Vec<String> = rows.iter().map(|r| r.step.clone()).collect();
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_desc("GiB/s (2^30 bytes per second)")
            .y_labels(rows.len())
            .y_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) => labels.get(*i as usize).cloned().unwrap_or_default(),
                _ => String::new(),
            })
            .draw()
            .map_err(|e| err(&e))?;
        let ours = RGBColor(0x2b, 0x6c, 0xb0);
        let theirs = RGBColor(0xe0, 0x8a, 0x2c);
        let bar = |i: i32, offset: f64, value: f64, color: RGBColor| {
            let y0 = SegmentValue::Exact(i);
            let _ = offset;
            Rectangle::new(
                [(0.0, y0), (value, SegmentValue::Exact(i + 1))],
                color.mix(0.85).filled(),
            )
        };
        // Two thin bars per step would need a sub-band coordinate; plotters'
        // segmented axis gives one band per step, so the article's figure is drawn
        // as a marker line over our bar instead.
        chart
            .draw_series(
                rows.iter()
                    .enumerate()
                    .map(|(i, r)| bar(i as i32, 0.0, r.summary.median, ours)),
            )
            .map_err(|e| err(&e))?
            .label(format!("{machine}: median of runs"))
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], ours.filled()));
        chart
            .draw_series(rows.iter().enumerate().filter_map(|(i, r)| {
                let a = r.article_gib_s?;
                Some(PathElement::new(
                    vec![
                        (a, SegmentValue::Exact(i as i32)),
                        (a, SegmentValue::Exact(i as i32 + 1)),
                    ],
                    theirs.stroke_width(4),
                ))
            }))
            .map_err(|e| err(&e))?
            .label("article (i7-8550U, Linux 5.17)")
            .legend(move |(x, y)| {
                PathElement::new(vec![(x + 7, y - 6), (x + 7, y + 6)], theirs.stroke_width(4))
            });
        chart
            .draw_series(rows.iter().enumerate().map(|(i, r)| {
                let y = SegmentValue::CenterOf(i as i32);
                PathElement::new(
                    vec![(r.summary.min, y.clone()), (r.summary.max, y)],
                    BLACK.stroke_width(2),
                )
            }))
            .map_err(|e| err(&e))?;
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .draw()
            .map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
    }
    Ok(svg)
}
