//! The harness: run one step as two processes joined by a pipe.
//!
//! A [`RunPlan`] (see [`crate::steps::plan`]) holds validated options for both ends;
//! [`RunHandle::start`] spawns them (each pinned to its own
//! CPU), and the owner calls [`RunHandle::poll`] on its own clock: every call
//! samples progress from shared memory, enforces the time budget and the hard
//! timeout, and reaps the children. Dropping a handle kills whatever is still
//! running, so no child outlives its run.
//!
//! The children are started with `PR_SET_PDEATHSIG`, which fires when the *thread*
//! that spawned them exits: start and poll a run from one thread that lives at
//! least as long as the run (the CLI's main thread, or one thread per run).

use std::ffi::OsString;
use std::process::Stdio;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rustix::pipe::{pipe_with, PipeFlags};

use crate::ends::control::{ControlError, ControlRegion};
use crate::ends::error::{EndErrorKind, EndFailure};
use crate::ends::report::{EndOutcome, EndReport};
use crate::engine::counts::{model, Counts, ModelInput};
use crate::engine::event::Progress;
use crate::engine::occupancy::{Alternation, Occupancy, PipeWatch};
use crate::engine::result::{EndSummary, RunOptions, RunResult};
use crate::machine::state::StateProbe;
use crate::process::launch::{Child, EndProgram, Launch, CONTROL_FD, REPORT_FD};
use crate::size::gib_per_s;
use crate::steps::plan::{RunPlan, MIN_RELIABLE_MS};

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The harness could not set up or spawn.
    #[error("could not start the run: {0}")]
    Setup(String),
    /// One end exited with an error.
    #[error("the {role} failed ({status}): {}", .failure.message)]
    EndFailed {
        /// `writer` or `reader`.
        role: &'static str,
        /// Its exit status.
        status: String,
        /// Why, as the end reported it (typed), or `killed` without a report.
        failure: EndFailure,
    },
    /// The run exceeded its hard timeout and was killed.
    #[error("the run took longer than {0:?} and was stopped")]
    Timeout(Duration),
    /// The run was cancelled by its owner.
    #[error("the run was cancelled")]
    Cancelled,
}

impl RunError {
    /// Whether this error only echoes the other end's failure.
    fn is_symptom(&self) -> bool {
        matches!(self, RunError::EndFailed { failure, .. } if failure.kind.is_echo())
    }

    /// The failing end and its kind of failure, for callers that explain it.
    pub fn end_failure(&self) -> Option<(&'static str, &EndFailure)> {
        match self {
            RunError::EndFailed { role, failure, .. } => Some((role, failure)),
            _ => None,
        }
    }
}

impl From<ControlError> for RunError {
    fn from(e: ControlError) -> Self {
        RunError::Setup(e.to_string())
    }
}

/// One end's process, and which end it is.
#[derive(Debug)]
struct EndProcess {
    role: &'static str,
    child: Child,
}

/// A run in progress. Dropping it kills both ends.
#[derive(Debug)]
pub struct RunHandle {
    plan: RunPlan,
    control: ControlRegion,
    writer: EndProcess,
    reader: EndProcess,
    started: Instant,
    last_sample: (Instant, u64),
    finished: bool,
    /// The pipe's occupancy, for runs started with [`RunHandle::start_watched`].
    watch: Option<PipeWatch>,
    /// Where the sampler goes between samples when the ends take every CPU.
    alternation: Option<Alternation>,
    /// The ends' CPUs' counters at the start, for the result's `machine`.
    machine: StateProbe,
}

fn spawn_end(
    program: &EndProgram,
    role: &'static str,
    args: Vec<OsString>,
    stdin: Stdio,
    stdout: Stdio,
    control: &ControlRegion,
) -> Result<EndProcess, RunError> {
    let control = control
        .fd()
        .ok_or_else(|| RunError::Setup("control region has no fd".into()))?;
    let subcommand = if role == "writer" { "write" } else { "read" };
    let child = Launch::new(role, program, subcommand, args)
        .stdin(stdin)
        .stdout(stdout)
        .control(control)
        .spawn()
        .map_err(|e| RunError::Setup(e.to_string()))?;
    Ok(EndProcess { role, child })
}

