//! `match` entries resolved against the root's real interfaces: each entry of
//! [`Network::matched`] becomes MAC-keyed [`Interface`]s before any renderer runs, so
//! renderers only ever see NICs by MAC.
//!
//! The rules are netplan's: a `match` selects among *physical* interfaces (those with a
//! `device` in `/sys/class/net`; not the loopback, bonds, bridges or VLANs), every key
//! given must hold, and a DHCP-only entry that selects several NICs configures each of
//! them. Where netplan would half-work (a `set-name` or static addresses on several
//! NICs, no NIC at all, two entries on one NIC), this is an error naming the entry.

use std::collections::BTreeMap;

use serde::Serialize;

use super::NetworkError;
use crate::facts::network::Link;
use crate::model::{InterfaceId, MacAddr, MatchedInterface, Network, NicSelector, Vlan, VlanLink};

/// One NIC an entry was resolved to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ResolvedNic {
    /// The kernel's name for it.
    pub name: String,
    /// Its MAC address, which the renderers key it by.
    pub mac: MacAddr,
}

/// How one `match` entry was resolved, for `plan` to show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Resolution {
    /// The entry in the source (`ethernets.nics`).
    pub entry: String,
    /// What it selects (`name ens* and driver vmxnet3`).
    pub selector: String,
    /// The NICs it configures, in name order.
    pub nics: Vec<ResolvedNic>,
    /// Why these: how many physical interfaces there were and the rule applied.
    pub why: String,
}

impl Resolution {
    /// `ethernets.nics (name ens*) → ens192 00:50:56:…, ens224 …: why`, one line.
    pub(crate) fn line(&self) -> String {
        let nics: Vec<String> = self
            .nics
            .iter()
            .map(|n| format!("{} {}", n.name, n.mac))
            .collect();
        format!(
            "{} ({}) → {}: {}",
            self.entry,
            self.selector,
            nics.join(", "),
            self.why
        )
    }
}

/// The network with every matched entry turned into MAC-keyed interfaces, and how.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    /// The network the renderers get: [`Network::matched`] is empty.
    pub network: Network,
    /// One record per matched entry, in source order.
    pub resolutions: Vec<Resolution>,
}

/// Resolves `net`'s matched entries against the root's interfaces (`None`: the root has
/// no `/sys/class/net`). A network without matched entries comes back as it is.
pub(crate) fn resolve(net: &Network, links: Option<&[Link]>) -> Result<Resolved, NetworkError> {
    if net.matched.is_empty() {
        return Ok(Resolved {
            network: net.clone(),
            resolutions: Vec::new(),
        });
    }
    let physical: Vec<&Link> = links
        .unwrap_or_default()
        .iter()
        .filter(|l| l.physical)
        .collect();
    // Which entry configures each NIC, to refuse a second one.
    let mut owner: BTreeMap<MacAddr, String> = net
        .interfaces
        .iter()
        .map(|i| (i.mac, format!("interface {} ({})", i.id, i.mac)))
        .collect();
    let mut bound: Vec<Vec<crate::model::Interface>> = Vec::new();
    let mut resolutions = Vec::new();
    for m in &net.matched {
        if links.is_none() {
            return Err(NetworkError::Offline {
                entry: m.entry.clone(),
                selector: m.selector.to_string(),
            });
        }
        let found: Vec<&Link> = physical
            .iter()
            .copied()
            .filter(|l| selects(&m.selector, l))
            .collect();
        let mut why = check_count(m, &found, &physical)?;
        if let (Some(set), [one]) = (&m.set_name, found.as_slice()) {
            if set.as_str() != one.name {
                why.push_str(&format!("; set-name renames {} to {set}", one.name));
            }
        }
        let mut ifaces = Vec::new();
        let mut nics = Vec::new();
        for l in &found {
            let name =
                InterfaceId::parse(&l.name).map_err(|reason| NetworkError::BadDeviceName {
                    mac: l.mac,
                    name: crate::model::quote(&l.name),
                    reason,
                })?;
            if let Some(other) = owner.insert(l.mac, m.entry.clone()) {
                return Err(NetworkError::Taken {
                    entry: m.entry.clone(),
                    other,
                    name: l.name.clone(),
                    mac: l.mac,
                });
            }
            ifaces.push(m.bind(name, l.mac));
            nics.push(ResolvedNic {
                name: l.name.clone(),
                mac: l.mac,
            });
        }
        bound.push(ifaces);
        resolutions.push(Resolution {
            entry: m.entry.clone(),
            selector: m.selector.to_string(),
            nics,
            why,
        });
    }
    let vlans = link_vlans(net, &net.matched, &bound)?;
    // The source's order: each matched entry's NICs go before the keyed interface that
    // followed it in the source.
    let mut interfaces = Vec::new();
    let mut pending = net.matched.iter().zip(bound).peekable();
    for (i, iface) in net.interfaces.iter().enumerate() {
        while let Some((_, ifaces)) = pending.next_if(|(m, _)| m.position <= i) {
            interfaces.extend(ifaces);
        }
        interfaces.push(iface.clone());
    }
    for (_, ifaces) in pending {
        interfaces.extend(ifaces);
    }
    Ok(Resolved {
        network: Network {
            interfaces,
            dns: net.dns.clone(),
            matched: Vec::new(),
            vlans,
        },
        resolutions,
    })
}

