//! `pipebook report FILES...`: an instructor's merge of students' exported lab
//! reports into one class table (CSV) and page (HTML). Each file is validated
//! first ([`super::intake`], pure: [`validate`]); a file that fails is named
//! with the reason and left out, never a crash.
//!
//! A report comes from a student and is hostile until validated: only a
//! regular file is read (opened with `O_NOFOLLOW | O_NONBLOCK`, so a link, a
//! FIFO or a device is refused without blocking), at most
//! [`MAX_REPORT_BYTES`]; names and ids follow the one rule of [`names`];
//! every quote of a report in a message is escaped ([`names::quote`]), and so
//! are the file names on stderr; CSV cells a spreadsheet would evaluate are
//! neutralised ([`csv_cell`]).

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use pipebench::size::ByteSize;
use serde_json::Value;

use super::checks::{self, Status};
use super::defs::{labs, TaskWork};
use super::names::escape_controls;
use super::render;
use crate::html::escape;

pub use super::intake::{load, validate, ReportError, StudentReport, MAX_REPORT_BYTES};

/// Writes an output of `pipebook report` (the class CSV or page) to `path`
/// without trusting what is there: the text goes to a new file beside it
/// (random name, `O_EXCL | O_NOFOLLOW`), which is then renamed over `path`. A
/// link planted at `path` (say by a student, in the folder of submissions) is
/// replaced, never followed, and a file someone else made there is replaced
/// rather than filled with the class's results. The file is 0600: it holds
/// every student's results.
pub fn write_output(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name"))?;
    let suffix: u64 = rand::random();
    let mut temporary = std::ffi::OsString::from(".");
    temporary.push(name);
    temporary.push(format!(".{suffix:016x}.tmp"));
    let temporary = dir.join(temporary);
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&temporary)?;
    let written = file
        .write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .and_then(|()| std::fs::rename(&temporary, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

/// Most report files merged at once: each may be 8 MiB, and every valid
/// report is held until the class table is written, so ten thousand files
/// could take all the memory of the instructor's machine.
pub const MAX_REPORT_FILES: usize = 500;

/// The merged class: valid reports, and the files left out with why.
#[derive(Debug)]
pub struct Class {
    /// Valid reports, in the order given.
    pub students: Vec<StudentReport>,
    /// Files left out.
    pub skipped: Vec<(PathBuf, ReportError)>,
}

impl Class {
    /// One line per file left out, fit for a terminal: the file's name and the
    /// reason, every control character escaped (a file name can hold escape
    /// sequences too).
    pub fn skipped_lines(&self) -> Vec<String> {
        self.skipped
            .iter()
            .map(|(file, err)| {
                format!(
                    "skipped {}: {}",
                    escape_controls(&file.display().to_string()),
                    escape_controls(&crate::error_chain(err))
                )
            })
            .collect()
    }

    /// Loads every file; never fails as a whole.
    pub fn load(files: &[PathBuf]) -> Class {
        let mut class = Class {
            students: Vec::new(),
            skipped: Vec::new(),
        };
        for file in files {
            match load(file) {
                Ok(report) => class.students.push(report),
                Err(err) => class.skipped.push((file.clone(), err)),
            }
        }
        class
    }

    /// The figures compared across machines: "step" for plain runs, "step,
    /// pipe_size 16 KiB" for a sweep's points.
    fn figure_keys(&self) -> Vec<String> {
        let mut keys: Vec<(String, Option<(String, u64)>)> = self
            .students
            .iter()
            .flat_map(|s| figures(s).into_keys())
            .collect();
        keys.sort();
        keys.dedup();
        keys.iter().map(figure_name).collect()
    }

    /// Every check, as (lab id, check id, title), in the book's order.
    fn all_checks() -> Vec<(String, String, String)> {
        labs()
            .labs
            .iter()
            .flat_map(|lab| {
                lab.checks
                    .iter()
                    .map(|c| (lab.id.clone(), c.id.clone(), c.title.clone()))
            })
            .collect()
    }

    /// The class table: one row per student.
    pub fn csv(&self) -> String {
        let keys = self.figure_keys();
        let checks = Class::all_checks();
        let mut header = vec![
            "student".to_string(),
            "file".into(),
            "cpu_model".into(),
            "kernel".into(),
            "virtualization".into(),
        ];
        header.extend(keys.iter().map(|k| format!("median GiB/s: {k}")));
        header.extend(
            checks
                .iter()
                .map(|(lab, check, _)| format!("check: {lab}/{check}")),
        );
        let mut out = csv_row(&header);
        for s in &self.students {
            let medians = step_medians(s);
            let mut row = vec![
                s.student.clone(),
                s.file.display().to_string(),
                text(&s.system["cpu_model"]),
                text(&s.system["kernel"]),
                text(&s.system["virtualization"]),
            ];
            row.extend(
                keys.iter()
                    .map(|k| medians.get(k).map_or(String::new(), |m| format!("{m:.4}"))),
            );
            row.extend(
                checks
                    .iter()
                    .map(|(lab, check, _)| outcome(s, lab, check).to_string()),
            );
            out.push_str(&csv_row(&row));
        }
        out
    }

    /// The class page: who passed which check, each figure's spread across
    /// machines, and the files left out.
    pub fn html(&self) -> String {
        let checks = Class::all_checks();
        let mut body = format!(
            "<h1>pipebook labs: class report</h1>\n<p class=\"note\">{} report(s) merged, {} left out.</p>\n",
            self.students.len(),
            self.skipped.len()
        );
        if !self.skipped.is_empty() {
            body.push_str("<h2>Left out</h2>\n<table><tr><th>file</th><th>why</th></tr>");
            for (file, err) in &self.skipped {
                body.push_str(&format!(
                    "<tr><td>{}</td><td>{}</td></tr>",
                    escape(&escape_controls(&file.display().to_string())),
                    escape(&escape_controls(&crate::error_chain(err)))
                ));
            }
            body.push_str("</table>\n");
        }
        body.push_str(
            "<h2>Who passed which check</h2>\n<div class=\"wide\"><table><tr><th>student</th><th>machine</th>",
        );
        for (lab, check, title) in &checks {
            body.push_str(&format!(
                "<th class=\"check\" title=\"{}\">{}<br>{}</th>",
                escape(title),
                escape(lab),
                escape(check)
            ));
        }
        body.push_str("</tr>");
        for s in &self.students {
            body.push_str(&format!(
                "<tr><td>{}</td><td>{}<br><span class=\"note\">{}</span></td>",
                escape(&s.student),
                escape(&text(&s.system["cpu_model"])),
                escape(&text(&s.system["kernel"]))
            ));
            for (lab, check, _) in &checks {
                body.push_str(&format!(
                    "<td>{}</td>",
                    render::status(outcome(s, lab, check))
                ));
            }
            body.push_str("</tr>");
        }
        body.push_str("</table></div>\n<h2>Figures across machines</h2>\n");
        let keys = self.figure_keys();
        let mut rows = Vec::new();
        body.push_str(
            "<table><tr><th>figure</th><th>machines</th><th>min</th><th>median</th><th>max</th><th>max / min</th></tr>",
        );
        for key in &keys {
            let values: Vec<f64> = self
                .students
                .iter()
                .filter_map(|s| step_medians(s).get(key).copied())
                .collect();
            let (min, max) = (
                values.iter().copied().fold(f64::INFINITY, f64::min),
                values.iter().copied().fold(0.0, f64::max),
            );
            body.push_str(&format!(
                "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                escape(key),
                values.len(),
                render::num(Some(min)),
                render::num(checks::median(&values)),
                render::num(Some(max)),
                render::num((min > 0.0).then(|| max / min)),
            ));
            rows.push((key.clone(), values));
        }
        body.push_str("</table>\n");
        if !rows.is_empty() {
            body.push_str(&render::strip_chart(
                "Each machine's median, per figure",
                &rows,
            ));
        }
        body.push_str("<h2>Predictions</h2>\n<table><tr><th>student</th><th>lab</th><th>predicted</th><th>measured</th></tr>");
        for s in &self.students {
            for lab in s.labs.iter().filter(|l| !l.prediction.is_null()) {
                body.push_str(&format!(
                    "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                    escape(&s.student),
                    escape(&lab.id),
                    render::value_text(&lab.prediction),
                    render::value_text(&lab.answer)
                ));
            }
        }
        body.push_str("</table>\n");
        render::page("pipebook labs: class report", &body)
    }
}

/// A JSON field of a report as plain text, its control characters escaped
/// (the CSV and the page may well be printed on a terminal).
fn text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => escape_controls(s),
        other => escape_controls(&other.to_string()),
    }
}

