//! Netplan renderer: one `/etc/netplan/50-vmcust.yaml` (mode 0600, as netplan demands
//! for files that may hold secrets), every interface matched by MAC.
//!
//! Reference: netplan's `doc/netplan-yaml.md` (the v2 schema) for the keys written here.

use serde::{Serialize, Serializer};

use super::{merged_dns, Device, HEADER};
use crate::model::{Dns, Interface, Ipv4Config, Ipv6Config, Network};
use crate::plan::{Action, Contents};

/// Where the netplan file goes.
pub const NETPLAN_FILE: &str = "/etc/netplan/50-vmcust.yaml";

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
}

/// One `ethernets` entry.
#[derive(Debug, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct Ethernet {
    /// How the device is found.
    #[serde(rename = "match")]
    pub matching: Match,
    /// Pins the kernel name found for the MAC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub set_name: Option<String>,
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
    /// Router advertisements; false only when IPv6 is disabled.
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
#[derive(Debug, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct DhcpOverrides {
    /// Whether DNS servers from DHCP are used.
    pub use_dns: bool,
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
        .map(|(iface, dev)| (dev.name.clone(), ethernet(iface, dev, &net.dns)))
        .collect();
    NetplanDoc {
        network: NetplanNetwork {
            version: 2,
            ethernets,
        },
    }
}

/// The netplan file as YAML text, with the header comment.
pub fn to_yaml(doc: &NetplanDoc) -> String {
    let body = crate::yaml::to_string(doc).expect("netplan document serializes");
    format!("{HEADER}{body}")
}

/// The actions that write the netplan configuration.
pub fn render(net: &Network, devices: &[Device]) -> Vec<Action> {
    vec![Action::WriteFile {
        path: NETPLAN_FILE.into(),
        mode: 0o600,
        contents: Contents::text(to_yaml(&document(net, devices))),
        purpose: "network (netplan)",
    }]
}

fn ethernet(iface: &Interface, dev: &Device, global_dns: &Dns) -> Ethernet {
    let dhcp4 = iface.ipv4 == Ipv4Config::Dhcp;
    let dhcp6 = match iface.ipv6 {
        Ipv6Config::Auto => None,
        Ipv6Config::Dhcp => Some(true),
        Ipv6Config::Static(_) | Ipv6Config::Disabled => Some(false),
    };
    let no_dhcp_dns = || (!iface.dhcp_dns).then_some(DhcpOverrides { use_dns: false });
    let v6_disabled = iface.ipv6 == Ipv6Config::Disabled;
    let mut addresses: Vec<String> = Vec::new();
    if let Ipv4Config::Static(nets) = &iface.ipv4 {
        addresses.extend(nets.iter().map(|n| n.to_string()));
    }
    if let Ipv6Config::Static(nets) = &iface.ipv6 {
        addresses.extend(nets.iter().map(|n| n.to_string()));
    }
    let dns = merged_dns(&iface.dns, global_dns);
    Ethernet {
        matching: Match {
            macaddress: iface.mac.to_string(),
        },
        set_name: dev.from_system.then(|| dev.name.clone()),
        activation_mode: (!iface.start_on_boot).then_some("manual"),
        dhcp4,
        dhcp4_overrides: if dhcp4 { no_dhcp_dns() } else { None },
        dhcp6,
        dhcp6_overrides: if dhcp6 == Some(true) {
            no_dhcp_dns()
        } else {
            None
        },
        accept_ra: v6_disabled.then_some(false),
        link_local: v6_disabled.then(Vec::new),
        addresses,
        routes: iface
            .routes
            .iter()
            .map(|r| NetplanRoute {
                to: r.to.to_string(),
                via: r.via.to_string(),
                metric: r.metric,
            })
            .collect(),
        nameservers: (!dns.is_empty()).then(|| Nameservers {
            search: dns.search,
            addresses: dns.servers.iter().map(|s| s.to_string()).collect(),
        }),
    }
}

fn ordered_map<S: Serializer, V: Serialize>(
    entries: &[(String, V)],
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_map(entries.iter().map(|(k, v)| (k, v)))
}
