//! `pipebook report` on files a student (`nobody`) crafted to be read
//! differently by different readers or to exhaust the instructor's machine: a
//! key given twice, nesting a million levels deep, a number past any float, a
//! name with an invisible Arabic letter mark (U+061C, category Cf), and more
//! files than one merge takes. Each is refused with why; the exit status rules
//! stay (3 when a file was left out, 1 when the merge cannot be done at all).

use std::process::Command;

use serde_json::json;

use crate::common::{open_tempdir, write_as_nobody};
use pipebook::labs::export;
use pipebook::labs::store::LabsState;

fn sealed(student: &str) -> Vec<u8> {
    let report = export::build(
        &LabsState::default(),
        json!({"cpu_model": "Test CPU", "kernel": "6.12"}),
        student,
        1,
    );
    serde_json::to_vec_pretty(&report).unwrap()
}

#[test]
fn reports_built_to_be_misread_or_to_exhaust_the_merge_are_refused_with_why() {
    let dir = open_tempdir();
    let d = dir.path();
    std::fs::set_permissions(d, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    write_as_nobody(&d.join("good.json"), &sealed("Ada"));
    // The student's name twice: serde_json keeps the last, a viewer the first.
    let good = String::from_utf8(sealed("Eve")).unwrap();
    let twice = good.replacen(
        "\"student\": \"Eve\"",
        "\"student\": \"Ada\", \"student\": \"Eve\"",
        1,
    );
    assert_ne!(twice, good);
    write_as_nobody(&d.join("twice.json"), twice.as_bytes());
    write_as_nobody(&d.join("deep.json"), "[".repeat(1 << 20).as_bytes());
    write_as_nobody(&d.join("huge.json"), b"{\"schema\": 1e400}");
    write_as_nobody(&d.join("mark.json"), &sealed("Ali\u{61c}ce"));
    let output = Command::new(env!("CARGO_BIN_EXE_pipebook"))
        .current_dir(d)
        .args([
            "report",
            "good.json",
            "twice.json",
            "deep.json",
            "huge.json",
            "mark.json",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    let line = |file: &str| {
        stderr
            .lines()
            .find(|l| l.starts_with(&format!("pipebook report: skipped {file}: ")))
            .unwrap_or_else(|| panic!("{file} not named in:\n{stderr}"))
            .to_string()
    };
    assert!(line("twice.json").contains("appears twice"), "{stderr}");
    assert!(line("deep.json").contains("levels deep"), "{stderr}");
    assert!(line("huge.json").contains("malformed JSON"), "{stderr}");
    let mark = line("mark.json");
    assert!(mark.contains("Ali\\u{61c}ce"), "{mark}");
    assert!(mark.contains("invisible formatting characters"), "{mark}");
    assert!(stderr.contains("merged 1 report(s), skipped 4"), "{stderr}");
    assert!(String::from_utf8_lossy(&output.stdout).contains("Ada"));

    // Ten thousand files: refused before any is read, with what to do.
    let many: Vec<String> = (0..10_000).map(|i| format!("r{i}.json")).collect();
    let output = Command::new(env!("CARGO_BIN_EXE_pipebook"))
        .current_dir(d)
        .arg("report")
        .args(&many)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("10000 files given, but at most 500"),
        "{stderr}"
    );
    assert!(stderr.contains("merge the class in parts"), "{stderr}");
}
