//! ENI renderer: ifupdown's `/etc/network/interfaces.d/50-vmcust`, and the main
//! `/etc/network/interfaces` made to source that directory and rid of its own stanzas
//! for our interfaces (it is backed up first). `dns-*` options are written for
//! `resolvconf`; without it `/etc/resolv.conf` is written instead (see `resolv`).
//!
//! ifupdown matches interfaces by name only, so the name comes from the MAC via the
//! root's `/sys/class/net`. A VLAN is its own stanzas after the NICs': ifupdown creates
//! one named `<link>.<id>` by itself; one with another name gets the `ip link add` that
//! creates it as a `pre-up`. Reference: interfaces(5).

use std::fmt::Write as _;

use super::{
    merged_dns, split_default, vlan_devices, written_by_vmcust, Device, VlanDevice, HEADER,
};
use crate::model::{Interface, Ipv4Config, Ipv6Config, Network, Route};
use crate::plan::writer::{word, words, UnsafeValue};
use crate::plan::{Action, Contents};

/// The format name in refusals.
const FORMAT: &str = "ifupdown";

/// The main ifupdown file.
pub(crate) const MAIN_FILE: &str = "/etc/network/interfaces";

/// Where the main file goes before vmcust rewrites it.
pub(crate) const MAIN_BACKUP: &str = "/etc/network/interfaces.vmcust-backup";

/// Our file; its name suits both `source interfaces.d/*` and `source-directory`.
pub(crate) const ENI_FILE: &str = "/etc/network/interfaces.d/50-vmcust";

/// The line that makes the main file read ours.
const SOURCE_LINE: &str = "source /etc/network/interfaces.d/*";

/// The actions that write the ENI configuration.
pub(crate) fn render(net: &Network, devices: &[Device]) -> Result<Vec<Action>, UnsafeValue> {
    let mut out = HEADER.to_string();
    for (iface, dev) in net.interfaces.iter().zip(devices) {
        out.push('\n');
        stanzas(
            &mut out,
            iface,
            &word(FORMAT, "iface", &dev.name)?,
            None,
            net,
        )?;
    }
    // After the NICs: `ifup -a` brings a VLAN's link up first.
    for v in vlan_devices(net, devices) {
        out.push('\n');
        let name = word(FORMAT, "iface", &v.vlan.name)?;
        stanzas(&mut out, &v.iface, &name, Some(&v), net)?;
    }
    Ok(vec![Action::write_file(
        ENI_FILE,
        Contents::text(out),
        0o644,
        "network (ifupdown)",
    )])
}

