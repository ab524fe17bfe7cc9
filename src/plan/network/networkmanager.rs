//! NetworkManager renderer: one keyfile per interface under
//! `/etc/NetworkManager/system-connections/`, mode 0600 (NetworkManager ignores keyfiles
//! others can read), matched by MAC, plus a `conf.d` drop-in so that NetworkManager does
//! not create its "Wired connection" DHCP profile for our NICs.
//!
//! Our profiles also carry a high `autoconnect-priority`: when a profile we did not move
//! aside (one bound to no device) also matches the NIC, NetworkManager activates the one
//! with the higher priority, so ours wins (cloud-init issue 4121: RHEL 9 kept its DHCP
//! profile instead of the static one).
//!
//! A VLAN is a profile of its own (`type=vlan`, `[vlan] id=`, `parent=` the UUID of its
//! link's profile), found by its interface name.
//!
//! Reference: nm-settings-keyfile(5), nm-settings-nmcli(5), NetworkManager.conf(5).

use super::{merged_dns, vlan_devices, Device, VlanDevice, HEADER};
use crate::model::{Interface, Ipv4Config, Ipv6Config, MacAddr, Network};
use crate::plan::writer::{word, IniWriter, UnsafeValue};
use crate::plan::{Action, Contents};

/// The format name in refusals.
const FORMAT: &str = "NetworkManager keyfile";

/// Directory of NetworkManager's keyfile profiles.
pub(crate) const CONNECTIONS_DIR: &str = "/etc/NetworkManager/system-connections";

/// Drop-in that stops NetworkManager's automatic DHCP profile on our NICs.
pub(crate) const CONF_FILE: &str = "/etc/NetworkManager/conf.d/90-vmcust.conf";

/// Priority of our profiles among those that match the same device (NetworkManager's
/// default is 0; the "Wired connection" profiles use -999).
pub(crate) const AUTOCONNECT_PRIORITY: i32 = 100;

/// The actions that write the NetworkManager configuration.
pub(crate) fn render(net: &Network, devices: &[Device]) -> Result<Vec<Action>, UnsafeValue> {
    let mut actions = Vec::new();
    for (iface, dev) in net.interfaces.iter().zip(devices) {
        actions.push(Action::write_file(
            format!("{CONNECTIONS_DIR}/vmcust-{}.nmconnection", dev.name),
            Contents::text(keyfile(iface, &Profile::Ethernet(dev), net)?),
            0o600,
            "network (NetworkManager profile)",
        ));
    }
    for v in vlan_devices(net, devices) {
        actions.push(Action::write_file(
            format!("{CONNECTIONS_DIR}/vmcust-{}.nmconnection", v.vlan.name),
            Contents::text(keyfile(&v.iface, &Profile::Vlan(&v), net)?),
            0o600,
            "network (NetworkManager VLAN profile)",
        ));
    }
    if !net.interfaces.is_empty() {
        let macs: Vec<String> = net.interfaces.iter().map(|i| i.mac.to_string()).collect();
        let mut w = IniWriter::new("NetworkManager.conf", HEADER);
        w.section("main")?;
        // `+=` appends to the list other drop-ins set (RHEL's `no-auto-default=*`
        // must survive) instead of replacing it.
        w.set("no-auto-default+", macs.join(","))?;
        actions.push(Action::write_file(
            CONF_FILE,
            Contents::text(w.finish()),
            0o644,
            "no automatic DHCP profile for our NICs (NetworkManager)",
        ));
    }
    Ok(actions)
}

/// What a profile configures.
enum Profile<'a> {
    /// A NIC, on its device.
    Ethernet(&'a Device),
    /// A VLAN device NetworkManager creates on its link's profile.
    Vlan(&'a VlanDevice<'a>),
}

