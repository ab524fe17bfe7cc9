//! SUSE sysconfig renderer: `/etc/sysconfig/network/ifcfg-<dev>` and `ifroute-<dev>`,
//! read by wicked (SLES 12/15, openSUSE Leap), and the DNS keys of netconfig's
//! `/etc/sysconfig/network/config`, from which netconfig writes `/etc/resolv.conf`.
//!
//! The format differs from RHEL's (`sysconfig`): addresses carry their prefix
//! (`IPADDR='10.0.0.5/24'`, more as `IPADDR_1`…, IPv6 ones included), routes live only
//! in `ifroute-<dev>`, and DNS is machine-wide. Files are matched by device name only
//! (SUSE pins names to MACs with udev rules, not in ifcfg), so the name comes from the
//! MAC via the root's `/sys/class/net`.
//!
//! A VLAN is an `ifcfg-<vlan>` with `ETHERDEVICE=` (its link's device) and `VLAN_ID=`
//! (ifcfg-vlan(5)), and its own `ifroute-<vlan>`.
//!
//! `accept-ra` has no ifcfg key: it goes to `/etc/sysctl.d/70-vmcust-net.conf`, whose
//! per-interface settings wicked takes into the interface's configuration.
//!
//! Reference: SUSE's ifcfg(5), ifcfg-vlan(5), ifsysctl(5), ifroute(5), netconfig(8).

use std::fmt::Write as _;

use super::{interfaces_then_vlans, vlan_devices, written_by_vmcust, Device, VlanDevice, HEADER};
use crate::model::{Interface, InterfaceId, Ipv4Config, Ipv6Config, Network};
use crate::plan::writer::{shell_double_quoted, word, words, ShellWriter, UnsafeValue};
use crate::plan::{Action, Contents};

/// The format name in refusals.
const FORMAT: &str = "SUSE sysconfig";

/// Directory of SUSE's network configuration.
pub(crate) const NETWORK_DIR: &str = "/etc/sysconfig/network";

/// netconfig's settings, a large commented file of shell variables.
pub(crate) const CONFIG_FILE: &str = "/etc/sysconfig/network/config";

/// Where the original `config` goes before vmcust first rewrites it.
pub(crate) const CONFIG_BACKUP: &str = "/etc/sysconfig/network/config.vmcust-backup";

/// The actions that write the SUSE configuration; `config` is the current text of
/// [`CONFIG_FILE`], if there is one.
pub(crate) fn render(
    net: &Network,
    devices: &[Device],
    config: Option<&str>,
) -> Result<Vec<Action>, UnsafeValue> {
    let mut actions = Vec::new();
    let vlans = vlan_devices(net, devices);
    for (iface, dev, vlan) in interfaces_then_vlans(net, devices, &vlans) {
        actions.push(Action::write_file(
            format!("{NETWORK_DIR}/ifcfg-{}", dev.name),
            Contents::text(ifcfg(iface, vlan)?),
            0o644,
            "network (SUSE ifcfg)",
        ));
        // Written even without routes, so that routes an earlier customization gave
        // this device do not survive in a file of ours (which is never moved aside).
        actions.push(Action::write_file(
            format!("{NETWORK_DIR}/ifroute-{}", dev.name),
            Contents::text(ifroute(iface, dev)?),
            0o644,
            "network routes (SUSE ifroute)",
        ));
    }
    if let Some(text) = sysctl_file(net, devices, &vlans)? {
        actions.push(Action::write_file(
            SYSCTL_FILE,
            Contents::text(text),
            0o644,
            "IPv6 router advertisements per interface (sysctl, read by wicked)",
        ));
    }
    actions.extend(config_file(net, devices, config)?);
    Ok(actions)
}

/// Where `accept-ra` goes: ifcfg has no key for it, and wicked takes per-interface
/// IPv6 settings from the system's sysctl files (`/etc/sysctl.d/*.conf`, since SLES 12
/// SP1) into each interface's configuration, as systemd-sysctl applies them when the
/// interface appears (ifsysctl(5)).
pub(crate) const SYSCTL_FILE: &str = "/etc/sysctl.d/70-vmcust-net.conf";

