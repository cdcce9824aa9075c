//! Counted, not guessed: what the kernel did for this process over a window.
//!
//! An end opens a [`Counting`] on itself before its loop and closes it after, so
//! the counts cover exactly its work. Counting mode only, nothing is sampled.
//!
//! - Always (any user, any `perf_event_paranoid`): context switches, voluntary and
//!   involuntary, and page faults, minor and major, from `getrusage`, which is
//!   exact per process; CPU migrations from `/proc/self/sched` where the kernel
//!   has it (or from perf where kernel counting is permitted). perf's software
//!   events are no use here unprivileged: at paranoid 2 they must exclude the
//!   kernel, and a context switch or a migration happens in the kernel, so they
//!   read 0.
//! - Where permitted (root, `CAP_PERFMON`, or paranoid -1, with tracefs mounted)
//!   and asked ([`Request::trace_syscalls`], `--trace-syscalls`, in the page
//!   "Trace kernel events"): kernel tracepoints counted for this process, through
//!   `perf_event_open` ([`perf_event`], the perf-event2 crate):
//!   `kmem:mm_page_alloc` and `kmem:mm_page_free`, `sched:sched_waking` (fired in
//!   the waker, so it counts the wakeups this process issued), `ipi:ipi_send_cpu`,
//!   `tlb:tlb_flush`, and `syscalls:sys_enter_*` for the data calls, a
//!   cross-check of the calls the end counts itself.
//! - Why only when asked: a counted tracepoint costs every time it fires, and
//!   they fire on the blocking steps' hot path. The page events fire on every
//!   page (about half a million per GiB a copying step moves: they took about a
//!   tenth of write-read's throughput); a wakeup, its IPI and the TLB flush of a
//!   switch fire at every sleep, tens of thousands of times per GiB, on the
//!   path that wakes the other end, which is where a blocking step spends its
//!   time: measured on write-read (2 GiB, 15 alternating pairs), counting those
//!   three took 7% of the wall time. The free counts above cost nothing
//!   measurable, so they are taken in every run; a run asked to trace says so
//!   with its figure.
//! - Where they are counted matters for speed too. A counter opened on a task is
//!   scheduled out and in with it at every context switch (about 3% of a copying
//!   step). So an end pinned to one CPU (every end is) counts its tracepoints on
//!   that CPU instead, each filtered to its own thread (`common_pid`), which
//!   counts the same events with nothing on the task; it proves the filter first
//!   on one wakeup of its own, and where it cannot (no privilege for a CPU-wide
//!   event, a PID namespace) it counts on the task as before. With nothing asked,
//!   no perf event is opened at all: CPU migrations come from `/proc/self/sched`
//!   (free) wherever the kernel has it.
//!
//! What cannot be counted is said once, typed ([`Unavailable`]): which counts, why,
//! and what to do.

use std::collections::BTreeMap;
use std::path::Path;

use perf_event::events::{Software, Tracepoint};
use perf_event::{Builder, Counter, Group};
use serde::{Deserialize, Serialize};

mod judgement;
mod run;
mod snapshot;
mod tracefs;
pub use judgement::{ModelCheck, ModelVerdict};
pub use run::Counts;
pub(crate) use snapshot::sched_migrations;
use snapshot::{sched_migrations_of, Snapshot};
pub(crate) use tracefs::huge_page_order;
pub(crate) use tracefs::thp_not_per_end;
use tracefs::{filtered, refusal, set_filter, tracefs_events, tracepoint_id, wake_a_sleeper};

/// A count that may be missing on a machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Count {
    /// Moves from one CPU to another.
    CpuMigrations,
    /// Pages the page allocator handed out (`kmem:mm_page_alloc`).
    PageAllocs,
    /// Pages freed (`kmem:mm_page_free`).
    PageFrees,
    /// Transparent huge pages the end's own faults allocated
    /// (`kmem:mm_page_alloc` of the huge page's order).
    HugePageAllocs,
    /// Wakeups this process issued (`sched:sched_waking`).
    Wakeups,
    /// Inter-processor interrupts it sent (`ipi:ipi_send_cpu`).
    Ipis,
    /// TLB flushes (`tlb:tlb_flush`).
    TlbFlushes,
    /// System calls counted by the kernel (`syscalls:sys_enter_*`).
    SyscallsTraced,
    /// The THP tracepoints (`huge_memory:*`, `thp:*`), never charged to an end.
    ThpEvents,
}

