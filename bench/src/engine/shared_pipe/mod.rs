//! Many writers and many readers on one pipe (`pipebench shared-pipe`): W
//! writer processes and R reader processes share one pipe, and every message
//! is tagged so the readers can tell whether a writer's message arrived whole.
//!
//! POSIX makes a write of at most `PIPE_BUF` (4096 bytes on Linux) atomic: its
//! bytes are never interleaved with another writer's. Above that, a writer that
//! finds the pipe full sleeps with part of its message written, and another
//! writer's bytes can go in between. Each 8-byte word of a message carries its
//! writer, the message's number and the word's place in it
//! ([`crate::ends::shared_tag::word`]), so a
//! reader sees, inside every read, where one message stops and another starts.
//! A message is *torn* when a read shows another message's words between two
//! of its own, or shows it starting in the middle; readers read one message's
//! size per call, so at and below `PIPE_BUF` each read must be one whole
//! message and `torn_messages` must be 0.
//!
//! Every end is a child of this process started through the one launcher
//! (`pipebench shared-end SPEC`, [`crate::ends::shared_end`]), and answers with one outcome line, with what
//! the kernel did for it over its loop (`process::counts`: context switches
//! always, the wakeups it issued where the machine permits). A point's counts
//! are its writers' summed and its readers' summed.
//!
//! Profiled (`profile`, `--profile`), every end stops itself before its loop;
//! once all have, perf attaches to the writers as one recording and to the
//! readers as another (`profile::Session::attach_groups`), then lets them go,
//! and the point's `profile` event (the same report and flame graphs as a
//! step's) comes just before its `shared_point`.

pub mod report;

pub use report::{SharedPipeResult, SharedPoint, SharedStarted};

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use crate::ends::shared_end::{EndAnswer, EndSpec};
use crate::engine::counts::Counts;
use crate::engine::event::{Event, Failure, Finished, ProfileOutcome, Progress};
use crate::engine::observer::{JobContext, Observer, Stop, PROGRESS_INTERVAL};
use crate::process::counts::{merge, Counted, EndCounts};
use crate::process::launch::{Child, Launch, LaunchError};
use crate::process::rundir::{Base, RunDir};
use crate::profile::{self, ProfileError, Session, Setup};
use crate::size::{gib_per_s, ByteSize};

/// `PIPE_BUF` on Linux: writes up to this size are atomic.
pub const PIPE_BUF: u64 = 4096;
/// The most ends of either kind.
pub(crate) const MAX_ENDS: usize = 16;
/// The least and most bytes per message.
pub const MSG_BOUNDS: (u64, u64) = (64, 1 << 20);
/// Bytes a point moves unless told.
pub const DEFAULT_BYTES: u64 = 64 << 20;
/// The most bytes a point moves.
pub const MAX_BYTES: u64 = 1 << 30;
/// Most values in each of the writers, readers and message-size lists: the
/// points are every combination, so long lists would make a job no run-time
/// bound could let finish (and an error quoting them a page long).
pub const MAX_VALUES: usize = 8;
/// Most points (writers x readers x sizes) one sweep runs.
pub const MAX_POINTS: usize = 64;
/// The pipe's capacity: the kernel's default, a shell's pipe.
const PIPE_CAPACITY: usize = 64 << 10;

/// A checked sweep over writers × readers × message sizes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedPipeJob {
    /// Writer counts.
    pub writers: Vec<usize>,
    /// Reader counts.
    pub readers: Vec<usize>,
    /// Message sizes, bytes.
    pub msg_sizes: Vec<u64>,
    /// Bytes each point moves (split evenly between its writers).
    pub bytes: u64,
    /// Kill a point after this long.
    pub timeout: Duration,
    /// Record every point's writers and readers with perf (a `profile` event
    /// before each `shared_point`); their figures are then not clean ones.
    pub profile: bool,
}

/// A request that cannot be run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SharedPipeError {
    /// A count or a size out of bounds.
    #[error("{flag} {value} is out of range: {bounds}")]
    OutOfRange {
        /// The flag.
        flag: &'static str,
        /// The value given.
        value: String,
        /// What is allowed.
        bounds: String,
    },
}

