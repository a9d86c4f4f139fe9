//! Name resolution that checks where a name leads before anything connects there.
//!
//! The agent's resolver is the one place a host name becomes addresses, and the connector
//! connects to exactly the addresses it returns, so checking them here leaves no second
//! resolution for DNS to answer differently (a name that resolves to a global address for a
//! check and to `127.0.0.1` for the connection). A name with any non-global address
//! ([`non_global_kind`]) is refused, unless the operator allowed private addresses. A URL
//! whose host is an IP address is not checked: it passed the allow list only through a rule
//! naming that address, which is the operator allowing it explicitly.

use super::addresses::non_global_kind;
use std::fmt;
use std::net::IpAddr;
use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::NextTimeout;

/// Resolves with the system's resolver, then refuses names that lead to non-global addresses.
#[derive(Debug)]
pub(super) struct CheckedResolver {
    /// The operator allows non-global addresses too.
    allow_private: bool,
    system: DefaultResolver,
}

impl CheckedResolver {
    /// A resolver that lets non-global addresses through only if `allow_private`.
    pub(super) fn new(allow_private: bool) -> Self {
        Self {
            allow_private,
            system: DefaultResolver::default(),
        }
    }
}

impl Resolver for CheckedResolver {
    fn resolve(
        &self,
        uri: &Uri,
        config: &Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let addresses = self.system.resolve(uri, config, timeout)?;
        let host = uri.host().unwrap_or_default();
        if self.allow_private || is_ip_literal(host) {
            return Ok(addresses);
        }
        let refused = addresses.iter().find_map(|address| {
            non_global_kind(address.ip()).map(|kind| RefusedAddress {
                host: host.to_owned(),
                address: address.ip(),
                port: address.port(),
                kind,
            })
        });
        match refused {
            Some(refused) => Err(ureq::Error::Other(Box::new(refused))),
            None => Ok(addresses),
        }
    }
}

/// Whether `host`, as a URL writes it, is an IP address (IPv6 in brackets).
fn is_ip_literal(host: &str) -> bool {
    let bare = host
        .strip_prefix('[')
        .and_then(|host| host.strip_suffix(']'))
        .unwrap_or(host);
    bare.parse::<IpAddr>().is_ok()
}

/// A host name that resolved to an address the operator did not allow.
#[derive(Debug)]
pub(super) struct RefusedAddress {
    host: String,
    address: IpAddr,
    port: u16,
    kind: &'static str,
}

impl fmt::Display for RefusedAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rule = std::net::SocketAddr::new(self.address, self.port);
        write!(
            f,
            "{} resolved to {}, a {} address, which outbound HTTP reaches only if the operator \
             allows it (a rule naming the address, `{rule}`, or private addresses allowed)",
            self.host, self.address, self.kind
        )
    }
}

impl std::error::Error for RefusedAddress {}

#[cfg(test)]
mod tests {
    use super::is_ip_literal;

    #[test]
    fn ip_literals_are_told_from_names() {
        for host in ["127.0.0.1", "10.0.0.1", "[::1]", "[fe80::1]", "::1"] {
            assert!(is_ip_literal(host), "{host}");
        }
        for host in [
            "localhost",
            "127.1",
            "2130706433",
            "0x7f.0.0.1",
            "[localhost]",
            "",
        ] {
            assert!(!is_ip_literal(host), "{host}");
        }
    }
}
