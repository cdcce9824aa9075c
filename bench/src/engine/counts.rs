//! A run's counts: what the kernel did for each end, and the book's model of it
//! beside each measured figure.
//!
//! The book explains each step with mechanisms (a page allocated and copied per
//! 4 KiB, four reads per write on a 64 KiB pipe, a sleep each time the ring fills,
//! nothing allocated with vmsplice, no sleeps when busy looping, far fewer faults
//! with huge pages). [`model`] states those as predictions about a run's
//! configuration and judges them against its counts: where this machine disagrees
//! the result says so, as a finding, not a failure.

use crate::ends::options::{ReaderOptions, WriterOptions};
use crate::process::counts::EndCounts;

// A run's counts, one object per end, are the same for every kind of run with
// ends (an IPC record's are keyed by its roles): defined beside the counts.
pub use crate::process::counts::Counts;

// A prediction judged against counts is the same for every kind of run (the IPC
// lab judges its own): defined beside the counts, below the engine.
pub use crate::process::counts::{ModelCheck, ModelVerdict};

/// What a pipe run's model needs to know about it.
#[derive(Debug, Clone, Copy)]
pub struct ModelInput<'a> {
    /// The writer's options.
    pub writer: &'a WriterOptions,
    /// The reader's options.
    pub reader: &'a ReaderOptions,
    /// Bytes moved.
    pub bytes: u64,
    /// The pipe's capacity, as read back.
    pub pipe_capacity: Option<u64>,
    /// The kernel's page size: the pipe allocates and frees pages of this size (4 KiB
    /// on x86-64; 16 or 64 KiB on some arm64 kernels).
    pub page_size: u64,
    /// A transparent huge page's size (`hpage_pmd_size`: 2 MiB on x86-64).
    pub huge_page_size: u64,
}

impl ModelInput<'_> {
    /// The page sizes of the machine this process runs on, asked of the kernel.
    pub(crate) fn machine_pages() -> (u64, u64) {
        (
            crate::ends::buffer::page_size() as u64,
            crate::ends::buffer::huge_page_size() as u64,
        )
    }
}

/// A prediction: an id, the end, what is measured, the words, and the test.
struct CountRule {
    id: &'static str,
    end: &'static str,
    what: &'static str,
    model: String,
    measured: Option<f64>,
    holds: Box<dyn Fn(f64) -> bool>,
}

/// The book's predictions for a pipe run of `shape`, judged against `counts`.
pub fn model(shape: ModelInput<'_>, counts: &Counts) -> Vec<ModelCheck> {
    let writer = counts.ends.get("writer");
    if shape.bytes == 0 || writer.is_none() {
        return Vec::new();
    }
    let run = Run {
        shape,
        writer,
        reader: counts.ends.get("reader"),
        page: shape.page_size.max(1) as f64,
        page_words: crate::size::ByteSize(shape.page_size).to_string(),
    };
    let mut rules = run.page_rules();
    rules.extend(run.reads_per_write());
    rules.extend(run.sleep_rules());
    rules.extend(run.fault_rules());
    rules
        .into_iter()
        .map(|rule| ModelCheck {
            verdict: ModelVerdict::of(rule.measured, &rule.holds),
            id: rule.id.to_string(),
            end: rule.end.to_string(),
            what: rule.what.to_string(),
            measured: rule.measured,
            model: rule.model,
        })
        .collect()
}

/// What each group of [`model`]'s rules reads of a run.
struct Run<'a> {
    shape: ModelInput<'a>,
    writer: Option<&'a EndCounts>,
    reader: Option<&'a EndCounts>,
    /// The page size, at least 1, as a divisor.
    page: f64,
    /// The page size in words (`4 KiB`).
    page_words: String,
}

