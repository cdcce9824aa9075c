//! The children of one run, from start to reaping: started in order through
//! [`super::launch`], watched while they run (a callback samples them and may
//! ask to stop), the survivors given a grace once the run is over, every one
//! reaped, and each one's outcome read.
//!
//! The IPC lab's and the latency lab's harnesses both run on it: two ends (or
//! a one-process experiment, a "pair" of one) that must end together. What
//! ends a run differs: an IPC run is over when an end fails or all have
//! exited; a latency run as soon as either end exits, since its partner may
//! wait for a message that will never come ([`Ending`]).
//!
//! The watch sleeps in `poll` on the children's pidfds, so an exit is seen at
//! once without waking hundreds of times a second on a machine whose CPUs the
//! children need; without pidfds (Linux before 5.3) it sleeps one tick at a
//! time.

use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;

use super::launch::{Child, Launch, LaunchError, Silent};

/// When a run is over and its survivors get their grace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// As soon as any child exits, however it exits.
    AnyExit,
    /// When a child fails, or once all have exited (a child that succeeds
    /// leaves the others to finish their work).
    FailureOrAll,
}

impl Ending {
    /// Whether the children, as last reaped, have ended the run.
    fn reached(self, children: &[Child]) -> bool {
        let exited = |c: &Child| c.status().is_some();
        let failed = |c: &Child| c.status().is_some_and(|s| !s.success());
        match self {
            Ending::AnyExit => children.iter().any(exited),
            Ending::FailureOrAll => children.iter().any(failed) || children.iter().all(exited),
        }
    }
}

/// How a run's children are watched.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Policy {
    /// How often the callback is called while the children run (an exit wakes
    /// the watch at once).
    pub(crate) tick: Duration,
    /// How long the run may take before every child is killed.
    pub(crate) timeout: Duration,
    /// When the run is over.
    pub(crate) ending: Ending,
    /// How long the children still running when the run is over may take to
    /// exit by themselves before they are killed (zero: killed at once).
    pub(crate) grace: Duration,
}

/// What the callback says at each tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Keep watching.
    Go,
    /// Kill every child and return [`Supervised::Stopped`].
    Stop,
}

/// One reaped child: how it ended and what it said.
#[derive(Debug)]
pub(crate) struct Reaped<T> {
    /// Its outcome line, or why there is none.
    pub(crate) outcome: Result<T, Silent>,
    /// Whether it exited with success.
    pub(crate) success: bool,
    /// Its exit status in words (`exit code 1`, `killed by signal 9`).
    pub(crate) status: String,
    /// Whether it exited by itself; false when it was killed after the grace
    /// (its death is then not the failure to report).
    pub(crate) by_itself: bool,
}

/// How a supervised run ended.
#[derive(Debug)]
pub(crate) enum Supervised<T> {
    /// The run was over: every child, in the order started.
    Ended(Vec<Reaped<T>>),
    /// The callback asked to stop; every child was killed and reaped.
    Stopped,
    /// The run outlasted [`Policy::timeout`]; every child was killed and
    /// reaped.
    TimedOut,
}

/// A child that could not be started or waited for; the others were killed and
/// reaped.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SuperviseError {
    /// The child at `index` (in the order given) could not be started.
    #[error("cannot start child {index}: {source}")]
    Start {
        /// Its place in the order given.
        index: usize,
        /// Why.
        source: LaunchError,
    },
    /// The child at `index` could not be waited for.
    #[error("cannot wait for child {index}: {source}")]
    Wait {
        /// Its place in the order given.
        index: usize,
        /// Why.
        source: std::io::Error,
    },
}

