//! Netplan renderer: one `/etc/netplan/50-vmcust.yaml` (mode 0600, as netplan demands
//! for files that may hold secrets), every interface matched by MAC.
//!
//! Reference: netplan's `doc/netplan-yaml.md` (the v2 schema) for the keys written here.

use serde::{Serialize, Serializer};

use super::{merged_dns, Device, HEADER};
use crate::model::{Dns, Interface, Ipv4Config, Ipv6Config, Network};
use crate::plan::writer::UnsafeValue;
use crate::plan::{Action, Contents};
use crate::yaml::BlockWriter;

/// Where the netplan file goes.
pub(crate) const NETPLAN_FILE: &str = "/etc/netplan/50-vmcust.yaml";

/// A netplan v2 document (`network:` at the top).
#[derive(Debug, Serialize)]
pub struct NetplanDoc {
    /// The `network` mapping.
    pub network: NetplanNetwork,
}

/// The `network` mapping of a netplan document.
#[derive(Debug, Serialize)]
pub struct NetplanNetwork {
    /// Always 2.
    pub version: u8,
    /// Ethernet devices by id, in the source's order.
    #[serde(serialize_with = "ordered_map")]
    pub ethernets: Vec<(String, Ethernet)>,
    /// VLAN devices by name, in the source's order.
    #[serde(serialize_with = "ordered_map", skip_serializing_if = "Vec::is_empty")]
    pub vlans: Vec<(String, Ethernet)>,
}

/// One `ethernets` entry.
#[derive(Debug, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct Ethernet {
    /// A VLAN's 802.1Q tag (`vlans` entries only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<u16>,
    /// The device a VLAN is on, by its `ethernets` id (`vlans` entries only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// How the device is found (`ethernets` entries only: a VLAN is its link's).
    #[serde(rename = "match", skip_serializing_if = "Option::is_none")]
    pub matching: Option<Match>,
    /// Pins the kernel name found for the MAC, or renames the NIC (`set-name`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub set_name: Option<String>,
    /// Wake-on-LAN (magic packet) on.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub wakeonlan: bool,
    /// Link MTU in bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u16>,
    /// `manual` keeps the device down at boot (ONBOOT=no).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub activation_mode: Option<&'static str>,
    /// DHCPv4 on or off.
    pub dhcp4: bool,
    /// DHCPv4 options.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dhcp4_overrides: Option<DhcpOverrides>,
    /// DHCPv6 on or off; absent leaves the stack's default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dhcp6: Option<bool>,
    /// DHCPv6 options.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dhcp6_overrides: Option<DhcpOverrides>,
    /// Router advertisements: the source's `accept-ra`, false when IPv6 is disabled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accept_ra: Option<bool>,
    /// Link-local families; empty disables IPv6 link-local addresses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_local: Option<Vec<&'static str>>,
    /// Static addresses with prefix.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub addresses: Vec<String>,
    /// Routes, default routes included.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<NetplanRoute>,
    /// DNS for this device.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nameservers: Option<Nameservers>,
}

/// The `match` block.
#[derive(Debug, Serialize)]
pub struct Match {
    /// Lower-case MAC address.
    pub macaddress: String,
}

/// `dhcp4-overrides` / `dhcp6-overrides`.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct DhcpOverrides {
    /// Whether DNS servers from DHCP are used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub use_dns: Option<bool>,
    /// The source's other overrides, in netplan's key order.
    #[serde(flatten)]
    pub other: crate::model::DhcpOverrides,
}

/// One route.
#[derive(Debug, Serialize)]
pub struct NetplanRoute {
    /// Destination prefix.
    pub to: String,
    /// Gateway.
    pub via: String,
    /// Metric, if set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metric: Option<u32>,
}

/// The `nameservers` block.
#[derive(Debug, Serialize)]
pub struct Nameservers {
    /// Search domains.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub search: Vec<String>,
    /// Server addresses.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub addresses: Vec<String>,
}

