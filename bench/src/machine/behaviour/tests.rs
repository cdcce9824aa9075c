use std::collections::HashSet;
use std::time::Instant;

use super::*;

#[test]
fn every_outcome_is_worded_with_its_own_line_and_what_to_expect() {
    let mut lines = HashSet::new();
    let outcomes = every_outcome("seen");
    for probe in outcomes.iter().filter(|p| p.why_unknown.is_none()) {
        assert!(probe.line.starts_with("On this machine: "), "{probe:?}");
        let how = probe.line.ends_with("(measured).") || probe.line.ends_with("(read).");
        assert!(how, "a line says how it knows: {probe:?}");
        assert!(!probe.expect.is_empty() && probe.evidence == "seen");
        assert_ne!(probe.answer, "unknown");
        assert!(
            lines.insert(probe.line.clone()),
            "two outcomes share {}",
            probe.line
        );
    }
    // Every probe has at least two outcomes, and one could not run.
    for id in ProbeId::ALL {
        assert!(
            outcomes.iter().filter(|p| p.id == id).count() >= 2,
            "{id:?}"
        );
    }
    assert!(outcomes.iter().any(|p| p.answer == "unknown"));
}

#[test]
fn a_probe_that_cannot_run_says_why_and_that_the_chapter_cannot_tell() {
    let probe = worded(ProbeId::SparePages, Err("no tracefs".into()), 1.0);
    assert_eq!(probe.answer, "unknown");
    assert_eq!(probe.why_unknown.as_deref(), Some("no tracefs"));
    assert!(probe.line.contains("cannot tell"));
    let json = serde_json::to_value(&probe).unwrap();
    assert_eq!(json["id"], "spare-pages");
    assert_eq!(json["why_unknown"], "no tracefs");
}

#[test]
fn probe_ids_round_trip_through_their_names() {
    for id in ProbeId::ALL {
        assert_eq!(ProbeId::parse(id.as_str()), Some(id));
        let json = serde_json::to_value(id).unwrap();
        assert_eq!(json, id.as_str());
    }
    assert_eq!(ProbeId::parse("nonsense"), None);
}

/// The probes on this machine, for real: each answers (or says why not), and
/// together they take under two seconds, as a server start can afford.
#[test]
fn the_probes_answer_this_kernel_within_two_seconds() {
    let start = Instant::now();
    let probes = probe_all();
    let took = start.elapsed();
    assert_eq!(probes.len(), ProbeId::ALL.len());
    assert!(
        took.as_secs_f64() < 2.0,
        "the probes took {took:?}: {probes:#?}"
    );
    for p in &probes {
        match &p.why_unknown {
            Some(why) => assert!(!why.is_empty() && p.answer == "unknown", "{p:?}"),
            None => assert!(!p.evidence.is_empty() && p.answer != "unknown", "{p:?}"),
        }
    }
    // Questions any kernel of this project's range answers without privilege.
    for id in [
        ProbeId::Vmsplice,
        ProbeId::PipeTimestamps,
        ProbeId::FullPipeWakeups,
    ] {
        let p = probes.iter().find(|p| p.id == id).unwrap();
        assert!(p.why_unknown.is_none(), "{p:?}");
    }
}

#[test]
fn the_terminal_shows_every_crafted_outcome_with_its_evidence_or_why() {
    let probes = every_outcome("evidence of it");
    let text = text(&probes);
    for p in &probes {
        assert!(text.contains(&p.line), "{text}");
        assert!(
            text.contains(&format!("[{}: {}]", p.id.as_str(), p.answer)),
            "{text}"
        );
        assert!(text.contains(&p.expect), "{text}");
    }
    assert!(text.contains("seen: evidence of it (1 ms)"), "{text}");
    assert!(
        text.contains("why:  counting page allocations needs root"),
        "{text}"
    );
}