impl Count {
    /// The tracepoint behind a count, as `category/name`.
    const fn tracepoint(self) -> Option<&'static str> {
        match self {
            Count::PageAllocs => Some("kmem/mm_page_alloc"),
            Count::PageFrees => Some("kmem/mm_page_free"),
            Count::HugePageAllocs => Some("kmem/mm_page_alloc"),
            Count::Wakeups => Some("sched/sched_waking"),
            Count::Ipis => Some("ipi/ipi_send_cpu"),
            Count::TlbFlushes => Some("tlb/tlb_flush"),
            Count::CpuMigrations | Count::SyscallsTraced | Count::ThpEvents => None,
        }
    }

    /// The filter a count's tracepoint needs beyond the end's own (ftrace's
    /// syntax): a huge page is an allocation of the huge page's order.
    fn filter(self) -> Option<String> {
        match self {
            Count::HugePageAllocs => Some(format!("order == {}", huge_page_order())),
            _ => None,
        }
    }

    /// The tracepoint counts, in the order they are opened: all of them only
    /// when asked (see the module for what each costs).
    pub(crate) const TRACED: [Count; 6] = [
        Count::PageAllocs,
        Count::PageFrees,
        Count::HugePageAllocs,
        Count::Wakeups,
        Count::Ipis,
        Count::TlbFlushes,
    ];
}

/// Why some counts are missing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Unavailable {
    /// Kernel events need privilege this process does not have.
    NotPermitted {
        /// `/proc/sys/kernel/perf_event_paranoid`, when readable.
        paranoid: Option<i32>,
    },
    /// tracefs is not mounted, so tracepoints cannot be named.
    NoTracefs,
    /// This kernel has no such event.
    NoSuchEvent {
        /// The event, `category/name`.
        event: String,
    },
    /// perf_event_open was refused although the privilege is there: a seccomp
    /// filter, a container or a security module.
    Blocked {
        /// The error number it returned.
        errno: i32,
    },
    /// This kernel does not say (no `/proc/self/sched`).
    NotReported,
    /// Counting was turned off for this run.
    TurnedOff,
    /// Counted only when asked: the event fires so often that counting it
    /// slows the run.
    OnRequest,
    /// The events fire outside the ends (in khugepaged, or when a huge page
    /// migrates), so no figure of them is an end's.
    NotPerEnd {
        /// The tracepoints this kernel has, `category:name`.
        events: Vec<String>,
    },
    /// Counting them would be in the figure measured: a latency end opens no
    /// perf event (a counter on the task is switched out and in at each of its
    /// sleeps; a tracepoint fires on the round trip's own path).
    CostsTheRoundTrip,
}

impl Unavailable {
    /// What happened and what to do, in a sentence.
    pub fn explain(&self) -> String {
        match self {
            Unavailable::NotPermitted { paranoid } => format!(
                "counting kernel events needs root, CAP_PERFMON or perf_event_paranoid -1 \
                 (here {}): run the runner as root, or `sysctl kernel.perf_event_paranoid=-1`",
                paranoid.map_or("unreadable".into(), |p| p.to_string())
            ),
            Unavailable::NoTracefs => "tracefs is not mounted, so kernel tracepoints cannot be \
                 named: `mount -t tracefs nodev /sys/kernel/tracing` (as root)"
                .into(),
            Unavailable::NoSuchEvent { event } => {
                format!(
                    "this kernel has no `{}` tracepoint",
                    event.replace('/', ":")
                )
            }
            Unavailable::Blocked { errno } => format!(
                "perf_event_open was refused (errno {errno}) although it should be permitted: \
                 a seccomp filter or a container blocks it; run outside the container, or allow \
                 perf_event_open in its profile"
            ),
            Unavailable::NotReported => {
                "this kernel does not report CPU migrations per process (no /proc/self/sched)"
                    .into()
            }
            Unavailable::TurnedOff => "counting was turned off for this run (--no-counts)".into(),
            Unavailable::OnRequest => "counted only when asked: these kernel events fire on \
                 every page moved or at every sleep and wakeup, and counting them slows a \
                 blocking step (by a tenth for the page events, by several percent for the \
                 wakeups, IPIs and TLB flushes), so a plain run leaves them out; ask with \
                 --trace-syscalls (in the page, 'Trace kernel events')"
                .into(),
            Unavailable::NotPerEnd { events } => format!(
                "the transparent huge page tracepoints ({}) fire in khugepaged as it scans and \
                 collapses memory, or when a huge page migrates, not in either end, so they are \
                 no end's count; an end's own huge pages are its huge page allocations (traced \
                 runs), and the machine-wide THP counters of /proc/vmstat over the run are in \
                 the result's `machine.thp`",
                if events.is_empty() {
                    "none listed here".to_string()
                } else {
                    events.join(", ")
                }
            ),
            Unavailable::CostsTheRoundTrip => "a latency end counts no kernel events: a perf \
                 counter on it would be switched out and in at each of its sleeps, and a \
                 tracepoint fires on the round trip's own path, so either would add to the \
                 round trip it times; its switches, faults, migrations and calls are read \
                 at the window's two ends instead"
                .into(),
        }
    }
}

