//! The vSphere customization spec (`cust.cfg`) as a [`Customization`].
//!
//! The meaning follows cloud-init's IMC handling (reference §5.7) with the deliberate
//! fixes listed in `docs/differences-from-cloud-init.md`: a static NIC's gateway gives a
//! default route even when no NIC is PRIMARY, `IPv4_MODE = DISABLED` disables IPv4,
//! `DNSFROMDHCP` is honoured and `ONBOOT = no` keeps the NIC down at boot.

use std::net::IpAddr;

use ipnet::{IpNet, Ipv4Net, Ipv6Net};
use vmcust_imc::{BootProto, DomainName, Ipv4Mode, Nic, Spec};

use super::field::{field, host_and_domain};
use super::{metadata, Door, Source, SourceData};
use crate::failure::{Failure, FailureKind};
use crate::model::{
    Customization, Dns, Gateway, HardwareClock, Identity, InstanceId, Interface, InterfaceId,
    InvalidValue, IpSettings, Ipv4Config, Ipv6Config, NameServer, Network, NicAddr4, NicAddr6,
    RootPassword, Route,
};

/// The name of this source in messages.
const SOURCE: &str = "cust.cfg";

/// Metric of the first default route; later NICs get +100 each, later gateways of one
/// NIC +1 each, so the first listed gateway of the first NIC wins.
pub(crate) const FIRST_DEFAULT_METRIC: u32 = 100;

/// Translates a validated spec into the engine's model. The spec's own checks come first
/// (`vmcust-imc`); here only what the engine adds: addresses a NIC, a gateway or a name
/// server cannot use.
pub fn customization(spec: &Spec) -> Result<Customization, InvalidValue> {
    let (host_name, host_domain) = match &spec.network.hostname {
        Some(h) => {
            let (h, d) = host_and_domain(&format!("{SOURCE}: [NETWORK] HOSTNAME"), h.as_str())?;
            (Some(h), d)
        }
        None => (None, None),
    };
    let domain = match &spec.network.domain_name {
        Some(DomainName::Set(d)) => Some(d.clone()),
        Some(DomainName::Clear) => None,
        None => host_domain,
    };
    let password = &spec.password;
    let instance_id = match &spec.misc.instance_id {
        Some(id) => Some(field(
            format!("{SOURCE}: [MISC] INSTANCE-ID"),
            InstanceId::parse(id),
        )?),
        None => None,
    };
    Ok(Customization {
        instance_id,
        marker_id: spec.misc.marker_id.clone(),
        identity: Identity {
            host_name,
            domain,
            time_zone: spec.datetime.timezone.clone(),
            hardware_clock: spec.datetime.utc.map(|utc| {
                if utc {
                    HardwareClock::Utc
                } else {
                    HardwareClock::Local
                }
            }),
            root_password: (password.root.is_some() || password.reset).then(|| RootPassword {
                password: password.root.clone(),
                expire: password.reset,
            }),
            ..Default::default()
        },
        network: match &spec.nics {
            Some(nics) => Some(network(nics, spec)?),
            None => None,
        },
        custom_script: spec.custom_script.clone(),
    })
}

fn network(nics: &[Nic], spec: &Spec) -> Result<Network, InvalidValue> {
    let servers = spec
        .dns
        .nameservers
        .iter()
        .enumerate()
        .map(|(i, a)| {
            field(
                format!("{SOURCE}: [DNS] NAMESERVER|{}", i + 1),
                NameServer::new(*a),
            )
        })
        .collect::<Result<_, _>>()?;
    let dns = Dns {
        servers,
        search: spec.dns.suffixes.to_vec(),
    };
    // cloud-init drops DHCP DNS whenever the spec has servers or suffixes; an explicit
    // DNSFROMDHCP wins over that guess.
    let dhcp_dns = spec.dns.from_dhcp.unwrap_or(dns.is_empty());
    let routes = default_routes(nics)?;
    let interfaces = nics
        .iter()
        .zip(routes)
        .map(|(nic, routes)| {
            let at = |key: &str| format!("{SOURCE}: [{}] {key}", nic.name);
            let ipv6 = if nic.ipv6.is_empty() {
                Ipv6Config::Auto
            } else {
                let addrs = nic
                    .ipv6
                    .iter()
                    .enumerate()
                    .map(|(i, e)| {
                        let net = Ipv6Net::new(e.address, e.prefix).expect("prefix checked by imc");
                        field(at(&format!("IPv6ADDR|{}", i + 1)), NicAddr6::new(net))
                    })
                    .collect::<Result<_, _>>()?;
                Ipv6Config::Static(addrs)
            };
            Ok(Interface {
                id: field(at("section name"), InterfaceId::parse(&nic.name))?,
                mac: nic.mac,
                set_name: None,
                wake_on_lan: false,
                ip: IpSettings {
                    mtu: None,
                    accept_ra: None,
                    dhcp4_overrides: Default::default(),
                    dhcp6_overrides: Default::default(),
                    ipv4: ipv4(nic)?,
                    ipv6,
                    routes,
                    dns: Dns::default(),
                    dhcp_dns,
                },
                start_on_boot: nic.onboot != Some(false),
            })
        })
        .collect::<Result<_, InvalidValue>>()?;
    Ok(Network {
        interfaces,
        dns,
        matched: Vec::new(),
        vlans: Vec::new(),
    })
}

