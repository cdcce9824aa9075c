//! HTML for the exported lab report and the instructor's class report:
//! self-contained pages (one inline style, inline SVG charts) that run no
//! script. Each carries a Content-Security-Policy allowing only its own style,
//! so even a report opened from disk cannot load or run anything.

use base64::Engine as _;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::html::escape;

const STYLE: &str = "body{font:15px/1.45 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1d2330}\
h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2.2rem;border-bottom:1px solid #ccd}\
table{border-collapse:collapse;margin:.6rem 0}th,td{border:1px solid #ccd;padding:.25rem .5rem;text-align:left;vertical-align:top}\
th{background:#f1f3f8}td.num{text-align:right;font-variant-numeric:tabular-nums}\
.pass{color:#0b6b2f;font-weight:600}.fail{color:#a4161a;font-weight:600}.pending{color:#6b6f7b}\
.note{color:#4a5060}svg{display:block;margin:.6rem 0;max-width:100%}code{font-size:.9em}\
.wide{overflow-x:auto}th.check{font-size:12px;font-weight:600;min-width:6em}";

/// A whole page around `body`, with its CSP.
pub(crate) fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title}</title><style>{STYLE}</style></head><body>\n{body}\n</body></html>\n",
        csp = content_security_policy(),
        title = escape(title),
    )
}

/// Nothing but the page's own style (by hash) and inline SVG.
pub(crate) fn content_security_policy() -> String {
    let hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(STYLE.as_bytes()));
    format!("default-src 'none'; style-src 'sha256-{hash}'; base-uri 'none'; form-action 'none'")
}

/// A status word, coloured by its class.
pub(crate) fn status(status: &str) -> String {
    let class = match status {
        "pass" | "fail" | "pending" => status,
        // A count the machine did not permit, or an interval that holds the
        // bound: not the student's failure.
        "unavailable" | "not_resolved" | "not_this_kernel" => "pending",
        _ => "pending",
    };
    format!("<span class=\"{class}\">{}</span>", escape(status))
}

/// A number for a table: three significant digits, or a dash.
pub(crate) fn num(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() => {
            if v == 0.0 {
                "0".into()
            } else {
                let digits = (2 - v.abs().log10().floor() as i32).clamp(0, 6) as usize;
                format!("{v:.digits$}")
            }
        }
        _ => "—".into(),
    }
}

