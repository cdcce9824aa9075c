//! Tests of `store::tuned`.

use super::*;
use pipebench::output::stats::Summary;

#[test]
fn a_tuned_variant_runs_at_its_own_sizes_only_once_found() {
    let tuned = TunedVariants::default();
    let none = RunParams::default();
    let err = tuned.params_for("tuned-busy-loop", &none).unwrap_err();
    assert!(matches!(err, VariantRefusal::NotTuned { .. }), "{err}");
    // Catalog steps pass through untouched.
    assert_eq!(tuned.params_for("busy-loop", &none).unwrap(), none);
    let summary = Summary {
        median: 10.0,
        min: 9.0,
        max: 11.0,
        runs: 3,
    };
    tuned
        .register(&Best {
            id: "tuned-busy-loop".into(),
            base: "busy-loop".into(),
            buf_size: 1 << 20,
            pipe_size: 1 << 20,
            huge_pages: None,
            summary,
            argv: vec![],
        })
        .unwrap();
    let params = tuned.params_for("tuned-busy-loop", &none).unwrap();
    assert_eq!(params.buf_size, Some(ByteSize(1 << 20)));
    assert_eq!(params.pipe_size, Some(ByteSize(1 << 20)));
    let other = RunParams {
        pipe_size: Some(ByteSize(64 << 10)),
        ..RunParams::default()
    };
    assert!(matches!(
        tuned.params_for("tuned-busy-loop", &other),
        Err(VariantRefusal::TunedSize {
            field: "pipe_size",
            ..
        })
    ));
    assert_eq!(tuned.list().len(), 1);
}

#[test]
fn a_kept_variant_is_read_back_and_the_file_stays_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let (tuned, load) = TunedVariants::open(dir.path()).unwrap();
    assert_eq!((load.variants, load.refused.len()), (0, 0));
    let best = |step: &str, buf_size: u64, median: f64| Best {
        id: format!("tuned-{step}"),
        base: step.into(),
        buf_size,
        pipe_size: 256 << 10,
        huge_pages: None,
        summary: Summary {
            median,
            min: median,
            max: median,
            runs: 3,
        },
        argv: vec!["ignored".into()],
    };
    // Far more searches than the file keeps lines for.
    for i in 0..(TUNED_COMPACT_LINES + 10) {
        let buf = tune::BUF_SIZES[i % tune::BUF_SIZES.len()];
        tuned.register(&best("busy-loop", buf, i as f64)).unwrap();
    }
    tuned.register(&best("write-read", 64 << 10, 2.0)).unwrap();
    let path = dir.path().join(TUNED_FILE);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.lines().count() <= TUNED_COMPACT_LINES, "{text}");
    assert!(!dir.path().join(TUNED_COMPACTING).exists());
    let (again, load) = TunedVariants::open(dir.path()).unwrap();
    assert!(load.refused.is_empty(), "{:?}", load.refused);
    // The newest search of each step, with the planner's command line.
    assert_eq!(again.list(), tuned.list());
    let busy = &again.list()[0];
    assert_eq!(busy.median, (TUNED_COMPACT_LINES + 9) as f64);
    assert_eq!(&busy.argv[..3], ["pipebench", "run", "tuned-busy-loop"]);
    // A best the planner would refuse is neither kept nor offered.
    let mut odd = best("busy-loop", 3 << 20, 1.0);
    odd.pipe_size = 1 << 40;
    assert!(tuned.register(&odd).is_err());
    assert_eq!(tuned.list().len(), 2);
}

#[test]
fn a_variant_another_server_kept_is_read_again_and_the_newest_search_wins() {
    let dir = tempfile::tempdir().unwrap();
    let (one, _) = TunedVariants::open(dir.path()).unwrap();
    let (other, _) = TunedVariants::open(dir.path()).unwrap();
    let best = |buf_size: u64| Best {
        id: "tuned-busy-loop".into(),
        base: "busy-loop".into(),
        buf_size,
        pipe_size: 256 << 10,
        huge_pages: None,
        summary: Summary {
            median: 5.0,
            min: 5.0,
            max: 5.0,
            runs: 3,
        },
        argv: vec![],
    };
    one.register(&best(64 << 10)).unwrap();
    assert!(other.list().is_empty());
    let load = other.refresh().unwrap().expect("the file changed");
    assert!(load.refused.is_empty());
    assert_eq!(other.list(), one.list());
    // Unchanged since: nothing is read.
    assert!(other.refresh().unwrap().is_none());
    // The other server's newer search replaces it everywhere once read.
    std::thread::sleep(std::time::Duration::from_millis(2));
    other.register(&best(1 << 20)).unwrap();
    one.refresh().unwrap().expect("the file changed");
    assert_eq!(one.list()[0].buf_size, 1 << 20);
    // An older line read back does not replace a newer search's variant.
    let older = TunedLine {
        id: "tuned-busy-loop".into(),
        base: "busy-loop".into(),
        buf_size: 256 << 10,
        pipe_size: 256 << 10,
        huge_pages: None,
        median: 1.0,
        found_at_ms: 1,
    };
    let mut line = serde_json::to_vec(&older).unwrap();
    line.push(b'\n');
    crate::store::jsonl::append(dir.path(), TUNED_FILE, &line).unwrap();
    one.refresh().unwrap().expect("the file changed");
    assert_eq!(one.list()[0].buf_size, 1 << 20);
}