fn ipv4(nic: &Nic) -> Result<Ipv4Config, InvalidValue> {
    if nic.ipv4_mode == Ipv4Mode::Disabled {
        return Ok(Ipv4Config::Disabled);
    }
    Ok(match (nic.bootproto, nic.ipv4) {
        (BootProto::Static, Some(s)) => {
            let net = Ipv4Net::new(s.address, s.prefix).expect("prefix checked by imc");
            Ipv4Config::Static(vec![field(
                format!("{SOURCE}: [{}] IPADDR", nic.name),
                NicAddr4::new(net),
            )?])
        }
        _ => Ipv4Config::Dhcp,
    })
}

fn is_static_v4(nic: &Nic) -> bool {
    nic.ipv4_mode != Ipv4Mode::Disabled && nic.bootproto == BootProto::Static && nic.ipv4.is_some()
}

/// Default routes per NIC. With a PRIMARY NIC only it gets default routes (as in
/// cloud-init); without one, every static NIC with a gateway does, ranked by NIC order.
fn default_routes(nics: &[Nic]) -> Result<Vec<Vec<Route>>, InvalidValue> {
    let any_primary = nics.iter().any(|n| n.primary);
    let eligible = |n: &Nic| !any_primary || n.primary;
    let mut out: Vec<Vec<Route>> = vec![Vec::new(); nics.len()];
    let mut add = |gateways: Vec<(usize, IpAddr, String)>, to: IpNet| {
        let mut rank = 0;
        let mut last_nic = None;
        for (i, via, key) in gateways {
            if last_nic.is_some_and(|l| l != i) {
                rank += 1;
            }
            let nth = out[i].iter().filter(|r| r.to == to).count() as u32;
            let place = format!("{SOURCE}: [{}] {key}", nics[i].name);
            out[i].push(Route {
                to,
                via: field(place, Gateway::new(via))?,
                metric: Some(FIRST_DEFAULT_METRIC * (rank + 1) + nth),
            });
            last_nic = Some(i);
        }
        Ok::<(), InvalidValue>(())
    };
    let v4 = nics
        .iter()
        .enumerate()
        .filter(|(_, n)| eligible(n) && is_static_v4(n))
        .flat_map(|(i, n)| {
            n.gateways
                .iter()
                .map(move |g| (i, IpAddr::V4(*g), "GATEWAY".to_string()))
        })
        .collect();
    add(v4, "0.0.0.0/0".parse().expect("valid prefix"))?;
    let v6 = nics
        .iter()
        .enumerate()
        .filter(|(_, n)| eligible(n))
        .flat_map(|(i, n)| {
            n.ipv6.iter().enumerate().filter_map(move |(k, e)| {
                e.gateway
                    .map(|g| (i, IpAddr::V6(g), format!("IPv6GATEWAY|{}", k + 1)))
            })
        })
        .collect();
    add(v6, "::/0".parse().expect("valid prefix"))?;
    Ok(out)
}

/// Largest companion file read next to a spec (raw cloud-init metadata, user-data).
pub(crate) const MAX_COMPANION_FILE: u64 = 16 * 1024 * 1024;

/// A vSphere spec and where its companion files are.
pub(crate) struct ImcInput {
    /// The validated spec.
    pub parsed: vmcust_imc::Parsed,
    /// The directory the spec's companion files are in (the pending copy at boot, the
    /// spec's own directory on the command line).
    pub dir: std::path::PathBuf,
    /// The spec's name in messages (`cust.cfg` at boot, the path given on the command line).
    pub name: String,
}

