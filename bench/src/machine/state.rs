//! The machine's state over one run: what could make its figure a poor one.
//!
//! Measured around every pipe run (cheap: a few small files read before and
//! after) and carried in its result as `machine`: the CPU frequency governor
//! and boost where the kernel shows them, the time a hypervisor stole from the
//! run's CPUs (`/proc/stat`'s steal column), the CPU time other work took on
//! them (their busy time over the run minus what the two ends used), and
//! thermal throttling events where the kernel counts them. [`precheck`] says
//! before a comparison what would make this machine noisy and what to do.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// Share of the run's CPU time a hypervisor or other work may take before the
/// run is said to have had its CPUs taken from it.
pub(crate) const TAKEN_SHARE: f64 = 0.05;

/// The machine's state over one run (JSON `machine` in a result).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MachineState {
    /// The CPUs the ends were pinned to (empty when they were not pinned).
    pub cpus: Vec<usize>,
    /// Each of those CPUs' frequency governor (`performance`, `powersave`, ...),
    /// `None` where the kernel shows none (no cpufreq, as in most VMs).
    pub governors: Vec<Option<String>>,
    /// Whether turbo boost is on (`None`: not visible here).
    pub boost: Option<bool>,
    /// Wall time the run's window lasted, ms.
    pub window_ms: f64,
    /// CPU time a hypervisor stole from the run's CPUs over the window, ms
    /// (`None` when `/proc/stat` could not be read).
    pub steal_ms: Option<f64>,
    /// CPU time other work used on the run's CPUs over the window, ms (their
    /// busy time less the ends' own; tick-grained, so ±10 ms per CPU).
    pub other_ms: Option<f64>,
    /// Thermal throttling events on those CPUs over the window (`None`: not
    /// counted by this kernel or machine).
    pub throttle_events: Option<u64>,
    /// Whether the run's CPUs were taken from it (steal plus other work above
    /// 5% of their time, or throttling).
    pub taken: bool,
    /// The transparent huge page counters of `/proc/vmstat` (`thp_*`) that
    /// moved over the window, by name: machine-wide, so any process and
    /// khugepaged add to them, not only the run's ends (an end's own huge pages
    /// are its `counts` `huge_page_allocs`). Empty: none moved; absent:
    /// `/proc/vmstat` unreadable, or a result from before they were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thp: Option<BTreeMap<String, u64>>,
}

/// The `thp_*` counters of a `/proc/vmstat` text, by name.
pub(crate) fn parse_thp_vmstat(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|line| {
            let (name, value) = line.split_once(' ')?;
            name.starts_with("thp_")
                .then(|| Some((name.to_string(), value.trim().parse().ok()?)))
                .flatten()
        })
        .collect()
}

/// The machine's THP counters now, or `None` where `/proc/vmstat` is unreadable.
fn thp_vmstat() -> Option<BTreeMap<String, u64>> {
    std::fs::read_to_string("/proc/vmstat")
        .ok()
        .map(|text| parse_thp_vmstat(&text))
}

/// The counters that moved from `before` to `after`, by how much.
pub(crate) fn thp_moved(
    before: &BTreeMap<String, u64>,
    after: &BTreeMap<String, u64>,
) -> BTreeMap<String, u64> {
    after
        .iter()
        .filter_map(|(name, a)| {
            let moved = a.saturating_sub(*before.get(name)?);
            (moved > 0).then(|| (name.clone(), moved))
        })
        .collect()
}

/// Per-CPU counters read at the start of a run.
#[derive(Debug, Clone)]
pub(crate) struct StateProbe {
    cpus: Vec<usize>,
    at: Instant,
    stat: Option<Vec<CpuTicks>>,
    throttle: Option<u64>,
    children_ms: f64,
    thp: Option<BTreeMap<String, u64>>,
}

/// CPU time (user + system, ms) of this process's children that have been
/// waited for: the ends' whole lives once they are reaped, set-up included.
fn children_cpu_ms() -> f64 {
    // SAFETY: getrusage fills the struct we pass; a zeroed rusage is valid.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1000.0 + t.tv_usec as f64 / 1000.0;
    ms(usage.ru_utime) + ms(usage.ru_stime)
}

/// One CPU's `/proc/stat` line: busy (not idle, iowait or steal) and steal ticks.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct CpuTicks {
    /// user + nice + system + irq + softirq (guest time is inside user).
    pub busy: u64,
    /// steal.
    pub steal: u64,
}

/// Parses the `cpuN` lines of `/proc/stat` text for `cpus`, in their order.
pub(crate) fn parse_stat(text: &str, cpus: &[usize]) -> Option<Vec<CpuTicks>> {
    cpus.iter()
        .map(|cpu| {
            let name = format!("cpu{cpu}");
            let line = text
                .lines()
                .find(|l| l.split_whitespace().next() == Some(name.as_str()))?;
            let f: Vec<u64> = line
                .split_whitespace()
                .skip(1)
                .map(|v| v.parse().ok())
                .collect::<Option<_>>()?;
            // user nice system idle iowait irq softirq steal ...
            Some(CpuTicks {
                busy: f.first()? + f.get(1)? + f.get(2)? + f.get(5)? + f.get(6)?,
                steal: *f.get(7)?,
            })
        })
        .collect()
}