/// The keyfile for one interface.
fn keyfile(iface: &Interface, profile: &Profile<'_>, net: &Network) -> Result<String, UnsafeValue> {
    let mut w = IniWriter::new(FORMAT, HEADER);
    w.section("connection")?;
    match profile {
        Profile::Ethernet(dev) => {
            w.set("id", format!("vmcust-{}", dev.name))?;
            w.set("uuid", profile_uuid(iface.mac))?;
            w.set("type", "ethernet")?;
            if dev.pinned() {
                w.set("interface-name", &dev.name)?;
            }
        }
        Profile::Vlan(v) => {
            w.set("id", format!("vmcust-{}", v.vlan.name))?;
            w.set(
                "uuid",
                uuid_of(&format!("vlan:{}:{}", iface.mac, v.vlan.vlan_id)),
            )?;
            w.set("type", "vlan")?;
            w.set("interface-name", &v.vlan.name)?;
        }
    }
    w.set("autoconnect", iface.start_on_boot)?;
    w.set("autoconnect-priority", AUTOCONNECT_PRIORITY)?;
    match profile {
        Profile::Ethernet(_) => {
            w.section("ethernet")?;
            w.set("mac-address", iface.mac)?;
            if iface.wake_on_lan {
                // NM_SETTING_WIRED_WAKE_ON_LAN_MAGIC.
                w.set("wake-on-lan", 64)?;
            }
            if let Some(mtu) = iface.ip.mtu {
                w.set("mtu", mtu)?;
            }
        }
        Profile::Vlan(v) => {
            // A VLAN's MTU is the wired setting's, as nmcli's `802-3-ethernet.mtu`.
            if let Some(mtu) = iface.ip.mtu {
                w.section("ethernet")?;
                w.set("mtu", mtu)?;
            }
            w.section("vlan")?;
            w.set("id", v.vlan.vlan_id)?;
            // The link's profile by UUID: it names the NIC by MAC, whatever its name.
            w.set("parent", profile_uuid(iface.mac))?;
        }
    }

    let dns = merged_dns(&iface.ip.dns, &net.dns);
    let (v4_method, v4_addrs) = match &iface.ip.ipv4 {
        Ipv4Config::Dhcp => ("auto", Vec::new()),
        Ipv4Config::Static(nets) => ("manual", nets.iter().map(|n| n.to_string()).collect()),
        Ipv4Config::Disabled => ("disabled", Vec::new()),
    };
    // accept-ra: NetworkManager has no switch of its own, the method decides. `auto`
    // takes router advertisements, `link-local` and `manual` do not; `dhcp` takes
    // them for routes whatever accept-ra says.
    let static6 = if iface.ip.accept_ra == Some(true) {
        "auto"
    } else {
        "manual"
    };
    let (v6_method, v6_addrs) = match &iface.ip.ipv6 {
        Ipv6Config::Auto if iface.ip.accept_ra == Some(false) => ("link-local", Vec::new()),
        Ipv6Config::Auto => ("auto", Vec::new()),
        Ipv6Config::Dhcp => ("dhcp", Vec::new()),
        Ipv6Config::Static(nets) => (static6, nets.iter().map(|n| n.to_string()).collect()),
        Ipv6Config::Disabled => ("disabled", Vec::new()),
    };
    // NetworkManager keeps DNS per family and refuses DNS on a disabled family, so
    // each server goes to its own family's section while that family is on; search
    // domains go with IPv4 when it is on, else with IPv6.
    let v4_on = v4_method != "disabled";
    let v6_on = v6_method != "disabled";
    let family = |v4: bool| Family {
        dns: dns
            .servers
            .iter()
            .filter(|s| s.addr().is_ipv4() == v4)
            .map(|s| s.to_string())
            .collect(),
        search: if v4 == v4_on {
            dns.search.iter().map(|d| d.to_string()).collect()
        } else {
            Vec::new()
        },
        ignore_auto_dns: !iface.ip.dhcp_dns,
        routes: iface
            .ip
            .routes
            .iter()
            .filter(|r| r.via.addr().is_ipv4() == v4)
            .map(|r| match r.metric {
                Some(m) => format!("{},{},{m}", r.to, r.via),
                None => format!("{},{}", r.to, r.via),
            })
            .collect(),
    };
    ip_section(
        &mut w,
        "ipv4",
        v4_method,
        &v4_addrs,
        v4_on.then(|| family(true)),
    )?;
    ip_section(
        &mut w,
        "ipv6",
        v6_method,
        &v6_addrs,
        v6_on.then(|| family(false)),
    )?;
    Ok(w.finish())
}

