//! `--profile`: where each end spends its time, with call graphs, via perf.
//!
//! [`probe`] decides how this machine can be sampled: the hardware `cycles`
//! event, or the software `cpu-clock` where the CPU's counters are not available
//! (virtual machines), kernel frames or not (perf_event_paranoid), kernel names
//! or bare addresses (kptr_restrict); each compromise becomes a typed
//! [`ProfileNote`]. [`Recording::attach`] runs `perf record -g` on one end at a
//! bounded frequency; [`Recording::finish`] folds `perf script`'s stacks with
//! inferno's perf collapser, counts each function's self and inclusive
//! ("children") share from the folded stacks (no `perf report`, which is slow on
//! big recordings), and draws a flame graph with inferno, scripts removed so a
//! page with a strict CSP can show it as an image.
//!
//! May use: [`crate::process`] (perf is started by its launcher).

pub mod article;

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use inferno::collapse::Collapse;
use serde::Serialize;

use crate::process::launch::{Child, EndProgram, Launch, DST_FD, SRC_FD};

/// Samples per second of running time: a blocking end sleeps most of a run and is
/// sampled only while it runs, so it needs a high rate to get a few hundred
/// samples from a short run; still few enough that `perf script` on a 1 GiB run
/// takes well under a second.
pub const DEFAULT_FREQUENCY: u32 = 4999;

/// How long perf gets to stop by itself once its end has exited, before it is
/// interrupted (SIGINT, so that it still writes a readable file).
const FINISH_GRACE: Duration = Duration::from_secs(1);

/// How long an interrupted perf gets to write its file before it is killed.
const FINISH_AFTER_INTERRUPT: Duration = Duration::from_secs(10);

/// How long `perf stat` gets to count one `true` before the probe gives up on
/// the cycle counter.
const STAT_TIMEOUT: Duration = Duration::from_secs(10);

/// perf, started by the one launcher like every child of a job (its fd map,
/// its death signal, its stderr drained): `perf ARGS...`.
fn launch_perf(
    what: &str,
    perf: &Path,
    args: Vec<OsString>,
    stage: &'static str,
    attach: impl FnOnce(Launch<'_>) -> Launch<'_>,
) -> Result<Child, ProfileError> {
    let program = EndProgram {
        exe: perf.to_path_buf(),
        prefix: Vec::new(),
    };
    attach(Launch::program(what, &program, args))
        .spawn()
        .map_err(|e| ProfileError::Failed {
            stage,
            message: e.to_string(),
        })
}

/// Words as a command's arguments.
fn args<const N: usize>(words: [&str; N]) -> Vec<OsString> {
    words.iter().map(OsString::from).collect()
}

/// The environment variable that names the perf executable (default `perf`).
pub const PERF_ENV: &str = "PIPEBENCH_PERF";

/// How many functions a profile lists (by inclusive share).
const LISTED: usize = 25;

/// Why profiling cannot work at all, with what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ProfileError {
    /// The perf executable was not found.
    #[error("perf is not installed (looked for `{perf}`): on Debian, `apt-get install linux-perf` (Ubuntu: linux-tools-$(uname -r)), then run again")]
    NotInstalled {
        /// What was looked for.
        perf: String,
    },
    /// perf_event_paranoid forbids this user any sampling.
    #[error("perf_event_paranoid is {paranoid}: this user may not sample at all; as root, `sysctl kernel.perf_event_paranoid=1` (or 2 for user space only), or run as root")]
    NotPermitted {
        /// The value read.
        paranoid: i32,
    },
    /// perf ran but failed.
    #[error("perf {stage} failed: {message}")]
    Failed {
        /// `stat`, `record` or `script`.
        stage: &'static str,
        /// What perf printed.
        message: String,
    },
}

/// What kind of compromise a profile made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoteKind {
    /// No hardware counters (typical in a VM): sampled with the cpu-clock timer.
    SoftwareClock,
    /// perf_event_paranoid 2 without root: user space only, no kernel frames.
    UserSpaceOnly,
    /// kptr_restrict hides kernel addresses: kernel frames have no names.
    KernelSymbolsHidden,
    /// An end produced no samples (it ran too briefly).
    NoSamples,
}