impl Run<'_> {
    /// Whether the writer copies into the pipe (not vmsplice).
    fn copies(&self) -> bool {
        !self.shape.writer.vmsplice
    }

    /// `v` per page of data moved.
    fn per_page(&self, v: Option<u64>) -> Option<f64> {
        let pages = self.shape.bytes as f64 / self.page;
        v.map(|v| v as f64 / pages)
    }

    /// Pages allocated by the writer's calls and freed by the reader's.
    fn page_rules(&self) -> Vec<CountRule> {
        let page_words = &self.page_words;
        let allocs = self.per_page(self.writer.and_then(|w| w.page_allocs));
        if !self.copies() {
            return vec![CountRule {
                id: "writer_page_allocs",
                end: "writer",
                what: "page allocations per page moved",
                model: "none: vmsplice hands the pipe references to the writer's own pages".into(),
                measured: allocs,
                holds: Box::new(|x| x < 0.01),
            }];
        }
        let mut rules = vec![CountRule {
            id: "writer_page_allocs",
            end: "writer",
            what: "page allocations per page moved",
            model: format!(
                "at most one: pipe_write allocates a page for each {page_words} it copies in, \
                 fewer when it reuses the pipe's spare pages"
            ),
            measured: allocs,
            holds: Box::new(|x| x > 0.0 && x <= 1.05),
        }];
        if !self.shape.reader.splice {
            rules.push(CountRule {
                id: "reader_page_frees",
                end: "reader",
                what: "pages freed per page moved",
                model: "about one: pipe_read releases each page once it has copied it out".into(),
                measured: self.per_page(self.reader.and_then(|r| r.page_frees)),
                holds: Box::new(|x| x > 0.0 && x <= 1.05),
            });
        }
        rules
    }

    /// Reads per write, where a copying writer's calls meet a reading reader.
    fn reads_per_write(&self) -> Option<CountRule> {
        let shape = &self.shape;
        let buf = shape.writer.common.buf_size.bytes();
        let (true, false, Some(capacity)) =
            (self.copies(), shape.reader.splice, shape.pipe_capacity)
        else {
            return None;
        };
        // Each write of `buf` bytes reaches the reader in pipe-sized pieces.
        let expected = buf as f64 / capacity.min(buf).max(1) as f64;
        let calls = |c: Option<&EndCounts>| {
            c.map(|c| c.syscalls.values().sum::<u64>() as f64)
                .filter(|&n| n > 0.0)
        };
        let measured = match (calls(self.reader), calls(self.writer)) {
            (Some(reads), Some(writes)) => Some(reads / writes),
            _ => None,
        };
        Some(CountRule {
            id: "reads_per_write",
            end: "reader",
            what: "read calls per write call",
            model: format!(
                "{expected:.0}: a {} write reaches the reader in pieces of at most the pipe's {}",
                crate::size::ByteSize(buf),
                crate::size::ByteSize(capacity)
            ),
            measured,
            holds: Box::new(move |x| (x - expected).abs() <= 0.15 * expected + 0.01),
        })
    }

    /// Sleeps: almost none when busy looping, else at most one per pipe-full.
    fn sleep_rules(&self) -> Vec<CountRule> {
        let shape = &self.shape;
        if shape.writer.common.busy_loop {
            let gib = shape.bytes as f64 / (1u64 << 30) as f64;
            return [("writer", self.writer), ("reader", self.reader)]
                .into_iter()
                .map(|(name, end)| CountRule {
                    id: if name == "writer" {
                        "writer_sleeps"
                    } else {
                        "reader_sleeps"
                    },
                    end: name,
                    what: "sleeps (voluntary context switches) per GiB",
                    model: "almost none: a busy loop retries on EAGAIN instead of sleeping".into(),
                    measured: end.map(|c| c.voluntary_switches as f64 / gib),
                    holds: Box::new(|x| x < 10.0),
                })
                .collect();
        }
        let Some(capacity) = shape.pipe_capacity.filter(|&c| c > 0) else {
            return Vec::new();
        };
        let fills = shape.bytes as f64 / capacity as f64;
        vec![CountRule {
            id: "writer_sleeps",
            end: "writer",
            what: "sleeps (voluntary context switches) per pipe-full moved",
            model: "at most about one: the writer sleeps when the ring is full and is woken \
                    when the reader makes room"
                .into(),
            measured: self.writer.map(|w| w.voluntary_switches as f64 / fills),
            holds: Box::new(|x| x <= 1.1),
        }]
    }

    /// The writer's page faults, and its huge pages where it asked for them.
    fn fault_rules(&self) -> Vec<CountRule> {
        let shape = &self.shape;
        let page_words = &self.page_words;
        let small_pages = shape.writer.buffer_bytes() as f64 / self.page;
        let huge_words = crate::size::ByteSize(shape.huge_page_size).to_string();
        let faults = self.writer.map(|w| w.page_faults as f64);
        if !shape.writer.common.huge_pages {
            if shape.writer.dont_touch_pages {
                return Vec::new();
            }
            return vec![CountRule {
                id: "writer_faults",
                end: "writer",
                what: "page faults",
                model: format!(
                    "about one per {page_words} page of its buffers, {small_pages:.0}, when it \
                     first writes them"
                ),
                measured: faults,
                holds: Box::new(move |x| x >= small_pages * 0.9),
            }];
        }
        let huge = huge_pages_of(shape.writer, shape.huge_page_size);
        vec![
            CountRule {
                id: "writer_faults",
                end: "writer",
                what: "page faults",
                model: format!(
                    "far fewer than its buffers' {small_pages:.0} small pages: one fault maps a \
                     whole {huge_words} huge page"
                ),
                measured: faults,
                holds: Box::new(move |x| x < small_pages / 4.0),
            },
            CountRule {
                id: "writer_huge_pages",
                end: "writer",
                what: "huge pages allocated in its own faults",
                model: format!(
                    "{huge}: each buffer is aligned to {huge_words} and advised, so the first \
                     touch of each {huge_words} stretch allocates one huge page"
                ),
                measured: self
                    .writer
                    .and_then(|w| w.huge_page_allocs)
                    .map(|n| n as f64),
                holds: Box::new(move |x| x >= 1.0 && x <= huge as f64),
            },
        ]
    }
}

