//! The engine's own model of a customization, independent of the source it came from.
//!
//! Sources (cust.cfg, the OVF environment, guestinfo metadata) translate into these types;
//! planners and renderers read only these types. Nothing here does I/O.

mod glob;
mod ssh_blob;
pub(crate) mod ssh_private;
pub(crate) mod value;

pub(crate) use ssh_blob::certified_key;
pub(crate) use value::string_value;

use ipnet::IpNet;
use serde::Serialize;

pub use glob::Glob;
pub(crate) use value::{looks_like_private_key, quote, SSH_KEY_TYPES};
pub(crate) use value::{
    DnsName, FileName, Gateway, HostName, InstanceId, InterfaceId, InvalidValue, MacAddr,
    NameServer, NicAddr4, NicAddr6, Secret, SeedLocation, SshKey, Timezone, UserName,
};

/// Everything vmcust was asked to do to one machine.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Customization {
    /// Identity of this deployment; a new id means "customize again".
    pub instance_id: Option<InstanceId>,
    /// VMware's MARKER-ID: password and scripts run once per marker.
    pub marker_id: Option<FileName>,
    /// Host name, domain, clock and root password.
    pub identity: Identity,
    /// Network configuration; `None` leaves the guest's network alone.
    pub network: Option<Network>,
    /// File name of the custom script shipped next to the spec, if any.
    pub custom_script: Option<FileName>,
}

/// Who the machine is: names, clock and the root account.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Identity {
    /// Short host name (a single DNS label).
    pub host_name: Option<HostName>,
    /// DNS domain; together with the host name it forms the FQDN.
    pub domain: Option<DnsName>,
    /// IANA time zone name such as `Europe/Berlin`.
    pub time_zone: Option<Timezone>,
    /// Whether the hardware clock keeps UTC or local time.
    pub hardware_clock: Option<HardwareClock>,
    /// New root password and/or forced password change.
    pub root_password: Option<RootPassword>,
    /// SSH public keys (one `authorized_keys` line each) to install for [`Self::ssh_user`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ssh_authorized_keys: Vec<SshKey>,
    /// The account that receives the SSH keys; `None` means `root`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ssh_user: Option<UserName>,
}

impl Identity {
    /// The fully qualified name when both host name and domain are known.
    pub fn fqdn(&self) -> Option<String> {
        match (&self.host_name, &self.domain) {
            (Some(h), Some(d)) => Some(format!("{}.{d}", h.short())),
            _ => None,
        }
    }
}

/// What the hardware (RTC) clock is set to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HardwareClock {
    /// The RTC keeps UTC (the Linux default).
    Utc,
    /// The RTC keeps local time (dual-boot Windows habit).
    Local,
}

/// Root password change requested by the spec.
#[derive(Debug, Clone, Serialize)]
pub struct RootPassword {
    /// The new password; `None` when only an expiry is requested.
    pub password: Option<Secret>,
    /// Force a password change at next login for every uid-0 account.
    pub expire: bool,
}

/// The network of the machine: its interfaces and global DNS.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Network {
    /// Interfaces in the order the source listed them.
    pub interfaces: Vec<Interface>,
    /// DNS servers and search domains for the whole machine.
    pub dns: Dns,
    /// Entries that pick their NICs by name, driver or several properties rather than by
    /// MAC alone; resolved into [`Self::interfaces`] against the root's real interfaces
    /// at plan time (`plan::network::resolve`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub matched: Vec<MatchedInterface>,
    /// VLAN devices on top of the interfaces, in the source's order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub vlans: Vec<Vlan>,
}

/// An 802.1Q VLAN id: 0 to 4094 (4095 is reserved), as netplan and the kernel take it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct VlanId(u16);

impl VlanId {
    /// The highest id a VLAN can have.
    pub const MAX: u16 = 4094;

    /// The id `n`, or why it cannot be one.
    pub fn new(n: u64) -> Result<Self, String> {
        match u16::try_from(n) {
            Ok(id) if id <= Self::MAX => Ok(VlanId(id)),
            _ => Err(format!(
                "{n} is not a VLAN id; use 0-{} (4095 is reserved)",
                Self::MAX
            )),
        }
    }

