//! Naming tracepoints and reading perf's refusals: where tracefs is, a
//! tracepoint's id, why `perf_event_open` said no, a counter's filter, and
//! the one wakeup that proves a filter sees this thread.

use std::path::{Path, PathBuf};

use perf_event::Counter;

use super::{perf_paranoid, Count, Missing, Unavailable};

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

/// Why the THP tracepoints (`huge_memory:*`, `thp:*`) are not among an end's
/// counts, naming those this kernel has (measured on 6.18: a huge-pages run
/// fires none of them; its two huge pages are order-9 allocations in the
/// writer's own faults, counted as [`super::EndCounts::huge_page_allocs`]).
pub(crate) fn thp_not_per_end() -> Missing {
    let mut events = Vec::new();
    if let Some(root) = tracefs_events() {
        for category in ["huge_memory", "thp"] {
            let Ok(dir) = std::fs::read_dir(root.join(category)) else {
                continue;
            };
            let mut names: Vec<String> = dir
                .filter_map(|e| e.ok())
                .filter(|e| e.path().join("id").is_file())
                .map(|e| format!("{category}:{}", e.file_name().to_string_lossy()))
                .collect();
            names.sort();
            events.extend(names);
        }
    }
    Missing::new(vec![Count::ThpEvents], Unavailable::NotPerEnd { events })
}

/// A task counter narrowed by `filter`; refused as blocked where the kernel
/// does not take the filter (an unfiltered count would be the wrong figure).
pub(super) fn filtered(counter: Counter, filter: &str) -> Result<Counter, Unavailable> {
    let text = std::ffi::CString::new(filter).map_err(|_| Unavailable::Blocked { errno: 0 })?;
    if set_filter(&counter, &text) {
        Ok(counter)
    } else {
        Err(Unavailable::Blocked {
            errno: std::io::Error::last_os_error().raw_os_error().unwrap_or(0),
        })
    }
}

/// The order of a transparent huge page: how many times the kernel's page
/// size doubles to `hpage_pmd_size` (9 on x86-64: 4 KiB to 2 MiB).
pub(crate) fn huge_page_order() -> u32 {
    let page = crate::process::page_size::page_size().max(1);
    let huge = crate::process::page_size::huge_page_size().max(page);
    (huge / page).trailing_zeros()
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

/// Wakes a thread of this process that sleeps on a pipe: one `sched_waking`
/// fired by the calling thread. Whether it went as planned.
pub(super) fn wake_a_sleeper() -> bool {
    let Ok((read, write)) = rustix::pipe::pipe() else {
        return false;
    };
    let (tid_tx, tid_rx) = std::sync::mpsc::channel();
    let sleeper = std::thread::spawn(move || {
        let _ = tid_tx.send(rustix::thread::gettid().as_raw_nonzero().get());
        let mut byte = [0u8; 1];
        rustix::io::read(&read, &mut byte).is_ok()
    });
    // The write comes once the sleeper is asleep in its read: a sleeper not
    // yet asleep is only made runnable, with no wakeup to count. Watching its
    // state takes a fraction of a millisecond where a fixed wait long enough
    // for any machine cost every end 5 ms before its work; past a second (a
    // loaded machine may not run the sleeper for a while) the write goes
    // anyway, and the check fails safe (the window is then opened on the task).
    if let Ok(tid) = tid_rx.recv() {
        let stat = format!("/proc/self/task/{tid}/stat");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
        while !asleep(&stat) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_micros(20));
        }
    }
    let wrote = rustix::io::write(&write, &[1]).is_ok();
    sleeper.join().unwrap_or(false) && wrote
}

/// Whether the thread whose `/proc/.../stat` is at `stat` sleeps (state `S`).
fn asleep(stat: &str) -> bool {
    std::fs::read_to_string(stat)
        .ok()
        .and_then(|text| {
            let (_, rest) = text.rsplit_once(')')?;
            Some(rest.trim_start().starts_with('S'))
        })
        .unwrap_or(false)
}
