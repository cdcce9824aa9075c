//! The body of a run thread: start both ends of a pipe run, sample the pipe's
//! occupancy every 5 or 20 ms and progress every 50 ms; or watch for a cancel while
//! the lab's harness runs (an IPC run); or measure a wakeup. Whatever it ran is
//! dead and reaped before the thread ends.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{RecvTimeoutError, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pipebench::ipc::IpcError;
use pipebench::plan::RunPlan;
use pipebench::report::gib_per_s;
use pipebench::runner::{Progress, RunHandle};

use pipebench::inspect::{self, CHILD_TIMEOUT};
use pipebench::options::WriterOptions;
use pipebench::profile::{self, ProfileError, Session};

use super::{Job, PagesDone, RunEvent, RunFailure, Shared, WakeupReport, Work};
use crate::ipc::{IpcRecord, IpcRequest};
use crate::statefile::{SaveError, SaveErrorKind};

/// How often progress is sampled and sent: 20 a second.
pub(super) const SAMPLE_INTERVAL: Duration = Duration::from_millis(50);

/// How often a quiet run is looked at: only to enforce its budget and notice its
/// end, cancel and shutdown.
const QUIET_INTERVAL: Duration = Duration::from_millis(200);

/// Gets the calling thread out of the benchmark's way once the ends are spawned:
/// onto a CPU neither end is pinned to, where the machine has one, and down to the
/// weakest priority (nice 19), so that where every core runs an end the observer
/// yields instead of competing. Only this thread changes (Linux applies affinity and
/// PRIO_PROCESS with a thread id to that thread); the ends were started before and
/// keep theirs. A run thread ends with its run, so nothing has to be restored.
fn step_aside(ends: [Option<usize>; 2]) {
    let spare: Vec<usize> = pipebench::end::allowed_cpus()
        .into_iter()
        .filter(|cpu| !ends.contains(&Some(*cpu)))
        .collect();
    if !spare.is_empty() {
        let mut set = rustix::thread::CpuSet::new();
        for cpu in &spare {
            set.set(*cpu);
        }
        if let Err(err) = rustix::thread::sched_setaffinity(None, &set) {
            tracing::debug!("could not move the run thread to CPUs {spare:?}: {err}");
        }
    }
    // SAFETY: gettid and setpriority only read and change this thread's attributes.
    let result = unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, 19)
    };
    if result != 0 {
        tracing::debug!(
            "could not lower the run thread's priority: {}",
            std::io::Error::last_os_error()
        );
    }
}

/// Runs `job` to its end on the calling thread, then hands the machine to the next.
pub(super) fn run(shared: &Arc<Shared>, job: Job) {
    // Cancelled between leaving the queue and getting here?
    let last = match job.stop.try_recv() {
        Ok(()) => Some(RunEvent::Cancelled),
        Err(TryRecvError::Disconnected) => None,
        Err(TryRecvError::Empty) => match &job.work {
            Work::Pipe(plan) => execute(shared, &job, plan),
            Work::Ipc(request) => execute_ipc(shared, &job, request),
            Work::Wakeup => Some(measure_wakeup()),
            Work::Pages { step, writer } => Some(inspect(shared, step, writer)),
        },
    };
    // A profiled run was paused while perf attached and shares the CPUs with
    // it: its figure is not one for the history.
    let profiled = matches!(&job.work, Work::Pipe(plan) if plan.profile);
    let result = match &last {
        Some(RunEvent::Finished(result)) if !profiled => Some(Saved::Pipe(result.clone())),
        Some(RunEvent::IpcFinished(record)) => Some(Saved::Ipc(record.clone())),
        _ => None,
    };
    let not_kept = profiled && matches!(&last, Some(RunEvent::Finished(_)));
    // Free the machine before saying the run ended, so a page that hears its
    // result, `cancelled` or `error` finds the runner free and its next run
    // starts at once; shutdown still waits for the save.
    shared.finished_saving(job.id, result.is_some());
    if let Some(last) = last {
        job.send(last);
    }
    if not_kept {
        job.send(RunEvent::Saved(Err(SaveError {
            kind: SaveErrorKind::NotKept,
            message: "a profiled run is not kept in the history: its ends were paused while \
                      perf attached, so its figure is not a clean one"
                .into(),
        })));
    }
    // The page first: saving waits for a file lock and the disk. Then the
    // page hears whether it worked.
    if let Some(result) = result {
        let saved = match &result {
            Saved::Pipe(result) => shared.history.append(result),
            Saved::Ipc(record) => shared.history.append_ipc(record),
        };
        let outcome = saved.map_err(|err| {
            tracing::error!("could not save the result: {}", crate::error_chain(&err));
            SaveError::from_error("the result was not saved in the history", err.state())
        });
        job.send(RunEvent::Saved(outcome));
        shared.saved();
    }
}

/// A finished run's result, to append to the history.
enum Saved {
    Pipe(Box<pipebench::report::RunResult>),
    Ipc(Box<IpcRecord>),
}

/// Why an IPC run's watcher asked the harness to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Cancelled,
    PageGone,
    ShuttingDown,
}

