//! Starting a child: the one way every process of a job is started, and the one
//! line it answers with.
//!
//! Every child gets the same descriptors, whatever its kind (an end of a pipe
//! step, an end of an IPC mechanism, the page inspector, a tool, perf):
//!
//! | fd | what |
//! |---|---|
//! | 0, 1 | as the caller says: a pipe step's ends read stdin and write stdout, as `./write \| ./read` do |
//! | 2 | piped: what a dying child said is shown with its failure |
//! | [`REPORT_FD`] (3) | the write end of its report pipe: it writes exactly one outcome line (JSON) there |
//! | [`CONTROL_FD`] (4) | the shared control page (a memfd), when the job has one |
//! | [`DATA_FD`] (5) | the data descriptor its mechanism hands over (a socket, one end of a pipe), when there is one |
//! | [`SRC_FD`] (6) | a file to read from (an IPC end's source; perf's command pipe), when there is one |
//! | [`DST_FD`] (7) | a file to write into (an IPC end's destination; perf's answers), when there is one |
//!
//! A child is started with `PR_SET_PDEATHSIG` = SIGKILL ([`dies_with_parent`]):
//! it dies when the *thread* that started it exits, so a killed harness leaves no
//! end behind. Start and reap
//! a child from one thread that lives at least as long as the child. Dropping a
//! [`Child`] kills and reaps it.

use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use serde::Serialize;

/// The child's end of its report pipe: one JSON line, its outcome.
pub(crate) const REPORT_FD: RawFd = 3;
/// The shared control page, when the job has one.
pub(crate) const CONTROL_FD: RawFd = 4;
/// The data descriptor a mechanism hands over, when there is one.
pub(crate) const DATA_FD: RawFd = 5;
/// A file the child reads from, when there is one.
pub(crate) const SRC_FD: RawFd = 6;
/// A file the child writes into, when there is one.
pub(crate) const DST_FD: RawFd = 7;

/// The program that acts as a child: `exe [prefix...] SUBCOMMAND ARGS...`
/// (`pipebench write ...`, or `pipebook end write ...` when the server starts
/// its own binary).
#[derive(Debug, Clone)]
pub struct EndProgram {
    /// Executable path.
    pub exe: PathBuf,
    /// Arguments before the subcommand (e.g. a hidden subcommand name).
    pub prefix: Vec<OsString>,
}

impl EndProgram {
    /// This very executable, with `prefix` before the child's subcommand.
    pub fn current_exe(prefix: &[&str]) -> std::io::Result<Self> {
        Ok(EndProgram {
            exe: std::env::current_exe()?,
            prefix: prefix.iter().map(OsString::from).collect(),
        })
    }
}

/// A child that could not be started.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// A pipe or a descriptor for the child could not be made.
    #[error("cannot prepare the {what}'s descriptors: {source}")]
    Descriptors {
        /// Which child.
        what: String,
        /// Why.
        source: std::io::Error,
    },
    /// The program could not be started.
    #[error("cannot start {exe} for the {what}: {source}")]
    Spawn {
        /// Which child.
        what: String,
        /// The executable.
        exe: String,
        /// Why.
        source: std::io::Error,
    },
    /// The child could not be waited for.
    #[error("cannot wait for the {what}: {source}")]
    Wait {
        /// Which child.
        what: String,
        /// Why.
        source: std::io::Error,
    },
}

/// A child that ended without an outcome line, or with one that does not read:
/// it died (a signal, a crash) before it could say why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Silent {
    /// Its exit status, in words (`exit code 1`, `killed by signal 9`).
    pub status: String,
    /// What it wrote on stderr, one line, or a sentence saying it wrote nothing.
    pub stderr: String,
}

/// How to start one child: the program, its subcommand and arguments, and the
/// descriptors of the one map.
#[derive(Debug)]
pub(crate) struct Launch<'a> {
    /// Who this child is, for messages (`writer`, `consumer`, `page inspector`).
    pub what: String,
    program: &'a EndProgram,
    subcommand: Option<&'a str>,
    args: Vec<OsString>,
    stdin: Stdio,
    stdout: Stdio,
    control: Option<BorrowedFd<'a>>,
    data: Option<OwnedFd>,
    src: Option<OwnedFd>,
    dst: Option<OwnedFd>,
}

impl<'a> Launch<'a> {
    /// `program subcommand args...`, with stdin and stdout on /dev/null until told
    /// otherwise.
    pub(crate) fn new(
        what: impl Into<String>,
        program: &'a EndProgram,
        subcommand: &'a str,
        args: Vec<OsString>,
    ) -> Self {
        Launch {
            what: what.into(),
            program,
            subcommand: Some(subcommand),
            args,
            stdin: Stdio::null(),
            stdout: Stdio::null(),
            control: None,
            data: None,
            src: None,
            dst: None,
        }
    }

