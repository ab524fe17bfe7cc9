//! systemd-networkd renderer: one `/etc/systemd/network/10-vmcust-<name>.network` per
//! interface, matched by MAC, and a `.link` file pinning the device name where it is
//! known, giving it the name a `set-name` asks for, and turning on wake-on-LAN. `10-` sorts before the `20-`…`99-` names distributions ship, and networkd uses
//! the first `.network` file that matches a device.
//!
//! A VLAN is a `10-vmcust-<vlan>.netdev` (`Kind=vlan`, `[VLAN] Id=`) with its own
//! `.network` file matched by name; its link's `.network` file lists it with `VLAN=`.
//!
//! Reference: systemd.network(5), systemd.netdev(5) and systemd.link(5) for the keys written here.

use super::{merged_dns, vlan_devices, vlans_on, Device, VlanDevice, HEADER};
use crate::model::{Interface, InterfaceId, Ipv4Config, Ipv6Config, Network};
use crate::plan::writer::{words, IniWriter, UnsafeValue};
use crate::plan::{Action, Contents};

/// Directory networkd reads administrator configuration from.
pub(crate) const NETWORKD_DIR: &str = "/etc/systemd/network";

/// The actions that write the networkd configuration.
pub(crate) fn render(net: &Network, devices: &[Device]) -> Result<Vec<Action>, UnsafeValue> {
    let mut actions = Vec::new();
    let vlans = vlan_devices(net, devices);
    for (iface, dev) in net.interfaces.iter().zip(devices) {
        if dev.pinned() || iface.wake_on_lan {
            actions.push(Action::write_file(
                format!("{NETWORKD_DIR}/10-vmcust-{}.link", dev.name),
                Contents::text(link_file(iface, dev)?),
                0o644,
                "network device name (systemd .link)",
            ));
        }
        let on = vlans_on(&vlans, dev);
        actions.push(Action::write_file(
            format!("{NETWORKD_DIR}/10-vmcust-{}.network", dev.name),
            Contents::text(network_file(iface, &Matched::Mac(&on), net)?),
            0o644,
            "network (systemd-networkd)",
        ));
    }
    for v in &vlans {
        actions.push(Action::write_file(
            format!("{NETWORKD_DIR}/10-vmcust-{}.netdev", v.vlan.name),
            Contents::text(netdev_file(v)?),
            0o644,
            "VLAN device (systemd .netdev)",
        ));
        actions.push(Action::write_file(
            format!("{NETWORKD_DIR}/10-vmcust-{}.network", v.vlan.name),
            Contents::text(network_file(&v.iface, &Matched::Name(&v.vlan.name), net)?),
            0o644,
            "network (systemd-networkd)",
        ));
    }
    Ok(actions)
}

/// How a `.network` file finds its device.
enum Matched<'a> {
    /// A NIC, by MAC, with the VLANs stacked on it.
    Mac(&'a [&'a InterfaceId]),
    /// A VLAN, by name (it has its link's MAC, so the MAC would find the link too).
    Name(&'a InterfaceId),
}

/// The `.netdev` file that creates a VLAN device; the link's `.network` file names it
/// with `VLAN=`, which is what makes networkd create it on that link.
fn netdev_file(v: &VlanDevice<'_>) -> Result<String, UnsafeValue> {
    let mut w = IniWriter::new(FORMAT, HEADER);
    w.section("NetDev")?;
    w.set("Name", &v.vlan.name)?;
    w.set("Kind", "vlan")?;
    if let Some(mtu) = v.vlan.ip.mtu {
        w.set("MTUBytes", mtu)?;
    }
    w.section("VLAN")?;
    w.set("Id", v.vlan.vlan_id)?;
    Ok(w.finish())
}

/// The format name in refusals.
const FORMAT: &str = "systemd-networkd";

/// The `.link` file of the MAC: the kernel name it has now or its `set-name`, and
/// wake-on-LAN. udev applies the first `.link` file that matches, so one whose name is
/// not known (wake-on-LAN on an offline root) names the NIC as `99-default.link` would.
fn link_file(iface: &Interface, dev: &Device) -> Result<String, UnsafeValue> {
    let mut w = IniWriter::new(FORMAT, HEADER);
    w.section("Match")?;
    w.set("MACAddress", iface.mac)?;
    w.section("Link")?;
    if dev.pinned() {
        w.set("Name", &dev.name)?;
    } else {
        w.set("NamePolicy", "keep kernel database onboard slot path")?;
        w.set("AlternativeNamesPolicy", "database onboard slot path")?;
        w.set("MACAddressPolicy", "persistent")?;
    }
    if iface.wake_on_lan {
        w.set("WakeOnLan", "magic")?;
    }
    Ok(w.finish())
}

