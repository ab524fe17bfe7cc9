//! `timezone` (checked against the compiled-in zone list here; the root's own zones at
//! plan time, `src/source/timezone.rs`) and `ntp`.

use serde::Serialize;

use super::node::{Node, Value};
use super::read::{index, join, Reader};
use super::CloudConfig;
use crate::model::{quote, HostName, Timezone};

/// Most NTP servers or pools.
pub const MAX_NTP: usize = 64;

/// The NTP clients cloud-init knows by name.
const CLIENTS: &[&str] = &[
    "auto",
    "chrony",
    "ntp",
    "ntpdate",
    "openntpd",
    "systemd-timesyncd",
];

/// `ntp`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Ntp {
    /// Configure and enable a client (default true).
    pub enabled: bool,
    /// Which client: `auto` (the default: whichever the root has) or one of cloud-init's.
    pub ntp_client: String,
    /// Servers (host names or addresses).
    pub servers: Vec<String>,
    /// Pools.
    pub pools: Vec<String>,
    /// Peers (chrony's and ntpd's `peer`).
    pub peers: Vec<String>,
    /// Who may use this host as a server (chrony's `allow`): addresses, subnets or `all`.
    pub allow: Vec<String>,
}

/// `timezone`.
pub fn timezone(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    let Some(s) = r.line(node, key, 128) else {
        return;
    };
    match Timezone::parse(&s) {
        Err(why) => r.error(node, key, format!("{}: {why}", quote(&s))),
        Ok(tz) => match vmcust_imc::ZoneList::builtin().check(tz.as_str()) {
            Some(why) => r.error(node, key, format!("{}: {why}", quote(&s))),
            None => cfg.timezone = Some(tz),
        },
    }
}

/// A server or pool: a host name or an IP address.
fn server(r: &mut Reader, at: &str, node: &Node) -> Option<String> {
    let s = r.line(node, at, 253)?;
    if s.parse::<std::net::IpAddr>().is_ok() || HostName::parse(&s).is_ok() {
        Some(s)
    } else {
        r.error(
            node,
            at,
            format!("{} is not a host name or IP address", quote(&s)),
        );
        None
    }
}

/// An `allow` entry: what chrony's `allow` takes (an address, a subnet `ADDR/LEN`, a host
/// name, or `all`), nothing that could carry a second directive.
fn allowed(r: &mut Reader, at: &str, node: &Node) -> Option<String> {
    let s = r.line(node, at, 253)?;
    let subnet = s.split_once('/').is_some_and(|(addr, len)| {
        addr.parse::<std::net::IpAddr>().is_ok_and(|a| {
            let max = if a.is_ipv4() { 32 } else { 128 };
            len.parse::<u8>().is_ok_and(|l| l <= max)
        })
    });
    if s == "all" || subnet || s.parse::<std::net::IpAddr>().is_ok() || HostName::parse(&s).is_ok()
    {
        Some(s)
    } else {
        r.error(
            node,
            at,
            format!(
                "{} is not an address, subnet (ADDR/LEN), host name or all",
                quote(&s)
            ),
        );
        None
    }
}

/// A list of servers, pools or peers (`entry` = [`server`]) or of `allow` entries.
fn servers(r: &mut Reader, at: &str, node: &Node) -> Vec<String> {
    hosts(r, at, node, server)
}

fn hosts(
    r: &mut Reader,
    at: &str,
    node: &Node,
    entry: fn(&mut Reader, &str, &Node) -> Option<String>,
) -> Vec<String> {
    let Some(items) = r.list(node, at, MAX_NTP) else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    for (i, n) in items.iter().enumerate() {
        if let Some(s) = entry(r, &index(at, i), n) {
            if out.contains(&s) {
                r.error(n, &index(at, i), format!("{} is listed twice", quote(&s)));
            } else {
                out.push(s);
            }
        }
    }
    out
}

