//! One `[NICn]` section: MAC, boot protocol, static IPv4 and the indexed IPv6 entries.

use std::net::{Ipv4Addr, Ipv6Addr};

use serde::Serialize;

use crate::check::Checker;
use crate::mac::MacAddr;
use crate::netmask::{ipv4_prefix, ipv6_prefix};
use crate::shown;
use crate::suggest::closest;

/// A network adapter to configure, found in the guest by its MAC address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Nic {
    /// Section name as listed in `NIC-CONFIG|NICS`, e.g. `NIC1`.
    pub name: String,
    /// Line of the `[NICn]` header, for messages about the whole NIC.
    pub line: usize,
    /// `MACADDR`.
    pub mac: MacAddr,
    /// `ONBOOT`; `None` when absent (the engine then brings the NIC up, as vCenter always writes yes).
    pub onboot: Option<bool>,
    /// `PRIMARY`; absent means false. At most one NIC is primary.
    pub primary: bool,
    /// `IPv4_MODE`; absent means `BACKWARDS_COMPATIBLE`.
    pub ipv4_mode: Ipv4Mode,
    /// `BOOTPROTO`; absent means DHCP, as in cloud-init.
    pub bootproto: BootProto,
    /// `IPADDR` with `NETMASK`. A static NIC without `NETMASK` is refused (cloud-init would use
    /// /32, whose gateway is unreachable); otherwise an absent netmask means /32 (unused).
    pub ipv4: Option<Ipv4Static>,
    /// `GATEWAY`, comma-separated, in order.
    pub gateways: Vec<Ipv4Addr>,
    /// `IPv6ADDR|n`, `IPv6NETMASK|n`, `IPv6GATEWAY|n`, in index order.
    pub ipv6: Vec<Ipv6Entry>,
}

/// `IPv4_MODE` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Ipv4Mode {
    /// Follow `BOOTPROTO` (the default).
    #[default]
    BackwardsCompatible,
    /// Static addressing.
    Static,
    /// DHCP.
    Dhcp,
    /// No IPv4 on this NIC.
    Disabled,
    /// Leave IPv4 as it is.
    AsIs,
}

impl Ipv4Mode {
    /// Parses the value case-insensitively.
    pub fn parse(s: &str) -> Result<Self, &'static str> {
        const MODES: [(&str, Ipv4Mode); 5] = [
            ("BACKWARDS_COMPATIBLE", Ipv4Mode::BackwardsCompatible),
            ("STATIC", Ipv4Mode::Static),
            ("DHCP", Ipv4Mode::Dhcp),
            ("DISABLED", Ipv4Mode::Disabled),
            ("AS_IS", Ipv4Mode::AsIs),
        ];
        MODES
            .iter()
            .find(|(name, _)| s.eq_ignore_ascii_case(name))
            .map(|&(_, mode)| mode)
            .ok_or("unknown ipv4 mode; use BACKWARDS_COMPATIBLE, STATIC, DHCP, DISABLED or AS_IS (any case)")
    }
}

/// `BOOTPROTO` values of a NIC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BootProto {
    /// Address from DHCP.
    Dhcp,
    /// `IPADDR`/`NETMASK`/`GATEWAY`.
    Static,
}

impl BootProto {
    /// Parses the value case-insensitively.
    pub fn parse(s: &str) -> Result<Self, &'static str> {
        if s.eq_ignore_ascii_case("dhcp") {
            Ok(BootProto::Dhcp)
        } else if s.eq_ignore_ascii_case("static") {
            Ok(BootProto::Static)
        } else {
            Err("unknown boot protocol; use dhcp or static (any case)")
        }
    }
}

/// A static IPv4 address with its prefix length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Ipv4Static {
    /// `IPADDR`.
    pub address: Ipv4Addr,
    /// From `NETMASK`, 0-32.
    pub prefix: u8,
}

/// One indexed static IPv6 entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Ipv6Entry {
    /// `IPv6ADDR|n`.
    pub address: Ipv6Addr,
    /// From `IPv6NETMASK|n`, 0-128.
    pub prefix: u8,
    /// `IPv6GATEWAY|n`, if any.
    pub gateway: Option<Ipv6Addr>,
}

/// At most this many sections are looked at for a misspelt NIC section.
const MAX_SUGGESTION_SECTIONS: usize = 128;