impl SharedPipeJob {
    /// Checks the counts and sizes.
    pub fn check(&self) -> Result<(), SharedPipeError> {
        for (flag, len) in [
            ("--writers", self.writers.len()),
            ("--readers", self.readers.len()),
            ("--msg-size", self.msg_sizes.len()),
        ] {
            if len > MAX_VALUES {
                return Err(SharedPipeError::OutOfRange {
                    flag,
                    value: format!("{len} values"),
                    bounds: format!("at most {MAX_VALUES} values"),
                });
            }
        }
        let points = self.writers.len() * self.readers.len() * self.msg_sizes.len();
        if points > MAX_POINTS {
            return Err(SharedPipeError::OutOfRange {
                flag: "--writers x --readers x --msg-size",
                value: format!("{points} points"),
                bounds: format!("at most {MAX_POINTS} points in one sweep"),
            });
        }
        for (flag, counts) in [("--writers", &self.writers), ("--readers", &self.readers)] {
            if counts.is_empty() || counts.iter().any(|&n| n == 0 || n > MAX_ENDS) {
                return Err(SharedPipeError::OutOfRange {
                    flag,
                    value: join(counts),
                    bounds: format!("one or more counts from 1 to {MAX_ENDS}"),
                });
            }
        }
        let bad_size = |&s: &u64| s < MSG_BOUNDS.0 || s > MSG_BOUNDS.1 || s % 8 != 0;
        if self.msg_sizes.is_empty() || self.msg_sizes.iter().any(bad_size) {
            return Err(SharedPipeError::OutOfRange {
                flag: "--msg-size",
                value: join(&self.msg_sizes),
                bounds: format!(
                    "sizes from {} to {}, multiples of 8 bytes",
                    ByteSize(MSG_BOUNDS.0),
                    ByteSize(MSG_BOUNDS.1)
                ),
            });
        }
        let least = self.msg_sizes.iter().max().copied().unwrap_or(0)
            * self.writers.iter().max().copied().unwrap_or(1) as u64;
        if self.bytes < least || self.bytes > MAX_BYTES {
            return Err(SharedPipeError::OutOfRange {
                flag: "--bytes",
                value: self.bytes.to_string(),
                bounds: format!(
                    "at least one message per writer ({least} bytes) and at most {}",
                    ByteSize(MAX_BYTES)
                ),
            });
        }
        Ok(())
    }
}

fn join<T: ToString>(values: &[T]) -> String {
    values
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Why a point failed.
#[derive(Debug, thiserror::Error)]
enum PointError {
    #[error("cannot make the pipe: {0}")]
    Pipe(std::io::Error),
    #[error(transparent)]
    Launch(#[from] LaunchError),
    #[error("the {what} failed: {message}")]
    End { what: String, message: String },
    #[error("the point did not finish within {0} s")]
    Timeout(u64),
}

/// Runs the sweep; the final event (`result` with a [`SharedPipeResult`],
/// `cancelled`, `error`), or none when the observer went away.
pub fn run(
    job: &SharedPipeJob,
    context: &JobContext,
    observer: &mut dyn Observer,
) -> Option<Event> {
    if let Err(err) = job.check() {
        return Some(Event::error(err.to_string()));
    }
    let cpus = crate::process::cpu::allowed_cpus().len().max(1);
    observer.event(Event::Started(crate::engine::event::Started::SharedPipe(
        Box::new(SharedStarted {
            kind: "shared_pipe",
            writers: job.writers.clone(),
            readers: job.readers.clone(),
            msg_sizes: job.msg_sizes.clone(),
            bytes: job.bytes,
            points: job.writers.len() * job.readers.len() * job.msg_sizes.len(),
            cpus,
        }),
    )));
    // A machine that cannot profile still runs the sweep; the observer hears
    // why once, and no point is held for perf.
    let setup = job.profile.then(|| {
        profile::probe(&profile::perf_program(), profile::DEFAULT_FREQUENCY).map_err(|err| {
            observer.event(Event::Profile(ProfileOutcome::from(Err(err))));
        })
    });
    let setup = setup.and_then(Result::ok);
    let mut points = Vec::new();
    let mut warnings = Vec::new();
    let started = Instant::now();
    let mut moved = 0u64;
    for &msg_size in &job.msg_sizes {
        for &writers in &job.writers {
            for &readers in &job.readers {
                let shape = PipeShape {
                    writers,
                    readers,
                    msg_size,
                };
                let point = run_point(job, context, observer, shape, setup.as_ref());
                match point {
                    Ok(point) => {
                        if point.oversubscribed {
                            let warning = format!(
                                "{writers} writers and {readers} readers are more processes \
                                 than the {cpus} CPUs here: they take turns, and the figure \
                                 shows it"
                            );
                            if !warnings.contains(&warning) {
                                warnings.push(warning);
                            }
                        }
                        moved += point.bytes;
                        observer.event(Event::Progress(Progress {
                            bytes: moved,
                            elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
                            gib_per_s: point.gib_per_s,
                            pipe_bytes: None,
                        }));
                        observer.event(Event::SharedPoint(Box::new(point.clone())));
                        points.push(point);
                    }
                    Err(Halt::Stop(Stop::Cancel)) => return Some(Event::Cancelled),
                    Err(Halt::Stop(Stop::Gone)) => return None,
                    Err(Halt::Stop(Stop::Shutdown)) => {
                        return Some(Event::error("the server is shutting down"))
                    }
                    Err(Halt::Failed(err)) => {
                        return Some(Event::Error(Failure {
                            message: format!(
                                "{writers} writers, {readers} readers, {} messages: {err}",
                                ByteSize(msg_size)
                            ),
                            reason: None,
                        }))
                    }
                }
            }
        }
    }
    Some(Event::Result(Finished::SharedPipe(Box::new(
        SharedPipeResult {
            kind: "shared_pipe",
            cpus,
            points,
            warnings,
            finished_at_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0),
        },
    ))))
}

enum Halt {
    Stop(Stop),
    Failed(PointError),
}

impl From<PointError> for Halt {
    fn from(err: PointError) -> Self {
        Halt::Failed(err)
    }
}

/// One point's counts of writers and readers and its message size.
#[derive(Debug, Clone, Copy)]
struct PipeShape {
    writers: usize,
    readers: usize,
    msg_size: u64,
}

/// Whether process `pid` is stopped, or gone (nothing left to wait for).
fn stopped_or_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command's closing parenthesis.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next())
            .is_none_or(|state| matches!(state, 'T' | 't' | 'Z' | 'X')),
        Err(_) => true,
    }
}

