//! Many writers and many readers on one pipe (`pipebench shared-pipe`): W
//! writer processes and R reader processes share one pipe, and every message
//! is tagged so the readers can tell whether a writer's message arrived whole.
//!
//! POSIX makes a write of at most `PIPE_BUF` (4096 bytes on Linux) atomic: its
//! bytes are never interleaved with another writer's. Above that, a writer that
//! finds the pipe full sleeps with part of its message written, and another
//! writer's bytes can go in between. Each 8-byte word of a message carries its
//! writer, the message's number and the word's place in it ([`word`]), so a
//! reader sees, inside every read, where one message stops and another starts.
//! A message is *torn* when a read shows another message's words between two
//! of its own, or shows it starting in the middle; readers read one message's
//! size per call, so at and below `PIPE_BUF` each read must be one whole
//! message and `torn_messages` must be 0.
//!
//! Every end is a child of this process started through the one launcher
//! (`pipebench shared-end SPEC`), and answers with one outcome line.

pub mod report;

pub use report::{SharedPipeResult, SharedPoint, SharedStarted};

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use rustix::io::Errno;
use serde::{Deserialize, Serialize};

use crate::engine::event::{Event, Failure, Finished, Progress};
use crate::engine::observer::{JobContext, Observer, Stop, PROGRESS_INTERVAL};
use crate::process::launch::{self, Child, Launch, LaunchError, REPORT_FD};
use crate::size::{gib_per_s, ByteSize};

/// `PIPE_BUF` on Linux: writes up to this size are atomic.
pub const PIPE_BUF: u64 = 4096;
/// The most ends of either kind.
pub const MAX_ENDS: usize = 16;
/// The least and most bytes per message.
pub const MSG_BOUNDS: (u64, u64) = (64, 1 << 20);
/// Bytes a point moves unless told.
pub const DEFAULT_BYTES: u64 = 64 << 20;
/// The most bytes a point moves.
pub const MAX_BYTES: u64 = 1 << 30;
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

/// What one end is told (`pipebench shared-end SPEC`, as JSON).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EndSpec {
    /// `writer` or `reader`.
    pub writer: bool,
    /// Its number among the writers (a writer's tag).
    pub id: u32,
    /// Bytes per message and per call.
    pub msg_size: u64,
    /// Messages to write (a writer).
    pub messages: u64,
    /// How many readers share the pipe (a reader alone sees the whole stream).
    pub readers: usize,
}

/// What an end answers.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct EndAnswer {
    /// Bytes it moved.
    pub bytes: u64,
    /// A reader: bytes received of each writer, by writer id.
    pub per_writer: BTreeMap<u32, u64>,
    /// A reader: messages torn.
    pub torn: u64,
    /// A reader: messages that started in one read and went on in another.
    pub split: u64,
    /// CLOCK_MONOTONIC ns of its first and last byte.
    pub first_ns: Option<u64>,
    /// The last.
    pub last_ns: Option<u64>,
    /// Voluntary context switches over its loop.
    pub sleeps: u64,
    /// What went wrong, if anything.
    pub error: Option<String>,
}

/// The word at `index` of message `seq` of writer `writer`.
pub fn word(writer: u32, seq: u64, index: u64) -> u64 {
    ((writer as u64 & 0xff) << 56) | ((seq & 0xffff_ffff) << 24) | (index & 0xff_ffff)
}

/// A word's writer, message and place.
fn unword(w: u64) -> (u32, u64, u64) {
    ((w >> 56) as u32, (w >> 24) & 0xffff_ffff, w & 0xff_ffff)
}

/// A reader's judgement of the stream it saw, read by read.
#[derive(Debug, Default)]
pub struct Judge {
    words_per_msg: u64,
    /// The only reader: it sees the whole stream, so a message its previous
    /// read ended in must go on at the start of its next.
    sole: bool,
    /// The message the previous read ended in: (writer, seq, next index).
    open: Option<(u32, u64, u64)>,
    /// Bytes by writer.
    pub per_writer: BTreeMap<u32, u64>,
    /// Messages torn, (writer, seq): each counted once.
    torn_ids: std::collections::HashSet<(u32, u64)>,
    /// Messages torn.
    pub torn: u64,
    /// Messages split over reads.
    pub split: u64,
}

