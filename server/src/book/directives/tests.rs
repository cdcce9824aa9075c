//! Tests of `directives`.

use super::*;

#[test]
fn run_expands_to_the_widget_contract() {
    let out = expand("Intro\n\n{{#run write-read}}\n\nmore\n", "baseline.md").unwrap();
    assert!(
        out.starts_with("Intro\n\n<div class=\"pipebook-run\" data-step=\"write-read\""),
        "{out}"
    );
    assert!(
        out.contains(r#"data-kind="article" data-article="3.7" data-reference="0.8-0.8">"#),
        "{out}"
    );
    assert!(out.contains(
        r#"<p class="pipebook-run-static"><strong>Run this step: write and read.</strong>"#
    ));
    assert!(out.contains("cargo run --release"));
    assert!(out.ends_with("</div>\n\nmore\n"), "{out}");
}

#[test]
fn steps_without_figures_have_no_figure_attributes() {
    let out = expand("{{#run same-buffer}}", "x.md").unwrap();
    assert!(
        !out.contains("data-article") && !out.contains("data-reference"),
        "{out}"
    );
    assert!(out.contains(r#"data-kind="variant""#));
}

#[test]
fn sweep_expands_to_its_widget_and_checks_its_words() {
    let out = expand("{{#sweep write-read pipe_size}}", "baseline.md").unwrap();
    assert!(
        out.starts_with(
            r#"<div class="pipebook-sweep" data-step="write-read" data-param="pipe_size""#
        ),
        "{out}"
    );
    assert!(
        out.contains("pipebench sweep write-read --pipe-size VALUES"),
        "{out}"
    );
    for (md, needle) in [
        ("{{#sweep write-read}}", "one step and one parameter"),
        ("{{#sweep write-read colour}}", "cannot sweep `colour`"),
        ("{{#sweep warp-drive buf_size}}", "warp-drive"),
    ] {
        let err = expand(md, "x.md").unwrap_err().to_string();
        assert!(err.contains(needle), "{md}: {err}");
    }
}

#[test]
fn a_lab_card_opens_with_its_id_and_its_definition() {
    let out = expand("{{#lab variance}}", "labs/variance.md").unwrap();
    // `\u{7b}` is the `{` that opens the definition's JSON, written as an escape
    // so that brace-matching readers of this file stay in step.
    assert!(
        out.starts_with(
            "<div class=\"pipebook-lab\" data-lab=\"variance\" data-def=\"\u{7b}&quot;id&quot;:&quot;variance&quot;"
        ),
        "{out}"
    );
}

#[test]
fn a_lab_card_is_headed_by_the_labs_title() {
    let out = expand("{{#lab variance}}", "labs/variance.md").unwrap();
    assert!(
        out.contains("<strong>Lab: Baseline and variance.</strong>"),
        "{out}"
    );
}

#[test]
fn an_unknown_lab_is_refused_naming_the_labs_there_are() {
    let err = expand("{{#lab warp}}", "x.md").unwrap_err().to_string();
    assert!(
        err.contains("unknown lab `warp`") && err.contains("variance"),
        "{err}"
    );
}

#[test]
fn ipc_cards_carry_the_mechanism_and_the_surveys_source() {
    let out = expand("{{#ipc posix-shm}}", "zero-copy.md").unwrap();
    assert!(
            out.starts_with(
                r#"<div class="pipebook-ipc" data-mechanism="posix-shm" data-title="POSIX shared memory"#
            ),
            "{out}"
        );
    assert!(
        out.contains(r#"data-copies="0" data-survey-ms="1373" data-survey-bytes="209715200""#),
        "{out}"
    );
    assert!(
        out.contains("in an emulator") && out.contains("200MiB"),
        "{out}"
    );
    assert!(out.contains("pipebench ipc posix-shm"), "{out}");
    let direct = expand("{{#ipc direct-io}}", "x.md").unwrap();
    assert!(
        direct.contains("second zero-copy survey") && direct.contains("CPU time (clock())"),
        "{direct}"
    );
    assert!(!direct.contains("BiscuitOS"), "{direct}");
    let none = expand("{{#ipc unix-stream}}", "x.md").unwrap();
    assert!(
        !none.contains("data-survey-ms") && none.contains("no time"),
        "{none}"
    );
    assert!(expand("{{#ipc-matrix}}", "x.md")
        .unwrap()
        .starts_with(r#"<div class="pipebook-ipc-matrix">"#));
    for (md, needle) in [
        ("{{#ipc}}", "one mechanism per widget"),
        ("{{#ipc a b}}", "one mechanism per widget"),
        ("{{#ipc-matrix now}}", "takes no arguments"),
        (
            "{{#ipc carrier-pigeon}}",
            "unknown IPC mechanism `carrier-pigeon`",
        ),
    ] {
        let err = expand(md, "x.md").unwrap_err().to_string();
        assert!(err.contains(needle), "{md}: {err}");
    }
}

#[test]
fn pages_and_walk_expand_and_check_their_words() {
    let out = expand("{{#pages vmsplice-splice huge-pages:untouched}}", "x.md").unwrap();
    assert!(
        out.starts_with(
            r#"<div class="pipebook-pages" data-specs="vmsplice-splice huge-pages:untouched">"#
        ),
        "{out}"
    );
    assert!(
        out.contains("pipebench pages --step huge-pages --dont-touch-pages"),
        "{out}"
    );
    let out = expand("{{#walk}}", "x.md").unwrap();
    assert!(
        out.contains(r#"data-address="0x0000f2705af953c0""#),
        "{out}"
    );
    let out = expand("{{#walk 0x7f0000001000}}", "x.md").unwrap();
    assert!(
        out.contains(r#"data-address="0x00007f0000001000""#),
        "{out}"
    );
    for (md, needle) in [
        ("{{#pages}}", "0 steps"),
        ("{{#pages a b c}}", "3 steps"),
        ("{{#pages huge-pages:crumpled}}", "`:crumpled`"),
        ("{{#pages warp-drive}}", "warp-drive"),
        ("{{#walk 0xzz}}", "not an address"),
    ] {
        let err = expand(md, "x.md").unwrap_err().to_string();
        assert!(err.contains(needle), "{md}: {err}");
    }
}

/// The build check's list of classes is exactly what the directives write: a
/// directive with a new class, or a class left in the list after its directive
/// went, fails here rather than on a reader's page.
#[test]
fn the_widget_check_knows_every_class_the_directives_write() {
    use super::super::widgets::{pipebook_classes, INNER_CLASSES, PLACEHOLDER_CLASSES};
    let every_kind = "{{#run write-read}}\n\n{{#sweep write-read pipe_size}}\n\n\
            {{#lab variance}}\n\n{{#ipc posix-shm}}\n\n{{#ipc-matrix}}\n\n\
            {{#pages vmsplice-splice huge-pages}}\n\n{{#walk}}\n\n{{#results}}\n\n{{#system}}\n\n\
            {{#latency pipe}}\n\n{{#latency-matrix}}\n\n{{#tune busy-loop}}\n\n{{#tool}}\n\n\
            {{#shared-pipe}}\n\n{{#compare busy-loop write-read}}\n\n{{#kernel vmsplice}}\n\n{{#aa write-read}}\n";
    let out = expand(every_kind, "x.md").unwrap();
    let mut written: Vec<&str> = pipebook_classes(&out);
    written.sort_unstable();
    written.dedup();
    let mut known: Vec<&str> = PLACEHOLDER_CLASSES
        .iter()
        .chain(INNER_CLASSES)
        .copied()
        .collect();
    known.sort_unstable();
    assert_eq!(written, known);
    // Each directive's outermost class is one of the placeholders.
    for block in out.split("\n\n") {
        let first = pipebook_classes(block)[0];
        assert!(PLACEHOLDER_CLASSES.contains(&first), "{block}");
    }
}

#[test]
fn past_the_article_cards_name_a_known_step_or_nothing() {
    let tune = expand("{{#tune busy-loop}}", "x.md").unwrap();
    assert!(
        tune.contains(r#"class="pipebook-tune" data-step="busy-loop" data-budget="20" data-budget-min="2" data-budget-max="120""#),
        "{tune}"
    );
    assert!(expand("{{#tool}}", "x.md")
        .unwrap()
        .contains(r#"class="pipebook-tool""#));
    assert!(expand("{{#shared-pipe}}", "x.md")
        .unwrap()
        .contains(r#"class="pipebook-shared-pipe""#));
    for bad in [
        "{{#tune}}",
        "{{#tune nope}}",
        "{{#tune busy-loop write-read}}",
        "{{#tool cat}}",
        "{{#shared-pipe 4}}",
    ] {
        assert!(expand(bad, "x.md").is_err(), "{bad}");
    }
}

#[test]
fn latency_cards_carry_their_modes_and_refuse_unknown_mechanisms() {
    let out = expand("{{#latency shm-ring}}", "x.md").unwrap();
    assert!(out.contains(r#"data-mechanism="shm-ring""#), "{out}");
    assert!(out.contains(r#"data-modes="busy""#), "{out}");
    let matrix = expand("{{#latency-matrix}}", "x.md").unwrap();
    assert!(
        matrix.contains("unix-dgram") && matrix.contains("data-mechanisms"),
        "{matrix}"
    );
    for (md, needle) in [
        ("{{#latency carrier-pigeon}}", "carrier-pigeon"),
        ("{{#latency}}", "one mechanism per card"),
        ("{{#latency-matrix now}}", "takes no arguments"),
    ] {
        let err = expand(md, "x.md").unwrap_err().to_string();
        assert!(err.contains(needle), "{md}: {err}");
    }
}

#[test]
fn every_second_survey_card_is_a_mechanism_with_a_figure() {
    for (id, _) in SECOND_SURVEY {
        let mechanism = ipc::find(id).unwrap_or_else(|| panic!("{id} is not a mechanism"));
        assert!(mechanism.survey.is_some(), "{id} has no survey figure");
    }
}

#[test]
fn placeholders_expand() {
    let out = expand("{{#results}}\n\n{{#system}}", "x.md").unwrap();
    assert_eq!(
        out,
        "<div class=\"pipebook-results\"></div>\n\n<div class=\"pipebook-system\"></div>"
    );
}

#[test]
fn unknown_step_names_chapter_id_and_known_ids() {
    let err = expand("{{#run warp-drive}}", "book/src/x.md")
        .unwrap_err()
        .to_string();
    assert!(err.contains("book/src/x.md"), "{err}");
    assert!(err.contains("warp-drive"), "{err}");
    assert!(err.contains("write-read, vmsplice-read"), "{err}");
}

#[test]
fn code_and_other_directives_are_left_alone() {
    let md = "`{{#run nope}}` and\n\n```\n{{#run nope}}\n```\n\n{{#include a.rs}}\n";
    assert_eq!(expand(md, "x.md").unwrap(), md);
}

#[test]
fn malformed_directives_fail() {
    for md in ["{{#run}}", "{{#run a b}}", "{{#results now}}"] {
        let err = expand(md, "x.md").unwrap_err().to_string();
        assert!(err.contains("x.md") && err.contains(md), "{err}");
    }
}

#[test]
fn kernel_expands_to_a_line_the_page_fills_and_refuses_unknown_probes() {
    let out = expand("{{#kernel vmsplice}}", "vmsplice.md").unwrap();
    assert!(
        out.starts_with(r#"<div class="pipebook-kernel" data-probe="vmsplice">"#),
        "{out}"
    );
    assert!(out.contains("pipebench system"), "{out}");
    let err = expand("{{#kernel nonsense}}", "vmsplice.md")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("spare-pages") && err.contains("vmsplice"),
        "{err}"
    );
    assert!(expand("{{#kernel}}", "x.md").is_err());
    assert!(expand("{{#kernel thp perf}}", "x.md").is_err());
}

#[test]
fn the_a_a_card_names_one_known_step_and_says_what_to_run_without_the_runner() {
    let card = expand("{{#aa write-read}}", "x.md").unwrap();
    assert!(
        card.contains(r#"class="pipebook-aa" data-step="write-read""#),
        "{card}"
    );
    assert!(
        card.contains("pipebench compare write-read write-read --pairs 6"),
        "{card}"
    );
    for bad in ["{{#aa}}", "{{#aa nope}}", "{{#aa write-read busy-loop}}"] {
        assert!(expand(bad, "x.md").is_err(), "{bad} should be refused");
    }
}