/// Some counts that are missing, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Missing {
    /// The counts.
    pub counts: Vec<Count>,
    /// Why.
    pub reason: Unavailable,
    /// What happened and what to do.
    pub message: String,
}

impl Missing {
    /// `counts`, missing for `reason`, with its explanation.
    pub(crate) fn new(counts: Vec<Count>, reason: Unavailable) -> Self {
        Missing {
            message: reason.explain(),
            counts,
            reason,
        }
    }
}

/// What the kernel did for one process over its window. Counts that could not be
/// taken are absent (never 0 for "unknown"); [`Missing`] says why.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EndCounts {
    /// The process's own data calls by kind, as it counted them (`write`,
    /// `vmsplice`, `read`, `splice`, ...), EAGAIN retries included.
    pub syscalls: BTreeMap<String, u64>,
    /// Context switches, voluntary and involuntary.
    pub context_switches: u64,
    /// Times it gave up the CPU to wait (a sleep in a blocking call).
    pub voluntary_switches: u64,
    /// Times it was preempted.
    pub involuntary_switches: u64,
    /// Page faults, minor and major.
    pub page_faults: u64,
    /// Page faults that needed I/O.
    pub major_faults: u64,
    /// Moves from one CPU to another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_migrations: Option<u64>,
    /// Pages allocated (`kmem:mm_page_alloc`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_allocs: Option<u64>,
    /// Pages freed (`kmem:mm_page_free`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_frees: Option<u64>,
    /// Transparent huge pages allocated in this end's own page faults
    /// (`kmem:mm_page_alloc` of order `hpage_pmd_size / page size`): the huge
    /// pages its buffers got. Those khugepaged makes later for it are not here
    /// (see `machine.thp`, the machine-wide counters over the run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub huge_page_allocs: Option<u64>,
    /// Wakeups issued (`sched:sched_waking`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wakeups: Option<u64>,
    /// Inter-processor interrupts sent (`ipi:ipi_send_cpu`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipis: Option<u64>,
    /// TLB flushes (`tlb:tlb_flush`) while this end was the running thread.
    /// Counted on a pinned end's CPU, that takes in the flushes of its own
    /// context switches (the tracepoint fires as the CPU switches away from
    /// it); counted on the task, it leaves them out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tlb_flushes: Option<u64>,
    /// The data calls as the kernel counted them (`syscalls:sys_enter_*`), when asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syscalls_traced: Option<BTreeMap<String, u64>>,
}

impl EndCounts {
    /// The value of `count`, if it was taken.
    pub fn get(&self, count: Count) -> Option<u64> {
        match count {
            Count::CpuMigrations => self.cpu_migrations,
            Count::PageAllocs => self.page_allocs,
            Count::PageFrees => self.page_frees,
            Count::HugePageAllocs => self.huge_page_allocs,
            Count::Wakeups => self.wakeups,
            Count::Ipis => self.ipis,
            Count::TlbFlushes => self.tlb_flushes,
            Count::SyscallsTraced => self.syscalls_traced.as_ref().map(|m| m.values().sum()),
            Count::ThpEvents => None,
        }
    }

