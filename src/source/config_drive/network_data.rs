//! OpenStack `network_data.json` into the engine's [`Network`](crate::model::Network):
//! physical links found by MAC, their static IPv4/IPv6 networks (addresses, routes, DNS
//! services) or DHCP/SLAAC, and the top-level DNS services. It is rewritten as a network
//! config v1 (as cloud-init's `convert_net_json` does) and validated by
//! [`netconfig::translate`], so that every value meets the same checks as any other
//! source's; errors are given back in the document's own terms (`links[0] (tap1)`,
//! `network net0`). Bonds, VLANs and any link or network type not rendered are refused.

use serde::Deserialize;
use serde_norway::{Mapping, Value};

use crate::model::{quote, MacAddr};
use crate::source::netconfig::{self, Translated};

/// Most links, networks, services and routes per network read from one document (a VM
/// has at most a few dozen NICs): bounds on a hostile document's work.
pub(crate) const MAX_ITEMS: usize = 256;

/// Link types cloud-init treats as a physical NIC.
const PHYSICAL: &[&str] = &[
    "bridge",
    "ethernet",
    "hw_veb",
    "hyperv",
    "ovs",
    "phy",
    "tap",
    "vhostuser",
    "vif",
];

#[derive(Debug, Deserialize)]
struct Document {
    #[serde(default)]
    links: Vec<Link>,
    #[serde(default)]
    networks: Vec<Net>,
    #[serde(default)]
    services: Vec<Service>,
}

