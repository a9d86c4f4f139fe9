//! Which IP addresses are the operator's own network rather than the Internet.
//!
//! A host name on the allow list is trusted to name a service elsewhere, but what it resolves
//! to is up to whoever runs its DNS: `api.example.com` can resolve to `127.0.0.1`, to the
//! cloud's metadata service at `169.254.169.254`, or to a database on `10.0.0.5`, and a module
//! would then reach, from inside the operator's network, what was never meant for it. So the
//! addresses a name resolves to are classified here, and only global ones (those a host on the
//! Internet may have) are connected to unless the operator allows more (see
//! [`OutboundHttp`](super::OutboundHttp)). The classes follow the IANA special-purpose address
//! registries; an IPv6 address that embeds an IPv4 one (mapped, NAT64, 6to4) is classified by
//! the IPv4 address it leads to.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// What kind of non-global address `ip` is, in words (`"loopback"`, `"private"`, …), or
/// `None` for a global one.
pub(crate) fn non_global_kind(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(ip) => v4_kind(ip),
        IpAddr::V6(ip) => v6_kind(ip),
    }
}

fn v4_kind(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        (0, _, _) => "unspecified",
        (127, _, _) => "loopback",
        (10, _, _) | (192, 168, _) => "private",
        (172, 16..=31, _) => "private",
        (100, 64..=127, _) => "shared (carrier-grade NAT)",
        (169, 254, _) => "link-local",
        (192, 0, 0) => "IETF protocol",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "documentation",
        (198, 18..=19, _) => "benchmarking",
        (224..=239, _, _) => "multicast",
        (240..=255, _, _) => "reserved",
        _ => return None,
    })
}

fn v6_kind(ip: Ipv6Addr) -> Option<&'static str> {
    if ip.is_unspecified() {
        return Some("unspecified");
    }
    if ip.is_loopback() {
        return Some("loopback");
    }
    let segments = ip.segments();
    let embedded_v4 = |high: u16, low: u16| {
        let [a, b] = high.to_be_bytes();
        let [c, d] = low.to_be_bytes();
        v4_kind(Ipv4Addr::new(a, b, c, d))
    };
    match segments {
        // IPv4-mapped (`::ffff:a.b.c.d`) and NAT64 (`64:ff9b::a.b.c.d`): the IPv4 address.
        [0, 0, 0, 0, 0, 0xffff, high, low] | [0x64, 0xff9b, 0, 0, 0, 0, high, low] => {
            embedded_v4(high, low)
        }
        // IPv4-compatible (`::a.b.c.d`, deprecated).
        [0, 0, 0, 0, 0, 0, _, _] => Some("IPv4-compatible (deprecated)"),
        // 6to4 (`2002:a.b.c.d::/48`): the IPv4 address of the relay.
        [0x2002, high, low, ..] => embedded_v4(high, low),
        [0x100, 0, 0, 0, ..] => Some("discard-only"),
        [0x2001, 0, ..] => Some("Teredo"),
        [0x2001, 0xdb8, ..] => Some("documentation"),
        [first, ..] => match first {
            0xfc00..=0xfdff => Some("unique local (private)"),
            0xfe80..=0xfebf => Some("link-local"),
            0xfec0..=0xfeff => Some("site-local (deprecated)"),
            0xff00..=0xffff => Some("multicast"),
            _ => None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::non_global_kind;
    use std::net::IpAddr;

    fn kind(ip: &str) -> Option<&'static str> {
        non_global_kind(ip.parse::<IpAddr>().unwrap())
    }

    #[test]
    fn the_operators_own_addresses_are_not_global() {
        let cases = [
            ("0.0.0.0", "unspecified"),
            ("0.1.2.3", "unspecified"),
            ("127.0.0.1", "loopback"),
            ("127.255.0.9", "loopback"),
            ("10.0.0.5", "private"),
            ("172.16.0.1", "private"),
            ("172.31.255.255", "private"),
            ("192.168.1.1", "private"),
            ("100.64.0.1", "shared (carrier-grade NAT)"),
            ("169.254.169.254", "link-local"),
            ("192.0.0.8", "IETF protocol"),
            ("192.0.2.1", "documentation"),
            ("198.51.100.7", "documentation"),
            ("203.0.113.200", "documentation"),
            ("198.18.0.1", "benchmarking"),
            ("224.0.0.1", "multicast"),
            ("255.255.255.255", "reserved"),
            ("::", "unspecified"),
            ("::1", "loopback"),
            ("::ffff:127.0.0.1", "loopback"),
            ("::ffff:169.254.169.254", "link-local"),
            ("64:ff9b::10.1.2.3", "private"),
            ("::10.1.2.3", "IPv4-compatible (deprecated)"),
            ("2002:c0a8:0101::1", "private"),
            ("100::1", "discard-only"),
            ("2001::1", "Teredo"),
            ("2001:db8::1", "documentation"),
            ("fc00::1", "unique local (private)"),
            ("fd12:3456::1", "unique local (private)"),
            ("fe80::1", "link-local"),
            ("febf::1", "link-local"),
            ("fec0::1", "site-local (deprecated)"),
            ("ff02::1", "multicast"),
        ];
        for (ip, expected) in cases {
            assert_eq!(kind(ip), Some(expected), "{ip}");
        }
    }

    #[test]
    fn addresses_on_the_internet_are_global() {
        for ip in [
            "1.1.1.1",
            "8.8.8.8",
            "93.184.216.34",
            "172.15.255.255",
            "172.32.0.1",
            "100.63.255.255",
            "100.128.0.1",
            "169.253.0.1",
            "192.169.0.1",
            "198.20.0.1",
            "223.255.255.255",
            "2606:4700:4700::1111",
            "2a00:1450:4001:82a::200e",
            "::ffff:8.8.8.8",
            "64:ff9b::8.8.8.8",
            "2002:0808:0808::1",
            "2001:4860::8888",
        ] {
            assert_eq!(kind(ip), None, "{ip}");
        }
    }
}
