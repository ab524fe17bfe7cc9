//! ifupdown brings interfaces up from our ENI file in a real network namespace: for each
//! example spec, every interface that needs no DHCP server gets a veth device with the
//! spec's MAC inside a fresh namespace, `ifup` runs against the rendered
//! `interfaces.d/50-vmcust`, and `ip addr` / `ip route` must show the static addresses
//! and every gateway with its metric. DHCP interfaces are left out: the namespace has
//! no DHCP server. The link keys network must also get its MTUs and `accept_ra`. Needs
//! root, `ip` (iproute2) and `ifup` (ifupdown).

mod support;

use std::path::Path;

use support::network::{
    example_names, expected, link_keys_network, render_tree, shows_route, specs, Netns,
};
use support::{require_root, require_tool};
use vmcust::model::{Ipv4Config, Ipv6Config};
use vmcust::plan::network::Renderer;

#[test]
fn ifup_configures_static_addresses_and_gateways_from_our_files() {
    require_root("ip netns and ifup");
    require_tool("ip", "iproute2");
    require_tool("ifup", "ifupdown");
    let names = example_names();
    let mut checked = 0;
    // The example specs, and the link keys (MTU, accept-ra).
    let link_keys = ("link-keys".to_string(), link_keys_network());
    for (spec, net) in specs().into_iter().chain([link_keys]) {
        let tree = render_tree(&net, Renderer::Eni);
        let eni = tree.path().join("etc/network/interfaces.d/50-vmcust");
        let state = tempfile::tempdir().unwrap();
        let ns = Netns::new("eni");
        ns.exec("ip", &["link", "set", "lo", "up"]);
        let want = expected(&net);
        for (i, iface) in net.interfaces.iter().enumerate() {
            if iface.ipv4 == Ipv4Config::Dhcp || iface.ipv6 == Ipv6Config::Dhcp {
                continue;
            }
            let mac = iface.mac.to_string();
            let name = names
                .iter()
                .find(|(_, m)| **m == mac)
                .map(|(n, _)| n.as_str())
                .unwrap();
            ns.add_nic(name, &mac, &format!("vmcpeer{i}"));
            up(&ns, &eni, state.path(), name);

            let addrs = ns.exec("ip", &["-o", "addr", "show", "dev", name]);
            for a in &want.addresses[&mac] {
                assert!(
                    addrs.contains(&format!(" {a} ")),
                    "{spec}: {a} missing on {name}:\n{addrs}"
                );
            }
            let routes = ns.exec("ip", &["route", "show", "dev", name])
                + &ns.exec("ip", &["-6", "route", "show", "dev", name]);
            for (to, via, metric) in &want.routes[&mac] {
                let found = shows_route(&routes, to, via, *metric);
                assert!(
                    found,
                    "{spec}: route {to} via {via} metric {metric:?} missing on {name}:\n{routes}"
                );
            }
            if let Some(mtu) = iface.mtu {
                let link = ns.exec("ip", &["-o", "link", "show", "dev", name]);
                assert!(
                    link.contains(&format!(" mtu {mtu} ")),
                    "{spec}: mtu {mtu} missing on {name}:\n{link}"
                );
            }
            if let Some(ra) = iface.accept_ra {
                let path = format!("/proc/sys/net/ipv6/conf/{name}/accept_ra");
                let got = ns.exec("cat", &[&path]);
                assert_eq!(got.trim(), if ra { "1" } else { "0" }, "{spec}: {path}");
            }
            checked += 1;
        }
    }
    assert!(checked >= 3, "expected several static interfaces to check");
}

fn up(ns: &Netns, eni: &Path, state: &Path, name: &str) {
    let eni = eni.to_str().unwrap();
    let state = state.to_str().unwrap();
    ns.exec("ifup", &["-v", "-i", eni, "--state-dir", state, name]);
}
