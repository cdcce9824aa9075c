//! `pipebench wakeup` on the real machine: two pinned processes, a real ping-pong.

use crate::common::{assert_exits_saying, cpus, pipebench, stderr, stdout};
use serde_json::Value;

#[test]
fn wakeup_measures_a_positive_blocking_and_busy_round_trip() {
    let _cpus = cpus();
    let output = pipebench(&["wakeup", "--json", "--round-trips", "1000"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let w = &report["wakeup"];
    let blocking = w["blocking_us"].as_f64().unwrap();
    let busy = w["busy_us"].as_f64().unwrap();
    assert!(blocking > 0.0 && busy > 0.0, "{w}");
    // Blocking sleeps and wakes twice per round trip; spinning does neither.
    assert!(blocking > busy, "{w}");
    assert_eq!(w["round_trips"], 1000);
    let ids: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"wakeup-cost"), "{ids:?}");
}

#[test]
fn a_round_trip_count_out_of_range_is_refused() {
    let output = pipebench(&["wakeup", "--round-trips", "5"]);
    assert_exits_saying(&output, 2, "--round-trips 5", "");
}
