//! What costs nothing to count: `getrusage` for this process, `/proc/PID`
//! for another, `/proc/PID/sched` for CPU migrations.

/// What is read before and after from `getrusage` and `/proc/self/sched`.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Snapshot {
    pub(super) voluntary: u64,
    pub(super) involuntary: u64,
    pub(super) minor: u64,
    pub(super) major: u64,
    pub(super) migrations: Option<u64>,
}

impl Snapshot {
    /// This process, or process `pid` from its /proc files (which a process that
    /// has exited keeps until it is reaped).
    pub(super) fn of(pid: Option<i32>) -> Snapshot {
        match pid {
            None => Snapshot::now(),
            Some(pid) => Snapshot::of_pid(pid),
        }
    }

    fn of_pid(pid: i32) -> Snapshot {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let field = |name: &str| {
            status.lines().find_map(|line| {
                let (key, value) = line.split_once(':')?;
                (key == name).then(|| value.trim().parse().ok()).flatten()
            })
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // The fields after the parenthesised name: state is the first, minflt the
        // eighth, majflt the tenth (proc(5) numbers them 3, 10 and 12).
        let after: Vec<u64> = stat
            .rsplit_once(')')
            .map(|(_, rest)| {
                rest.split_whitespace()
                    .skip(1)
                    .map(|v| v.parse().unwrap_or(0))
                    .collect()
            })
            .unwrap_or_default();
        let at = |i: usize| after.get(i).copied().unwrap_or(0);
        Snapshot {
            voluntary: field("voluntary_ctxt_switches").unwrap_or(0),
            involuntary: field("nonvoluntary_ctxt_switches").unwrap_or(0),
            minor: at(6),
            major: at(8),
            migrations: sched_migrations_of(&format!("/proc/{pid}/sched")),
        }
    }

    fn now() -> Snapshot {
        // SAFETY: getrusage fills the struct we pass; a zeroed rusage is valid.
        let usage = unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            libc::getrusage(libc::RUSAGE_SELF, &mut usage);
            usage
        };
        Snapshot {
            voluntary: usage.ru_nvcsw as u64,
            involuntary: usage.ru_nivcsw as u64,
            minor: usage.ru_minflt as u64,
            major: usage.ru_majflt as u64,
            migrations: sched_migrations(),
        }
    }
}

/// `se.nr_migrations` of this process, from `/proc/self/sched` (absent on
/// kernels built without scheduler debugging).
pub(crate) fn sched_migrations() -> Option<u64> {
    sched_migrations_of("/proc/self/sched")
}

/// `se.nr_migrations` from a `/proc/PID/sched` file.
pub(super) fn sched_migrations_of(path: &str) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        (name.trim() == "se.nr_migrations")
            .then(|| value.trim().parse().ok())
            .flatten()
    })
}
