//! The client's address behind reverse proxies: which peers are trusted
//! (`TRUSTED_PROXIES`), and the walk through the header they write
//! (`CLIENT_ADDRESS_HEADER`: `X-Forwarded-For`, or RFC 7239's `Forwarded`).
//!
//! Each proxy appends the address it got the request from, so the list
//! reads from the client on the left to the nearest proxy on the right.
//! Only its right end is written by proxies this server trusts; anything to
//! the left of the first untrusted address may be the client's own text. So
//! the walk starts at the right and skips the addresses of trusted proxies:
//! the first address that is not one is the client. A client that prepends
//! entries (`X-Forwarded-For: 1.2.3.4`) only adds text left of its own
//! address, which the walk never reaches.
//!
//! Only one header is read, the one the proxies are said to write: a proxy
//! that writes `X-Forwarded-For` passes a client's `Forwarded` on untouched
//! (nginx, HAProxy, most load balancers do), so a server that read
//! `Forwarded` whenever present would let every client choose its address.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::str::FromStr;
use std::sync::Arc;

use axum::http::HeaderMap;
use axum::http::header::{FORWARDED, HeaderName};

/// `X-Forwarded-For`, which the `http` crate does not name.
const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");

/// One entry of `TRUSTED_PROXIES`: an address (`10.0.0.7`, `fd00::7`) or a
/// network (`10.0.0.0/8`, `fd00::/8`). IPv4-mapped IPv6 forms are kept as
/// the IPv4 they map, as peers are compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProxyNetwork {
    /// The network's first address (no bits set past the prefix).
    first: IpAddr,
    /// The prefix length: 32 or 128 for one address.
    prefix: u8,
}

/// Why an entry of `TRUSTED_PROXIES` was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProxyNetworkError {
    /// Nothing between two commas, or after the last one.
    #[error("an empty entry (two commas in a row, or one at the end)")]
    Empty,
    /// Neither `address` nor `address/prefix`.
    #[error("{0:?} is neither an IP address nor a network such as 10.0.0.0/8 or fd00::/8")]
    Invalid(String),
    /// A prefix longer than the address (past 32 for IPv4, 128 for IPv6).
    #[error("{0:?}: the prefix is longer than the address")]
    PrefixTooLong(String),
    /// Bits set past the prefix: most likely a typo, so not guessed at.
    #[error("{given:?} has bits set past its /{prefix} prefix: write {first}/{prefix}")]
    HostBits {
        given: String,
        first: IpAddr,
        prefix: u8,
    },
}

impl FromStr for ProxyNetwork {
    type Err = ProxyNetworkError;

    fn from_str(text: &str) -> Result<ProxyNetwork, ProxyNetworkError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(ProxyNetworkError::Empty);
        }
        let invalid = || ProxyNetworkError::Invalid(text.to_owned());
        let (address, prefix) = match text.split_once('/') {
            None => {
                let address = text.parse::<IpAddr>().map_err(|_| invalid())?;
                (address, max_prefix(address))
            }
            Some((address, prefix)) => {
                let address = address.parse::<IpAddr>().map_err(|_| invalid())?;
                // Digits only: `u8::from_str` would take `+8`.
                if prefix.is_empty()
                    || prefix.len() > 3
                    || !prefix.bytes().all(|b| b.is_ascii_digit())
                {
                    return Err(invalid());
                }
                let prefix: u8 = prefix.parse().map_err(|_| invalid())?;
                if prefix > max_prefix(address) {
                    return Err(ProxyNetworkError::PrefixTooLong(text.to_owned()));
                }
                (address, prefix)
            }
        };
        let first = masked(address, prefix);
        if first != address {
            return Err(ProxyNetworkError::HostBits {
                given: text.to_owned(),
                first,
                prefix,
            });
        }
        Ok(canonical_network(first, prefix))
    }
}

impl fmt::Display for ProxyNetwork {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.first, self.prefix)
    }
}