/// Runs one mechanism of the IPC lab. The lab's harness blocks until its ends are
/// reaped, so it runs on a scoped thread (which lives until the harness returns,
/// as `PR_SET_PDEATHSIG` requires), while this thread watches for a cancel, a page
/// that went away, or the server stopping, and turns any of them into the
/// harness's cancel flag; the harness then kills its ends and removes every
/// resource before it returns.
fn execute_ipc(shared: &Shared, job: &Job, request: &IpcRequest) -> Option<RunEvent> {
    let cancel = Arc::new(AtomicBool::new(false));
    let received = Arc::new(AtomicU64::new(0));
    let params = request.params(&shared.program, Arc::clone(&cancel), Arc::clone(&received));
    tracing::info!(mechanism = %request.mechanism, bytes = request.bytes, "ipc run started");
    job.send(RunEvent::IpcStarted(Box::new(request.clone())));
    let (outcome, stop) = std::thread::scope(|scope| {
        let harness = std::thread::Builder::new()
            .name(format!("ipc-{}", job.id))
            .spawn_scoped(scope, || pipebench::ipc::run(&request.mechanism, &params));
        let harness = match harness {
            Ok(harness) => harness,
            Err(err) => {
                let failure = RunFailure::other(format!("cannot start the run's thread: {err}"));
                return (Err(failure), None);
            }
        };
        let mut stop = None;
        let started = Instant::now();
        let mut last = (started, 0u64);
        while !harness.is_finished() {
            let now = Instant::now();
            let bytes = received.load(Ordering::Relaxed);
            let window_ms = now.duration_since(last.0).as_secs_f64() * 1000.0;
            job.send(RunEvent::Progress(Progress {
                bytes,
                elapsed_ms: now.duration_since(started).as_secs_f64() * 1000.0,
                gib_per_s: gib_per_s(bytes.saturating_sub(last.1), window_ms),
                pipe_bytes: None,
            }));
            last = (now, bytes);
            stop = match job.stop.recv_timeout(SAMPLE_INTERVAL) {
                Ok(()) => Some(Stop::Cancelled),
                Err(RecvTimeoutError::Disconnected) => Some(Stop::PageGone),
                Err(RecvTimeoutError::Timeout) if shared.shutdown.is_triggered() => {
                    Some(Stop::ShuttingDown)
                }
                Err(RecvTimeoutError::Timeout) => None,
            };
            if stop.is_some() {
                cancel.store(true, Ordering::Relaxed);
                break;
            }
        }
        let outcome = harness
            .join()
            .map_err(|_| RunFailure::other("the IPC run's thread panicked"));
        (outcome, stop)
    });
    match (outcome, stop) {
        (Err(failure), _) => Some(RunEvent::Failed(failure)),
        (Ok(Ok(result)), _) => {
            tracing::info!(mechanism = %result.mechanism, mib_per_s = result.mib_per_s, "ipc run finished");
            Some(RunEvent::IpcFinished(Box::new(IpcRecord::now(result))))
        }
        (Ok(Err(IpcError::Cancelled)), Some(Stop::PageGone)) => {
            tracing::info!(mechanism = %request.mechanism, "ipc run stopped: the page went away");
            None
        }
        (Ok(Err(IpcError::Cancelled)), Some(Stop::ShuttingDown)) => Some(RunEvent::Failed(
            RunFailure::other("the server is shutting down"),
        )),
        (Ok(Err(IpcError::Cancelled)), _) => {
            tracing::info!(mechanism = %request.mechanism, "ipc run cancelled");
            Some(RunEvent::Cancelled)
        }
        (Ok(Err(err)), _) => {
            tracing::warn!(mechanism = %request.mechanism, "ipc run failed: {err}");
            Some(RunEvent::Failed(RunFailure::from(&err)))
        }
    }
}

/// The page inspector as a child (`end inspect-pages`): its buffers live and die
/// in their own process, as the writer's do. It takes well under a second, so
/// the thread simply waits for it (a cancel arriving meanwhile finds the job done).
fn inspect(shared: &Shared, step: &str, writer: &WriterOptions) -> RunEvent {
    match inspect::run_child(&shared.program, writer, CHILD_TIMEOUT) {
        Ok(report) => RunEvent::Pages(Box::new(PagesDone {
            step: step.to_string(),
            touch: !writer.dont_touch_pages,
            report: Box::new(report),
        })),
        Err(err) => {
            tracing::warn!(step, "page inspection failed: {err}");
            RunEvent::Failed(RunFailure::other(err.to_string()))
        }
    }
}