impl RunHandle {
    /// Spawns both ends of `plan` with `program`.
    pub fn start(plan: &RunPlan, program: &EndProgram) -> Result<RunHandle, RunError> {
        Self::spawn(plan, program, None)
    }

    /// Spawns both ends like [`RunHandle::start`] and watches the pipe: the owner
    /// calls [`RunHandle::sample_occupancy`] about every `interval` and the result
    /// carries the `occupancy` series.
    pub fn start_watched(
        plan: &RunPlan,
        program: &EndProgram,
        interval: Duration,
    ) -> Result<RunHandle, RunError> {
        Self::spawn(plan, program, Some(interval))
    }

    fn spawn(
        plan: &RunPlan,
        program: &EndProgram,
        watch_interval: Option<Duration>,
    ) -> Result<RunHandle, RunError> {
        let control = ControlRegion::create()?;
        let pinned: Vec<usize> = [plan.writer.common.cpu, plan.reader.common.cpu]
            .into_iter()
            .flatten()
            .collect();
        let machine = StateProbe::begin(&pinned);
        let (data_read, data_write) =
            pipe_with(PipeFlags::CLOEXEC).map_err(|e| RunError::Setup(format!("pipe: {e}")))?;
        // A duplicate of the read end, taken before the reader owns it.
        let mut watch = watch_interval
            .map(|i| PipeWatch::new(&data_read, i.as_secs_f64() * 1000.0))
            .transpose()
            .map_err(|e| RunError::Setup(e.to_string()))?;
        let mut writer_options = plan.writer.clone();
        writer_options.common.control_fd = Some(CONTROL_FD);
        writer_options.common.report_fd = Some(REPORT_FD);
        let mut reader_options = plan.reader.clone();
        reader_options.common.control_fd = Some(CONTROL_FD);
        reader_options.common.report_fd = Some(REPORT_FD);
        reader_options.json = false;
        // Reader first, so the writer never sees a pipe without a reader.
        let reader = spawn_end(
            program,
            "reader",
            reader_options.to_args(),
            Stdio::from(data_read),
            Stdio::null(),
            &control,
        )?;
        let writer = spawn_end(
            program,
            "writer",
            writer_options.to_args(),
            Stdio::null(),
            Stdio::from(data_write),
            &control,
        );
        // On an error, dropping the reader kills and reaps it.
        let writer = writer?;
        if let Some(watch) = &mut watch {
            watch.set_ends(writer.child.pid(), reader.child.pid());
        }
        let now = Instant::now();
        let alternation = watch
            .as_ref()
            .and_then(|_| Alternation::for_ends([plan.writer.common.cpu, plan.reader.common.cpu]));
        Ok(RunHandle {
            plan: plan.clone(),
            control,
            writer,
            reader,
            started: now,
            last_sample: (now, 0),
            finished: false,
            watch,
            alternation,
            machine,
        })
    }

    /// The plan this run follows.
    pub fn plan(&self) -> &RunPlan {
        &self.plan
    }

    /// Process ids of the writer and the reader.
    pub fn pids(&self) -> (u32, u32) {
        (self.writer.child.pid(), self.reader.child.pid())
    }

    /// Samples progress; the rate is measured since the previous sample.
    pub fn progress(&mut self) -> Progress {
        let now = Instant::now();
        let bytes = self.control.shared().reader_bytes.load(Ordering::Relaxed);
        let (then, then_bytes) = self.last_sample;
        let window_ms = now.duration_since(then).as_secs_f64() * 1000.0;
        self.last_sample = (now, bytes);
        Progress {
            bytes,
            elapsed_ms: now.duration_since(self.started).as_secs_f64() * 1000.0,
            gib_per_s: gib_per_s(bytes.saturating_sub(then_bytes), window_ms),
            pipe_bytes: self.watch.as_ref().and_then(PipeWatch::latest),
        }
    }