    /// Another program than pipebench (a tool of `pipebench tool`): `program
    /// args...`, no subcommand, with the same descriptor map (it may ignore its
    /// report fd: its caller judges it by its exit status).
    pub(crate) fn program(
        what: impl Into<String>,
        program: &'a EndProgram,
        args: Vec<OsString>,
    ) -> Self {
        Launch {
            what: what.into(),
            program,
            subcommand: None,
            args,
            stdin: Stdio::null(),
            stdout: Stdio::null(),
            control: None,
            data: None,
            src: None,
            dst: None,
        }
    }

    /// The child's stdin.
    pub(crate) fn stdin(mut self, stdin: impl Into<Stdio>) -> Self {
        self.stdin = stdin.into();
        self
    }

    /// The child's stdout.
    pub(crate) fn stdout(mut self, stdout: impl Into<Stdio>) -> Self {
        self.stdout = stdout.into();
        self
    }

    /// The control page, as [`CONTROL_FD`].
    pub(crate) fn control(mut self, control: BorrowedFd<'a>) -> Self {
        self.control = Some(control);
        self
    }

    /// A data descriptor, as [`DATA_FD`] (the parent's copy is closed once the
    /// child has its own).
    pub(crate) fn data(mut self, data: OwnedFd) -> Self {
        self.data = Some(data);
        self
    }

    /// A file to read from, as [`SRC_FD`] (moved: the parent keeps no copy).
    pub(crate) fn source(mut self, src: OwnedFd) -> Self {
        self.src = Some(src);
        self
    }

    /// A file to write into, as [`DST_FD`] (moved: the parent keeps no copy).
    pub(crate) fn destination(mut self, dst: OwnedFd) -> Self {
        self.dst = Some(dst);
        self
    }

    /// Starts the child.
    pub(crate) fn spawn(self) -> Result<Child, LaunchError> {
        let what = self.what;
        let descriptors = |source: std::io::Error| LaunchError::Descriptors {
            what: what.clone(),
            source,
        };
        let (report_read, report_write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
            .map_err(|e| descriptors(e.into()))?;
        // Copies numbered 100 and above, so that dup2 onto 3 to 7 in the child
        // can never clobber a source descriptor that happens to be one of them.
        let high = |fd: BorrowedFd<'_>| {
            rustix::io::fcntl_dupfd_cloexec(fd, 100).map_err(|e| descriptors(e.into()))
        };
        let report = high(report_write.as_fd())?;
        drop(report_write);
        let control = self.control.map(high).transpose()?;
        let data = self.data.as_ref().map(|fd| high(fd.as_fd())).transpose()?;
        drop(self.data);
        let src = self.src.as_ref().map(|fd| high(fd.as_fd())).transpose()?;
        drop(self.src);
        let dst = self.dst.as_ref().map(|fd| high(fd.as_fd())).transpose()?;
        drop(self.dst);
        let raw = |fd: &Option<OwnedFd>| fd.as_ref().map(AsRawFd::as_raw_fd);
        let map: [(Option<RawFd>, RawFd); 5] = [
            (Some(report.as_raw_fd()), REPORT_FD),
            (raw(&control), CONTROL_FD),
            (raw(&data), DATA_FD),
            (raw(&src), SRC_FD),
            (raw(&dst), DST_FD),
        ];
        let mut command = Command::new(&self.program.exe);
        command
            .args(&self.program.prefix)
            .args(self.subcommand)
            .args(self.args)
            .stdin(self.stdin)
            .stdout(self.stdout)
            .stderr(Stdio::piped());
        // SAFETY: between fork and exec the closure only calls dup2, which is
        // async-signal-safe, on values computed before the fork.
        unsafe {
            command.pre_exec(move || {
                for (from, to) in map {
                    if let Some(from) = from {
                        if libc::dup2(from, to) < 0 {
                            return Err(std::io::Error::last_os_error());
                        }
                    }
                }
                Ok(())
            });
        }
        // No orphans after a crash.
        dies_with_parent(&mut command);
        let mut child = command.spawn().map_err(|source| LaunchError::Spawn {
            what: what.clone(),
            exe: self.program.exe.display().to_string(),
            source,
        })?;
        drop((report, control, data, src, dst));
        // Both pipes are drained from the start, so a child that says a lot (the
        // page inspector's report is hundreds of KiB) never blocks on a full pipe
        // while its parent waits for it to exit.
        let report = drain(File::from(report_read));
        let stderr = child.stderr.take().map(drain);
        Ok(Child {
            child,
            report: Some(report),
            stderr,
            status: None,
        })
    }
}