/// Validates the section of one listed NIC; `None` if it is unusable (the problems are recorded).
pub(crate) fn parse_nic(ck: &mut Checker<'_>, name: &str, nics_line: usize) -> Option<Nic> {
    let Some(line) = ck.raw.section(name).map(|s| s.line) else {
        // A section that is near the name (`[NCI1]` for NIC1) is most likely the one meant.
        // Real specs have a few dozen sections; a hostile one with a thousand gets no
        // suggestion rather than 64 nics times a thousand comparisons.
        let sections = ck.raw.sections();
        let candidates = sections.iter().take(MAX_SUGGESTION_SECTIONS);
        let meant = closest(name, candidates.map(|s| s.name.as_str()))
            .and_then(|m| ck.raw.section(m))
            .map_or(String::new(), |s| {
                format!(
                    "; did you mean [{}] (line {})?",
                    shown::name(&s.name),
                    s.line
                )
            });
        let name = shown::name(name);
        let message = format!("nic {name} is listed but there is no [{name}] section{meant}");
        ck.problem(Some(nics_line), "NIC-CONFIG", Some("NICS"), message);
        return None;
    };
    let mac = ck.field(name, "MACADDR", |v| v.parse::<MacAddr>());
    if ck.raw.get_in(name, "MACADDR").is_none() {
        let message =
            "missing; the nic is found by its mac address, e.g. MACADDR = 00:50:56:a6:8c:08"
                .to_owned();
        ck.problem(Some(line), name, Some("MACADDR"), message);
    }
    let onboot = ck.yes_no_true_false(name, "ONBOOT");
    let primary = ck.yes_no_true_false(name, "PRIMARY").unwrap_or(false);
    let ipv4_mode = ck
        .field(name, "IPv4_MODE", Ipv4Mode::parse)
        .unwrap_or_default();
    let bootproto = ck.field(name, "BOOTPROTO", BootProto::parse);
    let address = ck.field(name, "IPADDR", |v| {
        v.parse::<Ipv4Addr>()
            .map_err(|_| "not an ipv4 address; use a dotted address such as 10.20.87.154")
    });
    let prefix = ck.field(name, "NETMASK", ipv4_prefix);
    let gateways = ck
        .field(name, "GATEWAY", parse_gateways)
        .unwrap_or_default();
    check_static_has_address(ck, name, bootproto, ipv4_mode);
    let is_static = bootproto == Some(BootProto::Static) && ipv4_mode != Ipv4Mode::Disabled;
    if is_static {
        check_static_has_netmask(ck, name);
        if let (Some(address), Some(prefix)) = (address, prefix) {
            check_gateways_on_link(ck, name, address, prefix, &gateways);
        }
    }
    if let (None, Some(netmask)) = (
        ck.raw.get_in(name, "IPADDR"),
        ck.raw.get_in(name, "NETMASK"),
    ) {
        ck.warn(
            Some(netmask.line),
            name,
            Some("NETMASK"),
            "NETMASK without IPADDR is ignored",
        );
    }
    let ipv6 = parse_ipv6(ck, name);
    Some(Nic {
        name: name.to_owned(),
        line,
        mac: mac?,
        onboot,
        primary,
        ipv4_mode,
        bootproto: bootproto.unwrap_or(BootProto::Dhcp),
        ipv4: address.map(|address| Ipv4Static {
            address,
            prefix: prefix.unwrap_or(32),
        }),
        gateways,
        ipv6,
    })
}

/// BOOTPROTO=static needs IPADDR unless IPv4 is disabled anyway.
fn check_static_has_address(
    ck: &mut Checker<'_>,
    name: &str,
    bootproto: Option<BootProto>,
    mode: Ipv4Mode,
) {
    let has_address = ck.raw.get_in(name, "IPADDR").is_some();
    if bootproto == Some(BootProto::Static) && mode != Ipv4Mode::Disabled && !has_address {
        // `ipaddr` or `IpAddr` is there but keys are case-sensitive: point at that line.
        if let Some(near) = near_miss(ck, name, "IPADDR") {
            let message = format!(
                "BOOTPROTO = static needs IPADDR; keys are case-sensitive, write IPADDR instead of {}",
                shown::name(&near.key)
            );
            ck.problem(Some(near.line), name, Some(&near.key), message);
            return;
        }
        let line = ck.raw.get_in(name, "BOOTPROTO").map(|e| e.line);
        let message =
            "BOOTPROTO = static needs IPADDR; add IPADDR (and NETMASK) or use BOOTPROTO = dhcp"
                .to_owned();
        ck.problem(line, name, Some("IPADDR"), message);
    }
}