    /// Takes one occupancy sample (FIONREAD, and every few calls each end's sleeps);
    /// does nothing for a run that is not watched or no longer has the pipe.
    pub(crate) fn sample_occupancy(&mut self) {
        if let Some(watch) = &mut self.watch {
            let moved = self.control.shared().reader_bytes.load(Ordering::Relaxed) > 0;
            watch.sample(self.started.elapsed().as_secs_f64() * 1000.0, moved);
            if let Some(alternation) = &mut self.alternation {
                alternation.step();
            }
        }
    }

    /// How often a watched run's pipe is sampled (`None` if it is not watched).
    pub(crate) fn watch_interval(&self) -> Option<Duration> {
        self.watch.as_ref().map(PipeWatch::interval)
    }

    /// Lets go of the harness's duplicate of the pipe, so that a writer blocked on a
    /// full pipe sees EPIPE once the reader is gone, exactly as it would unwatched.
    fn release_pipe(&mut self) {
        if let Some(watch) = &mut self.watch {
            watch.close();
        }
    }

    /// Advances the run: enforces the budget and timeout, reaps exited ends.
    /// Returns the result once both ends are done.
    pub fn poll(&mut self) -> Result<Option<RunResult>, RunError> {
        let elapsed = self.started.elapsed();
        if let Some(budget) = self.plan.time_budget {
            if elapsed >= budget {
                self.control.shared().request_stop();
                // The reader stops now; the writer must then see EPIPE, not us.
                self.release_pipe();
            }
        }
        if elapsed >= self.plan.hard_timeout {
            self.kill();
            return Err(RunError::Timeout(self.plan.hard_timeout));
        }
        for end in [&mut self.writer, &mut self.reader] {
            end.child
                .try_wait()
                .map_err(|e| RunError::Setup(format!("wait: {e}")))?;
        }
        if self.reader.child.status().is_some() {
            self.release_pipe();
        }
        // One end failing means the other can only fail or hang: stop it now.
        let failed = [&self.writer, &self.reader]
            .iter()
            .any(|end| end.child.status().is_some_and(|s| !s.success()));
        if failed {
            self.kill();
        } else if self.writer.child.status().is_none() || self.reader.child.status().is_none() {
            return Ok(None);
        }
        self.finished = true;
        self.collect().map(Some)
    }

    /// Blocks until the run is done, calling `on_progress` every `interval`; a
    /// watched run is also sampled at its own, shorter interval in between.
    pub fn wait_with(
        &mut self,
        interval: Duration,
        mut on_progress: impl FnMut(Progress),
    ) -> Result<RunResult, RunError> {
        let tick = match &self.watch {
            Some(watch) => watch.interval().min(interval),
            None => interval,
        };
        let mut last_progress = Instant::now();
        loop {
            self.sample_occupancy();
            if let Some(result) = self.poll()? {
                return Ok(result);
            }
            if last_progress.elapsed() >= interval {
                on_progress(self.progress());
                last_progress = Instant::now();
            }
            std::thread::sleep(tick);
        }
    }

    /// Kills both ends and reaps them.
    pub fn kill(&mut self) {
        self.release_pipe();
        self.writer.child.kill();
        self.reader.child.kill();
        self.finished = true;
    }