/// A running child; dropping it kills and reaps it.
#[derive(Debug)]
pub struct Child {
    child: std::process::Child,
    report: Option<Drain>,
    stderr: Option<Drain>,
    status: Option<ExitStatus>,
}

/// A thread reading a pipe to its end.
type Drain = std::thread::JoinHandle<String>;

fn drain(mut from: impl Read + Send + 'static) -> Drain {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = from.read_to_string(&mut text);
        text
    })
}

impl Child {
    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its exit status, once reaped.
    pub fn status(&self) -> Option<ExitStatus> {
        self.status
    }

    /// Reaps it if it has exited; its status when it has.
    pub fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        if self.status.is_none() {
            self.status = self.child.try_wait()?;
        }
        Ok(self.status)
    }

    /// Waits for it to exit, at most until `deadline`; kills it then. Returns
    /// whether it exited by itself.
    pub(crate) fn wait_until(&mut self, deadline: Instant) -> std::io::Result<bool> {
        while self.try_wait()?.is_none() {
            if Instant::now() >= deadline {
                self.kill();
                return Ok(false);
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        Ok(true)
    }

    /// Kills it (if it still runs) and reaps it.
    pub fn kill(&mut self) {
        if self.status.is_none() {
            let _ = self.child.kill();
            self.status = self.child.wait().ok();
        }
    }

    /// Its outcome line, read once it has exited: the value it wrote on
    /// [`REPORT_FD`], or [`Silent`] when it wrote none that reads as a `T`
    /// (it died first). Whether the outcome is a success is the caller's to say.
    /// Call it once, after the child was reaped.
    pub fn outcome<T: DeserializeOwned>(&mut self) -> Result<T, Silent> {
        let join = |drain: Option<Drain>| {
            drain
                .map(|d| d.join().unwrap_or_default())
                .unwrap_or_default()
        };
        let stderr = join(self.stderr.take());
        let line = join(self.report.take());
        serde_json::from_str::<T>(line.trim()).map_err(|_| Silent {
            status: self.status.map_or_else(|| "still running".into(), describe),
            stderr: match stderr.trim() {
                "" => "it stopped without a report".into(),
                text => text.lines().collect::<Vec<_>>().join("; "),
            },
        })
    }

    /// What it wrote on stderr, whole: for a program that answers with no
    /// outcome line (perf), judged by this and its exit status. Call it once,
    /// after the child was reaped.
    pub fn stderr(&mut self) -> String {
        self.stderr
            .take()
            .map(|d| d.join().unwrap_or_default())
            .unwrap_or_default()
    }

    /// Its stdout, to read as it runs, when the launch piped it
    /// (`Launch::stdout(Stdio::piped())`).
    pub(crate) fn take_stdout(&mut self) -> Option<std::process::ChildStdout> {
        self.child.stdout.take()
    }

    /// Its exit status in words.
    pub(crate) fn describe_status(&self) -> String {
        self.status.map_or_else(|| "still running".into(), describe)
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A program on `PATH` passed over by [`lookup_on_path`], and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PassedOver {
    /// The candidate, as `PATH` names it.
    pub path: PathBuf,
    /// Why it is not started.
    pub why: String,
}

impl std::fmt::Display for PassedOver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.path.display(), self.why)
    }
}

/// The first program `name` on `PATH` that no other user could have put or
/// changed there: see [`lookup_on_path`]; `None` when there is none.
pub(crate) fn trusted_on_path(name: &str) -> Option<PathBuf> {
    lookup_on_path(name).ok()
}

/// The first program `name` on `PATH` that no other user could have put or
/// changed there, or every candidate passed over with why. A program another
/// local user planted is never started with this user's rights, root's
/// included. Passed over: an empty or relative entry (`.`, or `::`, means
/// another folder in every working directory); a folder that another user owns
/// or may write, or any folder above it (a sticky bit is not enough: others
/// may add a name there, a hard link to any program included); a symbolic link
/// whose target, or the target's folder, fails the same rules; a file that is
/// not a regular executable of this user or root, or that others may write.
pub(crate) fn lookup_on_path(name: &str) -> Result<PathBuf, Vec<PassedOver>> {
    let mut passed = Vec::new();
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        let candidate = dir.join(name);
        if std::fs::symlink_metadata(&candidate).is_err() {
            continue;
        }
        match vet_program(&dir, &candidate) {
            Ok(program) => return Ok(program),
            Err(why) => passed.push(PassedOver {
                path: candidate,
                why,
            }),
        }
    }
    Err(passed)
}

