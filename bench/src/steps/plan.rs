//! Planning a run: a catalog step plus the caller's parameters, checked against
//! bounds, turned into the full options of both ends.
//!
//! Every run parameter (its name, unit, default and bounds) is defined here once, in
//! [`param_specs`]: the CLI's defaults, the server's validation and the page's
//! controls (through `/api/steps`) all come from it. The harness that spawns the
//! planned run is [`crate::engine::pipe_run`].

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::ends::options::{ReaderOptions, WriterOptions, MALLOC_OFFSET};
use crate::ends::pipe_setup::pipe_max_size;
use crate::process::cpu::{allowed_cpus, default_pair};
use crate::size::{ByteSize, GIB, MIB};
use crate::steps::catalog::{self, Step};

/// Bytes a run pipes when the caller gives neither bytes nor seconds on the command
/// line: long enough for a steady figure on the fast steps of a 2-core VM, short
/// enough that the slowest article step ends in seconds. (The ends on their own,
/// `pipebench write | pipebench read`, pipe the reference's 10 GiB:
/// [`crate::ends::options::ARTICLE_BYTES`].)
pub const DEFAULT_RUN_BYTES: ByteSize = ByteSize(4 * GIB);

/// Time budget of a run from the page when it gives no bytes: every run then lasts
/// long enough to settle (see [`MIN_RELIABLE_MS`]) and about the same on any machine.
pub const DEFAULT_SECONDS: f64 = 4.0;

/// Time budget of each run of a sweep, from the page or the CLI, when neither
/// bytes nor seconds are given: a sweep runs every value several times, so each
/// run is shorter than a single run, still well over [`MIN_RELIABLE_MS`].
pub const SWEEP_SECONDS: f64 = 1.0;

/// Runs shorter than this are flagged: start-up, page faults of the first touch and
/// scheduling noise are then a large part of the figure.
pub(crate) const MIN_RELIABLE_MS: f64 = 500.0;

/// What a caller may change about a step. Every field is optional and checked
/// against [`Limits`]; unknown fields are refused so a typo is not silently ignored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunParams {
    /// Bytes to pipe (the cap when a time budget is set).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<ByteSize>,
    /// Bytes per call at both ends.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buf_size: Option<ByteSize>,
    /// Pipe capacity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pipe_size: Option<ByteSize>,
    /// Time budget in seconds: the writer stops when it is spent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
    /// CPU for the writer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub writer_cpu: Option<usize>,
    /// CPU for the reader.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reader_cpu: Option<usize>,
    /// Check every byte at the reader.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify: Option<bool>,
    /// No live progress: the observer stays out of the way and only the result is
    /// reported (a "quiet run").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quiet: Option<bool>,
    /// Record both ends with `perf record -g` and report their call-graph profile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<bool>,
    /// Count the kernel's events for each end (default on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<bool>,
    /// Also count the data calls in the kernel (default off: it costs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_syscalls: Option<bool>,
    /// The writer's buffers in huge pages (true) or small ones (false), where
    /// the step allows ([`catalog::allows_huge_pages`]); unset: as the step has
    /// them. A tuning knob, not one of the page's controls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub huge_pages: Option<bool>,
}

/// Bounds on [`RunParams`].
#[derive(Debug, Clone)]
pub struct Limits {
    /// The machine's page size, from the kernel (4 KiB on x86-64; 16 or 64 KiB on
    /// some arm64 kernels): the smallest chunk and pipe, and the unit both come in.
    pub page_size: u64,
    /// Largest byte count.
    pub max_bytes: u64,
    /// Smallest chunk.
    pub min_buf_size: u64,
    /// Largest chunk.
    pub max_buf_size: u64,
    /// Largest pipe capacity (the system's pipe-max-size).
    pub max_pipe_size: u64,
    /// Shortest time budget, seconds.
    pub min_seconds: f64,
    /// Longest time budget, seconds.
    pub max_seconds: f64,
    /// Kill a run that has not finished after this long.
    pub hard_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        let page_size = crate::ends::buffer::page_size() as u64;
        Limits {
            page_size,
            max_bytes: 64 * GIB,
            min_buf_size: page_size,
            max_buf_size: 64 * MIB,
            max_pipe_size: pipe_max_size().map_or(MIB, |s| s.bytes()),
            min_seconds: 0.1,
            max_seconds: 120.0,
            hard_timeout: Duration::from_secs(600),
        }
    }
}

