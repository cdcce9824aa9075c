//! `pipebench shared-end SPEC`: one writer or reader of a shared pipe
//! ([`crate::engine::shared_pipe`]), a child started by the one launcher. A
//! writer tags every word of its messages ([`crate::ends::shared_tag`]); a reader
//! judges what it reads; each counts its loop and answers with one outcome line.

use std::collections::BTreeMap;

use rustix::io::Errno;
use serde::{Deserialize, Serialize};

use crate::ends::shared_tag::{word, Judge};
use crate::process::counts::{Counted, Counting, Request};
use crate::process::launch::{self, REPORT_FD};

/// What one end is told (`pipebench shared-end SPEC`, as JSON).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct EndSpec {
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
    /// Stop itself (SIGSTOP) before its loop, so perf can attach before the
    /// first byte; the job continues it.
    #[serde(default)]
    pub hold: bool,
}

/// What an end answers.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct EndAnswer {
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
    /// What the kernel did for it over its loop, and what could not be counted.
    #[serde(default)]
    pub counts: Option<Counted>,
    /// What went wrong, if anything.
    pub error: Option<String>,
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
pub(crate) fn end_main(spec: &str) -> std::process::ExitCode {
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

/// An end's counting window, opened before its loop: context switches and
/// faults always, the wakeups, IPIs and TLB flushes it causes where the machine
/// permits (as an IPC or tool run counts them: no article figure is set
/// against a shared pipe). A held end stops here, its counters open but not
/// yet started, so neither perf's attaching nor the stop is counted.
fn open_window(spec: &EndSpec, call: &'static str) -> Counting {
    let mut window = Counting::open(&Request {
        calls: vec![call],
        per_wakeup: true,
        trace_syscalls: false,
    });
    if spec.hold {
        // SAFETY: raise only sends a signal to this process.
        unsafe {
            libc::raise(libc::SIGSTOP);
        }
    }
    window.start();
    window
}

fn write_end(spec: &EndSpec) -> EndAnswer {
    let words = (spec.msg_size / 8) as usize;
    let mut message = vec![0u8; spec.msg_size as usize];
    let stdout = std::io::stdout();
    let out = std::os::fd::AsFd::as_fd(&stdout);
    let mut answer = EndAnswer::default();
    let window = open_window(spec, "write");
    let mut calls = 0u64;
    let before = voluntary_switches();
    answer.first_ns = Some(monotonic_ns());
    for seq in 0..spec.messages {
        for (i, slot) in message.chunks_exact_mut(8).take(words).enumerate() {
            slot.copy_from_slice(&word(spec.id, seq, i as u64).to_ne_bytes());
        }
        let mut done = 0;
        while done < message.len() {
            calls += 1;
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
    answer.counts = Some(window.stop(BTreeMap::from([("write".to_string(), calls)])));
    answer
}

fn read_end(spec: &EndSpec) -> EndAnswer {
    let mut buffer = vec![0u8; spec.msg_size as usize];
    let stdin = std::io::stdin();
    let input = std::os::fd::AsFd::as_fd(&stdin);
    let mut judge = Judge::new(spec.msg_size, spec.readers);
    let mut answer = EndAnswer::default();
    let window = open_window(spec, "read");
    let mut calls = 0u64;
    let before = voluntary_switches();
    loop {
        calls += 1;
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
    answer.counts = Some(window.stop(BTreeMap::from([("read".to_string(), calls)])));
    answer.per_writer = judge.per_writer;
    answer.torn = judge.torn;
    answer.split = judge.split;
    answer
}