/// A decade for an axis: 0.1, 1, 10, 100.
fn decade_text(v: f64) -> String {
    let text = format!("{v:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A JSON value in a cell (a prediction: a number or a choice).
pub(crate) fn value_text(v: &Value) -> String {
    match v {
        Value::Null => "—".into(),
        Value::Number(n) if n.is_u64() || n.is_i64() => n.to_string(),
        Value::Number(n) => num(n.as_f64()),
        Value::String(s) => escape(s),
        other => escape(&other.to_string()),
    }
}

/// A date from Unix milliseconds, `YYYY-MM-DD HH:MM UTC`.
pub(crate) fn utc(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Civil from days (Howard Hinnant's algorithm), for dates after 1970.
    let z = days as i64 + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        rest / 3600,
        rest % 3600 / 60
    )
}

/// Horizontal bars, one per (label, value), scaled to the largest.
pub(crate) fn bar_chart(title: &str, unit: &str, bars: &[(String, f64)]) -> String {
    let label_w = 260.0;
    let bar_w = 300.0;
    let row = 24.0;
    let height = row * bars.len() as f64 + 30.0;
    let top = bars.iter().map(|(_, v)| *v).fold(0.0_f64, f64::max);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"660\" height=\"{height}\" viewBox=\"0 0 660 {height}\" role=\"img\" aria-label=\"{t}\">\
         <text x=\"0\" y=\"16\" font-size=\"13\" font-weight=\"600\" fill=\"#1d2330\">{t}</text>",
        t = escape(title)
    );
    for (i, (label, value)) in bars.iter().enumerate() {
        let y = 28.0 + row * i as f64;
        let w = if top > 0.0 { bar_w * value / top } else { 0.0 };
        svg.push_str(&format!(
            "<text x=\"{lx}\" y=\"{ty}\" font-size=\"12\" text-anchor=\"end\" fill=\"#1d2330\">{label}</text>\
             <rect x=\"{bx}\" y=\"{y}\" width=\"{w:.1}\" height=\"16\" fill=\"#3b6fd8\"/>\
             <text x=\"{vx:.1}\" y=\"{ty}\" font-size=\"12\" fill=\"#1d2330\">{v} {unit}</text>",
            lx = label_w - 8.0,
            ty = y + 12.5,
            label = escape(label),
            bx = label_w,
            vx = label_w + w + 6.0,
            v = num(Some(*value)),
            unit = escape(unit),
        ));
    }
    svg.push_str("</svg>");
    svg
}

/// One row of dots per label (a strip plot on a log scale), the median marked:
/// how one figure spreads across machines.
pub(crate) fn strip_chart(title: &str, rows: &[(String, Vec<f64>)]) -> String {
    let label_w = 300.0;
    let plot_w = 330.0;
    let row = 26.0;
    let height = row * rows.len() as f64 + 48.0;
    let all: Vec<f64> = rows
        .iter()
        .flat_map(|(_, v)| v.iter().copied())
        .filter(|v| *v > 0.0)
        .collect();
    let lo = all
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min)
        .min(1.0)
        .log10()
        .floor();
    let hi = all
        .iter()
        .copied()
        .fold(0.0_f64, f64::max)
        .max(1.0)
        .log10()
        .ceil()
        .max(lo + 1.0);
    let x = |v: f64| label_w + plot_w * (v.max(10f64.powf(lo)).log10() - lo) / (hi - lo);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"660\" height=\"{height}\" viewBox=\"0 0 660 {height}\" role=\"img\" aria-label=\"{t}\">\
         <text x=\"0\" y=\"16\" font-size=\"13\" font-weight=\"600\" fill=\"#1d2330\">{t}</text>",
        t = escape(title)
    );
    let bottom = 28.0 + row * rows.len() as f64;
    let mut decade = lo;
    while decade <= hi {
        let v = 10f64.powf(decade);
        let gx = x(v);
        svg.push_str(&format!(
            "<line x1=\"{gx:.1}\" y1=\"24\" x2=\"{gx:.1}\" y2=\"{bottom}\" stroke=\"#dde\"/>\
             <text x=\"{gx:.1}\" y=\"{ly}\" font-size=\"11\" text-anchor=\"middle\" fill=\"#4a5060\">{}</text>",
            decade_text(v),
            ly = bottom + 14.0
        ));
        decade += 1.0;
    }
    for (i, (label, values)) in rows.iter().enumerate() {
        let y = 28.0 + row * i as f64 + 9.0;
        svg.push_str(&format!(
            "<text x=\"{lx}\" y=\"{ty}\" font-size=\"12\" text-anchor=\"end\" fill=\"#1d2330\">{}</text>",
            escape(label),
            lx = label_w - 8.0,
            ty = y + 4.0
        ));
        for v in values {
            svg.push_str(&format!(
                "<circle cx=\"{:.1}\" cy=\"{y}\" r=\"4\" fill=\"#3b6fd8\" fill-opacity=\"0.6\"/>",
                x(*v)
            ));
        }
        if let Some(m) = super::checks::median(values) {
            svg.push_str(&format!(
                "<line x1=\"{mx:.1}\" y1=\"{a}\" x2=\"{mx:.1}\" y2=\"{b}\" stroke=\"#a4161a\" stroke-width=\"2\"/>",
                mx = x(m),
                a = y - 8.0,
                b = y + 8.0
            ));
        }
    }
    svg.push_str(&format!(
        "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\" fill=\"#4a5060\">GiB/s per machine (log scale; red: median)</text></svg>",
        label_w + plot_w / 2.0,
        bottom + 30.0
    ));
    svg
}

/// Median of a metric per task (and sweep value) of a lab entry, for its chart.
/// Where a bar goes: its task's first appearance, then the swept value.
type BarOrder = (usize, Option<u64>);

fn lab_bars(lab: &Value, pointer: &str, scale: f64) -> Vec<(String, f64)> {
    // Tasks in the order first run, a sweep's values in increasing order.
    let mut groups: Vec<(BarOrder, String, Vec<f64>)> = Vec::new();
    let mut tasks: Vec<&str> = Vec::new();
    for m in lab["measurements"].as_array().into_iter().flatten() {
        let task = m["task"].as_str().unwrap_or("?");
        let order = tasks.iter().position(|t| *t == task).unwrap_or_else(|| {
            tasks.push(task);
            tasks.len() - 1
        });
        let value = m["value"].as_u64();
        let label = match value {
            Some(v) => format!("{task} @ {}", pipebench::size::ByteSize(v)),
            None => task.to_string(),
        };
        let Some(g) = m
            .pointer(pointer)
            .and_then(Value::as_f64)
            .map(|v| v * scale)
        else {
            continue;
        };
        match groups.iter_mut().find(|(_, l, _)| *l == label) {
            Some((_, _, values)) => values.push(g),
            None => groups.push(((order, value), label, vec![g])),
        }
    }
    groups.sort_by_key(|(key, _, _)| *key);
    groups
        .into_iter()
        .filter_map(|(_, label, values)| super::checks::median(&values).map(|m| (label, m)))
        .collect()
}

