//! The address rule of `web_fetch`: which hosts may be reached, decided after DNS resolution.

use reqwest::Url;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// Host names of cloud metadata services, refused by name before any lookup.
const METADATA_HOSTS: &[&str] = &["metadata.google.internal", "metadata.goog", "metadata"];

/// The AWS metadata service over IPv6.
const AWS_METADATA_V6: Ipv6Addr = Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254);

/// The addresses of this machine's own network interfaces, whatever their kind: a
/// public address assigned here reaches the services listening on this machine just
/// as loopback does.
pub fn own_addresses() -> Vec<IpAddr> {
    let Ok(interfaces) = nix::ifaddrs::getifaddrs() else {
        return Vec::new();
    };
    interfaces
        .filter_map(|interface| {
            let address = interface.address?;
            if let Some(v4) = address.as_sockaddr_in() {
                return Some(IpAddr::V4(v4.ip()));
            }
            address.as_sockaddr_in6().map(|v6| IpAddr::V6(v6.ip()))
        })
        .collect()
}

/// Why `web_fetch` may not connect to `ip` on a machine whose own addresses are `own`,
/// or `None` for an ordinary public address of another machine.
pub fn local_reason(ip: IpAddr, own: &[IpAddr]) -> Option<&'static str> {
    let is_own = |ip: IpAddr| own.contains(&ip);
    let embedded = match ip {
        IpAddr::V6(v6) => embedded_v4(v6).map(IpAddr::V4),
        IpAddr::V4(_) => None,
    };
    if is_own(ip) || embedded.is_some_and(is_own) {
        return Some("an address of this machine");
    }
    blocked_reason(ip)
}

/// Why `web_fetch` may not connect to `ip`, or `None` for an ordinary public address.
pub fn blocked_reason(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_reason(v4),
        IpAddr::V6(v6) => v6_reason(v6),
    }
}

fn v4_reason(ip: Ipv4Addr) -> Option<&'static str> {
    if ip == Ipv4Addr::new(169, 254, 169, 254) {
        return Some("a cloud metadata address");
    }
    let [a, b, ..] = ip.octets();
    match (a, b) {
        // Linux routes connections to 0.0.0.0 to the local host.
        (0, _) => Some("an unspecified (0.0.0.0/8) address"),
        (127, _) => Some("a loopback address"),
        (10, _) | (172, 16..=31) | (192, 168) => Some("a private network address"),
        (169, 254) => Some("a link-local address"),
        (100, 64..=127) => Some("a shared carrier-grade NAT (100.64.0.0/10) address"),
        (224..=239, _) => Some("a multicast address"),
        (240..=255, _) => Some("a reserved or broadcast address"),
        _ => None,
    }
}

fn v6_reason(ip: Ipv6Addr) -> Option<&'static str> {
    if ip == AWS_METADATA_V6 {
        return Some("a cloud metadata address");
    }
    if ip.is_loopback() {
        return Some("a loopback address");
    }
    if ip.is_unspecified() {
        return Some("an unspecified address");
    }
    // Addresses that carry an IPv4 address reach that IPv4 host, so the IPv4 rule decides.
    if let Some(v4) = embedded_v4(ip) {
        return v4_reason(v4);
    }
    let first = ip.segments()[0];
    if first & 0xfe00 == 0xfc00 {
        Some("a private (unique local, fc00::/7) address")
    } else if first & 0xffc0 == 0xfe80 {
        Some("a link-local address")
    } else if first & 0xffc0 == 0xfec0 {
        Some("a site-local address")
    } else if first & 0xff00 == 0xff00 {
        Some("a multicast address")
    } else {
        None
    }
}

/// The IPv4 address inside an IPv4-mapped, IPv4-compatible, NAT64 or 6to4 address.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    let s = ip.segments();
    let join = |hi: u16, lo: u16| {
        let [a, b] = hi.to_be_bytes();
        let [c, d] = lo.to_be_bytes();
        Ipv4Addr::new(a, b, c, d)
    };
    match s {
        [0, 0, 0, 0, 0, 0, hi, lo] | [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => Some(join(hi, lo)),
        [0x2002, hi, lo, ..] => Some(join(hi, lo)),
        _ => None,
    }
}

