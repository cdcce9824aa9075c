//! What this kernel does, measured: short probes of the behaviours the book's
//! chapters rest on, each answered from what the kernel did when asked, never
//! from the version string (distributions backport, so `uname -r` cannot say
//! whether a kernel has a change).
//!
//! - [`pages`]: does vmsplice hand the pipe references to the writer's pages or
//!   copy them; does splice into `/dev/null` drop page references or copy; can
//!   the writer get transparent huge pages.
//! - [`pipe`]: does a write update an anonymous pipe's timestamps (against a
//!   FIFO); how many spare pages the pipe keeps for reuse; does a read that
//!   leaves the pipe full wake a sleeping writer.
//! - [`perf`]: what perf may count for this user, and why.
//!
//! Every probe is short (all of them together stay under two seconds) and runs
//! once at a server start and on request, never beside a measurement: the
//! server and the CLI call [`probe_all`] only when no run is going on.
//!
//! May use: [`crate::ends`] (buffers), [`crate::process`] (counts), [`crate::machine::vmsplice_probe`].

pub mod pages;
pub mod perf;
pub mod pipe;

use std::time::Instant;

use serde::{Deserialize, Serialize};

/// The behaviours probed, one per chapter claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProbeId {
    /// vmsplice maps the writer's pages or copies them.
    Vmsplice,
    /// splice into /dev/null releases page references or copies.
    SpliceNull,
    /// Transparent huge pages (and multi-size THP) for the writer's buffers.
    Thp,
    /// A write updates an anonymous pipe's timestamps (6.15 stopped it).
    PipeTimestamps,
    /// Spare pages the pipe keeps for reuse (one before 6.15, two from it).
    SparePages,
    /// A read that leaves the pipe full wakes a sleeping writer (6.14 stopped it).
    FullPipeWakeups,
    /// What perf may count for this user.
    Perf,
}

impl ProbeId {
    /// Every probe, in the order the book meets them.
    pub const ALL: [ProbeId; 7] = [
        ProbeId::PipeTimestamps,
        ProbeId::SparePages,
        ProbeId::FullPipeWakeups,
        ProbeId::Vmsplice,
        ProbeId::SpliceNull,
        ProbeId::Thp,
        ProbeId::Perf,
    ];

    /// The id as the book's directive and the JSON spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            ProbeId::Vmsplice => "vmsplice",
            ProbeId::SpliceNull => "splice-null",
            ProbeId::Thp => "thp",
            ProbeId::PipeTimestamps => "pipe-timestamps",
            ProbeId::SparePages => "spare-pages",
            ProbeId::FullPipeWakeups => "full-pipe-wakeups",
            ProbeId::Perf => "perf",
        }
    }

    /// The id named `text`, if any.
    pub fn parse(text: &str) -> Option<ProbeId> {
        ProbeId::ALL.into_iter().find(|id| id.as_str() == text)
    }

    /// The answer the article's kernel (5.17) gives: what the chapters explain
    /// first, and what a lab assumes where this kernel could not be asked.
    pub fn article_answer(self) -> &'static str {
        match self {
            ProbeId::Vmsplice => "maps",
            ProbeId::SpliceNull => "drops-references",
            ProbeId::Thp => "given",
            ProbeId::PipeTimestamps => "updated",
            ProbeId::SparePages => "1",
            ProbeId::FullPipeWakeups => "wakes",
            ProbeId::Perf => "all",
        }
    }

    /// Every answer this probe gives besides `unknown` (spare pages: the counts
    /// the kernels so far keep, 1 and 2).
    pub fn answers(self) -> Vec<String> {
        every_outcome("")
            .into_iter()
            .filter(|p| p.id == self && p.answer != UNKNOWN)
            .map(|p| p.answer)
            .collect()
    }
}

/// The answer of a probe that could not be asked.
pub const UNKNOWN: &str = "unknown";

/// When a probe ran, in milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// One probe's answer: what the kernel did (`answer`, a stable word per probe,
/// `unknown` when it could not be asked), the sentence a chapter shows, what
/// a reader should expect of the steps because of it, and the evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// Which behaviour.
    pub id: ProbeId,
    /// The answer, one stable word per outcome (see each probe), or `unknown`.
    pub answer: String,
    /// "On this machine: ..." as a chapter shows it.
    pub line: String,
    /// What it means for the book's figures on this machine.
    pub expect: String,
    /// What was measured or read that shows it.
    pub evidence: String,
    /// Why it could not be answered, and what to do (only for `unknown`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub why_unknown: Option<String>,
    /// How long the probe took, in milliseconds.
    pub took_ms: f64,
}