/// A point's perf recording and the private folder its data lives in.
struct Recorded {
    session: Session,
    _folder: Option<RunDir>,
}

/// Attaches perf to a point's held ends: the writers as one recording, the
/// readers as another, in the caller's `--profile-dir` (a folder per point)
/// or in a private run folder removed with the point. Every end is continued,
/// recorded or not; a failure is said to the observer and the point goes on.
fn record(
    setup: &Setup,
    context: &JobContext,
    shape: PipeShape,
    ends: &[(String, Child)],
    observer: &mut dyn Observer,
) -> Option<Recorded> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !ends.iter().all(|(_, child)| stopped_or_gone(child.pid())) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
    let pids = |writer: bool| -> Vec<u32> {
        ends.iter()
            .filter(|(what, _)| what.starts_with("writer") == writer)
            .map(|(_, child)| child.pid())
            .collect()
    };
    let (writers, readers) = (pids(true), pids(false));
    let mut folder = None;
    let dir = match &context.profile_dir {
        Some(dir) => {
            let dir = dir.join(format!(
                "{}w-{}r-{}",
                shape.writers, shape.readers, shape.msg_size
            ));
            std::fs::create_dir_all(&dir)
                .map(|()| dir.clone())
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))
        }
        None => Base::runtime()
            .and_then(|base| RunDir::create(&base))
            .map(|made| {
                let path = made.path().to_path_buf();
                folder = Some(made);
                path
            })
            .map_err(|e| e.to_string()),
    };
    let attached = dir
        .map_err(|message| ProfileError::Failed {
            stage: "record",
            message,
        })
        .and_then(|dir| {
            Session::attach_groups(
                setup.clone(),
                [("writers", &writers), ("readers", &readers)],
                &dir,
            )
        });
    // attach_groups continues them whatever happens; a folder that could not be
    // made never reached it.
    for pid in writers.iter().chain(&readers) {
        if let Some(pid) = rustix::process::Pid::from_raw(*pid as i32) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::CONT);
        }
    }
    match attached {
        Ok(session) => Some(Recorded {
            session,
            _folder: folder,
        }),
        Err(err) => {
            observer.event(Event::Profile(ProfileOutcome::from(Err(err))));
            None
        }
    }
}

