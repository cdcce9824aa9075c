//! The step catalog: the one place that says which steps exist.
//!
//! The CLI, the server's `/api/steps`, the `{{#run ID}}` widgets and the tables in
//! the book all read this list, so a step is added here and nowhere else.

use serde::Serialize;

use crate::ends::options::{CommonOptions, ReaderOptions, WriterOptions};
use crate::size::{ByteSize, KIB};

/// What kind of entry a step is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepKind {
    /// One of the five steps of the article, in order.
    Article,
    /// A variation the book uses to explain something (same code, other flags).
    Variant,
    /// A deliberate misuse that demonstrates a hazard; not a speed figure.
    Experiment,
}

/// A range of GiB/s, for figures that were measured as "3.1 to 4.0".
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GibRange {
    /// Lowest figure seen.
    pub low: f64,
    /// Highest figure seen.
    pub high: f64,
}

/// One runnable step: how to run both ends, and what others measured.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// Stable identifier, used in URLs, `{{#run ID}}` and `pipebench run ID`.
    pub id: &'static str,
    /// Short title for tables and widgets.
    pub title: &'static str,
    /// One sentence on what changes in this step.
    pub summary: &'static str,
    /// The book chapter that explains it (file under book/src).
    pub chapter: &'static str,
    /// Article step, variant or experiment.
    pub kind: StepKind,
    /// The article's figure (i7-8550U, Linux 5.17), GiB/s, where it gave one.
    pub article_gib_s: Option<f64>,
    /// What a C++ build of the article's programs reached on this project's
    /// reference machine (2-core EPYC KVM guest, Linux 6.18, THP madvise),
    /// 4 GiB a run, GiB/s. The blocking steps moved by 2x between series there.
    pub reference_gib_s: Option<GibRange>,
    /// How the writer runs.
    pub writer: WriterOptions,
    /// How the reader runs.
    pub reader: ReaderOptions,
    /// For a variant: the step it varies, and the option fields it changes (JSON
    /// names of the writer's and reader's options). A test holds every variant to
    /// exactly these differences, so none hides a change of configuration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub varies: Option<Variation>,
}

/// How a variant differs from its base step.
#[derive(Debug, Clone, Serialize)]
pub struct Variation {
    /// The step it varies.
    pub base: &'static str,
    /// The writer option fields it changes.
    pub writer: &'static [&'static str],
    /// The reader option fields it changes.
    pub reader: &'static [&'static str],
}

const fn varies(
    base: &'static str,
    writer: &'static [&'static str],
    reader: &'static [&'static str],
) -> Option<Variation> {
    Some(Variation {
        base,
        writer,
        reader,
    })
}

/// What a tuned variant's id starts with: `tuned-STEP` is STEP with the bytes per
/// call and pipe capacity a tuning search found (`pipebench tune`), never an
/// article step's own name.
pub(crate) const TUNED_PREFIX: &str = "tuned-";

/// The step a tuned variant's id varies (`busy-loop` for `tuned-busy-loop`), when
/// the id is one and the catalog has that step.
pub fn tuned_base(id: &str) -> Option<Step> {
    id.strip_prefix(TUNED_PREFIX).and_then(find)
}

/// Whether a tuning search may turn the step's huge pages on or off: its writer
/// hands its own buffer's pages to the pipe (vmsplice), so their size is what
/// the kernel pins, references and the reader sees; a copying writer's buffer
/// size changes little but its own TLB.
pub fn allows_huge_pages(step: &Step) -> bool {
    step.writer.vmsplice
}

/// The id of the step every speed-up is measured against.
pub(crate) const BASELINE_ID: &str = "write-read";

pub(crate) use crate::ends::options::MALLOC_OFFSET;

fn common(busy_loop: bool, huge_pages: bool, buffer_offset: u16) -> CommonOptions {
    CommonOptions {
        busy_loop,
        huge_pages,
        buffer_offset: Some(buffer_offset),
        ..CommonOptions::default()
    }
}