/// The program `candidate` (in `PATH`'s folder `dir`) to start, or why not.
fn vet_program(dir: &Path, candidate: &Path) -> Result<PathBuf, String> {
    use std::os::unix::fs::MetadataExt;
    if !dir.is_absolute() {
        return Err(format!(
            "PATH entry {:?} is relative: it names another folder in every working directory",
            dir.display().to_string()
        ));
    }
    closed_folder(dir)?;
    let meta = std::fs::symlink_metadata(candidate).map_err(|e| e.to_string())?;
    let program = if meta.file_type().is_symlink() {
        let target = candidate
            .canonicalize()
            .map_err(|e| format!("a symbolic link that leads nowhere usable: {e}"))?;
        let folder = target.parent().unwrap_or(Path::new("/"));
        closed_folder(folder).map_err(|why| {
            format!(
                "a symbolic link to {}, whose folder: {why}",
                target.display()
            )
        })?;
        target
    } else {
        candidate.to_path_buf()
    };
    let meta = std::fs::symlink_metadata(&program).map_err(|e| e.to_string())?;
    let (mode, uid) = (meta.mode(), meta.uid());
    let euid = rustix::process::geteuid().as_raw();
    let what = if program == candidate {
        String::new()
    } else {
        format!("its target {} is ", program.display())
    };
    if !meta.is_file() || mode & 0o111 == 0 {
        return Err(format!("{what}not an executable regular file"));
    }
    if uid != euid && uid != 0 {
        return Err(format!(
            "{what}owned by uid {uid}, neither root nor this user"
        ));
    }
    if mode & 0o022 != 0 {
        return Err(format!(
            "{what}writable by others (mode {:04o})",
            mode & 0o7777
        ));
    }
    Ok(program)
}

/// Whether `dir`, every folder above it, and the same for where its links
/// lead, are folders only root or this user may change (no sticky exception:
/// in a sticky folder anyone may still add a name).
fn closed_folder(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let real = dir
        .canonicalize()
        .map_err(|e| format!("folder {} cannot be resolved: {e}", dir.display()))?;
    let euid = rustix::process::geteuid().as_raw();
    for folder in dir.ancestors().chain(real.ancestors()) {
        if folder.as_os_str().is_empty() {
            continue;
        }
        let meta = std::fs::symlink_metadata(folder)
            .map_err(|e| format!("folder {}: {e}", folder.display()))?;
        let (mode, uid) = (meta.mode(), meta.uid());
        if uid != euid && uid != 0 {
            return Err(format!(
                "folder {} belongs to uid {uid}, who could put any program there",
                folder.display()
            ));
        }
        if meta.is_dir() && mode & 0o022 != 0 {
            return Err(format!(
                "folder {} may be written by others (mode {:04o})",
                folder.display(),
                mode & 0o7777
            ));
        }
    }
    Ok(())
}

/// Makes the command's process die with the thread that starts it
/// (`PR_SET_PDEATHSIG` = SIGKILL): a runner killed mid-run leaves no child
/// behind (an end, perf, the page inspector). Start the command from a thread
/// that lives until the child has exited.
fn dies_with_parent(command: &mut Command) -> &mut Command {
    let parent = rustix::process::getpid();
    // SAFETY: prctl and getppid are async-signal-safe and touch only the child.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent died before the prctl: nobody will signal us.
            if rustix::process::getppid() != Some(parent) {
                return Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
            }
            Ok(())
        })
    }
}

/// An exit status in words: `exit code 1`, `killed by signal 9`.
pub fn describe(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        _ => status.to_string(),
    }
}

/// The child's side: writes the one outcome line on `fd` (normally
/// [`REPORT_FD`]). Only the first call in a process writes; the descriptor is
/// taken over and closed here.
pub(crate) fn send_outcome<T: Serialize>(fd: RawFd, outcome: &T) -> std::io::Result<()> {
    // Exactly one outcome per process: a failure to send the report must not
    // send again on an fd that is closed by then (and may have been reused).
    static SENT: AtomicBool = AtomicBool::new(false);
    if SENT.swap(true, Ordering::SeqCst) {
        return Ok(());
    }
    // SAFETY: the parent hands this fd over for exactly this purpose; we own it
    // now, and the flag above makes this the only place that ever takes it.
    let mut file = unsafe { File::from_raw_fd(fd) };
    let line = serde_json::to_string(outcome).expect("outcomes serialise");
    writeln!(file, "{line}")
}