impl ProxyNetwork {
    /// Whether `address` (canonical: an IPv4-mapped address as its IPv4) is
    /// in this network.
    pub fn contains(&self, address: IpAddr) -> bool {
        match (self.first, address) {
            (IpAddr::V4(first), IpAddr::V4(address)) => {
                address.to_bits() & mask_v4(self.prefix) == first.to_bits()
            }
            (IpAddr::V6(first), IpAddr::V6(address)) => {
                address.to_bits() & mask_v6(self.prefix) == first.to_bits()
            }
            _ => false,
        }
    }
}

fn max_prefix(address: IpAddr) -> u8 {
    match address {
        IpAddr::V4(_) => 32,
        IpAddr::V6(_) => 128,
    }
}

fn mask_v4(prefix: u8) -> u32 {
    u32::MAX
        .checked_shl(32 - u32::from(prefix.min(32)))
        .unwrap_or(0)
}

fn mask_v6(prefix: u8) -> u128 {
    u128::MAX
        .checked_shl(128 - u32::from(prefix.min(128)))
        .unwrap_or(0)
}

/// `address` with every bit past `prefix` cleared.
fn masked(address: IpAddr, prefix: u8) -> IpAddr {
    match address {
        IpAddr::V4(v4) => IpAddr::V4(Ipv4Addr::from_bits(v4.to_bits() & mask_v4(prefix))),
        IpAddr::V6(v6) => IpAddr::V6(Ipv6Addr::from_bits(v6.to_bits() & mask_v6(prefix))),
    }
}

/// An IPv4-mapped network (`::ffff:10.0.0.0/104`) as the IPv4 network it
/// maps (`10.0.0.0/8`), since addresses are compared in their canonical form.
fn canonical_network(first: IpAddr, prefix: u8) -> ProxyNetwork {
    if let IpAddr::V6(v6) = first
        && prefix >= 96
        && let Some(v4) = v6.to_ipv4_mapped()
    {
        return ProxyNetwork {
            first: IpAddr::V4(v4),
            prefix: prefix - 96,
        };
    }
    ProxyNetwork { first, prefix }
}

/// Which header the trusted proxies write the client's address in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ForwardedHeader {
    /// `X-Forwarded-For: client, proxy1, proxy2`: what nginx
    /// (`$proxy_add_x_forwarded_for`), HAProxy (`option forwardfor`) and
    /// most load balancers write.
    #[default]
    XForwardedFor,
    /// `Forwarded: for=client, for=proxy1` (RFC 7239).
    Forwarded,
}

/// How a request's client address is found: the proxies whose header is
/// believed, and which header that is. With no proxies (the default) the
/// client is the TCP peer and no header is read.
#[derive(Clone, Debug, Default)]
pub struct TrustedProxies {
    networks: Arc<[ProxyNetwork]>,
    header: ForwardedHeader,
}

impl TrustedProxies {
    /// Trusts a peer in any of `networks` to write `header` truthfully.
    pub fn new(networks: Vec<ProxyNetwork>, header: ForwardedHeader) -> TrustedProxies {
        TrustedProxies {
            networks: networks.into(),
            header,
        }
    }

    /// Whether `address` is one of the trusted proxies.
    pub fn trusts(&self, address: IpAddr) -> bool {
        let address = address.to_canonical();
        self.networks
            .iter()
            .any(|network| network.contains(address))
    }

    /// The client address of a request that came from `peer` with
    /// `headers`: the peer itself unless it is a trusted proxy; otherwise,
    /// walking the header from the right, the first address that is not a
    /// trusted proxy. The walk stops early:
    ///
    /// - at `unknown` or an obfuscated identifier (`_hidden`), or a
    ///   `Forwarded` element without `for`: the last trusted proxy reached
    ///   does not say who sent it the request, and whatever lies further
    ///   left may be the client's own text, so the client is that proxy;
    /// - at an entry that cannot be read: the peer, as if no header had
    ///   come.
    ///
    /// When every entry is a trusted proxy, the client is the leftmost.
    pub fn client_address(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let peer = peer.to_canonical();
        if !self.trusts(peer) {
            return peer;
        }
        match self.header {
            ForwardedHeader::XForwardedFor => self.walk(peer, x_forwarded_for_hops(headers)),
            ForwardedHeader::Forwarded => self.walk(peer, forwarded_hops(headers)),
        }
    }