/// The netplan document for `net` on `devices` (one per interface, same order).
pub fn document(net: &Network, devices: &[Device]) -> NetplanDoc {
    let ethernets = net
        .interfaces
        .iter()
        .zip(devices)
        .map(|(iface, dev)| (dev.name.to_string(), ethernet(iface, dev, &net.dns)))
        .collect();
    let vlans = super::vlan_devices(net, devices)
        .into_iter()
        .map(|v| {
            let mut eth = ethernet(&v.iface, v.parent, &net.dns);
            eth.matching = None;
            eth.set_name = None;
            eth.id = Some(v.vlan.vlan_id.get());
            eth.link = Some(v.parent.name.to_string());
            (v.vlan.name.to_string(), eth)
        })
        .collect();
    NetplanDoc {
        network: NetplanNetwork {
            version: 2,
            ethernets,
            vlans,
        },
    }
}

/// The netplan file as YAML text, with the header comment.
///
/// Written field by field rather than through `yaml::to_string` (which builds a JSON tree
/// first), because this is on every boot; the output is the same, see the tests.
pub(crate) fn to_yaml(doc: &NetplanDoc) -> String {
    let mut w = BlockWriter::new(HEADER);
    w.key(0, "network");
    w.plain_field(2, "version", doc.network.version);
    if doc.network.ethernets.is_empty() {
        w.plain_field(2, "ethernets", "{}");
    } else {
        w.key(2, "ethernets");
    }
    for (name, eth) in &doc.network.ethernets {
        w.key(4, name);
        write_ethernet(&mut w, 6, eth);
    }
    if !doc.network.vlans.is_empty() {
        w.key(2, "vlans");
    }
    for (name, eth) in &doc.network.vlans {
        w.key(4, name);
        write_ethernet(&mut w, 6, eth);
    }
    w.finish()
}

/// The fields of an overrides block, in declaration order.
fn write_overrides(w: &mut BlockWriter, indent: usize, o: &DhcpOverrides) {
    let x = &o.other;
    for (key, v) in [
        ("use-dns", o.use_dns),
        ("use-domains", x.use_domains),
        ("use-hostname", x.use_hostname),
        ("use-mtu", x.use_mtu),
        ("use-ntp", x.use_ntp),
        ("use-routes", x.use_routes),
        ("send-hostname", x.send_hostname),
    ] {
        if let Some(v) = v {
            w.bool_field(indent, key, v);
        }
    }
    if let Some(h) = &x.hostname {
        w.str_field(indent, "hostname", h.as_str());
    }
    if let Some(m) = x.route_metric {
        w.plain_field(indent, "route-metric", m);
    }
}

/// The fields of `eth` at `indent`, in declaration order, skipping what serde would skip.
fn write_ethernet(w: &mut BlockWriter, indent: usize, eth: &Ethernet) {
    let inner = indent + 2;
    if let Some(id) = eth.id {
        w.plain_field(indent, "id", id);
    }
    if let Some(link) = &eth.link {
        w.str_field(indent, "link", link);
    }
    if let Some(m) = &eth.matching {
        w.key(indent, "match");
        w.str_field(inner, "macaddress", &m.macaddress);
    }
    if let Some(name) = &eth.set_name {
        w.str_field(indent, "set-name", name);
    }
    if eth.wakeonlan {
        w.bool_field(indent, "wakeonlan", true);
    }
    if let Some(mtu) = eth.mtu {
        w.plain_field(indent, "mtu", mtu);
    }
    if let Some(mode) = eth.activation_mode {
        w.str_field(indent, "activation-mode", mode);
    }
    w.bool_field(indent, "dhcp4", eth.dhcp4);
    if let Some(o) = &eth.dhcp4_overrides {
        w.key(indent, "dhcp4-overrides");
        write_overrides(w, inner, o);
    }
    if let Some(dhcp6) = eth.dhcp6 {
        w.bool_field(indent, "dhcp6", dhcp6);
    }
    if let Some(o) = &eth.dhcp6_overrides {
        w.key(indent, "dhcp6-overrides");
        write_overrides(w, inner, o);
    }
    if let Some(accept_ra) = eth.accept_ra {
        w.bool_field(indent, "accept-ra", accept_ra);
    }
    if let Some(link_local) = &eth.link_local {
        w.str_list(indent, "link-local", link_local);
    }
    if !eth.addresses.is_empty() {
        w.str_list(indent, "addresses", &eth.addresses);
    }
    if !eth.routes.is_empty() {
        w.key(indent, "routes");
    }
    for route in &eth.routes {
        w.dash(indent);
        w.str_field(inner, "to", &route.to);
        w.str_field(inner, "via", &route.via);
        if let Some(metric) = route.metric {
            w.plain_field(inner, "metric", metric);
        }
    }
    if let Some(ns) = &eth.nameservers {
        if ns.search.is_empty() && ns.addresses.is_empty() {
            w.plain_field(indent, "nameservers", "{}");
        } else {
            w.key(indent, "nameservers");
        }
        if !ns.search.is_empty() {
            w.str_list(inner, "search", &ns.search);
        }
        if !ns.addresses.is_empty() {
            w.str_list(inner, "addresses", &ns.addresses);
        }
    }
}