/// A compromise, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProfileNote {
    /// What.
    pub kind: NoteKind,
    /// Why, and what to do, for a person.
    pub message: String,
}

/// How this machine will be sampled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Setup {
    /// The perf executable.
    #[serde(skip)]
    pub perf: PathBuf,
    /// The event sampled: `cycles` or `cpu-clock` (with `:u` for user space only).
    pub event: String,
    /// Samples per second.
    pub frequency: u32,
    /// The compromises made.
    pub notes: Vec<ProfileNote>,
}

/// One function's share of an end's samples.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FunctionShare {
    /// The symbol (kernel or user).
    pub symbol: String,
    /// A kernel function.
    pub kernel: bool,
    /// Percent of samples with this function anywhere on the stack.
    pub children_percent: f64,
    /// Percent of samples with this function at the top of the stack.
    pub self_percent: f64,
}

/// One end's profile.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct EndProfile {
    /// Samples taken (an end that sleeps in the kernel is not sampled meanwhile).
    pub samples: u64,
    /// What the shares are of: the sum of the samples' periods (nanoseconds
    /// with cpu-clock, cycles with cycles).
    pub weight: u64,
    /// The most inclusive functions, highest first.
    pub functions: Vec<FunctionShare>,
    /// Every function sampled (for comparisons; not sent).
    #[serde(skip)]
    pub all: Vec<FunctionShare>,
    /// The flame graph, an SVG without scripts or event handlers.
    pub flamegraph_svg: String,
}

/// The perf executable: `$PIPEBENCH_PERF`, else `perf` on PATH.
pub fn perf_program() -> PathBuf {
    std::env::var_os(PERF_ENV).map_or_else(|| PathBuf::from("perf"), PathBuf::from)
}

/// Whether `perf` resolves to an executable file.
fn find(perf: &Path) -> Option<PathBuf> {
    if perf.components().count() > 1 {
        return perf.is_file().then(|| perf.to_path_buf());
    }
    // Found on PATH: only where no other user could have planted it, since
    // perf runs with the runner's rights (root's, maybe).
    crate::process::launch::trusted_on_path(perf.to_str()?)
}

/// Whether the default perf executable can be found.
pub fn perf_installed() -> bool {
    find(&perf_program()).is_some()
}

fn read_number(path: &str) -> Option<i32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Decides how to sample on this machine, at `frequency`, with `perf`.
pub fn probe(perf: &Path, frequency: u32) -> Result<Setup, ProfileError> {
    let perf = find(perf).ok_or_else(|| ProfileError::NotInstalled {
        perf: perf.display().to_string(),
    })?;
    let root = rustix::process::geteuid().is_root();
    let paranoid = read_number("/proc/sys/kernel/perf_event_paranoid").unwrap_or(2);
    let kptr = read_number("/proc/sys/kernel/kptr_restrict").unwrap_or(0);
    let mut notes = Vec::new();
    if !root && paranoid > 2 {
        return Err(ProfileError::NotPermitted { paranoid });
    }
    let user_only = !root && paranoid == 2;
    let suffix = if user_only { ":u" } else { "" };
    if user_only {
        notes.push(ProfileNote {
            kind: NoteKind::UserSpaceOnly,
            message: "perf_event_paranoid is 2 and this is not root: only user space is sampled, so the kernel functions that move the pages are missing; as root, `sysctl kernel.perf_event_paranoid=1`, or run the runner as root".into(),
        });
    }
    if kptr >= 2 || (kptr == 1 && !root) {
        notes.push(ProfileNote {
            kind: NoteKind::KernelSymbolsHidden,
            message: format!("kptr_restrict is {kptr}: kernel addresses are hidden from this process, so kernel frames show as unknown; as root, `sysctl kernel.kptr_restrict=0`"),
        });
    }
    // Ask perf whether the CPU's cycle counter works here; in most VMs it does not.
    let cycles = format!("cycles{suffix}");
    let mut stat = launch_perf(
        "perf stat",
        &perf,
        args(["stat", "-x,", "-e", &cycles, "--", "true"]),
        "stat",
        |launch| launch,
    )?;
    let exited = stat
        .wait_until(Instant::now() + STAT_TIMEOUT)
        .map_err(|e| ProfileError::Failed {
            stage: "stat",
            message: e.to_string(),
        })?;
    let said = stat.stderr();
    let counted = exited
        && stat.status().is_some_and(|s| s.success())
        && said
            .lines()
            .any(|l| l.contains("cycles") && l.starts_with(|c: char| c.is_ascii_digit()));
    let event = if counted {
        cycles
    } else {
        notes.push(ProfileNote {
            kind: NoteKind::SoftwareClock,
            message: "the CPU's cycle counter is not available here (usual in a virtual machine), so samples come from the cpu-clock timer: the same functions show up, with timer-tick resolution".into(),
        });
        format!("cpu-clock{suffix}")
    };
    Ok(Setup {
        perf,
        event,
        frequency,
        notes,
    })
}

