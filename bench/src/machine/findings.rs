//! The machine report turned into findings: which of virtualisation, CPU
//! mitigations, the THP mode, pipe-max-size, the CPU topology and the kernel
//! version explain why a reader's figures differ from the article's, each with
//! the measurement that shows it. Pure: [`findings`] reads a [`SystemInfo`] (and
//! wakeup figures, when measured) and decides nothing else.

use serde::{Deserialize, Serialize};

use crate::machine::behaviour::{self, Probe};
use crate::machine::system::SystemInfo;
use crate::machine::wakeup::WakeupFigures;

/// One reason this machine's figures may differ from the article's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable id (`virtualised`, `thp-never`, ...), for pages and tests.
    pub id: String,
    /// One line: what is true of this machine.
    pub title: String,
    /// What was measured or read that shows it.
    pub evidence: String,
    /// What it does to the figures in the book.
    pub effect: String,
}

/// The machine report with its findings, as `/api/system` and
/// `pipebench system --json` publish it.
#[derive(Debug, Clone, Serialize)]
pub struct SystemReport {
    /// The facts.
    #[serde(flatten)]
    pub info: SystemInfo,
    /// What they mean for the figures.
    pub findings: Vec<Finding>,
    /// What this kernel does where the chapters depend on it, measured.
    pub behaviour: Vec<Probe>,
    /// When `behaviour` was measured, in milliseconds since the Unix epoch (a
    /// page's "Probe again" replaces both).
    pub behaviour_probed_at_ms: u64,
}

impl SystemReport {
    /// Probes the machine, derives the findings and asks the kernel how it
    /// behaves (no wakeup measurement: that one runs only when asked, because it
    /// occupies two CPUs). Never call it beside a measurement: the behaviour
    /// probes take the CPU for up to two seconds.
    pub fn probe() -> SystemReport {
        let info = SystemInfo::probe();
        let findings = findings(&info, None);
        SystemReport {
            info,
            findings,
            behaviour: behaviour::probe_all(),
            behaviour_probed_at_ms: behaviour::now_ms(),
        }
    }
}

/// The pipe size the article's steps 2 to 5 ask for (half a 256 KiB buffer).
const ARTICLE_PIPE: u64 = 128 * 1024;

/// The kernel's own default for pipe-max-size.
const DEFAULT_PIPE_MAX: u64 = 1024 * 1024;

/// The article's kernel, major and minor.
const ARTICLE_KERNEL: (u32, u32) = (5, 17);

fn finding(id: &str, title: String, evidence: String, effect: &str) -> Finding {
    Finding {
        id: id.into(),
        title,
        evidence,
        effect: effect.into(),
    }
}