/// The unit of a run parameter, for the page's controls and the CLI's help.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    /// A byte count (sent as a number or a string such as "256KiB").
    Bytes,
    /// Seconds, fractional allowed.
    Seconds,
    /// A CPU number.
    Cpu,
    /// On or off.
    Flag,
}

/// One run parameter as the page and the CLI see it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ParamSpec {
    /// The JSON name in `params` (the CLI flag is the same with dashes).
    pub name: &'static str,
    /// A short label for a control.
    pub label: &'static str,
    /// What the number counts.
    pub unit: Unit,
    /// The value used when the caller leaves it out; `None` when that is "not set"
    /// (the kernel's default pipe, no time budget, the first free CPU).
    pub default: Option<f64>,
    /// The value a sweep's runs use when the caller leaves it out (seconds only:
    /// a sweep runs many times, so each run is shorter).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sweep_default: Option<f64>,
    /// What the article piped (bytes only: the reference's 10 GiB), for a page
    /// that offers it as a cap.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub article: Option<f64>,
    /// Smallest allowed value.
    pub min: f64,
    /// Largest allowed value.
    pub max: f64,
    /// Values must be a multiple of this (whole pages), if set.
    pub multiple_of: Option<u64>,
    /// One sentence on what it changes.
    pub help: &'static str,
}

/// A run parameter: what it is called, how it reads and what it changes. Its
/// default and bounds depend on the step and the machine ([`param_specs`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    /// Time budget.
    Seconds,
    /// Bytes to pipe.
    Bytes,
    /// Bytes per call.
    BufSize,
    /// Pipe capacity.
    PipeSize,
    /// The writer's CPU.
    WriterCpu,
    /// The reader's CPU.
    ReaderCpu,
    /// Check every byte.
    Verify,
    /// No live progress.
    Quiet,
    /// Record both ends with perf.
    Profile,
    /// Count the kernel's events for each end.
    Counts,
    /// Also count the data calls in the kernel.
    TraceSyscalls,
}

impl Param {
    /// Every run parameter, in the order the page shows them.
    pub const ALL: [Param; 11] = [
        Param::Seconds,
        Param::Bytes,
        Param::BufSize,
        Param::PipeSize,
        Param::WriterCpu,
        Param::ReaderCpu,
        Param::Verify,
        Param::Quiet,
        Param::Profile,
        Param::Counts,
        Param::TraceSyscalls,
    ];

