//! What this machine is, for `/api/system`, `pipebench system` and the "your
//! machine vs the article" chapter: everything that explains why figures differ.

use std::path::Path;

use serde::Serialize;

use crate::ends::buffer::{Buffer, BufferSpec};
use crate::ends::hugepage::{self, inspect_pages};
use crate::ends::pipe_setup::pipe_max_size;
use crate::machine::vmsplice_probe::{self, VmspliceBehaviour};

/// A description of the machine and the kernel features the steps depend on.
#[derive(Debug, Clone, Serialize)]
pub struct SystemInfo {
    /// `uname -r`.
    pub kernel: String,
    /// CPU model name.
    pub cpu_model: String,
    /// Logical CPUs online.
    pub cpus_online: usize,
    /// CPUs this process may run on.
    pub cpus_allowed: Vec<usize>,
    /// Hypervisor, if we run in a virtual machine (e.g. `KVM`), else None.
    pub virtualization: Option<String>,
    /// THP mode: always, madvise or never.
    pub thp_mode: Option<String>,
    /// THP defrag mode.
    pub thp_defrag: Option<String>,
    /// /proc/sys/fs/pipe-max-size in bytes.
    pub pipe_max_size: Option<u64>,
    /// Whether `perf` can profile here, and why not.
    pub perf: Availability,
    /// Whether /proc/self/pagemap shows page frame numbers (needs CAP_SYS_ADMIN).
    pub pagemap: Availability,
    /// Whether the CPU supports 1 GiB pages (pdpe1gb).
    pub gigantic_pages: bool,
    /// What vmsplice does on this kernel.
    pub vmsplice: Option<VmspliceBehaviour>,
    /// CPU vulnerability mitigations in force, as the kernel reports them.
    pub mitigations: Vec<String>,
    /// Where each CPU this process may use sits: its core, package and SMT siblings.
    pub cpu_topology: Vec<CpuPlace>,
}

/// One CPU's place in the machine, from `/sys/devices/system/cpu/cpuN/topology`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CpuPlace {
    /// The CPU number.
    pub cpu: usize,
    /// Its core's id within the package.
    pub core: Option<u32>,
    /// Its package (socket).
    pub package: Option<u32>,
    /// The CPUs sharing its core (itself included): more than one means SMT.
    pub siblings: Vec<usize>,
}

/// Parses a kernel CPU list such as `0-3,8,10-11`.
pub(crate) fn parse_cpu_list(text: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.trim().parse::<usize>(), b.trim().parse::<usize>()) {
                    out.extend(a..=b);
                }
            }
            None => out.extend(part.trim().parse::<usize>().ok()),
        }
    }
    out
}

fn cpu_place(cpu: usize) -> CpuPlace {
    let dir = format!("/sys/devices/system/cpu/cpu{cpu}/topology");
    let number = |name: &str| read_trimmed(format!("{dir}/{name}")).and_then(|v| v.parse().ok());
    CpuPlace {
        cpu,
        core: number("core_id"),
        package: number("physical_package_id"),
        siblings: read_trimmed(format!("{dir}/thread_siblings_list"))
            .map(|l| parse_cpu_list(&l))
            .unwrap_or_else(|| vec![cpu]),
    }
}

/// Whether a facility is usable, with a reason a person can act on.
#[derive(Debug, Clone, Serialize)]
pub struct Availability {
    /// Usable.
    pub available: bool,
    /// Why not, and what to do.
    pub detail: String,
}

fn read_trimmed(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

fn cpuinfo_field(cpuinfo: &str, key: &str) -> Option<String> {
    cpuinfo.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        (k.trim() == key).then(|| v.trim().to_string())
    })
}

fn perf_availability() -> Availability {
    let on_path = crate::profile::perf_installed();
    let paranoid =
        read_trimmed("/proc/sys/kernel/perf_event_paranoid").and_then(|s| s.parse::<i32>().ok());
    let root = rustix::process::geteuid().is_root();
    match (on_path, paranoid) {
        (false, _) => Availability {
            available: false,
            detail: "perf is not installed: on Debian or Ubuntu, `apt-get install linux-perf` (or linux-tools-$(uname -r))".into(),
        },
        (true, None) => Availability {
            available: false,
            detail: "the kernel has no perf events (/proc/sys/kernel/perf_event_paranoid is missing)".into(),
        },
        (true, Some(level)) if level > 2 && !root => Availability {
            available: false,
            detail: format!("perf_event_paranoid is {level}: lower it with `sysctl kernel.perf_event_paranoid=1`, or run as root"),
        },
        (true, Some(level)) => Availability {
            available: true,
            detail: format!("perf installed, perf_event_paranoid = {level}{}", if root { ", running as root" } else { "" }),
        },
    }
}