/// `ntp`: null (defaults) or a mapping.
pub fn ntp(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    let mut ntp = Ntp {
        enabled: true,
        ntp_client: "auto".into(),
        servers: Vec::new(),
        pools: Vec::new(),
        peers: Vec::new(),
        allow: Vec::new(),
    };
    if !matches!(node.value, Value::Null) {
        let known = [
            "enabled",
            "ntp_client",
            "servers",
            "pools",
            "peers",
            "allow",
        ];
        let Some(map) = r.map(node, key, &known) else {
            return;
        };
        for (k, v) in map {
            let at = join(key, &k.text);
            match k.text.as_str() {
                "enabled" => ntp.enabled = r.bool(v, &at).unwrap_or(true),
                "ntp_client" => {
                    if let Some(c) = r.line(v, &at, 64) {
                        if CLIENTS.contains(&c.as_str()) {
                            ntp.ntp_client = c;
                        } else {
                            let hint = vmcust_imc::closest(&c, CLIENTS.iter().copied())
                                .map_or(String::new(), |m| format!("did you mean {m}? "));
                            r.error(v, &at, format!("{} is not an NTP client; {hint}write auto, chrony, systemd-timesyncd, ntp, ntpdate or openntpd", quote(&c)));
                        }
                    }
                }
                "servers" => ntp.servers = servers(r, &at, v),
                "pools" => ntp.pools = servers(r, &at, v),
                "peers" => ntp.peers = servers(r, &at, v),
                "allow" => ntp.allow = hosts(r, &at, v, allowed),
                _ => unreachable!("map() keeps only the known keys"),
            }
        }
    }
    cfg.ntp = Some(ntp);
}

#[cfg(test)]
mod tests {
    use crate::cloud_config::document;
    use crate::cloud_config::read::Severity;

    #[test]
    fn ntp_and_timezone_good_and_hostile() {
        let (cfg, p) = document::from_text("ntp:\n  enabled: true\n  ntp_client: chrony\n  servers: [ntp.example.com, 192.0.2.1]\n  pools: [0.pool.ntp.org]\ntimezone: Europe/Berlin\n");
        assert!(p.is_empty(), "{p:?}");
        let n = cfg.ntp.unwrap();
        assert_eq!(
            (n.ntp_client.as_str(), n.servers.len(), n.pools.len()),
            ("chrony", 2, 1)
        );
        assert_eq!(cfg.timezone.unwrap().as_str(), "Europe/Berlin");
        let (cfg, p) = document::from_text("ntp: ~");
        assert!(p.is_empty());
        assert_eq!(cfg.ntp.unwrap().ntp_client, "auto");
        let table: &[(&str, &str)] = &[
            ("timezone: Asia/Tokio", "did you mean Asia/Tokyo?"),
            ("timezone: ../../etc/passwd", "timezone"),
            ("timezone: 5", "is an integer"),
            ("ntp: {ntp_client: crony}", "did you mean chrony?"),
            ("ntp: {servers: ['bad host']}", "ntp.servers[0]"),
            ("ntp: {servers: [a.example, a.example]}", "listed twice"),
            ("ntp: {enabled: 1}", "ntp.enabled: is an integer"),
            ("ntp: [a]", "is a list; write a mapping"),
            ("ntp: {peers: ['peer x; server y']}", "ntp.peers[0]"),
            (
                "ntp: {allow: ['10.0.0.0/33']}",
                "ntp.allow[0]: \"10.0.0.0/33\" is not",
            ),
            ("ntp: {allow: [\"all\\nport 1\"]}", "ntp.allow[0]"),
            ("ntp: {allow: [a, a]}", "listed twice"),
        ];
        for (doc, want) in table {
            let (_, p) = document::from_text(doc);
            assert!(
                p.iter().any(|p| p.severity == Severity::Error
                    && format!("{}: {}", p.path, p.message).contains(want)),
                "{doc}: {p:?}"
            );
        }
        let (cfg, p) = document::from_text(
            "ntp: {peers: [peer.example, 192.0.2.7], allow: [all, 10.0.0.0/8, 'fd00::/64', 192.0.2.9]}",
        );
        assert!(p.is_empty(), "{p:?}");
        let n = cfg.ntp.unwrap();
        assert_eq!(n.peers, ["peer.example", "192.0.2.7"]);
        assert_eq!(n.allow, ["all", "10.0.0.0/8", "fd00::/64", "192.0.2.9"]);
        let (_, p) = document::from_text("ntp: {peer: [x]}");
        assert_eq!(
            (p[0].severity, p[0].path.as_str()),
            (Severity::Unknown, "ntp.peer")
        );
    }
}