fn writer(vmsplice: bool, busy_loop: bool, huge_pages: bool) -> WriterOptions {
    let offset = if huge_pages { 0 } else { MALLOC_OFFSET };
    WriterOptions {
        vmsplice,
        common: common(busy_loop, huge_pages, offset),
        ..WriterOptions::default()
    }
}

fn reader(splice: bool, busy_loop: bool) -> ReaderOptions {
    let offset = if splice { 0 } else { MALLOC_OFFSET };
    ReaderOptions {
        splice,
        common: common(busy_loop, false, offset),
        ..ReaderOptions::default()
    }
}

const fn range(low: f64, high: f64) -> Option<GibRange> {
    Some(GibRange { low, high })
}

/// All steps, article steps first and in the article's order.
pub fn catalog() -> Vec<Step> {
    vec![
        Step {
            id: "write-read",
            title: "write and read",
            summary: "The baseline: write(2) 256 KiB per call into the kernel's default 64 KiB pipe, read(2) 256 KiB per call. Every byte is copied twice.",
            chapter: "baseline.md",
            kind: StepKind::Article,
            article_gib_s: Some(3.7),
            reference_gib_s: range(0.8, 0.8),
            writer: writer(false, false, false),
            reader: reader(false, false),
            varies: None,
        },
        Step {
            id: "vmsplice-read",
            title: "vmsplice, then read",
            summary: "The writer hands the pipe the pages of two 256 KiB buffers in turn with vmsplice, into a 128 KiB pipe; the reader still copies.",
            chapter: "vmsplice.md",
            kind: StepKind::Article,
            article_gib_s: Some(12.7),
            reference_gib_s: range(2.3, 2.3),
            writer: writer(true, false, false),
            reader: reader(false, false),
            varies: None,
        },
        Step {
            id: "vmsplice-splice",
            title: "vmsplice, then splice",
            summary: "The reader splices the pages on to /dev/null: no byte is copied at either end.",
            chapter: "splice.md",
            kind: StepKind::Article,
            article_gib_s: Some(32.8),
            reference_gib_s: range(3.1, 4.0),
            writer: writer(true, false, false),
            reader: reader(true, false),
            varies: None,
        },
        Step {
            id: "huge-pages",
            title: "huge pages",
            summary: "The writer's buffers live in 2 MiB transparent huge pages, so the kernel's page lookups get cheap.",
            chapter: "huge-pages.md",
            kind: StepKind::Article,
            article_gib_s: Some(51.0),
            reference_gib_s: range(2.6, 6.5),
            writer: writer(true, false, true),
            reader: reader(true, false),
            varies: None,
        },
        Step {
            id: "busy-loop",
            title: "busy looping",
            summary: "Both ends use non-blocking calls and retry on EAGAIN instead of sleeping: no wakeups, two busy cores.",
            chapter: "busy-loop.md",
            kind: StepKind::Article,
            article_gib_s: Some(62.5),
            reference_gib_s: range(47.0, 58.0),
            writer: writer(true, true, true),
            reader: reader(true, true),
            varies: None,
        },
        Step {
            id: "write-read-big-pipe",
            title: "write and read, a 256 KiB pipe",
            summary: "Step 1 with the pipe sized to one 256 KiB chunk (64 slots instead of 16): fewer full and empty turns, so fewer sleeps and wakeups per byte.",
            chapter: "baseline.md",
            kind: StepKind::Variant,
            article_gib_s: None,
            reference_gib_s: None,
            writer: WriterOptions {
                pipe_size: Some(ByteSize(256 * KIB)),
                ..writer(false, false, false)
            },
            reader: reader(false, false),
            varies: varies("write-read", &["pipe_size"], &[]),
        },
        Step {
            id: "vmsplice-read-halves",
            title: "vmsplice as the article's text tells it",
            summary: "Step 2 as the article describes it: two 128 KiB halves, 128 KiB per call, a 128 KiB pipe (its code ran two 256 KiB buffers into a 128 KiB pipe).",
            chapter: "vmsplice.md",
            kind: StepKind::Variant,
            article_gib_s: None,
            reference_gib_s: None,
            writer: WriterOptions {
                pipe_size: Some(ByteSize(128 * KIB)),
                common: CommonOptions {
                    buf_size: ByteSize(128 * KIB),
                    buffer_offset: Some(MALLOC_OFFSET),
                    ..CommonOptions::default()
                },
                ..writer(true, false, false)
            },
            reader: ReaderOptions {
                common: CommonOptions {
                    buf_size: ByteSize(128 * KIB),
                    buffer_offset: Some(MALLOC_OFFSET),
                    ..CommonOptions::default()
                },
                ..reader(false, false)
            },
            varies: varies("vmsplice-read", &["pipe_size", "buf_size"], &["buf_size"]),
        },
        Step {
            id: "vmsplice-read-aligned",
            title: "vmsplice, then read, page-aligned buffers",
            summary: "Step 2 with every buffer starting on a page boundary instead of 16 bytes in, where malloc puts it: each call then hands over and copies whole pages.",
            chapter: "vmsplice.md",
            kind: StepKind::Variant,
            article_gib_s: None,
            reference_gib_s: None,
            writer: WriterOptions {
                common: common(false, false, 0),
                ..writer(true, false, false)
            },
            reader: ReaderOptions {
                common: common(false, false, 0),
                ..reader(false, false)
            },
            varies: varies("vmsplice-read", &["buffer_offset"], &["buffer_offset"]),
        },
        Step {
            id: "write-read-busy",
            title: "write and read, busy looping",
            summary: "The baseline with non-blocking calls: shows how much of it was sleeping and waking.",
            chapter: "busy-loop.md",
            kind: StepKind::Variant,
            article_gib_s: None,
            reference_gib_s: range(3.9, 4.5),
            writer: writer(false, true, false),
            reader: reader(false, true),
            varies: varies("write-read", &["busy_loop"], &["busy_loop"]),
        },
        Step {
            id: "vmsplice-read-busy",
            title: "vmsplice, then read, busy looping",
            summary: "Step 2 without sleeping: the reader's copy is now the only real work.",
            chapter: "busy-loop.md",
            kind: StepKind::Variant,
            article_gib_s: None,
            reference_gib_s: range(21.5, 21.5),
            writer: writer(true, true, false),
            reader: reader(false, true),
            varies: varies("vmsplice-read", &["busy_loop"], &["busy_loop"]),
        },
        Step {
            id: "vmsplice-splice-busy",
            title: "vmsplice, then splice, busy looping, small pages",
            summary: "Step 5 without huge pages: isolates what the page lookups cost.",
            chapter: "busy-loop.md",
            kind: StepKind::Variant,
            article_gib_s: None,
            reference_gib_s: range(28.0, 29.0),
            writer: writer(true, true, false),
            reader: reader(true, true),
            varies: varies("busy-loop", &["huge_pages", "buffer_offset"], &[]),
        },
        Step {
            id: "untouched-pages",
            title: "vmsplice with untouched pages",
            summary: "Step 3 but the buffer is never written first, so get_user_pages_fast keeps falling to its slow path.",
            chapter: "paging.md",
            kind: StepKind::Variant,
            article_gib_s: Some(25.0),
            reference_gib_s: None,
            writer: WriterOptions {
                dont_touch_pages: true,
                ..writer(true, false, false)
            },
            reader: reader(true, false),
            varies: varies("vmsplice-splice", &["dont_touch_pages"], &[]),
        },
        Step {
            id: "same-buffer",
            title: "one allocation for both halves",
            summary: "Step 5 with both 256 KiB buffers carved from one allocation in one huge page: every call takes references on the same compound page.",
            chapter: "huge-pages.md",
            kind: StepKind::Variant,
            article_gib_s: None,
            reference_gib_s: None,
            writer: WriterOptions {
                same_buffer: true,
                ..writer(true, true, true)
            },
            reader: reader(true, true),
            varies: varies("busy-loop", &["same_buffer"], &[]),
        },
        Step {
            id: "vmsplice-reuse",
            title: "reusing a buffer too early",
            summary: "One buffer, rewritten right after every vmsplice; the reader checks every byte and counts the damage.",
            chapter: "vmsplice.md",
            kind: StepKind::Experiment,
            article_gib_s: None,
            reference_gib_s: None,
            writer: WriterOptions {
                reuse_early: true,
                // The pipe holds the whole buffer, so vmsplice returns before the
                // reader took any of it and every rewrite races pages still queued.
                // A malloc'd 256 KiB buffer spans 65 pages (it starts 16 bytes in):
                // a 256 KiB pipe has 64 slots, so vmsplice would wait for the
                // reader and the race would shrink to the last 16 bytes.
                pipe_size: Some(ByteSize(512 * KIB)),
                common: CommonOptions {
                    verify: true,
                    buffer_offset: Some(MALLOC_OFFSET),
                    ..CommonOptions::default()
                },
                ..writer(true, false, false)
            },
            reader: ReaderOptions {
                count_corrupt: true,
                common: CommonOptions {
                    verify: true,
                    buffer_offset: Some(MALLOC_OFFSET),
                    ..CommonOptions::default()
                },
                ..reader(false, false)
            },
            varies: varies(
                "vmsplice-read",
                &["reuse_early", "pipe_size", "verify"],
                &["count_corrupt", "verify"],
            ),
        },
    ]
}

