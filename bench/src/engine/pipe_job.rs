//! A pipe step as a job: its two ends started by [`crate::engine::pipe_run`],
//! watched (progress, occupancy) or left quiet, profiled with perf when asked,
//! until they end or the observer says stop. Jobs of pipe jobs (a sweep, a
//! comparison, a tuning search) run each of theirs through [`PipeJob::run`].

use crate::engine::event::{Event, Failure, FailureReason, Finished, ProfileOutcome, Started};
use crate::engine::observer::{JobContext, Observer, PROGRESS_INTERVAL, QUIET_INTERVAL};
use crate::engine::occupancy;
use crate::engine::pipe_run::{RunError, RunHandle};
use crate::process::rundir::{Base, RunDir};
use crate::profile::{self, ProfileError, Session};
use crate::steps::plan::RunPlan;
use std::time::Instant;

/// A pipe step and how it is observed.
#[derive(Debug, Clone)]
pub struct PipeJob {
    /// The validated run (profiled with perf when `plan.profile`).
    pub plan: RunPlan,
    /// Sample the pipe's occupancy over the run (the result gains `occupancy`
    /// and says `watched`).
    pub occupancy: bool,
    /// Send `progress` events (a quiet run sends none and is looked at rarely).
    pub progress: bool,
}

impl PipeJob {
    /// Runs the step to its end on this thread (its ends die with the thread);
    /// returns the final event, or `None` when the observer went away.
    pub fn run(&self, context: &JobContext, observer: &mut dyn Observer) -> Option<Event> {
        run_pipe(self, context, observer)
    }
}

impl From<&RunError> for Failure {
    fn from(err: &RunError) -> Self {
        Failure {
            message: err.to_string(),
            reason: err.end_failure().map(|(role, failure)| FailureReason::End {
                role,
                kind: failure.kind,
            }),
        }
    }
}

/// Gets the calling thread out of the benchmark's way once the ends are spawned:
/// onto a CPU neither end is pinned to, where the machine has one, and down to the
/// weakest priority (nice 19), so that where every core runs an end the observer
/// yields instead of competing. Only this thread changes (Linux applies affinity and
/// PRIO_PROCESS with a thread id to that thread); the ends were started before and
/// keep theirs.
fn step_aside(ends: [Option<usize>; 2]) {
    let spare: Vec<usize> = crate::process::cpu::allowed_cpus()
        .into_iter()
        .filter(|cpu| !ends.contains(&Some(*cpu)))
        .collect();
    if !spare.is_empty() {
        let mut set = rustix::thread::CpuSet::new();
        for cpu in &spare {
            set.set(*cpu);
        }
        // Best effort: a thread that stays where it is only observes less politely.
        let _ = rustix::thread::sched_setaffinity(None, &set);
    }
    // SAFETY: gettid and setpriority only read and change this thread's attributes.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, 19);
    }
}

/// Undoes [`step_aside`] when the thread goes on to other work (the CLI's main
/// thread runs job after job): every allowed CPU again. The priority stays: an
/// unprivileged thread cannot raise it back, and nothing after a job needs it.
struct SteppedAside(rustix::thread::CpuSet);

impl SteppedAside {
    fn now(ends: [Option<usize>; 2]) -> Self {
        let before = rustix::thread::sched_getaffinity(None)
            .unwrap_or_else(|_| rustix::thread::CpuSet::new());
        step_aside(ends);
        SteppedAside(before)
    }
}

impl Drop for SteppedAside {
    fn drop(&mut self) {
        let _ = rustix::thread::sched_setaffinity(None, &self.0);
    }
}

/// A pipe step, profiled if its plan says so.
fn run_pipe(job: &PipeJob, context: &JobContext, observer: &mut dyn Observer) -> Option<Event> {
    let plan = &job.plan;
    // A machine that cannot profile still runs the step; the observer hears why.
    let setup = plan.profile.then(|| {
        profile::probe(&profile::perf_program(), profile::DEFAULT_FREQUENCY).map_err(|err| {
            observer.event(Event::Profile(ProfileOutcome::from(Err(err))));
        })
    });
    let ends = [plan.writer.common.cpu, plan.reader.common.cpu];
    let started = match job.occupancy {
        true => RunHandle::start_watched(plan, &context.program, occupancy::interval_for(ends)),
        false => RunHandle::start(plan, &context.program),
    };
    let mut handle = match started {
        Ok(handle) => handle,
        Err(err) => return Some(Event::Error(Failure::from(&err))),
    };
    // The perf data goes where the caller said, or into a private folder of this
    // run's own (random name, 0700, locked while the run lives), removed when the
    // run ends; one a killed runner leaves is swept at the next start.
    let mut private: Option<RunDir> = None;
    let mut session = match setup {
        Some(Ok(setup)) => {
            let dir = match &context.profile_dir {
                Some(dir) => std::fs::create_dir_all(dir)
                    .map(|()| dir.clone())
                    .map_err(|e| format!("cannot create {}: {e}", dir.display())),
                None => Base::runtime()
                    .and_then(|base| RunDir::create(&base))
                    .map(|made| {
                        let path = made.path().to_path_buf();
                        private = Some(made);
                        path
                    })
                    .map_err(|e| e.to_string()),
            };
            // Attached right after the start, so the set-up before the first byte
            // is mostly missed and the hot loop dominates the samples.
            let attached = dir
                .map_err(|message| ProfileError::Failed {
                    stage: "record",
                    message,
                })
                .and_then(|dir| Session::attach(setup, handle.pids(), &dir));
            match attached {
                Ok(session) => Some(session),
                Err(err) => {
                    observer.event(Event::Profile(ProfileOutcome::from(Err(err))));
                    None
                }
            }
        }
        _ => None,
    };
    let end = watch(job, &mut handle, observer);
    if let Some(session) = session.take() {
        if matches!(end, Some(Event::Result(_))) {
            let report = session.finish(&plan.step);
            observer.event(Event::Profile(ProfileOutcome::from(report)));
        } else {
            session.abandon();
        }
    }
    // perf has exited (finished or abandoned): its folder can go.
    drop(private);
    end
}

/// Samples a started pipe run until it ends; returns the event that ends it.
fn watch(job: &PipeJob, handle: &mut RunHandle, observer: &mut dyn Observer) -> Option<Event> {
    let plan = &job.plan;
    let _aside = SteppedAside::now([plan.writer.common.cpu, plan.reader.common.cpu]);
    let interval = match job.progress {
        true => PROGRESS_INTERVAL,
        false => QUIET_INTERVAL,
    };
    let tick = handle.watch_interval().unwrap_or(interval);
    // None until the first sample, which goes out at once: the first progress
    // should not wait a whole interval.
    let mut last_progress: Option<Instant> = None;
    let (writer, reader) = handle.pids();
    observer.event(Event::Started(Started::pipe(plan, [writer, reader])));
    loop {
        handle.sample_occupancy();
        match handle.poll() {
            Ok(Some(result)) => {
                // A last sample, so even a run shorter than one interval shows progress.
                if job.progress {
                    observer.event(Event::Progress(handle.progress()));
                }
                return Some(Event::Result(Finished::Pipe(Box::new(result))));
            }
            Ok(None) if job.progress && last_progress.is_none_or(|at| at.elapsed() >= interval) => {
                observer.event(Event::Progress(handle.progress()));
                last_progress = Some(Instant::now());
            }
            Ok(None) => {}
            Err(err) => return Some(Event::Error(Failure::from(&err))),
        }
        if let Some(stop) = observer.wait(tick) {
            handle.kill();
            return stop.final_event();
        }
    }
}
