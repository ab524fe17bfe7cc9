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
use vmcust::test_api::model::{Ipv4Config, Ipv6Config};
use vmcust::test_api::network::Renderer;

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
            if iface.ip.ipv4 == Ipv4Config::Dhcp || iface.ip.ipv6 == Ipv6Config::Dhcp {
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
            if let Some(mtu) = iface.ip.mtu {
                let link = ns.exec("ip", &["-o", "link", "show", "dev", name]);
                assert!(
                    link.contains(&format!(" mtu {mtu} ")),
                    "{spec}: mtu {mtu} missing on {name}:\n{link}"
                );
            }
            if let Some(ra) = iface.ip.accept_ra {
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

/// The VLANs (`vlans`): ifupdown creates `eth0.100` by itself (a `<link>.<id>` name,
/// after bringing its link up) and `storage` through our `pre-up`, each on its link with
/// its id, addresses, routes, MTU and accept_ra. `ifup --no-act` shows what ifupdown
/// makes of our file; where the kernel has 802.1Q (this machine's has not), the VLANs
/// are then really brought up and checked.
#[test]
fn ifup_creates_the_vlans() {
    require_root("ip netns and ifup");
    require_tool("ip", "iproute2");
    require_tool("ifup", "ifupdown");
    let net = support::network::vlan_network();
    let tree = render_tree(&net, Renderer::Eni);
    let eni = tree.path().join("etc/network/interfaces.d/50-vmcust");
    let state = tempfile::tempdir().unwrap();
    let ns = Netns::new("eni-vlan");
    ns.exec("ip", &["link", "set", "lo", "up"]);
    ns.add_nic("eth0", "00:50:56:a6:8c:08", "vmcpeer0");
    ns.add_nic("ens224", "00:50:56:a6:ef:7d", "vmcpeer1");
    let eni_s = eni.to_str().unwrap();
    let state_s = state.path().to_str().unwrap();
    // With --verbose, ifupdown lists the commands it would run on stderr.
    let out = std::process::Command::new("ip")
        .args([
            "netns", "exec", &ns.0, "ifup", "--no-act", "-v", "-i", eni_s,
        ])
        .args(["--state-dir", state_s, "eth0.100", "storage"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let plan =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    for want in [
        "ip link add link eth0 name eth0.100 type vlan id 100",
        "ip addr add 10.100.0.5/255.255.255.0 broadcast 10.100.0.255",
        "ip link set dev eth0.100 mtu 1400",
        "ip route add default via 10.100.0.1  dev eth0.100",
        "ip route add 192.168.0.0/16 via 10.100.0.254 dev eth0.100 metric 50",
        "net.ipv6.conf.eth0/100.accept_ra=0",
        "ip -6 addr add fd00:100::5/64  dev eth0.100",
        "ip link add link ens224 name storage type vlan id 200",
        "ip addr add 10.200.0.5/255.255.255.0 broadcast 10.200.0.255",
    ] {
        assert!(plan.contains(want), "ifup would not run {want:?}:\n{plan}");
    }

    let probe = std::process::Command::new("ip")
        .args([
            "netns", "exec", &ns.0, "ip", "link", "add", "link", "vmcpeer0",
        ])
        .args(["name", "vmcprobe", "type", "vlan", "id", "4094"])
        .output()
        .unwrap();
    if !probe.status.success() {
        // No 802.1Q in this kernel: what ifupdown runs is checked above.
        return;
    }
    ns.exec("ip", &["link", "del", "vmcprobe"]);
    for name in ["eth0", "ens224", "eth0.100", "storage"] {
        up(&ns, &eni, state.path(), name);
    }
    for (dev, kind, items) in [
        (
            "eth0.100",
            "vlan protocol 802.1Q id 100 ",
            &[" 10.100.0.5/24 ", " fd00:100::5/64 ", " mtu 1400 "][..],
        ),
        (
            "storage",
            "vlan protocol 802.1Q id 200 ",
            &[" 10.200.0.5/24 "][..],
        ),
    ] {
        let shown = ns
            .exec("ip", &["-d", "addr", "show", "dev", dev])
            .replace('\n', " ");
        for item in std::iter::once(kind).chain(items.iter().copied()) {
            assert!(shown.contains(item), "{item:?} missing on {dev}: {shown}");
        }
    }
    let routes = ns.exec("ip", &["route", "show", "dev", "eth0.100"]);
    assert!(
        shows_route(&routes, "192.168.0.0/16", "10.100.0.254", Some(50)),
        "{routes}"
    );
    // ifdown takes our VLAN away again (`post-down`).
    ns.exec("ifdown", &["-i", eni_s, "--state-dir", state_s, "storage"]);
    let links = ns.exec("ip", &["-o", "link", "show"]);
    assert!(!links.contains(" storage@"), "{links}");
}
