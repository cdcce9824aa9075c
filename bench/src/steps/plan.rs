//! Planning a run: a catalog step plus the caller's parameters, checked against
//! bounds, turned into the full options of both ends.
//!
//! Every run parameter (its name, unit, default and bounds) is defined here once, in
//! [`param_specs`]: the CLI's defaults, the server's validation and the page's
//! controls (through `/api/steps`) all come from it. The harness that spawns the
//! planned run is [`crate::engine::pipe_run`].

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::ends::options::{ReaderOptions, WriterOptions};
use crate::ends::pipe_setup::pipe_max_size;
use crate::process::cpu::allowed_cpus;
use crate::size::{ByteSize, GIB, KIB, MIB};
use crate::steps::catalog::{self, Step};

/// Bytes a run pipes when the caller gives neither bytes nor seconds on the command
/// line: long enough for a steady figure on the fast steps of a 2-core VM.
pub const DEFAULT_RUN_BYTES: ByteSize = ByteSize(4 * GIB);

/// Time budget of a run from the page when it gives no bytes: every run then lasts
/// long enough to settle (see [`MIN_RELIABLE_MS`]) and about the same on any machine.
pub const DEFAULT_SECONDS: f64 = 4.0;

/// Runs shorter than this are flagged: start-up, page faults of the first touch and
/// scheduling noise are then a large part of the figure.
pub const MIN_RELIABLE_MS: f64 = 500.0;

/// The smallest chunk and pipe: one page.
const PAGE: u64 = 4 * KIB;

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
}

