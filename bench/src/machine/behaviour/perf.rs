//! What perf may count for this user on this machine, asked of the kernel
//! itself: three `perf_event_open` calls on this thread (a hardware counter,
//! a software event that includes the kernel, the same event for user space
//! only), explained by the paranoid level and this process's capabilities.

use perf_event::events::{Hardware, Software};
use perf_event::Builder;

use super::{Answer, Outcome};
use crate::process::counts::perf_paranoid;

/// `CAP_PERFMON`'s bit in the capability sets (Linux 5.8 on).
const CAP_PERFMON: u32 = 38;
/// `CAP_SYS_ADMIN`'s bit, which older kernels ask for instead.
const CAP_SYS_ADMIN: u32 = 21;

/// This process's effective capabilities, from /proc/self/status.
fn effective_caps() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let hex = status.lines().find_map(|l| l.strip_prefix("CapEff:"))?;
    u64::from_str_radix(hex.trim(), 16).ok()
}

/// Who this process is to perf, in words.
fn privilege() -> String {
    let caps = effective_caps().unwrap_or(0);
    let paranoid = perf_paranoid().map_or("unreadable".to_string(), |p| p.to_string());
    let who = if rustix::process::geteuid().is_root() {
        "running as root"
    } else if caps & (1 << CAP_PERFMON) != 0 {
        "with CAP_PERFMON"
    } else if caps & (1 << CAP_SYS_ADMIN) != 0 {
        "with CAP_SYS_ADMIN"
    } else {
        "without CAP_PERFMON"
    };
    format!("perf_event_paranoid {paranoid}, {who}")
}

/// Opens `event` on this thread; the error's words when refused.
fn opens(event: impl perf_event::events::Event + 'static, kernel: bool) -> Result<(), String> {
    let mut builder = Builder::new(event);
    builder.observe_self().any_cpu().exclude_kernel(!kernel);
    builder.build().map(drop).map_err(|e| e.to_string())
}

/// Asks the kernel what this user may count.
pub(crate) fn perf() -> Outcome {
    let who = privilege();
    let hardware = opens(Hardware::CPU_CYCLES, true);
    let kernel = opens(Software::TASK_CLOCK, true);
    let user = opens(Software::TASK_CLOCK, false);
    let said = |r: &Result<(), String>| match r {
        Ok(()) => "opened".to_string(),
        Err(e) => format!("refused ({e})"),
    };
    let evidence = format!(
        "{who}: cycles counter {}; kernel task-clock {}; user task-clock {}",
        said(&hardware),
        said(&kernel),
        said(&user)
    );
    let answer = match (&hardware, &kernel, &user) {
        (Ok(()), Ok(()), _) => Answer::PerfAll,
        (Err(_), Ok(()), _) => Answer::PerfNoHardware,
        (_, Err(_), Ok(())) => Answer::PerfUserOnly,
        (_, Err(_), Err(_)) => Answer::PerfNone,
    };
    Ok((answer, evidence))
}
