//! For tests: another local user (`nobody`, uid 65534) who connects to a
//! loopback port before the run's own end does, as a program watching
//! /proc/net/tcp would, and offers bytes of its own choosing.

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

/// The unprivileged user the intruder runs as.
const NOBODY: u32 = 65534;

/// Connects, sends its bytes (a few KiB: they fit the socket's buffers, so
/// they are queued before it says so), says `sent`, then waits for the other
/// side: `eof` if it read them and closed, `error ...` if it closed them
/// unread (a reset), `data` if it answered.
const SCRIPT: &str = r#"
use IO::Socket::INET;
my ($port, $bytes) = @ARGV;
my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1", PeerPort => $port, Proto => "tcp")
    or die "connect: $!";
my $left = $bytes;
while ($left > 0) {
    my $n = syswrite($s, "\x55" x ($left < 65536 ? $left : 65536));
    die "write: $!" unless defined $n;
    $left -= $n;
}
$| = 1;
print "sent\n";
my $got = sysread($s, my $x, 1);
print defined $got ? ($got == 0 ? "eof\n" : "data\n") : "error $!\n";
"#;

/// A connected intruder, run as `nobody`.
pub(crate) struct Intruder {
    child: Child,
}

impl Intruder {
    /// Connects to `address` as `nobody` and sends `bytes` bytes of 0x55;
    /// returns once they are sent (so they wait in the connection's queue).
    pub(crate) fn connect(address: SocketAddr, bytes: usize) -> Intruder {
        let mut child = Command::new("perl")
            .args([
                "-e",
                SCRIPT,
                &address.port().to_string(),
                &bytes.to_string(),
            ])
            .uid(NOBODY)
            .gid(NOBODY)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("perl runs as nobody");
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().expect("piped"))
            .read_line(&mut line)
            .expect("the intruder says how far it got");
        assert_eq!(line, "sent\n", "the intruder did not get in");
        Intruder { child }
    }

    /// What the other side did with its connection (`eof`, `error ...`,
    /// `data`), once the intruder has seen it.
    pub(crate) fn outcome(mut self) -> String {
        let mut text = String::new();
        let _ = self
            .child
            .stdout
            .as_mut()
            .expect("piped")
            .read_to_string(&mut text);
        let _ = self.child.wait();
        text.trim().to_string()
    }
}

/// Whether `nobody` can take 127.0.0.1:`port` for a listener of its own, with
/// SO_REUSEADDR and SO_REUSEPORT (what a relay that stands in for a run's end
/// needs): the attempt is made for real.
pub(crate) fn can_listen_on(port: u16) -> bool {
    let script = r#"use Socket; my $p = shift;
        socket(my $s, PF_INET, SOCK_STREAM, 0) or die "socket: $!";
        setsockopt($s, SOL_SOCKET, SO_REUSEADDR, 1) or die "SO_REUSEADDR: $!";
        setsockopt($s, SOL_SOCKET, 15, 1) or die "SO_REUSEPORT: $!";
        bind($s, pack_sockaddr_in($p, inet_aton("127.0.0.1"))) or exit 1;
        listen($s, 1) or exit 1; exit 0"#;
    let status = Command::new("perl")
        .args(["-e", script, &port.to_string()])
        .uid(NOBODY)
        .gid(NOBODY)
        .stdin(Stdio::null())
        .status()
        .expect("perl runs as nobody");
    match status.code() {
        Some(0) => true,
        Some(1) => false,
        _ => panic!("the attempt to listen on {port} as nobody failed: {status}"),
    }
}

impl Drop for Intruder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