/// Bounds on [`RunParams`].
#[derive(Debug, Clone)]
pub struct Limits {
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
        Limits {
            max_bytes: 64 * GIB,
            min_buf_size: PAGE,
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
    /// Smallest allowed value.
    pub min: f64,
    /// Largest allowed value.
    pub max: f64,
    /// Values must be a multiple of this (whole pages), if set.
    pub multiple_of: Option<u64>,
    /// One sentence on what it changes.
    pub help: &'static str,
}

/// The run parameters of `step` with this machine's `limits`: the one definition
/// the CLI, the server and the page share.
pub fn param_specs(step: &Step, limits: &Limits) -> Vec<ParamSpec> {
    let cpus = allowed_cpus();
    let max_cpu = cpus.iter().copied().max().unwrap_or(0) as f64;
    let bytes = |b: u64| Some(b as f64);
    vec![
        ParamSpec {
            name: "seconds",
            label: "Seconds",
            unit: Unit::Seconds,
            default: Some(DEFAULT_SECONDS),
            min: limits.min_seconds,
            max: limits.max_seconds,
            multiple_of: None,
            help: "Time budget: the writer stops when it is spent (the page's runs use it).",
        },
        ParamSpec {
            name: "bytes",
            label: "Bytes",
            unit: Unit::Bytes,
            default: bytes(DEFAULT_RUN_BYTES.bytes()),
            min: 1.0,
            max: limits.max_bytes as f64,
            multiple_of: None,
            help: "Bytes to pipe; with a time budget, the most it may pipe.",
        },
        ParamSpec {
            name: "buf_size",
            label: "Bytes per call",
            unit: Unit::Bytes,
            default: bytes(step.writer.common.buf_size.bytes()),
            min: limits.min_buf_size as f64,
            max: limits.max_buf_size as f64,
            multiple_of: Some(PAGE),
            help: "Bytes handed over by each write, vmsplice, read or splice call.",
        },
        ParamSpec {
            name: "pipe_size",
            label: "Pipe capacity",
            unit: Unit::Bytes,
            default: step.writer.effective_pipe_size().map(|s| s.bytes() as f64),
            min: PAGE as f64,
            max: limits.max_pipe_size as f64,
            multiple_of: Some(PAGE),
            help: "F_SETPIPE_SZ; unset, write(2) keeps the kernel's 64 KiB and vmsplice uses half a buffer.",
        },
        ParamSpec {
            name: "writer_cpu",
            label: "Writer CPU",
            unit: Unit::Cpu,
            default: None,
            min: 0.0,
            max: max_cpu,
            multiple_of: None,
            help: "The CPU the writer is pinned to (default: the first this process may use).",
        },
        ParamSpec {
            name: "reader_cpu",
            label: "Reader CPU",
            unit: Unit::Cpu,
            default: None,
            min: 0.0,
            max: max_cpu,
            multiple_of: None,
            help: "The CPU the reader is pinned to (default: the next one).",
        },
        ParamSpec {
            name: "verify",
            label: "Verify",
            unit: Unit::Flag,
            default: Some(if step.reader.common.verify { 1.0 } else { 0.0 }),
            min: 0.0,
            max: 1.0,
            multiple_of: None,
            help: "The reader checks every byte (slower: for correctness, not speed).",
        },
        ParamSpec {
            name: "quiet",
            label: "Quiet run",
            unit: Unit::Flag,
            default: Some(0.0),
            min: 0.0,
            max: 1.0,
            multiple_of: None,
            help: "No live progress, only the result: the observer costs nothing.",
        },
        ParamSpec {
            name: "profile",
            label: "Profile",
            unit: Unit::Flag,
            default: Some(0.0),
            min: 0.0,
            max: 1.0,
            multiple_of: None,
            help: "Record both ends with perf (call graphs): hottest functions, flame graphs, the article's profile beside them.",
        },
    ]
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
    #[error("{name} = {value} must be a multiple of 4096 bytes (whole pages)")]
    NotWholePages {
        /// Parameter name.
        name: &'static str,
        /// The value given, exactly.
        value: String,
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

fn check_size(name: &'static str, value: u64, min: u64, max: u64) -> Result<u64, PlanError> {
    if !(min..=max).contains(&value) {
        return Err(PlanError::OutOfRange {
            name,
            value: ByteSize(value).exact(),
            min: ByteSize(min).exact(),
            max: ByteSize(max).exact(),
        });
    }
    Ok(value)
}

fn check_pages(name: &'static str, value: u64) -> Result<u64, PlanError> {
    if !value.is_multiple_of(PAGE) {
        return Err(PlanError::NotWholePages {
            name,
            value: ByteSize(value).exact(),
        });
    }
    Ok(value)
}

impl RunPlan {
    /// Looks `step_id` up and applies `params` within `limits`.
    pub fn for_step_id(
        step_id: &str,
        params: &RunParams,
        limits: &Limits,
    ) -> Result<Self, PlanError> {
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
        let bytes = check_size(
            "bytes",
            params.bytes.unwrap_or(DEFAULT_RUN_BYTES).bytes(),
            1,
            limits.max_bytes,
        )?;
        let buf_size = params
            .buf_size
            .map_or(writer.common.buf_size.bytes(), |b| b.bytes());
        let buf_size = check_size(
            "buf_size",
            buf_size,
            limits.min_buf_size,
            limits.max_buf_size,
        )?;
        check_pages("buf_size", buf_size)?;
        writer.common.buf_size = ByteSize(buf_size);
        if let Some(pipe) = params.pipe_size {
            check_size("pipe_size", pipe.bytes(), PAGE, limits.max_pipe_size)?;
            check_pages("pipe_size", pipe.bytes())?;
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
        let time_budget = match params.seconds {
            None => None,
            Some(s) if s.is_finite() && s >= limits.min_seconds && s <= limits.max_seconds => {
                Some(Duration::from_secs_f64(s))
            }
            Some(s) => {
                return Err(PlanError::OutOfRange {
                    name: "seconds",
                    value: s.to_string(),
                    min: limits.min_seconds.to_string(),
                    max: limits.max_seconds.to_string(),
                })
            }
        };
        let (writer_cpu, reader_cpu) = choose_cpus(params, &mut warnings)?;
        for common in [&mut writer.common, &mut reader.common] {
            common.bytes = ByteSize(bytes);
            common.buf_size = ByteSize(buf_size);
            if let Some(verify) = params.verify {
                common.verify = verify || step.writer.common.verify;
            }
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

/// Picks two different CPUs: the requested ones, else the first two allowed.
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
    let writer = params.writer_cpu.unwrap_or(allowed[0]);
    let reader = params.reader_cpu.unwrap_or_else(|| {
        *allowed
            .iter()
            .find(|&&c| c != writer)
            .unwrap_or(&allowed[1])
    });
    if writer == reader {
        warnings.push(format!(
            "writer and reader are both pinned to CPU {writer}: they will take turns"
        ));
    }
    Ok((Some(writer), Some(reader)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_apply_params_within_bounds() {
        let params = RunParams {
            bytes: Some(ByteSize(64 * MIB)),
            buf_size: Some(ByteSize(512 * KIB)),
            seconds: Some(2.0),
            ..Default::default()
        };
        let plan = RunPlan::for_step_id("busy-loop", &params, &Limits::default()).unwrap();
        assert_eq!(plan.writer.common.bytes, ByteSize(64 * MIB));
        assert_eq!(plan.reader.common.bytes, ByteSize(64 * MIB));
        assert_eq!(plan.reader.common.buf_size, ByteSize(512 * KIB));
        // vmsplice: the pipe follows the chunk, half of it, as write.cpp forces.
        assert_eq!(plan.writer.pipe_size, Some(ByteSize(256 * KIB)));
        assert_eq!(plan.time_budget, Some(Duration::from_secs(2)));
        assert!(plan.writer.vmsplice && plan.writer.common.huge_pages && plan.reader.splice);
    }

    #[test]
    fn plans_refuse_unknown_steps_and_wild_params() {
        let limits = Limits::default();
        let unknown = RunPlan::for_step_id("rm-rf", &RunParams::default(), &limits).unwrap_err();
        assert!(unknown.to_string().contains("write-read"), "{unknown}");
        let too_big = RunParams {
            bytes: Some(ByteSize(1 << 50)),
            ..Default::default()
        };
        assert!(matches!(
            RunPlan::for_step_id("write-read", &too_big, &limits),
            Err(PlanError::OutOfRange { name: "bytes", .. })
        ));
        let odd_buf = RunParams {
            buf_size: Some(ByteSize(12345 * 4)),
            ..Default::default()
        };
        assert!(RunPlan::for_step_id("write-read", &odd_buf, &limits).is_err());
        let pipe = RunParams {
            pipe_size: Some(ByteSize(limits.max_pipe_size + 4096)),
            ..Default::default()
        };
        assert!(matches!(
            RunPlan::for_step_id("write-read", &pipe, &limits),
            Err(PlanError::OutOfRange {
                name: "pipe_size",
                ..
            })
        ));
        for seconds in [0.0, -1.0, f64::NAN, 1e9] {
            let params = RunParams {
                seconds: Some(seconds),
                ..Default::default()
            };
            assert!(
                RunPlan::for_step_id("write-read", &params, &limits).is_err(),
                "{seconds}"
            );
        }
    }

    #[test]
    fn refusals_quote_the_exact_value_sent() {
        let limits = Limits::default();
        let refuse = |buf: u64| {
            let params = RunParams {
                buf_size: Some(ByteSize(buf)),
                ..Default::default()
            };
            RunPlan::for_step_id("write-read", &params, &limits)
                .unwrap_err()
                .to_string()
        };
        let low = refuse(4095);
        assert!(low.contains("4095 bytes (3.999KiB)"), "{low}");
        let odd = refuse(4097);
        assert!(odd.contains("4097 bytes (4.001KiB)"), "{odd}");
        assert!(odd.contains("multiple of 4096"), "{odd}");
    }

    #[test]
    fn params_parse_sizes_as_numbers_or_strings_and_refuse_unknown_fields() {
        let params: RunParams =
            serde_json::from_str(r#"{"bytes":"1GiB","buf_size":262144}"#).unwrap();
        assert_eq!(params.bytes, Some(ByteSize(GIB)));
        assert_eq!(params.buf_size, Some(ByteSize(256 * KIB)));
        assert!(serde_json::from_str::<RunParams>(r#"{"bites":1}"#).is_err());
        assert!(serde_json::from_str::<RunParams>(r#"{"bytes":"lots"}"#).is_err());
    }

    #[test]
    fn argv_reproduces_the_plan() {
        let params = RunParams {
            bytes: Some(ByteSize(GIB)),
            pipe_size: Some(ByteSize(64 * KIB)),
            ..Default::default()
        };
        let plan = RunPlan::for_step_id("vmsplice-splice", &params, &Limits::default()).unwrap();
        let argv = plan.argv();
        assert_eq!(&argv[..3], ["pipebench", "run", "vmsplice-splice"]);
        let joined = argv.join(" ");
        assert!(joined.contains("--bytes 1GiB --buf-size 256KiB --pipe-size 64KiB"));
        let pipeline = plan.pipeline();
        assert!(
            pipeline.starts_with("pipebench write --vmsplice"),
            "{pipeline}"
        );
        assert!(pipeline.contains("| pipebench read --splice"), "{pipeline}");
    }

    #[test]
    fn every_param_has_one_spec_with_sane_bounds() {
        let limits = Limits::default();
        for step in catalog::catalog() {
            let specs = param_specs(&step, &limits);
            let names: Vec<_> = specs.iter().map(|s| s.name).collect();
            // The specs name exactly the fields RunParams accepts.
            let fields = serde_json::to_value(RunParams {
                bytes: Some(ByteSize(1)),
                buf_size: Some(ByteSize(1)),
                pipe_size: Some(ByteSize(1)),
                seconds: Some(1.0),
                writer_cpu: Some(0),
                reader_cpu: Some(0),
                verify: Some(true),
                quiet: Some(true),
                profile: Some(true),
            })
            .unwrap();
            let mut expected: Vec<_> = fields.as_object().unwrap().keys().cloned().collect();
            let mut got: Vec<_> = names.iter().map(|n| n.to_string()).collect();
            expected.sort();
            got.sort();
            assert_eq!(got, expected, "{}", step.id);
            for spec in &specs {
                assert!(spec.min <= spec.max, "{}: {}", step.id, spec.name);
                if let Some(default) = spec.default {
                    assert!(
                        (spec.min..=spec.max).contains(&default),
                        "{}: {} default {default} outside {}..{}",
                        step.id,
                        spec.name,
                        spec.min,
                        spec.max
                    );
                }
            }
        }
    }
}