/// The huge pages a writer's buffers take when they live in huge pages: each
/// allocation (two buffers used in turn, or one holding both halves) is
/// rounded up to whole huge pages.
fn huge_pages_of(writer: &WriterOptions, huge_page_size: u64) -> u64 {
    let allocations = if !writer.same_buffer && writer.vmsplice && !writer.reuse_early {
        2
    } else {
        1
    };
    let each = writer.buffer_bytes() / allocations;
    allocations * each.div_ceil(huge_page_size.max(1))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::steps::catalog;

    fn shape_of<'a>(step: &'a catalog::Step, bytes: u64, capacity: u64) -> ModelInput<'a> {
        ModelInput {
            writer: &step.writer,
            reader: &step.reader,
            bytes,
            pipe_capacity: Some(capacity),
            page_size: 4096,
            huge_page_size: 2 << 20,
        }
    }

    fn ends(writer: EndCounts, reader: EndCounts) -> Counts {
        Counts {
            ends: BTreeMap::from([("writer".into(), writer), ("reader".into(), reader)]),
            ..Counts::default()
        }
    }

    fn verdict(judged: &[ModelCheck], id: &str) -> ModelVerdict {
        judged
            .iter()
            .find(|j| j.id == id)
            .unwrap_or_else(|| panic!("no {id} in {judged:?}"))
            .verdict
    }

    #[test]
    fn the_articles_write_read_figures_agree_with_the_model() {
        // 1 GiB of write-read as measured with perf stat on the test machine.
        let step = catalog::find("write-read").unwrap();
        let counts = ends(
            EndCounts {
                syscalls: BTreeMap::from([("write".into(), 4096)]),
                voluntary_switches: 16_330,
                page_faults: 316,
                page_allocs: Some(231_366),
                page_frees: Some(93),
                ..EndCounts::default()
            },
            EndCounts {
                syscalls: BTreeMap::from([("read".into(), 16_395)]),
                voluntary_switches: 16_300,
                page_allocs: Some(224),
                page_frees: Some(229_480),
                ..EndCounts::default()
            },
        );
        let judged = model(shape_of(&step, 1 << 30, 64 << 10), &counts);
        for id in [
            "writer_page_allocs",
            "reader_page_frees",
            "reads_per_write",
            "writer_sleeps",
            "writer_faults",
        ] {
            assert_eq!(
                verdict(&judged, id),
                ModelVerdict::Agrees,
                "{id}: {judged:?}"
            );
        }
    }

    #[test]
    fn an_allocating_vmsplice_or_a_sleeping_busy_loop_disagrees() {
        let step = catalog::find("busy-loop").unwrap();
        let counts = ends(
            EndCounts {
                syscalls: BTreeMap::from([("vmsplice".into(), 40_000)]),
                voluntary_switches: 5_000,
                page_allocs: Some(200_000),
                ..EndCounts::default()
            },
            EndCounts {
                voluntary_switches: 1,
                ..EndCounts::default()
            },
        );
        let judged = model(shape_of(&step, 1 << 30, 128 << 10), &counts);
        assert_eq!(
            verdict(&judged, "writer_page_allocs"),
            ModelVerdict::Disagrees
        );
        assert_eq!(verdict(&judged, "writer_sleeps"), ModelVerdict::Disagrees);
        assert_eq!(verdict(&judged, "reader_sleeps"), ModelVerdict::Agrees);
        // Huge pages: faults are judged; missing tracepoints leave allocations unknown.
        let mut no_trace = counts.clone();
        no_trace.ends.get_mut("writer").unwrap().page_allocs = None;
        let judged = model(shape_of(&step, 1 << 30, 128 << 10), &no_trace);
        assert_eq!(
            verdict(&judged, "writer_page_allocs"),
            ModelVerdict::Unknown
        );
        assert_eq!(verdict(&judged, "writer_faults"), ModelVerdict::Agrees);
        assert_eq!(verdict(&judged, "writer_huge_pages"), ModelVerdict::Unknown);
    }

    #[test]
    fn huge_pages_are_judged_per_buffer_and_none_is_a_finding() {
        // Two 256 KiB buffers, each in its own 2 MiB huge page; one allocation
        // holding both halves takes one.
        for (id, expected) in [("huge-pages", 2.0), ("same-buffer", 1.0)] {
            let step = catalog::find(id).unwrap();
            let with = |huge: u64| {
                ends(
                    EndCounts {
                        huge_page_allocs: Some(huge),
                        page_faults: 10,
                        ..EndCounts::default()
                    },
                    EndCounts::default(),
                )
            };
            let judged = model(shape_of(&step, 1 << 30, 128 << 10), &with(expected as u64));
            let huge = judged.iter().find(|j| j.id == "writer_huge_pages").unwrap();
            assert_eq!(huge.verdict, ModelVerdict::Agrees, "{id}: {huge:?}");
            assert_eq!(huge.measured, Some(expected));
            let fell_back = model(shape_of(&step, 1 << 30, 128 << 10), &with(0));
            assert_eq!(
                verdict(&fell_back, "writer_huge_pages"),
                ModelVerdict::Disagrees,
                "{id}"
            );
            let too_many = model(
                shape_of(&step, 1 << 30, 128 << 10),
                &with(expected as u64 + 1),
            );
            assert_eq!(
                verdict(&too_many, "writer_huge_pages"),
                ModelVerdict::Disagrees,
                "{id}"
            );
        }
        // A step without huge pages makes no such prediction.
        let step = catalog::find("vmsplice-splice").unwrap();
        let judged = model(
            shape_of(&step, 1 << 30, 128 << 10),
            &ends(EndCounts::default(), EndCounts::default()),
        );
        assert!(judged.iter().all(|j| j.id != "writer_huge_pages"));
    }

    #[test]
    fn allocations_are_judged_per_page_of_the_kernels_size() {
        // The same run on kernels with 4, 16 and 64 KiB pages: the pipe allocates one
        // page per page copied, so 0.88 per page agrees on each, and the same count
        // of 4 KiB allocations would be four or sixteen times too many on the others.
        let step = catalog::find("write-read").unwrap();
        for page in [4u64 << 10, 16 << 10, 64 << 10] {
            let bytes = 1u64 << 30;
            let pages = bytes / page;
            let with = |allocs: u64| {
                ends(
                    EndCounts {
                        syscalls: BTreeMap::from([("write".into(), 4096)]),
                        page_allocs: Some(allocs),
                        page_faults: 1 << 20,
                        ..EndCounts::default()
                    },
                    EndCounts::default(),
                )
            };
            let shape = ModelInput {
                page_size: page,
                huge_page_size: crate::ends::buffer::pmd_size(page as usize) as u64,
                ..shape_of(&step, bytes, 16 * page)
            };
            let judged = model(shape, &with(pages * 88 / 100));
            let allocs = judged
                .iter()
                .find(|j| j.id == "writer_page_allocs")
                .unwrap();
            assert_eq!(allocs.verdict, ModelVerdict::Agrees, "{page}: {allocs:?}");
            assert!((allocs.measured.unwrap() - 0.88).abs() < 0.001);
            assert!(
                allocs
                    .model
                    .contains(&crate::size::ByteSize(page).to_string()),
                "{allocs:?}"
            );
            if page > 4096 {
                let as_if_4k = model(shape, &with(bytes / 4096 * 88 / 100));
                assert_eq!(
                    verdict(&as_if_4k, "writer_page_allocs"),
                    ModelVerdict::Disagrees,
                    "{page}"
                );
            }
            // The buffers' small pages, in the kernel's pages.
            let faults = judged.iter().find(|j| j.id == "writer_faults").unwrap();
            let small = step.writer.buffer_bytes() / page;
            assert!(faults.model.contains(&format!("{small},")), "{faults:?}");
        }
    }
}
