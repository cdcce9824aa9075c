//! A run's ends find each other and no one else: a second local user
//! (`nobody`) races for every loopback listener a run makes, as a program that
//! watches /proc/net/tcp would (`racer.pl`), connects first, offers bytes that
//! pass the data check, or takes the freed port and relays the producer's real
//! bytes. Each test runs in a network namespace of its own, so the racer sees
//! the test's listeners and no one else's on this shared machine.

use std::collections::BTreeMap;
use std::io::Read;
use std::process::Stdio;

use crate::common::{cpus, exe, spawn_as_nobody, stderr, Reaper};
use pipebench::ipc::{self, IpcParams};
use pipebench::process::launch::EndProgram;
use pipebench::size::{ByteSize, MIB};

/// The racer, a perl script (perl is essential on Debian).
const RACER: &str = include_str!("racer.pl");

/// The six mechanisms whose ends meet through a TCP port on 127.0.0.1.
const TCP: [&str; 6] = [
    "tcp-rw",
    "tcp-sendfile",
    "tcp-splice",
    "tcp-msg-zerocopy",
    "tcp-zerocopy-receive",
    "uring-send-zc",
];

/// Runs `body` on a thread of its own that first moves into a new network
/// namespace with its loopback up (and, if given, ephemeral ports from that
/// range only). Everything the thread starts (ends, the racer) is in it too.
fn in_own_network<T: Send + 'static>(
    ports: Option<(u16, u16)>,
    body: impl FnOnce() -> T + Send + 'static,
) -> T {
    std::thread::spawn(move || {
        // SAFETY: unshare(CLONE_NEWNET) moves this thread alone.
        let rc = unsafe { libc::unshare(libc::CLONE_NEWNET) };
        assert_eq!(
            rc,
            0,
            "unshare(CLONE_NEWNET): {}",
            std::io::Error::last_os_error()
        );
        loopback_up();
        if let Some((first, last)) = ports {
            // Opened from this thread: the namespace's own settings. No
            // TIME_WAIT is kept, so a few ports last for many runs.
            for (name, value) in [
                ("ip_local_port_range", format!("{first} {last}")),
                ("tcp_max_tw_buckets", "0".to_string()),
            ] {
                std::fs::write(format!("/proc/sys/net/ipv4/{name}"), value)
                    .unwrap_or_else(|e| panic!("set the namespace's {name}: {e}"));
            }
        }
        body()
    })
    .join()
    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Brings `lo` of this thread's network namespace up (a new one starts down).
fn loopback_up() {
    // SAFETY: a datagram socket for the ioctls, an ifreq we own, closed below.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
        let mut ifr: libc::ifreq = std::mem::zeroed();
        for (to, from) in ifr.ifr_name.iter_mut().zip(b"lo\0") {
            *to = *from as libc::c_char;
        }
        assert_eq!(libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut ifr), 0);
        ifr.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
        assert_eq!(
            libc::ioctl(fd, libc::SIOCSIFFLAGS, &ifr),
            0,
            "bring lo up: {}",
            std::io::Error::last_os_error()
        );
        libc::close(fd);
    }
}

/// The racer, running as nobody in the caller's network namespace.
struct Racer(Reaper);