/// What a vSphere spec asks of the boot engine besides the customization itself.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ImcOptions {
    /// `POST-GC-STATUS`: report progress in `guestinfo.gc.status`.
    pub post_gc_status: bool,
    /// `DEFAULT-RUN-POST-CUST-SCRIPT`: run scripts when tools.conf does not say.
    pub default_run_post_cust_script: bool,
    /// The spec carries raw cloud-init data instead of a traditional customization.
    pub raw_cloud_init: bool,
}

/// The vSphere guest customization spec: the pending copy of what open-vm-tools handed
/// over at boot (the early stage takes it in and validates it first), `--imc FILE` on the
/// command line.
pub(crate) struct Imc;

impl Source for Imc {
    fn names(&self) -> &'static [&'static str] {
        &["imc"]
    }

    fn read(&self, door: &mut Door) -> Result<Vec<SourceData>, Failure> {
        let Some(imc) = door.imc.take() else {
            return Ok(Vec::new());
        };
        read_spec(imc).map(|d| vec![d])
    }
}

fn read_spec(imc: ImcInput) -> Result<SourceData, Failure> {
    let spec = &imc.parsed.spec;
    let mut data = SourceData::new("imc", imc.name.clone());
    data.warnings.extend(
        imc.parsed
            .warnings
            .iter()
            .map(|w| format!("{}: {w}", imc.name)),
    );
    if let (Some(line), Some(_)) = (spec.datetime.timezone_line, &spec.datetime.timezone) {
        data.places.insert(
            "time-zone",
            format!("{}: line {line}: [DATETIME] TIMEZONE", imc.name),
        );
    }
    let raw = spec.kind() == vmcust_imc::SpecKind::RawCloudInit;
    data.imc = Some(ImcOptions {
        post_gc_status: spec.misc.post_gc_status,
        default_run_post_cust_script: spec.misc.default_run_post_cust_script,
        raw_cloud_init: raw,
    });
    if !raw {
        data.customization = customization(spec)?;
        return Ok(data);
    }
    // Raw cloud-init data: the metadata file is applied like guestinfo metadata, the
    // user-data kept for the late stage (cloud-init reference §5.6).
    let md_name = spec
        .cloudinit
        .metadata
        .as_ref()
        .map_or("metadata", |f| f.as_str());
    let text = read_companion(&imc.dir, md_name, FailureKind::MetadataMissing)?;
    let bad_meta =
        |e: metadata::MetadataError| Failure::new(FailureKind::MetadataFormat, e.to_string());
    let md = metadata::parse(md_name, &text).map_err(bad_meta)?;
    let (mut c, warnings) = metadata::customization(md_name, &md).map_err(bad_meta)?;
    if c.instance_id.is_none() {
        if let Some(id) = &spec.misc.instance_id {
            c.instance_id =
                Some(InstanceId::parse(id).map_err(|e| {
                    Failure::invalid(format!("{}: [MISC] INSTANCE-ID: {e}", imc.name))
                })?);
        }
    }
    data.warnings
        .extend(warnings.into_iter().map(|w| format!("{md_name}: {w}")));
    if let Some(name) = &spec.cloudinit.userdata {
        let ud = read_companion(&imc.dir, name.as_str(), FailureKind::UserDataMissing)?;
        data.user_data = data.own(Some(ud.replace('\r', "").into_bytes()));
    }
    data.raw_metadata = Some(text.into_bytes());
    data.customization = c;
    Ok(data)
}

/// A companion file of the spec as text, bounded in size; missing is `missing`.
fn read_companion(
    dir: &std::path::Path,
    name: &str,
    missing: FailureKind,
) -> Result<String, Failure> {
    let path = dir.join(name);
    let file = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Failure::new(
                missing,
                format!(
                    "{name} is not in the customization package (looked in {})",
                    dir.display()
                ),
            ))
        }
        Err(e) => return Err(Failure::io(format!("reading {}: {e}", path.display()))),
    };
    let bytes = match vmcust_imc::read_capped(file, MAX_COMPANION_FILE, "companion file") {
        Ok(b) => b,
        Err(vmcust_imc::CappedReadError::TooLarge { .. }) => {
            return Err(Failure::new(
                missing,
                format!("{name} is larger than {MAX_COMPANION_FILE} bytes"),
            ))
        }
        Err(e) => return Err(Failure::io(format!("reading {}: {e}", path.display()))),
    };
    String::from_utf8(bytes).map_err(|_| Failure::new(missing, format!("{name} is not UTF-8 text")))
}