#[test]
fn a_failed_save_is_typed_by_its_cause_not_its_words() {
    let link = TunedSaveError::State(StateError::FileIsLink {
        path: "/state/tuned.jsonl".into(),
    });
    assert_eq!(link.to_save_error().kind, SaveErrorKind::UnsafeFile);
    let full = TunedSaveError::State(statefile::io("cannot append to", Path::new("/x"))(
        std::io::Error::from_raw_os_error(libc::ENOSPC),
    ));
    assert_eq!(full.to_save_error().kind, SaveErrorKind::NoSpace);
    let refused = TunedSaveError::Refused(TunedRefusal::Median(f64::NAN));
    assert_eq!(refused.to_save_error().kind, SaveErrorKind::NotRunnable);
}

#[test]
fn a_line_names_its_pages_only_where_a_search_tries_them_and_older_lines_still_load() {
    let dir = tempfile::tempdir().unwrap();
    // A line written before huge pages were a knob, and lines that name them.
    let lines = [
        r#"{"id":"tuned-busy-loop","base":"busy-loop","buf_size":1048576,"pipe_size":1048576,"median":50.0,"found_at_ms":1}"#,
        r#"{"id":"tuned-vmsplice-splice","base":"vmsplice-splice","buf_size":1048576,"pipe_size":1048576,"huge_pages":true,"median":30.0,"found_at_ms":2}"#,
        // write(2)'s writer copies: its pages are no knob, so huge ones are refused.
        r#"{"id":"tuned-write-read","base":"write-read","buf_size":1048576,"pipe_size":1048576,"huge_pages":true,"median":9.0,"found_at_ms":3}"#,
    ];
    std::fs::write(dir.path().join(TUNED_FILE), lines.join("\n") + "\n").unwrap();
    let (tuned, load) = TunedVariants::open(dir.path()).unwrap();
    assert_eq!(load.variants, 2, "{:?}", load.refused);
    assert_eq!(load.refused.len(), 1, "{:?}", load.refused);
    let find = |id: &str| tuned.list().into_iter().find(|v| v.id == id).unwrap();
    // The old line: the step's own pages, said by no flag beyond what the
    // planner says of the variant.
    let old = find("tuned-busy-loop");
    assert_eq!(old.huge_pages, None);
    assert_eq!(
        tuned
            .params_for("tuned-busy-loop", &RunParams::default())
            .unwrap()
            .huge_pages,
        None
    );
    // Nor may its run ask for other pages than the step's own: kept under the
    // tuned id, it would be a configuration no search found.
    let own = catalog::tuned_base("tuned-busy-loop")
        .unwrap()
        .writer
        .common
        .huge_pages;
    let other = RunParams {
        huge_pages: Some(!own),
        ..RunParams::default()
    };
    assert!(matches!(
        tuned.params_for("tuned-busy-loop", &other),
        Err(VariantRefusal::TunedPages { chosen, asked, .. }) if chosen == own && asked != own
    ));
    let same = RunParams {
        huge_pages: Some(own),
        ..RunParams::default()
    };
    assert_eq!(
        tuned
            .params_for("tuned-busy-loop", &same)
            .unwrap()
            .huge_pages,
        None
    );
    // The new one runs with its pages, repeats them, and refuses the others.
    let huge = find("tuned-vmsplice-splice");
    assert_eq!(huge.huge_pages, Some(true));
    let at = huge.argv.iter().position(|a| a == "--huge-pages").unwrap();
    assert_eq!(huge.argv[at + 1], "on");
    let params = tuned
        .params_for("tuned-vmsplice-splice", &RunParams::default())
        .unwrap();
    assert_eq!(params.huge_pages, Some(true));
    let small = RunParams {
        huge_pages: Some(false),
        ..RunParams::default()
    };
    assert!(matches!(
        tuned.params_for("tuned-vmsplice-splice", &small),
        Err(VariantRefusal::TunedPages {
            chosen: true,
            asked: false,
            ..
        })
    ));
    // Kept again as it was found: the compacted line still names its pages.
    let best = Best {
        id: "tuned-vmsplice-splice".into(),
        base: "vmsplice-splice".into(),
        buf_size: 64 << 10,
        pipe_size: 64 << 10,
        huge_pages: Some(false),
        summary: Summary {
            median: 31.0,
            min: 31.0,
            max: 31.0,
            runs: 3,
        },
        argv: vec![],
    };
    tuned.register(&best).unwrap();
    let (again, _) = TunedVariants::open(dir.path()).unwrap();
    let kept = again
        .list()
        .into_iter()
        .find(|v| v.id == "tuned-vmsplice-splice")
        .unwrap();
    assert_eq!(kept.huge_pages, Some(false));
}
