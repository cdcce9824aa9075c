//! The cards' static sentences and the catalog names they show: what the
//! directives write and what the other editions translate. Kept apart from the
//! directives so the template's extraction reads them without depending on the
//! directives (which depend on the editions' words).

use pipebench::engine::sweep::SweepParam;
use pipebench::ipc;
use pipebench::steps::catalog;

/// How a page tells readers to start the runner, when it is not running.
pub(crate) const START_HINT: &str =
    "Start the runner with <code>cargo run --release</code> and open \
http://127.0.0.1:8000 to run this step on your machine.";

// The cards' static text, as templates with `{name}` placeholders, so each
// edition translates a whole sentence (`po/`), never pieces of one.
pub(crate) const RUN_HEAD: &str = "Run this step: {title}.";
pub(crate) const ARTICLE_MEASURED: &str = "The article measured {figure} GiB/s.";
pub(crate) const ON_THE_COMMAND_LINE: &str = "On the command line: {command}.";
pub(crate) const SAME_TABLE: &str = "The same table on the command line: {command}.";
pub(crate) const SAME_CURVE: &str = "The same curve on the command line: {command}.";
pub(crate) const TUNE_HEAD: &str = "Search bytes per call × pipe capacity for {title}.";
pub(crate) const TOOL_HEAD: &str =
    "Measure a program you pipe through (yes, cat, dd, pv, tee, head) against pipebench's end.";
pub(crate) const SHARED_HEAD: &str =
    "Share one pipe between many writers and readers, and count torn messages.";
pub(crate) const AA_HEAD: &str = "Run {id} against itself and count the false claims.";
pub(crate) const AA_AGAIN: &str = "On the command line: {command}, as many times as you like.";
pub(crate) const KERNEL_LINE: &str =
    "On your machine: the runner measures what your kernel does here ({command}, probe {probe}).";
pub(crate) const PAGES_HEAD: &str = "Page inspector.";
pub(crate) const WALK_HEAD: &str = "Page-table walk.";
pub(crate) const WALK_TEXT: &str = "The drawing needs JavaScript; on the command line: {command}.";
pub(crate) const LAB_HEAD: &str = "Lab: {title}.";
pub(crate) const COPIES: &str = "Copies per byte: {copies} ({path}).";
pub(crate) const SURVEY_FIGURE: &str = "The survey measured {ms} ms for {size} ({source}).";
pub(crate) const NO_SURVEY: &str = "The survey gives no time for this one.";
pub(crate) const IPC_START: &str =
    "Start the runner with <code>cargo run --release</code> and open \
http://127.0.0.1:8000 to run it on your machine, or run {command}.";
pub(crate) const BLOCKING: &str = "Blocking: {how}.";
pub(crate) const BUSY: &str = "Busy-polling: {how}.";
pub(crate) const LATENCY_MATRIX_HEAD: &str =
    "Every mechanism at one size, p50 and p99 beside CPU per message.";
pub(crate) const IPC_MATRIX_HEAD: &str = "All mechanisms, one after another, against the survey.";
pub(crate) const SWEEP_HEAD: &str = "Sweep: {title} against {param}.";

/// Every sentence the directives write and every catalog text they show (step,
/// mechanism and parameter names): what the other editions translate.
pub(crate) fn texts() -> Vec<String> {
    let mut out: Vec<String> = [
        START_HINT,
        RUN_HEAD,
        ARTICLE_MEASURED,
        ON_THE_COMMAND_LINE,
        SAME_TABLE,
        SAME_CURVE,
        TUNE_HEAD,
        TOOL_HEAD,
        SHARED_HEAD,
        AA_HEAD,
        AA_AGAIN,
        KERNEL_LINE,
        PAGES_HEAD,
        WALK_HEAD,
        WALK_TEXT,
        LAB_HEAD,
        COPIES,
        SURVEY_FIGURE,
        NO_SURVEY,
        IPC_START,
        BLOCKING,
        BUSY,
        LATENCY_MATRIX_HEAD,
        IPC_MATRIX_HEAD,
        SWEEP_HEAD,
        SURVEY_SOURCE,
    ]
    .map(String::from)
    .into();
    out.extend(SECOND_SURVEY.iter().map(|(_, source)| source.to_string()));
    for step in catalog::catalog() {
        out.push(step.title.to_string());
        out.push(step.summary.to_string());
    }
    for mechanism in ipc::mechanisms() {
        out.push(mechanism.title.to_string());
        out.push(mechanism.copy_path.to_string());
    }
    for mechanism in pipebench::latency::mechanisms() {
        out.push(mechanism.title.to_string());
        out.extend(
            mechanism
                .blocking
                .iter()
                .chain(&mechanism.busy)
                .map(|h| h.to_string()),
        );
    }
    out.extend([SweepParam::PipeSize, SweepParam::BufSize].map(|p| p.label().to_string()));
    out.retain(|t| !t.is_empty());
    out
}

/// Where the IPC survey's figures come from, said the same way on every card.
pub(crate) const SURVEY_SOURCE: &str =
    "the BiscuitOS zero-copy survey, Linux 6.10 x86_64, run in an \
emulator on hardware it does not name";

/// The cards whose figure comes from the other survey (DMA, mmap, sendfile, splice,
/// Direct IO), on a 1 GiB text file, and what its figure is.
pub(crate) const SECOND_SURVEY: &[(&str, &str)] = &[
    (
        "tcp-splice",
        "the second zero-copy survey, a 1 GiB file sent over loopback TCP, on a machine it \
         does not name",
    ),
    (
        "direct-io",
        "the second zero-copy survey, on a machine it does not name; its figure is CPU time \
         (clock()), not elapsed time, so compare it with this card's CPU time",
    ),
    (
        "buffered-io",
        "the second zero-copy survey, on a machine it does not name; its figure is CPU time \
         (clock()), not elapsed time, so compare it with this card's CPU time",
    ),
];