    /// The number.
    pub fn get(self) -> u16 {
        self.0
    }
}

impl std::fmt::Display for VlanId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// The interface a VLAN is stacked on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum VlanLink {
    /// The NIC with this MAC (an interface of [`Network::interfaces`]).
    Mac(MacAddr),
    /// The one NIC a matched entry (its [`MatchedInterface::entry`]) finds at plan time;
    /// resolution turns it into [`VlanLink::Mac`].
    Entry(String),
}

/// A VLAN device (netplan v2 `vlans`): a tagged link on top of one NIC, configured like
/// an interface of its own.
#[derive(Debug, Clone, Serialize)]
pub struct Vlan {
    /// The device's name (the `vlans` key), a name the kernel takes.
    pub name: InterfaceId,
    /// The 802.1Q tag.
    pub vlan_id: VlanId,
    /// The NIC it is stacked on.
    pub link: VlanLink,
    /// The source's name for the link (the `ethernets` key), for messages and `show`.
    pub link_entry: String,
    /// Its IP configuration; `mtu` `None` takes the link's.
    #[serde(flatten)]
    pub ip: IpSettings,
}

impl Vlan {
    /// The VLAN's addressing as an [`Interface`] named after the VLAN, so that the
    /// renderers write its addresses, routes and DNS as they write a NIC's. `mac` is the
    /// link's: a VLAN device carries its parent's MAC address, so no renderer may match
    /// the VLAN by it.
    pub fn interface(&self, mac: MacAddr) -> Interface {
        Interface {
            id: self.name.clone(),
            mac,
            set_name: None,
            wake_on_lan: false,
            ip: self.ip.clone(),
            start_on_boot: true,
        }
    }
}

/// Which NICs an entry selects, as netplan's `match`: every property given must hold.
/// No property at all selects every physical NIC.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NicSelector {
    /// The kernel's interface name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<Glob>,
    /// The hardware address.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mac: Option<MacAddr>,
    /// The kernel driver (the `device/driver` link's name): any of these globs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub driver: Vec<Glob>,
}

impl std::fmt::Display for NicSelector {
    /// `name ens* and driver vmxnet3`, for messages and `plan`/`show`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        if let Some(n) = &self.name {
            parts.push(format!("name {n}"));
        }
        if let Some(m) = &self.mac {
            parts.push(format!("macaddress {m}"));
        }
        if !self.driver.is_empty() {
            let d: Vec<&str> = self.driver.iter().map(Glob::as_str).collect();
            parts.push(format!("driver {}", d.join(" or ")));
        }
        if parts.is_empty() {
            return f.write_str("any physical NIC (empty match)");
        }
        f.write_str(&parts.join(" and "))
    }
}