/// The actions that write the netplan configuration.
/// Every string goes through the YAML writer's quoting, so no value can add a key.
pub(crate) fn render(net: &Network, devices: &[Device]) -> Result<Vec<Action>, UnsafeValue> {
    Ok(vec![Action::write_file(
        NETPLAN_FILE,
        Contents::text(to_yaml(&document(net, devices))),
        0o600,
        "network (netplan)",
    )])
}

fn ethernet(iface: &Interface, dev: &Device, global_dns: &Dns) -> Ethernet {
    let dhcp4 = iface.ip.ipv4 == Ipv4Config::Dhcp;
    let dhcp6 = match iface.ip.ipv6 {
        Ipv6Config::Auto => None,
        Ipv6Config::Dhcp => Some(true),
        Ipv6Config::Static(_) | Ipv6Config::Disabled => Some(false),
    };
    // An overrides block when DNS from DHCP is off or the source set other overrides.
    let overrides = |o: &crate::model::DhcpOverrides| {
        let use_dns = (!iface.ip.dhcp_dns).then_some(false);
        (use_dns.is_some() || !o.is_empty()).then(|| DhcpOverrides {
            use_dns,
            other: crate::model::DhcpOverrides {
                // A fixed MTU wins: networkd drops UseMTU= beside MTUBytes= anyway.
                use_mtu: o.use_mtu.filter(|_| iface.ip.mtu.is_none()),
                ..o.clone()
            },
        })
    };
    let v6_disabled = iface.ip.ipv6 == Ipv6Config::Disabled;
    let mut addresses: Vec<String> = Vec::new();
    if let Ipv4Config::Static(nets) = &iface.ip.ipv4 {
        addresses.extend(nets.iter().map(text));
    }
    if let Ipv6Config::Static(nets) = &iface.ip.ipv6 {
        addresses.extend(nets.iter().map(text));
    }
    let dns = merged_dns(&iface.ip.dns, global_dns);
    Ethernet {
        id: None,
        link: None,
        matching: Some(Match {
            macaddress: text(&iface.mac),
        }),
        set_name: dev.pinned().then(|| dev.name.to_string()),
        wakeonlan: iface.wake_on_lan,
        mtu: iface.ip.mtu.map(|m| m.get()),
        activation_mode: (!iface.start_on_boot).then_some("manual"),
        dhcp4,
        dhcp4_overrides: if dhcp4 {
            overrides(&iface.ip.dhcp4_overrides)
        } else {
            None
        },
        dhcp6,
        dhcp6_overrides: if dhcp6 == Some(true) {
            overrides(&iface.ip.dhcp6_overrides)
        } else {
            None
        },
        accept_ra: if v6_disabled {
            Some(false)
        } else {
            iface.ip.accept_ra
        },
        link_local: v6_disabled.then(Vec::new),
        addresses,
        routes: iface
            .ip
            .routes
            .iter()
            .map(|r| NetplanRoute {
                to: text(&r.to),
                via: text(&r.via),
                metric: r.metric,
            })
            .collect(),
        nameservers: (!dns.is_empty()).then(|| Nameservers {
            search: dns.search.iter().map(text).collect(),
            addresses: dns.servers.iter().map(text).collect(),
        }),
    }
}

/// `value.to_string()` in one allocation: addresses are written piece by piece, and
/// `to_string` would grow (reallocate) the string two or three times on the way.
fn text(value: &impl std::fmt::Display) -> String {
    use std::fmt::Write as _;
    // The longest text written here is an IPv6 prefix (`ffff:...:ffff/128`, 43 bytes).
    let mut out = String::with_capacity(48);
    let _ = write!(out, "{value}");
    out
}

