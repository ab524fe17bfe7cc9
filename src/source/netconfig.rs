//! Network config v1 and v2 (the cloud-init / netplan formats found in guestinfo metadata)
//! translated into the engine's [`Network`].
//!
//! The engine's interfaces are keyed by MAC address. An entry that names only a MAC (v2
//! `match: {macaddress: …}`, v1 `mac_address`) becomes such an interface here; a v1
//! `name` beside the `mac_address` is that NIC's `set-name`, as cloud-init reads v1. Any other
//! entry (v2 `match` by `name` glob, `driver`, several keys, or no `match` at all so that
//! the id is the name; v1 `name` without `mac_address`) keeps its validated selector in
//! [`Network::matched`] and is resolved against the root's real interfaces at plan time
//! (`plan::network::resolve`): nothing is skipped. v2 `vlans` become [`Vlan`]s on one of
//! the ethernets. Bonds, bridges and other device kinds are refused with an error:
//! configuring only their members would leave a half-configured machine.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::str::FromStr;

use ipnet::{IpNet, Ipv4Net, Ipv6Net};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_norway::Value;

use crate::model::{
    DhcpOverrides, Dns, DnsName, Gateway, Glob, HostName, Interface, InterfaceId, IpSettings,
    Ipv4Config, Ipv6Config, MacAddr, MatchedInterface, Mtu, NameServer, Network, NicAddr4,
    NicAddr6, NicSelector, Route, Vlan, VlanId, VlanLink,
};

/// A network config that cannot be translated; the message names the offending entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("network config: {0}")]
pub struct NetworkConfigError(pub String);

/// The translation and what was left out.
#[derive(Debug, Clone, Default)]
pub struct Translated {
    /// The network; `None` when the config has no interface entry at all.
    pub network: Option<Network>,
    /// Things skipped or ignored, for the user.
    pub warnings: Vec<String>,
}

fn err(msg: impl Into<String>) -> NetworkConfigError {
    NetworkConfigError(msg.into())
}

/// Most `{network: {...}}` wrappers unwrapped (cloud-init writes one): a bound, so that a
/// hostile document cannot make the unwrapping recurse deeply.
const MAX_WRAPPERS: usize = 4;

/// Translates a v1 or v2 network config (the value of the metadata `network` key, already
/// decoded). A `{network: {...}}` wrapper is accepted (up to four of them).
pub fn translate(config: &Value) -> Result<Translated, NetworkConfigError> {
    let mut config = config;
    let mut wrappers = 0;
    let map = loop {
        let Value::Mapping(map) = config else {
            return Err(err("expected a mapping with a version key"));
        };
        match map.get("network") {
            Some(inner @ Value::Mapping(_)) if map.len() == 1 && wrappers < MAX_WRAPPERS => {
                config = inner;
                wrappers += 1;
            }
            _ => break map,
        }
    };
    let version = match map.get("version") {
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(s)) => s.trim().parse().ok(),
        _ => None,
    };
    match version {
        Some(1) => v1(config),
        Some(2) => v2(config),
        Some(v) => Err(err(format!("version {v} is not supported; use 1 or 2"))),
        None => Err(err(
            "missing or invalid version; set version: 1 or version: 2",
        )),
    }
}

fn from_value<T: DeserializeOwned>(what: &str, v: &Value) -> Result<T, NetworkConfigError> {
    serde_norway::from_value(v.clone()).map_err(|e| err(format!("{what}: {e}")))
}

/// A YAML 1.1 style boolean: `true`/`false` or `yes`/`no`/`on`/`off`/`y`/`n` (any case), as
/// netplan and cloud-init accept.
fn lenient_bool<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    let v = Option::<Value>::deserialize(d)?;
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(b)),
        Some(Value::String(s)) => match s.to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" | "y" => Ok(Some(true)),
            "false" | "no" | "off" | "n" => Ok(Some(false)),
            _ => Err(serde::de::Error::custom(format!(
                "expected a boolean (true/false), found {s:?}"
            ))),
        },
        Some(_) => Err(serde::de::Error::custom("expected a boolean (true/false)")),
    }
}

/// One string or a list of strings.
#[derive(Debug, Default, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    #[default]
    None,
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::None => Vec::new(),
            OneOrMany::One(s) => s.split_whitespace().map(str::to_string).collect(),
            OneOrMany::Many(v) => v,
        }
    }
}

/// Most interface entries read from one network config: a bound on the work a hostile
/// document can cause (each is matched against every device at plan time).
const MAX_ENTRIES: usize = 256;

/// Everything learned about one interface entry before it becomes an [`Interface`] or a
/// [`MatchedInterface`].
struct Builder {
    path: String,
    dhcp4: bool,
    dhcp6: bool,
    v4: Vec<NicAddr4>,
    v6: Vec<NicAddr6>,
    routes: Vec<Route>,
    dns: Dns,
    dhcp_dns: bool,
    /// `set-name` (netplan v2 only).
    set_name: Option<InterfaceId>,
    /// `wakeonlan` (netplan v2 only).
    wake_on_lan: bool,
    /// `mtu`.
    mtu: Option<Mtu>,
    /// `accept-ra` (netplan v2 only).
    accept_ra: Option<bool>,
    /// `dhcp4-overrides`/`dhcp6-overrides` beyond `use-dns` (netplan v2 only).
    dhcp4_overrides: DhcpOverrides,
    dhcp6_overrides: DhcpOverrides,
}

impl Builder {
    fn new(path: String) -> Self {
        Builder {
            path,
            dhcp4: false,
            dhcp6: false,
            v4: Vec::new(),
            v6: Vec::new(),
            routes: Vec::new(),
            dns: Dns::default(),
            dhcp_dns: true,
            set_name: None,
            wake_on_lan: false,
            mtu: None,
            accept_ra: None,
            dhcp4_overrides: DhcpOverrides::default(),
            dhcp6_overrides: DhcpOverrides::default(),
        }
    }

    /// Takes the `mtu` at `path`, checked to be 68-65535.
    fn mtu(&mut self, path: &str, n: Option<u64>) -> Result<(), NetworkConfigError> {
        self.mtu = match n {
            Some(n) => Some(Mtu::new(n).map_err(|e| err(format!("{path}: {e}")))?),
            None => None,
        };
        Ok(())
    }

    fn address(&mut self, path: &str, net: IpNet) -> Result<(), NetworkConfigError> {
        let at = |e: String| err(format!("{path}: {e}"));
        match net {
            IpNet::V4(n) => self.v4.push(NicAddr4::new(n).map_err(at)?),
            IpNet::V6(n) => self.v6.push(NicAddr6::new(n).map_err(at)?),
        }
        Ok(())
    }

    fn default_route(&mut self, via: Gateway, metric: Option<u32>) {
        let to = match via.addr() {
            IpAddr::V4(_) => IpNet::V4(Ipv4Net::default()),
            IpAddr::V6(_) => IpNet::V6(Ipv6Net::default()),
        };
        self.routes.push(Route { to, via, metric });
    }

