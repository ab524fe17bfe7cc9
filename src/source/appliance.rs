//! Appliance property mapping: OVA authors name their own OVF properties
//! (`guestinfo.hostname`, `ip0`, `netmask0`, `gateway`, `dns`, …). A small file,
//! `/etc/vmcust/ovf-properties.conf`, maps those keys onto vmcust's fields so an appliance
//! is customized with no script:
//!
//! ```ini
//! [properties]
//! hostname = guestinfo.hostname
//! ipv4-address = ip0
//! ipv4-netmask = netmask0
//! ipv4-gateway = gateway
//! dns-servers = dns
//! ```
//!
//! The fields are listed in [`FIELDS`]; `docs/ovf-appliances.md` explains each.

use std::net::{IpAddr, Ipv4Addr};

use ipnet::Ipv4Net;
use vmcust_ovf::Environment;

use super::field::{field, host_and_domain};
use crate::model::{
    Customization, Dns, DnsName, Gateway, InstanceId, Interface, InterfaceId, IpSettings,
    Ipv4Config, Ipv6Config, MacAddr, NameServer, Network, NicAddr4, RootPassword, Route, Secret,
    SshKey, Timezone,
};

/// A mapped appliance property that cannot be used. Messages name the property, never
/// its value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ApplianceError {
    /// A mapped property has a bad value.
    #[error("ovf property {key}: {detail}")]
    Property {
        /// The appliance's property key.
        key: String,
        /// What is wrong and what is accepted.
        detail: String,
    },
    /// A mapped property's value is not usable (a host name with a newline, …).
    #[error(transparent)]
    Invalid(#[from] crate::model::InvalidValue),
}

/// Where the mapping lives under the root.
pub(crate) const MAPPING_PATH: &str = "/etc/vmcust/ovf-properties.conf";

/// Where the appliance property mapping comes from.
#[derive(Debug, Clone, Default)]
pub(crate) enum MappingSource {
    /// `/etc/vmcust/ovf-properties.conf` in the target root, if it is there.
    #[default]
    Root,
    /// This file (the command line's `--ovf-properties`).
    File(std::path::PathBuf),
}

impl MappingSource {
    /// The mapping, `None` when the root has none; a bad file is refused.
    pub(crate) fn load(
        &self,
        root: &crate::root::Root,
    ) -> Result<Option<PropertyMap>, crate::failure::Failure> {
        use crate::failure::Failure;
        match self {
            MappingSource::File(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| Failure::io(format!("reading {}: {e}", path.display())))?;
                PropertyMap::parse(&text)
                    .map(Some)
                    .map_err(|e| Failure::invalid(format!("{}: {e}", path.display())))
            }
            MappingSource::Root => match root.read_text(std::path::Path::new(MAPPING_PATH)) {
                Ok(Some(text)) => PropertyMap::parse(&text)
                    .map(Some)
                    .map_err(|e| Failure::invalid(format!("{MAPPING_PATH}: {e}"))),
                Ok(None) => Ok(None),
                Err(e) => Err(Failure::io(format!("reading {MAPPING_PATH}: {e}"))),
            },
        }
    }
}

/// The fields an appliance property can be mapped to.
pub(crate) const FIELDS: &[&str] = &[
    "instance-id",
    "hostname",
    "domain",
    "time-zone",
    "root-password",
    "ssh-keys",
    "mac",
    "ipv4-address",
    "ipv4-netmask",
    "ipv4-gateway",
    "dns-servers",
    "dns-search",
];

/// Metric of the default route an appliance mapping creates (the same as a spec's first).
const DEFAULT_METRIC: u32 = 100;

/// Field → the appliance's property key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PropertyMap {
    entries: Vec<(String, String)>,
}