/// A student's outcome of one check: pass, fail, pending, unavailable,
/// not_resolved, or "" when absent.
fn outcome<'a>(s: &'a StudentReport, lab: &str, check: &str) -> &'a str {
    s.labs
        .iter()
        .find(|l| l.id == lab)
        .and_then(|l| l.checks.iter().find(|c| c.id == check))
        .map_or("", |c| match c.status {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Pending => "pending",
            Status::Unavailable => "unavailable",
            Status::NotResolved => "not_resolved",
            Status::NotThisKernel => "not_this_kernel",
        })
}

/// A figure: a step, or a step at one value of a swept parameter.
type FigureKey = (String, Option<(String, u64)>);

/// "step" for plain runs, "step, pipe_size 16 KiB" for a sweep's points.
fn figure_name((step, sweep): &FigureKey) -> String {
    match sweep {
        Some((param, value)) => format!("{step}, {param} {}", ByteSize(*value)),
        None => step.clone(),
    }
}

/// A student's median throughput per figure, over all their labs.
pub(crate) fn step_medians(s: &StudentReport) -> BTreeMap<String, f64> {
    figures(s)
        .into_iter()
        .map(|(key, m)| (figure_name(&key), m))
        .collect()
}

fn figures(s: &StudentReport) -> BTreeMap<FigureKey, f64> {
    let mut groups: BTreeMap<FigureKey, Vec<f64>> = BTreeMap::new();
    for lab_result in &s.labs {
        let Some(lab) = labs().find(&lab_result.id) else {
            continue;
        };
        for m in &lab_result.measurements {
            let Some(task) = lab.task(&m.task) else {
                continue;
            };
            // A figure is named by what ran: the step, or the IPC mechanism.
            let name = match task.work() {
                TaskWork::Step(step) => step.to_string(),
                TaskWork::Mechanism(mechanism) => format!("ipc {mechanism}"),
                // A latency run has no throughput to take a median of.
                TaskWork::Latency(_) => continue,
            };
            let key = match (m.value, &task.sweep) {
                (Some(v), Some(sweep)) => (name, Some((sweep.param.clone(), v))),
                _ => (name, None),
            };
            if let Some(g) = m.result["gib_per_s"].as_f64() {
                groups.entry(key).or_default().push(g);
            }
        }
    }
    groups
        .into_iter()
        .filter_map(|(k, v)| checks::median(&v).map(|m| (k, m)))
        .collect()
}