    fn name_servers<'s>(
        &mut self,
        path: &str,
        servers: impl IntoIterator<Item = &'s String>,
    ) -> Result<(), NetworkConfigError> {
        for (n, s) in servers.into_iter().enumerate() {
            self.dns
                .servers
                .push(name_server(&format!("{path}[{n}]"), s)?);
        }
        Ok(())
    }

    fn search(&mut self, path: &str, names: &[String]) -> Result<(), NetworkConfigError> {
        let start = self.dns.search.len();
        for (n, s) in names.iter().enumerate() {
            self.dns
                .search
                .push(dns_name(&format!("{path}[{}]", start + n), s)?);
        }
        Ok(())
    }

    /// The interface for the NIC with `mac`, named `id` in the source.
    fn keyed(mut self, id: &str, mac: MacAddr) -> Result<Entry, NetworkConfigError> {
        let id = InterfaceId::parse(id).map_err(|e| err(format!("{}: {e}", self.path)))?;
        let ip = self.ip_settings()?;
        Ok(Entry::Keyed(Interface {
            id,
            mac,
            set_name: self.set_name,
            wake_on_lan: self.wake_on_lan,
            ip,
            start_on_boot: true,
        }))
    }

    /// The entry for the NICs `selector` finds at plan time.
    fn matched(mut self, selector: NicSelector) -> Result<Entry, NetworkConfigError> {
        let ip = self.ip_settings()?;
        Ok(Entry::Matched(MatchedInterface {
            entry: self.path,
            selector,
            set_name: self.set_name,
            wake_on_lan: self.wake_on_lan,
            ip,
            position: 0,
        }))
    }

    /// The device's IP configuration, taken out of what the entry's keys gave.
    fn ip_settings(&mut self) -> Result<IpSettings, NetworkConfigError> {
        let (ipv4, ipv6) = self.methods()?;
        Ok(IpSettings {
            mtu: self.mtu,
            accept_ra: self.accept_ra,
            dhcp4_overrides: std::mem::take(&mut self.dhcp4_overrides),
            dhcp6_overrides: std::mem::take(&mut self.dhcp6_overrides),
            ipv4,
            ipv6,
            routes: std::mem::take(&mut self.routes),
            dns: std::mem::take(&mut self.dns),
            dhcp_dns: self.dhcp_dns,
        })
    }

    /// The IPv4 and IPv6 methods; DHCP and static addresses of one family conflict.
    fn methods(&self) -> Result<(Ipv4Config, Ipv6Config), NetworkConfigError> {
        if self.dhcp4 && !self.v4.is_empty() {
            return Err(err(format!(
                "{}: both dhcp4 and static ipv4 addresses; vmcust supports one or the other",
                self.path
            )));
        }
        if self.dhcp6 && !self.v6.is_empty() {
            return Err(err(format!(
                "{}: both dhcp6 and static ipv6 addresses; vmcust supports one or the other",
                self.path
            )));
        }
        let ipv4 = if self.dhcp4 {
            Ipv4Config::Dhcp
        } else if !self.v4.is_empty() {
            Ipv4Config::Static(self.v4.clone())
        } else {
            Ipv4Config::Disabled
        };
        let ipv6 = if self.dhcp6 {
            Ipv6Config::Dhcp
        } else if !self.v6.is_empty() {
            Ipv6Config::Static(self.v6.clone())
        } else {
            Ipv6Config::Auto
        };
        Ok((ipv4, ipv6))
    }
}

/// One translated interface entry.
enum Entry {
    /// It names its NIC by MAC alone.
    Keyed(Interface),
    /// Its NICs are found at plan time.
    Matched(MatchedInterface),
}

/// The entries in source order, split into MAC-keyed interfaces and matched entries that
/// remember their place among them.
#[derive(Default)]
struct Entries {
    interfaces: Vec<Interface>,
    matched: Vec<MatchedInterface>,
}

impl Entries {
    fn push(&mut self, e: Entry) -> Result<(), NetworkConfigError> {
        if self.interfaces.len() + self.matched.len() >= MAX_ENTRIES {
            return Err(err(format!(
                "more than {MAX_ENTRIES} interface entries; a VM has far fewer NICs"
            )));
        }
        match e {
            Entry::Keyed(i) => self.interfaces.push(i),
            Entry::Matched(mut m) => {
                m.position = self.interfaces.len();
                self.matched.push(m);
            }
        }
        Ok(())
    }
}

fn glob(path: &str, s: &str) -> Result<Glob, NetworkConfigError> {
    Glob::parse(s).map_err(|e| err(format!("{path}: {e}")))
}

fn parse_mac(path: &str, s: &str) -> Result<MacAddr, NetworkConfigError> {
    MacAddr::from_str(s.trim()).map_err(|e| err(format!("{path}: {e}")))
}

fn parse_ip(path: &str, s: &str) -> Result<IpAddr, NetworkConfigError> {
    IpAddr::from_str(s.trim()).map_err(|_| {
        err(format!(
            "{path}: {} is not an ip address",
            crate::model::quote(s)
        ))
    })
}

fn gateway(path: &str, s: &str) -> Result<Gateway, NetworkConfigError> {
    Gateway::new(parse_ip(path, s)?).map_err(|e| err(format!("{path}: {e}")))
}

fn name_server(path: &str, s: &str) -> Result<NameServer, NetworkConfigError> {
    NameServer::new(parse_ip(path, s)?).map_err(|e| err(format!("{path}: {e}")))
}

fn dns_name(path: &str, s: &str) -> Result<DnsName, NetworkConfigError> {
    DnsName::parse(s.trim()).map_err(|e| {
        err(format!(
            "{path}: {} is not a dns name: {e}",
            crate::model::quote(s)
        ))
    })
}

/// `addr/prefix`, or `addr` with a separate netmask / prefix length.
fn parse_net(path: &str, s: &str, netmask: Option<&str>) -> Result<IpNet, NetworkConfigError> {
    let s = s.trim();
    if s.contains('/') {
        return IpNet::from_str(s).map_err(|_| {
            err(format!(
                "{path}: {s:?} is not an address with a prefix length"
            ))
        });
    }
    let addr = parse_ip(path, s)?;
    let Some(mask) = netmask.map(str::trim).filter(|m| !m.is_empty()) else {
        return Err(err(format!(
            "{path}: address {s} has no prefix length; write it as {s}/PREFIX"
        )));
    };
    let prefix = vmcust_imc::prefix_for(addr, mask).map_err(|why| {
        err(format!(
            "{path}: netmask {mask:?} is not a prefix length or a contiguous netmask ({why})"
        ))
    })?;
    IpNet::new(addr, prefix).map_err(|_| err(format!("{path}: prefix length {prefix} too long")))
}

