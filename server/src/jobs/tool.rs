//! The `tool` kind: a program of the vetted tool table as one end of a pipe
//! (an id, never a command), and the table as `/api/tools` publishes it.

use pipebench::engine::event::Failure;
use pipebench::engine::job::Job;
use pipebench::size::ByteSize;
use pipebench::steps::tools::ToolEnd;
use serde::{Deserialize, Serialize};

use crate::jobs::planned::{refuse, Planned};
use crate::jobs::requests::Kind;
use crate::state::AppState;

/// `{"type":"tool","tool":ID,"as":"writer"|"reader","bytes":SIZE}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToolMessage {
    /// The tool's id.
    pub(crate) tool: String,
    /// Which end it is (default: the writer).
    #[serde(default, rename = "as")]
    pub(crate) side: Option<ToolEnd>,
    /// Bytes to move (default: [`TOOL_BYTES`]).
    #[serde(default)]
    pub(crate) bytes: Option<ByteSize>,
}

impl Kind for ToolMessage {
    const EXAMPLE: &'static str = r#"{"type":"tool","tool":"cat","as":"writer","bytes":"64MiB"}"#;

    fn plan(self, _state: &AppState) -> Result<Planned, Failure> {
        let side = self.side.unwrap_or(ToolEnd::Writer);
        let job = tool_job(&self.tool, side, self.bytes).map_err(refuse)?;
        Ok(Planned::one(Job::Tool(job), None))
    }
}

/// What a tool run from the page moves unless it says: enough for a steady
/// figure from the slowest tool (512-byte `dd`) in about a second.
pub(crate) const TOOL_BYTES: u64 = 64 << 20;

/// How long a tool run from the page may take.
pub(crate) const TOOL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// The page's tool run, checked against the table and this machine: its data
/// calls are traced (the card shows what the tool does per call).
pub(crate) fn tool_job(
    tool: &str,
    side: ToolEnd,
    bytes: Option<ByteSize>,
) -> Result<pipebench::engine::tool::ToolJob, pipebench::engine::tool::ToolError> {
    let bytes = bytes.map_or(TOOL_BYTES, |b| b.bytes());
    pipebench::engine::tool::check(tool, side, bytes)?;
    Ok(pipebench::engine::tool::ToolJob {
        tool: tool.to_string(),
        side,
        bytes,
        trace_syscalls: true,
        timeout: TOOL_TIMEOUT,
    })
}

/// One program of the tool table as the page sees it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ToolEntry {
    /// Its id (what a `tool` message names).
    pub(crate) id: &'static str,
    /// What it is.
    pub(crate) title: &'static str,
    /// The program, as a person would type it.
    pub(crate) program: &'static str,
    /// Whether it is installed here.
    pub(crate) present: bool,
    /// The ends it can be: `writer`, `reader`.
    pub(crate) sides: Vec<&'static str>,
}

/// `/api/tools`: the vetted table, with what is installed here.
pub(crate) fn tool_table() -> Vec<ToolEntry> {
    use pipebench::steps::tools::TOOLS;
    let present = pipebench::engine::tool::present();
    TOOLS
        .iter()
        .map(|tool| ToolEntry {
            id: tool.id,
            title: tool.title,
            program: tool.program_name(),
            present: present.iter().any(|p| p == tool.id),
            sides: [ToolEnd::Writer, ToolEnd::Reader]
                .into_iter()
                .filter(|side| tool.usage(*side).is_some())
                .map(ToolEnd::name)
                .collect(),
        })
        .collect()
}
