//! `pipebook report` on a class's files, some of them crafted by a student
//! (`nobody` here) to hurt the instructor who merges them: a link to
//! `/dev/zero`, a FIFO, an oversized file, names and ids with escape
//! sequences, newlines, 0 or 10,000 characters, a file name with escapes, and
//! cells a spreadsheet would run. The real binary must refuse each without
//! blocking, name it on stderr without a single control character, and write
//! a CSV a spreadsheet reads as data.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{as_nobody, open_tempdir, write_as_nobody};
use pipebook::labs::export;
use pipebook::labs::store::LabsState;
use serde_json::{json, Value};

/// A report sealed as the server seals one, with `edit` applied before the seal.
fn sealed(student: &str, system: Value, edit: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut report = export::build(&LabsState::default(), system, "placeholder", 1);
    report["student"] = json!(student);
    report.as_object_mut().unwrap().remove("digest");
    edit(&mut report);
    serde_json::to_vec_pretty(&export::seal(report)).unwrap()
}

fn machine() -> Value {
    json!({"cpu_model": "Test CPU", "kernel": "6.12", "virtualization": "none"})
}

/// Runs `pipebook report ARGS` with a deadline: a hang is a failure, not a
/// stuck suite.
fn report(dir: &Path, args: &[&str]) -> (Option<i32>, Vec<u8>, Vec<u8>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pipebook"))
        .current_dir(dir)
        .arg("report")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("pipebook report still running after 30 s (blocked on a file?)");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().unwrap();
    (output.status.code(), output.stdout, output.stderr)
}

/// Whether `bytes` holds anything a terminal would act on (line ends apart).
fn has_controls(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    text.chars().any(|c| c.is_control() && c != '\n')
}

#[test]
fn hostile_report_files_are_refused_named_safely_and_never_block() {
    // The folder the students hand their reports in to: they can all write there.
    let dir = open_tempdir();
    let d = dir.path();
    std::fs::set_permissions(d, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    // Crafted by the student, as the student.
    as_nobody(
        "ln",
        &[
            "-s".as_ref(),
            "/dev/zero".as_ref(),
            d.join("zero.json").as_os_str(),
        ],
    );
    as_nobody("mkfifo", &[d.join("fifo.json").as_os_str()]);
    write_as_nobody(&d.join("big.json"), &vec![b' '; 9 << 20]);
    write_as_nobody(
        &d.join("escape.json"),
        &sealed("Eve\u{1b}]0;owned\u{7}\u{1b}[2J", machine(), |_| {}),
    );
    write_as_nobody(
        &d.join("long.json"),
        &sealed(&"x".repeat(10_000), machine(), |_| {}),
    );
    write_as_nobody(&d.join("empty.json"), &sealed("", machine(), |_| {}));
    write_as_nobody(
        &d.join("task.json"),
        &sealed("Tess", machine(), |report| {
            report["labs"][0]["measurements"] = json!([{
                "task": "repeat\n\u{0}\u{1b}[31m",
                "result": {"step": "write-read", "bytes": 1, "elapsed_ms": 1.0, "gib_per_s": 0.0}
            }]);
        }),
    );
    write_as_nobody(&d.join("evil\u{1b}[2Jname.json"), b"{ not json");
    // A report that merges, with cells a spreadsheet would evaluate.
    write_as_nobody(
        &d.join("formula.json"),
        &sealed(
            "=HYPERLINK(\"http://evil.example\",\"Ada\")",
            json!({"cpu_model": "@SUM(1+1)", "kernel": "+6.12", "virtualization": "-5"}),
            |_| {},
        ),
    );
    write_as_nobody(
        &d.join("minus.json"),
        &sealed(
            "-Bob",
            json!({"cpu_model": "\tcmd", "kernel": "-12", "virtualization": "-0.5"}),
            |_| {},
        ),
    );

    // The instructor writes the class table into the submissions folder,
    // where the student planted a link to one of the instructor's files.
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "the instructor's own file\n").unwrap();
    as_nobody(
        "ln",
        &[
            "-s".as_ref(),
            victim.as_os_str(),
            d.join("class.csv").as_os_str(),
        ],
    );

    let started = Instant::now();
    let (code, stdout, stderr) = report(
        d,
        &[
            "zero.json",
            "fifo.json",
            "big.json",
            "escape.json",
            "long.json",
            "empty.json",
            "task.json",
            "evil\u{1b}[2Jname.json",
            "formula.json",
            "minus.json",
            "--csv",
            "class.csv",
            "--html",
            "class.html",
        ],
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(code, Some(3), "{}", String::from_utf8_lossy(&stderr));
    assert!(stdout.is_empty());
    assert!(
        !has_controls(&stderr),
        "{:?}",
        String::from_utf8_lossy(&stderr)
    );
    let stderr = String::from_utf8(stderr).unwrap();
    let line = |file: &str| {
        stderr
            .lines()
            .find(|l| l.starts_with(&format!("pipebook report: skipped {file}: ")))
            .unwrap_or_else(|| panic!("{file} not named in:\n{stderr}"))
            .to_string()
    };
    assert!(line("zero.json").contains("symbolic link"));
    assert!(line("fifo.json").contains("FIFO"));
    assert!(line("big.json").contains("larger than 8 MiB"));
    let escape = line("escape.json");
    assert!(
        escape.contains("student name \"Eve\\u{1b}]0;owned\\u{7}"),
        "{escape}"
    );
    let long = line("long.json");
    assert!(
        long.contains("(10000 characters)") && long.len() < 400,
        "{long}"
    );
    assert!(line("empty.json").contains("student name \"\" must be 1 to 64 characters"));
    assert!(line("task.json").contains("task id \"repeat\\u{a}\\u{0}\\u{1b}[31m\""));
    assert!(line("evil\\u{1b}[2Jname.json").contains("malformed JSON"));
    assert!(stderr.contains("merged 2 report(s), skipped 8"), "{stderr}");

    // The CSV: formulas are text, plain negative numbers stay numbers.
    let csv = std::fs::read_to_string(d.join("class.csv")).unwrap();
    assert!(!has_controls(csv.as_bytes()), "{csv:?}");
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 3, "{csv}");
    assert!(
        rows[1].starts_with("\"'=HYPERLINK(\"\"http://evil.example\"\",\"\"Ada\"\")\",formula.json,'@SUM(1+1),'+6.12,-5,"),
        "{}",
        rows[1]
    );
    assert!(
        rows[2].starts_with("'-Bob,minus.json,\\u{9}cmd,-12,-0.5,"),
        "{}",
        rows[2]
    );
    for row in &rows[1..] {
        for cell in row.split(',') {
            let cell = cell.trim_start_matches('"');
            let formula = cell.starts_with(['=', '+', '@', '\t', '\r'])
                || (cell.starts_with('-') && cell.parse::<f64>().is_err());
            assert!(!formula, "{cell:?} in {row}");
        }
    }
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "the instructor's own file\n"
    );
    let html = std::fs::read_to_string(d.join("class.html")).unwrap();
    assert!(!has_controls(html.as_bytes()));
    assert!(!html.contains("<script"));
    // Nothing was read from the FIFO's writer side nor left waiting on it.
    assert!(d.join("fifo.json").exists());
}