/// A route destination: `default`, `addr/prefix` or a bare address (a host route).
fn parse_to(path: &str, to: &str, via: Gateway) -> Result<IpNet, NetworkConfigError> {
    let to = to.trim();
    let via = via.addr();
    if to == "default" {
        return Ok(match via {
            IpAddr::V4(_) => IpNet::V4(Ipv4Net::default()),
            IpAddr::V6(_) => IpNet::V6(Ipv6Net::default()),
        });
    }
    let net = if to.contains('/') {
        parse_net(path, to, None)?
    } else {
        IpNet::from(parse_ip(path, to)?)
    };
    if net.addr().is_ipv4() != via.is_ipv4() {
        return Err(err(format!(
            "{path}: destination {to} and gateway {via} are of different address families"
        )));
    }
    Ok(net.trunc())
}

fn finish(
    entries: Entries,
    dns: Dns,
    vlans: Vec<Vlan>,
    mut warnings: Vec<String>,
) -> Result<Translated, NetworkConfigError> {
    let Entries {
        interfaces,
        matched,
    } = entries;
    let mut seen = BTreeMap::new();
    for i in &interfaces {
        if let Some(other) = seen.insert(i.mac, &i.id) {
            return Err(err(format!(
                "{} and {} have the same mac address {}",
                other, i.id, i.mac
            )));
        }
    }
    let network = if interfaces.is_empty() && matched.is_empty() {
        warnings.push(
            "network config has no interface entry; the guest's network is left as it is"
                .to_string(),
        );
        None
    } else {
        Some(Network {
            interfaces,
            dns,
            matched,
            vlans,
        })
    };
    Ok(Translated { network, warnings })
}

// ---------------------------------------------------------------- version 2

/// A v2 `match`. Unknown keys are errors: ignoring one would select more NICs than meant.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct V2Match {
    macaddress: Option<String>,
    name: Option<String>,
    #[serde(default)]
    driver: Option<Globs>,
}

/// netplan's `driver`: one glob, or a list of globs any of which may match.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Globs {
    One(String),
    Many(Vec<String>),
}

