# A second local user's attack on a run's loopback connection, for `racer.rs`.
# Run as nobody, inside the test's own network namespace (so every listener it
# sees is the test's): `perl racer.pl MODE BYTES [FIRST LAST]`.
#
# It watches /proc/net/tcp for new listeners on 127.0.0.1 and, when FIRST and
# LAST are given, also knocks on every port from FIRST to LAST in a tight loop
# (a listener that lives for microseconds is caught only that way). On every
# listener it reaches it connects, then, by MODE:
#   forge: sends BYTES bytes of the lab's data pattern (which is no secret, so
#          a stream that passes the data check) and waits to see what the
#          other side does with them: read to the end and closed (`consumed`:
#          a clean close with no reset in the second after it) or closed
#          unread (`reset`);
#   relay: waits for the listener's port to be free, takes it, and relays
#          whatever connects there (the real producer) to its own connection,
#          so the consumer would get the producer's bytes through it.
# It also watches /proc/net/unix for new named Unix sockets (a path or an
# abstract name) that it could connect to.
# It stops when its stdin ends and prints what it did, one `name count` a line.
use strict;
use warnings;
no warnings "portable";
use Fcntl qw(F_GETFL F_SETFL O_NONBLOCK);
use Socket qw(:all);
use IO::Select;
use POSIX qw(EAGAIN EINPROGRESS EWOULDBLOCK);

# A write to a connection the other side reset must fail, not kill the racer.
$SIG{PIPE} = "IGNORE";
my ($mode, $bytes, $first, $last) = @ARGV;
die "mode" unless defined $bytes && ($mode eq "forge" || $mode eq "relay");
my %count = map { $_ => 0 } qw(knocked connected consumed reset grabbed relayed unix_named);

# The pattern of the lab's data (bench/src/ipc/data.rs): word i of the stream
# is (i ^ 0x5049504542454e43) * 0x9E3779B97F4A7C15, wrapping, little-endian.
my $pattern = "";
{
    use integer;
    my $words = int(($bytes + 7) / 8);
    my @w;
    for my $i (0 .. $words - 1) {
        push @w, ($i ^ 0x5049504542454e43) * -7046029254386353131;
    }
    $pattern = substr(pack("q<*", @w), 0, $bytes);
}

# Listeners on 127.0.0.1 (port => inode), other than the racer's own.
sub listeners {
    my %found;
    open(my $f, "<", "/proc/net/tcp") or return %found;
    <$f>;
    while (<$f>) {
        my @c = split;
        next unless $c[3] eq "0A" && $c[1] =~ /^0100007F:([0-9A-F]{4})$/ && $c[7] != $<;
        $found{hex $1} = $c[9];
    }
    return %found;
}

sub unix_names {
    my %found;
    open(my $f, "<", "/proc/net/unix") or return %found;
    <$f>;
    while (<$f>) {
        my @c = split;
        $found{"$c[6] $c[7]"} = 1 if defined $c[7];
    }
    return %found;
}

my $source = 50000;

sub knock {
    my ($port) = @_;
    socket(my $s, PF_INET, SOCK_STREAM, 0) or die "socket: $!";
    # From 127.0.0.2 on a port of its own (above the namespace's range), so
    # its connections never take a port the run's sockets could be given.
    $source = $source >= 59999 ? 50000 : $source + 1;
    setsockopt($s, SOL_SOCKET, SO_REUSEADDR, 1);
    bind($s, pack_sockaddr_in($source, inet_aton("127.0.0.2"))) or return undef;
    $count{knocked}++;
    connect($s, pack_sockaddr_in($port, inet_aton("127.0.0.1"))) or return undef;
    $count{connected}++;
    setsockopt($s, SOL_SOCKET, SO_LINGER, pack("ii", 1, 0));
    my $flags = fcntl($s, F_GETFL, 0);
    fcntl($s, F_SETFL, $flags | O_NONBLOCK);
    return $s;
}

my @forged;    # [socket, bytes sent]
my @relays;    # {conn, port, deadline, listener, peer}
my %seen_listeners = listeners();
my %seen_unix = unix_names();
my %knocked;    # port -> inode of the listener last attacked there
my $stdin = IO::Select->new(\*STDIN);
my $round = 0;

