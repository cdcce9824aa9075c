//! Tests of `plan`.

use super::*;
use crate::size::KIB;

#[test]
fn plans_apply_params_within_bounds() {
    let params = RunParams {
        bytes: Some(ByteSize(64 * MIB)),
        buf_size: Some(ByteSize(512 * KIB)),
        seconds: Some(2.0),
        ..Default::default()
    };
    let plan = RunPlan::for_step_id("busy-loop", &params, &Limits::default()).unwrap();
    assert_eq!(plan.writer.common.bytes, ByteSize(64 * MIB));
    assert_eq!(plan.reader.common.bytes, ByteSize(64 * MIB));
    assert_eq!(plan.reader.common.buf_size, ByteSize(512 * KIB));
    // vmsplice: the pipe follows the chunk, half of it, as write.cpp forces.
    assert_eq!(plan.writer.pipe_size, Some(ByteSize(256 * KIB)));
    assert_eq!(plan.time_budget, Some(Duration::from_secs(2)));
    assert!(plan.writer.vmsplice && plan.writer.common.huge_pages && plan.reader.splice);
}

#[test]
fn plans_refuse_unknown_steps_and_wild_params() {
    let limits = Limits::default();
    let unknown = RunPlan::for_step_id("rm-rf", &RunParams::default(), &limits).unwrap_err();
    assert!(unknown.to_string().contains("write-read"), "{unknown}");
    let too_big = RunParams {
        bytes: Some(ByteSize(1 << 50)),
        ..Default::default()
    };
    assert!(matches!(
        RunPlan::for_step_id("write-read", &too_big, &limits),
        Err(PlanError::OutOfRange { name: "bytes", .. })
    ));
    let odd_buf = RunParams {
        buf_size: Some(ByteSize(12345 * 4)),
        ..Default::default()
    };
    assert!(RunPlan::for_step_id("write-read", &odd_buf, &limits).is_err());
    let pipe = RunParams {
        pipe_size: Some(ByteSize(limits.max_pipe_size + 4096)),
        ..Default::default()
    };
    assert!(matches!(
        RunPlan::for_step_id("write-read", &pipe, &limits),
        Err(PlanError::OutOfRange {
            name: "pipe_size",
            ..
        })
    ));
    for seconds in [0.0, -1.0, f64::NAN, 1e9] {
        let params = RunParams {
            seconds: Some(seconds),
            ..Default::default()
        };
        assert!(
            RunPlan::for_step_id("write-read", &params, &limits).is_err(),
            "{seconds}"
        );
    }
}

/// A machine's page size as the kernel would report it, 4 KiB (x86-64) or 16 or
/// 64 KiB (arm64 kernels built so).
fn limits_with_pages(page_size: u64) -> Limits {
    Limits {
        page_size,
        min_buf_size: page_size,
        max_pipe_size: 4 * MIB,
        ..Limits::default()
    }
}

#[test]
fn sizes_come_in_the_machines_pages() {
    for page in [4 * KIB, 16 * KIB, 64 * KIB] {
        let limits = limits_with_pages(page);
        let plan = |buf: u64, pipe: u64| {
            let params = RunParams {
                buf_size: Some(ByteSize(buf)),
                pipe_size: Some(ByteSize(pipe)),
                ..Default::default()
            };
            RunPlan::for_step_id("write-read", &params, &limits)
        };
        // Whole pages are taken, the smallest chunk and pipe being one page.
        let ok = plan(page, page).unwrap();
        assert_eq!(ok.writer.pipe_size, Some(ByteSize(page)), "{page}");
        assert!(plan(4 * page, 2 * page).is_ok(), "{page}");
        // Less than a page, or a part of one, is refused naming this machine's page.
        assert!(matches!(
            plan(page / 2, page),
            Err(PlanError::OutOfRange { .. })
        ));
        if page > 4 * KIB {
            let err = plan(page + 4 * KIB, page).unwrap_err();
            assert!(
                matches!(err, PlanError::NotWholePages { page: p, .. } if p == page),
                "{err}"
            );
            assert!(
                err.to_string().contains(&format!("multiple of {page}")),
                "{err}"
            );
        }
        let spec = Param::PipeSize.spec(&catalog::find("write-read").unwrap(), &limits);
        assert_eq!(spec.min, page as f64);
        assert_eq!(spec.multiple_of, Some(page));
    }
}

#[test]
fn refusals_quote_the_exact_value_sent() {
    let limits = limits_with_pages(4 * KIB);
    let refuse = |buf: u64| {
        let params = RunParams {
            buf_size: Some(ByteSize(buf)),
            ..Default::default()
        };
        RunPlan::for_step_id("write-read", &params, &limits)
            .unwrap_err()
            .to_string()
    };
    let low = refuse(4095);
    assert!(low.contains("4095 bytes (3.999KiB)"), "{low}");
    let odd = refuse(4097);
    assert!(odd.contains("4097 bytes (4.001KiB)"), "{odd}");
    assert!(odd.contains("multiple of 4096"), "{odd}");
}

