//! Tests of `counts`.

use super::*;

#[test]
fn a_plain_window_opens_no_perf_event_and_says_the_kernels_events_are_on_request() {
    let counting = Counting::open(&Request {
        calls: vec!["write"],
        ..Request::default()
    });
    if sched_migrations().is_none() {
        // Migrations then need a perf counter: nothing to prove here.
        assert!(counting.group.is_some() || !counting.missing.is_empty());
        return;
    }
    assert!(counting.group.is_none() && !counting.alone, "{counting:?}");
    assert!(counting.traced.is_empty() && counting.syscalls.is_empty());
    let mut counting = counting;
    counting.start();
    assert_eq!(
        counting.missing,
        vec![Missing::new(Count::TRACED.to_vec(), Unavailable::OnRequest)]
    );
    let counted = counting.stop(BTreeMap::new());
    assert!(counted.counts.cpu_migrations.is_some(), "{counted:?}");
    for count in Count::TRACED {
        assert_eq!(counted.counts.get(count), None, "{count:?}");
    }
}

#[test]
fn the_always_counts_cover_the_window_and_nothing_is_zero_for_unknown() {
    for per_wakeup in [false, true] {
        always_counts(per_wakeup);
    }
}

fn always_counts(per_wakeup: bool) {
    let mut counting = Counting::open(&Request {
        calls: vec!["write"],
        per_wakeup,
        trace_syscalls: false,
    });
    counting.start();
    // Fresh pages from the kernel each time (a freed Vec's memory may be
    // handed out again by malloc, already faulted in).
    const LEN: usize = 8 << 20;
    // SAFETY: a private anonymous mapping of LEN bytes, written within
    // its bounds and unmapped once.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            LEN,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        assert_ne!(p, libc::MAP_FAILED);
        for offset in (0..LEN).step_by(4096) {
            std::ptr::write_volatile((p as *mut u8).add(offset), 1);
        }
        libc::munmap(p, LEN);
    }
    std::thread::sleep(std::time::Duration::from_millis(5));
    let counted = counting.stop(BTreeMap::from([("write".to_string(), 3)]));
    let c = &counted.counts;
    assert!(c.page_faults > 0, "{c:?}");
    assert!(c.voluntary_switches >= 1, "a sleep gives up the CPU: {c:?}");
    assert_eq!(
        c.context_switches,
        c.voluntary_switches + c.involuntary_switches
    );
    assert_eq!(c.syscalls["write"], 3);
    // Every count is either there or said to be missing, with a reason.
    for count in Count::TRACED {
        let said = counted.missing.iter().any(|m| m.counts.contains(&count));
        assert!(
            c.get(count).is_some() != said,
            "{count:?}: {c:?} {:?}",
            counted.missing
        );
    }
}

#[test]
fn a_pinned_thread_counts_its_own_wakeups_on_its_cpu() {
    let privileged = rustix::process::geteuid().is_root() && tracefs_events().is_some();
    let cpu = crate::process::cpu::allowed_cpus()[0];
    let (alone, counted) = std::thread::spawn(move || {
        crate::process::cpu::pin_to(cpu).unwrap();
        let mut counting = Counting::open(&Request {
            per_wakeup: true,
            ..Request::default()
        });
        let alone = counting.alone;
        counting.start();
        for _ in 0..20 {
            assert!(wake_a_sleeper());
        }
        (alone, counting.stop(BTreeMap::new()))
    })
    .join()
    .unwrap();
    if privileged {
        // Counted on the CPU, for this thread only: its twenty wakeups of
        // its sleepers, and not the sleepers' own when they exit (nor the
        // rest of the machine's).
        assert!(alone, "{counted:?}");
        let wakeups = counted.counts.wakeups.unwrap();
        assert!((20..=30).contains(&wakeups), "{counted:?}");
    } else {
        assert!(!alone);
        assert!(counted
            .missing
            .iter()
            .any(|m| m.counts.contains(&Count::Wakeups)));
    }
}

#[test]
fn missing_counts_are_merged_by_reason() {
    let merged = merge(vec![
        Missing::new(vec![Count::Ipis], Unavailable::NoTracefs),
        Missing::new(vec![Count::PageAllocs], Unavailable::NoTracefs),
        Missing::new(
            vec![Count::TlbFlushes],
            Unavailable::NoSuchEvent {
                event: "tlb/tlb_flush".into(),
            },
        ),
    ]);
    assert_eq!(merged.len(), 2);
    assert_eq!(merged[0].counts, [Count::PageAllocs, Count::Ipis]);
    assert!(
        merged[1].message.contains("tlb:tlb_flush"),
        "{}",
        merged[1].message
    );
}

#[test]
fn turned_off_says_so() {
    let counting = Counting::off(&Request::default());
    let counted = counting.stop(BTreeMap::new());
    assert_eq!(counted.missing[0].reason, Unavailable::TurnedOff);
    assert!(counted.counts.page_allocs.is_none());
}

/// Writes and reads back `pages` whole pages through a fresh pipe `cycles`
/// times: a pipe that keeps fewer spare pages than `pages` asks the page
/// allocator for the rest at every cycle.
fn pipe_cycles(pages: usize, cycles: usize) {
    let page = rustix::param::page_size();
    let (read, write) = rustix::pipe::pipe().unwrap();
    let bytes = vec![7u8; pages * page];
    let mut back = vec![0u8; bytes.len()];
    for _ in 0..cycles {
        let mut sent = 0;
        while sent < bytes.len() {
            sent += rustix::io::write(&write, &bytes[sent..]).unwrap();
        }
        let mut got = 0;
        while got < back.len() {
            got += rustix::io::read(&read, &mut back[got..]).unwrap();
        }
    }
}

/// An unpinned thread counts its tracepoints on the task (no single CPU to
/// count on): each counter stands alone, and counts what the thread did.
#[test]
fn an_unpinned_thread_counts_its_page_allocations_on_the_task() {
    let privileged = rustix::process::geteuid().is_root() && tracefs_events().is_some();
    let counted = std::thread::spawn(|| {
        pipe_cycles(4, 8);
        let mut counting = Counting::open(&Request {
            trace_syscalls: true,
            ..Request::default()
        });
        counting.start();
        pipe_cycles(4, 1000);
        counting.stop(BTreeMap::new())
    })
    .join()
    .unwrap();
    if privileged {
        // Each cycle frees four pages and the pipe keeps at most two or three
        // of them: at least one allocation a cycle. (In a group, these
        // tracepoint counters read 0 on 6.18.)
        let allocs = counted.counts.page_allocs.unwrap();
        assert!((1000..=4100).contains(&allocs), "{counted:?}");
        assert!(counted.counts.page_frees.unwrap() >= 1000, "{counted:?}");
    } else {
        assert!(counted.counts.page_allocs.is_none(), "{counted:?}");
    }
}