while (1) {
    if ($stdin->can_read(0)) {
        my $n = sysread(STDIN, my $x, 1);
        last if !$n;
    }
    $round++;
    # Knocking, it reads the tables less often, to knock faster.
    my $look = !defined $first || $round % 16 == 0;
    if ($look) {
        my %now = listeners();
        for my $port (keys %now) {
            next if defined $seen_listeners{$port} && $seen_listeners{$port} eq $now{$port};
            next if defined $knocked{$port} && $knocked{$port} eq $now{$port};
            $knocked{$port} = $now{$port};
            my $s = knock($port) or next;
            attack($s, $port);
        }
    }
    if (defined $first) {
        for my $port ($first .. $last) {
            my $s = knock($port) or next;
            attack($s, $port);
        }
    }
    progress();
    if ($round % 64 == 0) {
        my %u = unix_names();
        for my $k (keys %u) {
            next if $seen_unix{$k};
            $seen_unix{$k} = 1;
            $count{unix_named}++;
        }
    }
}
# Closed connections get their second to show a reset.
for (1 .. 40) { progress(); last unless @forged; select(undef, undef, undef, 0.1) }
print "$_ $count{$_}\n" for sort keys %count;

sub attack {
    my ($s, $port) = @_;
    if ($mode eq "forge") {
        push @forged, [$s, 0];
    } else {
        push @relays, { conn => $s, port => $port, deadline => time + 3 };
    }
}

sub progress {
    for my $f (@forged) {
        my ($s, $sent) = @$f;
        next unless defined $s;
        if ($sent < length $pattern) {
            my $n = syswrite($s, $pattern, length($pattern) - $sent, $sent);
            if (defined $n) {
                $f->[1] += $n;
                shutdown($s, 1) if $f->[1] == length $pattern;
                next;
            }
            next if $! == EAGAIN || $! == EWOULDBLOCK;
            $count{reset}++;
            $f->[0] = undef;
            next;
        }
        if (defined $f->[2]) {
            # The other side closed: it read the stream only if no reset
            # follows (one that closed before the bytes came resets them).
            next if time - $f->[2] < 2;
            my $err = unpack("i", getsockopt($s, SOL_SOCKET, SO_ERROR) // pack("i", 0));
            $count{$err ? "reset" : "consumed"}++;
            $f->[0] = undef;
            next;
        }
        my $n = sysread($s, my $x, 1);
        if (defined $n) {
            if ($n == 0) { $f->[2] = time; next }
            $f->[0] = undef;
        } elsif (!($! == EAGAIN || $! == EWOULDBLOCK)) {
            $count{reset}++;
            $f->[0] = undef;
        }
    }
    @forged = grep { defined $_->[0] } @forged;
    for my $r (@relays) {
        next if $r->{done};
        if (time > $r->{deadline}) { $r->{done} = 1; next; }
        if (!$r->{listener}) {
            socket(my $l, PF_INET, SOCK_STREAM, 0) or die "socket: $!";
            setsockopt($l, SOL_SOCKET, SO_REUSEADDR, 1);
            setsockopt($l, SOL_SOCKET, SO_REUSEPORT, 1);
            if (bind($l, pack_sockaddr_in($r->{port}, inet_aton("127.0.0.1"))) && listen($l, 8)) {
                $count{grabbed}++;
                my $flags = fcntl($l, F_GETFL, 0);
                fcntl($l, F_SETFL, $flags | O_NONBLOCK);
                $r->{listener} = $l;
            }
            next;
        }
        if (!$r->{peer}) {
            if (accept(my $p, $r->{listener})) {
                my $flags = fcntl($p, F_GETFL, 0);
                fcntl($p, F_SETFL, $flags | O_NONBLOCK);
                $r->{peer} = $p;
                $r->{deadline} = time + 30;
            }
            next;
        }
        my $n = sysread($r->{peer}, my $buf, 65536);
        if (defined $n && $n > 0) {
            my $off = 0;
            while ($off < $n) {
                my $w = syswrite($r->{conn}, $buf, $n - $off, $off);
                if (!defined $w) {
                    if ($! == EAGAIN || $! == EWOULDBLOCK) { select(undef, undef, undef, 0.001); next }
                    $r->{done} = 1;
                    last;
                }
                $off += $w;
                $count{relayed} += $w;
            }
        } elsif (defined $n) {
            shutdown($r->{conn}, 1);
            $r->{done} = 1;
        }
    }
}