fn ordered_map<S: Serializer, V: Serialize>(
    entries: &[(String, V)],
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_map(entries.iter().map(|(k, v)| (k, v)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ethernet(mac: &str) -> Ethernet {
        Ethernet {
            id: None,
            link: None,
            matching: Some(Match {
                macaddress: mac.into(),
            }),
            set_name: None,
            wakeonlan: false,
            mtu: None,
            activation_mode: None,
            dhcp4: true,
            dhcp4_overrides: None,
            dhcp6: None,
            dhcp6_overrides: None,
            accept_ra: None,
            link_local: None,
            addresses: Vec::new(),
            routes: Vec::new(),
            nameservers: None,
        }
    }

    /// The direct writer must give exactly what the generic serde path gives.
    #[test]
    fn direct_writer_matches_generic_yaml() {
        let full = Ethernet {
            set_name: Some("ens192".into()),
            wakeonlan: false,
            mtu: Some(9000),
            activation_mode: Some("manual"),
            dhcp4: false,
            dhcp4_overrides: Some(DhcpOverrides {
                use_dns: Some(false),
                other: crate::model::DhcpOverrides {
                    use_ntp: Some(false),
                    send_hostname: Some(true),
                    hostname: Some(crate::model::HostName::parse("yes").unwrap()),
                    route_metric: Some(100),
                    ..crate::model::DhcpOverrides::default()
                },
            }),
            dhcp6: Some(true),
            dhcp6_overrides: Some(DhcpOverrides {
                use_dns: Some(true),
                ..DhcpOverrides::default()
            }),
            accept_ra: Some(false),
            link_local: Some(Vec::new()),
            addresses: vec!["10.0.0.5/24".into(), "fc00::5/64".into()],
            routes: vec![
                NetplanRoute {
                    to: "0.0.0.0/0".into(),
                    via: "10.0.0.1".into(),
                    metric: Some(100),
                },
                NetplanRoute {
                    to: "::/0".into(),
                    via: "fc00::1".into(),
                    metric: None,
                },
            ],
            nameservers: Some(Nameservers {
                search: vec!["example.com".into()],
                addresses: vec!["10.0.0.2".into(), "fc00::2".into()],
            }),
            ..ethernet("00:50:56:a6:8c:08")
        };
        let only_servers = Ethernet {
            link_local: Some(vec!["ipv4"]),
            nameservers: Some(Nameservers {
                search: Vec::new(),
                addresses: vec!["10.0.0.2".into()],
            }),
            ..ethernet("00:50:56:a6:ef:7d")
        };
        let only_search = Ethernet {
            nameservers: Some(Nameservers {
                search: vec!["a.example".into(), "yes".into()],
                addresses: Vec::new(),
            }),
            ..ethernet("00:50:56:00:00:01")
        };
        let empty_dns = Ethernet {
            nameservers: Some(Nameservers {
                search: Vec::new(),
                addresses: Vec::new(),
            }),
            ..ethernet("00:50:56:00:00:02")
        };
        let vlan = Ethernet {
            id: Some(100),
            link: Some("ens192".into()),
            matching: None,
            addresses: vec!["10.1.0.5/24".into()],
            ..ethernet("00:50:56:00:00:09")
        };
        let with_vlan = NetplanDoc {
            network: NetplanNetwork {
                version: 2,
                ethernets: vec![("ens192".to_string(), ethernet("00:50:56:00:00:09"))],
                vlans: vec![("ens192.100".to_string(), vlan)],
            },
        };
        let generic = format!("{HEADER}{}", crate::yaml::to_string(&with_vlan).unwrap());
        assert_eq!(to_yaml(&with_vlan), generic);
        let docs = [
            vec![],
            vec![("eth0".to_string(), ethernet("00:50:56:00:00:00"))],
            vec![
                ("ens192".to_string(), full),
                ("1".to_string(), only_servers),
                ("eth 2".to_string(), only_search),
                ("eth3".to_string(), empty_dns),
            ],
        ];
        for ethernets in docs {
            let doc = NetplanDoc {
                network: NetplanNetwork {
                    version: 2,
                    ethernets,
                    vlans: Vec::new(),
                },
            };
            let generic = format!("{HEADER}{}", crate::yaml::to_string(&doc).unwrap());
            assert_eq!(to_yaml(&doc), generic);
        }
    }
}