#[test]
fn params_parse_sizes_as_numbers_or_strings_and_refuse_unknown_fields() {
    let params: RunParams = serde_json::from_str(r#"{"bytes":"1GiB","buf_size":262144}"#).unwrap();
    assert_eq!(params.bytes, Some(ByteSize(GIB)));
    assert_eq!(params.buf_size, Some(ByteSize(256 * KIB)));
    assert!(serde_json::from_str::<RunParams>(r#"{"bites":1}"#).is_err());
    assert!(serde_json::from_str::<RunParams>(r#"{"bytes":"lots"}"#).is_err());
}

#[test]
fn argv_reproduces_the_plan() {
    let params = RunParams {
        bytes: Some(ByteSize(GIB)),
        pipe_size: Some(ByteSize(64 * KIB)),
        ..Default::default()
    };
    let plan = RunPlan::for_step_id("vmsplice-splice", &params, &Limits::default()).unwrap();
    let argv = plan.argv();
    assert_eq!(&argv[..3], ["pipebench", "run", "vmsplice-splice"]);
    let joined = argv.join(" ");
    assert!(joined.contains("--bytes 1GiB --buf-size 256KiB --pipe-size 64KiB"));
    let pipeline = plan.pipeline();
    assert!(
        pipeline.starts_with("pipebench write --vmsplice"),
        "{pipeline}"
    );
    assert!(pipeline.contains("| pipebench read --splice"), "{pipeline}");
}

#[test]
fn every_param_has_one_spec_with_sane_bounds() {
    let limits = Limits::default();
    for step in catalog::catalog() {
        let specs = param_specs(&step, &limits);
        let names: Vec<_> = specs.iter().map(|s| s.name).collect();
        // The specs name exactly the fields RunParams accepts.
        let fields = serde_json::to_value(RunParams {
            bytes: Some(ByteSize(1)),
            buf_size: Some(ByteSize(1)),
            pipe_size: Some(ByteSize(1)),
            seconds: Some(1.0),
            writer_cpu: Some(0),
            reader_cpu: Some(0),
            verify: Some(true),
            quiet: Some(true),
            profile: Some(true),
            counts: Some(true),
            trace_syscalls: Some(true),
            // A tuning knob a tuned variant carries, not one of the page's
            // controls: no spec (left out of the JSON when unset).
            huge_pages: None,
        })
        .unwrap();
        let mut expected: Vec<_> = fields.as_object().unwrap().keys().cloned().collect();
        let mut got: Vec<_> = names.iter().map(|n| n.to_string()).collect();
        expected.sort();
        got.sort();
        assert_eq!(got, expected, "{}", step.id);
        for spec in &specs {
            assert!(spec.min <= spec.max, "{}: {}", step.id, spec.name);
            if let Some(default) = spec.default {
                assert!(
                    (spec.min..=spec.max).contains(&default),
                    "{}: {} default {default} outside {}..{}",
                    step.id,
                    spec.name,
                    spec.min,
                    spec.max
                );
            }
        }
    }
}

#[test]
fn huge_pages_change_only_where_the_writer_vmsplices_and_argv_says_so() {
    let limits = Limits::default();
    let with = |step: &str, huge: Option<bool>| {
        let params = RunParams {
            huge_pages: huge,
            buf_size: Some(ByteSize(1 << 20)),
            pipe_size: Some(ByteSize(1 << 20)),
            ..RunParams::default()
        };
        RunPlan::for_step_id(step, &params, &limits)
    };
    let flag = |plan: &RunPlan| {
        let argv = plan.argv();
        argv.iter()
            .position(|a| a == "--huge-pages")
            .map(|i| argv[i + 1].clone())
    };
    // busy-loop has huge pages: off is small pages placed as malloc places them.
    let off = with("busy-loop", Some(false)).unwrap();
    assert!(!off.writer.common.huge_pages);
    assert_eq!(off.writer.common.buffer_offset, Some(MALLOC_OFFSET));
    assert_eq!(flag(&off).as_deref(), Some("off"));
    // Its own pages are said only by a tuned variant, which always says them.
    let own = with("busy-loop", Some(true)).unwrap();
    assert!(own.writer.common.huge_pages);
    assert_eq!(flag(&own), None);
    assert_eq!(flag(&with("busy-loop", None).unwrap()), None);
    let tuned = with("tuned-busy-loop", None).unwrap();
    assert_eq!(flag(&tuned).as_deref(), Some("on"));
    let tuned = with("tuned-vmsplice-splice", Some(true)).unwrap();
    assert!(tuned.writer.common.huge_pages);
    assert_eq!(tuned.writer.common.buffer_offset, Some(0));
    assert_eq!(flag(&tuned).as_deref(), Some("on"));
    // A copying writer keeps its pages: asking for others is refused, asking
    // for its own is no change, and its argv never names them.
    assert!(matches!(
        with("write-read", Some(true)),
        Err(PlanError::HugePagesNotHere { asked: true, .. })
    ));
    let same = with("tuned-write-read", Some(false)).unwrap();
    assert_eq!(flag(&same), None);
}