/// A static IPADDR needs a NETMASK: without one cloud-init configures a /32, on which no
/// gateway is reachable, so the VM would come up without a working network.
fn check_static_has_netmask(ck: &mut Checker<'_>, name: &str) {
    let Some(ipaddr) = ck.raw.get_in(name, "IPADDR") else {
        return;
    };
    if ck.raw.get_in(name, "NETMASK").is_some() {
        return;
    }
    let message = match near_miss(ck, name, "NETMASK") {
        Some(near) => format!(
            "static IPADDR needs NETMASK; line {} has {}, did you mean NETMASK?",
            near.line,
            shown::name(&near.key)
        ),
        None => "static IPADDR needs NETMASK; add NETMASK, e.g. 255.255.255.0 or 24 (without it the address would be a /32 and no gateway reachable)".to_owned(),
    };
    ck.problem(Some(ipaddr.line), name, Some("NETMASK"), message);
}

/// A gateway outside the NIC's own subnet is legal (an on-link route can reach it) but
/// usually a typo in IPADDR, NETMASK or GATEWAY: warn, naming both.
fn check_gateways_on_link(
    ck: &mut Checker<'_>,
    name: &str,
    address: Ipv4Addr,
    prefix: u8,
    gateways: &[Ipv4Addr],
) {
    let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
    let network = Ipv4Addr::from(u32::from(address) & mask);
    let line = ck.raw.get_in(name, "GATEWAY").map(|e| e.line);
    for gateway in gateways {
        if u32::from(*gateway) & mask != u32::from(network) {
            let message = format!(
                "gateway {gateway} is outside the nic's subnet {network}/{prefix}; check IPADDR, NETMASK and GATEWAY"
            );
            ck.warn(line, name, Some("GATEWAY"), &message);
        }
    }
}

/// An entry of the section whose key is `key` in another case, or a typo of it.
fn near_miss<'a>(ck: &Checker<'a>, name: &str, key: &str) -> Option<&'a crate::reader::RawEntry> {
    ck.raw
        .section_entries(name)
        .find(|e| e.key != key && crate::suggest::did_you_mean(name, true, &e.key) == Some(key))
}

/// `GATEWAY = a, b`: each trimmed; an empty value means no gateway.
fn parse_gateways(v: &str) -> Result<Vec<Ipv4Addr>, &'static str> {
    if v.is_empty() {
        return Ok(Vec::new());
    }
    v.split(',')
        .map(|g| g.trim().parse::<Ipv4Addr>())
        .collect::<Result<_, _>>()
        .map_err(|_| "not a list of ipv4 addresses; use comma-separated addresses such as 10.20.87.253, 10.20.87.105")
}

/// The indexed IPv6 entries: addresses numbered 1..n, each with a netmask, gateways optional.
fn parse_ipv6(ck: &mut Checker<'_>, name: &str) -> Vec<Ipv6Entry> {
    let addrs = ck.indexed(name, "IPv6ADDR");
    let masks = ck.indexed(name, "IPv6NETMASK");
    let gateways = ck.indexed(name, "IPv6GATEWAY");
    ck.require_contiguous(name, "IPv6ADDR", &addrs);
    for (index, entry) in masks.iter().chain(gateways.iter()) {
        if !addrs.contains_key(index) {
            let message = format!("IPv6ADDR|{index} is missing; every IPv6NETMASK|n and IPv6GATEWAY|n needs an IPv6ADDR|n");
            ck.problem(Some(entry.line), name, Some(&entry.key), message);
        }
    }
    let mut entries = Vec::new();
    for (index, addr) in &addrs {
        let address = ck.parse_entry(addr, parse_ipv6_addr);
        let prefix = match masks.get(index) {
            Some(mask) => ck.parse_entry(mask, ipv6_prefix),
            None => {
                let message = "missing; every IPv6ADDR|n needs an IPv6NETMASK|n (a prefix length 0-128 or a full mask)".to_owned();
                ck.problem(
                    Some(addr.line),
                    name,
                    Some(&format!("IPv6NETMASK|{index}")),
                    message,
                );
                None
            }
        };
        let gateway = match gateways.get(index) {
            Some(gw) => ck.parse_entry(gw, parse_ipv6_addr).map(Some),
            None => Some(None),
        };
        if let (Some(address), Some(prefix), Some(gateway)) = (address, prefix, gateway) {
            entries.push(Ipv6Entry {
                address,
                prefix,
                gateway,
            });
        }
    }
    entries
}

fn parse_ipv6_addr(v: &str) -> Result<Ipv6Addr, &'static str> {
    v.parse()
        .map_err(|_| "not an ipv6 address; use an address such as fc00:10:20:87::154")
}
