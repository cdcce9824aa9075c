//! What a tuning search says: `started` with its grid ([`TuneStarted`]), a
//! `trial` after every run ([`Trial`]) and its result ([`TuneResult`]: the
//! best configuration and its gain). Apart from the job that runs it, so the
//! engine's `Event` can carry it without depending on how it is run.

use serde::Serialize;

use crate::stats::Summary;

/// One configuration and its runs' throughput.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    /// Bytes per call.
    pub buf_size: u64,
    /// The writer's huge pages, where the search tried both settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub huge_pages: Option<bool>,
    /// The pipe's capacity as read back.
    pub pipe_capacity: Option<u64>,
    /// GiB/s over the rounds.
    pub summary: Summary,
}

/// The best configuration, as a variant of its own.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Best {
    /// Its id: `tuned-STEP`.
    pub id: String,
    /// The step it varies.
    pub base: String,
    /// Bytes per call.
    pub buf_size: u64,
    /// Pipe capacity.
    pub pipe_size: u64,
    /// The writer's huge pages, where the search tried both settings (the
    /// variant's argv says `--huge-pages on|off`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub huge_pages: Option<bool>,
    /// GiB/s over the rounds.
    pub summary: Summary,
    /// The command line that runs it again.
    pub argv: Vec<String>,
}

/// The best over the step's own configuration, measured in the same session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gain {
    /// Median over median.
    pub ratio: f64,
    /// The spread: the best's slowest run over the step's fastest ...
    pub low: f64,
    /// ... and the best's fastest over the step's slowest.
    pub high: f64,
    /// The ratio's 95% signed-rank interval over the search's rounds, each
    /// round's run of the best paired with that round's run of the step's
    /// own configuration (both ran in it, in shuffled order); absent below
    /// the 6 rounds that can reach 95%, or when a run moved nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci_low: Option<f64>,
    /// The interval's upper end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci_high: Option<f64>,
}

/// What a search found (`"kind":"tune"`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TuneResult {
    /// Always `tune`.
    pub kind: &'static str,
    /// The step.
    pub step: String,
    /// Seconds each run was given.
    pub seconds_per_run: f64,
    /// Rounds.
    pub rounds: usize,
    /// The step's own configuration.
    pub baseline: Cell,
    /// Every configuration tried.
    pub cells: Vec<Cell>,
    /// The fastest by median.
    pub best: Best,
    /// Its gain over the step's own configuration.
    pub gain: Gain,
    /// Things to know.
    pub warnings: Vec<String>,
    /// The machine's page size, bytes (a page's time through the pipe is said in it).
    pub page_size: u64,
    /// Whether the step's own configuration had a faster median than every
    /// configuration searched ([`super::own_was_fastest`]): then `best` is only
    /// the best of the others, and the CLI and the page say so.
    pub own_fastest: bool,
}

/// A search as it starts (`started {kind:"tune", ...}`): the grid a page draws
/// before the first run ends.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TuneStarted {
    /// Always `tune`.
    pub kind: &'static str,
    /// The step tuned.
    pub step: String,
    /// Every configuration to try: bytes per call and the pipe capacity asked.
    pub cells: Vec<TuneConfig>,
    /// The step's own configuration, run in every round beside them.
    pub own: TuneConfig,
    /// Rounds.
    pub rounds: usize,
    /// Runs in all (cells and the step's own, every round).
    pub runs: usize,
    /// Seconds each run is given.
    pub seconds_per_run: f64,
}

/// One configuration of a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TuneConfig {
    /// Bytes per call.
    pub buf_size: u64,
    /// The pipe capacity asked for (`None`: the kernel's default).
    pub pipe_size: Option<u64>,
    /// The writer's huge pages, where the search tries both (absent elsewhere).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub huge_pages: Option<bool>,
}

/// One run of a search, as it ends (`"type":"trial"`): what ran, and the search
/// so far, so a page can draw it live.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trial {
    /// This run's place in the search, from 1.
    pub index: usize,
    /// How many runs the search has.
    pub of: usize,
    /// What ran.
    #[serde(flatten)]
    pub config: TuneConfig,
    /// Whether it was the step's own configuration.
    pub own: bool,
    /// The pipe's capacity as read back.
    pub pipe_capacity: Option<u64>,
    /// This run's GiB/s.
    pub gib_per_s: f64,
    /// The median of this configuration's runs so far.
    pub median: f64,
    /// The step's own configuration's median so far (none before its first run).
    pub own_median: Option<f64>,
    /// The fastest configuration by median so far, the step's own aside.
    pub best: Option<BestSoFar>,
}

/// The fastest configuration of a search so far.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BestSoFar {
    /// Its configuration.
    #[serde(flatten)]
    pub config: TuneConfig,
    /// Its median so far.
    pub median: f64,
}