/// The readable form of an exported report (as built by `export::build`).
pub(crate) fn report_html(report: &Value) -> String {
    let student = report["student"].as_str().unwrap_or("");
    let mut body = format!(
        "<h1>pipebook lab report: {}</h1>\n<p class=\"note\">Generated {} by pipebook {}. \
         Digest (SHA-256 of the JSON report's canonical form): <code>{}</code></p>\n",
        escape(student),
        utc(report["generated_at_ms"].as_u64().unwrap_or(0)),
        escape(report["pipebook_version"].as_str().unwrap_or("?")),
        escape(
            report
                .pointer("/digest/value")
                .and_then(Value::as_str)
                .unwrap_or("none")
        ),
    );
    let sys = &report["system"];
    body.push_str("<h2>Machine</h2>\n<table>");
    for (label, key) in [
        ("CPU", "cpu_model"),
        ("CPUs online", "cpus_online"),
        ("Kernel", "kernel"),
        ("Virtualisation", "virtualization"),
        ("Transparent huge pages", "thp_mode"),
        ("pipe-max-size", "pipe_max_size"),
    ] {
        body.push_str(&format!(
            "<tr><th>{label}</th><td>{}</td></tr>",
            value_text(&sys[key])
        ));
    }
    body.push_str("</table>\n");
    for lab in report["labs"].as_array().into_iter().flatten() {
        body.push_str(&format!(
            "<h2>{}</h2>\n",
            escape(lab["title"].as_str().unwrap_or("?"))
        ));
        let p = &lab["prediction"];
        body.push_str(&format!(
            "<p><strong>Prediction.</strong> {} Predicted: <strong>{}</strong>; measured: <strong>{}</strong> {}</p>\n",
            escape(p["question"].as_str().unwrap_or("")),
            value_text(&p["value"]),
            value_text(&p["answer"]),
            escape(p["unit"].as_str().unwrap_or("")),
        ));
        body.push_str("<table><tr><th>check</th><th>outcome</th><th>detail</th></tr>");
        for c in lab["checks"].as_array().into_iter().flatten() {
            body.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(c["title"].as_str().unwrap_or("?")),
                status(c["status"].as_str().unwrap_or("?")),
                escape(c["detail"].as_str().unwrap_or("")),
            ));
        }
        body.push_str("</table>\n");
        // A latency lab's runs move no stream of bytes: their median round trip instead.
        let throughput = lab_bars(lab, "/result/gib_per_s", 1.0);
        let round_trips = lab_bars(lab, "/result/p50", 1e-3);
        if throughput.is_empty() && round_trips.is_empty() {
            body.push_str("<p class=\"note\">No runs yet.</p>\n");
            continue;
        }
        if !throughput.is_empty() {
            body.push_str(&bar_chart("Median throughput", "GiB/s", &throughput));
        }
        if !round_trips.is_empty() {
            body.push_str(&bar_chart("Median round trip (p50)", "µs", &round_trips));
        }
        body.push_str(
            "<table><tr><th>task</th><th>step or mechanism</th><th>GiB/s</th><th>bytes</th><th>ms</th>\
             <th>CPU s per s</th><th>corrupted</th><th>huge pages</th></tr>",
        );
        for m in lab["measurements"].as_array().into_iter().flatten() {
            let r = &m["result"];
            let metric = |metric| super::checks::metric(r, metric);
            use super::defs::Metric;
            body.push_str(&format!(
                "<tr><td>{}{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                escape(m["task"].as_str().unwrap_or("?")),
                m["value"].as_u64().map_or(String::new(), |v| format!(" @ {}", pipebench::size::ByteSize(v))),
                // A pipe result names its step, an IPC record its mechanism.
                escape(r["step"].as_str().or(r["mechanism"].as_str()).unwrap_or("?")),
                num(metric(Metric::GibPerS)),
                r["bytes"].as_u64().map_or("—".into(), |b| b.to_string()),
                num(r["elapsed_ms"].as_f64()),
                num(metric(Metric::CpuPerWall)),
                num(metric(Metric::CorruptedShare)),
                num(metric(Metric::HugeShare)),
            ));
        }
        body.push_str("</table>\n");
    }
    page(&format!("pipebook lab report: {student}"), &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_run_nothing_and_escape_text() {
        let html = page("<x>", "<p>hi</p>");
        assert!(html.contains("&lt;x&gt;") && !html.contains("<script"));
        assert!(html.contains("default-src 'none'"));
    }

    #[test]
    fn a_report_page_escapes_what_students_typed() {
        let report = crate::labs::export::build(
            &Default::default(),
            serde_json::json!({"kernel": "<i>6.12</i>"}),
            "<b>Ada</b>",
            0,
        );
        let html = report_html(&report);
        assert!(html.contains("&lt;b&gt;Ada&lt;/b&gt;") && html.contains("&lt;i&gt;6.12"));
        assert!(!html.contains("<b>Ada") && !html.to_ascii_lowercase().contains("<script"));
        assert!(html.contains("Baseline and variance") && html.contains("No runs yet."));
    }

    #[test]
    fn dates_and_numbers_read_well() {
        assert_eq!(utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc(1_700_000_000_000), "2023-11-14 22:13 UTC");
        assert_eq!(num(Some(4.56789)), "4.57");
        assert_eq!(num(Some(0.012345)), "0.0123");
        assert_eq!(num(None), "—");
    }
}