/// A host name as compared with the allow-list: lower case, no brackets, no trailing dot.
pub(crate) fn normalise_host(host: &str) -> String {
    host.trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

/// Addresses a checked host name must connect to, so a second DNS answer cannot swap them.
pub(crate) struct Pin {
    /// The host name as it appears in the URL.
    pub host: String,
    /// Every address the name resolved to; all passed the rule.
    pub addrs: Vec<SocketAddr>,
}

/// A request the address rule refused, with the address that caused it when known.
pub(crate) struct Refusal {
    /// What the model reads.
    pub message: String,
    /// The offending address, for the details.
    pub address: Option<IpAddr>,
}

/// Checks the host of `url` against the rule; `Ok(Some(pin))` when the connection must be pinned.
pub(crate) async fn check(url: &Url, allow_hosts: &[String]) -> Result<Option<Pin>, Refusal> {
    let Some(raw_host) = url.host_str() else {
        return Err(Refusal {
            message: format!("Cannot fetch {url}: the URL has no host name."),
            address: None,
        });
    };
    let host = normalise_host(raw_host);
    // Allowed hosts skip the address rule, yet are still resolved and pinned like any other.
    let allowed = allow_hosts.iter().any(|h| normalise_host(h) == host);
    let advice = "Requests to this machine's own addresses and to loopback, private, \
                  link-local and cloud metadata addresses are blocked. If this host is trusted, \
                  add it to allow_hosts in the [web] section of the config.";
    let own = if allowed { Vec::new() } else { own_addresses() };
    if !allowed && METADATA_HOSTS.contains(&host.as_str()) {
        return Err(Refusal {
            message: format!(
                "Refused to fetch {url}: {host} is a cloud metadata service. {advice}"
            ),
            address: None,
        });
    }
    if let Ok(ip) = host.parse::<IpAddr>() {
        return match local_reason(ip, &own).filter(|_| !allowed) {
            Some(reason) => Err(Refusal {
                message: format!("Refused to fetch {url}: {ip} is {reason}. {advice}"),
                address: Some(ip),
            }),
            None => Ok(None),
        };
    }
    let port = url.port_or_known_default().unwrap_or(80);
    let addrs: Vec<SocketAddr> = match tokio::net::lookup_host((raw_host, port)).await {
        Ok(addrs) => addrs.collect(),
        Err(e) => {
            return Err(Refusal {
                message: format!(
                    "Cannot fetch {url}: the host name {host} could not be resolved ({e}). \
                     Check the spelling of the URL."
                ),
                address: None,
            });
        }
    };
    if addrs.is_empty() {
        return Err(Refusal {
            message: format!("Cannot fetch {url}: the host name {host} resolved to no address."),
            address: None,
        });
    }
    // Every address is checked because the connector may try any of them.
    for addr in addrs.iter().filter(|_| !allowed) {
        if let Some(reason) = local_reason(addr.ip(), &own) {
            return Err(Refusal {
                message: format!(
                    "Refused to fetch {url}: {host} resolves to {}, which is {reason}. {advice}",
                    addr.ip()
                ),
                address: Some(addr.ip()),
            });
        }
    }
    Ok(Some(Pin {
        host: raw_host.to_owned(),
        addrs,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocked(s: &str) -> bool {
        blocked_reason(s.parse().unwrap()).is_some()
    }

    #[test]
    fn classifies_ipv4() {
        for ip in [
            "127.0.0.1",
            "127.255.255.254",
            "10.0.0.1",
            "10.255.255.255",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.0.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.255",
            "0.0.0.0",
            "0.1.2.3",
            "224.0.0.1",
            "255.255.255.255",
        ] {
            assert!(blocked(ip), "{ip} should be blocked");
        }
        for ip in [
            "8.8.8.8",
            "1.1.1.1",
            "172.15.255.255",
            "172.32.0.1",
            "192.167.1.1",
            "100.63.255.255",
            "100.128.0.1",
            "169.253.1.1",
            "93.184.216.34",
        ] {
            assert!(!blocked(ip), "{ip} should be allowed");
        }
        assert_eq!(
            blocked_reason("169.254.169.254".parse().unwrap()),
            Some("a cloud metadata address")
        );
        assert_eq!(
            blocked_reason("10.1.2.3".parse().unwrap()),
            Some("a private network address")
        );
    }

    #[test]
    fn classifies_ipv6() {
        for ip in [
            "::1",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fd00:ec2::254",
            "fe80::1",
            "febf::1",
            "fec0::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "64:ff9b::10.0.0.1",
            "2002:a00:1::1",
        ] {
            assert!(blocked(ip), "{ip} should be blocked");
        }
        for ip in [
            "2606:4700:4700::1111",
            "2001:4860:4860::8888",
            "::ffff:8.8.8.8",
            "64:ff9b::8.8.8.8",
            "2002:808:808::1",
            "fbff::1",
            "fe00::1",
        ] {
            assert!(!blocked(ip), "{ip} should be allowed");
        }
        assert_eq!(
            blocked_reason("fd00:ec2::254".parse().unwrap()),
            Some("a cloud metadata address")
        );
    }

    #[test]
    fn this_machines_own_addresses_are_refused_whatever_their_kind() {
        let own: Vec<IpAddr> = vec!["192.0.2.2".parse().unwrap(), "2001:db8::2".parse().unwrap()];
        for ip in ["192.0.2.2", "::ffff:192.0.2.2", "2001:db8::2"] {
            assert_eq!(
                local_reason(ip.parse().unwrap(), &own),
                Some("an address of this machine"),
                "{ip}"
            );
        }
        assert_eq!(local_reason("192.0.2.3".parse().unwrap(), &own), None);
        assert_eq!(
            local_reason("127.0.0.1".parse().unwrap(), &own),
            Some("a loopback address")
        );
        // Every interface has at least loopback.
        assert!(own_addresses().iter().any(IpAddr::is_loopback));
    }

    #[test]
    fn normalises_hosts() {
        assert_eq!(normalise_host("[::1]"), "::1");
        assert_eq!(normalise_host("Example.COM."), "example.com");
    }

    #[tokio::test]
    async fn refuses_before_connecting_and_honours_the_allow_list() {
        let url = Url::parse("http://127.0.0.1:9/x").unwrap();
        let refusal = check(&url, &[]).await.err().unwrap();
        assert!(refusal.message.contains("loopback"), "{}", refusal.message);
        assert!(check(&url, &["127.0.0.1".into()]).await.is_ok());
        let meta = Url::parse("http://metadata.google.internal/").unwrap();
        let refusal = check(&meta, &[]).await.err().unwrap();
        assert!(refusal.message.contains("metadata"), "{}", refusal.message);
        let local = Url::parse("http://localhost:9/").unwrap();
        let refusal = check(&local, &[]).await.err().unwrap();
        assert!(
            refusal.message.contains("resolves to"),
            "{}",
            refusal.message
        );
        let pin = check(&local, &["LOCALHOST.".into()])
            .await
            .ok()
            .flatten()
            .unwrap();
        assert_eq!(pin.host, "localhost");
        assert!(!pin.addrs.is_empty());
        assert!(
            pin.addrs
                .iter()
                .all(|a| a.ip().is_loopback() && a.port() == 9)
        );
    }
}