fn join<T: std::fmt::Display>(items: &[T]) -> String {
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

/// One source entry whose NICs are found at plan time: the settings every selected NIC
/// gets, and where its NICs go among the MAC-keyed [`Network::interfaces`].
#[derive(Debug, Clone, Serialize)]
pub struct MatchedInterface {
    /// Where the entry is in the source, for messages (`ethernets.nics`).
    pub entry: String,
    /// Which NICs it selects.
    pub selector: NicSelector,
    /// `set-name`: the name the one selected NIC is known by where no device name is
    /// known; it requires the selector to find exactly one NIC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub set_name: Option<InterfaceId>,
    /// How many of [`Network::interfaces`] come before this entry in the source, so
    /// that resolved NICs keep the source's order.
    pub position: usize,
    /// `wakeonlan`: the selected NICs wake the VM on a magic packet.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub wake_on_lan: bool,
    /// The IP configuration of each selected NIC; `mtu` `None` keeps the NIC's own.
    #[serde(flatten)]
    pub ip: IpSettings,
}

impl MatchedInterface {
    /// Why the entry must select exactly one NIC, if it must: static addresses cannot
    /// be shared, and netplan renames only one NIC for a `set-name`.
    pub fn needs_one(&self) -> Option<&'static str> {
        if self.set_name.is_some() {
            Some("it has a set-name")
        } else if matches!(self.ip.ipv4, Ipv4Config::Static(_))
            || matches!(self.ip.ipv6, Ipv6Config::Static(_))
        {
            Some("it has static addresses")
        } else {
            None
        }
    }

    /// `ethernets.nics: the NICs matching name ens* (found at plan time…): ipv4 dhcp`,
    /// for `show`, which has no root to resolve against.
    pub fn describe(&self) -> String {
        let v4 = match &self.ip.ipv4 {
            Ipv4Config::Dhcp => "dhcp".to_string(),
            Ipv4Config::Static(a) => join(a),
            Ipv4Config::Disabled => "off".to_string(),
        };
        let v6 = match &self.ip.ipv6 {
            Ipv6Config::Auto => "auto".to_string(),
            Ipv6Config::Dhcp => "dhcp".to_string(),
            Ipv6Config::Static(a) => join(a),
            Ipv6Config::Disabled => "off".to_string(),
        };
        let count = match self.needs_one() {
            Some(_) => "the one NIC",
            None => "each NIC",
        };
        let named = self
            .set_name
            .as_ref()
            .map_or(String::new(), |n| format!(", set-name {n}"));
        format!(
            "{}: {count} matching {}{named} (found at plan time among the root's interfaces): ipv4 {v4}; ipv6 {v6}",
            self.entry, self.selector
        )
    }

    /// The interface this entry configures on the NIC named `name` with `mac`.
    pub fn bind(&self, name: InterfaceId, mac: MacAddr) -> Interface {
        Interface {
            id: self.set_name.clone().unwrap_or(name),
            mac,
            set_name: self.set_name.clone(),
            wake_on_lan: self.wake_on_lan,
            ip: self.ip.clone(),
            start_on_boot: true,
        }
    }
}

/// The IP configuration of one device, the same for a NIC ([`Interface`]), the NICs a
/// matched entry selects ([`MatchedInterface`]) and a VLAN device ([`Vlan`]).
#[derive(Debug, Clone, Serialize)]
pub struct IpSettings {
    /// `mtu`: the link MTU; `None` keeps the device's own (a VLAN's: its link's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mtu: Option<Mtu>,
    /// `accept-ra`: whether IPv6 router advertisements are accepted; `None` leaves the
    /// stack's default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accept_ra: Option<bool>,
    /// `dhcp4-overrides` beyond `use-dns` (which is [`Self::dhcp_dns`]).
    #[serde(skip_serializing_if = "DhcpOverrides::is_empty")]
    pub dhcp4_overrides: DhcpOverrides,
    /// `dhcp6-overrides` beyond `use-dns`.
    #[serde(skip_serializing_if = "DhcpOverrides::is_empty")]
    pub dhcp6_overrides: DhcpOverrides,
    /// IPv4 configuration.
    pub ipv4: Ipv4Config,
    /// IPv6 configuration.
    pub ipv6: Ipv6Config,
    /// Routes through the device, default routes included.
    pub routes: Vec<Route>,
    /// DNS servers and search domains that belong to this device only.
    pub dns: Dns,
    /// Whether DNS servers learned over DHCP are used.
    pub dhcp_dns: bool,
}

/// One network interface, identified by its MAC address.
#[derive(Debug, Clone, Serialize)]
pub struct Interface {
    /// The source's name for it (`NIC1`); used where no device name is known.
    pub id: InterfaceId,
    /// Hardware address the interface is matched by.
    pub mac: MacAddr,
    /// `set-name`: the name the NIC with [`Interface::mac`] is given, whatever the kernel
    /// called it; the renderers rename it (by MAC) and configure it under this name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub set_name: Option<InterfaceId>,
    /// `wakeonlan`: the NIC wakes the VM on a magic packet.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub wake_on_lan: bool,
    /// Its IP configuration.
    #[serde(flatten)]
    pub ip: IpSettings,
    /// Bring the interface up at boot.
    pub start_on_boot: bool,
}

/// A link MTU in bytes: 68 (the least IPv4 allows) to 65535.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Mtu(u16);

impl Mtu {
    /// The least MTU: IPv4's minimum datagram a link must carry (RFC 791).
    pub const MIN: u16 = 68;