impl PropertyMap {
    /// Parses the mapping file. Unknown fields and lines outside `[properties]` are errors
    /// naming the line, so a typo cannot silently drop a setting.
    pub(crate) fn parse(text: &str) -> Result<PropertyMap, String> {
        let mut entries = Vec::new();
        let mut in_section = false;
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            let n = i + 1;
            if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
                continue;
            }
            if line.starts_with('[') {
                in_section = line == "[properties]";
                if !in_section {
                    return Err(format!(
                        "line {n}: unknown section {line}; use [properties]"
                    ));
                }
                continue;
            }
            if !in_section {
                return Err(format!("line {n}: mappings go under a [properties] header"));
            }
            let Some((field, key)) = line.split_once('=') else {
                return Err(format!("line {n}: expected `field = property-key`"));
            };
            let (field, key) = (field.trim(), key.trim());
            if !FIELDS.contains(&field) {
                return Err(format!(
                    "line {n}: unknown field {field:?}; use one of {}",
                    FIELDS.join(", ")
                ));
            }
            if key.is_empty() {
                return Err(format!("line {n}: {field} maps to no property key"));
            }
            entries.push((field.to_string(), key.to_string()));
        }
        Ok(PropertyMap { entries })
    }

    /// The mapped property's (trimmed, non-empty) value for `field`, with its key.
    fn get<'e>(&self, env: &'e Environment, field: &str) -> Option<(&str, &'e str)> {
        let (_, key) = self.entries.iter().find(|(f, _)| f == field)?;
        let value = env.property(key)?.trim();
        (!value.is_empty()).then_some((key.as_str(), value))
    }

    /// Sets the mapped fields of `c` from `env`'s properties.
    pub(crate) fn apply(
        &self,
        env: &Environment,
        c: &mut Customization,
        warnings: &mut Vec<String>,
    ) -> Result<(), ApplianceError> {
        let bad = |key: &str, detail: String| ApplianceError::Property {
            key: key.to_string(),
            detail,
        };
        let at = |key: &str| format!("ovf property {key}");
        if let Some((key, v)) = self.get(env, "instance-id") {
            c.instance_id = Some(field(at(key), InstanceId::parse(v))?);
        }
        if let Some((key, v)) = self.get(env, "hostname") {
            let (short, domain) = host_and_domain(&at(key), v)?;
            c.identity.host_name = Some(short);
            if domain.is_some() {
                c.identity.domain = domain;
            }
        }
        if let Some((key, v)) = self.get(env, "domain") {
            c.identity.domain = Some(field(at(key), DnsName::parse(v))?);
            let id = &c.identity;
            super::field::fqdn_fits(&at(key), id.host_name.as_ref(), id.domain.as_ref())?;
        }
        if let Some((key, v)) = self.get(env, "time-zone") {
            c.identity.time_zone = Some(field(at(key), Timezone::parse(v))?);
        }
        if let Some((_, v)) = self.get(env, "root-password") {
            c.identity.root_password = Some(RootPassword {
                password: Some(Secret::new(v.to_string())),
                expire: false,
            });
        }
        if let Some((key, v)) = self.get(env, "ssh-keys") {
            c.identity.ssh_authorized_keys = SshKey::lines_of(v)
                .map(|(n, k)| field(format!("{}: line {n}", at(key)), SshKey::parse(k)))
                .collect::<Result<_, _>>()?;
        }
        let wants_network = ["ipv4-address", "ipv4-gateway", "dns-servers", "dns-search"]
            .iter()
            .any(|f| self.entries.iter().any(|(e, _)| e == f));
        if !wants_network {
            return Ok(());
        }
        let mac = match self.get(env, "mac") {
            Some((key, v)) => v.parse::<MacAddr>().map_err(|e| bad(key, e.to_string()))?,
            None => match env.adapters.first() {
                Some(a) => a
                    .mac
                    .parse::<MacAddr>()
                    .map_err(|e| bad("ve:EthernetAdapterSection", format!("adapter mac: {e}")))?,
                None => {
                    warnings.push(
                        "the network properties are mapped but no MAC is known: map a `mac` \
                         property or deploy with the VMware OVF environment transport"
                            .to_string(),
                    );
                    return Ok(());
                }
            },
        };
        let ipv4 = match self.get(env, "ipv4-address") {
            None => Ipv4Config::Dhcp,
            Some((key, v)) => {
                let netmask = self.get(env, "ipv4-netmask");
                let net = ipv4_net(key, v, netmask).map_err(|d| bad(key, d))?;
                Ipv4Config::Static(vec![field(at(key), NicAddr4::new(net))?])
            }
        };
        let mut routes = Vec::new();
        if let Some((key, v)) = self.get(env, "ipv4-gateway") {
            let via: Ipv4Addr = v
                .parse()
                .map_err(|_| bad(key, "not an ipv4 address".to_string()))?;
            routes.push(Route {
                to: "0.0.0.0/0".parse().expect("valid prefix"),
                via: field(at(key), Gateway::new(IpAddr::V4(via)))?,
                metric: Some(DEFAULT_METRIC),
            });
        }
        let mut dns = Dns::default();
        if let Some((key, v)) = self.get(env, "dns-servers") {
            for s in list(v) {
                let a = s.parse().map_err(|_| {
                    bad(
                        key,
                        format!(
                            "{} is not an ip address; use a comma-separated list",
                            crate::model::quote(s)
                        ),
                    )
                })?;
                dns.servers.push(field(at(key), NameServer::new(a))?);
            }
        }
        if let Some((key, v)) = self.get(env, "dns-search") {
            dns.search = list(v)
                .map(|d| field(at(key), DnsName::parse(d)))
                .collect::<Result<_, _>>()?;
        }
        let dhcp_dns = dns.is_empty();
        c.network = Some(Network {
            interfaces: vec![Interface {
                id: InterfaceId::parse("ovf0").expect("a valid interface id"),
                mac,
                set_name: None,
                wake_on_lan: false,
                ip: IpSettings {
                    mtu: None,
                    accept_ra: None,
                    dhcp4_overrides: Default::default(),
                    dhcp6_overrides: Default::default(),
                    ipv4,
                    ipv6: Ipv6Config::Auto,
                    routes,
                    dns: Dns::default(),
                    dhcp_dns,
                },
                start_on_boot: true,
            }],
            dns,
            matched: Vec::new(),
            vlans: Vec::new(),
        });
        Ok(())
    }
}