/// The sysctl file with `net/ipv6/conf/<dev>/accept_ra` for every interface and VLAN
/// whose `accept-ra` is set (0 whenever its IPv6 is disabled); `None` when none is.
/// The slash form keeps a VLAN's dotted name (`eth0.100`) one key component.
fn sysctl_file(
    net: &Network,
    devices: &[Device],
    vlans: &[VlanDevice<'_>],
) -> Result<Option<String>, UnsafeValue> {
    let all = net
        .interfaces
        .iter()
        .zip(devices.iter().map(|d| &d.name))
        .chain(vlans.iter().map(|v| (&v.iface, &v.vlan.name)));
    let mut out = HEADER.to_string();
    let mut any = false;
    for (iface, name) in all {
        let Some(ra) = iface.ip.accept_ra else {
            continue;
        };
        let on = ra && iface.ip.ipv6 != Ipv6Config::Disabled;
        let name = word("sysctl", "interface", name)?;
        writeln!(out, "net/ipv6/conf/{name}/accept_ra = {}", u8::from(on)).unwrap();
        any = true;
    }
    Ok(any.then_some(out))
}

/// wicked's BOOTPROTO for the two families. `+` variants (`dhcp4`, `dhcp6`, `dhcp`)
/// also apply every static `IPADDR*`, so a static family beside a DHCP one needs no
/// separate setting; IPv6 autoconfiguration is the kernel's and needs none either.
fn bootproto(iface: &Interface) -> &'static str {
    match (&iface.ip.ipv4, &iface.ip.ipv6) {
        (Ipv4Config::Dhcp, Ipv6Config::Dhcp) => "dhcp",
        (Ipv4Config::Dhcp, _) => "dhcp4",
        (_, Ipv6Config::Dhcp) => "dhcp6",
        // `none` turns both families off (as for a bond's port).
        (Ipv4Config::Disabled, Ipv6Config::Disabled) => "none",
        _ => "static",
    }
}

/// The ifcfg file of one interface.
fn ifcfg(iface: &Interface, vlan: Option<&VlanDevice<'_>>) -> Result<String, UnsafeValue> {
    let mut w = ShellWriter::always_quoted(FORMAT, HEADER);
    match vlan {
        // ifcfg has no MAC match key (LLADDR would *set* the MAC): say whose file it is.
        None => w.comment(&format!("{} (MAC {})", iface.id, iface.mac))?,
        Some(v) => {
            w.comment(&format!(
                "{}: VLAN {} on {}",
                iface.id, v.vlan.vlan_id, v.parent.name
            ))?;
            // wicked creates the VLAN on ETHERDEVICE (ifcfg-vlan(5)).
            w.set("ETHERDEVICE", v.parent.name.as_str())?;
            w.set("VLAN_ID", v.vlan.vlan_id.to_string())?;
        }
    }
    w.set(
        "STARTMODE",
        if iface.start_on_boot {
            "auto"
        } else {
            "manual"
        },
    )?;
    w.set("BOOTPROTO", bootproto(iface))?;
    let v4 = match &iface.ip.ipv4 {
        Ipv4Config::Static(nets) => nets.iter().map(|n| n.to_string()).collect(),
        _ => Vec::new(),
    };
    let v6 = match &iface.ip.ipv6 {
        Ipv6Config::Static(nets) => nets.iter().map(|n| n.to_string()).collect(),
        _ => Vec::new(),
    };
    for (i, addr) in v4.iter().chain(&v6).enumerate() {
        // The first address has no suffix, the others IPADDR_1, IPADDR_2…
        let key = if i == 0 {
            "IPADDR".to_string()
        } else {
            format!("IPADDR_{i}")
        };
        w.set(&key, addr)?;
    }
    if iface.wake_on_lan {
        // wicked runs ethtool with these arguments (ifcfg(5)).
        w.set("ETHTOOL_OPTIONS", "wol g")?;
    }
    if let Some(mtu) = iface.ip.mtu {
        w.set("MTU", mtu.to_string())?;
    }
    Ok(w.finish())
}

/// The `ifroute-<dev>` file: `DESTINATION GATEWAY NETMASK INTERFACE [OPTIONS]`, the
/// netmask `-` because the destination carries its prefix.
fn ifroute(iface: &Interface, dev: &Device) -> Result<String, UnsafeValue> {
    let mut out = HEADER.to_string();
    for r in &iface.ip.routes {
        let to = if r.is_default() {
            "default".to_string()
        } else {
            r.to.to_string()
        };
        let dev = word("SUSE ifroute", "interface", &dev.name)?;
        write!(out, "{to} {} - {dev}", r.via).unwrap();
        if let Some(m) = r.metric {
            write!(out, " metric {m}").unwrap();
        }
        out.push('\n');
    }
    Ok(out)
}

