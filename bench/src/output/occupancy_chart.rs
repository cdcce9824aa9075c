//! The pipe's occupancy over a run as SVG (`pipebench run --occupancy --svg`).
//!
//! Time runs along x, bytes in the pipe up y to its capacity (a dashed line named
//! with its slots). Each point is a min-max band, because a ring can fill and drain
//! within one point; stretches where the pipe stayed full (the writer waits) are
//! shaded red and where it stayed empty (the reader waits) grey.

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::engine::occupancy::Occupancy;
use crate::output::chart::{err, ChartError, Plane};

const BAND: RGBColor = RGBColor(0x2b, 0x6c, 0xb0);
const FULL: RGBColor = RGBColor(0xd6, 0x45, 0x45);
const EMPTY: RGBColor = RGBColor(0x8a, 0x93, 0x9e);
const GRID: RGBColor = RGBColor(0xe4, 0xe7, 0xeb);

/// Where the pipe stayed full or empty for a whole point: `(start_ms, end_ms, full)`.
pub(crate) fn phases(o: &Occupancy) -> Vec<(f64, f64, bool)> {
    let threshold = Occupancy::full_threshold(o.capacity, o.slot_bytes);
    let s = &o.series;
    let mut out: Vec<(f64, f64, bool)> = Vec::new();
    for i in 0..s.t_ms.len() {
        let state = if s.min[i] >= threshold {
            Some(true)
        } else if s.max[i] == 0 {
            Some(false)
        } else {
            None
        };
        let Some(full) = state else { continue };
        let (start, end) = (s.t_ms[i], s.t_ms[i] + o.bucket_ms);
        match out.last_mut() {
            Some(last) if last.2 == full && (last.1 - start).abs() < 1e-6 => last.1 = end,
            _ => out.push((start, end, full)),
        }
    }
    out
}

/// Draws `o` for the run of `step`.
pub fn render_svg(o: &Occupancy, step: &str) -> Result<String, ChartError> {
    let s = &o.series;
    let t_end = s.t_ms.last().map_or(1.0, |t| t + o.bucket_ms) / 1000.0;
    let top = kib(o.capacity.max(o.slot_bytes)) * 1.12;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 360)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = axes(&root, o, step, t_end, top)?;
        draw_phases(&mut chart, o, top)?;
        draw_band(&mut chart, o)?;
        draw_capacity(&mut chart, o, t_end)?;
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .label_font(("sans-serif", 12))
            .background_style(WHITE.mix(0.9))
            .border_style(GRID)
            .draw()
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// Bytes as KiB, the y axis's unit.
fn kib(b: u64) -> f64 {
    b as f64 / 1024.0
}

/// The caption (how often the pipe was full and empty) and the axes.
fn axes<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, Shift>,
    o: &Occupancy,
    step: &str,
    t_end: f64,
    top: f64,
) -> Result<Plane<'a, 'b>, ChartError> {
    let caption = format!(
        "{step}: bytes in the pipe (full {:.0}%, empty {:.0}% of {} samples)",
        100.0 * o.full_share,
        100.0 * o.empty_share,
        o.samples
    );
    let mut chart = ChartBuilder::on(root)
        .caption(caption, ("sans-serif", 18))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..t_end, 0.0..top)
        .map_err(err)?;
    chart
        .configure_mesh()
        .light_line_style(GRID)
        .bold_line_style(GRID)
        .x_desc("seconds")
        .y_desc("KiB in the pipe")
        .label_style(("sans-serif", 13))
        .draw()
        .map_err(err)?;
    Ok(chart)
}

/// The stretches where the pipe stayed full (red) and empty (grey), shaded
/// from the floor to the top.
fn draw_phases(chart: &mut Plane, o: &Occupancy, top: f64) -> Result<(), ChartError> {
    let ph = phases(o);
    for full in [true, false] {
        let color = if full { FULL } else { EMPTY };
        let series = chart
            .draw_series(ph.iter().filter(|p| p.2 == full).map(|&(a, b, _)| {
                Rectangle::new(
                    [(a / 1000.0, 0.0), (b / 1000.0, top)],
                    color.mix(0.18).filled(),
                )
            }))
            .map_err(err)?;
        let label = if full {
            "full: the writer waits for a slot"
        } else {
            "empty: the reader waits for data"
        };
        series.label(label).legend(move |(x, y)| {
            Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.mix(0.4).filled())
        });
    }
    Ok(())
}

/// Each point's min-max band, and its two edges.
fn draw_band(chart: &mut Plane, o: &Occupancy) -> Result<(), ChartError> {
    let s = &o.series;
    let band: Vec<(f64, f64)> = (0..s.t_ms.len())
        .map(|i| (s.t_ms[i] / 1000.0, kib(s.max[i])))
        .chain(
            (0..s.t_ms.len())
                .rev()
                .map(|i| (s.t_ms[i] / 1000.0, kib(s.min[i]))),
        )
        .collect();
    chart
        .draw_series(std::iter::once(Polygon::new(band, BAND.mix(0.55).filled())))
        .map_err(err)?
        .label("bytes in the pipe (min-max per point)")
        .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], BAND.mix(0.55).filled()));
    // Where min and max coincide the band has no area: its edges are drawn too.
    for edge in [&s.max, &s.min] {
        chart
            .draw_series(LineSeries::new(
                (0..s.t_ms.len()).map(|i| (s.t_ms[i] / 1000.0, kib(edge[i]))),
                BAND.stroke_width(2),
            ))
            .map_err(err)?;
    }
    Ok(())
}

/// The pipe's capacity as a line across, named with its slots.
fn draw_capacity(chart: &mut Plane, o: &Occupancy, t_end: f64) -> Result<(), ChartError> {
    let cap = kib(o.capacity);
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(0.0, cap), (t_end, cap)],
            BLACK.stroke_width(1),
        )))
        .map_err(err)?
        .label(format!(
            "capacity {} KiB = {} slots of {} KiB",
            o.capacity / 1024,
            o.capacity / o.slot_bytes.max(1),
            o.slot_bytes / 1024
        ))
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], BLACK.stroke_width(1)));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::occupancy::Recorder;

    fn sample_run() -> Occupancy {
        let mut r = Recorder::new(1.0, 65536);
        // 0-9 ms full, 10-19 ms mixed, 20-29 ms empty.
        for t in 0..30u64 {
            let bytes = match t {
                0..=9 => 65536,
                10..=19 => (t - 9) * 4096,
                _ => 0,
            };
            r.sample(t as f64, bytes);
        }
        r.finish()
    }

    #[test]
    fn phases_join_neighbouring_points() {
        let ph = phases(&sample_run());
        assert_eq!(ph, vec![(0.0, 10.0, true), (20.0, 30.0, false)]);
    }

    #[test]
    fn the_svg_names_capacity_in_slots_and_both_phases() {
        let svg = render_svg(&sample_run(), "write-read").unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
        assert!(svg.contains("16 slots of 4 KiB"));
        assert!(svg.contains("the writer waits"));
        assert!(svg.contains("the reader waits"));
        assert!(svg.contains("<polygon"));
    }
}