    /// The walk of [`TrustedProxies::client_address`] over `hops`, nearest
    /// first.
    fn walk(&self, peer: IpAddr, hops: impl Iterator<Item = Hop>) -> IpAddr {
        let mut nearest = peer;
        for hop in hops {
            match hop {
                Hop::Address(address) => {
                    let address = address.to_canonical();
                    if !self.trusts(address) {
                        return address;
                    }
                    nearest = address;
                }
                Hop::Unknown => return nearest,
                Hop::Malformed => return peer,
            }
        }
        nearest
    }
}

/// One entry of a forwarding header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Hop {
    /// The address the proxy got the request from.
    Address(IpAddr),
    /// `unknown`, an obfuscated identifier, or a `Forwarded` element
    /// without `for`: the proxy does not tell.
    Unknown,
    /// Text that is not a valid entry.
    Malformed,
}

/// The entries of every `X-Forwarded-For` header, nearest first: the last
/// header's last entry first. Entries are read only as far as the walk goes.
fn x_forwarded_for_hops(headers: &HeaderMap) -> impl Iterator<Item = Hop> + '_ {
    headers.get_all(X_FORWARDED_FOR).iter().rev().flat_map(
        |value| -> Box<dyn Iterator<Item = Hop> + '_> {
            match value.to_str() {
                Ok(text) => Box::new(
                    text.rsplit(',')
                        .map(str::trim)
                        // Empty list elements are allowed and mean nothing
                        // (RFC 9110, section 5.6.1).
                        .filter(|entry| !entry.is_empty())
                        .map(x_forwarded_for_hop),
                ),
                Err(_) => Box::new(std::iter::once(Hop::Malformed)),
            }
        },
    )
}

/// One `X-Forwarded-For` entry: an address, with a port or an IPv6 in
/// brackets as some proxies write them, or `unknown`.
fn x_forwarded_for_hop(entry: &str) -> Hop {
    if entry.eq_ignore_ascii_case("unknown") {
        return Hop::Unknown;
    }
    if let Ok(address) = entry.parse::<IpAddr>() {
        return Hop::Address(address);
    }
    if let Ok(socket) = entry.parse::<SocketAddr>() {
        return Hop::Address(socket.ip());
    }
    match entry
        .strip_prefix('[')
        .and_then(|rest| rest.strip_suffix(']'))
        .map(str::parse::<Ipv6Addr>)
    {
        Some(Ok(v6)) => Hop::Address(IpAddr::V6(v6)),
        _ => Hop::Malformed,
    }
}

/// The `for` of every element of every `Forwarded` header, nearest first.
/// A header that does not parse is one malformed entry where it stands.
fn forwarded_hops(headers: &HeaderMap) -> impl Iterator<Item = Hop> + '_ {
    headers.get_all(FORWARDED).iter().rev().flat_map(|value| {
        match value.to_str().ok().map(forwarded_elements) {
            Some(Some(hops)) => hops.into_iter().rev(),
            _ => vec![Hop::Malformed].into_iter().rev(),
        }
    })
}