impl Judge {
    /// For messages of `msg_size` bytes, read by one of `readers` readers.
    pub fn new(msg_size: u64, readers: usize) -> Self {
        Judge {
            words_per_msg: msg_size / 8,
            sole: readers == 1,
            ..Judge::default()
        }
    }

    fn tear(&mut self, writer: u32, seq: u64) {
        if self.torn_ids.insert((writer, seq)) {
            self.torn += 1;
        }
    }

    /// One read's bytes (a multiple of 8: every write is).
    pub fn read(&mut self, chunk: &[u8]) {
        // (writer, seq, next index) of the message being walked in this read.
        let mut current: Option<(u32, u64, u64)> = None;
        let mut first = true;
        for bytes in chunk.chunks_exact(8) {
            let (writer, seq, index) = unword(u64::from_ne_bytes(bytes.try_into().unwrap()));
            *self.per_writer.entry(writer).or_default() += 8;
            match current {
                Some((w, s, next)) if w == writer && s == seq && next == index => {
                    current = Some((w, s, next + 1));
                }
                _ => {
                    // A message ends here, or another begins.
                    if let Some((w, s, next)) = current {
                        if next != self.words_per_msg {
                            // Cut off by another message inside one read.
                            self.tear(w, s);
                        }
                    }
                    // A read may begin with the rest of a message (this reader's
                    // previous read, or another reader's, ended in it: counted as
                    // split there); anywhere else, starting in the middle means
                    // another message came between its parts.
                    if index != 0 && !first {
                        self.tear(writer, seq);
                    }
                    if first && self.sole {
                        let goes_on = self.open == Some((writer, seq, index));
                        // The sole reader's previous read ended inside a message
                        // and this one does not carry on with it: cut off.
                        if let Some((w, s, _)) = self.open.filter(|_| !goes_on) {
                            self.tear(w, s);
                        }
                        // Or it begins inside a message it never saw begin.
                        if index != 0 && !goes_on {
                            self.tear(writer, seq);
                        }
                    }
                    current = Some((writer, seq, index + 1));
                }
            }
            first = false;
        }
        // Ending inside a message: its rest comes in another read.
        self.open = current.filter(|&(_, _, next)| next != self.words_per_msg);
        if self.open.is_some() {
            self.split += 1;
        }
    }
}

/// CLOCK_MONOTONIC in ns: the same clock in every process of the machine.
fn monotonic_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

fn voluntary_switches() -> u64 {
    // SAFETY: getrusage fills the struct we pass; a zeroed rusage is valid.
    unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage.ru_nvcsw as u64
    }
}

/// `pipebench shared-end SPEC`: one end, on stdout (a writer) or stdin (a
/// reader); its answer on the report fd.
pub fn end_main(spec: &str) -> std::process::ExitCode {
    let answer = match serde_json::from_str::<EndSpec>(spec) {
        Ok(spec) if spec.writer => write_end(&spec),
        Ok(spec) => read_end(&spec),
        Err(err) => EndAnswer {
            error: Some(format!("bad spec: {err}")),
            ..EndAnswer::default()
        },
    };
    let failed = answer.error.is_some();
    if launch::send_outcome(REPORT_FD, &answer).is_err() || failed {
        return std::process::ExitCode::FAILURE;
    }
    std::process::ExitCode::SUCCESS
}

fn write_end(spec: &EndSpec) -> EndAnswer {
    let words = (spec.msg_size / 8) as usize;
    let mut message = vec![0u8; spec.msg_size as usize];
    let stdout = std::io::stdout();
    let out = std::os::fd::AsFd::as_fd(&stdout);
    let mut answer = EndAnswer::default();
    let before = voluntary_switches();
    answer.first_ns = Some(monotonic_ns());
    for seq in 0..spec.messages {
        for (i, slot) in message.chunks_exact_mut(8).take(words).enumerate() {
            slot.copy_from_slice(&word(spec.id, seq, i as u64).to_ne_bytes());
        }
        let mut done = 0;
        while done < message.len() {
            match rustix::io::write(out, &message[done..]) {
                Ok(n) => done += n,
                Err(Errno::INTR) => {}
                Err(e) => {
                    answer.error = Some(format!("write: {e}"));
                    return answer;
                }
            }
        }
        answer.bytes += message.len() as u64;
    }
    answer.last_ns = Some(monotonic_ns());
    answer.sleeps = voluntary_switches() - before;
    answer
}