/// A perf recording attached to one end.
#[derive(Debug)]
pub(crate) struct Recording {
    child: Child,
    data: PathBuf,
    perf: PathBuf,
    role: &'static str,
    /// perf's control pipe (we write `enable`) and its answer (`ack`).
    control: std::fs::File,
    ack: std::fs::File,
}

impl Recording {
    /// Starts `perf record -g` on the processes `pids` (one end, or every
    /// writer of a shared pipe: perf takes a list), writing `dir/ROLE.perf.data`.
    pub(crate) fn attach(
        setup: &Setup,
        pids: &[u32],
        role: &'static str,
        dir: &Path,
    ) -> Result<Recording, ProfileError> {
        let data = dir.join(format!("{role}.perf.data"));
        let failed = |e: std::io::Error| ProfileError::Failed {
            stage: "record",
            message: e.to_string(),
        };
        // perf starts with its events off (-D -1) and turns them on when told on
        // its control pipe, answering `ack` once they count: that answer, not a
        // guess from the outside, says the recording has begun. The launcher
        // hands it the pipe to read as its source (fd 6) and the one to answer
        // on as its destination (fd 7), and keeps no copy of either.
        let (control_read, control) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
            .map_err(|e| failed(e.into()))?;
        let (ack, ack_write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
            .map_err(|e| failed(e.into()))?;
        // --no-buildid-cache: the report is made at once from the binaries in
        // place, so perf need not copy every binary it saw into ~/.debug (which
        // grows by a copy of each new build, and is never cleaned).
        let mut record = args(["record", "-q", "--no-buildid-cache", "-D", "-1"]);
        record.push(format!("--control=fd:{SRC_FD},{DST_FD}").into());
        record.extend(args(["-g", "-e", &setup.event, "-F"]));
        record.push(setup.frequency.to_string().into());
        record.push("-o".into());
        record.push(data.clone().into());
        record.push("-p".into());
        record.push(
            pids.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(",")
                .into(),
        );
        let child = launch_perf(
            &format!("perf record of the {role}"),
            &setup.perf,
            record,
            "record",
            |launch| launch.source(control_read).destination(ack_write),
        )?;
        Ok(Recording {
            child,
            data,
            perf: setup.perf.clone(),
            role,
            control: control.into(),
            ack: ack.into(),
        })
    }

    /// Turns perf's events on and waits, until `deadline`, for its `ack`: from
    /// then on everything the end does is sampled. Returns whether perf
    /// answered (a perf that died or hangs does not; its end then runs
    /// unrecorded and `finish` says why).
    fn enable(&mut self, deadline: Instant) -> bool {
        use std::io::Write as _;
        if self.control.write_all(b"enable\n").is_err() {
            return false;
        }
        let mut answer = Vec::new();
        // perf answers `ack\n` and a NUL.
        while !answer.contains(&b'\n') {
            let left = deadline.saturating_duration_since(Instant::now());
            let timeout = rustix::time::Timespec::try_from(left).ok();
            let mut fds = [rustix::event::PollFd::new(
                &self.ack,
                rustix::event::PollFlags::IN,
            )];
            match rustix::event::poll(&mut fds, timeout.as_ref()) {
                Ok(0) => return false,
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(_) => return false,
            }
            let mut byte = [0u8; 16];
            match self.ack.read(&mut byte) {
                Ok(0) | Err(_) => return false,
                Ok(n) => answer.extend_from_slice(&byte[..n]),
            }
        }
        answer.starts_with(b"ack")
    }

    /// Stops a recording that never began and says what perf said, if anything.
    fn stop_for_reason(&mut self) -> String {
        self.child.kill();
        self.child.stderr().trim().to_string()
    }

    /// Stops the recording now (its end was killed or cancelled).
    pub(crate) fn abandon(mut self) {
        self.child.kill();
    }

    /// Waits for perf to finish (its target has exited), folds the stacks and
    /// draws the flame graph.
    pub(crate) fn finish(mut self) -> Result<EndProfile, ProfileError> {
        // perf stops by itself when its target exits, but not always: when the
        // target dies while perf is still setting up, perf can wait for ever.
        // SIGINT then makes it write the file's header and exit, as Ctrl-C would;
        // a kill would leave a header that says "no data" and nothing to read.
        let started = Instant::now();
        let mut interrupted = false;
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if started.elapsed() < FINISH_GRACE => {}
                Ok(None) if !interrupted => {
                    if let Some(pid) = rustix::process::Pid::from_raw(self.child.pid() as i32) {
                        let _ = rustix::process::kill_process(pid, rustix::process::Signal::INT);
                    }
                    interrupted = true;
                }
                Ok(None) if started.elapsed() < FINISH_GRACE + FINISH_AFTER_INTERRUPT => {}
                _ => {
                    self.child.kill();
                    break self.child.status().ok_or_else(|| ProfileError::Failed {
                        stage: "record",
                        message: "perf could not be reaped".into(),
                    })?;
                }
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        // An interrupted perf exits with a failure but wrote a whole file.
        let status_ok = status.success() || interrupted;
        let stderr = self.child.stderr();
        let written = std::fs::metadata(&self.data).map_or(0, |m| m.len());
        if written == 0 {
            if status_ok {
                // Attached after the end had already exited: nothing to show.
                return Ok(EndProfile::default());
            }
            return Err(ProfileError::Failed {
                stage: "record",
                message: stderr.trim().to_string(),
            });
        }
        let mut script = args(["script", "-i"]);
        script.push(self.data.clone().into());
        let mut child = launch_perf(
            &format!("perf script of the {}", self.role),
            &self.perf,
            script,
            "script",
            |launch| launch.stdout(Stdio::piped()),
        )?;
        let script_failed = |e: std::io::Error| ProfileError::Failed {
            stage: "script",
            message: e.to_string(),
        };
        let mut stdout = Vec::new();
        if let Some(mut pipe) = child.take_stdout() {
            pipe.read_to_end(&mut stdout).map_err(script_failed)?;
        }
        // Its stdout has ended: it has exited, or is about to.
        child
            .wait_until(Instant::now() + FINISH_AFTER_INTERRUPT)
            .map_err(script_failed)?;
        match child.status() {
            Some(status) if status.success() => {}
            status => {
                return Err(ProfileError::Failed {
                    stage: "script",
                    message: format!(
                        "exited with {}",
                        status.map_or_else(|| "no status".into(), |s| s.to_string())
                    ),
                })
            }
        }
        // A sample starts at an unindented line; its stack lines are indented.
        let samples = stdout
            .split(|&b| b == b'\n')
            .filter(|line| line.first().is_some_and(|b| !b.is_ascii_whitespace()))
            .count() as u64;
        let mut folded = Vec::new();
        let mut folder = inferno::collapse::perf::Folder::from({
            let mut options = inferno::collapse::perf::Options::default();
            options.annotate_kernel = true;
            options
        });
        folder
            .collapse(&stdout[..], &mut folded)
            .map_err(|e| ProfileError::Failed {
                stage: "script",
                message: format!("folding its stacks: {e}"),
            })?;
        let folded = String::from_utf8_lossy(&folded);
        let mut profile = shares(&folded);
        profile.samples = samples;
        profile.flamegraph_svg = flame_graph(&folded, self.role)?;
        Ok(profile)
    }
}

/// Counts self and inclusive shares from folded stacks (`comm;f1;f2;leaf N`,
/// kernel frames ending in `_[k]`). The first frame is the command name.
pub fn shares(folded: &str) -> EndProfile {
    use std::collections::{HashMap, HashSet};
    let mut children: HashMap<&str, u64> = HashMap::new();
    let mut own: HashMap<&str, u64> = HashMap::new();
    let mut total = 0u64;
    for line in folded.lines() {
        let Some((stack, count)) = line.rsplit_once(' ') else {
            continue;
        };
        let Ok(count) = count.trim().parse::<u64>() else {
            continue;
        };
        total += count;
        let frames: Vec<&str> = stack.split(';').skip(1).collect();
        // A recursive function counts once per sample.
        let unique: HashSet<&str> = frames.iter().copied().collect();
        for frame in unique {
            *children.entry(frame).or_default() += count;
        }
        if let Some(leaf) = frames.last() {
            *own.entry(leaf).or_default() += count;
        }
    }
    let percent = |n: u64| {
        if total == 0 {
            0.0
        } else {
            (10_000.0 * n as f64 / total as f64).round() / 100.0
        }
    };
    let mut all: Vec<FunctionShare> = children
        .iter()
        .map(|(frame, &count)| {
            let (symbol, kernel) = match frame.strip_suffix("_[k]") {
                // The vDSO is the kernel's code mapped into the process and run
                // in user mode (a user-space-only profile samples it), though
                // the collapser marks it as the kernel's.
                Some(name) if name.contains("[vdso]") => (name, false),
                Some(name) => (name, true),
                None => (*frame, false),
            };
            FunctionShare {
                symbol: symbol.to_string(),
                kernel,
                children_percent: percent(count),
                self_percent: percent(own.get(frame).copied().unwrap_or(0)),
            }
        })
        .collect();
    all.sort_by(|a, b| {
        b.children_percent
            .total_cmp(&a.children_percent)
            .then(b.self_percent.total_cmp(&a.self_percent))
            .then(a.symbol.cmp(&b.symbol))
    });
    EndProfile {
        samples: 0,
        weight: total,
        // `[unknown]` is a frame perf could not name (user code without frame
        // pointers): in the flame graph, not in the list.
        functions: all
            .iter()
            .filter(|f| f.symbol != "[unknown]")
            .take(LISTED)
            .cloned()
            .collect(),
        all,
        flamegraph_svg: String::new(),
    }
}

/// The flame graph of `folded`, scripts removed.
fn flame_graph(folded: &str, role: &str) -> Result<String, ProfileError> {
    if folded.trim().is_empty() {
        return Ok(String::new());
    }
    let mut options = inferno::flamegraph::Options::default();
    options.title = format!("{role}: where the time goes");
    options.count_name = "samples".into();
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options, folded.lines(), &mut svg).map_err(|e| {
        ProfileError::Failed {
            stage: "script",
            message: format!("drawing the flame graph: {e}"),
        }
    })?;
    Ok(sanitize_svg(&String::from_utf8_lossy(&svg)))
}

