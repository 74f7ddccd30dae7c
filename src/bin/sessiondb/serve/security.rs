//! Who may ask: the Host header check that defeats DNS rebinding (a page on another site
//! whose name was pointed at 127.0.0.1 sends its own name as Host), and the token a
//! non-loopback listener requires.

use super::token;
use std::net::{IpAddr, SocketAddr};

/// What requests must satisfy.
pub struct Policy {
    port: u16,
    token: Option<String>,
    allowed_names: Vec<String>,
}

/// Why a request is refused.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The Host header names another site (or is missing).
    ForeignHost,
    /// The token is missing or wrong.
    NoToken,
}

impl Policy {
    pub fn new(bound: SocketAddr, token: Option<String>, allow_host: Vec<String>) -> Policy {
        let allowed_names = allow_host.into_iter().map(|h| h.to_ascii_lowercase()).collect();
        Policy { port: bound.port(), token, allowed_names }
    }

    /// The token requests must carry, if any.
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// Whether `host` (a Host header) names this server: an IP address or `localhost` (no DNS
    /// name can be rebound to those), or a name given with --allow-host; with our port.
    pub fn host_ok(&self, host: Option<&str>) -> bool {
        let Some(host) = host.map(str::trim).filter(|h| !h.is_empty()) else { return false };
        let (name, port) = split_host(host);
        if port.is_some_and(|p| p != self.port) {
            return false;
        }
        let name = name.to_ascii_lowercase();
        name.parse::<IpAddr>().is_ok()
            || name == "localhost"
            || name.ends_with(".localhost")
            || self.allowed_names.contains(&name)
    }

    /// Whether the request is let in, given its Host, Cookie and Authorization headers.
    pub fn check(&self, host: Option<&str>, cookie: Option<&str>, authorization: Option<&str>) -> Result<(), Refusal> {
        if !self.host_ok(host) {
            return Err(Refusal::ForeignHost);
        }
        match &self.token {
            None => Ok(()),
            Some(t) if token::carried(cookie, authorization).is_some_and(|c| token::same(c, t)) => Ok(()),
            Some(_) => Err(Refusal::NoToken),
        }
    }
}

/// `name[:port]`, `[v6]:port` or a bare v6 address split into name and port.
fn split_host(host: &str) -> (&str, Option<u16>) {
    if let Some(rest) = host.strip_prefix('[') {
        let Some((name, after)) = rest.split_once(']') else { return (host, None) };
        return (
            name,
            after.strip_prefix(':').and_then(|p| p.parse().ok()).or(if after.is_empty() { None } else { Some(0) }),
        );
    }
    match host.rsplit_once(':') {
        Some((name, port)) if !name.contains(':') => (name, Some(port.parse().unwrap_or(0))),
        _ => (host, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_our_addresses_and_allowed_names_pass_the_host_check() {
        let p = Policy::new("127.0.0.1:8484".parse().unwrap(), None, vec!["box.lan".into()]);
        for ok in ["127.0.0.1:8484", "localhost:8484", "LOCALHOST", "[::1]:8484", "10.0.0.2:8484", "box.lan:8484"] {
            assert!(p.host_ok(Some(ok)), "{ok}");
        }
        for bad in
            ["evil.example:8484", "evil.example", "127.0.0.1:80", "localhost:x", "", "127.0.0.1.evil.example:8484"]
        {
            assert!(!p.host_ok(Some(bad)), "{bad}");
        }
        assert!(!p.host_ok(None));
    }

    #[test]
    fn a_token_is_required_when_set() {
        let p = Policy::new("0.0.0.0:8484".parse().unwrap(), Some("0123456789abcdef".into()), vec![]);
        assert_eq!(p.check(Some("10.0.0.2:8484"), None, None), Err(Refusal::NoToken));
        assert_eq!(
            p.check(Some("10.0.0.2:8484"), Some("sessiondb_token=0123456789abcdeX"), None),
            Err(Refusal::NoToken)
        );
        assert_eq!(p.check(Some("10.0.0.2:8484"), Some("sessiondb_token=0123456789abcdef"), None), Ok(()));
        assert_eq!(p.check(Some("10.0.0.2:8484"), None, Some("Bearer 0123456789abcdef")), Ok(()));
        assert_eq!(
            p.check(Some("evil.example:8484"), None, Some("Bearer 0123456789abcdef")),
            Err(Refusal::ForeignHost)
        );
    }
}