/// The VLANs with every link on a matched entry turned into the MAC of the one NIC that
/// entry found: a VLAN sits on one NIC, so an entry with VLANs on it must find one.
fn link_vlans(
    net: &Network,
    matched: &[MatchedInterface],
    bound: &[Vec<crate::model::Interface>],
) -> Result<Vec<Vlan>, NetworkError> {
    net.vlans
        .iter()
        .map(|v| {
            let VlanLink::Entry(entry) = &v.link else {
                return Ok(v.clone());
            };
            let Some((m, nics)) = matched.iter().zip(bound).find(|(m, _)| &m.entry == entry) else {
                return Err(NetworkError::VlanLink {
                    vlan: v.name.to_string(),
                    link: v.link_entry.clone(),
                });
            };
            match nics.as_slice() {
                [one] => Ok(Vlan {
                    link: VlanLink::Mac(one.mac),
                    ..v.clone()
                }),
                several => Err(NetworkError::SeveralMatch {
                    entry: m.entry.clone(),
                    selector: m.selector.to_string(),
                    found: several
                        .iter()
                        .map(|i| format!("{} ({})", i.id, i.mac))
                        .collect::<Vec<_>>()
                        .join(", "),
                    why: "a VLAN is stacked on it",
                }),
            }
        })
        .collect()
}

/// Whether every key of the selector holds for `link`.
fn selects(s: &NicSelector, link: &Link) -> bool {
    s.name.as_ref().is_none_or(|g| g.matches(&link.name))
        && s.mac.is_none_or(|m| m == link.mac)
        && (s.driver.is_empty()
            || link
                .driver
                .as_deref()
                .is_some_and(|d| s.driver.iter().any(|g| g.matches(d))))
}

/// The error for no NIC, or for several where the entry needs one; else why the NICs
/// found are the right ones.
fn check_count(
    m: &MatchedInterface,
    found: &[&Link],
    physical: &[&Link],
) -> Result<String, NetworkError> {
    let of = format!(
        "{} of {} physical interface{}",
        found.len(),
        physical.len(),
        if physical.len() == 1 { "" } else { "s" }
    );
    match (found.len(), m.needs_one()) {
        (0, _) => Err(NetworkError::NoMatch {
            entry: m.entry.clone(),
            selector: m.selector.to_string(),
            known: describe(physical),
        }),
        (1, _) => Ok(format!("{of} matched")),
        (_, Some(why)) => Err(NetworkError::SeveralMatch {
            entry: m.entry.clone(),
            selector: m.selector.to_string(),
            found: describe(found),
            why,
        }),
        (_, None) => Ok(format!(
            "{of} matched; DHCP only, so each is configured, as netplan does"
        )),
    }
}