/// The selector of a v2 `match`, each glob checked; `None` when it names a MAC alone (the
/// entry is keyed by it now).
fn v2_selector(path: &str, m: &V2Match) -> Result<NicSelector, NetworkConfigError> {
    let mac = match &m.macaddress {
        Some(mac) => Some(parse_mac(&format!("{path}.match.macaddress"), mac)?),
        None => None,
    };
    let name = match &m.name {
        Some(n) => Some(glob(&format!("{path}.match.name"), n)?),
        None => None,
    };
    let driver = match &m.driver {
        None => Vec::new(),
        Some(Globs::One(d)) => vec![glob(&format!("{path}.match.driver"), d)?],
        Some(Globs::Many(list)) => {
            if list.is_empty() {
                return Err(err(format!(
                    "{path}.match.driver: the list is empty; name at least one driver"
                )));
            }
            list.iter()
                .enumerate()
                .map(|(k, d)| glob(&format!("{path}.match.driver[{k}]"), d))
                .collect::<Result<_, _>>()?
        }
    };
    Ok(NicSelector { name, mac, driver })
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct V2Route {
    to: Option<String>,
    via: Option<String>,
    metric: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct V2Nameservers {
    #[serde(default)]
    addresses: Vec<String>,
    #[serde(default)]
    search: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct V2Overrides {
    #[serde(default, deserialize_with = "lenient_bool")]
    use_dns: Option<bool>,
    #[serde(default, deserialize_with = "lenient_bool")]
    use_domains: Option<bool>,
    #[serde(default, deserialize_with = "lenient_bool")]
    use_hostname: Option<bool>,
    #[serde(default, deserialize_with = "lenient_bool")]
    use_mtu: Option<bool>,
    #[serde(default, deserialize_with = "lenient_bool")]
    use_ntp: Option<bool>,
    #[serde(default, deserialize_with = "lenient_bool")]
    use_routes: Option<bool>,
    #[serde(default, deserialize_with = "lenient_bool")]
    send_hostname: Option<bool>,
    hostname: Option<String>,
    route_metric: Option<u32>,
    /// Keys netplan does not define: named in a warning, never dropped unsaid.
    #[serde(flatten)]
    other: BTreeMap<String, Value>,
}

impl V2Overrides {
    /// The overrides, the host name checked; and the keys set, for the warning.
    fn take(&self, path: &str) -> Result<(DhcpOverrides, Vec<&'static str>), NetworkConfigError> {
        let hostname = match &self.hostname {
            Some(h) => Some(HostName::parse(h).map_err(|e| err(format!("{path}.hostname: {e}")))?),
            None => None,
        };
        let o = DhcpOverrides {
            use_domains: self.use_domains,
            use_hostname: self.use_hostname,
            use_mtu: self.use_mtu,
            use_ntp: self.use_ntp,
            use_routes: self.use_routes,
            send_hostname: self.send_hostname,
            hostname,
            route_metric: self.route_metric,
        };
        let set = [
            ("hostname", o.hostname.is_some()),
            ("route-metric", o.route_metric.is_some()),
            ("send-hostname", o.send_hostname.is_some()),
            ("use-domains", o.use_domains.is_some()),
            ("use-hostname", o.use_hostname.is_some()),
            ("use-mtu", o.use_mtu.is_some()),
            ("use-ntp", o.use_ntp.is_some()),
            ("use-routes", o.use_routes.is_some()),
        ]
        .into_iter()
        .filter_map(|(k, on)| on.then_some(k))
        .collect();
        Ok((o, set))
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct V2Ethernet {
    #[serde(rename = "match", default)]
    matching: Option<V2Match>,
    set_name: Option<String>,
    #[serde(default, deserialize_with = "lenient_bool")]
    wakeonlan: Option<bool>,
    mtu: Option<u64>,
    #[serde(default, deserialize_with = "lenient_bool")]
    accept_ra: Option<bool>,
    #[serde(default, deserialize_with = "lenient_bool")]
    dhcp4: Option<bool>,
    #[serde(default, deserialize_with = "lenient_bool")]
    dhcp6: Option<bool>,
    #[serde(default)]
    addresses: Vec<Value>,
    gateway4: Option<String>,
    gateway6: Option<String>,
    #[serde(default)]
    routes: Vec<V2Route>,
    nameservers: Option<V2Nameservers>,
    dhcp4_overrides: Option<V2Overrides>,
    dhcp6_overrides: Option<V2Overrides>,
    #[serde(flatten)]
    other: BTreeMap<String, Value>,
}

/// A `set-name`: a name the kernel takes for a NIC (`dev_valid_name`: at most 15
/// bytes, no `/`, `:` or white space, not `.` or `..`) and a valid interface id.
fn kernel_name(n: &str) -> Result<InterfaceId, String> {
    let id = InterfaceId::parse(n)?;
    if n.len() > 15 || n.contains(':') || n == "." || n == ".." {
        return Err(format!(
            "{} cannot name a NIC: the kernel takes 1-15 characters without : and not . or ..",
            crate::model::quote(n)
        ));
    }
    Ok(id)
}

/// The addressing keys of a v2 device entry (an ethernet's or a VLAN's) at `path`,
/// checked, with a warning for what some renderers leave out.
fn v2_settings(
    path: &str,
    eth: &V2Ethernet,
    warnings: &mut Vec<String>,
) -> Result<Builder, NetworkConfigError> {
    let mut b = Builder::new(path.to_string());
    b.mtu(&format!("{path}.mtu"), eth.mtu)?;
    b.accept_ra = eth.accept_ra;
    for (key, o, six) in [
        ("dhcp4-overrides", &eth.dhcp4_overrides, false),
        ("dhcp6-overrides", &eth.dhcp6_overrides, true),
    ] {
        let Some(o) = o else { continue };
        let at = format!("{path}.{key}");
        if !o.other.is_empty() {
            let keys: Vec<&str> = o.other.keys().map(String::as_str).collect();
            warnings.push(format!("{at}: ignoring unknown keys {}", keys.join(", ")));
        }
        let (taken, set) = o.take(&at)?;
        if !set.is_empty() {
            // networkd's [DHCPv6] has no MTU, routes, metric or host name to send.
            let v6_only = if six {
                "; networkd applies use-domains, use-hostname and use-ntp only"
            } else {
                ""
            };
            warnings.push(format!(
                "{at}: {} applied by the netplan and networkd renderers only{v6_only}; the others ignore them",
                set.join(", ")
            ));
        }
        if six {
            b.dhcp6_overrides = taken;
        } else {
            b.dhcp4_overrides = taken;
        }
    }
    b.dhcp4 = eth.dhcp4.unwrap_or(false);
    b.dhcp6 = eth.dhcp6.unwrap_or(false);
    for (n, a) in eth.addresses.iter().enumerate() {
        let at = format!("{path}.addresses[{n}]");
        let Value::String(s) = a else {
            return Err(err(format!(
                "{at}: expected \"address/prefix\"; address options are not supported"
            )));
        };
        b.address(&at, parse_net(&at, s, None)?)?;
    }
    for (key, gw, v4) in [
        ("gateway4", &eth.gateway4, true),
        ("gateway6", &eth.gateway6, false),
    ] {
        if let Some(gw) = gw {
            let at = format!("{path}.{key}");
            let via = gateway(&at, gw)?;
            if via.addr().is_ipv4() != v4 {
                return Err(err(format!("{at}: {via} is of the wrong address family")));
            }
            b.default_route(via, None);
        }
    }
    for (n, r) in eth.routes.iter().enumerate() {
        let at = format!("{path}.routes[{n}]");
        let (Some(to), Some(via)) = (&r.to, &r.via) else {
            return Err(err(format!(
                "{at}: routes need both to and via; on-link routes are not supported"
            )));
        };
        let via = gateway(&format!("{at}.via"), via)?;
        let to = parse_to(&at, to, via)?;
        b.routes.push(Route {
            to,
            via,
            metric: r.metric,
        });
    }
    if let Some(ns) = &eth.nameservers {
        b.name_servers(&format!("{path}.nameservers.addresses"), &ns.addresses)?;
        b.search(&format!("{path}.nameservers.search"), &ns.search)?;
    }
    let use_dns4 = eth.dhcp4_overrides.as_ref().and_then(|o| o.use_dns);
    let use_dns6 = eth.dhcp6_overrides.as_ref().and_then(|o| o.use_dns);
    b.dhcp_dns = use_dns4 != Some(false) && use_dns6 != Some(false);
    Ok(b)
}

const V2_UNSUPPORTED: [&str; 5] = ["bonds", "bridges", "wifis", "tunnels", "vrfs"];

fn v2(config: &Value) -> Result<Translated, NetworkConfigError> {
    let mut warnings = Vec::new();
    for kind in V2_UNSUPPORTED {
        if config.get(kind).is_some_and(|v| !v.is_null()) {
            return Err(err(format!(
                "{kind} are not supported; only ethernets and vlans"
            )));
        }
    }
    let ethernets = match config.get("ethernets") {
        None | Some(Value::Null) => serde_norway::Mapping::new(),
        Some(Value::Mapping(m)) => m.clone(),
        Some(_) => return Err(err("ethernets: expected a mapping of interface ids")),
    };
    let mut entries = Entries::default();
    // The ethernets a VLAN may name as its link, by key, and every name a device takes.
    let mut links: BTreeMap<String, VlanLink> = BTreeMap::new();
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    for (id, body) in &ethernets {
        let id = match id {
            Value::String(s) => s.clone(),
            other => return Err(err(format!("ethernets: key {other:?} is not a name"))),
        };
        let path = format!("ethernets.{id}");
        let eth: V2Ethernet = if body.is_null() {
            V2Ethernet::default()
        } else {
            from_value(&path, body)?
        };
        if !eth.other.is_empty() {
            let keys: Vec<&str> = eth.other.keys().map(String::as_str).collect();
            warnings.push(format!(
                "{path}: ignoring unsupported keys {}",
                keys.join(", ")
            ));
        }
        // Without `match` the id is the interface's name, as netplan has it.
        let selector = match &eth.matching {
            Some(m) => v2_selector(&path, m)?,
            None => NicSelector {
                name: Some(
                    Glob::literal(&id)
                        .map_err(|e| err(format!("{path}: the id names the interface: {e}")))?,
                ),
                ..NicSelector::default()
            },
        };
        let set_name = match &eth.set_name {
            Some(n) => Some(kernel_name(n).map_err(|e| err(format!("{path}.set-name: {e}")))?),
            None => None,
        };
        let mut b = v2_settings(&path, &eth, &mut warnings)?;
        b.set_name = set_name.clone();
        b.wake_on_lan = eth.wakeonlan.unwrap_or(false);
        if let Some(n) = &set_name {
            names.insert(n.to_string(), format!("{path}.set-name"));
        }
        names.insert(id.clone(), path.clone());
        entries.push(match selector {
            NicSelector {
                name: None,
                mac: Some(mac),
                driver,
            } if driver.is_empty() => {
                links.insert(id.clone(), VlanLink::Mac(mac));
                let name = set_name.map_or_else(|| id.clone(), |n| n.to_string());
                b.keyed(&name, mac)?
            }
            selector => {
                links.insert(id.clone(), VlanLink::Entry(path.clone()));
                b.matched(selector)?
            }
        })?;
    }
    let vlans = v2_vlans(config, &links, &mut names, &entries, &mut warnings)?;
    finish(entries, Dns::default(), vlans, warnings)
}

/// A v2 `vlans` entry: the tag and the link, and the addressing keys of an ethernet.
#[derive(Debug, Deserialize)]
struct V2Vlan {
    id: Option<u64>,
    link: Option<String>,
    #[serde(flatten)]
    settings: V2Ethernet,
}

/// The v2 `vlans`, each checked: an id of 0-4094, a link that is one of the `ethernets`
/// (`links`, by key), a name the kernel takes and no other device has (`names`: each
/// name taken, with who has it), one VLAN per id and link.
fn v2_vlans(
    config: &Value,
    links: &BTreeMap<String, VlanLink>,
    names: &mut BTreeMap<String, String>,
    entries: &Entries,
    warnings: &mut Vec<String>,
) -> Result<Vec<Vlan>, NetworkConfigError> {
    let vlans = match config.get("vlans") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Mapping(m)) => m,
        Some(_) => return Err(err("vlans: expected a mapping of VLAN names")),
    };
    let mut out: Vec<Vlan> = Vec::new();
    for (name, body) in vlans {
        let Value::String(name) = name else {
            return Err(err(format!("vlans: key {name:?} is not a name")));
        };
        let path = format!("vlans.{name}");
        if entries.interfaces.len() + entries.matched.len() + out.len() >= MAX_ENTRIES {
            return Err(err(format!(
                "more than {MAX_ENTRIES} interface and VLAN entries; a VM has far fewer"
            )));
        }
        if body.is_null() {
            return Err(err(format!(
                "{path}: empty; a VLAN needs id (its 802.1Q tag) and link (its ethernet)"
            )));
        }
        let v: V2Vlan = from_value(&path, body)?;
        let vname = kernel_name(name).map_err(|e| err(format!("{path}: {e}")))?;
        let Some(id) = v.id else {
            return Err(err(format!(
                "{path}: id is missing; give the VLAN's 802.1Q tag (0-4094)"
            )));
        };
        let vlan_id = VlanId::new(id).map_err(|e| err(format!("{path}.id: {e}")))?;
        let Some(link_key) = v.link else {
            return Err(err(format!(
                "{path}: link is missing; name the ethernet the VLAN is on"
            )));
        };
        let Some(link) = links.get(&link_key) else {
            let known: Vec<&str> = links.keys().map(String::as_str).collect();
            return Err(err(format!(
                "{path}.link: {} is not one of the ethernets ({}); a VLAN goes on a declared ethernet (bonds and bridges are not supported)",
                crate::model::quote(&link_key),
                if known.is_empty() { "there are none".to_string() } else { known.join(", ") }
            )));
        };
        let e = &v.settings;
        if e.matching.is_some() || e.set_name.is_some() || e.wakeonlan.is_some() {
            return Err(err(format!(
                "{path}: match, set-name and wakeonlan belong to the ethernet a VLAN is on ({link_key}), not to the VLAN"
            )));
        }
        if let Some(other) = names.insert(name.clone(), path.clone()) {
            return Err(err(format!(
                "{path}: {other} has the name {name} too; give the VLAN a name of its own (such as {link_key}.{vlan_id})"
            )));
        }
        if let Some(twin) = out.iter().find(|o| o.link == *link && o.vlan_id == vlan_id) {
            return Err(err(format!(
                "{path}: vlans.{} is VLAN {vlan_id} on {link_key} already; a link carries each id once",
                twin.name
            )));
        }
        if !e.other.is_empty() {
            let keys: Vec<&str> = e.other.keys().map(String::as_str).collect();
            warnings.push(format!(
                "{path}: ignoring unsupported keys {}",
                keys.join(", ")
            ));
        }
        let mut b = v2_settings(&path, e, warnings)?;
        out.push(Vlan {
            name: vname,
            vlan_id,
            link: link.clone(),
            link_entry: link_key,
            ip: b.ip_settings()?,
        });
    }
    Ok(out)
}

// ---------------------------------------------------------------- version 1

#[derive(Debug, Deserialize)]
struct V1Route {
    network: Option<String>,
    destination: Option<String>,
    netmask: Option<String>,
    prefix: Option<u8>,
    gateway: Option<String>,
    metric: Option<u32>,
}

#[derive(Debug, Deserialize)]
struct V1Subnet {
    #[serde(rename = "type")]
    kind: String,
    address: Option<String>,
    netmask: Option<String>,
    prefix: Option<u8>,
    gateway: Option<String>,
    #[serde(default)]
    dns_nameservers: OneOrMany,
    #[serde(default)]
    dns_search: OneOrMany,
    #[serde(default)]
    routes: Vec<V1Route>,
}

#[derive(Debug, Deserialize)]
struct V1Physical {
    name: Option<String>,
    mac_address: Option<String>,
    mtu: Option<u64>,
    #[serde(default)]
    subnets: Vec<V1Subnet>,
}

#[derive(Debug, Deserialize)]
struct V1Nameserver {
    #[serde(default)]
    address: OneOrMany,
    #[serde(default)]
    search: OneOrMany,
}

fn v1(config: &Value) -> Result<Translated, NetworkConfigError> {
    let warnings = Vec::new();
    let items = match config.get("config") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Sequence(s)) => s.clone(),
        Some(_) => return Err(err("config: expected a list of entries")),
    };
    let mut entries = Entries::default();
    let mut dns = Dns::default();
    for (n, item) in items.iter().enumerate() {
        let path = format!("config[{n}]");
        let kind = item.get("type").and_then(Value::as_str).unwrap_or_default();
        match kind {
            "physical" => {
                let phy: V1Physical = from_value(&path, item)?;
                let mac = match phy.mac_address.as_deref() {
                    Some(mac) => Some(parse_mac(&format!("{path}.mac_address"), mac)?),
                    None => None,
                };
                let name = match (&phy.name, mac) {
                    (Some(name), _) => name.clone(),
                    (None, Some(_)) => format!("eth{n}"),
                    (None, None) => {
                        return Err(err(format!(
                            "{path}: a physical entry needs a name or a mac_address to find its interface"
                        )))
                    }
                };
                let path = format!("{path} ({name})");
                let mut b = Builder::new(path.clone());
                // With a MAC, `name` is the name the NIC is given (cloud-init's v1: the
                // set-name of that MAC), whatever the kernel calls it now.
                if let (Some(n), Some(_)) = (&phy.name, mac) {
                    b.set_name =
                        Some(kernel_name(n).map_err(|e| err(format!("{path}.name: {e}")))?);
                }
                b.mtu(&format!("{path}.mtu"), phy.mtu)?;
                for (k, s) in phy.subnets.into_iter().enumerate() {
                    v1_subnet(&mut b, &format!("{path}.subnets[{k}]"), s)?;
                }
                // Without a MAC, `name` is the interface's current name (not a glob).
                entries.push(match mac {
                    Some(mac) => b.keyed(&name, mac)?,
                    None => {
                        let name =
                            Glob::literal(&name).map_err(|e| err(format!("{path}.name: {e}")))?;
                        b.matched(NicSelector {
                            name: Some(name),
                            ..NicSelector::default()
                        })?
                    }
                })?;
            }
            "nameserver" => {
                let ns: V1Nameserver = from_value(&path, item)?;
                for (k, s) in ns.address.into_vec().iter().enumerate() {
                    dns.servers
                        .push(name_server(&format!("{path}.address[{k}]"), s)?);
                }
                for (k, s) in ns.search.into_vec().iter().enumerate() {
                    dns.search
                        .push(dns_name(&format!("{path}.search[{k}]"), s)?);
                }
            }
            "" => return Err(err(format!("{path}: missing type"))),
            other => {
                return Err(err(format!(
                    "{path}: type {other:?} is not supported; use physical or nameserver"
                )))
            }
        }
    }
    finish(entries, dns, Vec::new(), warnings)
}

fn v1_subnet(b: &mut Builder, path: &str, s: V1Subnet) -> Result<(), NetworkConfigError> {
    let mask = s
        .netmask
        .clone()
        .or_else(|| s.prefix.map(|p| p.to_string()));
    match s.kind.as_str() {
        "dhcp" | "dhcp4" => b.dhcp4 = true,
        "dhcp6" | "ipv6_dhcpv6-stateful" => b.dhcp6 = true,
        // Router advertisements (SLAAC) are the IPv6 default already.
        "ipv6_slaac" | "ipv6_dhcpv6-stateless" | "manual" => {}
        "static" | "static6" => {
            let Some(addr) = &s.address else {
                return Err(err(format!("{path}: static subnet without address")));
            };
            let at = format!("{path}.address");
            let net = parse_net(&at, addr, mask.as_deref())?;
            if s.kind == "static6" && net.addr().is_ipv4() {
                return Err(err(format!("{path}: static6 with an ipv4 address")));
            }
            b.address(&at, net)?;
        }
        other => {
            return Err(err(format!(
                "{path}: subnet type {other:?} is not supported; use dhcp, dhcp4, dhcp6, static, static6, manual, ipv6_slaac or ipv6_dhcpv6-stateless/stateful"
            )))
        }
    }
    if let Some(gw) = &s.gateway {
        let via = gateway(&format!("{path}.gateway"), gw)?;
        b.default_route(via, None);
    }
    for (k, r) in s.routes.iter().enumerate() {
        let at = format!("{path}.routes[{k}]");
        let Some(gw) = &r.gateway else {
            return Err(err(format!("{at}: route without gateway")));
        };
        let via = gateway(&format!("{at}.gateway"), gw)?;
        let dest = r.destination.as_ref().or(r.network.as_ref());
        let to = match dest {
            None => return Err(err(format!("{at}: route without network"))),
            Some(d) if d.contains('/') || d == "default" => parse_to(&at, d, via)?,
            Some(d) => {
                let mask = r
                    .netmask
                    .clone()
                    .or_else(|| r.prefix.map(|p| p.to_string()));
                let net = match mask {
                    Some(m) => parse_net(&at, d, Some(&m))?,
                    None => IpNet::from(parse_ip(&at, d)?),
                };
                parse_to(&at, &net.to_string(), via)?
            }
        };
        b.routes.push(Route {
            to,
            via,
            metric: r.metric,
        });
    }
    b.name_servers(
        &format!("{path}.dns_nameservers"),
        &s.dns_nameservers.into_vec(),
    )?;
    b.search(&format!("{path}.dns_search"), &s.dns_search.into_vec())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(s: &str) -> Value {
        serde_norway::from_str(s).unwrap()
    }

    fn one(s: &str) -> Interface {
        let t = translate(&yaml(s)).unwrap();
        let mut n = t.network.expect("a network");
        assert_eq!(n.interfaces.len(), 1);
        n.interfaces.remove(0)
    }

    #[test]
    fn v2_table() {
        let i = one(
            "version: 2\nethernets:\n  id0:\n    match: {macaddress: '00:50:56:AA:BB:CC'}\n    set-name: ens192\n    dhcp4: yes\n    dhcp6: true\n    dhcp4-overrides: {use-dns: no}\n",
        );
        assert_eq!(i.id, "ens192");
        assert_eq!(i.mac.to_string(), "00:50:56:aa:bb:cc");
        assert_eq!(i.ip.ipv4, Ipv4Config::Dhcp);
        assert_eq!(i.ip.ipv6, Ipv6Config::Dhcp);
        assert!(!i.ip.dhcp_dns);

        let i = one(
            "version: 2\nethernets:\n  eth0:\n    match:\n      macaddress: 00:50:56:00:00:01\n    addresses: [10.0.0.5/24, 'fd00::5/64']\n    gateway4: 10.0.0.1\n    gateway6: fd00::1\n    routes:\n      - {to: 192.168.0.0/16, via: 10.0.0.254, metric: 50}\n      - {to: default, via: 10.0.0.2}\n    nameservers: {addresses: [10.0.0.53, 'fd00::53'], search: [example.com]}\n",
        );
        assert_eq!(i.id, "eth0");
        assert_eq!(
            i.ip.ipv4,
            Ipv4Config::Static(vec!["10.0.0.5/24".parse().unwrap()])
        );
        assert_eq!(
            i.ip.ipv6,
            Ipv6Config::Static(vec!["fd00::5/64".parse().unwrap()])
        );
        let routes: Vec<String> =
            i.ip.routes
                .iter()
                .map(|r| format!("{} via {} {:?}", r.to, r.via, r.metric))
                .collect();
        assert_eq!(
            routes,
            [
                "0.0.0.0/0 via 10.0.0.1 None",
                "::/0 via fd00::1 None",
                "192.168.0.0/16 via 10.0.0.254 Some(50)",
                "0.0.0.0/0 via 10.0.0.2 None",
            ]
        );
        assert_eq!(i.ip.dns.servers.len(), 2);
        assert_eq!(
            i.ip.dns
                .search
                .iter()
                .map(|d| d.as_str())
                .collect::<Vec<_>>(),
            ["example.com"]
        );
        assert!(i.ip.dhcp_dns);

        // Neither dhcp nor addresses: IPv4 off, IPv6 left to router advertisements.
        let i = one("version: 2\nethernets:\n  e:\n    match: {macaddress: '00:50:56:00:00:02'}\n");
        assert_eq!(i.ip.ipv4, Ipv4Config::Disabled);
        assert_eq!(i.ip.ipv6, Ipv6Config::Auto);
    }

    /// The link keys CAPV sends per NIC (issue 32): `mtu` and `accept-ra` are taken,
    /// and `dhcp*-overrides` keys vmcust does not apply are named, never dropped unsaid.
    #[test]
    fn capv_link_keys_are_taken_and_unapplied_overrides_named() {
        let doc = "version: 2\nethernets:\n  id0:\n    match: {macaddress: '00:50:56:00:00:0a'}\n    set-name: eth0\n    dhcp4: true\n    dhcp6: false\n    mtu: 9000\n    accept-ra: false\n    dhcp4-overrides: {use-dns: false, use-ntp: false, route-metric: 100}\n    dhcp6-overrides: {use-dns: true}\n";
        let t = translate(&yaml(doc)).unwrap();
        let i = &t.network.as_ref().unwrap().interfaces[0];
        assert_eq!(i.ip.mtu.map(Mtu::get), Some(9000));
        assert_eq!(i.ip.accept_ra, Some(false));
        assert!(!i.ip.dhcp_dns);
        assert!(
            !t.warnings
                .iter()
                .any(|w| w.contains("mtu") || w.contains("accept-ra")),
            "{:?}",
            t.warnings
        );
        assert_eq!(
            t.warnings,
            ["ethernets.id0.dhcp4-overrides: route-metric, use-ntp applied by the netplan and networkd renderers only; the others ignore them"]
        );
        assert_eq!(i.ip.dhcp4_overrides.use_ntp, Some(false));
        assert_eq!(i.ip.dhcp4_overrides.route_metric, Some(100));
        assert!(i.ip.dhcp6_overrides.is_empty());

        // A key netplan does not define is named too; a bad host name is refused.
        let t = translate(&yaml("version: 2\nethernets:\n  e:\n    dhcp6: true\n    dhcp6-overrides: {use-ntp: no, frobnicate: 1}\n")).unwrap();
        assert_eq!(
            t.warnings,
            [
                "ethernets.e.dhcp6-overrides: ignoring unknown keys frobnicate",
                "ethernets.e.dhcp6-overrides: use-ntp applied by the netplan and networkd renderers only; networkd applies use-domains, use-hostname and use-ntp only; the others ignore them",
            ]
        );
        let e = translate(&yaml(
            "version: 2\nethernets:\n  e:\n    dhcp4-overrides: {hostname: 'a b'}\n",
        ))
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("ethernets.e.dhcp4-overrides.hostname"),
            "{e}"
        );

        // Absent keys leave the NIC's MTU and the stack's RA default alone.
        let i = one("version: 2\nethernets:\n  e:\n    match: {macaddress: '00:50:56:00:00:02'}\n    accept-ra: yes\n");
        assert_eq!(i.ip.mtu, None);
        assert_eq!(i.ip.accept_ra, Some(true));

        // v1 physical entries carry mtu too (cloud-init's v1 schema); null is unset.
        let i = one("version: 1\nconfig:\n  - {type: physical, name: eth0, mac_address: '00:50:56:00:00:03', mtu: 1400}\n");
        assert_eq!(i.ip.mtu.map(Mtu::get), Some(1400));
        let i = one("version: 1\nconfig:\n  - {type: physical, name: eth0, mac_address: '00:50:56:00:00:03', mtu: null}\n");
        assert_eq!(i.ip.mtu, None);
    }

    #[test]
    fn mtu_out_of_range_is_refused_naming_the_key() {
        for (doc, at) in [
            ("version: 2\nethernets:\n  e:\n    match: {macaddress: '00:50:56:00:00:02'}\n    mtu: 67\n", "ethernets.e.mtu"),
            ("version: 2\nethernets:\n  e:\n    match: {macaddress: '00:50:56:00:00:02'}\n    mtu: 65536\n", "ethernets.e.mtu"),
            ("version: 1\nconfig:\n  - {type: physical, name: eth0, mtu: 0}\n", "config[0] (eth0).mtu"),
        ] {
            let e = translate(&yaml(doc)).unwrap_err().to_string();
            assert!(e.contains(at) && e.contains("68-65535"), "{e}");
        }
        for doc in [
            "version: 2\nethernets:\n  e:\n    mtu: -1\n",
            "version: 2\nethernets:\n  e:\n    mtu: big\n",
            "version: 2\nethernets:\n  e:\n    accept-ra: maybe\n",
        ] {
            let e = translate(&yaml(doc)).unwrap_err().to_string();
            assert!(e.contains("ethernets.e"), "{e}");
        }
        for ok in ["68", "65535"] {
            let doc = format!("version: 2\nethernets:\n  e:\n    match: {{macaddress: '00:50:56:00:00:02'}}\n    mtu: {ok}\n");
            assert_eq!(
                one(&doc).ip.mtu.map(|m| m.get().to_string()).as_deref(),
                Some(ok)
            );
        }
    }

    /// The selector each v2 `match` shape keeps, and which shapes are keyed by MAC now.
    #[test]
    fn v2_selectors_are_kept_for_plan_time() {
        // (entry body, selector as shown, set-name) — None: keyed by MAC right away.
        let table: &[(&str, Option<&str>, Option<&str>)] = &[
            (
                "match: {name: 'ens*'}\n    dhcp4: yes",
                Some("name ens*"),
                None,
            ),
            (
                "match: {name: eth1}\n    dhcp4: yes",
                Some("name eth1"),
                None,
            ),
            (
                "match: {name: 'en*', driver: vmxnet3}",
                Some("name en* and driver vmxnet3"),
                None,
            ),
            (
                "match: {driver: [vmxnet3, 'e1000*']}",
                Some("driver vmxnet3 or e1000*"),
                None,
            ),
            (
                "match: {name: 'ens*', macaddress: '00:50:56:00:00:01'}",
                Some("name ens* and macaddress 00:50:56:00:00:01"),
                None,
            ),
            (
                "match: {driver: vmxnet3}\n    set-name: lan0",
                Some("driver vmxnet3"),
                Some("lan0"),
            ),
            // No match: the id is the interface's name, literally.
            ("dhcp4: true", Some("name nics"), None),
            (
                "match: {}\n    dhcp4: true",
                Some("any physical NIC (empty match)"),
                None,
            ),
            ("match: {macaddress: '00:50:56:00:00:01'}", None, None),
        ];
        for (body, want, set_name) in table {
            let text = format!("version: 2\nethernets:\n  nics:\n    {body}\n");
            let t = translate(&yaml(&text)).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert!(t.warnings.is_empty(), "{text}: {:?}", t.warnings);
            let n = t.network.expect("a network");
            match want {
                Some(sel) => {
                    assert!(n.interfaces.is_empty(), "{text}");
                    let m = &n.matched[0];
                    assert_eq!(m.selector.to_string(), *sel, "{text}");
                    assert_eq!(m.entry, "ethernets.nics");
                    assert_eq!(m.set_name.as_ref().map(|s| s.as_str()), *set_name);
                }
                None => {
                    assert!(n.matched.is_empty(), "{text}");
                    assert_eq!(n.interfaces.len(), 1, "{text}");
                }
            }
        }
    }

    /// Matched entries remember where they stood among the MAC-keyed ones.
    #[test]
    fn matched_entries_keep_their_place() {
        let t = translate(&yaml(
            "version: 2\nethernets:\n  a:\n    match: {name: 'ens1*'}\n  b:\n    match: {macaddress: '00:50:56:00:00:01'}\n  c:\n    match: {name: 'ens2*'}\n",
        ))
        .unwrap();
        let n = t.network.unwrap();
        let places: Vec<(&str, usize)> = n
            .matched
            .iter()
            .map(|m| (m.entry.as_str(), m.position))
            .collect();
        assert_eq!(places, [("ethernets.a", 0), ("ethernets.c", 1)]);
    }

    /// A bad glob or an unknown match key is an error at the key's path, never a skip.
    #[test]
    fn bad_matches_name_the_key() {
        let cases = [
            (
                "match: {name: 'ens[0-9'}",
                "ethernets.e.match.name: \"ens[0-9\": the [ at position 4 is never closed",
            ),
            (
                "match: {driver: ['vmxnet3', 'e[']}",
                "ethernets.e.match.driver[1]",
            ),
            (
                "match: {driver: []}",
                "ethernets.e.match.driver: the list is empty",
            ),
            (
                "match: {name: ''}",
                "ethernets.e.match.name: the glob is empty",
            ),
            ("match: {path: 'pci*'}", "unknown field `path`"),
            (
                "match: {name: 'ens*'}\n    set-name: 'a b'",
                "ethernets.e.set-name",
            ),
        ];
        for (body, want) in cases {
            let text = format!("version: 2\nethernets:\n  e:\n    {body}\n");
            let e = translate(&yaml(&text)).unwrap_err().to_string();
            assert!(e.contains(want), "{text}: {e}");
        }
    }

    #[test]
    fn v2_errors_name_the_entry() {
        let cases = [
            ("version: 3\n", "version 3 is not supported"),
            ("ethernets: {}\n", "missing or invalid version"),
            ("version: 2\nbonds: {bond0: {}}\n", "bonds are not supported"),
            (
                "version: 2\nethernets:\n  e:\n    match: {macaddress: 'zz'}\n",
                "ethernets.e.match.macaddress: not a mac address",
            ),
            (
                "version: 2\nethernets:\n  e:\n    match: {macaddress: '00:50:56:00:00:01'}\n    addresses: [10.0.0.5]\n",
                "ethernets.e.addresses[0]",
            ),
            (
                "version: 2\nethernets:\n  e:\n    match: {macaddress: '00:50:56:00:00:01'}\n    dhcp4: true\n    addresses: [10.0.0.5/24]\n",
                "both dhcp4 and static",
            ),
            (
                "version: 2\nethernets:\n  e:\n    match: {macaddress: '00:50:56:00:00:01'}\n    gateway4: fd00::1\n",
                "ethernets.e.gateway4",
            ),
            (
                "version: 2\nethernets:\n  e:\n    match: {macaddress: '00:50:56:00:00:01'}\n    dhcp4: maybe\n",
                "ethernets.e",
            ),
            (
                "version: 2\nethernets:\n  a:\n    match: {macaddress: '00:50:56:00:00:01'}\n  b:\n    match: {macaddress: '00:50:56:00:00:01'}\n",
                "same mac address",
            ),
        ];
        for (text, want) in cases {
            let e = translate(&yaml(text)).unwrap_err().to_string();
            assert!(e.contains(want), "{text}: {e}");
            assert!(e.starts_with("network config: "), "{e}");
        }
    }

    #[test]
    fn v1_table() {
        let t = translate(&yaml(
            r#"
version: 1
config:
  - type: physical
    name: eth0
    mac_address: "00:50:56:00:00:01"
    subnets:
      - type: static
        address: 192.168.1.10
        netmask: 255.255.255.0
        gateway: 192.168.1.1
        dns_nameservers: [192.168.1.53]
        dns_search: [corp.example]
        routes:
          - {network: 10.0.0.0, netmask: 255.0.0.0, gateway: 192.168.1.254, metric: 10}
      - type: static6
        address: fd00::10/64
        gateway: fd00::1
  - type: physical
    name: eth1
    mac_address: "00:50:56:00:00:02"
    subnets:
      - type: dhcp
      - type: dhcp6
  - type: physical
    name: eth2
  - type: nameserver
    address: [8.8.8.8, "2001:4860:4860::8888"]
    search: example.com
"#,
        ))
        .unwrap();
        assert!(t.warnings.is_empty(), "{:?}", t.warnings);
        let n = t.network.unwrap();
        assert_eq!(n.interfaces.len(), 2);
        // eth2 has no MAC: it is found by its name at plan time.
        assert_eq!(n.matched.len(), 1);
        assert_eq!(n.matched[0].entry, "config[2] (eth2)");
        assert_eq!(n.matched[0].selector.to_string(), "name eth2");
        assert_eq!(n.matched[0].position, 2);
        let e0 = &n.interfaces[0];
        assert_eq!(e0.id, "eth0");
        assert_eq!(
            e0.ip.ipv4,
            Ipv4Config::Static(vec!["192.168.1.10/24".parse().unwrap()])
        );
        assert_eq!(
            e0.ip.ipv6,
            Ipv6Config::Static(vec!["fd00::10/64".parse().unwrap()])
        );
        let routes: Vec<String> = e0
            .ip
            .routes
            .iter()
            .map(|r| format!("{} {}", r.to, r.via))
            .collect();
        assert_eq!(
            routes,
            [
                "0.0.0.0/0 192.168.1.1",
                "10.0.0.0/8 192.168.1.254",
                "::/0 fd00::1"
            ]
        );
        assert_eq!(e0.ip.routes[1].metric, Some(10));
        assert_eq!(
            e0.ip
                .dns
                .search
                .iter()
                .map(|d| d.as_str())
                .collect::<Vec<_>>(),
            ["corp.example"]
        );
        let e1 = &n.interfaces[1];
        assert_eq!(e1.ip.ipv4, Ipv4Config::Dhcp);
        assert_eq!(e1.ip.ipv6, Ipv6Config::Dhcp);
        assert_eq!(n.dns.servers.len(), 2);
        assert_eq!(
            n.dns.search.iter().map(|d| d.as_str()).collect::<Vec<_>>(),
            ["example.com"]
        );
    }

    #[test]
    fn v1_errors() {
        let cases = [
            ("version: 1\nconfig:\n  - type: bond\n", "config[0]: type \"bond\""),
            (
                "version: 1\nconfig:\n  - type: physical\n    name: e\n    mac_address: '00:50:56:00:00:01'\n    subnets: [{type: static, address: 10.0.0.1}]\n",
                "has no prefix length",
            ),
            (
                "version: 1\nconfig:\n  - type: physical\n    name: e\n    mac_address: '00:50:56:00:00:01'\n    subnets: [{type: bogus}]\n",
                "subnet type \"bogus\"",
            ),
            ("version: 1\nconfig: {a: b}\n", "expected a list"),
            (
                "version: 1\nconfig:\n  - type: physical\n    subnets: [{type: dhcp}]\n",
                "config[0]: a physical entry needs a name or a mac_address",
            ),
            (
                "version: 1\nconfig:\n  - type: physical\n    name: 'eth 1'\n",
                "config[0] (eth 1).name",
            ),
        ];
        for (text, want) in cases {
            let e = translate(&yaml(text)).unwrap_err().to_string();
            assert!(e.contains(want), "{text}: {e}");
        }
    }

    #[test]
    fn entries_are_bounded() {
        let mut text = String::from("version: 2\nethernets:\n");
        for n in 0..=MAX_ENTRIES {
            text.push_str(&format!("  e{n}:\n    dhcp4: true\n"));
        }
        let e = translate(&yaml(&text)).unwrap_err().to_string();
        assert!(e.contains("more than 256 interface entries"), "{e}");
    }

    #[test]
    fn wrapped_in_network_key() {
        let i = one(
            "network:\n  version: 2\n  ethernets:\n    e:\n      match: {macaddress: '00:50:56:00:00:01'}\n      dhcp4: true\n",
        );
        assert_eq!(i.ip.ipv4, Ipv4Config::Dhcp);
    }
}