/// `6.12.117-amd64` -> (6, 12).
pub(crate) fn kernel_version(release: &str) -> Option<(u32, u32)> {
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// The findings for `info`, with `wakeup` figures when they were measured. The
/// ends are assumed where the runner puts them by default: the first two CPUs
/// this process may use.
pub fn findings(info: &SystemInfo, wakeup: Option<&WakeupFigures>) -> Vec<Finding> {
    let wakeup_text = wakeup.map(wakeup_sentence);
    let mut out = vec![hypervisor(info, wakeup_text.as_deref())];
    if let (Some(w), Some(text)) = (wakeup, wakeup_text) {
        out.push(wakeup_cost(w, text));
    }
    out.extend(mitigations(info));
    out.extend(thp(info));
    out.extend(pipe_max_size(info));
    out.extend(cpus(info));
    out.extend(kernel(info));
    out
}

/// The wakeup figures in one clause, for the findings that cite them.
fn wakeup_sentence(w: &WakeupFigures) -> String {
    format!(
        "a one-byte ping-pong between CPUs {} and {} took {:.1} µs per round trip blocking and {:.2} µs busy-polling (medians of {})",
        w.cpus[0], w.cpus[1], w.blocking_us, w.busy_us, w.round_trips
    )
}

/// Virtual machine or bare metal: always one of the two.
fn hypervisor(info: &SystemInfo, wakeup_text: Option<&str>) -> Finding {
    match &info.virtualization {
        Some(hypervisor) => finding(
            "virtualised",
            format!("This is a virtual machine ({hypervisor})"),
            match wakeup_text {
                Some(w) => format!("the CPU reports the hypervisor {hypervisor}; {w}"),
                None => format!("the CPU reports the hypervisor {hypervisor}"),
            },
            "Waking an end that sleeps on another CPU takes an inter-processor interrupt; in a guest, \
             sending one and idling a virtual CPU until one arrives each leave the guest for the \
             hypervisor. The blocking steps, which sleep and wake thousands of times a second, lose \
             more against the article's laptop than busy-loop does, and a bigger pipe (fewer \
             sleeps) helps more than it did in the article. The CPU topology a guest sees is the one \
             the hypervisor shows it.",
        ),
        None => finding(
            "bare-metal",
            "No hypervisor detected".into(),
            match wakeup_text {
                Some(w) => format!("the CPU reports no hypervisor; {w}"),
                None => "the CPU reports no hypervisor".into(),
            },
            "Wakeups cost what the hardware makes them cost, as on the article's laptop; differences \
             come from the CPU, the kernel and the settings below.",
        ),
    }
}

/// What a sleep costs here, from the measured wakeup figures.
fn wakeup_cost(w: &WakeupFigures, wakeup_text: String) -> Finding {
    let gap = (w.blocking_us - w.busy_us).max(0.0);
    finding(
        "wakeup-cost",
        format!(
            "A blocking hand-over costs about {:.1} µs more than a busy one",
            gap / 2.0
        ),
        wakeup_text,
        "A blocking round trip holds two sleeps and two wakeups; a busy one only the data \
         crossing between the CPUs. Half the gap is roughly what each sleep in a run costs; \
         multiply it by the sleeps under a run's occupancy chart to estimate what busy-loop \
         saves here.",
    )
}

/// The CPU vulnerability mitigations in force, if any.
fn mitigations(info: &SystemInfo) -> Option<Finding> {
    if info.mitigations.is_empty() {
        return None;
    }
    let names: Vec<&str> = info
        .mitigations
        .iter()
        .map(|m| m.split(':').next().unwrap_or(m))
        .collect();
    Some(finding(
        "mitigations",
        format!("{} CPU vulnerability mitigations are in force", names.len()),
        format!(
            "/sys/devices/system/cpu/vulnerabilities reports mitigations for {}",
            names.join(", ")
        ),
        "Several kinds of mitigation add work to each entry into the kernel or each switch \
         between processes. Steps that make many system calls and sleeps per GiB (write-read on \
         its 64 KiB pipe above all) pay the most; busy-loop with huge pages makes few calls per \
         GiB and pays the least.",
    ))
}

/// Whether the huge-page steps can get huge pages (nothing when the mode is unknown).
fn thp(info: &SystemInfo) -> Option<Finding> {
    match info.thp_mode.as_deref() {
        Some("never") => Some(finding(
            "thp-never",
            "Transparent huge pages are switched off".into(),
            "/sys/kernel/mm/transparent_hugepage/enabled is [never]".into(),
            "The huge-pages and busy-loop steps cannot get 2 MiB pages, so they run on 4 KiB pages \
             like vmsplice-splice and the gain the article saw from huge pages does not appear. As \
             root, `echo madvise > /sys/kernel/mm/transparent_hugepage/enabled` allows them again.",
        )),
        Some(mode @ ("madvise" | "always")) => Some(finding(
            "thp-available",
            format!("Transparent huge pages are available (mode {mode})"),
            format!("/sys/kernel/mm/transparent_hugepage/enabled is [{mode}]"),
            "The huge-page steps ask for 2 MiB pages with madvise and get them when memory is not \
             too fragmented; each run's notes say how much of the buffers really sat in huge pages.",
        )),
        _ => None,
    }
}

/// A pipe-max-size below the article's pipe or below the kernel's default.
fn pipe_max_size(info: &SystemInfo) -> Option<Finding> {
    let max = info.pipe_max_size?;
    if max < ARTICLE_PIPE {
        Some(finding(
            "pipe-max-size-low",
            "pipe-max-size is below the 128 KiB the article's later steps use".into(),
            format!("/proc/sys/fs/pipe-max-size is {max} bytes"),
            "Steps 2 to 5 ask for a 128 KiB pipe; an unprivileged run cannot get it and fails, \
             and a run as root is allowed past the limit. As root, \
             `echo 1048576 > /proc/sys/fs/pipe-max-size` restores the kernel's default.",
        ))
    } else if max < DEFAULT_PIPE_MAX {
        Some(finding(
            "pipe-max-size-reduced",
            "pipe-max-size is below the kernel's default of 1 MiB".into(),
            format!("/proc/sys/fs/pipe-max-size is {max} bytes"),
            "The article's steps fit, but sweeps and variants asking for bigger pipes are \
             refused above this size.",
        ))
    } else {
        None
    }
}

/// Where the two ends run: one CPU, SMT siblings, or separate cores.
fn cpus(info: &SystemInfo) -> Option<Finding> {
    let allowed = &info.cpus_allowed;
    if allowed.len() < 2 {
        return Some(finding(
            "one-cpu",
            "Only one CPU is available to the runner".into(),
            format!("this process may run on CPUs {allowed:?}"),
            "Writer and reader take turns on one CPU: every hand-over is a context switch, and the \
             figures measure the scheduler more than the pipe. Give the runner two CPUs.",
        ));
    }
    let (w, r) = (allowed[0], allowed[1]);
    let place = |cpu: usize| info.cpu_topology.iter().find(|p| p.cpu == cpu);
    let cores = {
        let mut seen: Vec<(Option<u32>, Option<u32>)> = info
            .cpu_topology
            .iter()
            .map(|p| (p.package, p.core))
            .collect();
        seen.sort();
        seen.dedup();
        seen.len()
    };
    match (place(w), place(r)) {
        (Some(pw), Some(_)) if pw.siblings.contains(&r) => Some(finding(
            "ends-share-a-core",
            format!("The ends run on two SMT siblings of one core (CPUs {w} and {r})"),
            format!("CPU {w}'s thread_siblings_list is {:?}; {cores} cores in {} CPUs", pw.siblings, allowed.len()),
            "Writer and reader share one core's caches and execution units: data handed over \
             stays in the core's own cache, but the two hot loops compete for the same core. \
             Pick --writer-cpu and --reader-cpu on different cores to compare.",
        )),
        (Some(pw), Some(pr)) => Some(finding(
            "ends-on-separate-cores",
            format!("The ends run on separate cores (CPUs {w} and {r})"),
            format!(
                "CPU {w} is core {} and CPU {r} is core {} (package {} and {}); {cores} cores in {} CPUs",
                show(pw.core),
                show(pr.core),
                show(pw.package),
                show(pr.package),
                allowed.len()
            ),
            "Each end has a core to itself; every hand-over moves cache lines \
             (the pipe's bookkeeping, and the data when it is copied) from one core to the other.",
        )),
        _ => None,
    }
}

/// The kernel against the article's 5.17, with what vmsplice does on a newer one.
fn kernel(info: &SystemInfo) -> Option<Finding> {
    let version = kernel_version(&info.kernel)?;
    if version <= ARTICLE_KERNEL {
        return Some(finding(
            "kernel-like-article",
            format!(
                "The kernel ({}) is as old as the article's or older",
                info.kernel
            ),
            format!("uname -r is {}", info.kernel),
            "The pipe code behaves as the article describes; the excerpts in this book come \
             from 6.12 and may differ in detail.",
        ));
    }
    let vmsplice = match info.vmsplice {
        Some(crate::machine::vmsplice_probe::VmspliceBehaviour::MapsPages) => {
            "vmsplice still maps the writer's pages into the pipe here"
        }
        Some(crate::machine::vmsplice_probe::VmspliceBehaviour::CopiesPages) => {
            "vmsplice copies the data here instead of mapping the writer's pages"
        }
        Some(crate::machine::vmsplice_probe::VmspliceBehaviour::Mixed) => {
            "vmsplice mapped some pages and copied others in the probe"
        }
        None => "what vmsplice does here could not be probed",
    };
    Some(finding(
        "kernel-newer",
        format!(
            "The kernel ({}) is newer than the article's 5.17",
            info.kernel
        ),
        format!("uname -r is {}; {vmsplice}", info.kernel),
        "The pipe code the book quotes is from 6.12; small changes since 5.17 (how head and \
         tail are read, how pages are allocated) move the figures a little. Whether \
         vmsplice maps or copies decides whether the zero-copy steps are zero-copy at all.",
    ))
}

fn show(n: Option<u32>) -> String {
    n.map_or("?".into(), |n| n.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::system::{Availability, CpuPlace};
    use crate::machine::vmsplice_probe::VmspliceBehaviour;

    fn machine() -> SystemInfo {
        let na = || Availability {
            available: false,
            detail: String::new(),
        };
        SystemInfo {
            kernel: "6.12.117-amd64".into(),
            cpu_model: "test".into(),
            cpus_online: 4,
            cpus_allowed: vec![0, 1, 2, 3],
            virtualization: None,
            thp_mode: Some("madvise".into()),
            thp_defrag: None,
            pipe_max_size: Some(1 << 20),
            perf: na(),
            pagemap: na(),
            gigantic_pages: false,
            vmsplice: Some(VmspliceBehaviour::MapsPages),
            mitigations: Vec::new(),
            cpu_topology: (0..4)
                .map(|cpu| CpuPlace {
                    cpu,
                    core: Some(cpu as u32 % 2),
                    package: Some(0),
                    // 0 and 2 share core 0, 1 and 3 share core 1.
                    siblings: vec![cpu % 2, cpu % 2 + 2],
                })
                .collect(),
        }
    }

    fn ids(f: &[Finding]) -> Vec<&str> {
        f.iter().map(|f| f.id.as_str()).collect()
    }

    #[test]
    fn a_vm_and_bare_metal_are_told_apart() {
        let bare = findings(&machine(), None);
        assert!(ids(&bare).contains(&"bare-metal"));
        assert!(!ids(&bare).contains(&"virtualised"));
        let mut vm = machine();
        vm.virtualization = Some("KVM".into());
        let wakeup = WakeupFigures {
            blocking_us: 40.0,
            busy_us: 1.0,
            round_trips: 1000,
            cpus: [0, 1],
        };
        let f = findings(&vm, Some(&wakeup));
        let virt = f.iter().find(|f| f.id == "virtualised").unwrap();
        assert!(virt.title.contains("KVM"));
        assert!(virt.evidence.contains("40.0 µs"), "{}", virt.evidence);
        let cost = f.iter().find(|f| f.id == "wakeup-cost").unwrap();
        assert!(cost.title.contains("19.5 µs"), "{}", cost.title);
        assert!(!ids(&findings(&vm, None)).contains(&"wakeup-cost"));
    }

    #[test]
    fn thp_never_and_always_read_differently() {
        let mut m = machine();
        m.thp_mode = Some("never".into());
        let f = findings(&m, None);
        assert!(ids(&f).contains(&"thp-never"));
        assert!(f
            .iter()
            .find(|f| f.id == "thp-never")
            .unwrap()
            .effect
            .contains("madvise"));
        m.thp_mode = Some("always".into());
        let f = findings(&m, None);
        assert!(ids(&f).contains(&"thp-available") && !ids(&f).contains(&"thp-never"));
        m.thp_mode = None;
        let f = findings(&m, None);
        assert!(!ids(&f).iter().any(|id| id.starts_with("thp")));
    }

    #[test]
    fn a_low_pipe_max_size_is_named_with_its_value() {
        let mut m = machine();
        m.pipe_max_size = Some(65536);
        let f = findings(&m, None);
        let low = f.iter().find(|f| f.id == "pipe-max-size-low").unwrap();
        assert!(low.evidence.contains("65536"));
        m.pipe_max_size = Some(512 * 1024);
        assert!(ids(&findings(&m, None)).contains(&"pipe-max-size-reduced"));
        m.pipe_max_size = Some(1 << 20);
        assert!(!ids(&findings(&m, None))
            .iter()
            .any(|id| id.starts_with("pipe-max")));
    }

    #[test]
    fn topology_says_whether_the_ends_share_a_core() {
        let m = machine();
        // Default ends: CPUs 0 and 1, cores 0 and 1.
        assert!(ids(&findings(&m, None)).contains(&"ends-on-separate-cores"));
        let mut smt = machine();
        smt.cpus_allowed = vec![0, 2];
        assert!(ids(&findings(&smt, None)).contains(&"ends-share-a-core"));
        let mut one = machine();
        one.cpus_allowed = vec![3];
        assert!(ids(&findings(&one, None)).contains(&"one-cpu"));
    }

    #[test]
    fn kernel_and_mitigations() {
        let mut m = machine();
        m.mitigations = vec![
            "spectre_v2: Mitigation: Retpolines".into(),
            "mds: Mitigation: Clear CPU buffers".into(),
        ];
        let f = findings(&m, None);
        let mit = f.iter().find(|f| f.id == "mitigations").unwrap();
        assert!(mit.evidence.contains("spectre_v2, mds"), "{}", mit.evidence);
        assert!(ids(&f).contains(&"kernel-newer"));
        m.kernel = "5.17.0-1-amd64".into();
        assert!(ids(&findings(&m, None)).contains(&"kernel-like-article"));
        assert_eq!(kernel_version("6.18.0-rc1"), Some((6, 18)));
        assert_eq!(kernel_version("garbage"), None);
    }
}
