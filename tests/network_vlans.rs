//! VLANs (network config v2 `vlans`, VM Service's shape) through every renderer: each
//! must write exactly the files under `tests/golden/network-vlans/<renderer>/`
//! (regenerate after an intended change with
//! `UPDATE_GOLDEN=1 cargo test --test network_vlans`, then review the diff); the
//! reader's refusals, each naming the key; `netplan generate` and `nmcli --offline`
//! reading what we wrote. systemd-networkd and ifupdown creating the VLANs in a network
//! namespace are checked in `network_networkd.rs` and `network_eni.rs`.

mod support;

use std::fs;
use std::process::Command;

use support::network::{
    example_facts, nmcli_roundtrip, render_tree, renderers, vlan_network, vmcust_guestinfo_network,
};
use support::{check_golden_tree, files, repo, require_tool};
use vmcust::test_api::network::{plan_network, Renderer};

#[test]
fn every_renderer_writes_the_vlans() {
    let net = vlan_network();
    for renderer in renderers() {
        let tree = render_tree(&net, renderer);
        let golden = repo()
            .join("tests/golden/network-vlans")
            .join(renderer.name());
        check_golden_tree(&golden, &files(tree.path()));
    }
}

fn translate(doc: &str) -> Result<vmcust::test_api::model::Network, String> {
    let value: serde_norway::Value = serde_norway::from_str(doc).unwrap();
    vmcust::test_api::netconfig::translate(&value)
        .map(|t| t.network.unwrap())
        .map_err(|e| e.to_string())
}

const ETH: &str = "version: 2
ethernets:
  id0:
    match: {macaddress: '00:50:56:a6:8c:08'}
    set-name: eth0
    dhcp4: true
  id1:
    match: {macaddress: '00:50:56:a6:ef:7d'}
    dhcp4: true
";

#[test]
fn bad_vlans_are_refused_naming_the_key() {
    let cases = [
        (
            "  v: {id: 4095, link: id0}",
            "vlans.v.id: 4095 is not a VLAN id; use 0-4094",
        ),
        (
            "  v: {id: 70000, link: id0}",
            "vlans.v.id: 70000 is not a VLAN id",
        ),
        ("  v: {id: -1, link: id0}", "vlans.v"),
        ("  v: {link: id0}", "vlans.v: id is missing"),
        ("  v: {id: 5}", "vlans.v: link is missing"),
        ("  v:", "vlans.v: empty; a VLAN needs id"),
        (
            "  v: {id: 5, link: bond0}",
            "vlans.v.link: \"bond0\" is not one of the ethernets (id0, id1)",
        ),
        (
            "  averyveryverylongname: {id: 5, link: id0}",
            "vlans.averyveryverylongname: \"averyveryverylongname\" cannot name a NIC",
        ),
        ("  'a b': {id: 5, link: id0}", "vlans.a b: interface name"),
        (
            "  id1: {id: 5, link: id0}",
            "vlans.id1: ethernets.id1 has the name id1 too",
        ),
        (
            "  eth0: {id: 5, link: id0}",
            "vlans.eth0: ethernets.id0.set-name has the name eth0 too",
        ),
        (
            "  a: {id: 5, link: id0}\n  b: {id: 5, link: id0}",
            "vlans.b: vlans.a is VLAN 5 on id0 already",
        ),
        (
            "  v: {id: 5, link: id0, set-name: x}",
            "vlans.v: match, set-name and wakeonlan belong to the ethernet",
        ),
        (
            "  v: {id: 5, link: id0, dhcp4: true, addresses: [10.0.0.5/24]}",
            "vlans.v: both dhcp4 and static ipv4 addresses",
        ),
        ("  v: {id: 5, link: id0, mtu: 20}", "vlans.v.mtu:"),
        (
            "  v: {id: 5, link: id0, gateway4: 'fc00::1'}",
            "vlans.v.gateway4:",
        ),
    ];
    for (vlans, want) in cases {
        let doc = format!("{ETH}vlans:\n{vlans}\n");
        let e = translate(&doc).unwrap_err();
        assert!(e.contains(want), "{vlans}: {e}");
    }
    // Same id on two links, and id 0 (priority tagging), are fine.
    let ok = translate(&format!(
        "{ETH}vlans:\n  a: {{id: 5, link: id0}}\n  b: {{id: 5, link: id1}}\n  c: {{id: 0, link: id0}}\n"
    ))
    .unwrap();
    assert_eq!(ok.vlans.len(), 3);
    // Bonds and bridges stay refused.
    for kind in ["bonds", "bridges"] {
        let e = translate(&format!("{ETH}{kind}:\n  x: {{interfaces: [id0]}}\n")).unwrap_err();
        assert!(
            e.contains(&format!(
                "{kind} are not supported; only ethernets and vlans"
            )),
            "{e}"
        );
    }
}

#[test]
fn a_vlan_on_an_entry_that_matches_several_nics_is_refused() {
    let doc = "version: 2
ethernets:
  all:
    match: {name: 'ens*'}
    dhcp4: true
vlans:
  v: {id: 7, link: all}
";
    let net = translate(doc).unwrap();
    let e = plan_network(&net, &example_facts(), Some(Renderer::Networkd))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("ethernets.all: name ens* matches ")
            && e.contains("but a VLAN is stacked on it, so it must match exactly one"),
        "{e}"
    );
}