    fn set(&mut self, count: Count, value: u64) {
        let slot = match count {
            Count::CpuMigrations => &mut self.cpu_migrations,
            Count::PageAllocs => &mut self.page_allocs,
            Count::PageFrees => &mut self.page_frees,
            Count::HugePageAllocs => &mut self.huge_page_allocs,
            Count::Wakeups => &mut self.wakeups,
            Count::Ipis => &mut self.ipis,
            Count::TlbFlushes => &mut self.tlb_flushes,
            Count::SyscallsTraced | Count::ThpEvents => return,
        };
        *slot = Some(value);
    }
}

/// What an end asks to count.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The data calls it makes, by name (`write`, `vmsplice`, ...): the names of
    /// its syscall tracepoints too.
    pub calls: Vec<&'static str>,
    /// Count the tracepoints that fire at each sleep and wakeup: wakeups
    /// issued, IPIs sent, TLB flushes. A pipe step counts them only when asked
    /// to trace (they cost a blocking step several percent); an IPC run or a
    /// tool run, which no figure of the article is set against, counts them
    /// unless counting is off.
    pub per_wakeup: bool,
    /// Count every kernel event (see the module for why they are not counted
    /// by default): the tracepoints of [`Count::TRACED`], the per-page ones
    /// included, and `syscalls:sys_enter_*` for those calls.
    pub trace_syscalls: bool,
}

impl Request {
    /// The tracepoint counts to open; what is left out for cost is added to
    /// `missing` as on request.
    fn traced(&self, missing: &mut Vec<Missing>) -> Vec<Count> {
        let (asked, costly): (Vec<Count>, Vec<Count>) =
            Count::TRACED.into_iter().partition(|count| {
                self.trace_syscalls
                    || (self.per_wakeup
                        && !matches!(
                            count,
                            Count::PageAllocs | Count::PageFrees | Count::HugePageAllocs
                        ))
            });
        if !costly.is_empty() {
            missing.push(Missing::new(costly, Unavailable::OnRequest));
        }
        asked
    }

    /// Whether any kernel event is asked for.
    fn asks_kernel(&self) -> bool {
        self.per_wakeup || self.trace_syscalls
    }

    /// Every count a tracepoint gives that `request` could ask for: what is
    /// missing when no tracepoint can be opened at all.
    fn all_traced(&self) -> Vec<Count> {
        let mut counts = Count::TRACED.to_vec();
        if self.trace_syscalls {
            counts.push(Count::SyscallsTraced);
        }
        counts
    }
}

/// The counts of one window, and what is missing from them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Counted {
    /// The counts.
    pub counts: EndCounts,
    /// What could not be counted, and why.
    pub missing: Vec<Missing>,
}

/// An open window of counting on this process, or on another one
/// ([`Counting::open_pid`]).
pub struct Counting {
    /// The process counted; `None`: this one.
    pid: Option<i32>,
    group: Option<Group>,
    /// The tracepoint counters stand alone, each on the end's CPU or on the
    /// task, and are started, stopped and read one by one: never in a group,
    /// where they can count nothing (a CPU-wide tracepoint in a group led by
    /// perf's dummy event; on the calling thread, a group holding two
    /// tracepoint counters, or one whose tracepoint another counter of the
    /// thread also watches, read 0 on 6.18 while the same counters alone
    /// counted every event).
    alone: bool,
    traced: Vec<(Count, Counter)>,
    syscalls: Vec<(&'static str, Counter)>,
    migrations: Option<Counter>,
    before: Snapshot,
    missing: Vec<Missing>,
}

impl std::fmt::Debug for Counting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Counting")
            .field(
                "traced",
                &self.traced.iter().map(|(c, _)| c).collect::<Vec<_>>(),
            )
            .field("missing", &self.missing)
            .finish()
    }
}