fn pagemap_availability() -> Availability {
    let probe = Buffer::allocate(BufferSpec {
        len: 4096,
        touch: true,
        ..Default::default()
    })
    .ok()
    .and_then(|b| inspect_pages(b.addr(), 1).ok());
    match probe {
        Some(pages) if pages.first().and_then(|p| p.pfn).is_some() => Availability {
            available: true,
            detail: "page frame numbers and kpageflags are readable".into(),
        },
        Some(_) => Availability {
            available: false,
            detail: "pagemap hides page frame numbers from unprivileged processes: run as root (or with CAP_SYS_ADMIN) to see physical pages; huge pages are still checked through smaps".into(),
        },
        None => Availability {
            available: false,
            detail: "/proc/self/pagemap cannot be read on this system".into(),
        },
    }
}

fn mitigations() -> Vec<String> {
    let Ok(dir) = std::fs::read_dir("/sys/devices/system/cpu/vulnerabilities") else {
        return Vec::new();
    };
    let mut found: Vec<String> = dir
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let state = read_trimmed(entry.path())?;
            let relevant = state.starts_with("Mitigation");
            relevant.then(|| format!("{}: {state}", entry.file_name().to_string_lossy()))
        })
        .collect();
    found.sort();
    found
}

/// The hypervisor's name from CPUID leaf 0x40000000, as lscpu reports it.
#[cfg(target_arch = "x86_64")]
fn hypervisor_vendor() -> Option<String> {
    // SAFETY: CPUID is available on every x86-64 CPU; leaf 0x40000000 is reserved
    // for hypervisors and harmless to query on bare metal.
    #[allow(unused_unsafe)]
    let leaf = unsafe { std::arch::x86_64::__cpuid(0x4000_0000) };
    let mut id = Vec::with_capacity(12);
    for reg in [leaf.ebx, leaf.ecx, leaf.edx] {
        id.extend_from_slice(&reg.to_le_bytes());
    }
    let id = String::from_utf8_lossy(&id)
        .trim_end_matches('\0')
        .to_string();
    let name = match id.as_str() {
        "KVMKVMKVM" => "KVM",
        "Microsoft Hv" => "Hyper-V",
        "VMwareVMware" => "VMware",
        "XenVMMXenVMM" => "Xen",
        "TCGTCGTCGTCG" => "QEMU (TCG emulation)",
        "VBoxVBoxVBox" => "VirtualBox",
        " lrpepyh  vr" => "Parallels",
        "ACRNACRNACRN" => "ACRN",
        "" => return None,
        other => other,
    };
    Some(name.to_string())
}

#[cfg(not(target_arch = "x86_64"))]
fn hypervisor_vendor() -> Option<String> {
    None
}

impl SystemInfo {
    /// Reads everything; never fails, unknowns stay empty.
    pub fn probe() -> SystemInfo {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let flags = cpuinfo_field(&cpuinfo, "flags").unwrap_or_default();
        let has_flag = |f: &str| flags.split_whitespace().any(|x| x == f);
        let virtualization = if has_flag("hypervisor") {
            Some(
                hypervisor_vendor()
                    .or_else(|| read_trimmed("/sys/hypervisor/type"))
                    .unwrap_or_else(|| "a hypervisor".into()),
            )
        } else {
            None
        };
        let uname = rustix::system::uname();
        SystemInfo {
            kernel: uname.release().to_string_lossy().into_owned(),
            cpu_model: cpuinfo_field(&cpuinfo, "model name").unwrap_or_else(|| "unknown".into()),
            cpus_online: std::thread::available_parallelism().map_or(1, |n| n.get()),
            cpus_allowed: crate::process::cpu::allowed_cpus(),
            virtualization,
            thp_mode: hugepage::thp_mode(),
            thp_defrag: read_trimmed("/sys/kernel/mm/transparent_hugepage/defrag")
                .and_then(|s| hugepage::parse_bracketed(&s)),
            pipe_max_size: pipe_max_size().map(|s| s.bytes()),
            perf: perf_availability(),
            pagemap: pagemap_availability(),
            gigantic_pages: has_flag("pdpe1gb"),
            vmsplice: vmsplice_probe::probe().ok(),
            mitigations: mitigations(),
            cpu_topology: crate::process::cpu::allowed_cpus()
                .into_iter()
                .map(cpu_place)
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_reads_the_basics() {
        let info = SystemInfo::probe();
        assert!(!info.kernel.is_empty());
        assert!(info.cpus_online >= 1);
        assert!(!info.cpus_allowed.is_empty());
        assert!(info.pipe_max_size.is_some());
        assert!(info.vmsplice.is_some());
        assert_eq!(info.cpu_topology.len(), info.cpus_allowed.len());
        assert!(info
            .cpu_topology
            .iter()
            .all(|p| p.siblings.contains(&p.cpu)));
    }

    #[test]
    fn cpu_lists_parse_like_the_kernel_writes_them() {
        assert_eq!(parse_cpu_list("0-3,8,10-11\n"), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_cpu_list("5"), vec![5]);
        assert_eq!(parse_cpu_list(""), Vec::<usize>::new());
    }
}