/// The `.network` file for one interface.
fn network_file(
    iface: &Interface,
    matched: &Matched<'_>,
    net: &Network,
) -> Result<String, UnsafeValue> {
    let dhcp4 = iface.ip.ipv4 == Ipv4Config::Dhcp;
    let dhcp6 = iface.ip.ipv6 == Ipv6Config::Dhcp;
    let mut w = IniWriter::new(FORMAT, HEADER);
    w.section("Match")?;
    let vlans: &[&InterfaceId] = match matched {
        Matched::Mac(vlans) => {
            w.set("MACAddress", iface.mac)?;
            if !vlans.is_empty() {
                // Its VLANs carry its MAC: keep this file to the NIC itself.
                w.set("Type", "!vlan")?;
            }
            vlans
        }
        Matched::Name(name) => {
            w.set("Name", name)?;
            &[]
        }
    };
    if !iface.start_on_boot || iface.ip.mtu.is_some() {
        w.section("Link")?;
    }
    if let Some(mtu) = iface.ip.mtu {
        w.set("MTUBytes", mtu)?;
    }
    if !iface.start_on_boot {
        // ONBOOT=no: keep it down until someone runs `networkctl up`, and do not let
        // network-online.target wait for it.
        w.set("ActivationPolicy", "manual")?;
        w.set("RequiredForOnline", "no")?;
    }
    w.section("Network")?;
    let dhcp = match (dhcp4, dhcp6) {
        (true, true) => "yes",
        (true, false) => "ipv4",
        (false, true) => "ipv6",
        (false, false) => "no",
    };
    w.set("DHCP", dhcp)?;
    for v in vlans {
        w.set("VLAN", v)?;
    }
    if iface.ip.ipv6 == Ipv6Config::Disabled {
        w.set("LinkLocalAddressing", "no")?;
        w.set("IPv6AcceptRA", "no")?;
    } else if let Some(ra) = iface.ip.accept_ra {
        w.set("IPv6AcceptRA", if ra { "yes" } else { "no" })?;
    }
    if let Ipv4Config::Static(nets) = &iface.ip.ipv4 {
        for n in nets {
            w.set("Address", n)?;
        }
    }
    if let Ipv6Config::Static(nets) = &iface.ip.ipv6 {
        for n in nets {
            w.set("Address", n)?;
        }
    }
    let dns = merged_dns(&iface.ip.dns, &net.dns);
    for s in &dns.servers {
        w.set("DNS", s)?;
    }
    if !dns.search.is_empty() {
        w.set("Domains", words(FORMAT, "Domains", &dns.search)?)?;
    }
    for (on, section, o) in [
        (dhcp4, "DHCPv4", &iface.ip.dhcp4_overrides),
        (dhcp6, "DHCPv6", &iface.ip.dhcp6_overrides),
    ] {
        if !on || (iface.ip.dhcp_dns && o.is_empty()) {
            continue;
        }
        w.section(section)?;
        let yes_no = |b: bool| if b { "yes" } else { "no" };
        if !iface.ip.dhcp_dns {
            w.set("UseDNS", "no")?;
        }
        let use_domains = o.use_domains.or((!iface.ip.dhcp_dns).then_some(false));
        let mut flags = vec![
            ("UseDomains", use_domains),
            ("UseHostname", o.use_hostname),
            ("UseNTP", o.use_ntp),
        ];
        // [DHCPv6] has no such keys (systemd.network(5)); the reader's warning says so.
        if section == "DHCPv4" {
            // A fixed MTU wins: networkd drops UseMTU= beside MTUBytes= with a complaint.
            let use_mtu = o.use_mtu.filter(|_| iface.ip.mtu.is_none());
            flags.extend([
                ("UseMTU", use_mtu),
                ("UseRoutes", o.use_routes),
                ("SendHostname", o.send_hostname),
            ]);
        }
        for (key, v) in flags {
            if let Some(v) = v {
                w.set(key, yes_no(v))?;
            }
        }
        if section == "DHCPv4" {
            if let Some(h) = &o.hostname {
                w.set("Hostname", h)?;
            }
            if let Some(m) = o.route_metric {
                w.set("RouteMetric", m)?;
            }
        }
    }
    for r in &iface.ip.routes {
        w.section("Route")?;
        w.set("Destination", r.to)?;
        w.set("Gateway", r.via)?;
        if let Some(m) = r.metric {
            w.set("Metric", m)?;
        }
    }
    Ok(w.finish())
}