/// `/proc/sys/kernel/perf_event_paranoid`.
pub fn perf_paranoid() -> Option<i32> {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// A counter of `event` on this process (or `pid`), kernel included, on its
/// own (see [`Counting`]'s `alone` for why a tracepoint never joins a group).
fn solo(
    event: impl perf_event::events::Event + 'static,
    pid: Option<i32>,
) -> std::io::Result<Counter> {
    let mut builder = Builder::new(event);
    match pid {
        None => builder.observe_self(),
        Some(pid) => builder.observe_pid(pid),
    };
    builder.any_cpu().include_kernel().build()
}

/// A counter of `event` on this process (or `pid`), kernel included, in `group`.
fn counter(
    event: impl perf_event::events::Event + 'static,
    group: &mut Group,
    pid: Option<i32>,
) -> std::io::Result<Counter> {
    let mut builder = Builder::new(event);
    match pid {
        None => builder.observe_self(),
        Some(pid) => builder.observe_pid(pid),
    };
    builder.any_cpu().include_kernel();
    group.add(&builder)
}

/// The tracepoint counters `request` asks for, each alone on the task; what
/// cannot be opened is added to `missing`.
fn traced_on_task(
    events: &Path,
    pid: Option<i32>,
    request: &Request,
    missing: &mut Vec<Missing>,
) -> Vec<(Count, Counter)> {
    let mut traced = Vec::new();
    for count in request.traced(missing) {
        let event = count.tracepoint().expect("traced counts have a tracepoint");
        let opened = tracepoint_id(events, event).and_then(|id| {
            let counter = solo(Tracepoint::with_id(id), pid).map_err(|e| refusal(&e))?;
            match count.filter() {
                Some(filter) => filtered(counter, &filter),
                None => Ok(counter),
            }
        });
        match opened {
            Ok(counter) => traced.push((count, counter)),
            Err(reason) => missing.push(Missing::new(vec![count], reason)),
        }
    }
    traced
}

/// A counter of each system call's entry tracepoint, where `request` traces
/// them; what cannot be opened is added to `missing`.
fn syscalls_on_task(
    events: &Path,
    pid: Option<i32>,
    request: &Request,
    missing: &mut Vec<Missing>,
) -> Vec<(&'static str, Counter)> {
    let mut syscalls = Vec::new();
    if !request.trace_syscalls {
        return syscalls;
    }
    for &call in &request.calls {
        let event = format!("syscalls/sys_enter_{call}");
        let opened = tracepoint_id(events, &event)
            .and_then(|id| solo(Tracepoint::with_id(id), pid).map_err(|e| refusal(&e)));
        match opened {
            Ok(counter) => syscalls.push((call, counter)),
            Err(reason) => missing.push(Missing::new(vec![Count::SyscallsTraced], reason)),
        }
    }
    syscalls
}

impl Counting {
    /// Opens the counters `request` asks for (nothing counts yet: [`Self::start`]).
    /// What cannot be opened is noted, typed, and the rest goes on.
    pub fn open(request: &Request) -> Counting {
        Counting::open_on(None, request)
    }

    /// Opens the counters `request` asks for on process `pid`, a program this
    /// process started and has not reaped (a tool run against pipebench's end).
    /// Its window is from [`Self::start`] to [`Self::stop`], which must come after
    /// it exits and before it is reaped: its /proc files are read then.
    pub(crate) fn open_pid(pid: u32, request: &Request) -> Counting {
        Counting::open_on(Some(pid as i32), request)
    }

    fn open_on(pid: Option<i32>, request: &Request) -> Counting {
        let sched = match pid {
            None => sched_migrations(),
            Some(pid) => sched_migrations_of(&format!("/proc/{pid}/sched")),
        };
        // Nothing asked of the kernel and migrations in /proc: no perf event at
        // all, so nothing is added to the run's path (a group on the task would
        // still be switched out and in at every sleep).
        if !request.asks_kernel() && sched.is_some() {
            let mut missing = Vec::new();
            request.traced(&mut missing);
            return Counting::without_perf(pid, missing);
        }
        // An end pinned to one CPU counts its events on that CPU, filtered to
        // its own thread: no event then sits on the task, so its context
        // switches (a blocking step makes tens of thousands per GiB) are not
        // slowed by scheduling counters out and in.
        if pid.is_none() {
            if let [cpu] = crate::process::cpu::allowed_cpus()[..] {
                if let Some(counting) = Counting::open_on_cpu(cpu, request) {
                    return counting;
                }
            }
        }
        let mut builder = Group::builder();
        match pid {
            None => builder.observe_self(),
            Some(pid) => builder.observe_pid(pid),
        };
        match builder.any_cpu().include_kernel().build_group() {
            Ok(group) => Counting::open_on_task(pid, group, sched.is_none(), request),
            Err(err) => {
                let missing = vec![Missing::new(request.all_traced(), refusal(&err))];
                Counting::without_perf(pid, merge(missing))
            }
        }
    }

    /// The counters of `request` on the task (`pid`, or this process): the
    /// tracepoints alone, and CPU migrations in `group` where /proc does not
    /// report them (`no_sched`).
    fn open_on_task(
        pid: Option<i32>,
        mut group: Group,
        no_sched: bool,
        request: &Request,
    ) -> Counting {
        let mut missing = Vec::new();
        // CPU migrations from /proc/PID/sched at start and stop, which costs
        // nothing; a perf counter only where the kernel does not report them
        // there (every event on the task is scheduled out and in again at
        // each of its context switches, so one event fewer is cheaper).
        let migrations = if no_sched {
            counter(Software::CPU_MIGRATIONS, &mut group, pid).ok()
        } else {
            None
        };
        let (traced, syscalls) = match tracefs_events() {
            None => {
                missing.push(Missing::new(request.all_traced(), Unavailable::NoTracefs));
                (Vec::new(), Vec::new())
            }
            Some(events) => {
                let traced = traced_on_task(&events, pid, request, &mut missing);
                let syscalls = syscalls_on_task(&events, pid, request, &mut missing);
                (traced, syscalls)
            }
        };
        Counting {
            pid,
            group: Some(group),
            alone: true,
            traced,
            syscalls,
            migrations,
            before: Snapshot::default(),
            missing: merge(missing),
        }
    }

    /// The tracepoints of `request` counted on `cpu`, the one CPU this thread may
    /// run on, for this thread only (a filter on the event's `common_pid`, the
    /// thread that was running when it fired): the same events a counter on the
    /// task would count, since the thread runs nowhere else. `None` where this
    /// cannot be done or proven (no privilege for a CPU-wide event, no filter,
    /// or a filter that does not see this thread's own wakeup, as in a PID
    /// namespace); the caller then counts on the task, which says why.
    fn open_on_cpu(cpu: usize, request: &Request) -> Option<Counting> {
        let events = tracefs_events()?;
        let tid = rustix::thread::gettid().as_raw_nonzero().get();
        let on_cpu = |id: u64, extra: Option<String>| -> Option<Counter> {
            let filter = match extra {
                Some(extra) => format!("common_pid == {tid} && {extra}"),
                None => format!("common_pid == {tid}"),
            };
            let filter = std::ffi::CString::new(filter).ok()?;
            let counter = Builder::new(Tracepoint::with_id(id))
                .any_pid()
                .one_cpu(cpu)
                .include_kernel()
                .build()
                .ok()?;
            set_filter(&counter, &filter).then_some(counter)
        };
        let mut missing = Vec::new();
        let mut traced = Vec::new();
        let asked = request.traced(&mut missing);
        for count in asked {
            let event = count.tracepoint().expect("traced counts have a tracepoint");
            match tracepoint_id(&events, event) {
                Ok(id) => traced.push((count, on_cpu(id, count.filter())?)),
                Err(reason) => missing.push(Missing::new(vec![count], reason)),
            }
        }
        let mut syscalls = Vec::new();
        if request.trace_syscalls {
            for &call in &request.calls {
                match tracepoint_id(&events, &format!("syscalls/sys_enter_{call}")) {
                    Ok(id) => syscalls.push((call, on_cpu(id, None)?)),
                    Err(reason) => missing.push(Missing::new(vec![Count::SyscallsTraced], reason)),
                }
            }
        }
        // The proof that the filter sees this thread: one wakeup it issues.
        let (_, waking) = traced.iter_mut().find(|(c, _)| *c == Count::Wakeups)?;
        waking.reset().ok()?;
        waking.enable().ok()?;
        let woke = wake_a_sleeper();
        waking.disable().ok()?;
        if !woke || waking.read().ok()? == 0 {
            return None;
        }
        Some(Counting {
            pid: None,
            group: None,
            alone: true,
            traced,
            syscalls,
            migrations: None,
            before: Snapshot::default(),
            missing: merge(missing),
        })
    }

    /// A window that counts only what is always there (`--no-counts` keeps even
    /// that, since it costs nothing, and says the kernel events were turned off).
    pub fn off(request: &Request) -> Counting {
        let missing = vec![Missing::new(request.all_traced(), Unavailable::TurnedOff)];
        Counting::without_perf(None, missing)
    }

    /// A window of what costs nothing (getrusage, /proc), no perf event open.
    fn without_perf(pid: Option<i32>, missing: Vec<Missing>) -> Counting {
        Counting {
            pid,
            group: None,
            alone: false,
            traced: Vec::new(),
            syscalls: Vec::new(),
            migrations: None,
            before: Snapshot::default(),
            missing,
        }
    }

    /// Starts counting: call right before the work.
    pub fn start(&mut self) {
        self.before = Snapshot::of(self.pid);
        if let Some(group) = &mut self.group {
            let _ = group.reset();
            let _ = group.enable();
        }
        if self.alone {
            let counters = self.traced.iter_mut().map(|(_, c)| c);
            for counter in counters.chain(self.syscalls.iter_mut().map(|(_, c)| c)) {
                let _ = counter.reset();
                let _ = counter.enable();
            }
        }
    }

    /// Stops counting and reads the window; `calls` are the process's own data
    /// calls by kind.
    pub fn stop(mut self, calls: BTreeMap<String, u64>) -> Counted {
        if let Some(group) = &mut self.group {
            let _ = group.disable();
        }
        if self.alone {
            let counters = self.traced.iter_mut().map(|(_, c)| c);
            for counter in counters.chain(self.syscalls.iter_mut().map(|(_, c)| c)) {
                let _ = counter.disable();
            }
        }
        let after = Snapshot::of(self.pid);
        let before = self.before;
        let mut counts = EndCounts {
            syscalls: calls,
            voluntary_switches: after.voluntary.saturating_sub(before.voluntary),
            involuntary_switches: after.involuntary.saturating_sub(before.involuntary),
            page_faults: (after.minor + after.major).saturating_sub(before.minor + before.major),
            major_faults: after.major.saturating_sub(before.major),
            ..EndCounts::default()
        };
        counts.context_switches = counts.voluntary_switches + counts.involuntary_switches;
        let mut missing = self.missing;
        let read = self.group.as_mut().and_then(|g| g.read().ok());
        match (&self.migrations, &read, before.migrations, after.migrations) {
            (Some(counter), Some(data), _, _) => {
                counts.cpu_migrations = data.get(counter).map(|v| v.value())
            }
            (_, _, Some(b), Some(a)) => counts.cpu_migrations = Some(a.saturating_sub(b)),
            _ => missing.push(Missing::new(
                vec![Count::CpuMigrations],
                Unavailable::NotReported,
            )),
        }
        if self.alone {
            for (count, counter) in &mut self.traced {
                if let Ok(value) = counter.read() {
                    counts.set(*count, value);
                }
            }
            if !self.syscalls.is_empty() {
                counts.syscalls_traced = Some(
                    self.syscalls
                        .iter_mut()
                        .filter_map(|(call, c)| Some((call.to_string(), c.read().ok()?)))
                        .collect(),
                );
            }
        }
        // Counters standing alone were read above; a group holds none of them.
        if let Some(data) = read.as_ref().filter(|_| !self.alone) {
            for (count, counter) in &self.traced {
                if let Some(value) = data.get(counter) {
                    counts.set(*count, value.value());
                }
            }
            if !self.syscalls.is_empty() {
                counts.syscalls_traced = Some(
                    self.syscalls
                        .iter()
                        .filter_map(|(call, c)| Some((call.to_string(), data.get(c)?.value())))
                        .collect(),
                );
            }
        }
        Counted {
            counts,
            missing: merge(missing),
        }
    }
}

/// One entry per reason: the counts missing for the same reason together.
pub fn merge(missing: Vec<Missing>) -> Vec<Missing> {
    let mut merged: Vec<Missing> = Vec::new();
    for item in missing {
        match merged.iter_mut().find(|m| m.reason == item.reason) {
            Some(m) => {
                for count in item.counts {
                    if !m.counts.contains(&count) {
                        m.counts.push(count);
                    }
                }
            }
            None => merged.push(item),
        }
    }
    for m in &mut merged {
        m.counts.sort();
    }
    merged
}

#[cfg(test)]
mod tests;