#[test]
fn a_vlan_named_like_a_configured_nic_is_refused() {
    // `ens224` is the kernel's name of the NIC `id1` configures.
    let doc = format!("{ETH}vlans:\n  ens224: {{id: 7, link: id0}}\n");
    let net = translate(&doc).unwrap();
    let e = plan_network(&net, &example_facts(), Some(Renderer::Netplan))
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "vlans.ens224: the NIC with MAC address 00:50:56:a6:ef:7d (ens224) has that name too; \
         give the VLAN a name of its own (such as eth0.7)"
    );
}

#[test]
fn netplan_generate_makes_the_vlan_netdevs() {
    require_tool("netplan", "netplan.io");
    let tree = render_tree(&vlan_network(), Renderer::Netplan);
    let out = Command::new("netplan")
        .args(["generate", "--root-dir"])
        .arg(tree.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "netplan generate: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = tree.path().join("run/systemd/network");
    let netdev = fs::read_to_string(run.join("10-netplan-eth0.100.netdev")).unwrap();
    assert!(
        netdev.contains("Name=eth0.100")
            && netdev.contains("Kind=vlan")
            && netdev.contains("Id=100"),
        "{netdev}"
    );
    let storage = fs::read_to_string(run.join("10-netplan-storage.netdev")).unwrap();
    assert!(storage.contains("Id=200"), "{storage}");
    let parent = fs::read_to_string(run.join("10-netplan-eth0.network")).unwrap();
    assert!(parent.contains("VLAN=eth0.100"), "{parent}");
    let vlan = fs::read_to_string(run.join("10-netplan-eth0.100.network")).unwrap();
    for line in [
        "Address=10.100.0.5/24",
        "Address=fd00:100::5/64",
        "Gateway=10.100.0.1",
        "Destination=192.168.0.0/16",
        "DNS=10.100.0.2",
        "Domains=vlan.example",
        "IPv6AcceptRA=no",
        "MTUBytes=1400",
    ] {
        assert!(vlan.contains(line), "{line} missing:\n{vlan}");
    }
}

#[test]
fn networkmanager_reads_the_vlan_profiles() {
    require_tool("nmcli", "network-manager");
    let tree = render_tree(&vlan_network(), Renderer::NetworkManager);
    let dir = tree.path().join("etc/NetworkManager/system-connections");
    let uuid = |file: &str| {
        let text = fs::read_to_string(dir.join(file)).unwrap();
        let line = text.lines().find(|l| l.starts_with("uuid=")).unwrap();
        line["uuid=".len()..].to_string()
    };
    for (file, link, want) in [
        (
            "vmcust-eth0.100.nmconnection",
            "vmcust-eth0.nmconnection",
            &[
                "type=vlan",
                "interface-name=eth0.100",
                "id=100",
                "address1=10.100.0.5/24",
                "mtu=1400",
            ][..],
        ),
        (
            "vmcust-storage.nmconnection",
            "vmcust-ens224.nmconnection",
            &["type=vlan", "interface-name=storage", "id=200"][..],
        ),
    ] {
        // `nmcli --offline connection modify` parses the keyfile, verifies the profile
        // (a VLAN needs an id and a parent) and prints it as NetworkManager stores it.
        let keyfile = fs::read_to_string(dir.join(file)).unwrap();
        let shown = nmcli_roundtrip(&keyfile).unwrap_or_else(|e| panic!("{file}: {e}"));
        let lines: Vec<&str> = shown.lines().collect();
        for w in want {
            assert!(lines.contains(w), "{file}: {w} missing:\n{shown}");
        }
        // The parent is the link's profile, by UUID.
        let parent = format!("parent={}", uuid(link));
        assert!(
            lines.contains(&parent.as_str()),
            "{file}: {parent} missing:\n{shown}"
        );
    }
}

/// `vmcust plan` on guestinfo metadata in VM Service's shape lists the VLAN and the
/// files it gets, with every renderer; a bad id exits 65 naming the key.
#[test]
fn plan_shows_the_vlan() {
    let network = "ethernets:
  eth0:
    match: {macaddress: '00:50:56:a6:8c:08'}
    set-name: eth0
    dhcp4: true
version: 2
vlans:
  eth0.100: {accept-ra: false, dhcp4: false, dhcp6: false, id: 100, link: eth0, addresses: [10.100.0.21/24]}
";
    let plan = |network: &str, renderer: &str| {
        let root = support::scratch_root();
        let head = "instance-id: vm-1\nlocal-hostname: vm-1\n";
        let extra = ["--renderer", renderer];
        vmcust_guestinfo_network("plan", root.path(), head, network, &extra)
    };
    for r in renderers() {
        let out = plan(network, r.name());
        let got = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            r.name(),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            got.contains("network   vlan eth0.100: id 100 on ethernets.eth0\n"),
            "{}: {got}",
            r.name()
        );
        let file = match r {
            Renderer::Netplan => "    eth0.100:\n",
            Renderer::Networkd => "/etc/systemd/network/10-vmcust-eth0.100.netdev",
            Renderer::NetworkManager => "vmcust-eth0.100.nmconnection",
            Renderer::Sysconfig => "network-scripts/ifcfg-eth0.100",
            Renderer::Eni => "iface eth0.100 inet static",
            Renderer::Suse => "network/ifcfg-eth0.100",
        };
        assert!(got.contains(file), "{}: no {file}\n{got}", r.name());
        assert!(got.contains("10.100.0.21"), "{}: {got}", r.name());
    }
    let out = plan(&network.replace("id: 100", "id: 4095"), "netplan");
    assert_eq!(out.status.code(), Some(65));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("vlans.eth0.100.id: 4095 is not a VLAN id; use 0-4094"),
        "{err}"
    );
}