    /// The JSON name in `params`; the CLI flag is the same with dashes.
    pub const fn name(self) -> &'static str {
        match self {
            Param::Seconds => "seconds",
            Param::Bytes => "bytes",
            Param::BufSize => "buf_size",
            Param::PipeSize => "pipe_size",
            Param::WriterCpu => "writer_cpu",
            Param::ReaderCpu => "reader_cpu",
            Param::Verify => "verify",
            Param::Quiet => "quiet",
            Param::Profile => "profile",
            Param::Counts => "counts",
            Param::TraceSyscalls => "trace_syscalls",
        }
    }

    /// A short label for a control.
    pub const fn label(self) -> &'static str {
        match self {
            Param::Seconds => "Seconds",
            Param::Bytes => "Bytes",
            Param::BufSize => "Bytes per call",
            Param::PipeSize => "Pipe capacity",
            Param::WriterCpu => "Writer CPU",
            Param::ReaderCpu => "Reader CPU",
            Param::Verify => "Verify",
            Param::Quiet => "Quiet run",
            Param::Profile => "Profile",
            Param::Counts => "Count kernel events",
            Param::TraceSyscalls => "Trace kernel events",
        }
    }

    /// What the number counts.
    pub const fn unit(self) -> Unit {
        match self {
            Param::Seconds => Unit::Seconds,
            Param::Bytes | Param::BufSize | Param::PipeSize => Unit::Bytes,
            Param::WriterCpu | Param::ReaderCpu => Unit::Cpu,
            Param::Verify
            | Param::Quiet
            | Param::Profile
            | Param::Counts
            | Param::TraceSyscalls => Unit::Flag,
        }
    }

    /// One sentence on what it changes.
    pub const fn help(self) -> &'static str {
        match self {
            Param::Seconds => "Time budget: the writer stops when it is spent (the page's runs use it).",
            Param::Bytes => "Bytes to pipe; with a time budget, the most it may pipe.",
            Param::BufSize => "Bytes handed over by each write, vmsplice, read or splice call.",
            Param::PipeSize => "F_SETPIPE_SZ; unset, write(2) keeps the kernel's 64 KiB and vmsplice uses half a buffer.",
            Param::WriterCpu => "The CPU the writer is pinned to (default: the first this process may use).",
            Param::ReaderCpu => "The CPU the reader is pinned to (default: the next one).",
            Param::Verify => "The reader checks every byte (slower: for correctness, not speed).",
            Param::Quiet => "No live progress, only the result: the observer costs nothing.",
            Param::Profile => "Record both ends with perf (call graphs): hottest functions, flame graphs, the article's profile beside them.",
            Param::Counts => "Count what the kernel did for each end: context switches and faults always, wakeups, IPIs and TLB flushes where permitted (page allocations with the next option).",
            Param::TraceSyscalls => "Also count the kernel's events: pages allocated and freed (kmem:*), wakeups issued (sched:sched_waking), IPIs sent, TLB flushes, and the data calls in the kernel (syscalls:sys_enter_*); exact, but they fire on the run's hot path and slow it (about a tenth for write-read), so the figure is not a clean one.",
        }
    }

    /// Its spec for `step` on a machine with `limits`.
    pub fn spec(self, step: &Step, limits: &Limits) -> ParamSpec {
        let max_cpu = allowed_cpus().iter().copied().max().unwrap_or(0) as f64;
        let flag = |on: bool| (Some(if on { 1.0 } else { 0.0 }), 0.0, 1.0, None);
        let (default, min, max, multiple_of) = match self {
            Param::Seconds => (
                Some(DEFAULT_SECONDS),
                limits.min_seconds,
                limits.max_seconds,
                None,
            ),
            Param::Bytes => (
                Some(DEFAULT_RUN_BYTES.bytes() as f64),
                1.0,
                limits.max_bytes as f64,
                None,
            ),
            Param::BufSize => (
                Some(step.writer.common.buf_size.bytes() as f64),
                limits.min_buf_size as f64,
                limits.max_buf_size as f64,
                Some(limits.page_size),
            ),
            Param::PipeSize => (
                step.writer.effective_pipe_size().map(|s| s.bytes() as f64),
                limits.page_size as f64,
                limits.max_pipe_size as f64,
                Some(limits.page_size),
            ),
            Param::WriterCpu | Param::ReaderCpu => (None, 0.0, max_cpu, None),
            Param::Verify => flag(step.reader.common.verify),
            Param::Quiet | Param::Profile | Param::TraceSyscalls => flag(false),
            Param::Counts => flag(true),
        };
        ParamSpec {
            name: self.name(),
            label: self.label(),
            unit: self.unit(),
            default,
            sweep_default: (self == Param::Seconds).then_some(SWEEP_SECONDS),
            article: (self == Param::Bytes)
                .then_some(crate::ends::options::ARTICLE_BYTES.bytes() as f64),
            min,
            max,
            multiple_of,
            help: self.help(),
        }
    }
}

impl ParamSpec {
    /// Checks a byte count against the bounds: the exact value is quoted back.
    fn check_bytes(&self, value: u64) -> Result<u64, PlanError> {
        if !(self.min..=self.max).contains(&(value as f64)) {
            return Err(PlanError::OutOfRange {
                name: self.name,
                value: ByteSize(value).exact(),
                min: ByteSize(self.min as u64).exact(),
                max: ByteSize(self.max as u64).exact(),
            });
        }
        if self.multiple_of.is_some_and(|m| !value.is_multiple_of(m)) {
            return Err(PlanError::NotWholePages {
                name: self.name,
                value: ByteSize(value).exact(),
                page: self.multiple_of.unwrap_or_default(),
            });
        }
        Ok(value)
    }

