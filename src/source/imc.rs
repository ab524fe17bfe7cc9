//! The vSphere customization spec (`cust.cfg`) as a [`Customization`].
//!
//! The meaning follows cloud-init's IMC handling (reference §5.7) with the deliberate
//! fixes listed in `docs/differences-from-cloud-init.md`: a static NIC's gateway gives a
//! default route even when no NIC is PRIMARY, `IPv4_MODE = DISABLED` disables IPv4,
//! `DNSFROMDHCP` is honoured and `ONBOOT = no` keeps the NIC down at boot.

use std::net::IpAddr;

use ipnet::{IpNet, Ipv4Net, Ipv6Net};
use vmcust_imc::{BootProto, DomainName, Ipv4Mode, Nic, Spec};

use crate::model::{
    Customization, Dns, HardwareClock, Identity, Interface, Ipv4Config, Ipv6Config, Network,
    RootPassword, Route,
};

/// Metric of the first default route; later NICs get +100 each, later gateways of one
/// NIC +1 each, so the first listed gateway of the first NIC wins.
pub const FIRST_DEFAULT_METRIC: u32 = 100;

/// Translates a validated spec into the engine's model.
pub fn customization(spec: &Spec) -> Customization {
    let hostname = spec.network.hostname.as_ref();
    let domain = match &spec.network.domain_name {
        Some(DomainName::Set(d)) => Some(d.as_str().to_string()),
        Some(DomainName::Clear) => None,
        None => hostname.and_then(|h| h.domain()).map(str::to_string),
    };
    let password = &spec.password;
    Customization {
        instance_id: spec.misc.instance_id.clone(),
        marker_id: spec.misc.marker_id.as_ref().map(|m| m.as_str().to_string()),
        identity: Identity {
            host_name: hostname.map(|h| h.short().to_string()),
            domain,
            time_zone: spec
                .datetime
                .timezone
                .as_ref()
                .map(|t| t.as_str().to_string()),
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
        network: spec.nics.as_ref().map(|nics| network(nics, spec)),
        custom_script: spec.custom_script.as_ref().map(|s| s.as_str().to_string()),
    }
}

fn network(nics: &[Nic], spec: &Spec) -> Network {
    let dns = Dns {
        servers: spec.dns.nameservers.clone(),
        search: spec
            .dns
            .suffixes
            .iter()
            .map(|s| s.as_str().to_string())
            .collect(),
    };
    // cloud-init drops DHCP DNS whenever the spec has servers or suffixes; an explicit
    // DNSFROMDHCP wins over that guess.
    let dhcp_dns = spec.dns.from_dhcp.unwrap_or(dns.is_empty());
    let routes = default_routes(nics);
    let interfaces = nics
        .iter()
        .zip(routes)
        .map(|(nic, routes)| Interface {
            id: nic.name.clone(),
            mac: nic.mac,
            ipv4: ipv4(nic),
            ipv6: if nic.ipv6.is_empty() {
                Ipv6Config::Auto
            } else {
                Ipv6Config::Static(
                    nic.ipv6
                        .iter()
                        .map(|e| Ipv6Net::new(e.address, e.prefix).expect("prefix checked by imc"))
                        .collect(),
                )
            },
            routes,
            dns: Dns::default(),
            dhcp_dns,
            start_on_boot: nic.onboot != Some(false),
        })
        .collect();
    Network { interfaces, dns }
}

fn ipv4(nic: &Nic) -> Ipv4Config {
    if nic.ipv4_mode == Ipv4Mode::Disabled {
        return Ipv4Config::Disabled;
    }
    match (nic.bootproto, nic.ipv4) {
        (BootProto::Static, Some(s)) => Ipv4Config::Static(vec![
            Ipv4Net::new(s.address, s.prefix).expect("prefix checked by imc")
        ]),
        _ => Ipv4Config::Dhcp,
    }
}

/// Default routes per NIC. With a PRIMARY NIC only it gets default routes (as in
/// cloud-init); without one, every static NIC with a gateway does, ranked by NIC order.
fn default_routes(nics: &[Nic]) -> Vec<Vec<Route>> {
    let any_primary = nics.iter().any(|n| n.primary);
    let eligible = |n: &Nic| !any_primary || n.primary;
    let mut out: Vec<Vec<Route>> = vec![Vec::new(); nics.len()];
    let mut add = |gateways: Vec<(usize, IpAddr)>, to: IpNet| {
        let mut rank = 0;
        let mut last_nic = None;
        for (i, via) in gateways {
            if last_nic.is_some_and(|l| l != i) {
                rank += 1;
            }
            let nth = out[i].iter().filter(|r| r.to == to).count() as u32;
            out[i].push(Route {
                to,
                via,
                metric: Some(FIRST_DEFAULT_METRIC * (rank + 1) + nth),
            });
            last_nic = Some(i);
        }
    };
    let v4: Vec<(usize, IpAddr)> = nics
        .iter()
        .enumerate()
        .filter(|(_, n)| eligible(n) && matches!(ipv4(n), Ipv4Config::Static(_)))
        .flat_map(|(i, n)| n.gateways.iter().map(move |g| (i, IpAddr::V4(*g))))
        .collect();
    add(v4, "0.0.0.0/0".parse().expect("valid prefix"));
    let v6: Vec<(usize, IpAddr)> = nics
        .iter()
        .enumerate()
        .filter(|(_, n)| eligible(n))
        .flat_map(|(i, n)| {
            n.ipv6
                .iter()
                .filter_map(move |e| e.gateway.map(|g| (i, IpAddr::V6(g))))
        })
        .collect();
    add(v6, "::/0".parse().expect("valid prefix"));
    out
}
