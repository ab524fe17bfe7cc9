//! The `[DNS]` section: global name servers and search suffixes.

use std::net::IpAddr;

use serde::Serialize;

use crate::check::Checker;
use crate::dns_name::DnsName;

/// Global DNS settings (cloud-init attaches them to every NIC).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Dns {
    /// `DNSFROMDHCP`; kept, though cloud-init ignores it.
    pub from_dhcp: Option<bool>,
    /// `SUFFIX|1..n`, in index order.
    pub suffixes: Vec<DnsName>,
    /// `NAMESERVER|1..n`, IPv4 or IPv6, in index order.
    pub nameservers: Vec<IpAddr>,
}

pub(crate) fn parse_dns(ck: &mut Checker<'_>) -> Dns {
    let from_dhcp = ck.yes_no("DNS", "DNSFROMDHCP");
    let suffix_entries = ck.indexed("DNS", "SUFFIX");
    ck.require_contiguous("DNS", "SUFFIX", &suffix_entries);
    let suffixes = suffix_entries
        .values()
        .filter_map(|e| ck.parse_entry(e, DnsName::parse))
        .collect();
    let server_entries = ck.indexed("DNS", "NAMESERVER");
    ck.require_contiguous("DNS", "NAMESERVER", &server_entries);
    let nameservers = server_entries
        .values()
        .filter_map(|e| {
            ck.parse_entry(e, |v| {
                v.parse::<IpAddr>().map_err(|_| {
                    "not an ip address; use an ipv4 or ipv6 address such as 10.20.145.1"
                })
            })
        })
        .collect();
    Dns {
        from_dhcp,
        suffixes,
        nameservers,
    }
}