/// Removes `<script>` elements and `on...=` event-handler attributes, so the SVG
/// is a picture only (a strict CSP would refuse its scripts anyway).
pub(crate) fn sanitize_svg(svg: &str) -> String {
    let mut out = String::with_capacity(svg.len());
    let mut rest = svg;
    while let Some(start) = rest.find("<script") {
        out.push_str(&rest[..start]);
        rest = match rest[start..].find("</script>") {
            Some(end) => &rest[start + end + "</script>".len()..],
            None => "",
        };
    }
    out.push_str(rest);
    strip_handlers(&out)
}

/// Drops every ` onNAME="..."` (or '...') attribute.
fn strip_handlers(svg: &str) -> String {
    let bytes = svg.as_bytes();
    let mut out = String::with_capacity(svg.len());
    let mut i = 0;
    let mut copied = 0;
    while i + 3 < bytes.len() {
        let starts_handler = bytes[i].is_ascii_whitespace()
            && bytes[i + 1].eq_ignore_ascii_case(&b'o')
            && bytes[i + 2].eq_ignore_ascii_case(&b'n')
            && bytes[i + 3].is_ascii_alphabetic();
        if starts_handler {
            let mut j = i + 3;
            while j < bytes.len() && bytes[j].is_ascii_alphanumeric() {
                j += 1;
            }
            if j + 1 < bytes.len()
                && bytes[j] == b'='
                && (bytes[j + 1] == b'"' || bytes[j + 1] == b'\'')
            {
                let quote = bytes[j + 1];
                if let Some(close) = bytes[j + 2..].iter().position(|&b| b == quote) {
                    out.push_str(&svg[copied..i]);
                    i = j + 2 + close + 1;
                    copied = i;
                    continue;
                }
            }
        }
        i += 1;
    }
    out.push_str(&svg[copied..]);
    out
}