/// Runs a pipe step (profiled, if asked); returns the event that ends it, if it is
/// still to be sent.
fn execute(shared: &Shared, job: &Job, plan: &RunPlan) -> Option<RunEvent> {
    // A machine that cannot profile still runs the step; the page hears why.
    let setup = plan.profile.then(|| {
        profile::probe(&profile::perf_program(), profile::DEFAULT_FREQUENCY).map_err(|err| {
            job.send(RunEvent::Profile(Box::new(Err(err))));
        })
    });
    // A quiet run has no observer to speak of, so its pipe is not watched either.
    let ends = [plan.writer.common.cpu, plan.reader.common.cpu];
    let started = match plan.quiet {
        true => RunHandle::start(plan, &shared.program),
        false => RunHandle::start_watched(
            plan,
            &shared.program,
            pipebench::occupancy::interval_for(ends),
        ),
    };
    let mut handle = match started {
        Ok(handle) => handle,
        Err(err) => return Some(RunEvent::Failed(RunFailure::from(&err))),
    };
    let profile_dir = std::env::temp_dir().join(format!(
        "pipebook-profile-{}-{}",
        std::process::id(),
        job.id
    ));
    let mut session = match setup {
        Some(Ok(setup)) => {
            let attached = std::fs::create_dir_all(&profile_dir)
                .map_err(|e| ProfileError::Failed {
                    stage: "record",
                    message: format!("cannot create {}: {e}", profile_dir.display()),
                })
                .and_then(|()| Session::attach(setup, handle.pids(), &profile_dir));
            match attached {
                Ok(session) => Some(session),
                Err(err) => {
                    job.send(RunEvent::Profile(Box::new(Err(err))));
                    None
                }
            }
        }
        _ => None,
    };
    let end = watch(shared, job, plan, &mut handle);
    if let Some(session) = session.take() {
        if matches!(end, Some(RunEvent::Finished(_))) {
            let report = session.finish(&plan.step);
            if let Ok(report) = &report {
                tracing::info!(step = %plan.step, processing_ms = report.processing_ms, "profile ready");
            }
            job.send(RunEvent::Profile(Box::new(report)));
        } else {
            session.abandon();
        }
    }
    let _ = std::fs::remove_dir_all(&profile_dir);
    end
}

/// Samples the started run until it ends; returns the event that ends it.
fn watch(
    shared: &Shared,
    job: &Job,
    plan: &pipebench::plan::RunPlan,
    handle: &mut RunHandle,
) -> Option<RunEvent> {
    step_aside([plan.writer.common.cpu, plan.reader.common.cpu]);
    let (interval, live) = match plan.quiet {
        true => (QUIET_INTERVAL, false),
        false => (SAMPLE_INTERVAL, true),
    };
    let tick = handle.watch_interval().unwrap_or(interval);
    // None until the first sample, which goes out at once: the page's first
    // progress should not wait a whole interval.
    let mut last_progress: Option<Instant> = None;
    let (writer, reader) = handle.pids();
    tracing::info!(step = %plan.step, writer, reader, "run started");
    job.send(RunEvent::Started {
        plan: Box::new(plan.clone()),
        pids: [writer, reader],
    });
    loop {
        handle.sample_occupancy();
        match handle.poll() {
            Ok(Some(result)) => {
                // A last sample, so even a run shorter than one interval shows progress.
                if live {
                    job.send(RunEvent::Progress(handle.progress()));
                }
                tracing::info!(step = %result.step, gib_per_s = result.gib_per_s, bytes = result.bytes, "run finished");
                return Some(RunEvent::Finished(Box::new(result)));
            }
            Ok(None) if live && last_progress.is_none_or(|at| at.elapsed() >= interval) => {
                job.send(RunEvent::Progress(handle.progress()));
                last_progress = Some(Instant::now());
            }
            Ok(None) => {}
            Err(err) => {
                tracing::warn!(step = %plan.step, "run failed: {err}");
                return Some(RunEvent::Failed(RunFailure::from(&err)));
            }
        }
        match job.stop.recv_timeout(tick) {
            Ok(()) => {
                handle.kill();
                tracing::info!(step = %plan.step, "run cancelled");
                return Some(RunEvent::Cancelled);
            }
            Err(RecvTimeoutError::Disconnected) => {
                handle.kill();
                tracing::info!(step = %plan.step, "run stopped: the page went away");
                return None;
            }
            Err(RecvTimeoutError::Timeout) if shared.shutdown.is_triggered() => {
                handle.kill();
                return Some(RunEvent::Failed(RunFailure::other(
                    "the server is shutting down",
                )));
            }
            Err(RecvTimeoutError::Timeout) => {}
        }
    }
}

/// The wakeup ping-pong on this thread (it has the machine to itself), and the
/// machine's findings with its figures. A probe takes a second or two and is not
/// cancellable midway; each mode stops by itself within its time limit.
fn measure_wakeup() -> RunEvent {
    match pipebench::wakeup::measure(None, pipebench::wakeup::DEFAULT_ROUND_TRIPS) {
        Ok(wakeup) => {
            let info = pipebench::system::SystemInfo::probe();
            let findings = pipebench::findings::findings(&info, Some(&wakeup));
            tracing::info!(
                blocking_us = wakeup.blocking_us,
                busy_us = wakeup.busy_us,
                "wakeup measured"
            );
            RunEvent::Measured(Box::new(WakeupReport { wakeup, findings }))
        }
        Err(err) => RunEvent::Failed(RunFailure::other(err.to_string())),
    }
}