/// The sum of several ends' counts: a count missing from any end is missing
/// from the sum (a partial total would read as a small one).
fn summed<'a>(ends: impl Iterator<Item = &'a EndCounts>) -> EndCounts {
    fn add(total: &mut Option<u64>, value: Option<u64>) {
        *total = match (*total, value) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
    }
    let mut sum = EndCounts {
        cpu_migrations: Some(0),
        page_allocs: Some(0),
        page_frees: Some(0),
        wakeups: Some(0),
        ipis: Some(0),
        tlb_flushes: Some(0),
        ..EndCounts::default()
    };
    let mut traced: Option<BTreeMap<String, u64>> = Some(BTreeMap::new());
    for end in ends {
        for (call, n) in &end.syscalls {
            *sum.syscalls.entry(call.clone()).or_default() += n;
        }
        sum.context_switches += end.context_switches;
        sum.voluntary_switches += end.voluntary_switches;
        sum.involuntary_switches += end.involuntary_switches;
        sum.page_faults += end.page_faults;
        sum.major_faults += end.major_faults;
        add(&mut sum.cpu_migrations, end.cpu_migrations);
        add(&mut sum.page_allocs, end.page_allocs);
        add(&mut sum.page_frees, end.page_frees);
        add(&mut sum.wakeups, end.wakeups);
        add(&mut sum.ipis, end.ipis);
        add(&mut sum.tlb_flushes, end.tlb_flushes);
        traced = match (traced, &end.syscalls_traced) {
            (Some(mut t), Some(calls)) => {
                for (call, n) in calls {
                    *t.entry(call.clone()).or_default() += n;
                }
                Some(t)
            }
            _ => None,
        };
    }
    sum.syscalls_traced = traced;
    sum
}

/// A point's counts: `writers` (every writer's summed) and `readers`; none when
/// an end counted nothing.
fn point_counts(writers: &[&EndAnswer], readers: &[&EndAnswer]) -> Option<Counts> {
    let side = |answers: &[&EndAnswer]| -> Option<Vec<Counted>> {
        answers.iter().map(|a| a.counts.clone()).collect()
    };
    let (w, r) = (side(writers)?, side(readers)?);
    let mut counts = Counts::default();
    counts
        .ends
        .insert("writers".into(), summed(w.iter().map(|c| &c.counts)));
    counts
        .ends
        .insert("readers".into(), summed(r.iter().map(|c| &c.counts)));
    counts.missing = merge(w.iter().chain(&r).flat_map(|c| c.missing.clone()).collect());
    Some(counts)
}

fn run_point(
    job: &SharedPipeJob,
    context: &JobContext,
    observer: &mut dyn Observer,
    shape: PipeShape,
    setup: Option<&Setup>,
) -> Result<SharedPoint, Halt> {
    let PipeShape {
        writers,
        readers,
        msg_size,
    } = shape;
    let (read_end, write_end) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
        .map_err(|e| PointError::Pipe(e.into()))?;
    let _ = rustix::pipe::fcntl_setpipe_size(&write_end, PIPE_CAPACITY);
    let messages = (job.bytes / writers as u64 / msg_size).max(1);
    let dup = |fd: &OwnedFd| -> Result<OwnedFd, PointError> {
        rustix::io::fcntl_dupfd_cloexec(fd, 0).map_err(|e| PointError::Pipe(e.into()))
    };
    let mut ends: Vec<(String, Child)> = Vec::new();
    // Readers first, so no writer fills the pipe before anyone reads.
    for id in 0..readers {
        let spec = EndSpec {
            writer: false,
            id: id as u32,
            msg_size,
            messages: 0,
            readers,
            hold: setup.is_some(),
        };
        let what = format!("reader {id}");
        let child = end_launch(&what, context, &spec)
            .stdin(dup(&read_end)?)
            .spawn()
            .map_err(PointError::from)?;
        ends.push((what, child));
    }
    drop(read_end);
    for id in 0..writers {
        let spec = EndSpec {
            writer: true,
            id: id as u32,
            msg_size,
            messages,
            readers,
            hold: setup.is_some(),
        };
        let what = format!("writer {id}");
        let child = end_launch(&what, context, &spec)
            .stdout(dup(&write_end)?)
            .spawn()
            .map_err(PointError::from)?;
        ends.push((what, child));
    }
    // Only the ends hold the pipe now: the readers see its end when the last
    // writer is done.
    drop(write_end);
    let recorded = setup.and_then(|setup| record(setup, context, shape, &ends, observer));
    let ended = wait_for_ends(job, &mut ends, observer);
    // perf stops by itself once its processes are gone; killed ends leave it
    // nothing to finish.
    match (recorded, &ended) {
        (Some(recorded), Ok(())) => {
            let report = recorded.session.finish("shared-pipe");
            observer.event(Event::Profile(ProfileOutcome::from(report)));
        }
        (Some(recorded), Err(_)) => recorded.session.abandon(),
        (None, _) => {}
    }
    ended?;
    answer_point(&mut ends, shape)
}