/// `ens192 (00:50:56:…, vmxnet3), …` for messages.
fn describe(links: &[&Link]) -> String {
    if links.is_empty() {
        return "none".to_string();
    }
    links
        .iter()
        .map(|l| match &l.driver {
            Some(d) => format!("{} ({}, driver {d})", l.name, l.mac),
            None => format!("{} ({})", l.name, l.mac),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Dns, Glob, Interface, IpSettings, Ipv4Config, Ipv6Config};

    fn link(name: &str, mac: &str, driver: Option<&str>, physical: bool) -> Link {
        Link {
            name: name.to_string(),
            mac: mac.parse().unwrap(),
            driver: driver.map(str::to_string),
            physical,
        }
    }

    /// Three VMware NICs (two vmxnet3, one e1000e), a bond sharing the first's MAC
    /// and a bridge: the virtual ones are never matched.
    fn links() -> Vec<Link> {
        vec![
            link("bond0", "00:50:56:00:00:01", None, false),
            link("br0", "00:50:56:00:00:09", None, false),
            link("ens192", "00:50:56:00:00:01", Some("vmxnet3"), true),
            link("ens224", "00:50:56:00:00:02", Some("vmxnet3"), true),
            link("ens256", "00:50:56:00:00:03", Some("e1000e"), true),
        ]
    }

    fn selector(name: Option<&str>, driver: &[&str]) -> NicSelector {
        NicSelector {
            name: name.map(|n| Glob::parse(n).unwrap()),
            mac: None,
            driver: driver.iter().map(|d| Glob::parse(d).unwrap()).collect(),
        }
    }

    fn entry(sel: NicSelector, ipv4: Ipv4Config, set_name: Option<&str>) -> MatchedInterface {
        MatchedInterface {
            entry: "ethernets.e".to_string(),
            selector: sel,
            set_name: set_name.map(|n| InterfaceId::parse(n).unwrap()),
            position: 0,
            ip: IpSettings {
                ipv4,
                ipv6: Ipv6Config::Auto,
                routes: Vec::new(),
                dns: Dns::default(),
                dhcp_dns: true,
                mtu: None,
                accept_ra: None,
                dhcp4_overrides: Default::default(),
                dhcp6_overrides: Default::default(),
            },
            wake_on_lan: false,
        }
    }

    fn net(matched: Vec<MatchedInterface>) -> Network {
        Network {
            interfaces: Vec::new(),
            dns: Dns::default(),
            matched,
            vlans: Vec::new(),
        }
    }

    fn fixed() -> Ipv4Config {
        Ipv4Config::Static(vec!["10.0.0.5/24".parse().unwrap()])
    }

    /// 0, 1 and many matches; name and driver together; set-name and static addresses
    /// needing exactly one: what each entry resolves to, or the start of its error.
    #[test]
    fn resolution_table() {
        type Case = (
            &'static str,
            MatchedInterface,
            Result<&'static [&'static str], &'static str>,
        );
        let dhcp = || Ipv4Config::Dhcp;
        let cases: Vec<Case> = vec![
            (
                "glob, DHCP only: each NIC",
                entry(selector(Some("ens*"), &[]), dhcp(), None),
                Ok(&["ens192", "ens224", "ens256"]),
            ),
            (
                "exact name",
                entry(selector(Some("ens224"), &[]), fixed(), None),
                Ok(&["ens224"]),
            ),
            (
                "name and driver must both hold",
                entry(selector(Some("ens2*"), &["vmxnet3"]), fixed(), None),
                Ok(&["ens224"]),
            ),
            (
                "driver globs: any of them",
                entry(selector(None, &["e1000*", "virtio*"]), dhcp(), None),
                Ok(&["ens256"]),
            ),
            (
                "set-name on one NIC",
                entry(selector(None, &["e1000e"]), dhcp(), Some("lan0")),
                Ok(&["lan0"]),
            ),
            (
                "empty match: every physical NIC",
                entry(selector(None, &[]), dhcp(), None),
                Ok(&["ens192", "ens224", "ens256"]),
            ),
            (
                "virtual devices are not matched",
                entry(selector(Some("b*"), &[]), dhcp(), None),
                Err("ethernets.e: no interface matches name b*; the root's physical interfaces are ens192 (00:50:56:00:00:01, driver vmxnet3), ens224"),
            ),
            (
                "no match",
                entry(selector(Some("eth1"), &[]), dhcp(), None),
                Err("ethernets.e: no interface matches name eth1"),
            ),
            (
                "name holds, driver does not",
                entry(selector(Some("ens256"), &["vmxnet3"]), dhcp(), None),
                Err("ethernets.e: no interface matches name ens256 and driver vmxnet3"),
            ),
            (
                "static addresses on several",
                entry(selector(Some("ens*"), &[]), fixed(), None),
                Err("ethernets.e: name ens* matches ens192 (00:50:56:00:00:01, driver vmxnet3), ens224 (00:50:56:00:00:02, driver vmxnet3), ens256 (00:50:56:00:00:03, driver e1000e), but it has static addresses, so it must match exactly one"),
            ),
            (
                "set-name on several",
                entry(selector(None, &["vmxnet3"]), dhcp(), Some("lan0")),
                Err("ethernets.e: driver vmxnet3 matches ens192 (00:50:56:00:00:01, driver vmxnet3), ens224 (00:50:56:00:00:02, driver vmxnet3), but it has a set-name"),
            ),
        ];
        let links = links();
        for (what, m, want) in cases {
            let got = resolve(&net(vec![m]), Some(&links));
            match (got, want) {
                (Ok(r), Ok(ids)) => {
                    let got: Vec<&str> =
                        r.network.interfaces.iter().map(|i| i.id.as_str()).collect();
                    assert_eq!(got, ids, "{what}");
                    assert!(r.network.matched.is_empty(), "{what}");
                    assert_eq!(r.resolutions.len(), 1, "{what}");
                    assert_eq!(r.resolutions[0].nics.len(), ids.len(), "{what}");
                }
                (Err(e), Err(start)) => {
                    let e = e.to_string();
                    assert!(e.starts_with(start), "{what}: {e}");
                }
                (got, want) => panic!("{what}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn each_nic_keeps_its_mac_and_the_entry_settings() {
        let m = entry(selector(Some("ens2*"), &[]), Ipv4Config::Dhcp, None);
        let r = resolve(&net(vec![m]), Some(&links())).unwrap();
        let got: Vec<(String, String, &Ipv4Config)> = r
            .network
            .interfaces
            .iter()
            .map(|i| (i.id.to_string(), i.mac.to_string(), &i.ip.ipv4))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "ens224".into(),
                    "00:50:56:00:00:02".into(),
                    &Ipv4Config::Dhcp
                ),
                (
                    "ens256".into(),
                    "00:50:56:00:00:03".into(),
                    &Ipv4Config::Dhcp
                )
            ]
        );
        assert_eq!(
            r.resolutions[0].line(),
            "ethernets.e (name ens2*) → ens224 00:50:56:00:00:02, ens256 00:50:56:00:00:03: \
             2 of 3 physical interfaces matched; DHCP only, so each is configured, as netplan does"
        );
    }

    fn keyed(id: &str, mac: &str) -> Interface {
        Interface {
            id: InterfaceId::parse(id).unwrap(),
            mac: mac.parse().unwrap(),
            set_name: None,
            wake_on_lan: false,
            ip: IpSettings {
                mtu: None,
                accept_ra: None,
                dhcp4_overrides: Default::default(),
                dhcp6_overrides: Default::default(),
                ipv4: Ipv4Config::Dhcp,
                ipv6: Ipv6Config::Auto,
                routes: Vec::new(),
                dns: Dns::default(),
                dhcp_dns: true,
            },
            start_on_boot: true,
        }
    }

    /// Matched NICs go where the entry stood among the MAC-keyed interfaces.
    #[test]
    fn source_order_is_kept() {
        let mut first = entry(selector(Some("ens256"), &[]), Ipv4Config::Dhcp, None);
        first.entry = "ethernets.a".into();
        let mut last = entry(selector(Some("ens224"), &[]), Ipv4Config::Dhcp, None);
        last.entry = "ethernets.c".into();
        last.position = 1;
        let n = Network {
            interfaces: vec![keyed("b", "00:50:56:00:00:01")],
            dns: Dns::default(),
            matched: vec![first, last],
            vlans: Vec::new(),
        };
        let r = resolve(&n, Some(&links())).unwrap();
        let ids: Vec<&str> = r.network.interfaces.iter().map(|i| i.id.as_str()).collect();
        assert_eq!(ids, ["ens256", "b", "ens224"]);
    }

    #[test]
    fn two_entries_on_one_nic_is_an_error() {
        let n = Network {
            interfaces: vec![keyed("b", "00:50:56:00:00:02")],
            dns: Dns::default(),
            matched: vec![entry(selector(Some("ens*"), &[]), Ipv4Config::Dhcp, None)],
            vlans: Vec::new(),
        };
        let e = resolve(&n, Some(&links())).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "ethernets.e and interface b (00:50:56:00:00:02) both configure ens224 (00:50:56:00:00:02)"
            ),
            "{e}"
        );
    }

    #[test]
    fn offline_roots_cannot_resolve_matches() {
        let n = net(vec![entry(
            selector(Some("ens*"), &[]),
            Ipv4Config::Dhcp,
            None,
        )]);
        let e = resolve(&n, None).unwrap_err().to_string();
        assert!(e.contains("no /sys/class/net"), "{e}");
        // Without matched entries an offline root is fine: nothing to resolve.
        let plain = Network {
            interfaces: vec![keyed("b", "00:50:56:00:00:02")],
            ..net(Vec::new())
        };
        assert_eq!(resolve(&plain, None).unwrap().network.interfaces.len(), 1);
    }
}
