//! What a run from the page does when the reader leaves things unsaid.

use pipebench::ends::options::WriterOptions;
use pipebench::engine::job::{Job, PipeJob};
use pipebench::engine::sweep::{SweepError, SweepParam, SweepPlan};
use pipebench::size::ByteSize;
use pipebench::steps::catalog;
use pipebench::steps::plan::{Limits, PlanError, RunParams, RunPlan, DEFAULT_SECONDS};

/// The server's defaults for what the page leaves out: no bytes and no seconds
/// means [`DEFAULT_SECONDS`]; a time budget without bytes means the budget alone
/// decides (bytes capped at the limit).
fn with_page_defaults(params: &RunParams, limits: &Limits) -> RunParams {
    let mut params = params.clone();
    if params.bytes.is_none() {
        params.bytes = Some(ByteSize(limits.max_bytes));
        params.seconds.get_or_insert(DEFAULT_SECONDS);
    }
    params
}

/// The engine's job for a page's run: watched for occupancy and live, unless the
/// reader asked for a quiet run (then the observer stays out of the way).
pub fn pipe_job(plan: RunPlan) -> Job {
    let live = !plan.quiet;
    Job::Pipe(Box::new(PipeJob {
        plan,
        watch: live,
        live,
    }))
}

/// Validates a run request from the page, filling in the server's defaults.
pub fn plan(step: &str, params: &RunParams, limits: &Limits) -> Result<RunPlan, PlanError> {
    RunPlan::for_step_id(step, &with_page_defaults(params, limits), limits)
}

/// Validates a sweep from the page, every value up front, with the same defaults
/// as a single run; each repeat visits the values in a fresh shuffled order.
pub fn sweep(
    step: &str,
    param: SweepParam,
    values: &[ByteSize],
    repeats: usize,
    params: &RunParams,
    limits: &Limits,
) -> Result<SweepPlan, SweepError> {
    SweepPlan::new(
        step,
        param,
        values,
        &with_page_defaults(params, limits),
        repeats,
        limits,
        &mut rand::rng(),
    )
}

/// The writer options whose buffers a `pages` message looks at: the step's own,
/// with `touch` (when given) deciding whether they are written first. Only
/// catalog steps: the sizes are the catalog's, so nothing is unbounded.
pub fn inspected_writer(step: &str, touch: Option<bool>) -> Result<WriterOptions, PlanError> {
    let mut writer = catalog::find(step)
        .ok_or_else(|| PlanError::UnknownStep {
            id: step.to_string(),
            known: catalog::ids().join(", "),
        })?
        .writer;
    if let Some(touch) = touch {
        writer.dont_touch_pages = !touch;
    }
    // Buffers the inspector lists live for a moment only: no mlock.
    writer.common.lock_memory = false;
    Ok(writer)
}

/// What a tool run from the page moves unless it says: enough for a steady
/// figure from the slowest tool (512-byte `dd`) in about a second.
pub const TOOL_BYTES: u64 = 64 << 20;

/// How long a tool run from the page may take.
pub const TOOL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// The page's tool run, checked against the table and this machine: its data
/// calls are traced (the card shows what the tool does per call).
pub fn tool_job(
    tool: &str,
    side: pipebench::steps::tools::Side,
    bytes: Option<pipebench::size::ByteSize>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn defaults_to_a_short_time_budget() {
        let limits = Limits::default();
        let plan = plan("write-read", &RunParams::default(), &limits).unwrap();
        assert_eq!(plan.time_budget, Some(Duration::from_secs(4)));
        assert_eq!(plan.writer.common.bytes.bytes(), limits.max_bytes);
    }

    #[test]
    fn keeps_what_the_reader_asked() {
        let limits = Limits::default();
        let bytes_only = RunParams {
            bytes: Some(ByteSize(1 << 20)),
            ..Default::default()
        };
        let plan = plan("write-read", &bytes_only, &limits).unwrap();
        assert_eq!(
            (plan.time_budget, plan.writer.common.bytes),
            (None, ByteSize(1 << 20))
        );
        let seconds_only = RunParams {
            seconds: Some(1.5),
            ..Default::default()
        };
        let plan = super::plan("write-read", &seconds_only, &limits).unwrap();
        assert_eq!(plan.time_budget, Some(Duration::from_secs_f64(1.5)));
        assert_eq!(plan.writer.common.bytes.bytes(), limits.max_bytes);
    }

    #[test]
    fn pages_look_at_the_steps_writer_buffers() {
        let writer = inspected_writer("huge-pages", None).unwrap();
        assert!(writer.common.huge_pages && writer.vmsplice && !writer.dont_touch_pages);
        assert!(
            inspected_writer("huge-pages", Some(false))
                .unwrap()
                .dont_touch_pages
        );
        let err = inspected_writer("nope", None).unwrap_err().to_string();
        assert!(err.contains("unknown step `nope`"), "{err}");
    }

    #[test]
    fn refuses_what_pipebench_refuses() {
        let err = plan("rm-rf", &RunParams::default(), &Limits::default()).unwrap_err();
        assert!(err.to_string().contains("unknown step"));
    }
}