/// One CSV cell, safe to open in a spreadsheet and to print: control
/// characters escaped, and a cell a spreadsheet would evaluate as a formula
/// (the OWASP rule: one starting with `=`, `+`, `-`, `@`, tab or CR) prefixed
/// with `'`, which makes it text. A plain negative number (`-12`, `-0.5`) is
/// left alone: it is data, and a spreadsheet reads it as the number it is,
/// not as a formula. Quoted when it holds a comma or a quote.
pub(crate) fn csv_cell(text: &str) -> String {
    let text = escape_controls(text);
    let risky = text.starts_with(['=', '+', '-', '@', '\t', '\r']);
    let text = if risky && !is_plain_negative_number(&text) {
        format!("'{text}")
    } else {
        text
    };
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

/// `-` then digits, with at most one `.` between digits: a number, not a formula.
fn is_plain_negative_number(text: &str) -> bool {
    let Some(digits) = text.strip_prefix('-') else {
        return false;
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, "0"));
    !whole.is_empty()
        && !fraction.is_empty()
        && whole.bytes().all(|b| b.is_ascii_digit())
        && fraction.bytes().all(|b| b.is_ascii_digit())
}

fn csv_row(fields: &[String]) -> String {
    let mut line = fields
        .iter()
        .map(|f| csv_cell(f))
        .collect::<Vec<_>>()
        .join(",");
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labs::export;
    use crate::labs::measurement::Measurement;
    use crate::labs::store::{LabState, LabsState, PredictionRecord};
    use serde_json::json;

    fn run(mechanism: &str, gibs: f64) -> Value {
        // Each end as the runner counts it: a copy path's ends read and write every
        // byte, a mapping's producer faults each 4 KiB page in once.
        let gib = 1u64 << 30;
        let end = |role: &str| {
            let copies = mechanism == "pipe-rw" || mechanism == "unix-stream";
            let faults = if role == "producer" && !copies {
                gib / 4096
            } else {
                20
            };
            let mut end = json!({"role": role, "usage": {},
                "counts": {"counts": {"syscalls": {}, "context_switches": 0, "voluntary_switches": 0,
                    "involuntary_switches": 0, "page_faults": faults, "major_faults": 0}, "missing": []}});
            if copies {
                end["counts"]["counts"]["syscalls"] =
                    json!({"read": gib >> 16, "write": gib >> 16});
                end["call_bytes"] = json!({"read": gib, "write": gib});
            }
            end
        };
        json!({"kind": "ipc", "mechanism": mechanism, "gib_per_s": gibs, "mib_per_s": gibs * 1024.0,
               "bytes": gib, "elapsed_ms": 1000.0 / gibs, "checksum_ok": true, "page_size": 4096,
               "ends": [end("consumer"), end("producer")]})
    }

    /// A lab state holding one lab: its prediction `value` and its `measurements`.
    fn predicted(lab: &str, value: Value, measurements: Vec<Measurement>) -> LabsState {
        let mut state = LabsState::default();
        state.labs.insert(
            lab.into(),
            LabState {
                prediction: Some(PredictionRecord { value, at_ms: 1 }),
                measurements,
            },
        );
        state
    }

    fn sealed(measurements: Vec<Measurement>) -> Value {
        let state = predicted("choose-ipc", json!("posix-shm"), measurements);
        export::build(
            &state,
            json!({"cpu_model": "Test CPU", "kernel": "6.12"}),
            "Ada",
            1,
        )
    }

    /// Six IPC records (the runs a check's task takes) of the task that runs
    /// the mechanism of the same id.
    fn six(mechanism: &str, gibs: f64) -> Vec<Measurement> {
        (0..6)
            .map(|_| Measurement {
                task: mechanism.into(),
                value: None,
                result: run(mechanism, gibs),
                planned_looks: true,
            })
            .collect()
    }

    /// Runs that leave the IPC lab's pace check open: pipe-rw swinging 0.5 to
    /// 1.5 GiB/s against unix-stream at 1.0; `planned_looks` marks its pipe-rw runs.
    fn open_pace(planned_looks: bool) -> Vec<Measurement> {
        let mut ms: Vec<Measurement> = [0.5, 0.6, 0.9, 1.1, 1.4, 1.5]
            .iter()
            .map(|g| Measurement {
                task: "pipe-rw".into(),
                value: None,
                result: run("pipe-rw", *g),
                planned_looks,
            })
            .collect();
        ms.extend(six("unix-stream", 1.0));
        ms.extend(six("posix-shm", 3.0));
        ms.extend(six("memfd-scm", 2.5));
        ms
    }

    fn good() -> Value {
        let mut ms = six("pipe-rw", 1.0);
        ms.extend(six("unix-stream", 1.2));
        ms.extend(six("posix-shm", 3.0));
        ms.extend(six("memfd-scm", 2.5));
        sealed(ms)
    }

    fn check(report: &Value) -> Result<StudentReport, ReportError> {
        validate(Path::new("r.json"), report.to_string().as_bytes())
    }

    #[test]
    fn a_run_of_no_bytes_in_no_time_and_an_unbounded_prediction_are_refused() {
        // 0 bytes in 5e-324 ms is 0 GiB/s: consistent, and no run at all.
        let mut result = run("pipe-rw", 1.0);
        for (key, value) in [
            ("bytes", json!(0)),
            ("elapsed_ms", json!(5e-324)),
            ("gib_per_s", json!(0.0)),
            ("mib_per_s", json!(0.0)),
        ] {
            result[key] = value;
        }
        let tiny = sealed(vec![Measurement {
            task: "pipe-rw".into(),
            value: None,
            result,
            planned_looks: true,
        }]);
        let err = check(&tiny).unwrap_err().to_string();
        assert!(
            err.contains("elapsed_ms 5e-324 is not a time a run takes"),
            "{err}"
        );
        // A prediction far outside its question's bounds (1 to 6).
        let state = predicted("variance", json!(1e308), Vec::new());
        let wild = export::build(&state, json!({"cpu_model": "Test CPU"}), "Ada", 1);
        let err = check(&wild).unwrap_err().to_string();
        assert!(err.contains("is not a number from 1 to 6"), "{err}");
    }

    #[test]
    fn a_sealed_report_validates_and_merges() {
        let s = check(&good()).unwrap();
        let ipc = s.labs.iter().find(|l| l.id == "choose-ipc").unwrap();
        assert!(ipc.checks.iter().all(|c| c.status == Status::Pass));
        assert_eq!(ipc.answer, json!("posix-shm"));
        assert_eq!(step_medians(&s)["ipc posix-shm"], 3.0);
    }

    /// A report exported before the checks judged at planned looks (its runs
    /// unmarked, its check judged at 95% with another interval and verdict)
    /// is read, and its check judged again under the current rule, which the
    /// merged check says; a marked report stating the same is refused.
    #[test]
    fn an_older_report_is_judged_again_rather_than_refused() {
        let older = |planned_looks: bool| {
            let ms = open_pace(planned_looks);
            let mut report = sealed(ms);
            if !planned_looks {
                report["labs"][5]["measurements"]
                    .as_array_mut()
                    .unwrap()
                    .iter_mut()
                    .for_each(|m| {
                        m.as_object_mut().unwrap().remove("planned_looks");
                    });
            }
            // As the older rule stated it.
            report["labs"][5]["checks"][0]["status"] = json!("pass");
            report["labs"][5]["checks"][0]["ci_low"] = json!(0.7);
            report["labs"][5]["checks"][0]["ci_high"] = json!(1.4);
            export::seal(report)
        };
        let read = check(&older(false)).unwrap();
        let lab = read.labs.iter().find(|l| l.id == "choose-ipc").unwrap();
        let judged = &lab.checks[0];
        assert_eq!(judged.id, "copies-set-the-pace");
        assert_eq!(
            (judged.status, judged.rejudged),
            (Status::NotResolved, true)
        );
        assert!(matches!(
            check(&older(true)).unwrap_err(),
            ReportError::ChecksDisagree { .. }
        ));
    }

    /// A report made before a check that does not apply to its kernel existed
    /// (no such entry) is still read; one that leaves out a check that
    /// applies is refused.
    #[test]
    fn a_report_may_lack_only_a_check_its_kernel_does_not_take() {
        let state = predicted("vmsplice-safety", json!(0.5), Vec::new());
        let report = export::build(&state, json!({"kernel": "6.12"}), "Ada", 1);
        let without = |id: &str| {
            let mut older = report.clone();
            let lab = older["labs"]
                .as_array_mut()
                .unwrap()
                .iter_mut()
                .find(|l| l["id"] == "vmsplice-safety")
                .unwrap();
            lab["checks"]
                .as_array_mut()
                .unwrap()
                .retain(|c| c["id"] != id);
            older.as_object_mut().unwrap().remove("digest");
            export::seal(older)
        };
        // No probes in the report: the article's kernel, which maps, so the
        // check for a copying kernel does not apply.
        let read = check(&without("early-reuse-harmless")).unwrap();
        let lab = read
            .labs
            .iter()
            .find(|l| l.id == "vmsplice-safety")
            .unwrap();
        let harmless = lab.checks.iter().find(|c| c.id == "early-reuse-harmless");
        assert_eq!(harmless.unwrap().status, Status::NotThisKernel);
        assert!(check(&without("early-reuse-breaks")).is_err());
    }

    #[test]
    fn a_forged_verdict_or_interval_is_not_trusted() {
        // pipe-rw swings 0.5 to 1.5 GiB/s and unix-stream sits at 1.0: the ratio's
        // interval holds both bounds (0.67 and 1.5), so the check is open.
        let ms = open_pace(true);
        let report = sealed(ms);
        let lab = |r: &Value| r["labs"][5]["checks"][0].clone();
        let open = lab(&report);
        assert_eq!(open["id"], "copies-set-the-pace");
        assert_eq!(open["status"], "not_resolved", "{open}");
        assert!(open["ci_low"].as_f64().unwrap() < 0.67, "{open}");
        assert!(open["more_runs"].as_u64().unwrap() >= 1, "{open}");
        check(&report).unwrap();
        // The student (or a script) says it passed, and reseals the file.
        let mut forged = report.clone();
        forged["labs"][5]["checks"][0]["status"] = json!("pass");
        let err = check(&export::seal(forged)).unwrap_err();
        assert!(matches!(err, ReportError::ChecksDisagree { .. }), "{err}");
        // Or narrows the interval so it seems to clear the bounds.
        let mut narrowed = report.clone();
        narrowed["labs"][5]["checks"][0]["ci_low"] = json!(0.9);
        let err = check(&export::seal(narrowed)).unwrap_err();
        assert!(
            matches!(err, ReportError::IntervalDisagrees { .. }),
            "{err}"
        );
        // A report from before intervals (none stated) is judged on its status.
        let mut older = report;
        let entry = older["labs"][5]["checks"][0].as_object_mut().unwrap();
        entry.remove("ci_low");
        entry.remove("ci_high");
        check(&export::seal(older)).unwrap();
    }

    #[test]
    fn bad_reports_are_named_with_the_reason() {
        assert!(matches!(
            validate(Path::new("x"), b"{not json"),
            Err(ReportError::Json(_))
        ));
        assert!(matches!(
            check(&json!({"schema": "other"})),
            Err(ReportError::NotAReport { .. })
        ));
        let mut old = good();
        old["schema_version"] = json!(0);
        assert!(matches!(check(&old), Err(ReportError::Version { .. })));
        let mut tampered = good();
        tampered["labs"][5]["measurements"][0]["result"]["gib_per_s"] = json!(1.1);
        assert!(matches!(check(&tampered), Err(ReportError::Digest(_))));
        // Figures that cannot be, even with a fresh digest.
        for (gibs, elapsed, what) in [
            (-1.0, 1000.0, "negative"),
            (5000.0, 0.2, "beyond any machine"),
            (9.0, 1000.0, "not the 9 GiB/s"),
        ] {
            let mut ms = six("pipe-rw", 1.0);
            ms[0].result["gib_per_s"] = json!(gibs);
            ms[0].result["mib_per_s"] = json!(gibs * 1024.0);
            ms[0].result["elapsed_ms"] = json!(elapsed);
            let err = check(&sealed(ms)).unwrap_err();
            assert!(matches!(err, ReportError::Impossible { .. }), "{err}");
            assert!(err.to_string().contains(what), "{err}");
        }
        // IPC records whose figures disagree, or that are not the task's.
        let edits: [(&str, Value, &str); 3] = [
            ("mib_per_s", json!(5000.0), "MiB/s is not the"),
            ("mechanism", json!("tcp-rw"), "its mechanism is `tcp-rw`"),
            ("kind", json!(null), "no IPC record"),
        ];
        for (key, value, what) in edits {
            let mut ms = six("pipe-rw", 1.0);
            ms[0].result[key] = value;
            let err = check(&sealed(ms)).unwrap_err();
            assert!(matches!(err, ReportError::Impossible { .. }), "{err}");
            assert!(err.to_string().contains(what), "{err}");
        }
        // A check outcome edited by hand, then resealed.
        let mut edited = good();
        edited["labs"][5]["checks"][0]["status"] = json!("fail");
        let err = check(&export::seal(edited)).unwrap_err();
        assert!(matches!(err, ReportError::ChecksDisagree { .. }), "{err}");
    }

    #[test]
    fn outputs_replace_a_planted_link_instead_of_following_it() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep me").unwrap();
        let out = dir.path().join("class.csv");
        std::os::unix::fs::symlink(&victim, &out).unwrap();
        write_output(&out, "student\n").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
        assert!(!out.symlink_metadata().unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "student\n");
        // Only the two files: the temporary one was renamed.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn csv_quotes_what_needs_quoting() {
        assert_eq!(
            csv_row(&["a".into(), "b,c".into(), "say \"hi\"".into()]),
            "a,\"b,c\",\"say \"\"hi\"\"\"\n"
        );
    }

    #[test]
    fn csv_cells_a_spreadsheet_would_run_are_text() {
        for (cell, safe) in [
            ("=1+1", "'=1+1"),
            ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("-2+3", "'-2+3"),
            ("-1e3", "'-1e3"),
            ("\t=1", "\\u{9}=1"),
            (
                "=HYPERLINK(\"http://x\",\"y\")",
                "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"",
            ),
            // Data stays data.
            ("-12", "-12"),
            ("-0.5", "-0.5"),
            ("Ada", "Ada"),
            ("1.2345", "1.2345"),
        ] {
            assert_eq!(csv_cell(cell), safe, "{cell:?}");
        }
        assert_eq!(csv_cell("red\u{1b}[31m"), "red\\u{1b}[31m");
    }
}
