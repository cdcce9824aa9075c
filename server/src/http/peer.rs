//! Who is on the other end of a connection made from this machine, and whether
//! that user may use the server.
//!
//! The server runs programs (as its own user, maybe root) for whoever holds the
//! token of its pages, and a page is one GET away: on a shared machine every
//! local user can reach a loopback port. So a connection from this machine (a
//! loopback peer, or one from an address of this machine to itself) is served
//! only when its socket belongs to the server's own user. The kernel says whose
//! a socket is: `/proc/net/tcp` and `/proc/net/tcp6` list every TCP socket of
//! this network namespace with its local and remote address and the uid that
//! made it; the peer's socket is the row whose local address is the peer's and
//! whose remote address is ours. A peer that cannot be found there (it closed
//! already, or lives in another namespace) is refused: nothing proves it ours.
//! Remote peers (a server bound to another address on purpose, e.g. behind a
//! classroom proxy) are left to the Host, Origin and token checks.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// The kernel's tables of TCP sockets, IPv4 and IPv6 (IPv4-mapped included).
const TCP_TABLES: [&str; 2] = ["/proc/net/tcp", "/proc/net/tcp6"];

/// Who may use this server.
#[derive(Debug, Clone)]
pub(crate) struct PeerPolicy {
    /// The server's effective user: the only local user served.
    owner: u32,
    /// `--allow-other-users`: serve every local user (a deployment behind a proxy).
    allow_other_users: bool,
}

/// What the policy decided for one connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Admission {
    /// Serve it.
    Served,
    /// Refuse it: another local user (`Some(uid)`), or one that cannot be identified.
    Refused {
        /// The peer's uid, when the kernel's table named it.
        peer_uid: Option<u32>,
        /// The server's own uid.
        owner: u32,
    },
}

impl PeerPolicy {
    /// The policy of a server run by the current effective user.
    pub(crate) fn new(allow_other_users: bool) -> PeerPolicy {
        PeerPolicy {
            owner: rustix::process::geteuid().as_raw(),
            allow_other_users,
        }
    }

    /// Whether other local users are served too.
    pub(crate) fn allows_other_users(&self) -> bool {
        self.allow_other_users
    }

    /// Decides for a connection accepted on `local` from `peer` (blocking: it
    /// reads the kernel's socket tables).
    pub(crate) fn admit(&self, local: SocketAddr, peer: SocketAddr) -> Admission {
        if self.allow_other_users || !from_this_machine(local, peer) {
            return Admission::Served;
        }
        let peer_uid = TCP_TABLES.iter().find_map(|table| {
            let text = std::fs::read_to_string(table).ok()?;
            owner_in_table(&text, local, peer)
        });
        match peer_uid {
            Some(uid) if uid == self.owner => Admission::Served,
            peer_uid => Admission::Refused {
                peer_uid,
                owner: self.owner,
            },
        }
    }
}

/// Whether a connection comes from this machine: a loopback peer, or a peer
/// at the very address it reached (a local user dialling the machine's own
/// LAN address on a server bound to every interface).
fn from_this_machine(local: SocketAddr, peer: SocketAddr) -> bool {
    let peer_ip = peer.ip().to_canonical();
    peer_ip.is_loopback() || peer_ip == local.ip().to_canonical()
}

/// The uid of the socket whose local address is `peer` and whose remote
/// address is `local`, in one of the kernel's TCP tables (pure over its text).
/// Rows with inode 0 (a socket already closing, whose uid reads 0) are skipped.
pub(crate) fn owner_in_table(text: &str, local: SocketAddr, peer: SocketAddr) -> Option<u32> {
    let same = |a: SocketAddr, b: SocketAddr| {
        a.port() == b.port() && a.ip().to_canonical() == b.ip().to_canonical()
    };
    text.lines().skip(1).find_map(|row| {
        let fields: Vec<&str> = row.split_whitespace().collect();
        let (row_local, row_remote) = (
            parse_address(fields.get(1)?)?,
            parse_address(fields.get(2)?)?,
        );
        let uid: u32 = fields.get(7)?.parse().ok()?;
        let inode: u64 = fields.get(9)?.parse().ok()?;
        (inode != 0 && same(row_local, peer) && same(row_remote, local)).then_some(uid)
    })
}