/// The stanzas of one interface. Several `iface` stanzas for one name are allowed and
/// all applied (interfaces(5)); extra addresses use that rather than `up ip addr`.
fn stanzas(
    out: &mut String,
    iface: &Interface,
    name: &str,
    vlan: Option<&VlanDevice<'_>>,
    net: &Network,
) -> Result<(), UnsafeValue> {
    if iface.start_on_boot {
        writeln!(out, "auto {name}").unwrap();
    }
    // Options that belong to the interface, not to one family: they go on its first
    // stanza.
    let dns = merged_dns(&iface.ip.dns, &net.dns);
    let mut shared = Vec::new();
    if let Some(v) = vlan {
        let link = word(FORMAT, "vlan-raw-device", &v.parent.name)?;
        let id = v.vlan.vlan_id;
        // ifupdown creates a VLAN named <link>.<id> itself (interfaces(5), "VLAN
        // INTERFACES"); any other name is created here, the link brought up first.
        if name != format!("{link}.{id}") {
            shared.push(format!(
                "pre-up ip link show dev {name} >/dev/null 2>&1 || {{ ip link set dev {link} up && ip link add link {link} name {name} type vlan id {id}; }}"
            ));
            shared.push(format!("post-down ip link del dev {name}"));
        }
    }
    if iface.ip.ipv6 == Ipv6Config::Disabled {
        shared.push(format!(
            "pre-up sysctl -q -w net.ipv6.conf.{name}.disable_ipv6=1"
        ));
    }
    if iface.wake_on_lan {
        // Read by the ethtool package's if-up.d hook.
        shared.push("ethernet-wol g".to_string());
    }
    if !dns.servers.is_empty() {
        let servers = words(FORMAT, "dns-nameservers", &dns.servers)?;
        shared.push(format!("dns-nameservers {servers}"));
    }
    if !dns.search.is_empty() {
        let search = words(FORMAT, "dns-search", &dns.search)?;
        shared.push(format!("dns-search {search}"));
    }
    let mut stanzas: Vec<(String, Vec<String>)> = Vec::new();
    let v4 = iface.ip.routes.iter().filter(|r| r.via.addr().is_ipv4());
    let v6 = iface.ip.routes.iter().filter(|r| r.via.addr().is_ipv6());
    match &iface.ip.ipv4 {
        Ipv4Config::Dhcp => stanzas.push(("inet dhcp".into(), routes_only(v4, name))),
        Ipv4Config::Static(nets) => {
            let addrs: Vec<String> = nets.iter().map(|n| n.to_string()).collect();
            stanzas.extend(static_stanzas("inet", &addrs, v4, name));
        }
        Ipv4Config::Disabled => {}
    }
    match &iface.ip.ipv6 {
        Ipv6Config::Auto if iface.ip.ipv4 == Ipv4Config::Disabled => {
            stanzas.push(("inet6 auto".into(), routes_only(v6, name)));
        }
        // The kernel does SLAAC by itself when there is no inet6 stanza.
        Ipv6Config::Auto => {}
        Ipv6Config::Dhcp => stanzas.push(("inet6 dhcp".into(), routes_only(v6, name))),
        Ipv6Config::Static(nets) => {
            let addrs: Vec<String> = nets.iter().map(|n| n.to_string()).collect();
            stanzas.extend(static_stanzas("inet6", &addrs, v6, name));
        }
        Ipv6Config::Disabled => {}
    }
    if stanzas.is_empty() {
        // Neither family configured: the device still comes up, with no address.
        stanzas.push(("inet manual".into(), Vec::new()));
    }
    if let Some(mtu) = iface.ip.mtu {
        // ifupdown sets the MTU itself for static and manual stanzas only
        // (interfaces(5)); for dhcp and auto the link is set before it comes up.
        if stanzas[0].0.ends_with(" static") || stanzas[0].0.ends_with(" manual") {
            shared.insert(0, format!("mtu {mtu}"));
        } else {
            shared.insert(0, format!("pre-up ip link set dev {name} mtu {mtu}"));
        }
    }
    if let (Some(ra), false) = (iface.ip.accept_ra, iface.ip.ipv6 == Ipv6Config::Disabled) {
        let value = u8::from(ra);
        let mut inet6 = stanzas
            .iter_mut()
            .filter(|(head, _)| head.starts_with("inet6 "))
            .peekable();
        if inet6.peek().is_none() {
            // No inet6 stanza (the kernel's SLAAC): set the sysctl ifupdown would.
            shared.push(format!(
                "pre-up sysctl -q -w net.ipv6.conf.{name}.accept_ra={value}"
            ));
        }
        for (_, options) in inet6 {
            options.push(format!("accept_ra {value}"));
        }
    }
    stanzas[0].1.append(&mut shared);
    for (head, options) in stanzas {
        writeln!(out, "iface {name} {head}").unwrap();
        for o in options {
            writeln!(out, "    {o}").unwrap();
        }
    }
    Ok(())
}

/// A `static` stanza with the first address, the preferred default route as `gateway`
/// and `metric`, the other routes as `up ip route add`; one more stanza per further
/// address.
fn static_stanzas<'a>(
    family: &str,
    addrs: &[String],
    routes: impl Iterator<Item = &'a Route>,
    name: &str,
) -> Vec<(String, Vec<String>)> {
    let Some((first, more)) = addrs.split_first() else {
        return vec![(format!("{family} manual"), routes_only(routes, name))];
    };
    let (gw, rest) = split_default(routes);
    let mut options = vec![format!("address {first}")];
    if let Some(gw) = gw {
        options.push(format!("gateway {}", gw.via));
        if let Some(m) = gw.metric {
            options.push(format!("metric {m}"));
        }
    }
    options.extend(rest.into_iter().map(|r| route_up(r, name)));
    let mut out = vec![(format!("{family} static"), options)];
    for a in more {
        out.push((format!("{family} static"), vec![format!("address {a}")]));
    }
    out
}

fn routes_only<'a>(routes: impl Iterator<Item = &'a Route>, name: &str) -> Vec<String> {
    routes.map(|r| route_up(r, name)).collect()
}

fn route_up(r: &Route, name: &str) -> String {
    let mut line = format!("up ip route add {} via {} dev {name}", r.to, r.via);
    if let Some(m) = r.metric {
        write!(line, " metric {m}").unwrap();
    }
    line
}