/// What goes into one family's section besides method and addresses.
struct Family {
    dns: Vec<String>,
    search: Vec<String>,
    ignore_auto_dns: bool,
    routes: Vec<String>,
}

fn ip_section(
    w: &mut IniWriter,
    name: &str,
    method: &str,
    addrs: &[String],
    f: Option<Family>,
) -> Result<(), UnsafeValue> {
    w.section(name)?;
    w.set("method", method)?;
    for (i, a) in addrs.iter().enumerate() {
        w.set(&format!("address{}", i + 1), a)?;
    }
    let Some(f) = f else { return Ok(()) };
    // Every route, default routes included, is a routeN with its own metric: the single
    // `gateway` key could not hold a second default gateway with another metric.
    for (i, r) in f.routes.iter().enumerate() {
        w.set(&format!("route{}", i + 1), r)?;
    }
    // Lists are `;`-separated: an item must not hold one (or white space).
    let list = |key: &str, items: &[String]| -> Result<String, UnsafeValue> {
        let mut out = String::new();
        for item in items {
            if item.contains(';') {
                return Err(UnsafeValue {
                    format: FORMAT,
                    key: key.to_string(),
                    reason: "a list item holds the separator ;".into(),
                });
            }
            out.push_str(&word(FORMAT, key, item)?);
            out.push(';');
        }
        Ok(out)
    };
    if !f.dns.is_empty() {
        w.set("dns", list("dns", &f.dns)?)?;
    }
    if !f.search.is_empty() {
        w.set("dns-search", list("dns-search", &f.search)?)?;
    }
    if f.ignore_auto_dns && method != "manual" {
        w.set("ignore-auto-dns", true)?;
    }
    Ok(())
}

/// A stable UUID for the profile of `mac`, so that a re-run rewrites the same profile
/// instead of adding another. It is a 128-bit FNV-1a hash of a vmcust-specific name
/// for the MAC, marked as an RFC 9562 version 8 (vendor-defined) UUID; uniqueness only
/// has to hold between the profiles of one machine.
pub(crate) fn profile_uuid(mac: MacAddr) -> String {
    uuid_of(&format!("{mac}"))
}

/// The UUID for the profile vmcust knows as `name` (a MAC, or `vlan:<MAC>:<id>`).
fn uuid_of(name: &str) -> String {
    const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013b;
    let mut h = OFFSET;
    for b in format!("vmcust-networkmanager-profile:{name}").bytes() {
        h ^= u128::from(b);
        h = h.wrapping_mul(PRIME);
    }
    let mut bytes = h.to_be_bytes();
    bytes[6] = (bytes[6] & 0x0f) | 0x80; // version 8
    bytes[8] = (bytes[8] & 0x3f) | 0x80; // RFC 9562 variant
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_is_stable_well_formed_and_per_mac() {
        let a: MacAddr = "00:50:56:a6:8c:08".parse().unwrap();
        let b: MacAddr = "00:50:56:a6:8c:09".parse().unwrap();
        let ua = profile_uuid(a);
        assert_eq!(ua, profile_uuid(a));
        assert_ne!(ua, profile_uuid(b));
        assert_eq!(ua.len(), 36);
        assert_eq!(&ua[14..15], "8");
        assert!("89ab".contains(&ua[19..20]));
    }
}