impl Racer {
    /// `mode` is `forge` or `relay`; `bytes` is the length of a forged
    /// stream; `knock` a port range to knock on besides watching.
    fn start(mode: &str, bytes: u64, knock: Option<(u16, u16)>) -> Racer {
        let mut args = vec![
            "-e".to_string(),
            RACER.to_string(),
            mode.to_string(),
            bytes.to_string(),
        ];
        if let Some((first, last)) = knock {
            args.extend([first.to_string(), last.to_string()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut racer = Racer(Reaper(spawn_as_nobody("perl", &args)));
        // It computes the pattern before it watches: give it the time.
        std::thread::sleep(std::time::Duration::from_millis(1500));
        if racer.0.try_wait().unwrap().is_some() {
            let (status, said) = racer.0.finish();
            panic!("the racer did not start ({status}): {said}");
        }
        racer
    }

    /// Stops it (its stdin ends) and returns what it did, by name.
    fn stop(mut self) -> BTreeMap<String, u64> {
        drop(self.0.stdin.take());
        let mut out = String::new();
        self.0
            .stdout
            .take()
            .expect("piped")
            .read_to_string(&mut out)
            .unwrap();
        let (status, said) = self.0.finish();
        assert!(status.success(), "the racer failed ({status}): {said}");
        out.lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(name, n)| (name.to_string(), n.parse().unwrap()))
            .collect()
    }
}

/// Whether a note says connections other than the producer's were refused.
fn refused(notes: &[String]) -> bool {
    notes
        .iter()
        .any(|n| n.contains("came from another socket than"))
}

/// Twenty runs of each TCP mechanism (4 MiB each) while a racer as nobody
/// watches /proc/net/tcp: ten while it offers a forged stream that passes the
/// data check, ten while it tries to take the port and relay the producer.
/// Every run completes with the producer's own bytes; the racer's forged
/// streams are never read to their end and nothing is relayed; the runs it
/// came first in say so; and it did connect, so none of this is vacuous.
#[test]
fn a_nobody_racing_for_the_loopback_port_never_joins_a_tcp_run() {
    let _cpus = cpus();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    let bytes = 4 * MIB;
    let (runs, noted, seen) = in_own_network(None, move || {
        let params = IpcParams {
            bytes: ByteSize(bytes),
            dir: Some(path),
            program: Some(EndProgram {
                exe: exe(),
                prefix: Vec::new(),
            }),
            timeout: std::time::Duration::from_secs(60),
            ..Default::default()
        };
        let (mut runs, mut noted) = (0, 0);
        let mut seen: Vec<(String, BTreeMap<String, u64>)> = Vec::new();
        for mode in ["forge", "relay"] {
            let racer = Racer::start(mode, bytes, None);
            for id in TCP {
                let mechanism = id.parse().unwrap();
                if let Err(e) = ipc::harness::check_here(mechanism, &params) {
                    assert_eq!(e.kind(), ipc::IpcErrorKind::Unsupported, "{id}: {e}");
                    continue;
                }
                for _ in 0..10 {
                    let result = ipc::run(mechanism, &params)
                        .unwrap_or_else(|e| panic!("{id} with a {mode} racer: {e}"));
                    assert!(result.checksum_ok, "{id}: {result:?}");
                    assert_eq!(result.bytes, bytes, "{id}");
                    runs += 1;
                    noted += usize::from(refused(&result.notes));
                }
            }
            seen.push((mode.to_string(), racer.stop()));
        }
        (runs, noted, seen)
    });
    eprintln!("{runs} runs, {noted} said they refused a connection; the racer: {seen:?}");
    assert!(runs >= 40, "too few TCP mechanisms run here: {runs} runs");
    for (mode, seen) in &seen {
        assert!(
            seen["connected"] > 0,
            "{mode}: the racer never got in: {seen:?}"
        );
        assert_eq!(
            seen["consumed"], 0,
            "{mode}: a forged stream was read: {seen:?}"
        );
        assert_eq!(
            seen["relayed"], 0,
            "{mode}: the producer was relayed: {seen:?}"
        );
        assert_eq!(
            seen["unix_named"], 0,
            "{mode}: a named Unix socket: {seen:?}"
        );
    }
    assert!(
        noted > 0,
        "the racer never came first: the check was not tried"
    );
}

/// Twenty latency runs of the TCP pair while a racer as nobody knocks on every
/// port the namespace may give (eight) and watches /proc/net/tcp: each run
/// completes, none of the racer's forged bytes is read, and a run it came
/// first in says so in its warnings. The pair's listener lives only from its
/// listen to the harness's own connect, microseconds, so the racer seldom
/// gets in here: the harness's unit test puts nobody in that very moment
/// (`an_intruder_that_connects_to_the_tcp_pair_first_is_refused_unread`);
/// this one shows the racer knocking all along and nothing harmed.
#[test]
fn a_nobody_racing_for_the_latency_tcp_pair_never_joins_it() {
    let _cpus = cpus();
    let range = (40000, 40007);
    let (warned, seen) = in_own_network(Some(range), move || {
        let racer = Racer::start("forge", 64, Some(range));
        let mut warned = 0;
        for _ in 0..20 {
            let output = std::process::Command::new(exe())
                .args([
                    "latency",
                    "tcp",
                    "--sizes",
                    "64",
                    "--round-trips",
                    "1000",
                    "--json",
                ])
                .stdin(Stdio::null())
                .output()
                .unwrap();
            assert!(output.status.success(), "{}", stderr(&output));
            let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
            for r in report["results"].as_array().unwrap() {
                assert_eq!(r["count"], 1000, "{r}");
                warned += usize::from(r.get("warnings").is_some());
            }
        }
        (warned, racer.stop())
    });
    eprintln!("{warned} of 20 latency runs warned; the racer: {seen:?}");
    assert!(seen["knocked"] > 1000, "the racer did not race: {seen:?}");
    assert!(
        warned as u64 <= seen["connected"],
        "{warned} warnings but the racer got in {} times",
        seen["connected"]
    );
    assert_eq!(seen["consumed"], 0, "a forged stream was read: {seen:?}");
    assert_eq!(seen["unix_named"], 0, "a named Unix socket: {seen:?}");
}
