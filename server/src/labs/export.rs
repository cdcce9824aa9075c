//! "Export my lab report": every lab's prediction, measurements and checks, with
//! the machine they ran on, as JSON sealed with a SHA-256 digest of its
//! canonical form, and as a self-contained HTML page (see `render`).
//!
//! Canonical form: the report without its `digest` field, as compact JSON with
//! every object's keys in byte order, numbers as serde_json writes them. A file
//! read back and written canonically again gives the same bytes, so anyone can
//! recompute the digest.

use pipebench::machine::behaviour::Probe;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::checks::{self, Evaluated};
use super::defs::{labs, Lab};
use super::measurement::Measurement;
use super::names::{self, BadName};
use super::store::LabsState;

/// What a lab report says it is.
pub(crate) const SCHEMA: &str = "pipebook-lab-report";
/// The report format's version; `pipebook report` reads only this one.
pub(crate) const SCHEMA_VERSION: u64 = 1;

/// Why an export was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum ExportError {
    /// A name the report cannot carry: the rule of [`names::check_name`],
    /// which `pipebook report` applies again when it merges.
    #[error(transparent)]
    BadStudent(#[from] BadName),
}

/// Why a report's digest does not hold.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DigestError {
    /// No `digest.value` string, or another algorithm.
    #[error("the report has no sha256 digest")]
    Missing,
    /// The content changed after the report was sealed.
    #[error("digest mismatch: the file says {recorded}, its content hashes to {computed}")]
    Mismatch {
        /// In the file.
        recorded: String,
        /// Of its content.
        computed: String,
    },
}

/// A student name fit for a report: trimmed, then held to the one rule for
/// names and ids.
pub(crate) fn student_name(name: &str) -> Result<String, ExportError> {
    let name = name.trim();
    names::check_name("student name", name)?;
    Ok(name.to_string())
}

/// `value` as canonical JSON: compact, keys sorted at every level.
pub(crate) fn canonical(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

/// Writes keys in byte order whatever order the map keeps (serde_json keeps
/// insertion order when its `preserve_order` feature is on).
fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The hex SHA-256 of a report's canonical form, without its `digest` field.
pub(crate) fn digest_of(report: &Value) -> String {
    let mut content = report.clone();
    if let Value::Object(map) = &mut content {
        map.remove("digest");
    }
    format!("{:x}", Sha256::digest(canonical(&content).as_bytes()))
}

/// Adds the digest to a report.
pub fn seal(mut report: Value) -> Value {
    let value = digest_of(&report);
    if let Value::Object(map) = &mut report {
        map.insert(
            "digest".into(),
            json!({"algorithm": "sha256", "value": value}),
        );
    }
    report
}

/// Whether a report's digest matches its content.
pub fn verify_digest(report: &Value) -> Result<(), DigestError> {
    let recorded = match (
        report.pointer("/digest/algorithm").and_then(Value::as_str),
        report.pointer("/digest/value").and_then(Value::as_str),
    ) {
        (Some("sha256"), Some(value)) => value.to_string(),
        _ => return Err(DigestError::Missing),
    };
    let computed = digest_of(report);
    if computed == recorded {
        Ok(())
    } else {
        Err(DigestError::Mismatch { recorded, computed })
    }
}

fn evaluated_json(e: &Evaluated) -> Value {
    match e {
        Evaluated::Number(v) if v.is_finite() => json!(v),
        Evaluated::Choice(c) => json!(c),
        _ => Value::Null,
    }
}

/// One lab's part of a report.
pub(crate) fn lab_entry(
    lab: &Lab,
    prediction: Option<&Value>,
    measurements: &[Measurement],
    kernel: &[Probe],
) -> Value {
    let checks: Vec<Value> = lab
        .checks
        .iter()
        .zip(checks::judge_all(lab, measurements, kernel))
        .map(|(check, outcome)| {
            let mut entry = json!({
                "id": check.id,
                "title": check.title,
                "status": outcome.status,
                "value": outcome.value,
                "detail": outcome.detail,
            });
            // A throughput ratio's interval travels with it, so whoever reads
            // the report sees how sure the verdict was (and `pipebook report`
            // recomputes it rather than trusting it).
            if let (Some(low), Some(high)) = (outcome.ci_low, outcome.ci_high) {
                entry["ci_low"] = json!(low);
                entry["ci_high"] = json!(high);
            }
            if let Some(more) = outcome.more_runs {
                entry["more_runs"] = json!(more);
            }
            // The runner's judgement itself (method, level, sizes, sentence),
            // so the page shows it and judges nothing; recomputed, never
            // trusted, when a report is read back.
            if let Some(judged) = &outcome.judged {
                entry["judged"] = json!(judged);
            }
            // The kernel behaviour the check rests on, and what was probed.
            if let Some(assumed) = &outcome.assumes {
                entry["assumes"] = json!(assumed);
            }
            entry
        })
        .collect();
    json!({
        "id": lab.id,
        "title": lab.title,
        "prediction": {
            "question": lab.prediction.question,
            "unit": lab.prediction.unit,
            "value": prediction.cloned().unwrap_or(Value::Null),
            "answer": evaluated_json(&checks::evaluate(lab, measurements, &lab.prediction.answer)),
        },
        "measurements": measurements,
        "checks": checks,
    })
}

/// The report of every lab in `state`, sealed. `system` is `/api/system`.
pub fn build(state: &LabsState, system: Value, student: &str, generated_at_ms: u64) -> Value {
    let kernel = checks::behaviour_of(&system);
    let entries: Vec<Value> = labs()
        .labs
        .iter()
        .map(|lab| {
            let lab_state = state.labs.get(&lab.id);
            lab_entry(
                lab,
                lab_state
                    .and_then(|s| s.prediction.as_ref())
                    .map(|p| &p.value),
                lab_state.map_or(&[][..], |s| &s.measurements),
                &kernel,
            )
        })
        .collect();
    seal(json!({
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "pipebook_version": env!("CARGO_PKG_VERSION"),
        "generated_at_ms": generated_at_ms,
        "student": student,
        "system": system,
        "labs": entries,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_form_sorts_keys_and_survives_a_round_trip() {
        let value =
            json!({"b": [1, 2.5, {"z": null, "a": "x"}], "a": 1.0, "c": 2.5420000000000003});
        assert_eq!(
            canonical(&value),
            r#"{"a":1.0,"b":[1,2.5,{"a":"x","z":null}],"c":2.5420000000000003}"#
        );
        let reread: Value =
            serde_json::from_str(&serde_json::to_string_pretty(&value).unwrap()).unwrap();
        assert_eq!(canonical(&reread), canonical(&value));
    }

    #[test]
    fn a_sealed_report_verifies_until_touched() {
        let report = build(&LabsState::default(), json!({"kernel": "6.12"}), "Ada", 5);
        assert_eq!(verify_digest(&report), Ok(()));
        let mut touched = report.clone();
        touched["student"] = json!("Bob");
        assert!(matches!(
            verify_digest(&touched),
            Err(DigestError::Mismatch { .. })
        ));
        let mut unsealed = report;
        unsealed.as_object_mut().unwrap().remove("digest");
        assert_eq!(verify_digest(&unsealed), Err(DigestError::Missing));
    }

    #[test]
    fn student_names_are_bounded() {
        assert_eq!(student_name("  Ada ").unwrap(), "Ada");
        assert!(student_name("").is_err());
        assert!(student_name("a\nb").is_err());
        assert!(student_name(&"x".repeat(65)).is_err());
    }
}
