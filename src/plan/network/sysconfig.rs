//! sysconfig renderer: RHEL-style `/etc/sysconfig/network-scripts/ifcfg-<name>` files,
//! read by the legacy `network` service (initscripts) and by NetworkManager's ifcfg-rh
//! plugin, with `route-<name>` / `route6-<name>` for routes the single gateway keys
//! cannot hold.
//!
//! A VLAN is an `ifcfg-<vlan>` with `VLAN=yes`, `PHYSDEV=` (its link's device) and
//! `VLAN_ID=`.
//!
//! Reference: initscripts' `sysconfig.txt` and nm-settings-ifcfg-rh(5).

use std::fmt::Write as _;

use super::{
    interfaces_then_vlans, merged_dns, split_default, vlan_devices, Device, VlanDevice, HEADER,
};
use crate::model::{Interface, Ipv4Config, Ipv6Config, Network, Route};
use crate::plan::writer::{word, words, ShellWriter, UnsafeValue};
use crate::plan::{Action, Contents};

/// The format name in refusals.
const FORMAT: &str = "ifcfg";

/// Directory of the ifcfg files.
pub(crate) const SCRIPTS_DIR: &str = "/etc/sysconfig/network-scripts";

/// The actions that write the sysconfig configuration.
pub(crate) fn render(net: &Network, devices: &[Device]) -> Result<Vec<Action>, UnsafeValue> {
    let mut actions = Vec::new();
    let vlans = vlan_devices(net, devices);
    for (iface, dev, vlan) in interfaces_then_vlans(net, devices, &vlans) {
        let v4 = |r: &&Route| r.via.addr().is_ipv4();
        let (gw4, rest4) = split_default(iface.ip.routes.iter().filter(v4));
        let (gw6, rest6) = split_default(iface.ip.routes.iter().filter(|r| !v4(r)));
        actions.push(Action::write_file(
            format!("{SCRIPTS_DIR}/ifcfg-{}", dev.name),
            Contents::text(ifcfg(iface, dev, vlan, net, gw4, gw6)?),
            0o644,
            "network (sysconfig ifcfg)",
        ));
        for (prefix, rest) in [("route", rest4), ("route6", rest6)] {
            if !rest.is_empty() {
                actions.push(Action::write_file(
                    format!("{SCRIPTS_DIR}/{prefix}-{}", dev.name),
                    Contents::text(route_file(&rest, dev)?),
                    0o644,
                    "network routes (sysconfig)",
                ));
            }
        }
    }
    Ok(actions)
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// The ifcfg file of one interface; `gw4`/`gw6` are its preferred default routes.
fn ifcfg(
    iface: &Interface,
    dev: &Device,
    vlan: Option<&VlanDevice<'_>>,
    net: &Network,
    gw4: Option<&Route>,
    gw6: Option<&Route>,
) -> Result<String, UnsafeValue> {
    let mut w = ShellWriter::new(FORMAT, HEADER);
    let mut kv = |k: &str, v: &str| w.set(k, v);
    kv("DEVICE", &dev.name)?;
    kv("NAME", &format!("vmcust-{}", dev.name))?;
    match vlan {
        None => {
            kv("HWADDR", &iface.mac.to_string())?;
            kv("TYPE", "Ethernet")?;
        }
        Some(v) => {
            // A VLAN carries its link's MAC: it is found by name, created on PHYSDEV.
            kv("VLAN", "yes")?;
            kv("TYPE", "Vlan")?;
            kv("PHYSDEV", v.parent.name.as_str())?;
            kv("VLAN_ID", &v.vlan.vlan_id.to_string())?;
        }
    }
    kv("ONBOOT", yes(iface.start_on_boot))?;
    let dhcp4 = iface.ip.ipv4 == Ipv4Config::Dhcp;
    // `none` without an address is how ifcfg says "no IPv4" (IPv4_MODE=DISABLED).
    kv("BOOTPROTO", if dhcp4 { "dhcp" } else { "none" })?;
    if let Ipv4Config::Static(nets) = &iface.ip.ipv4 {
        for (i, n) in nets.iter().enumerate() {
            // The first address has no index, the others IPADDR1, IPADDR2…
            let idx = if i == 0 { String::new() } else { i.to_string() };
            kv(&format!("IPADDR{idx}"), &n.addr().to_string())?;
            kv(&format!("PREFIX{idx}"), &n.prefix_len().to_string())?;
        }
    }
    if let Some(gw) = gw4 {
        kv("GATEWAY", &gw.via.to_string())?;
        if let Some(m) = gw.metric {
            // METRIC for initscripts, IPV4_ROUTE_METRIC for NetworkManager.
            kv("METRIC", &m.to_string())?;
            kv("IPV4_ROUTE_METRIC", &m.to_string())?;
        }
    }
    if !dhcp4 {
        kv("DEFROUTE", yes(gw4.is_some()))?;
    }
    if dhcp4 && !iface.ip.dhcp_dns {
        kv("PEERDNS", "no")?;
    }
    match &iface.ip.ipv6 {
        Ipv6Config::Auto => {
            kv("IPV6INIT", "yes")?;
            // Router advertisements are all this method has: accept-ra false leaves
            // the link-local address only.
            kv("IPV6_AUTOCONF", yes(iface.ip.accept_ra != Some(false)))?;
        }
        Ipv6Config::Dhcp => {
            kv("IPV6INIT", "yes")?;
            kv("IPV6_AUTOCONF", "no")?;
            kv("DHCPV6C", "yes")?;
            if !iface.ip.dhcp_dns {
                kv("IPV6_PEERDNS", "no")?;
            }
        }
        Ipv6Config::Static(nets) => {
            kv("IPV6INIT", "yes")?;
            kv("IPV6_AUTOCONF", "no")?;
            let mut addrs = nets.iter().map(|n| n.to_string());
            if let Some(first) = addrs.next() {
                kv("IPV6ADDR", &first)?;
            }
            let rest: Vec<String> = addrs.collect();
            if !rest.is_empty() {
                kv(
                    "IPV6ADDR_SECONDARIES",
                    &words(FORMAT, "IPV6ADDR_SECONDARIES", &rest)?,
                )?;
            }
        }
        Ipv6Config::Disabled => {
            kv("IPV6INIT", "no")?;
            kv("IPV6_DISABLED", "yes")?;
        }
    }
    // With IPV6_AUTOCONF=no, initscripts accept router advertisements (for routes)
    // only when told to; cloud-init writes the same key.
    if let (Ipv6Config::Dhcp | Ipv6Config::Static(_), Some(ra)) =
        (&iface.ip.ipv6, iface.ip.accept_ra)
    {
        kv("IPV6_FORCE_ACCEPT_RA", yes(ra))?;
    }
    if let Some(gw) = gw6 {
        kv("IPV6_DEFAULTGW", &gw.via.to_string())?;
        if let Some(m) = gw.metric {
            kv("IPV6_ROUTE_METRIC", &m.to_string())?;
        }
    }
    let dns = merged_dns(&iface.ip.dns, &net.dns);
    for (i, s) in dns.servers.iter().enumerate() {
        kv(&format!("DNS{}", i + 1), &s.to_string())?;
    }
    if !dns.search.is_empty() {
        kv("DOMAIN", &words(FORMAT, "DOMAIN", &dns.search)?)?;
    }
    if iface.wake_on_lan {
        // ethtool's arguments, run by ifup-eth and read by NetworkManager's ifcfg-rh.
        kv("ETHTOOL_OPTS", "wol g")?;
    }
    if let Some(mtu) = iface.ip.mtu {
        kv("MTU", &mtu.to_string())?;
    }
    Ok(w.finish())
}

/// A `route-<name>`/`route6-<name>` file: one `ip route` argument list per line.
fn route_file(routes: &[&Route], dev: &Device) -> Result<String, UnsafeValue> {
    let mut out = HEADER.to_string();
    let dev_name = word("sysconfig route", "dev", &dev.name)?;
    for r in routes {
        let to = if r.is_default() {
            "default".to_string()
        } else {
            r.to.to_string()
        };
        write!(out, "{to} via {} dev {dev_name}", r.via).unwrap();
        if let Some(m) = r.metric {
            write!(out, " metric {m}").unwrap();
        }
        out.push('\n');
    }
    Ok(out)
}