/// Waits until every end of a point has exited, the observer says stop, or the
/// point's time is up (dropping the children then kills and reaps them).
fn wait_for_ends(
    job: &SharedPipeJob,
    ends: &mut [(String, Child)],
    observer: &mut dyn Observer,
) -> Result<(), Halt> {
    let deadline = Instant::now() + job.timeout;
    loop {
        let mut all = true;
        for (_, child) in ends.iter_mut() {
            if child.try_wait().map_err(PointError::Pipe)?.is_none() {
                all = false;
            }
        }
        if all {
            break;
        }
        if let Some(stop) = observer.wait(PROGRESS_INTERVAL.min(Duration::from_millis(10))) {
            // Dropping the children kills and reaps them.
            return Err(Halt::Stop(stop));
        }
        if Instant::now() >= deadline {
            return Err(PointError::Timeout(job.timeout.as_secs()).into());
        }
    }
    Ok(())
}

/// The point, from its ends' answers once all have exited.
fn answer_point(ends: &mut [(String, Child)], shape: PipeShape) -> Result<SharedPoint, Halt> {
    let PipeShape {
        writers,
        readers,
        msg_size,
    } = shape;
    let mut answers: Vec<(bool, EndAnswer)> = Vec::new();
    for (what, child) in ends.iter_mut() {
        let answer: EndAnswer = child.outcome().map_err(|silent| PointError::End {
            what: what.clone(),
            message: format!("{}: {}", silent.status, silent.stderr),
        })?;
        if let Some(message) = &answer.error {
            return Err(PointError::End {
                what: what.clone(),
                message: message.clone(),
            }
            .into());
        }
        answers.push((what.starts_with("writer"), answer));
    }
    let (writer_answers, reader_answers): (Vec<_>, Vec<_>) =
        answers.into_iter().partition(|(w, _)| *w);
    let written: Vec<u64> = writer_answers.iter().map(|(_, a)| a.bytes).collect();
    let mut received = vec![0u64; writers];
    for (_, answer) in &reader_answers {
        for (&writer, &bytes) in &answer.per_writer {
            if let Some(slot) = received.get_mut(writer as usize) {
                *slot += bytes;
            }
        }
    }
    let first = reader_answers.iter().filter_map(|(_, a)| a.first_ns).min();
    let last = reader_answers.iter().filter_map(|(_, a)| a.last_ns).max();
    let elapsed_ms = match (first, last) {
        (Some(f), Some(l)) => (l.saturating_sub(f)) as f64 / 1e6,
        _ => 0.0,
    };
    let bytes: u64 = reader_answers.iter().map(|(_, a)| a.bytes).sum();
    let counts = point_counts(
        &writer_answers.iter().map(|(_, a)| a).collect::<Vec<_>>(),
        &reader_answers.iter().map(|(_, a)| a).collect::<Vec<_>>(),
    );
    Ok(SharedPoint {
        writers,
        readers,
        msg_size,
        atomic: msg_size <= PIPE_BUF,
        bytes,
        elapsed_ms,
        gib_per_s: gib_per_s(bytes, elapsed_ms),
        written,
        received,
        per_reader: reader_answers.iter().map(|(_, a)| a.bytes).collect(),
        torn_messages: reader_answers.iter().map(|(_, a)| a.torn).sum(),
        split_messages: reader_answers.iter().map(|(_, a)| a.split).sum(),
        sleeps: [
            writer_answers.iter().map(|(_, a)| a.sleeps).sum(),
            reader_answers.iter().map(|(_, a)| a.sleeps).sum(),
        ],
        oversubscribed: writers + readers > crate::process::cpu::allowed_cpus().len().max(1),
        counts,
    })
}

/// How one end of a shared-pipe point starts: `shared-end SPEC`, by the one launcher.
fn end_launch<'a>(what: &str, context: &'a JobContext, spec: &EndSpec) -> Launch<'a> {
    Launch::new(
        what,
        &context.program,
        "shared-end",
        vec![OsString::from(
            serde_json::to_string(spec).expect("specs serialise"),
        )],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_checked() {
        let job = SharedPipeJob {
            writers: vec![1, 2],
            readers: vec![1],
            msg_sizes: vec![4096],
            bytes: 1 << 20,
            timeout: Duration::from_secs(1),
            profile: false,
        };
        assert!(job.check().is_ok());
        for bad in [
            SharedPipeJob {
                writers: vec![0],
                ..job.clone()
            },
            SharedPipeJob {
                msg_sizes: vec![100],
                ..job.clone()
            },
            SharedPipeJob {
                bytes: 10,
                ..job.clone()
            },
        ] {
            assert!(bad.check().is_err(), "{bad:?}");
        }
    }
}