    /// Checks a number of seconds against the bounds.
    fn check_seconds(&self, value: f64) -> Result<Duration, PlanError> {
        if value.is_finite() && (self.min..=self.max).contains(&value) {
            return Ok(Duration::from_secs_f64(value));
        }
        Err(PlanError::OutOfRange {
            name: self.name,
            value: value.to_string(),
            min: self.min.to_string(),
            max: self.max.to_string(),
        })
    }
}

/// The run parameters of `step` with this machine's `limits`: the one definition
/// the CLI, the server and the page share.
pub(crate) fn param_specs(step: &Step, limits: &Limits) -> Vec<ParamSpec> {
    Param::ALL.iter().map(|p| p.spec(step, limits)).collect()
}

/// A catalog step as published to the page and `pipebench list --json`: the step
/// and its run parameters with this machine's bounds.
#[derive(Debug, Clone, Serialize)]
pub struct PublishedStep {
    /// The step.
    #[serde(flatten)]
    pub step: Step,
    /// Its run parameters.
    pub params: Vec<ParamSpec>,
}

/// The whole catalog with each step's parameters under `limits`.
pub fn published_catalog(limits: &Limits) -> Vec<PublishedStep> {
    catalog::catalog()
        .into_iter()
        .map(|step| PublishedStep {
            params: param_specs(&step, limits),
            step,
        })
        .collect()
}

/// Why a plan was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    /// No such step in the catalog.
    #[error("unknown step `{id}`; known steps: {known}")]
    UnknownStep {
        /// What was asked for.
        id: String,
        /// The catalog's ids, comma-separated.
        known: String,
    },
    /// A parameter is outside its bounds.
    #[error("{name} = {value} is out of range: allowed {min} to {max}")]
    OutOfRange {
        /// Parameter name.
        name: &'static str,
        /// The value given, exactly.
        value: String,
        /// Lowest allowed.
        min: String,
        /// Highest allowed.
        max: String,
    },
    /// A size is in range but not a whole number of pages.
    #[error("{name} = {value} must be a multiple of {page} bytes (whole pages of this machine)")]
    NotWholePages {
        /// Parameter name.
        name: &'static str,
        /// The value given, exactly.
        value: String,
        /// The machine's page size, bytes.
        page: u64,
    },
    /// The chunk asks for a pipe the system does not allow.
    #[error(
        "buf_size = {buf_size} needs a pipe of {needed}, over this system's pipe-max-size \
         {limit}: choose a smaller buffer, or give pipe_size"
    )]
    PipeOverLimit {
        /// The chunk, exactly.
        buf_size: String,
        /// The pipe it implies.
        needed: String,
        /// /proc/sys/fs/pipe-max-size.
        limit: String,
    },
    /// Huge pages asked of a step whose writer cannot use them.
    #[error(
        "huge_pages = {asked} does not apply to `{step}`: only a step whose writer hands its \
         own pages to the pipe (vmsplice) can change them"
    )]
    HugePagesNotHere {
        /// The step.
        step: String,
        /// What was asked.
        asked: bool,
    },
    /// A tuned variant without the sizes that make it one.
    #[error(
        "`{id}` is {base} with the bytes per call and pipe capacity a tuning search \
         found: give both buf_size and pipe_size (the search's argv has them)"
    )]
    TunedNeedsSizes {
        /// The variant's id.
        id: String,
        /// The step it varies.
        base: String,
    },
    /// A CPU this process may not use.
    #[error("{name} = {cpu} is not a CPU this process may use (allowed: {allowed:?})")]
    ForbiddenCpu {
        /// `writer_cpu` or `reader_cpu`.
        name: &'static str,
        /// The CPU asked for.
        cpu: usize,
        /// The CPUs allowed.
        allowed: Vec<usize>,
    },
}

