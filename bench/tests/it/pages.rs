//! `pipebench pages`: the writer's real buffers, page by page, and what could not
//! be seen, with its reason.

use std::os::unix::process::CommandExt;
use std::process::Command;

use crate::common::{assert_exits_saying, exe, pipebench, stderr, stdout};
use pipebench::memory::inspect::{LimitationKind, PagesReport};

fn inspect(args: &[&str]) -> PagesReport {
    let mut all = vec!["pages", "--json"];
    all.extend_from_slice(args);
    let output = pipebench(&all);
    assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    serde_json::from_str(&stdout(&output)).expect("a pages report")
}

fn kinds(report: &PagesReport) -> Vec<LimitationKind> {
    report.limitations.iter().map(|l| l.kind).collect()
}

fn root() -> bool {
    rustix::process::geteuid().is_root()
}

#[test]
fn a_touched_huge_page_buffer_is_one_head_and_511_tails() {
    let _cpus = crate::common::cpus();
    let report = inspect(&["--step", "huge-pages"]);
    assert!(report.huge_pages && report.touched);
    assert_eq!(report.buffers.len(), 2, "the vmsplice double buffer");
    let mode = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap();
    if mode.contains("[never]") {
        assert!(
            kinds(&report).contains(&LimitationKind::ThpDisabled),
            "{:?}",
            report.limitations
        );
        return;
    }
    if kinds(&report).contains(&LimitationKind::NoHugePages) {
        // THP allowed, but the kernel had no free 2 MiB block: said, not hidden.
        assert!(report
            .buffers
            .iter()
            .all(|b| b.huge_pages.as_ref().unwrap().huge_bytes == 0));
        return;
    }
    for buffer in &report.buffers {
        assert_eq!(buffer.address % (2 << 20), 0, "2 MiB aligned");
        assert_eq!(buffer.pages.len(), 512);
        assert_eq!(buffer.present, 512);
        assert_eq!(
            buffer.walk.levels.len(),
            3,
            "a 2 MiB page ends the walk at the PMD"
        );
        if root() {
            assert!(report.frames_visible);
            assert_eq!((buffer.heads, buffer.tails, buffer.thp), (1, 511, 512));
            let head = buffer.pages[0].flags.as_ref().unwrap();
            assert!(head.head && head.thp && !head.tail, "{head:?}");
            // The tails' frames follow the head's: one physically contiguous 2 MiB page.
            let first = buffer.pages[0].pfn.unwrap();
            for (i, page) in buffer.pages.iter().enumerate() {
                assert_eq!(page.pfn, Some(first + i as u64));
            }
        } else {
            assert!(kinds(&report).contains(&LimitationKind::FramesHidden));
        }
    }
}

#[test]
fn an_untouched_buffer_has_no_pages_yet() {
    let _cpus = crate::common::cpus();
    let report = inspect(&["--step", "vmsplice-splice", "--dont-touch-pages"]);
    assert!(!report.touched && !report.huge_pages);
    for buffer in &report.buffers {
        assert_eq!(
            buffer.offset_in_page, 16,
            "where malloc puts a 256 KiB block"
        );
        // 256 KiB starting 16 bytes into a page spans 65 pages.
        assert_eq!(buffer.pages.len(), 65);
        assert_eq!(buffer.present, 0);
        assert!(buffer.pages.iter().all(|p| !p.present && p.pfn.is_none()));
    }
    assert_eq!(kinds(&report), [LimitationKind::NothingPresent]);
    let touched = inspect(&["--step", "vmsplice-splice"]);
    assert!(touched.buffers.iter().all(|b| b.present == 65));
    assert_eq!(touched.buffers.iter().map(|b| b.thp).sum::<usize>(), 0);
}

#[test]
fn without_root_frames_are_hidden_and_the_report_says_so() {
    let _cpus = crate::common::cpus();
    if !root() {
        let report = inspect(&["--step", "vmsplice-splice"]);
        assert!(!report.frames_visible);
        assert!(kinds(&report).contains(&LimitationKind::FramesHidden));
        return;
    }
    // As root, look as an unprivileged user does: same binary, uid nobody.
    let output = Command::new(exe())
        .args(["pages", "--json", "--step", "vmsplice-splice"])
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let report: PagesReport = serde_json::from_str(&stdout(&output)).unwrap();
    assert!(!report.frames_visible);
    assert!(report.buffers.iter().all(|b| b.present == 65));
    assert!(report
        .buffers
        .iter()
        .flat_map(|b| &b.pages)
        .all(|p| p.pfn.is_none() && p.flags.is_none()));
    let hidden = &report.limitations[0];
    assert_eq!(hidden.kind, LimitationKind::FramesHidden);
    assert!(hidden.message.contains("as root"), "{}", hidden.message);
    let human = Command::new(exe())
        .args(["pages", "--step", "vmsplice-splice"])
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    assert!(
        stdout(&human).contains("frame number 0"),
        "{}",
        stdout(&human)
    );
}

#[test]
fn addresses_split_for_four_and_five_levels() {
    let _cpus = crate::common::cpus();
    let output = pipebench(&["pages", "--address", "0x00007f705af953c0", "--json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(json["levels"], 4);
    assert_eq!(json["walks"][0]["levels"][3]["index"], 405);
    assert_eq!(json["walks"][1]["offset"], 0x1953c0);
    // The article's example sets bit 47 without bits 63..48: only 57 bits take it.
    let output = pipebench(&["pages", "--address", "0x0000f2705af953c0", "--levels", "4"]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(
        message.contains("0x0000f2705af953c0")
            && message.contains("not canonical")
            && message.contains("5-level"),
        "{message}"
    );
    let output = pipebench(&["pages", "--address", "0x0000f2705af953c0"]);
    assert!(
        stdout(&output).contains("PGD 0 / P4D 484 / PUD 449 / PMD 215 / PTE 405 / offset 0x3c0"),
        "{}",
        stdout(&output)
    );
    let output = pipebench(&["pages", "--address", "0xnope"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("`0xnope` is not an address"));
}

#[test]
fn buffers_too_large_to_list_are_refused() {
    let _cpus = crate::common::cpus();
    let output = pipebench(&["pages", "--step", "huge-pages", "--buf-size", "64MiB"]);
    assert_exits_saying(&output, 2, "--buf-size 64MiB", "");
}
