//! The checks that keep a local server which runs programs on click local:
//! Host names (DNS rebinding), WebSocket origins (cross-site WebSocket hijacking),
//! a per-start token, and the Content-Security-Policy of pages.

use std::fmt::Write as _;
use std::net::IpAddr;

use base64::Engine as _;
use sha2::{Digest, Sha256};

/// A random secret made at start-up; only pages this server serves carry it.
#[derive(Clone)]
pub(crate) struct Token(String);

impl Token {
    /// 32 random bytes from the thread RNG (a CSPRNG seeded by the OS), as hex.
    pub(crate) fn generate() -> Token {
        let bytes: [u8; 32] = rand::random();
        let mut hex = String::with_capacity(64);
        for b in bytes {
            let _ = write!(hex, "{b:02x}");
        }
        Token(hex)
    }

    /// The token as it appears in pages and URLs.
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }

    /// Compares in constant time, so response timing says nothing about the token.
    pub(crate) fn matches(&self, candidate: &str) -> bool {
        let (a, b) = (self.0.as_bytes(), candidate.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never log the secret.
        f.write_str("Token(..)")
    }
}

/// The names this server answers to, and its port.
#[derive(Debug, Clone)]
pub(crate) struct HostPolicy {
    names: Vec<String>,
    port: u16,
}

/// How an IP address is written in a Host header: IPv6 in brackets.
fn host_form(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => format!("[{v6}]"),
    }
}

impl HostPolicy {
    /// Loopback names, the bind address, and any `extra` names (e.g. a classroom
    /// server's host name), all on `port`.
    pub(crate) fn new(bind: IpAddr, port: u16, extra: &[String]) -> HostPolicy {
        let mut names: Vec<String> = ["127.0.0.1", "localhost", "[::1]"]
            .into_iter()
            .map(String::from)
            .collect();
        names.push(host_form(bind));
        names.extend(extra.iter().map(|n| n.trim().to_ascii_lowercase()));
        names.sort();
        names.dedup();
        HostPolicy { names, port }
    }

    /// The port the server listens on.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// The names accepted, for error messages.
    pub(crate) fn names(&self) -> &[String] {
        &self.names
    }

    /// Whether a `Host` header value is ours: an allowed name, with our port or none.
    pub(crate) fn allows_host(&self, host: &str) -> bool {
        self.split_host(host).is_some()
    }

    /// Whether an `Origin` header is one of our own pages: `http://NAME:PORT`
    /// (the port may be left out only when it is 80, as browsers do).
    pub(crate) fn allows_origin(&self, origin: &str) -> bool {
        let Some(authority) = origin.strip_prefix("http://") else {
            return false;
        };
        match self.split_host(authority) {
            Some(has_port) => has_port || self.port == 80,
            None => false,
        }
    }

    /// `Some(port_given)` when `host` is an allowed name with our port or no port.
    fn split_host(&self, host: &str) -> Option<bool> {
        let host = host.to_ascii_lowercase();
        let (name, port) = if host.starts_with('[') {
            let end = host.find(']')?;
            let (name, rest) = host.split_at(end + 1);
            match rest {
                "" => (name, None),
                _ => (name, Some(rest.strip_prefix(':')?)),
            }
        } else {
            match host.rsplit_once(':') {
                Some((name, port)) => (name, Some(port)),
                None => (host.as_str(), None),
            }
        };
        if !self.names.iter().any(|n| n == name) {
            return None;
        }
        match port {
            None => Some(false),
            Some(p) if p.parse::<u16>().ok() == Some(self.port) && !p.starts_with('0') => {
                Some(true)
            }
            Some(_) => None,
        }
    }
}

/// The Content-Security-Policy of one page.
///
/// Scripts only from this server, plus the page's own inline scripts by hash
/// (mdBook's template has a few). Pages with a `<base>` element (mdBook's 404 and
/// table-of-contents pages) need `base-uri 'self'`, and the table of contents is
/// framed by the book itself when JavaScript is off, hence `frame-ancestors 'self'`.
pub(crate) fn content_security_policy(
    inline_scripts: &[&str],
    has_base: bool,
    framed: bool,
) -> String {
    let mut script_src = String::from("'self'");
    let mut seen = Vec::new();
    for script in inline_scripts {
        let hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(script));
        if !seen.contains(&hash) {
            let _ = write!(script_src, " 'sha256-{hash}'");
            seen.push(hash);
        }
    }
    format!(
        "default-src 'self'; script-src {script_src}; style-src 'self' 'unsafe-inline'; \
         img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; \
         base-uri {}; frame-ancestors {}",
        if has_base { "'self'" } else { "'none'" },
        if framed { "'self'" } else { "'none'" },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_hex_and_compare_exactly() {
        let (a, b) = (Token::generate(), Token::generate());
        assert_eq!(a.as_str().len(), 64);
        assert!(a.as_str().chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a.as_str(), b.as_str());
        assert!(a.matches(a.as_str()));
        assert!(!a.matches(b.as_str()));
        assert!(!a.matches(""));
        assert!(!format!("{a:?}").contains(a.as_str()));
    }

    #[test]
    fn hosts_must_be_ours() {
        let policy = HostPolicy::new("127.0.0.1".parse().unwrap(), 8000, &[]);
        for ok in [
            "127.0.0.1",
            "127.0.0.1:8000",
            "localhost:8000",
            "LOCALHOST",
            "[::1]:8000",
            "[::1]",
        ] {
            assert!(policy.allows_host(ok), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:8000",
            "localhost:8001",
            "127.0.0.1:08000",
            "localhost.:8000",
            "[::1]8000",
            "",
            "127.0.0.2:8000",
        ] {
            assert!(!policy.allows_host(bad), "{bad}");
        }
        let lan = HostPolicy::new("192.168.1.5".parse().unwrap(), 80, &["Lab.local".into()]);
        assert!(lan.allows_host("192.168.1.5") && lan.allows_host("lab.local:80"));
        let v6 = HostPolicy::new("::1".parse().unwrap(), 9, &[]);
        assert!(v6.allows_host("[::1]:9"));
    }

    #[test]
    fn origins_must_be_our_pages() {
        let policy = HostPolicy::new("127.0.0.1".parse().unwrap(), 8000, &[]);
        assert!(policy.allows_origin("http://127.0.0.1:8000"));
        assert!(policy.allows_origin("http://localhost:8000"));
        for bad in [
            "http://localhost",
            "https://localhost:8000",
            "http://evil.example:8000",
            "null",
            "",
            "http://localhost:8000/x",
        ] {
            assert!(!policy.allows_origin(bad), "{bad}");
        }
        let port80 = HostPolicy::new("127.0.0.1".parse().unwrap(), 80, &[]);
        assert!(port80.allows_origin("http://localhost"));
    }

    #[test]
    fn csp_hashes_inline_scripts() {
        let csp = content_security_policy(&["alert(1)", "alert(1)"], false, false);
        // echo -n 'alert(1)' | openssl dgst -sha256 -binary | base64
        assert!(
            csp.contains(
                "script-src 'self' 'sha256-bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI=';"
            ),
            "{csp}"
        );
        assert!(csp.contains("base-uri 'none'") && csp.contains("frame-ancestors 'none'"));
        assert!(csp.contains("object-src 'none'"));
    }
}
