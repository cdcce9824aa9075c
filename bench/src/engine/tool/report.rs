//! What a tool run says: its result ([`ToolResult`]) with the pipe calls it
//! made ([`PipeCalls`]). Apart from the job that runs it, so the engine's
//! `Event` can carry it without depending on how it is run.

use serde::Serialize;

use crate::process::counts::Counts;
use crate::steps::tools::ToolEnd;

/// The result of a tool run (`"kind":"tool"`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolResult {
    /// Always `tool`.
    pub kind: &'static str,
    /// The tool's id.
    pub tool: String,
    /// What it is.
    pub title: String,
    /// Which end it was.
    pub side: ToolEnd,
    /// Its command line as run (the file is the run's private file).
    pub argv: Vec<String>,
    /// Bytes that went through the pipe, as pipebench's end counted them.
    pub bytes: u64,
    /// Bytes asked for.
    pub requested_bytes: u64,
    /// From the first byte to the last, at pipebench's end.
    pub elapsed_ms: f64,
    /// GiB/s over that time.
    pub gib_per_s: f64,
    /// The pipe's capacity.
    pub pipe_capacity: u64,
    /// The CPUs of the tool and of pipebench's end.
    pub cpus: [Option<usize>; 2],
    /// How the tool ended (`exit code 0`, `killed by signal 13`).
    pub exit: String,
    /// What the kernel did for the tool, keyed by its end as `side` names it
    /// (`writer` or `reader`), and what could not be counted: the same shape
    /// as every result's counts. pipebench's own end is not counted (the
    /// figure is the tool's).
    pub counts: Counts,
    /// Its calls on the pipe, from the traced counts (absent when not traced).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calls: Option<PipeCalls>,
    /// Things to know when reading the figure.
    pub warnings: Vec<String>,
    /// When it finished, ms since the epoch.
    pub finished_at_ms: u64,
}

/// What the tool's data calls say about how it uses the pipe.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PipeCalls {
    /// The calls that move data on its side of the pipe (writes, or reads,
    /// and the zero-copy calls), as the kernel counted them for the whole
    /// process: a tool's few other writes (a closing line on stderr) count too.
    pub on_pipe: u64,
    /// Bytes per such call, on average.
    pub bytes_per_call: Option<f64>,
    /// Whether it moved pages without copying them (splice, sendfile, ...).
    pub zero_copy: bool,
}