#[derive(Debug, Deserialize)]
struct Link {
    id: String,
    #[serde(rename = "type", default)]
    kind: String,
    ethernet_mac_address: Option<String>,
    name: Option<String>,
    mtu: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
struct Net {
    id: Option<String>,
    #[serde(rename = "type", default)]
    kind: String,
    link: String,
    ip_address: Option<String>,
    netmask: Option<String>,
    #[serde(default)]
    routes: Vec<RouteEntry>,
    #[serde(default)]
    services: Vec<Service>,
}

#[derive(Debug, Deserialize)]
struct RouteEntry {
    network: String,
    netmask: String,
    gateway: String,
}

#[derive(Debug, Deserialize)]
struct Service {
    #[serde(rename = "type", default)]
    kind: String,
    address: Option<String>,
}

fn s(v: &str) -> Value {
    Value::String(v.to_string())
}

fn map(pairs: Vec<(&str, Value)>) -> Value {
    let mut m = Mapping::new();
    for (k, v) in pairs {
        m.insert(s(k), v);
    }
    Value::Mapping(m)
}

fn too_many(what: &str, n: usize) -> Result<(), String> {
    if n > MAX_ITEMS {
        return Err(format!("more than {MAX_ITEMS} {what}; a VM has far fewer"));
    }
    Ok(())
}

/// DNS service addresses; other service types are left out with a warning.
fn dns(services: &[Service], at: &str, warnings: &mut Vec<String>) -> Vec<Value> {
    let mut out = Vec::new();
    for (i, svc) in services.iter().enumerate() {
        match (svc.kind.as_str(), &svc.address) {
            ("dns", Some(a)) => out.push(s(a)),
            ("dns", None) => warnings.push(format!(
                "{at}services[{i}]: a dns service without an address is left out"
            )),
            (other, _) => warnings.push(format!(
                "{at}services[{i}]: service type {} is not used by vmcust",
                quote(other)
            )),
        }
    }
    out
}

/// Translates a `network_data.json` document.
pub fn translate(json: &[u8]) -> Result<Translated, String> {
    let bad = |e: String| {
        format!("not the JSON object OpenStack writes ({e}); give links, networks and services")
    };
    let value: serde_json::Value = serde_json::from_slice(json).map_err(|e| bad(e.to_string()))?;
    if !value.is_object() {
        return Err(bad("the document is not an object".into()));
    }
    let doc: Document = serde_json::from_value(value).map_err(|e| bad(e.to_string()))?;
    too_many("links", doc.links.len())?;
    too_many("networks", doc.networks.len())?;
    too_many("services", doc.services.len())?;
    let mut warnings = Vec::new();
    // (how netconfig names the entry, how the document does), to give errors back.
    let mut names: Vec<(String, String)> = Vec::new();
    let mut config = Vec::new();
    // Links without a name, by MAC, with their ids.
    let mut unnamed: Vec<(Option<MacAddr>, String)> = Vec::new();
    for (i, link) in doc.links.iter().enumerate() {
        let at = format!("links[{i}] ({})", quote(&link.id));
        if !PHYSICAL.contains(&link.kind.as_str()) {
            let why = match link.kind.as_str() {
                "bond" => "bonds are not rendered by vmcust",
                "vlan" => "VLANs are not rendered by vmcust",
                "" => "it has no type",
                _ => "vmcust renders physical NICs only",
            };
            return Err(format!(
                "{at}: link type {} is not supported: {why}; give each NIC as a physical \
                 link (phy, ethernet, ovs, tap, vif, …)",
                quote(&link.kind)
            ));
        }
        let Some(mac) = &link.ethernet_mac_address else {
            return Err(format!(
                "{at}: no ethernet_mac_address; vmcust finds the NIC by it"
            ));
        };
        mac.trim()
            .parse::<MacAddr>()
            .map_err(|e| format!("{at}: ethernet_mac_address: {e}"))?;
        // Set as cloud-init's converter passes it on; the range is checked with the
        // other v1 values.
        let mtu = match &link.mtu {
            None | Some(serde_json::Value::Null) => None,
            Some(v) => Some(v.as_u64().ok_or_else(|| {
                format!("{at}: mtu {v} is not a number of bytes; give 68-65535 or null")
            })?),
        };
        // A link's `name` is the NIC's name, which v1 (as cloud-init reads it) gives the
        // NIC by MAC; without one the NIC keeps the kernel's name, so no name goes to v1
        // (which then calls the entry `eth<i>`) and the link's id names the interface.
        let name = link.name.clone().unwrap_or_else(|| format!("eth{i}"));
        let mut subnets = Vec::new();
        for (j, net) in doc.networks.iter().enumerate() {
            if net.link != link.id {
                continue;
            }
            let net_at = format!(
                "networks[{j}] ({})",
                quote(net.id.as_deref().unwrap_or(&net.link))
            );
            too_many("routes", net.routes.len())?;
            too_many("services", net.services.len())?;
            names.push((
                format!("config[{i}] ({name}).subnets[{}]", subnets.len()),
                net_at.clone(),
            ));
            let kind = match net.kind.as_str() {
                "ipv4" => "static",
                "ipv6" => "static6",
                "ipv4_dhcp" => "dhcp4",
                "ipv6_dhcp" => "dhcp6",
                "ipv6_slaac" => "ipv6_slaac",
                "ipv6_dhcpv6-stateless" => "ipv6_dhcpv6-stateless",
                "ipv6_dhcpv6-stateful" => "ipv6_dhcpv6-stateful",
                other => {
                    return Err(format!(
                        "{net_at}: network type {} is not supported; use ipv4, ipv6, \
                         ipv4_dhcp, ipv6_dhcp, ipv6_slaac or ipv6_dhcpv6-stateless/stateful",
                        quote(other)
                    ))
                }
            };
            let mut subnet = vec![("type", s(kind))];
            if kind.starts_with("static") {
                let Some(addr) = &net.ip_address else {
                    return Err(format!("{net_at}: a static network without ip_address"));
                };
                subnet.push(("address", s(addr)));
                if let Some(mask) = &net.netmask {
                    subnet.push(("netmask", s(mask)));
                }
            }
            let routes: Vec<Value> = net
                .routes
                .iter()
                .map(|r| {
                    map(vec![
                        ("network", s(&r.network)),
                        ("netmask", s(&r.netmask)),
                        ("gateway", s(&r.gateway)),
                    ])
                })
                .collect();
            if !routes.is_empty() {
                subnet.push(("routes", Value::Sequence(routes)));
            }
            let servers = dns(&net.services, &format!("{net_at}."), &mut warnings);
            if !servers.is_empty() {
                subnet.push(("dns_nameservers", Value::Sequence(servers)));
            }
            subnets.push(map(subnet));
        }
        names.push((format!("config[{i}] ({name})"), at));
        let mut physical = vec![("type", s("physical"))];
        if link.name.is_some() {
            physical.push(("name", s(&name)));
        } else {
            unnamed.push((mac.trim().parse::<MacAddr>().ok(), link.id.clone()));
        }
        physical.extend([
            ("mac_address", s(mac.trim())),
            ("subnets", Value::Sequence(subnets)),
        ]);
        if let Some(mtu) = mtu {
            physical.push(("mtu", Value::Number(mtu.into())));
        }
        config.push(map(physical));
    }
    for (j, net) in doc.networks.iter().enumerate() {
        if !doc.links.iter().any(|l| l.id == net.link) {
            return Err(format!(
                "networks[{j}] ({}): link {} is not among the links",
                quote(net.id.as_deref().unwrap_or("")),
                quote(&net.link)
            ));
        }
    }
    let servers = dns(&doc.services, "", &mut warnings);
    if !servers.is_empty() {
        names.push((format!("config[{}]", config.len()), "services".into()));
        config.push(map(vec![
            ("type", s("nameserver")),
            ("address", Value::Sequence(servers)),
        ]));
    }
    let v1 = map(vec![
        ("version", Value::Number(1.into())),
        ("config", Value::Sequence(config)),
    ]);
    let mut t = netconfig::translate(&v1).map_err(|e| {
        // Longest first, so `config[1]` does not rewrite part of `config[10]`.
        let mut msg = e.0;
        names.sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
        for (from, to) in &names {
            msg = msg.replace(from, to);
        }
        msg
    })?;
    t.warnings.splice(0..0, warnings);
    if let Some(net) = &mut t.network {
        for iface in &mut net.interfaces {
            if let Some((_, id)) = unnamed.iter().find(|(m, _)| *m == Some(iface.mac)) {
                if let Ok(id) = crate::model::InterfaceId::parse(id) {
                    iface.id = id;
                }
            }
        }
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Ipv4Config, Ipv6Config};

    const DOC: &str = r#"{
      "links": [
        {"id": "tap1", "type": "ovs", "ethernet_mac_address": "FA:16:3E:00:00:01", "mtu": 1500},
        {"id": "tap2", "type": "phy", "ethernet_mac_address": "fa:16:3e:00:00:02", "mtu": null}
      ],
      "networks": [
        {"id": "net0", "type": "ipv4", "link": "tap1", "ip_address": "10.0.0.5",
         "netmask": "255.255.255.0",
         "routes": [{"network": "0.0.0.0", "netmask": "0.0.0.0", "gateway": "10.0.0.1"}],
         "services": [{"type": "dns", "address": "10.0.0.53"}]},
        {"id": "net1", "type": "ipv6", "link": "tap1", "ip_address": "2001:db8::5",
         "netmask": "ffff:ffff:ffff:ffff::",
         "routes": [{"network": "::", "netmask": "::", "gateway": "2001:db8::1"}]},
        {"id": "net2", "type": "ipv4_dhcp", "link": "tap2"}
      ],
      "services": [{"type": "dns", "address": "8.8.8.8"}, {"type": "ntp", "address": "x"}]
    }"#;

