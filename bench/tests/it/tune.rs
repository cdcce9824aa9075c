//! `pipebench tune` on a small budget: real runs of every configuration and of
//! the step's own, interleaved in one session.

use crate::common::{assert_exits_saying, cpus, pipebench, stderr, stdout};
use serde_json::Value;

#[test]
fn tune_finds_a_best_with_its_gain_measured_in_the_same_session() {
    let _cpus = cpus();
    let output = pipebench(&["tune", "write-read", "--budget", "2", "--json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let result: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let rounds = result["rounds"].as_u64().unwrap();
    let median = |v: &Value| v["summary"]["median"].as_f64().unwrap();
    // The step's own configuration ran in every round, as every cell did.
    assert_eq!(result["baseline"]["summary"]["runs"].as_u64(), Some(rounds));
    let cells = result["cells"].as_array().unwrap();
    assert!(!cells.is_empty(), "{result}");
    for cell in cells {
        assert_eq!(cell["summary"]["runs"].as_u64(), Some(rounds), "{cell}");
        // write(2) copies its buffer: its pages are no knob of the search.
        assert!(cell.get("huge_pages").is_none(), "{cell}");
    }
    let best = &result["best"];
    // The best is the fastest cell by median, under an id of its own.
    assert!(cells.iter().all(|c| median(c) <= median(best)), "{result}");
    assert_ne!(best["id"], "write-read");
    assert_eq!(best["base"], "write-read");
    let argv: Vec<&str> = best["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let buf = best["buf_size"].as_u64().unwrap().to_string();
    let pipe = best["pipe_size"].as_u64().unwrap();
    assert_eq!(
        &argv[..3],
        ["pipebench", "run", "tuned-write-read"],
        "{argv:?}"
    );
    assert!(
        argv.contains(&"--pipe-size") && argv.contains(&"--buf-size"),
        "{argv:?}"
    );
    assert!(pipe >= 4096 && buf != "0", "{best}");
    // The gain is the ratio of the two medians, with the spread around it.
    let gain = &result["gain"];
    let ratio = gain["ratio"].as_f64().unwrap();
    assert!(
        (ratio - median(best) / median(&result["baseline"])).abs() < 1e-9,
        "{gain}"
    );
    assert!(gain["low"].as_f64().unwrap() <= ratio && ratio <= gain["high"].as_f64().unwrap());
    // And its 95% interval over the rounds' pairs (each round ran both), once
    // there are enough rounds for a signed-rank interval to reach 95% (6); with
    // fewer, none is stated. Where stated it lies within the spread (every
    // Walsh average of the rounds' log-ratios lies between the extreme ratios).
    let rounds = result["rounds"].as_u64().expect("rounds");
    if rounds < 6 {
        assert!(
            gain["ci_low"].is_null() && gain["ci_high"].is_null(),
            "{gain}"
        );
    } else {
        let (ci_low, ci_high) = (
            gain["ci_low"]
                .as_f64()
                .expect("an interval over six rounds"),
            gain["ci_high"]
                .as_f64()
                .expect("an interval over six rounds"),
        );
        assert!(ci_low <= ci_high, "{gain}");
        assert!(
            gain["low"].as_f64().unwrap() <= ci_low + 1e-9
                && ci_high <= gain["high"].as_f64().unwrap() + 1e-9,
            "{gain}"
        );
    }
    // Whether the step's own configuration won is said, by the one rule.
    assert_eq!(
        result["own_fastest"],
        median(&result["baseline"]) > median(best),
        "{result}"
    );
    // Every run had its share of the budget, and no less than the shortest
    // run a search gives: all of them fit in the budget.
    let seconds = result["seconds_per_run"].as_f64().unwrap();
    let runs = (cells.len() as u64 + 1) * rounds;
    assert!(seconds >= 0.3, "{seconds}");
    assert!(
        seconds * runs as f64 <= 2.0 + 1e-9,
        "{runs} runs of {seconds} s"
    );

    // The argv runs the variant again, under its own id and at its sizes.
    let mut again: Vec<&str> = argv[1..].to_vec();
    again.push("--json");
    let output = pipebench(&again);
    assert!(output.status.success(), "{again:?}: {}", stderr(&output));
    let run: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(run["step"], "tuned-write-read");
    assert_eq!(run["bytes_per_call"].to_string(), buf);
    // Without the sizes that make it one, the variant is refused.
    let bare = pipebench(&["run", "tuned-write-read", "--seconds", "0.2"]);
    assert_exits_saying(&bare, 2, "buf_size and pipe_size", "");
}

#[test]
fn a_budget_out_of_range_or_an_unknown_step_exits_2() {
    for args in [
        ["tune", "write-read", "--budget", "0.1"],
        ["tune", "no-such-step", "--budget", "2"],
    ] {
        let output = pipebench(&args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn a_vmsplice_step_is_searched_with_huge_pages_on_and_off_and_its_argv_repeats_the_choice() {
    let _cpus = cpus();
    // Four seconds afford three cells: the first sizes with both settings.
    let output = pipebench(&["tune", "vmsplice-splice", "--budget", "4", "--json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let result: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let cells = result["cells"].as_array().unwrap();
    for setting in [true, false] {
        assert!(
            cells.iter().any(|c| c["huge_pages"] == setting),
            "huge pages {setting}: {result}"
        );
    }
    // The step's own configuration is its own: small pages.
    assert_eq!(result["baseline"]["huge_pages"], false, "{result}");
    let best = &result["best"];
    let huge = best["huge_pages"].as_bool().unwrap();
    let argv: Vec<&str> = best["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let at = argv.iter().position(|a| *a == "--huge-pages").unwrap();
    assert_eq!(argv[at + 1], if huge { "on" } else { "off" }, "{argv:?}");
    // The argv (its runs' length included) runs the variant with the pages
    // the search chose.
    let mut again: Vec<&str> = argv[1..].to_vec();
    again.push("--json");
    let output = pipebench(&again);
    assert!(output.status.success(), "{again:?}: {}", stderr(&output));
    let run: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(run["step"], "tuned-vmsplice-splice");
    assert_eq!(run["options"]["writer"]["huge_pages"], huge, "{run}");
    // A copying writer's pages are no knob: asked of write-read, refused.
    let refused = pipebench(&[
        "run",
        "write-read",
        "--huge-pages",
        "on",
        "--seconds",
        "0.2",
    ]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
}
