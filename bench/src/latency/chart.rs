//! The percentile chart of `pipebench latency --svg`: one row per
//! configuration, on a log scale of nanoseconds per round trip, a bar from p50
//! to p99 and marks at p99.9 and max, so the median and the tail read side by
//! side.

use std::fmt::Write;

use super::LatencyResult;

const LEFT: f64 = 260.0;
const WIDTH: f64 = 860.0;
const ROW: f64 = 22.0;
const TOP: f64 = 40.0;

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The chart as a standalone SVG document.
pub fn render_svg(results: &[LatencyResult], title: &str) -> String {
    let lo = results.iter().map(|r| r.min.max(1)).min().unwrap_or(1) as f64;
    let hi = results.iter().map(|r| r.max.max(2)).max().unwrap_or(10) as f64;
    let (lo, hi) = (
        10f64.powf(lo.log10().floor()),
        10f64.powf(hi.log10().ceil()),
    );
    let x = |ns: u64| {
        LEFT + (((ns.max(1) as f64).log10() - lo.log10()) / (hi.log10() - lo.log10()))
            * (WIDTH - LEFT - 20.0)
    };
    let height = TOP + ROW * results.len() as f64 + 50.0;
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = write!(
        svg,
        r#"<title>{}</title><text x="10" y="20" font-size="14">{}</text>"#,
        escape(title),
        escape(title)
    );
    let mut decade = lo;
    while decade <= hi {
        let at = x(decade as u64);
        let label = match decade {
            d if d >= 1e6 => format!("{} ms", d / 1e6),
            d if d >= 1e3 => format!("{} µs", d / 1e3),
            d => format!("{d} ns"),
        };
        let _ = write!(
            svg,
            r##"<line x1="{at:.1}" y1="{TOP}" x2="{at:.1}" y2="{:.1}" stroke="#ccc"/><text x="{at:.1}" y="{:.1}" text-anchor="middle">{label}</text>"##,
            height - 40.0,
            height - 25.0
        );
        decade *= 10.0;
    }
    for (i, r) in results.iter().enumerate() {
        let y = TOP + ROW * i as f64;
        let (a, b) = (x(r.p50), x(r.p99));
        let colour = match r.mode {
            super::Mode::Blocking => "#3467a8",
            super::Mode::Busy => "#c0582a",
        };
        let _ = write!(
            svg,
            r##"<text x="10" y="{:.1}">{} {} {} B</text><rect x="{a:.1}" y="{:.1}" width="{:.1}" height="10" fill="{colour}"><title>p50 {} ns, p99 {} ns</title></rect><circle cx="{:.1}" cy="{:.1}" r="3" fill="none" stroke="{colour}"/><text x="{:.1}" y="{:.1}" fill="#666">×</text>"##,
            y + 14.0,
            escape(&r.mechanism),
            r.mode.as_str(),
            r.size,
            y + 5.0,
            (b - a).max(1.5),
            r.p50,
            r.p99,
            x(r.p999),
            y + 10.0,
            x(r.max) - 3.0,
            y + 14.0,
        );
    }
    let _ = write!(
        svg,
        r#"<text x="10" y="{:.1}">bar: p50 to p99 · ○ p99.9 · × max · blue blocking, orange busy-polling · ns per round trip (log)</text></svg>"#,
        height - 8.0
    );
    svg
}