    /// `n` when it is 68-65535, else why not.
    pub fn new(n: u64) -> Result<Self, String> {
        match u16::try_from(n) {
            Ok(v) if v >= Self::MIN => Ok(Mtu(v)),
            _ => Err(format!(
                "mtu {n} is out of range; give {}-65535 bytes",
                Self::MIN
            )),
        }
    }

    /// The MTU in bytes.
    pub fn get(self) -> u16 {
        self.0
    }
}

impl std::fmt::Display for Mtu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// What a DHCP client takes from or sends to the server (netplan's
/// `dhcp4-overrides`/`dhcp6-overrides`, under netplan's names, in netplan's key order:
/// the netplan renderer writes it as it is); `None` leaves the stack's default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct DhcpOverrides {
    /// `use-domains`: search domains from DHCP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub use_domains: Option<bool>,
    /// `use-hostname`: the host name from DHCP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub use_hostname: Option<bool>,
    /// `use-mtu`: the MTU from DHCP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub use_mtu: Option<bool>,
    /// `use-ntp`: NTP servers from DHCP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub use_ntp: Option<bool>,
    /// `use-routes`: routes from DHCP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub use_routes: Option<bool>,
    /// `send-hostname`: the machine's host name is sent to the server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub send_hostname: Option<bool>,
    /// `hostname`: the name sent instead of the machine's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hostname: Option<HostName>,
    /// `route-metric`: the metric of routes learned over DHCP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub route_metric: Option<u32>,
}

impl DhcpOverrides {
    /// True when no override is set.
    pub fn is_empty(&self) -> bool {
        *self == DhcpOverrides::default()
    }
}

/// How an interface gets its IPv4 address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase", tag = "method", content = "addresses")]
pub enum Ipv4Config {
    /// Ask a DHCP server.
    Dhcp,
    /// Fixed addresses with their prefix lengths.
    Static(Vec<NicAddr4>),
    /// No IPv4 at all on this interface.
    Disabled,
}

impl Ipv4Config {
    /// `dhcp`, the addresses, or `off`, for `show`.
    pub fn describe(&self) -> String {
        match self {
            Ipv4Config::Dhcp => "dhcp".to_string(),
            Ipv4Config::Static(a) => join(a),
            Ipv4Config::Disabled => "off".to_string(),
        }
    }
}

impl Ipv6Config {
    /// `auto`, `dhcp`, the addresses, or `off`, for `show`.
    pub fn describe(&self) -> String {
        match self {
            Ipv6Config::Auto => "auto".to_string(),
            Ipv6Config::Dhcp => "dhcp".to_string(),
            Ipv6Config::Static(a) => join(a),
            Ipv6Config::Disabled => "off".to_string(),
        }
    }
}

/// How an interface gets its IPv6 addresses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase", tag = "method", content = "addresses")]
pub enum Ipv6Config {
    /// Leave it to the stack's default (router advertisements / SLAAC).
    Auto,
    /// Ask a DHCPv6 server.
    Dhcp,
    /// Fixed addresses with their prefix lengths; no DHCPv6.
    Static(Vec<NicAddr6>),
    /// No IPv6 at all on this interface.
    Disabled,
}

/// A route through an interface.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Route {
    /// Destination network (`0.0.0.0/0` or `::/0` for a default route).
    pub to: IpNet,
    /// Next hop.
    pub via: Gateway,
    /// Route metric; lower wins.
    pub metric: Option<u32>,
}

impl Route {
    /// Whether this is a default route of either family.
    pub fn is_default(&self) -> bool {
        self.to.prefix_len() == 0
    }
}

/// DNS resolver settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Dns {
    /// Name servers in order of preference.
    pub servers: Vec<NameServer>,
    /// Search domains in order.
    pub search: Vec<DnsName>,
}

impl Dns {
    /// True when neither servers nor search domains are set.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty() && self.search.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fqdn_needs_both_parts() {
        let mut id = Identity {
            host_name: Some(HostName::parse("web").unwrap()),
            ..Default::default()
        };
        assert_eq!(id.fqdn(), None);
        id.domain = Some(DnsName::parse("example.com").unwrap());
        assert_eq!(id.fqdn().as_deref(), Some("web.example.com"));
    }
}