fn read_end(spec: &EndSpec) -> EndAnswer {
    let mut buffer = vec![0u8; spec.msg_size as usize];
    let stdin = std::io::stdin();
    let input = std::os::fd::AsFd::as_fd(&stdin);
    let mut judge = Judge::new(spec.msg_size, spec.readers);
    let mut answer = EndAnswer::default();
    let before = voluntary_switches();
    loop {
        match rustix::io::read(input, &mut buffer) {
            Ok(0) => break,
            Ok(n) => {
                let now = monotonic_ns();
                answer.first_ns.get_or_insert(now);
                answer.last_ns = Some(now);
                answer.bytes += n as u64;
                judge.read(&buffer[..n]);
            }
            Err(Errno::INTR) => {}
            Err(e) => {
                answer.error = Some(format!("read: {e}"));
                return answer;
            }
        }
    }
    answer.sleeps = voluntary_switches() - before;
    answer.per_writer = judge.per_writer;
    answer.torn = judge.torn;
    answer.split = judge.split;
    answer
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
    let mut points = Vec::new();
    let mut warnings = Vec::new();
    let started = Instant::now();
    let mut moved = 0u64;
    for &msg_size in &job.msg_sizes {
        for &writers in &job.writers {
            for &readers in &job.readers {
                let point = run_point(job, context, observer, writers, readers, msg_size);
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

fn run_point(
    job: &SharedPipeJob,
    context: &JobContext,
    observer: &mut dyn Observer,
    writers: usize,
    readers: usize,
    msg_size: u64,
) -> Result<SharedPoint, Halt> {
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

    fn message(writer: u32, seq: u64, words: u64) -> Vec<u8> {
        (0..words)
            .flat_map(|i| word(writer, seq, i).to_ne_bytes())
            .collect()
    }

    #[test]
    fn whole_messages_are_not_torn_and_interleaved_ones_are() {
        let mut judge = Judge::new(64, 2);
        judge.read(&message(0, 0, 8));
        judge.read(&message(1, 0, 8));
        assert_eq!((judge.torn, judge.split), (0, 0));
        // Writer 0's message with writer 1's in the middle of it, in one read.
        let a = message(0, 1, 8);
        let b = message(1, 1, 8);
        let mut chunk = a[..32].to_vec();
        chunk.extend_from_slice(&b);
        chunk.extend_from_slice(&a[32..]);
        judge.read(&chunk);
        assert_eq!(judge.torn, 1, "cut off, then resumed: one message torn");
        assert_eq!(judge.per_writer[&0], 128);
        assert_eq!(judge.per_writer[&1], 128);
    }

    #[test]
    fn a_message_over_two_reads_is_split_not_torn() {
        let mut judge = Judge::new(64, 1);
        let a = message(2, 5, 8);
        judge.read(&a[..24]);
        judge.read(&a[24..]);
        assert_eq!(judge.torn, 0);
        assert_eq!(judge.split, 1);
    }

    #[test]
    fn a_sole_reader_sees_a_tear_between_two_reads() {
        let a = message(0, 0, 8);
        let b = message(1, 0, 8);
        let mut sole = Judge::new(64, 1);
        sole.read(&a[..32]);
        sole.read(&b);
        sole.read(&a[32..]);
        // a was cut off, then resumed after b: one message torn.
        assert_eq!(sole.torn, 1);
        // With another reader, the rest might have been read there: no verdict.
        let mut shared = Judge::new(64, 2);
        shared.read(&a[..32]);
        shared.read(&b);
        assert_eq!(shared.torn, 0);
    }

    #[test]
    fn bounds_are_checked() {
        let job = SharedPipeJob {
            writers: vec![1, 2],
            readers: vec![1],
            msg_sizes: vec![4096],
            bytes: 1 << 20,
            timeout: Duration::from_secs(1),
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