/// What a probe measured, before it is worded: `Ok((answer, evidence))` or
/// why it could not run.
pub(crate) type Outcome = Result<(Answer, String), String>;

/// Every answer a probe can give; its words live in [`Answer::words`], once,
/// so the CLI and the page say the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// vmsplice: the pipe holds references to the writer's pages.
    VmspliceMaps,
    /// vmsplice: the pipe got a copy.
    VmspliceCopies,
    /// splice to /dev/null: no copy, pages released.
    SpliceNullDrops,
    /// splice to /dev/null costs as much as copying out.
    SpliceNullCopies,
    /// The writer got huge pages when it asked (madvise) or always.
    ThpGiven,
    /// THP is on but the writer's buffer got none (fragmented memory, defrag off).
    ThpNotGiven,
    /// THP is off (`never`).
    ThpOff,
    /// Anonymous pipes' timestamps change on write.
    TimestampsUpdated,
    /// Anonymous pipes' timestamps stay (FIFOs' still move).
    TimestampsKept,
    /// The pipe reuses `n` spare pages.
    SparePages(u32),
    /// A read that leaves the pipe full wakes the writer.
    FullReadWakes,
    /// A read that leaves the pipe full lets the writer sleep.
    FullReadQuiet,
    /// Hardware counters, kernel events and call graphs.
    PerfAll,
    /// Software events and tracepoints, no hardware counters.
    PerfNoHardware,
    /// Only this process's own software events (paranoid level).
    PerfUserOnly,
    /// No perf events for this user.
    PerfNone,
}

impl Answer {
    /// The stable word, the line and what to expect.
    pub fn words(self) -> (String, String, &'static str) {
        use Answer::*;
        let (word, line, expect) = match self {
            VmspliceMaps => ("maps", "vmsplice hands the pipe references to your pages (measured)", "Steps 2 to 5 move page references, not bytes: expect them well above write/read, and never rewrite a buffer the reader has not consumed."),
            VmspliceCopies => ("copies", "vmsplice copies your bytes into the pipe, like write(2) (measured)", "This kernel turned vmsplice into a copy: expect steps 2 to 5 close to write/read's speed, and reusing a buffer early is harmless here."),
            SpliceNullDrops => ("drops-references", "splice into /dev/null releases the pipe's pages without copying them (measured)", "The reader of step 3 touches no data: expect it to cost far less per byte than read(2)."),
            SpliceNullCopies => ("copies", "splice into /dev/null cost as much as copying the bytes out (measured)", "Expect step 3 to gain little over step 2 on this machine."),
            ThpGiven => ("given", "your buffers get 2 MiB transparent huge pages when they ask (measured)", "Step 4 runs on huge pages here: expect it above step 3."),
            ThpNotGiven => ("not-given", "transparent huge pages are on, but the probe's buffer got none (measured)", "Memory may be too fragmented or defrag is off: step 4 may run on small pages and match step 3."),
            ThpOff => ("off", "transparent huge pages are off on this machine (read)", "Step 4 runs on small pages here: expect it to match step 3."),
            TimestampsUpdated => ("updated", "each write still updates the pipe's timestamps (measured)", "Every small write also pays for a timestamp update, as on the article's kernel."),
            TimestampsKept => ("kept", "writes leave an anonymous pipe's timestamps alone; a FIFO's still move (measured)", "Small writes skip the timestamp update the article's kernel paid for."),
            SparePages(n) => {
                let plural = if n == 1 { "" } else { "s" };
                return (
                    n.to_string(),
                    format!("the pipe keeps {n} spare page{plural} for reuse (measured)"),
                    "A write that follows a read can reuse a freed page instead of asking the page allocator.",
                );
            }
            FullReadWakes => ("wakes", "a read that leaves the pipe full still wakes the sleeping writer (measured)", "The writer of a full pipe wakes up for nothing: a blocking step pays for extra wakeups, as on the article's kernel."),
            FullReadQuiet => ("quiet", "a read that leaves the pipe full lets the writer sleep (measured)", "The writer wakes only when a slot is free: fewer wakeups than on the article's kernel."),
            PerfAll => ("all", "perf may count everything here: hardware counters, kernel events and call graphs (measured)", "The profile and counts cards work in full."),
            PerfNoHardware => ("no-hardware", "perf may count kernel events, but this machine has no hardware counters (measured)", "Profiles sample on a timer instead of CPU cycles; counts of kernel events still work."),
            PerfUserOnly => ("user-only", "perf may count only your own process's user-space events here (measured)", "Kernel counts and profiles of the kernel are missing; the cards say why."),
            PerfNone => ("none", "perf may count nothing for this user (measured)", "The profile and counts cards show what is missing and why."),
        };
        (word.to_string(), line.to_string(), expect)
    }
}

