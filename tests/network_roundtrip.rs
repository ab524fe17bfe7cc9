//! Property test of the writers: for any network the model accepts (random host names,
//! search domains, addresses, gateways, metrics, name servers), every renderer's files
//! read back — sourced files by bash itself — to exactly the addresses, routes and DNS
//! given, and nothing else. A value that could add a line, a key or a command would show
//! up here as an extra or a missing item.

mod support;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::{IpNet, Ipv4Net, Ipv6Net};
use proptest::prelude::*;
use support::network::{example_names, expected, parse, render_tree, renderers};
use vmcust::test_api::model::{
    Dns, DnsName, Gateway, Interface, InterfaceId, IpSettings, Ipv4Config, Ipv6Config, MacAddr,
    NameServer, Network, NicAddr4, NicAddr6, Route,
};

/// The example root's MACs, so the devices resolve.
const MACS: [&str; 3] = [
    "00:50:56:a6:8c:08",
    "00:50:56:a6:ef:7d",
    "00:50:56:a6:5a:de",
];

fn dns_name() -> impl Strategy<Value = DnsName> {
    proptest::collection::vec("[a-z][a-z0-9-]{0,8}[a-z0-9]", 1..4)
        .prop_filter_map("valid dns name", |labels| {
            DnsName::parse(&labels.join(".")).ok()
        })
}

fn nic_addr4() -> impl Strategy<Value = NicAddr4> {
    (any::<u32>(), 8u8..=30).prop_filter_map("usable ipv4 address", |(a, p)| {
        NicAddr4::new(Ipv4Net::new(Ipv4Addr::from(a), p).ok()?).ok()
    })
}

fn nic_addr6() -> impl Strategy<Value = NicAddr6> {
    (any::<u64>(), 48u8..=64).prop_filter_map("usable ipv6 address", |(low, p)| {
        let a = Ipv6Addr::from((0xfd00_u128 << 112) | u128::from(low));
        NicAddr6::new(Ipv6Net::new(a, p).ok()?).ok()
    })
}

fn gateway4() -> impl Strategy<Value = Gateway> {
    any::<u32>().prop_filter_map("usable gateway", |a| {
        Gateway::new(IpAddr::V4(Ipv4Addr::from(a))).ok()
    })
}

fn name_server() -> impl Strategy<Value = NameServer> {
    prop_oneof![
        any::<u32>().prop_map(|a| IpAddr::V4(Ipv4Addr::from(a))),
        any::<u64>().prop_map(|a| IpAddr::V6(Ipv6Addr::from((0xfd53_u128 << 112) | u128::from(a)))),
    ]
    .prop_filter_map("usable name server", |a| NameServer::new(a).ok())
}

fn interface(mac: &'static str) -> impl Strategy<Value = Interface> {
    (
        proptest::collection::vec(nic_addr4(), 1..3),
        proptest::option::of(nic_addr6()),
        proptest::option::of((gateway4(), 1u32..1000)),
    )
        .prop_map(move |(v4, v6, gw)| Interface {
            id: InterfaceId::parse("nic").unwrap(),
            mac: mac.parse::<MacAddr>().unwrap(),
            set_name: None,
            wake_on_lan: false,
            ip: IpSettings {
                mtu: None,
                accept_ra: None,
                dhcp4_overrides: Default::default(),
                dhcp6_overrides: Default::default(),
                ipv4: Ipv4Config::Static(v4),
                ipv6: match v6 {
                    Some(a) => Ipv6Config::Static(vec![a]),
                    None => Ipv6Config::Auto,
                },
                routes: gw
                    .map(|(via, metric)| Route {
                        to: IpNet::V4(Ipv4Net::default()),
                        via,
                        metric: Some(metric),
                    })
                    .into_iter()
                    .collect(),
                dns: Dns::default(),
                dhcp_dns: false,
            },
            start_on_boot: true,
        })
}

fn network() -> impl Strategy<Value = Network> {
    (
        interface(MACS[0]),
        proptest::option::of(interface(MACS[1])),
        proptest::collection::vec(name_server(), 0..3),
        proptest::collection::vec(dns_name(), 0..3),
    )
        .prop_map(|(first, second, servers, search)| {
            let mut servers = servers;
            servers.dedup();
            let mut search = search;
            search.dedup();
            Network {
                interfaces: std::iter::once(first).chain(second).collect(),
                dns: Dns { servers, search },
                matched: Vec::new(),
                vlans: Vec::new(),
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn every_renderer_reads_back_exactly_what_the_model_holds(net in network()) {
        let names = example_names();
        let want = expected(&net);
        for renderer in renderers() {
            let tree = render_tree(&net, renderer);
            let got = parse(renderer, tree.path(), &names);
            prop_assert_eq!(&got, &want, "rendered by {}", renderer.name());
        }
    }
}