    #[test]
    fn a_named_link_renames_its_nic_and_an_unnamed_one_keeps_its_id() {
        let doc = DOC.replace(r#""id": "tap2","#, r#""id": "tap2", "name": "eth1","#);
        let net = translate(doc.as_bytes()).unwrap().network.unwrap();
        let (a, b) = (&net.interfaces[0], &net.interfaces[1]);
        assert_eq!((a.id.as_str(), a.set_name.as_ref()), ("tap1", None));
        assert_eq!(b.id, "eth1");
        assert_eq!(b.set_name.as_ref().map(|n| n.as_str()), Some("eth1"));
        // An error in an unnamed link's network still names the link.
        let bad = DOC.replace("10.0.0.5", "10.0.0.500");
        let e = translate(bad.as_bytes()).unwrap_err();
        assert!(e.contains("networks[0] (\"net0\")"), "{e}");
    }

    #[test]
    fn static_and_dhcp_links() {
        let t = translate(DOC.as_bytes()).unwrap();
        let net = t.network.unwrap();
        assert_eq!(net.interfaces.len(), 2);
        let a = &net.interfaces[0];
        assert_eq!(a.mac.to_string(), "fa:16:3e:00:00:01");
        assert_eq!(a.id, "tap1");
        assert_eq!(
            a.ip.ipv4,
            Ipv4Config::Static(vec!["10.0.0.5/24".parse().unwrap()])
        );
        assert_eq!(
            a.ip.ipv6,
            Ipv6Config::Static(vec!["2001:db8::5/64".parse().unwrap()])
        );
        let routes: Vec<String> =
            a.ip.routes
                .iter()
                .map(|r| format!("{} via {}", r.to, r.via))
                .collect();
        assert_eq!(routes, ["0.0.0.0/0 via 10.0.0.1", "::/0 via 2001:db8::1"]);
        assert_eq!(a.ip.dns.servers.len(), 1);
        assert_eq!(net.interfaces[1].ip.ipv4, Ipv4Config::Dhcp);
        assert_eq!(net.dns.servers.len(), 1);
        assert!(
            t.warnings.iter().any(|w| w.contains("ntp")),
            "{:?}",
            t.warnings
        );
    }

    /// Every refusal names the entry of the document.
    #[test]
    fn refusals_name_the_entry() {
        let table: &[(&str, &str)] = &[
            (
                r#"{"links": [{"id": "bond0", "type": "bond", "bond_links": ["a"]}]}"#,
                "links[0] (\"bond0\"): link type \"bond\" is not supported: bonds",
            ),
            (
                r#"{"links": [{"id": "v", "type": "vlan", "vlan_id": 5}]}"#,
                "links[0] (\"v\"): link type \"vlan\" is not supported: VLANs",
            ),
            (
                r#"{"links": [{"id": "l", "type": "phy", "ethernet_mac_address": "zz:00"}]}"#,
                "links[0] (\"l\"): ethernet_mac_address:",
            ),
            (
                r#"{"links": [{"id": "l", "type": "phy"}]}"#,
                "links[0] (\"l\"): no ethernet_mac_address",
            ),
            (
                r#"{"links": [], "networks": [{"id": "n", "type": "ipv4", "link": "x", "ip_address": "1.2.3.4"}]}"#,
                "networks[0] (\"n\"): link \"x\" is not among",
            ),
            (
                r#"{"links": [{"id": "l", "type": "phy", "ethernet_mac_address": "fa:16:3e:00:00:01"}], "networks": [{"id": "n", "type": "ipv9", "link": "l"}]}"#,
                "networks[0] (\"n\"): network type \"ipv9\"",
            ),
            (
                r#"{"links": [{"id": "l", "type": "phy", "ethernet_mac_address": "fa:16:3e:00:00:01"}], "networks": [{"id": "n", "type": "ipv4", "link": "l", "ip_address": "10.0.0.300", "netmask": "255.255.255.0"}]}"#,
                "networks[0] (\"n\").address",
            ),
            (
                r#"{"links": [{"id": "l", "type": "phy", "ethernet_mac_address": "fa:16:3e:00:00:01"}], "networks": [{"id": "n", "type": "ipv4", "link": "l", "ip_address": "10.0.0.3"}]}"#,
                "no prefix length",
            ),
            (r#"{"links": 5}"#, "not the JSON object"),
            ("{\"links\": [", "not the JSON object"),
            ("[]", "not the JSON object"),
        ];
        for (doc, want) in table {
            let e = translate(doc.as_bytes()).unwrap_err();
            assert!(e.contains(want), "{doc}\n  gave: {e}\n  want: {want}");
        }
    }

    #[test]
    fn counts_are_bounded() {
        let links: Vec<String> = (0..300)
            .map(|i| format!(r#"{{"id": "l{i}", "type": "phy", "ethernet_mac_address": "fa:16:3e:00:01:{:02x}"}}"#, i % 256))
            .collect();
        let doc = format!(r#"{{"links": [{}]}}"#, links.join(","));
        assert!(translate(doc.as_bytes())
            .unwrap_err()
            .contains("more than 256 links"));
    }
}