/// A validated run: both ends' full options, ready to spawn.
#[derive(Debug, Clone)]
pub struct RunPlan {
    /// The step id.
    pub step: String,
    /// Writer options, including its CPU.
    pub writer: WriterOptions,
    /// Reader options, including its CPU.
    pub reader: ReaderOptions,
    /// Stop the writer after this long.
    pub time_budget: Option<Duration>,
    /// Kill the run after this long.
    pub hard_timeout: Duration,
    /// No live progress for this run.
    pub quiet: bool,
    /// Profile both ends with perf.
    pub profile: bool,
    /// Things the caller should tell the user (e.g. only one CPU).
    pub warnings: Vec<String>,
}

impl RunPlan {
    /// Looks `step_id` up and applies `params` within `limits`.
    pub fn for_step_id(
        step_id: &str,
        params: &RunParams,
        limits: &Limits,
    ) -> Result<Self, PlanError> {
        if let Some(base) = catalog::tuned_base(step_id) {
            // A tuned variant is its base step at the sizes the search found; its
            // results carry its own id, so they are kept apart from the base's.
            if params.buf_size.is_none() || params.pipe_size.is_none() {
                return Err(PlanError::TunedNeedsSizes {
                    id: step_id.to_string(),
                    base: base.id.to_string(),
                });
            }
            let mut plan = Self::new(&base, params, limits)?;
            plan.step = step_id.to_string();
            return Ok(plan);
        }
        let step = catalog::find(step_id).ok_or_else(|| PlanError::UnknownStep {
            id: step_id.to_string(),
            known: catalog::ids().join(", "),
        })?;
        Self::new(&step, params, limits)
    }

    /// Applies `params` to `step` within `limits`.
    pub fn new(step: &Step, params: &RunParams, limits: &Limits) -> Result<Self, PlanError> {
        let mut writer = step.writer.clone();
        let mut reader = step.reader.clone();
        let mut warnings = Vec::new();
        let spec = |param: Param| param.spec(step, limits);
        let bytes =
            spec(Param::Bytes).check_bytes(params.bytes.unwrap_or(DEFAULT_RUN_BYTES).bytes())?;
        let buf_size = params
            .buf_size
            .map_or(writer.common.buf_size.bytes(), |b| b.bytes());
        let buf_size = spec(Param::BufSize).check_bytes(buf_size)?;
        writer.common.buf_size = ByteSize(buf_size);
        if let Some(pipe) = params.pipe_size {
            spec(Param::PipeSize).check_bytes(pipe.bytes())?;
            writer.pipe_size = Some(pipe);
        } else if let Some(needed) = writer.effective_pipe_size() {
            if needed.bytes() > limits.max_pipe_size {
                return Err(PlanError::PipeOverLimit {
                    buf_size: ByteSize(buf_size).exact(),
                    needed: needed.exact(),
                    limit: ByteSize(limits.max_pipe_size).exact(),
                });
            }
        }
        let time_budget = params
            .seconds
            .map(|s| spec(Param::Seconds).check_seconds(s))
            .transpose()?;
        if let Some(huge) = params.huge_pages {
            if huge != writer.common.huge_pages {
                if !catalog::allows_huge_pages(step) {
                    return Err(PlanError::HugePagesNotHere {
                        step: step.id.to_string(),
                        asked: huge,
                    });
                }
                // Placed as the reference programs' allocators place them:
                // huge pages aligned, small ones where malloc puts the block.
                writer.common.huge_pages = huge;
                writer.common.buffer_offset = Some(if huge { 0 } else { MALLOC_OFFSET });
            }
        }
        let (writer_cpu, reader_cpu) = choose_cpus(params, &mut warnings)?;
        for common in [&mut writer.common, &mut reader.common] {
            common.bytes = ByteSize(bytes);
            common.buf_size = ByteSize(buf_size);
            if let Some(verify) = params.verify {
                common.verify = verify || step.writer.common.verify;
            }
            common.no_counts = !params.counts.unwrap_or(true);
            common.trace_syscalls = params.trace_syscalls.unwrap_or(false) && !common.no_counts;
        }
        // Record the capacity asked for, so results say how they were made; `None`
        // stays `None`: the kernel's default pipe, as the reference leaves it.
        writer.pipe_size = writer.effective_pipe_size();
        writer.common.cpu = writer_cpu;
        reader.common.cpu = reader_cpu;
        Ok(RunPlan {
            step: step.id.to_string(),
            writer,
            reader,
            time_budget,
            hard_timeout: limits.hard_timeout,
            quiet: params.quiet.unwrap_or(false),
            profile: params.profile.unwrap_or(false),
            warnings,
        })
    }

