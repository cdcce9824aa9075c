//! Naming tracepoints and reading perf's refusals: where tracefs is, a
//! tracepoint's id, why `perf_event_open` said no, and a counter's filter.

use std::path::{Path, PathBuf};

use perf_event::Counter;

use super::{perf_paranoid, Unavailable};

/// Where tracefs's `events` folder is, if it is mounted.
pub(super) fn tracefs_events() -> Option<PathBuf> {
    [
        "/sys/kernel/tracing/events",
        "/sys/kernel/debug/tracing/events",
    ]
    .into_iter()
    .map(PathBuf::from)
    .find(|p| p.join("kmem").is_dir() || p.join("sched").is_dir())
}

/// The id of tracepoint `event` (`category/name`) under `events`.
pub(super) fn tracepoint_id(events: &Path, event: &str) -> Result<u64, Unavailable> {
    let path = events.join(event).join("id");
    match std::fs::read_to_string(&path) {
        Ok(text) => text.trim().parse().map_err(|_| Unavailable::NoSuchEvent {
            event: event.to_string(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Unavailable::NoSuchEvent {
            event: event.to_string(),
        }),
        Err(_) => Err(Unavailable::NotPermitted {
            paranoid: perf_paranoid(),
        }),
    }
}

/// Why perf_event_open refused, from its error.
pub(super) fn refusal(err: &std::io::Error) -> Unavailable {
    let errno = err.raw_os_error().unwrap_or(0);
    let privileged = rustix::process::geteuid().is_root() || perf_paranoid() == Some(-1);
    match errno {
        libc::EACCES | libc::EPERM if !privileged => Unavailable::NotPermitted {
            paranoid: perf_paranoid(),
        },
        _ => Unavailable::Blocked { errno },
    }
}

/// `PERF_EVENT_IOC_SET_FILTER`: `_IOW('$', 6, char *)`.
const PERF_EVENT_IOC_SET_FILTER: libc::c_ulong = (1 << 30)
    | ((std::mem::size_of::<*const libc::c_char>() as libc::c_ulong) << 16)
    | ((b'$' as libc::c_ulong) << 8)
    | 6;

/// Sets a tracepoint counter's filter (ftrace's syntax); whether it took.
pub(super) fn set_filter(counter: &Counter, filter: &std::ffi::CStr) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: the descriptor is the counter's, open for its life; the filter is
    // a NUL-terminated string the kernel only reads.
    unsafe {
        libc::ioctl(
            counter.as_raw_fd(),
            PERF_EVENT_IOC_SET_FILTER as _,
            filter.as_ptr(),
        ) == 0
    }
}