/// Both ends' profiles, what was compromised, and the article's figures beside them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileReport {
    /// How the machine was sampled.
    #[serde(flatten)]
    pub setup: Setup,
    /// The writer's profile.
    pub writer: EndProfile,
    /// The reader's profile.
    pub reader: EndProfile,
    /// The article's writer profile of this step next to this one's (inclusive
    /// shares, through the 5.17 -> 6.x renames), when the article has one.
    pub comparison: Option<Vec<crate::profile::article::ComparedRow>>,
    /// Milliseconds spent turning the recordings into this report.
    pub processing_ms: f64,
}

/// Both ends' recordings of one run.
#[derive(Debug)]
pub(crate) struct Session {
    setup: Setup,
    writer: Recording,
    reader: Recording,
}

impl Session {
    /// Attaches to both ends (`pids`: writer, reader), keeping data in `dir`.
    /// The ends are stopped (SIGSTOP) until both perfs have their events open,
    /// so even a run of a few milliseconds is recorded from its start.
    pub(crate) fn attach(
        setup: Setup,
        pids: (u32, u32),
        dir: &Path,
    ) -> Result<Session, ProfileError> {
        Self::attach_groups(setup, [("writer", &[pids.0]), ("reader", &[pids.1])], dir)
    }

    /// Attaches to two groups of processes, each recorded as one profile under
    /// its role (a shared pipe's writers, and its readers), keeping data in
    /// `dir`. Every process is stopped (SIGSTOP) until both perfs count, and
    /// continued (SIGCONT) whatever happens: one that stopped itself to wait
    /// for perf is let go here too.
    pub(crate) fn attach_groups(
        setup: Setup,
        groups: [(&'static str, &[u32]); 2],
        dir: &Path,
    ) -> Result<Session, ProfileError> {
        let ends: Vec<rustix::process::Pid> = groups
            .iter()
            .flat_map(|(_, pids)| pids.iter())
            .filter_map(|&pid| rustix::process::Pid::from_raw(pid as i32))
            .collect();
        for &pid in &ends {
            // An end that already exited cannot be stopped; perf will say so.
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::STOP);
        }
        let attached = Self::attach_stopped(setup, groups, dir);
        for &pid in &ends {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::CONT);
        }
        attached
    }

