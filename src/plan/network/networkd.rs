//! systemd-networkd renderer: one `/etc/systemd/network/10-vmcust-<name>.network` per
//! interface, matched by MAC, and a `.link` file pinning the device name where it is
//! known. `10-` sorts before the `20-`…`99-` names distributions ship, and networkd uses
//! the first `.network` file that matches a device.
//!
//! Reference: systemd.network(5) and systemd.link(5) for the keys written here.

use std::fmt::Write as _;

use super::{merged_dns, Device, HEADER};
use crate::model::{Interface, Ipv4Config, Ipv6Config, Network};
use crate::plan::{Action, Contents};

/// Directory networkd reads administrator configuration from.
pub const NETWORKD_DIR: &str = "/etc/systemd/network";

/// The actions that write the networkd configuration.
pub fn render(net: &Network, devices: &[Device]) -> Vec<Action> {
    let mut actions = Vec::new();
    for (iface, dev) in net.interfaces.iter().zip(devices) {
        if dev.from_system {
            actions.push(Action::WriteFile {
                path: format!("{NETWORKD_DIR}/10-vmcust-{}.link", dev.name).into(),
                mode: 0o644,
                contents: Contents::text(link_file(iface, dev)),
                purpose: "network device name (systemd .link)",
            });
        }
        actions.push(Action::WriteFile {
            path: format!("{NETWORKD_DIR}/10-vmcust-{}.network", dev.name).into(),
            mode: 0o644,
            contents: Contents::text(network_file(iface, net)),
            purpose: "network (systemd-networkd)",
        });
    }
    actions
}

/// The `.link` file keeping the kernel name the MAC has now.
fn link_file(iface: &Interface, dev: &Device) -> String {
    format!(
        "{HEADER}[Match]\nMACAddress={}\n\n[Link]\nName={}\n",
        iface.mac, dev.name
    )
}

/// The `.network` file for one interface.
fn network_file(iface: &Interface, net: &Network) -> String {
    let dhcp4 = iface.ipv4 == Ipv4Config::Dhcp;
    let dhcp6 = iface.ipv6 == Ipv6Config::Dhcp;
    let mut out = format!("{HEADER}[Match]\nMACAddress={}\n", iface.mac);
    if !iface.start_on_boot {
        // ONBOOT=no: keep it down until someone runs `networkctl up`, and do not let
        // network-online.target wait for it.
        out.push_str("\n[Link]\nActivationPolicy=manual\nRequiredForOnline=no\n");
    }
    out.push_str("\n[Network]\n");
    let dhcp = match (dhcp4, dhcp6) {
        (true, true) => "yes",
        (true, false) => "ipv4",
        (false, true) => "ipv6",
        (false, false) => "no",
    };
    writeln!(out, "DHCP={dhcp}").unwrap();
    if iface.ipv6 == Ipv6Config::Disabled {
        out.push_str("LinkLocalAddressing=no\nIPv6AcceptRA=no\n");
    }
    if let Ipv4Config::Static(nets) = &iface.ipv4 {
        for n in nets {
            writeln!(out, "Address={n}").unwrap();
        }
    }
    if let Ipv6Config::Static(nets) = &iface.ipv6 {
        for n in nets {
            writeln!(out, "Address={n}").unwrap();
        }
    }
    let dns = merged_dns(&iface.dns, &net.dns);
    for s in &dns.servers {
        writeln!(out, "DNS={s}").unwrap();
    }
    if !dns.search.is_empty() {
        writeln!(out, "Domains={}", dns.search.join(" ")).unwrap();
    }
    if !iface.dhcp_dns {
        if dhcp4 {
            out.push_str("\n[DHCPv4]\nUseDNS=no\nUseDomains=no\n");
        }
        if dhcp6 {
            out.push_str("\n[DHCPv6]\nUseDNS=no\nUseDomains=no\n");
        }
    }
    for r in &iface.routes {
        write!(out, "\n[Route]\nDestination={}\nGateway={}\n", r.to, r.via).unwrap();
        if let Some(m) = r.metric {
            writeln!(out, "Metric={m}").unwrap();
        }
    }
    out
}