/// Looks a step up by id.
pub fn find(id: &str) -> Option<Step> {
    catalog().into_iter().find(|step| step.id == id)
}

/// All step ids, for error messages that list what is available.
pub fn ids() -> Vec<&'static str> {
    catalog().iter().map(|step| step.id).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use std::collections::HashSet;

    #[derive(Parser)]
    struct WriteCli {
        #[command(flatten)]
        options: WriterOptions,
    }

    #[derive(Parser)]
    struct ReadCli {
        #[command(flatten)]
        options: ReaderOptions,
    }

    /// Options as they act: the buffer placement resolved, and nothing that only
    /// says how much or where (bytes, CPU) or where the report goes.
    fn acting(mut common: CommonOptions, has_buffer: bool) -> CommonOptions {
        common.buffer_offset = has_buffer.then(|| common.effective_buffer_offset());
        common.bytes = CommonOptions::default().bytes;
        common.cpu = None;
        common
    }

    #[test]
    fn the_shell_pipelines_are_the_article_steps() {
        // `pipebench write ... | pipebench read ...` with no other flags, as the
        // introduction and the README offer them in place of `./write | ./read`.
        for (id, write, read) in [
            ("write-read", "", ""),
            ("vmsplice-read", "--vmsplice", ""),
            ("vmsplice-splice", "--vmsplice", "--splice"),
            ("huge-pages", "--vmsplice --huge-pages", "--splice"),
            (
                "busy-loop",
                "--vmsplice --huge-pages --busy-loop",
                "--splice --busy-loop",
            ),
        ] {
            let step = find(id).expect("an article step");
            let argv = |cmd: &'static str, flags: &'static str| {
                std::iter::once(cmd).chain(flags.split_whitespace())
            };
            let mut w = WriteCli::try_parse_from(argv("write", write))
                .unwrap()
                .options;
            let mut r = ReadCli::try_parse_from(argv("read", read)).unwrap().options;
            w.common = acting(w.common, true);
            r.common = acting(r.common, !r.splice);
            let mut step_w = step.writer.clone();
            let mut step_r = step.reader.clone();
            step_w.common = acting(step_w.common, true);
            step_r.common = acting(step_r.common, !step_r.splice);
            assert_eq!(w, step_w, "{id}: `pipebench write {write}`");
            assert_eq!(r, step_r, "{id}: `pipebench read {read}`");
            assert_eq!(w.effective_pipe_size(), step.writer.effective_pipe_size());
        }
    }

    #[test]
    fn article_steps_are_present_in_order() {
        let article: Vec<_> = catalog()
            .into_iter()
            .filter(|s| s.kind == StepKind::Article)
            .map(|s| s.id)
            .collect();
        assert_eq!(
            article,
            [
                "write-read",
                "vmsplice-read",
                "vmsplice-splice",
                "huge-pages",
                "busy-loop"
            ]
        );
    }

    #[test]
    fn ids_are_unique_and_url_safe() {
        let ids = ids();
        let unique: HashSet<_> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len());
        for id in ids {
            assert!(
                id.chars().all(|c| c.is_ascii_lowercase() || c == '-'),
                "{id}"
            );
        }
        assert!(find(BASELINE_ID).is_some());
        assert!(find("no-such-step").is_none());
    }

    /// The JSON fields of `a` and `b` that differ.
    fn differing(a: &impl Serialize, b: &impl Serialize) -> Vec<String> {
        let (a, b) = (
            serde_json::to_value(a).unwrap(),
            serde_json::to_value(b).unwrap(),
        );
        let (a, b) = (a.as_object().unwrap(), b.as_object().unwrap());
        let mut keys: Vec<String> = a
            .keys()
            .filter(|k| a.get(*k) != b.get(*k))
            .cloned()
            .collect();
        keys.sort();
        keys
    }

    #[test]
    fn variants_differ_from_their_base_only_as_documented() {
        for step in catalog() {
            let Some(variation) = &step.varies else {
                assert_eq!(step.kind, StepKind::Article, "{} names no base", step.id);
                continue;
            };
            let base = find(variation.base).expect("base exists");
            let sorted = |fields: &[&str]| {
                let mut v: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
                v.sort();
                v
            };
            assert_eq!(
                differing(&step.writer, &base.writer),
                sorted(variation.writer),
                "{} writer vs {}",
                step.id,
                base.id
            );
            assert_eq!(
                differing(&step.reader, &base.reader),
                sorted(variation.reader),
                "{} reader vs {}",
                step.id,
                base.id
            );
        }
    }

    #[test]
    fn article_steps_run_the_reference_configuration() {
        // write.cpp: F_SETPIPE_SZ only when asked (never, in measure.py) for write;
        // forced to buf_size / 2 with vmsplice; 256 KiB per call at both ends.
        for step in catalog()
            .into_iter()
            .filter(|s| s.kind == StepKind::Article)
        {
            assert_eq!(
                step.writer.common.buf_size,
                ByteSize(256 * KIB),
                "{}",
                step.id
            );
            assert_eq!(
                step.reader.common.buf_size,
                ByteSize(256 * KIB),
                "{}",
                step.id
            );
            assert_eq!(step.writer.pipe_size, None, "{}: explicit pipe", step.id);
            let expected = step.writer.vmsplice.then_some(ByteSize(128 * KIB));
            assert_eq!(step.writer.effective_pipe_size(), expected, "{}", step.id);
            assert!(
                !step.writer.common.gift && !step.writer.common.poll,
                "{}",
                step.id
            );
            assert!(!step.writer.same_buffer && !step.writer.dont_touch_pages);
            // malloc'd buffers start 16 bytes into a page; aligned_alloc'd ones on it.
            let offset = |small_pages: bool| if small_pages { MALLOC_OFFSET } else { 0 };
            let w = &step.writer.common;
            assert_eq!(w.buffer_offset, Some(offset(!w.huge_pages)), "{}", step.id);
            assert_eq!(
                step.reader.common.buffer_offset,
                Some(offset(!step.reader.splice)),
                "{}",
                step.id
            );
        }
    }

    #[test]
    fn both_ends_agree_on_sizes() {
        for step in catalog() {
            assert_eq!(
                step.writer.common.bytes, step.reader.common.bytes,
                "{}",
                step.id
            );
            assert_eq!(
                step.writer.common.verify, step.reader.common.verify,
                "{}",
                step.id
            );
            assert_eq!(
                step.writer.common.buf_size, step.reader.common.buf_size,
                "{}",
                step.id
            );
        }
    }
}