/// Words an outcome into a [`Probe`].
pub(crate) fn worded(id: ProbeId, outcome: Outcome, took_ms: f64) -> Probe {
    match outcome {
        Ok((answer, evidence)) => {
            let (word, line, expect) = answer.words();
            Probe {
                id,
                answer: word,
                line: format!("On this machine: {line}."),
                expect: expect.to_string(),
                evidence,
                why_unknown: None,
                took_ms,
            }
        }
        Err(why) => Probe {
            id,
            answer: UNKNOWN.into(),
            line: "On this machine: this could not be measured, so the chapter cannot tell what your kernel does.".into(),
            expect: "The chapter describes the article's kernel; yours may differ.".into(),
            evidence: String::new(),
            why_unknown: Some(why),
            took_ms,
        },
    }
}

/// Runs one probe, timed.
pub fn probe(id: ProbeId) -> Probe {
    let start = Instant::now();
    let outcome = match id {
        ProbeId::Vmsplice => pages::vmsplice(),
        ProbeId::SpliceNull => pages::splice_null(),
        ProbeId::Thp => pages::thp(),
        ProbeId::PipeTimestamps => pipe::timestamps(),
        ProbeId::SparePages => pipe::spare_pages(),
        ProbeId::FullPipeWakeups => pipe::full_pipe_wakeups(),
        ProbeId::Perf => perf::perf(),
    };
    worded(id, outcome, start.elapsed().as_secs_f64() * 1e3)
}

/// Runs every probe, one after another (they must not overlap: two of them
/// count this thread's wakeups and page allocations).
pub(crate) fn probe_all() -> Vec<Probe> {
    ProbeId::ALL.into_iter().map(probe).collect()
}

/// Every outcome a probe can give, worded as a real probe words it, with
/// `evidence` standing in for a measurement, and one probe that could not run:
/// each branch the page and the terminal must show, without a kernel that takes it.
pub fn every_outcome(evidence: &str) -> Vec<Probe> {
    use Answer::*;
    let answers = [
        (ProbeId::PipeTimestamps, TimestampsUpdated),
        (ProbeId::PipeTimestamps, TimestampsKept),
        (ProbeId::SparePages, SparePages(1)),
        (ProbeId::SparePages, SparePages(2)),
        (ProbeId::FullPipeWakeups, FullReadWakes),
        (ProbeId::FullPipeWakeups, FullReadQuiet),
        (ProbeId::Vmsplice, VmspliceMaps),
        (ProbeId::Vmsplice, VmspliceCopies),
        (ProbeId::SpliceNull, SpliceNullDrops),
        (ProbeId::SpliceNull, SpliceNullCopies),
        (ProbeId::Thp, ThpGiven),
        (ProbeId::Thp, ThpNotGiven),
        (ProbeId::Thp, ThpOff),
        (ProbeId::Perf, PerfAll),
        (ProbeId::Perf, PerfNoHardware),
        (ProbeId::Perf, PerfUserOnly),
        (ProbeId::Perf, PerfNone),
    ];
    let mut all: Vec<Probe> = answers
        .into_iter()
        .map(|(id, answer)| worded(id, Ok((answer, evidence.to_string())), 1.0))
        .collect();
    all.push(worded(
        ProbeId::SparePages,
        Err("counting page allocations needs root or CAP_PERFMON".into()),
        0.0,
    ));
    all
}

/// What this kernel does, as the terminal shows it (`pipebench system`): each
/// probe's line, what to expect, and its evidence or why it could not be measured.
pub fn text(probes: &[Probe]) -> String {
    let mut text = String::from("\nwhat this kernel does (measured):\n");
    for p in probes {
        text += &format!("- {} [{}: {}]\n", p.line, p.id.as_str(), p.answer);
        text += &format!("    so:   {}\n", p.expect);
        match &p.why_unknown {
            Some(why) => text += &format!("    why:  {why}\n"),
            None => text += &format!("    seen: {} ({:.0} ms)\n", p.evidence, p.took_ms),
        }
    }
    text
}

#[cfg(test)]
mod tests;