/// Items of a comma- or space-separated list.
fn list(v: &str) -> impl Iterator<Item = &str> {
    v.split([',', ' ', ';'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// `10.0.0.5/24`, or `10.0.0.5` with a netmask property (dotted or prefix length).
fn ipv4_net(key: &str, v: &str, netmask: Option<(&str, &str)>) -> Result<Ipv4Net, String> {
    if let Ok(net) = v.parse::<Ipv4Net>() {
        return Ok(net);
    }
    let addr: Ipv4Addr = v
        .parse()
        .map_err(|_| format!("{key}: not an ipv4 address such as 10.0.0.5 or 10.0.0.5/24"))?;
    // A bare address with no netmask would be a /32 whose gateway is unreachable.
    let prefix = match netmask {
        Some((mkey, m)) => vmcust_imc::ipv4_prefix(m).map_err(|e| format!("{mkey}: {e}"))?,
        None => {
            return Err(format!(
                "{key}: address {addr} has no prefix length; write it as {addr}/PREFIX or map \
                 ipv4-netmask to the property that holds the netmask"
            ))
        }
    };
    Ipv4Net::new(addr, prefix).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAP: &str = "# appliance\n[properties]\nhostname = guestinfo.hostname\n\
        ipv4-address = ip0\nipv4-netmask = netmask0\nipv4-gateway = gateway\n\
        dns-servers = dns\ndns-search = searchpath\ntime-zone = tz\n";

    fn env(props: &str) -> Environment {
        let xml = format!(
            "<Environment xmlns=\"http://schemas.dmtf.org/ovf/environment/1\" \
             xmlns:oe=\"http://schemas.dmtf.org/ovf/environment/1\" \
             xmlns:ve=\"http://www.vmware.com/schema/ovfenv\"><PropertySection>{props}</PropertySection>\
             <ve:EthernetAdapterSection><ve:Adapter ve:mac=\"00:50:56:aa:bb:cc\" ve:network=\"VM Network\" ve:unitNumber=\"7\"/></ve:EthernetAdapterSection></Environment>"
        );
        vmcust_ovf::parse(xml.as_bytes()).unwrap()
    }

    fn prop(k: &str, v: &str) -> String {
        format!("<Property oe:key=\"{k}\" oe:value=\"{v}\"/>")
    }

    /// The message once carried the source line's indentation in its middle.
    #[test]
    fn an_address_without_a_prefix_is_refused_in_one_clean_sentence() {
        let e = ipv4_net("ipv4-address", "10.0.0.5", None).unwrap_err();
        assert_eq!(
            e,
            "ipv4-address: address 10.0.0.5 has no prefix length; write it as 10.0.0.5/PREFIX \
             or map ipv4-netmask to the property that holds the netmask"
        );
    }

    #[test]
    fn a_static_appliance() {
        let map = PropertyMap::parse(MAP).unwrap();
        let e = env(&[
            prop("guestinfo.hostname", "appliance.example.com"),
            prop("ip0", "10.1.2.3"),
            prop("netmask0", "255.255.255.0"),
            prop("gateway", "10.1.2.1"),
            prop("dns", "10.1.2.53, 10.1.2.54"),
            prop("searchpath", "example.com"),
            prop("tz", "Europe/Berlin"),
        ]
        .concat());
        let mut c = Customization::default();
        let mut w = Vec::new();
        map.apply(&e, &mut c, &mut w).unwrap();
        assert_eq!(
            c.identity.host_name.as_ref().map(|v| v.as_str()),
            Some("appliance")
        );
        assert_eq!(
            c.identity.domain.as_ref().map(|v| v.as_str()),
            Some("example.com")
        );
        assert_eq!(
            c.identity.time_zone.as_ref().map(|v| v.as_str()),
            Some("Europe/Berlin")
        );
        let net = c.network.unwrap();
        let i = &net.interfaces[0];
        assert_eq!(i.mac.to_string(), "00:50:56:aa:bb:cc");
        assert_eq!(
            i.ip.ipv4,
            Ipv4Config::Static(vec!["10.1.2.3/24".parse().unwrap()])
        );
        assert_eq!(i.ip.routes[0].via.to_string(), "10.1.2.1");
        assert_eq!(net.dns.servers.len(), 2);
        assert!(!i.ip.dhcp_dns);
    }

    #[test]
    fn empty_address_means_dhcp() {
        let map = PropertyMap::parse(MAP).unwrap();
        let mut c = Customization::default();
        map.apply(&env(&prop("ip0", "")), &mut c, &mut Vec::new())
            .unwrap();
        assert_eq!(c.network.unwrap().interfaces[0].ip.ipv4, Ipv4Config::Dhcp);
    }

    #[test]
    fn bad_values_and_bad_files_are_errors() {
        let map = PropertyMap::parse(MAP).unwrap();
        let err = map
            .apply(
                &env(&prop("ip0", "10.1.2.300")),
                &mut Customization::default(),
                &mut Vec::new(),
            )
            .unwrap_err();
        assert!(err.to_string().contains("ip0"), "{err}");
        for (text, needle) in [
            ("hostname = x\n", "line 1: mappings go under"),
            ("[props]\n", "unknown section"),
            ("[properties]\nhostnme = x\n", "unknown field \"hostnme\""),
            (
                "[properties]\nhostname\n",
                "expected `field = property-key`",
            ),
        ] {
            let err = PropertyMap::parse(text).unwrap_err();
            assert!(err.contains(needle), "{text:?}: {err}");
        }
    }
}