fn read_stat(cpus: &[usize]) -> Option<Vec<CpuTicks>> {
    parse_stat(&std::fs::read_to_string("/proc/stat").ok()?, cpus)
}

fn ms_per_tick() -> f64 {
    // SAFETY: sysconf only reads a constant of the system.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    1000.0 / if hz > 0 { hz as f64 } else { 100.0 }
}

fn read_trimmed(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

fn governor(cpu: usize) -> Option<String> {
    read_trimmed(format!(
        "/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor"
    ))
}

/// Turbo boost: acpi-cpufreq's `boost` (1 = on), or intel_pstate's `no_turbo`
/// (1 = off).
fn boost() -> Option<bool> {
    if let Some(v) = read_trimmed("/sys/devices/system/cpu/cpufreq/boost") {
        return Some(v == "1");
    }
    read_trimmed("/sys/devices/system/cpu/intel_pstate/no_turbo").map(|v| v == "0")
}

fn throttle_count(cpus: &[usize]) -> Option<u64> {
    cpus.iter()
        .map(|cpu| {
            read_trimmed(format!(
                "/sys/devices/system/cpu/cpu{cpu}/thermal_throttle/core_throttle_count"
            ))?
            .parse::<u64>()
            .ok()
        })
        .sum()
}

impl StateProbe {
    /// Reads the counters of `cpus` now, at the start of a run.
    pub(crate) fn begin(cpus: &[usize]) -> Self {
        let mut cpus = cpus.to_vec();
        cpus.sort_unstable();
        cpus.dedup();
        StateProbe {
            stat: read_stat(&cpus),
            throttle: throttle_count(&cpus),
            children_ms: children_cpu_ms(),
            thp: thp_vmstat(),
            at: Instant::now(),
            cpus,
        }
    }

    /// The state over the run, now that it is over and its ends reaped;
    /// `ends_cpu_ms` is the CPU time both ends report for their loops (user +
    /// system). Their whole lives, set-up included, are taken instead where the
    /// kernel counts more for the children reaped since [`Self::begin`].
    pub(crate) fn finish(&self, ends_cpu_ms: f64) -> MachineState {
        let window = self.at.elapsed();
        let ends_cpu_ms = ends_cpu_ms.max(children_cpu_ms() - self.children_ms);
        let after = read_stat(&self.cpus);
        let tick = ms_per_tick();
        let deltas = match (&self.stat, &after) {
            (Some(before), Some(after)) => Some(before.iter().zip(after).fold(
                CpuTicks::default(),
                |sum, (b, a)| CpuTicks {
                    busy: sum.busy + a.busy.saturating_sub(b.busy),
                    steal: sum.steal + a.steal.saturating_sub(b.steal),
                },
            )),
            _ => None,
        };
        let throttle = match (self.throttle, throttle_count(&self.cpus)) {
            (Some(b), Some(a)) => Some(a.saturating_sub(b)),
            _ => None,
        };
        let thp = match (&self.thp, thp_vmstat()) {
            (Some(before), Some(after)) => Some(thp_moved(before, &after)),
            _ => None,
        };
        MachineState {
            thp,
            ..summarize(
                self.cpus.clone(),
                self.cpus.iter().map(|c| governor(*c)).collect(),
                boost(),
                window,
                deltas.map(|d| (d.steal as f64 * tick, d.busy as f64 * tick)),
                ends_cpu_ms,
                throttle,
            )
        }
    }
}

/// Puts the figures together and decides whether the CPUs were taken.
fn summarize(
    cpus: Vec<usize>,
    governors: Vec<Option<String>>,
    boost: Option<bool>,
    window: Duration,
    steal_busy_ms: Option<(f64, f64)>,
    ends_cpu_ms: f64,
    throttle_events: Option<u64>,
) -> MachineState {
    let window_ms = window.as_secs_f64() * 1000.0;
    let steal_ms = steal_busy_ms.map(|(steal, _)| steal);
    let other_ms = steal_busy_ms.map(|(_, busy)| (busy - ends_cpu_ms).max(0.0));
    let capacity = window_ms * cpus.len() as f64;
    let lost = steal_ms.unwrap_or(0.0) + other_ms.unwrap_or(0.0);
    let taken =
        (capacity > 0.0 && lost > TAKEN_SHARE * capacity) || throttle_events.is_some_and(|n| n > 0);
    MachineState {
        cpus,
        governors,
        boost,
        window_ms,
        steal_ms,
        other_ms,
        throttle_events,
        taken,
        thp: None,
    }
}

impl MachineState {
    /// The warning a result carries when its CPUs were taken from it.
    pub fn warning(&self) -> Option<String> {
        if !self.taken {
            return None;
        }
        let mut parts = Vec::new();
        if let Some(steal) = self.steal_ms.filter(|s| *s > 0.0) {
            parts.push(format!("the hypervisor took {steal:.0} ms"));
        }
        if let Some(other) = self.other_ms.filter(|o| *o > 0.0) {
            parts.push(format!("other work took {other:.0} ms"));
        }
        if let Some(n) = self.throttle_events.filter(|n| *n > 0) {
            parts.push(format!("the CPUs were throttled {n} times for heat"));
        }
        Some(format!(
            "this run's CPUs were taken from it: of {:.0} ms on CPU {}, {}; its figure is \
             low by up to that share, so compare it only with care",
            self.window_ms * self.cpus.len() as f64,
            self.cpus
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(" and "),
            parts.join(", ")
        ))
    }
}

/// What would make this machine noisy now, each with what to do about it:
/// a governor other than `performance`, boost on, steal or other runnable work
/// seen over `sample` on `cpus`. Empty when nothing is seen.
pub fn precheck(cpus: &[usize], sample: Duration) -> Vec<String> {
    let mut advice = Vec::new();
    let governors: Vec<String> = cpus.iter().filter_map(|c| governor(*c)).collect();
    if let Some(g) = governors.iter().find(|g| g.as_str() != "performance") {
        advice.push(format!(
            "the CPU frequency governor is `{g}`: clocks change under load, so runs \
             vary; `cpupower frequency-set -g performance` (root) holds them"
        ));
    }
    if boost() == Some(true) {
        advice.push(
            "turbo boost is on: a warm or busy chip runs slower than a cool one; \
             more pairs average it out, or turn boost off for the session"
                .to_string(),
        );
    }
    let probe = StateProbe::begin(cpus);
    std::thread::sleep(sample);
    let state = probe.finish(0.0);
    if let Some(steal) = state.steal_ms.filter(|s| *s > 0.0) {
        advice.push(format!(
            "a hypervisor took {steal:.0} ms of these CPUs in {:.0} ms: a virtual \
             machine shares its cores, so expect wide intervals and run more pairs",
            state.window_ms
        ));
    }
    if let Some(other) = state
        .other_ms
        .filter(|o| *o > TAKEN_SHARE * state.window_ms)
    {
        advice.push(format!(
            "other work used {other:.0} ms of these CPUs in {:.0} ms: close what runs \
             beside the benchmark, or expect wide intervals",
            state.window_ms
        ));
    }
    advice
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  1859296 13748 365849 658910 13821 0 5563 22501 0 0\n\
                        cpu0 924469 7000 173882 346917 4493 0 1895 11213 0 0\n\
                        cpu1 934826 6748 191966 311992 9328 0 3668 11288 0 0\n";

    #[test]
    fn reads_busy_and_steal_per_cpu() {
        let got = parse_stat(STAT, &[1]).unwrap();
        assert_eq!(
            got,
            vec![CpuTicks {
                busy: 934826 + 6748 + 191966 + 3668,
                steal: 11288
            }]
        );
        assert!(parse_stat(STAT, &[2]).is_none());
    }

    #[test]
    fn thp_counters_are_read_and_only_those_that_moved_kept() {
        let before = parse_thp_vmstat("nr_free_pages 5\nthp_fault_alloc 6566\nthp_split_pmd 0\n");
        assert_eq!(before.len(), 2);
        let after = parse_thp_vmstat("nr_free_pages 9\nthp_fault_alloc 6568\nthp_split_pmd 0\n");
        assert_eq!(
            thp_moved(&before, &after),
            BTreeMap::from([("thp_fault_alloc".to_string(), 2)])
        );
    }

    #[test]
    fn cpus_taken_by_steal_or_other_work_are_said_so() {
        let window = Duration::from_millis(1000);
        // Two CPUs for a second: 2000 ms; 150 ms stolen is 7.5%.
        let taken = summarize(
            vec![0, 1],
            vec![None, None],
            None,
            window,
            Some((150.0, 1900.0)),
            1900.0,
            None,
        );
        assert!(taken.taken);
        assert!(taken.warning().unwrap().contains("hypervisor took 150 ms"));
        let clean = summarize(
            vec![0, 1],
            vec![None, None],
            None,
            window,
            Some((10.0, 1950.0)),
            1930.0,
            None,
        );
        assert!(!clean.taken && clean.warning().is_none(), "{clean:?}");
        let busy = summarize(
            vec![0],
            vec![None],
            None,
            window,
            Some((0.0, 990.0)),
            500.0,
            None,
        );
        assert_eq!(busy.other_ms, Some(490.0));
        assert!(busy.warning().unwrap().contains("other work took 490 ms"));
    }
}