    /// Reads reports and stderr of both ends and builds the result.
    fn collect(&mut self) -> Result<RunResult, RunError> {
        let writer = read_end(&mut self.writer);
        let reader = read_end(&mut self.reader);
        let (writer, reader) = match (writer, reader) {
            (Ok(w), Ok(r)) => (w, r),
            (Err(e), Ok(_)) | (Ok(_), Err(e)) => return Err(e),
            // When both failed, one end's error is the cause and the other's the
            // echo of it: a reader that stops on corrupt data makes the writer see
            // a closed pipe; a writer that fails makes the reader see an early EOF.
            (Err(w), Err(r)) => return Err(if r.is_symptom() { w } else { r }),
        };
        let bytes = reader.bytes;
        let mut warnings = self.plan.warnings.clone();
        if reader.elapsed_ms < MIN_RELIABLE_MS {
            warnings.push(format!(
                "this run lasted {:.0} ms, under {MIN_RELIABLE_MS:.0} ms: start-up and scheduling \
                 noise weigh heavily in so short a run; give it more bytes or seconds",
                reader.elapsed_ms
            ));
        }
        if self.plan.writer.common.trace_syscalls {
            warnings.push(
                "traced: the kernel's events were counted, and their tracepoints slowed this \
                 run (about a tenth for a copying step); compare its figure only with other \
                 traced runs"
                    .into(),
            );
        }
        let ends_cpu_ms = [&writer, &reader]
            .iter()
            .map(|end| {
                let usage = EndSummary::from(*end);
                usage.user_ms + usage.system_ms
            })
            .sum();
        let machine = self.machine.finish(ends_cpu_ms);
        warnings.extend(machine.warning());
        let mut counts = Counts::of([
            ("writer", writer.counts.as_ref()),
            ("reader", reader.counts.as_ref()),
        ]);
        if let Some(counts) = &mut counts {
            if self.plan.writer.common.huge_pages {
                // The THP tracepoints are the to count, but none fires
                // in an end: said once, with where to look instead.
                counts
                    .missing
                    .push(crate::process::counts::thp_not_per_end());
            }
            let (page_size, huge_page_size) = ModelInput::machine_pages();
            counts.model = model(
                ModelInput {
                    writer: &self.plan.writer,
                    reader: &self.plan.reader,
                    bytes,
                    pipe_capacity: writer.pipe_capacity,
                    page_size,
                    huge_page_size,
                },
                counts,
            );
        }
        Ok(RunResult {
            step: self.plan.step.clone(),
            options: RunOptions {
                writer: self.plan.writer.clone(),
                reader: self.plan.reader.clone(),
            },
            bytes,
            elapsed_ms: reader.elapsed_ms,
            gib_per_s: gib_per_s(bytes, reader.elapsed_ms),
            iterations: writer.iterations,
            bytes_per_call: self.plan.writer.common.buf_size.bytes(),
            pipe_capacity: writer.pipe_capacity,
            page_size: Some(ModelInput::machine_pages().0),
            stopped_by_budget: reader.stopped_by_budget || writer.stopped_by_budget,
            writer: EndSummary::from(&writer),
            reader: EndSummary::from(&reader),
            huge_pages: writer.huge_pages.clone(),
            corrupted_bytes: reader.corrupted_bytes,
            argv: self.plan.argv(),
            pipeline: self.plan.pipeline(),
            warnings,
            occupancy: self
                .watch
                .as_mut()
                .and_then(PipeWatch::finish)
                .map(|occupancy| Occupancy {
                    alternating: self.alternation.is_some(),
                    ..occupancy
                }),
            finished_at_ms: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
            counts,
            machine: Some(machine),
            watched: Some(self.watch.is_some()),
            traced: self.plan.writer.common.trace_syscalls,
        })
    }
}

fn read_end(end: &mut EndProcess) -> Result<EndReport, RunError> {
    let exited_well = end.child.status().is_some_and(|s| s.success());
    let failed = |status: String, failure: EndFailure| RunError::EndFailed {
        role: end.role,
        status,
        failure,
    };
    match end.child.outcome::<EndOutcome>() {
        Ok(EndOutcome::Done { report }) if exited_well => Ok(*report),
        Ok(EndOutcome::Failed { error }) => Err(failed(end.child.describe_status(), error)),
        // A report, but a failed exit: trust the exit.
        Ok(EndOutcome::Done { .. }) => Err(failed(
            end.child.describe_status(),
            EndFailure {
                kind: EndErrorKind::Killed,
                message: "it reported, then exited with a failure".into(),
            },
        )),
        // No outcome: the end died before it could say why (a signal, a crash).
        // Its stderr (a panic message, say) is all there is to show.
        Err(silent) => Err(failed(
            silent.status,
            EndFailure {
                kind: EndErrorKind::Killed,
                message: silent.stderr,
            },
        )),
    }
}

impl Drop for RunHandle {
    fn drop(&mut self) {
        if !self.finished
            || self.writer.child.status().is_none()
            || self.reader.child.status().is_none()
        {
            self.kill();
        }
    }
}