    /// The `pipebench run` command line that repeats this run: every value that
    /// shapes it is spelled out, so it does not depend on today's defaults.
    pub fn argv(&self) -> Vec<String> {
        let mut argv: Vec<String> = vec!["pipebench".into(), "run".into(), self.step.clone()];
        let mut push = |flag: &str, value: String| {
            argv.push(flag.into());
            argv.push(value);
        };
        push("--bytes", self.writer.common.bytes.to_string());
        push("--buf-size", self.writer.common.buf_size.to_string());
        if let Some(pipe) = self.writer.pipe_size {
            push("--pipe-size", pipe.to_string());
        }
        // Said where it can be chosen and is not the step's own, and always for
        // a tuned variant whose search chose it.
        let base = catalog::tuned_base(&self.step).or_else(|| catalog::find(&self.step));
        if let Some(base) = base.filter(catalog::allows_huge_pages) {
            let huge = self.writer.common.huge_pages;
            if catalog::tuned_base(&self.step).is_some() || huge != base.writer.common.huge_pages {
                push("--huge-pages", if huge { "on" } else { "off" }.into());
            }
        }
        if let Some(budget) = self.time_budget {
            push("--seconds", budget.as_secs_f64().to_string());
        }
        if let Some(cpu) = self.writer.common.cpu {
            push("--writer-cpu", cpu.to_string());
        }
        if let Some(cpu) = self.reader.common.cpu {
            push("--reader-cpu", cpu.to_string());
        }
        if self.reader.common.verify {
            argv.push("--verify".into());
        }
        if self.profile {
            argv.push("--profile".into());
        }
        if self.writer.common.no_counts {
            argv.push("--no-counts".into());
        }
        if self.writer.common.trace_syscalls {
            argv.push("--trace-syscalls".into());
        }
        argv
    }

    /// The same run as a shell pipeline of the two ends, like the article's
    /// `./write | ./read`.
    pub fn pipeline(&self) -> String {
        let words = |role: &str, args: Vec<std::ffi::OsString>| {
            let mut line = format!("pipebench {role}");
            for arg in args {
                line.push(' ');
                line.push_str(&arg.to_string_lossy());
            }
            line
        };
        let mut reader = self.reader.clone();
        reader.json = true;
        format!(
            "{} | {}",
            words("write", self.writer.to_args()),
            words("read", reader.to_args())
        )
    }
}

/// Picks two different CPUs: the requested ones, else the default pair
/// ([`default_pair`], which latency runs share).
fn choose_cpus(
    params: &RunParams,
    warnings: &mut Vec<String>,
) -> Result<(Option<usize>, Option<usize>), PlanError> {
    let allowed = allowed_cpus();
    for (name, cpu) in [
        ("writer_cpu", params.writer_cpu),
        ("reader_cpu", params.reader_cpu),
    ] {
        if let Some(cpu) = cpu {
            if !allowed.contains(&cpu) {
                return Err(PlanError::ForbiddenCpu {
                    name,
                    cpu,
                    allowed: allowed.clone(),
                });
            }
        }
    }
    if allowed.len() < 2 {
        warnings.push(format!(
            "only {} CPU available: writer and reader share it, so the figures mostly measure scheduling",
            allowed.len()
        ));
        return Ok((params.writer_cpu, params.reader_cpu));
    }
    let [first, second] = default_pair(&allowed).expect("two CPUs or more, checked above");
    let writer = params.writer_cpu.unwrap_or(first);
    let reader = params
        .reader_cpu
        .unwrap_or_else(|| *allowed.iter().find(|&&c| c != writer).unwrap_or(&second));
    if writer == reader {
        warnings.push(format!(
            "writer and reader are both pinned to CPU {writer}: they will take turns"
        ));
    }
    Ok((Some(writer), Some(reader)))
}

#[cfg(test)]
mod tests;