/// Starts `launches` in order, watches them by `policy` with `on_tick` called
/// at each tick (to sample them, and to ask for a stop), and reaps them all.
///
/// Blocking. Call it from a thread that lives until it returns: the children
/// die with the thread that started them (see [`super::launch`]). On every
/// path out, error included, no child is left running.
pub(crate) fn supervise<T: DeserializeOwned>(
    launches: Vec<Launch<'_>>,
    policy: &Policy,
    mut on_tick: impl FnMut() -> Flow,
) -> Result<Supervised<T>, SuperviseError> {
    // A failed start drops (kills and reaps) those already started.
    let mut children = launches
        .into_iter()
        .enumerate()
        .map(|(index, launch)| {
            launch
                .spawn()
                .map_err(|source| SuperviseError::Start { index, source })
        })
        .collect::<Result<Vec<Child>, _>>()?;
    match watch(&mut children, policy, &mut on_tick)? {
        Watched::Over => {}
        Watched::Stopped => return Ok(Supervised::Stopped),
        Watched::TimedOut => return Ok(Supervised::TimedOut),
    }
    let by_itself = grace(&mut children, policy.grace)?;
    Ok(Supervised::Ended(
        children
            .into_iter()
            .zip(by_itself)
            .map(|(child, by_itself)| reap(child, by_itself))
            .collect(),
    ))
}

/// How [`watch`] came back.
enum Watched {
    Over,
    Stopped,
    TimedOut,
}

/// Watches `children` until the run is over, the callback stops it, or it times
/// out; on the last two every child is killed.
fn watch(
    children: &mut [Child],
    policy: &Policy,
    on_tick: &mut dyn FnMut() -> Flow,
) -> Result<Watched, SuperviseError> {
    let started = Instant::now();
    let pidfds = pidfds(children);
    let kill_all = |children: &mut [Child]| children.iter_mut().for_each(Child::kill);
    loop {
        for (index, child) in children.iter_mut().enumerate() {
            child
                .try_wait()
                .map_err(|source| SuperviseError::Wait { index, source })?;
        }
        if policy.ending.reached(children) {
            return Ok(Watched::Over);
        }
        if on_tick() == Flow::Stop {
            kill_all(children);
            return Ok(Watched::Stopped);
        }
        if started.elapsed() > policy.timeout {
            kill_all(children);
            return Ok(Watched::TimedOut);
        }
        sleep(children, pidfds.as_deref(), policy.tick);
    }
}

/// A pidfd per child, or none if the kernel has none for one of them.
fn pidfds(children: &[Child]) -> Option<Vec<OwnedFd>> {
    children
        .iter()
        .map(|child| {
            let pid = rustix::process::Pid::from_raw(child.pid() as i32)?;
            rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
        })
        .collect()
}

/// Sleeps one tick, or until a child still running exits.
fn sleep(children: &[Child], pidfds: Option<&[OwnedFd]>, tick: Duration) {
    let Some(pidfds) = pidfds else {
        std::thread::sleep(tick);
        return;
    };
    let mut running: Vec<rustix::event::PollFd<'_>> = pidfds
        .iter()
        .zip(children)
        .filter(|(_, child)| child.status().is_none())
        .map(|(fd, _)| rustix::event::PollFd::new(fd, rustix::event::PollFlags::IN))
        .collect();
    let tick = rustix::time::Timespec {
        tv_sec: tick.as_secs() as _,
        tv_nsec: tick.subsec_nanos() as _,
    };
    // EINTR or any other failure only means: look again.
    let _ = rustix::event::poll(&mut running, Some(&tick));
}

/// Gives the children still running `grace` to exit, kills those that do not;
/// whether each exited by itself.
fn grace(children: &mut [Child], grace: Duration) -> Result<Vec<bool>, SuperviseError> {
    let deadline = Instant::now() + grace;
    children
        .iter_mut()
        .enumerate()
        .map(|(index, child)| {
            child
                .wait_until(deadline)
                .map_err(|source| SuperviseError::Wait { index, source })
        })
        .collect()
}