/// The actions that put our DNS into netconfig's `config`: only its DNS keys change,
/// every other line stays byte for byte. The original is kept once as
/// [`CONFIG_BACKUP`]; a file vmcust already rewrote is not backed up again.
fn config_file(
    net: &Network,
    devices: &[Device],
    existing: Option<&str>,
) -> Result<Vec<Action>, UnsafeValue> {
    let base = match existing {
        Some(text) if written_by_vmcust(text) => text.to_string(),
        Some(text) => format!("{HEADER}{text}"),
        // Without the file netconfig would use its built-in defaults; these two make
        // sure it manages resolv.conf and merges our static servers.
        None => {
            format!("{HEADER}NETCONFIG_MODIFY_RESOLV_CONF=\"yes\"\nNETCONFIG_DNS_POLICY=\"auto\"\n")
        }
    };
    let dns = super::machine_dns(net);
    let servers = words(FORMAT, "NETCONFIG_DNS_STATIC_SERVERS", &dns.servers)?;
    let mut new = set_key(&base, "NETCONFIG_DNS_STATIC_SERVERS", &servers)?;
    let search = words(FORMAT, "NETCONFIG_DNS_STATIC_SEARCHLIST", &dns.search)?;
    new = set_key(&new, "NETCONFIG_DNS_STATIC_SEARCHLIST", &search)?;
    if let Some(policy) = dns_policy(net, devices) {
        new = set_key(&new, "NETCONFIG_DNS_POLICY", &policy)?;
    }
    if existing == Some(new.as_str()) {
        return Ok(Vec::new());
    }
    let mut actions = Vec::new();
    if existing.is_some_and(|t| !written_by_vmcust(t)) {
        actions.push(Action::Rename {
            from: CONFIG_FILE.into(),
            to: CONFIG_BACKUP.into(),
            purpose: "original netconfig settings, kept as backup",
        });
    }
    actions.push(Action::write_file(
        CONFIG_FILE,
        Contents::text(new),
        0o644,
        "DNS servers and search list for netconfig (SUSE)",
    ));
    Ok(actions)
}

/// wicked keeps no DNS per interface: netconfig merges the static servers with those
/// learned per interface as `NETCONFIG_DNS_POLICY` says. When a DHCP interface must not
/// bring its DNS, the policy becomes `STATIC` followed by the DHCP interfaces that may;
/// otherwise the template's policy is kept (`None`).
fn dns_policy(net: &Network, devices: &[Device]) -> Option<String> {
    let vlans = vlan_devices(net, devices);
    let dhcp: Vec<(&Interface, &InterfaceId)> = net
        .interfaces
        .iter()
        .zip(devices.iter().map(|d| &d.name))
        .chain(vlans.iter().map(|v| (&v.iface, &v.vlan.name)))
        .filter(|(i, _)| i.ip.ipv4 == Ipv4Config::Dhcp || i.ip.ipv6 == Ipv6Config::Dhcp)
        .collect();
    if dhcp.iter().all(|(i, _)| i.ip.dhcp_dns) {
        return None;
    }
    let mut policy = "STATIC".to_string();
    for (_, name) in dhcp.iter().filter(|(i, _)| i.ip.dhcp_dns) {
        write!(policy, " {name}").unwrap();
    }
    Some(policy)
}

/// `text` with every assignment of `key` replaced by `key="value"`, or the assignment
/// appended when there is none. Other lines, their line ends included, are kept.
fn set_key(text: &str, key: &str, value: &str) -> Result<String, UnsafeValue> {
    let assignment = shell_double_quoted(FORMAT, key, value)?;
    let mut out = String::new();
    let mut found = false;
    for line in text.split_inclusive('\n') {
        let body = line.trim_start();
        if body
            .strip_prefix(key)
            .is_some_and(|rest| rest.starts_with('='))
        {
            found = true;
            let end = if line.ends_with("\r\n") {
                "\r\n"
            } else if line.ends_with('\n') {
                "\n"
            } else {
                ""
            };
            write!(out, "{assignment}{end}").unwrap();
        } else {
            out.push_str(line);
        }
    }
    if !found {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        writeln!(out, "{assignment}").unwrap();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_replaced_in_place_and_other_lines_kept() {
        let text = "## Type: string\n#NETCONFIG_DNS_STATIC_SERVERS=\"x\"\n\
                    NETCONFIG_DNS_STATIC_SERVERS=\"192.0.2.1\"\r\nOTHER='a'";
        assert_eq!(
            set_key(text, "NETCONFIG_DNS_STATIC_SERVERS", "10.0.0.1 10.0.0.2").unwrap(),
            "## Type: string\n#NETCONFIG_DNS_STATIC_SERVERS=\"x\"\n\
             NETCONFIG_DNS_STATIC_SERVERS=\"10.0.0.1 10.0.0.2\"\r\nOTHER='a'"
        );
        assert_eq!(
            set_key(text, "NETCONFIG_DNS_STATIC_SEARCHLIST", "example.com").unwrap(),
            format!("{text}\nNETCONFIG_DNS_STATIC_SEARCHLIST=\"example.com\"\n")
        );
        // A key that only starts like ours is another key.
        assert_eq!(
            set_key("NETCONFIG_DNS_POLICY_X=1\n", "NETCONFIG_DNS_POLICY", "auto").unwrap(),
            "NETCONFIG_DNS_POLICY_X=1\nNETCONFIG_DNS_POLICY=\"auto\"\n"
        );
        assert!(set_key("", "NETCONFIG_DNS_STATIC_SEARCHLIST", "a\"; reboot; \"").is_err());
    }
}