    fn attach_stopped(
        setup: Setup,
        [(writer_role, writers), (reader_role, readers)]: [(&'static str, &[u32]); 2],
        dir: &Path,
    ) -> Result<Session, ProfileError> {
        let writer = Recording::attach(&setup, writers, writer_role, dir)?;
        let reader = match Recording::attach(&setup, readers, reader_role, dir) {
            Ok(reader) => reader,
            Err(err) => {
                writer.abandon();
                return Err(err);
            }
        };
        // perf needs a moment (longer on a loaded machine); the ends wait,
        // stopped, until both perfs say their events count.
        let (mut writer, mut reader) = (writer, reader);
        let deadline = Instant::now() + Duration::from_secs(10);
        if !(writer.enable(deadline) && reader.enable(deadline)) {
            let message = format!(
                "perf did not start recording within 10 s: {}",
                [writer.stop_for_reason(), reader.stop_for_reason()]
                    .into_iter()
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
                    .join("; ")
            );
            return Err(ProfileError::Failed {
                stage: "record",
                message,
            });
        }
        Ok(Session {
            setup,
            writer,
            reader,
        })
    }

    /// Stops both recordings without a report.
    pub(crate) fn abandon(self) {
        self.writer.abandon();
        self.reader.abandon();
    }

    /// The report, once both ends have exited: `step` picks the article's figures.
    pub(crate) fn finish(self, step: &str) -> Result<ProfileReport, ProfileError> {
        let started = Instant::now();
        let roles = (self.writer.role, self.reader.role);
        // The two ends' post-processing is independent: do it side by side.
        let reader = std::thread::spawn(move || self.reader.finish());
        let writer = self.writer.finish()?;
        let reader = reader.join().expect("the reader's profile thread")?;
        let mut setup = self.setup;
        for (role, end) in [(roles.0, &writer), (roles.1, &reader)] {
            if end.weight == 0 {
                let message = if setup.event.ends_with(":u") {
                    format!("the {role} produced no samples: its time goes into system calls, and only user space may be sampled here")
                } else {
                    format!("the {role} produced no samples: the run was too short for {} samples a second; give it more bytes or seconds", setup.frequency)
                };
                setup.notes.push(ProfileNote {
                    kind: NoteKind::NoSamples,
                    message,
                });
            }
        }
        Ok(ProfileReport {
            comparison: crate::profile::article::compare(step, &writer),
            setup,
            writer,
            reader,
            processing_ms: started.elapsed().as_secs_f64() * 1000.0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folded_stacks_give_self_and_inclusive_shares() {
        let folded = "writer;write;entry_SYSCALL_64_[k];anon_pipe_write_[k];copy_page_from_iter_[k];_copy_from_iter_[k] 6\n\
                      writer;write;entry_SYSCALL_64_[k];anon_pipe_write_[k];__alloc_pages_noprof_[k] 3\n\
                      writer;main 1\n";
        let p = shares(folded);
        assert_eq!(p.weight, 10);
        let get = |name: &str| p.all.iter().find(|f| f.symbol == name).unwrap();
        assert_eq!(get("anon_pipe_write").children_percent, 90.0);
        assert_eq!(get("anon_pipe_write").self_percent, 0.0);
        assert!(get("anon_pipe_write").kernel);
        assert_eq!(get("_copy_from_iter").self_percent, 60.0);
        assert_eq!(get("main").self_percent, 10.0);
        assert!(!get("write").kernel);
        assert_eq!(p.functions[0].children_percent, 90.0, "highest first");
        assert_eq!(p.functions.last().unwrap().symbol, "main");
        assert!(
            p.all.iter().all(|f| f.symbol != "writer"),
            "the command name is not a function"
        );
    }

    #[test]
    fn the_vdso_is_user_space_though_the_collapser_marks_it() {
        let p = shares("reader;main;[[vdso]]_[k] 1\nreader;main;read_[k] 1\n");
        let get = |name: &str| p.all.iter().find(|f| f.symbol == name).unwrap();
        assert!(!get("[[vdso]]").kernel);
        assert!(get("read").kernel);
    }

    #[test]
    fn sanitized_svg_has_no_script_or_handler() {
        let svg = r#"<svg onload="init(evt)" width="10"><script type="text/ecmascript"><![CDATA[ alert(1) ]]></script><g onmouseover='s(this)' class="func_g"><text>onion = 1</text></g></svg>"#;
        let clean = sanitize_svg(svg);
        assert_eq!(
            clean,
            r#"<svg width="10"><g class="func_g"><text>onion = 1</text></g></svg>"#
        );
    }

    #[test]
    fn a_missing_perf_is_named() {
        let err = probe(Path::new("/nonexistent/perf"), DEFAULT_FREQUENCY).unwrap_err();
        assert_eq!(
            err,
            ProfileError::NotInstalled {
                perf: "/nonexistent/perf".into()
            }
        );
        assert!(err.to_string().contains("apt-get install linux-perf"));
    }
}