/// The actions that fix the main file: drop its stanzas for our devices (they would
/// configure the NIC a second time, usually by DHCP) and, when ENI is the renderer,
/// make it source `interfaces.d`. The original is kept as [`MAIN_BACKUP`]; a file
/// vmcust already rewrote is not backed up again, so the backup stays the original.
pub(crate) fn main_file(existing: Option<&str>, devices: &[Device], eni: bool) -> Vec<Action> {
    let names: Vec<&str> = devices.iter().map(|d| d.name.as_str()).collect();
    let new = match existing {
        None if eni => format!("{HEADER}\nauto lo\niface lo inet loopback\n\n{SOURCE_LINE}\n"),
        None => return Vec::new(),
        Some(text) => {
            let mut new = without_stanzas(text, &names);
            if eni && !sources_interfaces_d(&new) {
                write!(new, "\n{SOURCE_LINE}\n").unwrap();
            }
            if new == text {
                return Vec::new();
            }
            if written_by_vmcust(&new) {
                new
            } else {
                format!("{HEADER}{new}")
            }
        }
    };
    let mut actions = Vec::new();
    if existing.is_some_and(|t| !written_by_vmcust(t)) {
        actions.push(Action::Rename {
            from: MAIN_FILE.into(),
            to: MAIN_BACKUP.into(),
            purpose: "original ifupdown configuration, kept as backup",
        });
    }
    actions.push(Action::write_file(
        MAIN_FILE,
        Contents::text(new),
        0o644,
        "ifupdown main file without stanzas for our interfaces",
    ));
    actions
}

/// Whether the main file already reads `/etc/network/interfaces.d`.
fn sources_interfaces_d(text: &str) -> bool {
    text.lines().any(|l| {
        let words: Vec<&str> = l.split_whitespace().collect();
        match words.as_slice() {
            ["source", p] => matches!(*p, "/etc/network/interfaces.d/*" | "interfaces.d/*"),
            ["source-directory", p] => matches!(
                p.trim_end_matches('/'),
                "/etc/network/interfaces.d" | "interfaces.d"
            ),
            _ => false,
        }
    })
}

/// `text` without the `iface` stanzas of `names` and without `names` in `auto` and
/// `allow-*` lines. Comments and blank lines stay.
fn without_stanzas(text: &str, names: &[&str]) -> String {
    let mut out = String::new();
    let mut skipping = false;
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let keep = match words.first() {
            None => true,
            Some(w) if w.starts_with('#') => true,
            Some(&"iface") => {
                skipping = words.get(1).is_some_and(|n| names.contains(n));
                !skipping
            }
            Some(w) if *w == "auto" || w.starts_with("allow-") => {
                skipping = false;
                let rest: Vec<&str> = words[1..]
                    .iter()
                    .copied()
                    .filter(|n| !names.contains(n))
                    .collect();
                if rest.len() != words.len() - 1 {
                    if !rest.is_empty() {
                        writeln!(out, "{w} {}", rest.join(" ")).unwrap();
                    }
                    continue;
                }
                true
            }
            Some(w) if STANZA_WORDS.contains(w) => {
                skipping = false;
                true
            }
            Some(_) => !skipping,
        };
        if keep {
            writeln!(out, "{line}").unwrap();
        }
    }
    out
}

/// Words that start a stanza (and so end the one before), besides `iface`, `auto` and
/// `allow-*`.
const STANZA_WORDS: &[&str] = &["mapping", "source", "source-directory", "rename"];

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(name: &str) -> Device {
        Device {
            name: crate::model::InterfaceId::parse(name).unwrap(),
            from_system: true,
            set_name: false,
            kernel_name: None,
        }
    }

    const DEBIAN: &str = "\
# The loopback network interface
auto lo ens192
iface lo inet loopback

# The primary network interface
allow-hotplug ens192
iface ens192 inet dhcp
    dns-nameservers 10.0.0.1

iface ens224 inet static
    address 10.1.1.1/24
";

    #[test]
    fn our_stanzas_go_others_stay_and_the_source_line_is_added() {
        let actions = main_file(Some(DEBIAN), &[dev("ens192")], true);
        assert!(
            matches!(&actions[0], Action::Rename { to, .. } if to.to_str() == Some(MAIN_BACKUP))
        );
        let Action::WriteFile { contents, .. } = &actions[1] else {
            panic!("expected a write")
        };
        let text = contents.display();
        assert_eq!(
            text,
            format!(
                "{HEADER}# The loopback network interface\nauto lo\niface lo inet loopback\n\n\
                 # The primary network interface\n\niface ens224 inet static\n    \
                 address 10.1.1.1/24\n\n{SOURCE_LINE}\n"
            )
        );
        // A second run finds nothing left to do.
        assert!(main_file(Some(&text), &[dev("ens192")], true).is_empty());
    }

    #[test]
    fn a_file_that_already_sources_and_has_no_stanzas_is_left_alone() {
        let text = "auto lo\niface lo inet loopback\nsource-directory /etc/network/interfaces.d\n";
        assert!(main_file(Some(text), &[dev("ens192")], true).is_empty());
    }

    #[test]
    fn missing_main_file_is_created_only_for_eni() {
        assert_eq!(main_file(None, &[dev("ens192")], true).len(), 1);
        assert!(main_file(None, &[dev("ens192")], false).is_empty());
    }
}