/// One address of a table row: `0100007F:1F40` (IPv4) or 32 hex digits and a
/// port (IPv6), each 32-bit word printed as the kernel holds it in memory.
fn parse_address(field: &str) -> Option<SocketAddr> {
    let (ip, port) = field.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |hex: &str| u32::from_str_radix(hex, 16).ok().map(u32::to_ne_bytes);
    let ip = match ip.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(ip)?)),
        32 => {
            let mut bytes = [0u8; 16];
            for (i, chunk) in bytes.chunks_mut(4).enumerate() {
                chunk.copy_from_slice(&word(ip.get(i * 8..i * 8 + 8)?)?);
            }
            IpAddr::V6(Ipv6Addr::from(bytes))
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

/// The name of user `uid`, if the user database has one.
pub(crate) fn user_name(uid: u32) -> Option<String> {
    let mut buffer = vec![0 as libc::c_char; 16 * 1024];
    // SAFETY: an all-zero passwd is a valid value to be overwritten.
    let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer refers to memory we own for the whole call, and the
    // buffer's length is passed along.
    let rc = unsafe {
        libc::getpwuid_r(
            uid,
            &mut entry,
            buffer.as_mut_ptr(),
            buffer.len(),
            &mut found,
        )
    };
    if rc != 0 || found.is_null() || entry.pw_name.is_null() {
        return None;
    }
    // SAFETY: getpwuid_r filled pw_name with a NUL-terminated string in `buffer`.
    let name = unsafe { std::ffi::CStr::from_ptr(entry.pw_name) };
    Some(name.to_string_lossy().into_owned())
}

/// A user as the refusal names it: `name (uid N)`, or `uid N`.
fn who(uid: u32) -> String {
    match user_name(uid) {
        Some(name) => format!("{name} (uid {uid})"),
        None => format!("uid {uid}"),
    }
}

/// The page a refused user gets, for any path (pages, `/api/*`, the WebSocket):
/// whose server this is and how to start one's own.
pub(crate) fn refusal_page(peer_uid: Option<u32>, owner: u32) -> String {
    let you = match peer_uid {
        Some(uid) => format!("You connected as {}.", who(uid)),
        None => "Your connection could not be traced to a user of this machine.".to_string(),
    };
    let owner = crate::html::escape(&who(owner));
    let you = crate::html::escape(&you);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>This pipebook belongs to another user</title></head><body>\
         <h1>This pipebook server belongs to another user</h1>\
         <p>This server runs as {owner}, and it runs programs as that user when a \
         page asks, so it serves its pages, its API and its runner only to {owner}. \
         {you}</p>\
         <p>Start your own server, as yourself: in the pipebook folder run \
         <code>cargo run --release -- --port 0</code> (or <code>pipebook --port 0</code>) \
         and open the address it prints.</p>\
         <p>An instructor serving a whole class from one server behind a proxy \
         starts it with <code>--allow-other-users</code>.</p></body></html>\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const V4_TABLE: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: 0100007F:1F40 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1001 1 0000000000000000 100 0 0 10 0\n   1: 0100007F:D431 0100007F:1F40 01 00000000:00000000 00:00000000 00000000 65534        0 1002 1 0000000000000000 20 4 30 10 -1\n   2: 0100007F:1F40 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 1003 1 0000000000000000 20 4 30 10 -1\n   3: 0100007F:D432 0100007F:1F40 06 00000000:00000000 03:00001770 00000000     0        0 0 3 0000000000000000\n";

    fn addr(text: &str) -> SocketAddr {
        text.parse().unwrap()
    }

    #[test]
    fn the_peer_socket_is_the_row_with_its_address_as_local() {
        let (local, peer) = (addr("127.0.0.1:8000"), addr("127.0.0.1:54321"));
        assert_eq!(owner_in_table(V4_TABLE, local, peer), Some(65534));
        // The server's own accepted socket (local 8000) is not the peer's.
        assert_eq!(owner_in_table(V4_TABLE, peer, local), Some(0));
        // A closing socket (inode 0, uid read as 0) proves nothing.
        assert_eq!(
            owner_in_table(V4_TABLE, local, addr("127.0.0.1:54322")),
            None
        );
        assert_eq!(owner_in_table(V4_TABLE, local, addr("127.0.0.1:1")), None);
    }

    #[test]
    fn ipv6_rows_and_mapped_ipv4_addresses_are_read() {
        let table = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: 0000000000000000FFFF00000100007F:D431 0000000000000000FFFF00000100007F:1F40 01 00000000:00000000 00:00000000 00000000  1000        0 77 1\n   1: 00000000000000000000000001000000:A000 00000000000000000000000001000000:1F40 01 00000000:00000000 00:00000000 00000000  1001        0 78 1\n";
        // An IPv6 client socket reaching an IPv4 listener shows mapped addresses.
        assert_eq!(
            owner_in_table(table, addr("127.0.0.1:8000"), addr("127.0.0.1:54321")),
            Some(1000)
        );
        assert_eq!(
            owner_in_table(table, addr("[::1]:8000"), addr("[::1]:40960")),
            Some(1001)
        );
    }

    #[test]
    fn only_connections_from_this_machine_are_checked() {
        assert!(from_this_machine(addr("127.0.0.1:80"), addr("127.0.0.1:5")));
        assert!(from_this_machine(addr("[::1]:80"), addr("[::1]:5")));
        assert!(from_this_machine(
            addr("[::ffff:127.0.0.1]:80"),
            addr("[::ffff:127.0.0.1]:5")
        ));
        assert!(from_this_machine(
            addr("192.168.1.5:80"),
            addr("192.168.1.5:5")
        ));
        assert!(!from_this_machine(
            addr("192.168.1.5:80"),
            addr("192.168.1.9:5")
        ));
        assert!(!from_this_machine(
            addr("172.17.0.2:8000"),
            addr("172.17.0.1:5")
        ));
    }

    #[test]
    fn the_opt_out_serves_everyone() {
        let open = PeerPolicy::new(true);
        assert_eq!(
            open.admit(addr("127.0.0.1:1"), addr("127.0.0.1:2")),
            Admission::Served
        );
    }

    #[test]
    fn the_refusal_names_the_owner_and_says_how_to_start_ones_own() {
        let page = refusal_page(Some(65534), 0);
        assert!(page.contains("root (uid 0)"), "{page}");
        assert!(page.contains("uid 65534"), "{page}");
        assert!(page.contains("cargo run --release -- --port 0"), "{page}");
        assert!(refusal_page(None, 0).contains("could not be traced"));
    }
}