/// The `for` of each element of one `Forwarded` header, left to right;
/// `None` if it does not parse (RFC 7239, section 4):
///
/// ```text
/// Forwarded   = 1#forwarded-element
/// forwarded-element = [ forwarded-pair ] *( ";" [ forwarded-pair ] )
/// forwarded-pair = token "=" value
/// value          = token / quoted-string
/// ```
fn forwarded_elements(header: &str) -> Option<Vec<Hop>> {
    let mut hops = Vec::new();
    for element in split_unquoted(header, b',')? {
        let element = element.trim();
        if element.is_empty() {
            continue;
        }
        let mut node = None;
        for pair in split_unquoted(element, b';')? {
            let pair = pair.trim();
            if pair.is_empty() {
                continue;
            }
            let (name, value) = pair.split_once('=')?;
            if name.is_empty() || !name.bytes().all(is_tchar) {
                return None;
            }
            let value = unquote(value)?;
            if name.eq_ignore_ascii_case("for") {
                // A parameter appears at most once per element.
                if node.is_some() {
                    return None;
                }
                node = Some(forwarded_node(&value));
            }
        }
        hops.push(node.unwrap_or(Hop::Unknown));
    }
    Some(hops)
}

/// `text` split at each `separator` outside a quoted string; `None` when a
/// quoted string is not closed.
fn split_unquoted(text: &str, separator: u8) -> Option<Vec<&str>> {
    let mut parts = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (at, byte) in text.bytes().enumerate() {
        if escaped {
            escaped = false;
        } else if quoted && byte == b'\\' {
            escaped = true;
        } else if byte == b'"' {
            quoted = !quoted;
        } else if byte == separator && !quoted {
            parts.push(&text[start..at]);
            start = at + 1;
        }
    }
    if quoted {
        return None;
    }
    parts.push(&text[start..]);
    Some(parts)
}

/// A parameter's value: a token as it is, or a quoted string without its
/// quotes and escapes.
fn unquote(value: &str) -> Option<String> {
    let Some(inner) = value.strip_prefix('"') else {
        return (!value.is_empty() && value.bytes().all(is_tchar)).then(|| value.to_owned());
    };
    let inner = inner.strip_suffix('"')?;
    let mut text = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => text.push(chars.next()?),
            '"' => return None,
            c => text.push(c),
        }
    }
    Some(text)
}

/// A token character (RFC 9110, section 5.6.2).
fn is_tchar(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

/// A `for` value (RFC 7239, section 6): `192.0.2.43`, `"192.0.2.43:4711"`,
/// `"[2001:db8::17]"`, `"[2001:db8::17]:4711"`, `unknown` or an obfuscated
/// `_name`, each port possibly obfuscated too.
fn forwarded_node(node: &str) -> Hop {
    let (name, port) = if let Some(rest) = node.strip_prefix('[') {
        let Some((v6, after)) = rest.split_once(']') else {
            return Hop::Malformed;
        };
        let port = match after {
            "" => None,
            _ => match after.strip_prefix(':') {
                Some(port) => Some(port),
                None => return Hop::Malformed,
            },
        };
        match v6.parse::<Ipv6Addr>() {
            Ok(v6) if port.is_none_or(is_node_port) => return Hop::Address(IpAddr::V6(v6)),
            _ => return Hop::Malformed,
        }
    } else {
        match node.split_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (node, None),
        }
    };
    if !port.is_none_or(is_node_port) {
        return Hop::Malformed;
    }
    if name.eq_ignore_ascii_case("unknown") || is_obfuscated(name) {
        return Hop::Unknown;
    }
    match name.parse::<Ipv4Addr>() {
        Ok(v4) => Hop::Address(IpAddr::V4(v4)),
        Err(_) => Hop::Malformed,
    }
}

/// `node-port = port / obfport`, `port = 1*5DIGIT`.
fn is_node_port(port: &str) -> bool {
    ((1..=5).contains(&port.len()) && port.bytes().all(|b| b.is_ascii_digit()))
        || is_obfuscated(port)
}