/// Reads a reaped child's outcome.
fn reap<T: DeserializeOwned>(mut child: Child, by_itself: bool) -> Reaped<T> {
    Reaped {
        success: child.status().is_some_and(|s| s.success()),
        status: child.describe_status(),
        outcome: child.outcome::<T>(),
        by_itself,
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::*;
    use crate::process::launch::EndProgram;

    fn program(exe: &str) -> EndProgram {
        EndProgram {
            exe: exe.into(),
            prefix: Vec::new(),
        }
    }

    fn launch<'a>(program: &'a EndProgram, args: &[&str]) -> Launch<'a> {
        let args = args.iter().map(OsString::from).collect();
        Launch::program(program.exe.display().to_string(), program, args)
    }

    fn policy(ending: Ending, grace: Duration) -> Policy {
        Policy {
            tick: Duration::from_millis(10),
            timeout: Duration::from_secs(60),
            ending,
            grace,
        }
    }

    fn ended(supervised: Supervised<u32>) -> Vec<Reaped<u32>> {
        match supervised {
            Supervised::Ended(reaped) => reaped,
            other => panic!("the run should have ended by itself: {other:?}"),
        }
    }

    #[test]
    fn when_one_child_exits_the_other_is_killed_after_its_grace() {
        let (truth, sleep) = (program("/bin/true"), program("/bin/sleep"));
        let launches = vec![launch(&truth, &[]), launch(&sleep, &["600"])];
        let policy = policy(Ending::AnyExit, Duration::from_millis(50));
        let reaped = ended(supervise(launches, &policy, || Flow::Go).unwrap());
        assert!(reaped[0].by_itself && reaped[0].success);
        assert!(!reaped[1].by_itself && !reaped[1].success);
        assert_eq!(reaped[1].status, "killed by signal 9");
    }

    #[test]
    fn a_failed_child_ends_the_run_but_a_successful_one_leaves_the_other_to_finish() {
        let (falsity, truth, sleep) = (
            program("/bin/false"),
            program("/bin/true"),
            program("/bin/sleep"),
        );
        let policy = policy(Ending::FailureOrAll, Duration::ZERO);
        let failed = vec![launch(&falsity, &[]), launch(&sleep, &["600"])];
        let reaped = ended(supervise(failed, &policy, || Flow::Go).unwrap());
        assert_eq!(reaped[0].status, "exit code 1");
        assert!(!reaped[1].by_itself, "the sleeper is killed at once");
        let finished = vec![launch(&truth, &[]), launch(&sleep, &["0.2"])];
        let reaped = ended(supervise(finished, &policy, || Flow::Go).unwrap());
        assert!(reaped.iter().all(|r| r.by_itself && r.success));
    }

    #[test]
    fn each_child_s_outcome_line_is_read_and_a_silent_one_says_so() {
        let (sh, truth) = (program("/bin/sh"), program("/bin/true"));
        let launches = vec![launch(&sh, &["-c", "echo 42 >&3"]), launch(&truth, &[])];
        let policy = policy(Ending::FailureOrAll, Duration::ZERO);
        let reaped = ended(supervise(launches, &policy, || Flow::Go).unwrap());
        assert_eq!(reaped[0].outcome.as_ref().ok(), Some(&42));
        let silent = reaped[1].outcome.as_ref().unwrap_err();
        assert_eq!(silent.stderr, "it stopped without a report");
    }

    #[test]
    fn the_callback_is_called_while_the_children_run_and_can_stop_them() {
        let sleep = program("/bin/sleep");
        let launches = vec![launch(&sleep, &["600"]), launch(&sleep, &["600"])];
        let mut ticks = 0;
        let supervised =
            supervise::<u32>(launches, &policy(Ending::AnyExit, Duration::ZERO), || {
                ticks += 1;
                if ticks == 3 {
                    Flow::Stop
                } else {
                    Flow::Go
                }
            });
        assert!(matches!(supervised, Ok(Supervised::Stopped)));
        assert_eq!(ticks, 3);
    }

    #[test]
    fn a_run_that_outlasts_its_timeout_is_killed() {
        let sleep = program("/bin/sleep");
        let policy = Policy {
            timeout: Duration::from_millis(50),
            ..policy(Ending::AnyExit, Duration::ZERO)
        };
        let supervised = supervise::<u32>(vec![launch(&sleep, &["600"])], &policy, || Flow::Go);
        assert!(matches!(supervised, Ok(Supervised::TimedOut)));
    }

    #[test]
    fn a_child_that_cannot_start_is_named_by_its_place() {
        let (sleep, nowhere) = (program("/bin/sleep"), program("/nonexistent/pipebook"));
        let launches = vec![launch(&sleep, &["600"]), launch(&nowhere, &[])];
        let policy = policy(Ending::AnyExit, Duration::ZERO);
        let err = supervise::<u32>(launches, &policy, || Flow::Go).unwrap_err();
        assert!(
            matches!(err, SuperviseError::Start { index: 1, .. }),
            "{err}"
        );
    }
}