/// `"_" 1*( ALPHA / DIGIT / "." / "_" / "-" )`.
fn is_obfuscated(text: &str) -> bool {
    text.strip_prefix('_').is_some_and(|rest| {
        !rest.is_empty()
            && rest
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
    })
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().expect("an address")
    }

    fn proxies(entries: &[&str], header: ForwardedHeader) -> TrustedProxies {
        let networks = entries
            .iter()
            .map(|entry| entry.parse().expect("a network"))
            .collect();
        TrustedProxies::new(networks, header)
    }

    fn headers(name: &HeaderName, values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(name, HeaderValue::from_str(value).expect("a header value"));
        }
        headers
    }

    #[test]
    fn proxy_entries_are_addresses_or_networks() {
        let cases: &[(&str, &str)] = &[
            ("10.0.0.7", "10.0.0.7/32"),
            (" 10.0.0.0/8 ", "10.0.0.0/8"),
            ("0.0.0.0/0", "0.0.0.0/0"),
            ("fd00::7", "fd00::7/128"),
            ("fd00::/8", "fd00::/8"),
            ("2001:db8::/32", "2001:db8::/32"),
            ("::/0", "::/0"),
            // An IPv4-mapped entry is the IPv4 it maps.
            ("::ffff:10.0.0.0/104", "10.0.0.0/8"),
            ("::ffff:192.0.2.1", "192.0.2.1/32"),
            ("10.0.0.0/08", "10.0.0.0/8"),
        ];
        for (entry, network) in cases {
            let parsed: ProxyNetwork = entry.parse().unwrap_or_else(|e| panic!("{entry}: {e}"));
            assert_eq!(parsed.to_string(), *network, "{entry}");
        }
    }

    #[test]
    fn bad_proxy_entries_are_refused_with_a_reason() {
        let cases: &[(&str, &str)] = &[
            (
                "",
                "an empty entry (two commas in a row, or one at the end)",
            ),
            (
                "  ",
                "an empty entry (two commas in a row, or one at the end)",
            ),
            (
                "10.0.0.256",
                "\"10.0.0.256\" is neither an IP address nor a network such as 10.0.0.0/8 or fd00::/8",
            ),
            (
                "proxy.example.org",
                "\"proxy.example.org\" is neither an IP address nor a network such as 10.0.0.0/8 or fd00::/8",
            ),
            (
                "10.0.0.0/",
                "\"10.0.0.0/\" is neither an IP address nor a network such as 10.0.0.0/8 or fd00::/8",
            ),
            (
                "10.0.0.0/+8",
                "\"10.0.0.0/+8\" is neither an IP address nor a network such as 10.0.0.0/8 or fd00::/8",
            ),
            (
                "10.0.0.0/8/8",
                "\"10.0.0.0/8/8\" is neither an IP address nor a network such as 10.0.0.0/8 or fd00::/8",
            ),
            (
                "10.0.0.1:80",
                "\"10.0.0.1:80\" is neither an IP address nor a network such as 10.0.0.0/8 or fd00::/8",
            ),
            (
                "[fd00::1]",
                "\"[fd00::1]\" is neither an IP address nor a network such as 10.0.0.0/8 or fd00::/8",
            ),
            (
                "10.0.0.0/33",
                "\"10.0.0.0/33\": the prefix is longer than the address",
            ),
            (
                "fd00::/129",
                "\"fd00::/129\": the prefix is longer than the address",
            ),
            (
                "10.0.0.1/8",
                "\"10.0.0.1/8\" has bits set past its /8 prefix: write 10.0.0.0/8",
            ),
            (
                "fd00::1/64",
                "\"fd00::1/64\" has bits set past its /64 prefix: write fd00::/64",
            ),
        ];
        for (entry, message) in cases {
            let refused = entry
                .parse::<ProxyNetwork>()
                .expect_err(&format!("{entry:?} accepted"));
            assert_eq!(refused.to_string(), *message, "{entry:?}");
        }
    }

    #[test]
    fn networks_contain_their_addresses_only() {
        let cases: &[(&str, &str, bool)] = &[
            ("10.0.0.0/8", "10.255.1.2", true),
            ("10.0.0.0/8", "11.0.0.1", false),
            ("10.0.0.7", "10.0.0.7", true),
            ("10.0.0.7", "10.0.0.8", false),
            ("0.0.0.0/0", "203.0.113.9", true),
            ("0.0.0.0/0", "2001:db8::1", false),
            ("fd00::/8", "fd12:3456::1", true),
            ("fd00::/8", "fe80::1", false),
            ("::/0", "2001:db8::1", true),
            ("::/0", "192.0.2.1", false),
            ("2001:db8::1", "2001:db8::1", true),
            ("2001:db8::1", "2001:db8::2", false),
        ];
        for (network, address, inside) in cases {
            let network: ProxyNetwork = network.parse().expect("a network");
            assert_eq!(
                network.contains(ip(address)),
                *inside,
                "{network} contains {address}"
            );
        }
        // A peer on a dual-stack socket is compared as the IPv4 it maps.
        let trusted = proxies(&["10.0.0.0/8"], ForwardedHeader::XForwardedFor);
        assert!(trusted.trusts(ip("::ffff:10.1.2.3")));
    }

    /// The proxies of the walk tables: a load balancer's network and nginx
    /// on the same host.
    const TRUSTED: &[&str] = &["10.0.0.0/8", "127.0.0.1", "fd00::/8"];

    #[test]
    fn x_forwarded_for_is_walked_from_the_right_past_trusted_proxies() {
        // (peer, X-Forwarded-For headers, client address, what it shows)
        let cases: &[(&str, &[&str], &str, &str)] = &[
            ("127.0.0.1", &["203.0.113.7"], "203.0.113.7", "one proxy"),
            ("127.0.0.1", &[" 203.0.113.7 "], "203.0.113.7", "spaces"),
            (
                "127.0.0.1",
                &["203.0.113.7, 10.0.0.5"],
                "203.0.113.7",
                "a chain of trusted proxies",
            ),
            (
                "127.0.0.1",
                &["203.0.113.7", "10.0.0.5"],
                "203.0.113.7",
                "the chain over two header lines",
            ),
            (
                "127.0.0.1",
                &["198.51.100.1, 203.0.113.7"],
                "203.0.113.7",
                "a spoofed entry prepended by the client",
            ),
            (
                "127.0.0.1",
                &["10.0.0.9, 203.0.113.7, 10.0.0.5"],
                "203.0.113.7",
                "a spoofed trusted address prepended by the client",
            ),
            (
                "127.0.0.1",
                &["not an address, 203.0.113.7"],
                "203.0.113.7",
                "client garbage left of the client is never read",
            ),
            (
                "127.0.0.1",
                &["198.51.100.1", "203.0.113.7"],
                "203.0.113.7",
                "a spoofed header line sent by the client",
            ),
            ("127.0.0.1", &[], "127.0.0.1", "no header: the peer"),
            ("127.0.0.1", &[""], "127.0.0.1", "an empty header: the peer"),
            (
                "127.0.0.1",
                &["203.0.113.7,,"],
                "203.0.113.7",
                "empty elements",
            ),
            (
                "127.0.0.1",
                &["10.0.0.9, 10.0.0.5"],
                "10.0.0.9",
                "only trusted proxies: the farthest",
            ),
            (
                "127.0.0.1",
                &["203.0.113.7:4711"],
                "203.0.113.7",
                "an address with a port",
            ),
            ("127.0.0.1", &["2001:db8::7"], "2001:db8::7", "IPv6"),
            (
                "127.0.0.1",
                &["[2001:db8::7]:4711"],
                "2001:db8::7",
                "IPv6 with a port",
            ),
            (
                "127.0.0.1",
                &["[2001:db8::7]"],
                "2001:db8::7",
                "IPv6 in brackets",
            ),
            (
                "127.0.0.1",
                &["::ffff:203.0.113.7"],
                "203.0.113.7",
                "an IPv4-mapped client is its IPv4",
            ),
            (
                "::ffff:127.0.0.1",
                &["203.0.113.7"],
                "203.0.113.7",
                "a trusted peer on a dual-stack socket",
            ),
            ("fd00::2", &["203.0.113.7"], "203.0.113.7", "an IPv6 proxy"),
            (
                "127.0.0.1",
                &["203.0.113.7, unknown"],
                "127.0.0.1",
                "unknown: the proxy that wrote it, not what lies left of it",
            ),
            (
                "127.0.0.1",
                &["203.0.113.7, unknown, 10.0.0.5"],
                "10.0.0.5",
                "unknown behind a chain: the last proxy known",
            ),
            (
                "127.0.0.1",
                &["203.0.113.7, 10.0.0.5 junk"],
                "127.0.0.1",
                "a malformed entry on the way: the peer",
            ),
            (
                "127.0.0.1",
                &["203.0.113.7, 10.0.0.5", "junk"],
                "127.0.0.1",
                "a malformed last line: the peer",
            ),
            (
                "127.0.0.1",
                &["203.0.113.7/24"],
                "127.0.0.1",
                "a network is not an address",
            ),
            (
                "198.51.100.9",
                &["203.0.113.7"],
                "198.51.100.9",
                "an untrusted peer's header is never read",
            ),
            (
                "198.51.100.9",
                &["junk"],
                "198.51.100.9",
                "nor is a malformed one",
            ),
        ];
        let trusted = proxies(TRUSTED, ForwardedHeader::XForwardedFor);
        for (peer, values, client, what) in cases {
            let headers = headers(&X_FORWARDED_FOR, values);
            assert_eq!(
                trusted.client_address(ip(peer), &headers),
                ip(client),
                "{what}: {values:?} from {peer}"
            );
        }
    }

    #[test]
    fn forwarded_is_walked_from_the_right_past_trusted_proxies() {
        let cases: &[(&str, &[&str], &str, &str)] = &[
            (
                "127.0.0.1",
                &["for=203.0.113.7"],
                "203.0.113.7",
                "one proxy",
            ),
            (
                "127.0.0.1",
                &["FOR=203.0.113.7;proto=https;by=10.0.0.1"],
                "203.0.113.7",
                "other parameters, any case",
            ),
            (
                "127.0.0.1",
                &["for=\"203.0.113.7:4711\""],
                "203.0.113.7",
                "a quoted address with a port",
            ),
            (
                "127.0.0.1",
                &["for=\"[2001:db8:cafe::17]:4711\""],
                "2001:db8:cafe::17",
                "quoted IPv6 with a port",
            ),
            (
                "127.0.0.1",
                &["for=\"[2001:db8:cafe::17]\""],
                "2001:db8:cafe::17",
                "quoted IPv6",
            ),
            (
                "127.0.0.1",
                &["for=\"203.0.113.7:_port\""],
                "203.0.113.7",
                "an obfuscated port",
            ),
            (
                "127.0.0.1",
                &["for=203.0.113.7, for=10.0.0.5"],
                "203.0.113.7",
                "a chain of trusted proxies",
            ),
            (
                "127.0.0.1",
                &["for=203.0.113.7", "for=\"[fd00::5]\""],
                "203.0.113.7",
                "the chain over two header lines",
            ),
            (
                "127.0.0.1",
                &["for=198.51.100.1, for=203.0.113.7"],
                "203.0.113.7",
                "a spoofed element prepended by the client",
            ),
            (
                "127.0.0.1",
                &["for=\"10.0.0.9,for=1.2.3.4\", for=203.0.113.7"],
                "203.0.113.7",
                "a comma inside quotes separates nothing",
            ),
            (
                "127.0.0.1",
                &["for=\"198.51.100.1", "for=203.0.113.7"],
                "203.0.113.7",
                "an unclosed quote on the client's own line is never read",
            ),
            (
                "127.0.0.1",
                &["for=unknown"],
                "127.0.0.1",
                "unknown: the proxy that wrote it",
            ),
            (
                "127.0.0.1",
                &["for=198.51.100.1, for=_hidden"],
                "127.0.0.1",
                "obfuscated: nothing left of it is believed",
            ),
            (
                "127.0.0.1",
                &["for=198.51.100.1, for=\"_hidden:_port\", for=10.0.0.5"],
                "10.0.0.5",
                "obfuscated behind a chain: the last proxy known",
            ),
            (
                "127.0.0.1",
                &["for=198.51.100.1, proto=https"],
                "127.0.0.1",
                "an element without for: the proxy does not say",
            ),
            (
                "127.0.0.1",
                &["for=203.0.113.7;for=198.51.100.1"],
                "127.0.0.1",
                "for twice in one element",
            ),
            (
                "127.0.0.1",
                &["for=2001:db8::7"],
                "127.0.0.1",
                "IPv6 must be quoted and in brackets",
            ),
            (
                "127.0.0.1",
                &["for=\"[2001:db8::7\""],
                "127.0.0.1",
                "an unclosed bracket",
            ),
            ("127.0.0.1", &["for="], "127.0.0.1", "an empty value"),
            (
                "127.0.0.1",
                &["for=\"203.0.113.7:123456\""],
                "127.0.0.1",
                "a port of six digits",
            ),
            ("127.0.0.1", &["for"], "127.0.0.1", "no value"),
            (
                "127.0.0.1",
                &["for=203.0.113.7,,"],
                "203.0.113.7",
                "empty elements",
            ),
            (
                "198.51.100.9",
                &["for=203.0.113.7"],
                "198.51.100.9",
                "an untrusted peer's header is never read",
            ),
        ];
        let trusted = proxies(TRUSTED, ForwardedHeader::Forwarded);
        for (peer, values, client, what) in cases {
            let headers = headers(&FORWARDED, values);
            assert_eq!(
                trusted.client_address(ip(peer), &headers),
                ip(client),
                "{what}: {values:?} from {peer}"
            );
        }
    }

    #[test]
    fn only_the_configured_header_is_read() {
        let mut both = headers(&X_FORWARDED_FOR, &["203.0.113.7"]);
        both.append(FORWARDED, HeaderValue::from_static("for=198.51.100.1"));
        let peer = ip("127.0.0.1");
        let xff = proxies(TRUSTED, ForwardedHeader::XForwardedFor);
        assert_eq!(xff.client_address(peer, &both), ip("203.0.113.7"));
        let forwarded = proxies(TRUSTED, ForwardedHeader::Forwarded);
        assert_eq!(forwarded.client_address(peer, &both), ip("198.51.100.1"));
        // A proxy that writes X-Forwarded-For passes a client's Forwarded on:
        // it is not read in its place.
        let spoofed = headers(&FORWARDED, &["for=198.51.100.1"]);
        assert_eq!(xff.client_address(peer, &spoofed), peer);
    }

    #[test]
    fn with_no_trusted_proxy_the_peer_is_the_client() {
        let nobody = TrustedProxies::default();
        let forwarded = headers(&X_FORWARDED_FOR, &["203.0.113.7"]);
        assert_eq!(
            nobody.client_address(ip("127.0.0.1"), &forwarded),
            ip("127.0.0.1")
        );
    }

    #[test]
    fn a_header_that_is_not_text_is_malformed() {
        let mut headers = HeaderMap::new();
        headers.append(
            &X_FORWARDED_FOR,
            HeaderValue::from_bytes(b"203.0.113.7, \xff").expect("obs-text is a valid value"),
        );
        let trusted = proxies(TRUSTED, ForwardedHeader::XForwardedFor);
        assert_eq!(
            trusted.client_address(ip("127.0.0.1"), &headers),
            ip("127.0.0.1")
        );
    }
}
