//! Network entries matched the way users write them (v2 `match` by name glob, driver,
//! several keys, `set-name`; v1 `name` without a MAC), from guestinfo metadata, resolved
//! against the scratch root's `/sys/class/net` (three NICs: ens192, ens224, ens256).
//!
//! `plan` output is compared with `tests/golden/match/<case>.txt` (regenerate after an
//! intended change with `UPDATE_GOLDEN=1 cargo test --test network_match`); bad matches
//! exit 65 and leave the root as it was; netplan's own generator accepts what a glob
//! entry renders to.

mod support;

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use support::{repo, scratch_root, snapshot};
use vmcust::test_api::network::Renderer;

/// Runs vmcust with the metadata `network` given, in a fake host directory.
fn vmcust(cmd: &str, root: &Path, network: &str, format: &str) -> Output {
    let extra = ["--renderer", "netplan", "--format", format];
    support::network::vmcust_guestinfo_network(cmd, root, "instance-id: match-1\n", network, &extra)
}

/// Gives the scratch root's NICs drivers as the kernel links them: ens192 and ens224
/// vmxnet3, ens256 e1000e (relative links into the bus's drivers directory).
fn with_drivers(root: &Path) {
    for (nic, driver) in [
        ("ens192", "vmxnet3"),
        ("ens224", "vmxnet3"),
        ("ens256", "e1000e"),
    ] {
        std::os::unix::fs::symlink(
            format!("../../../../bus/pci/drivers/{driver}"),
            root.join("sys/class/net").join(nic).join("device/driver"),
        )
        .unwrap();
    }
}

const ENS_GLOB: &str =
    "version: 2\nethernets:\n  nics:\n    match:\n      name: \"ens*\"\n    dhcp4: true\n";

/// (case, drivers linked, metadata network): each plan is a golden file.
const GOLDEN: &[(&str, bool, &str)] = &[
    // cloud-init's documented example: DHCP on every NIC whose name starts with ens.
    ("ens-glob-dhcp", false, ENS_GLOB),
    // Name and driver must both hold: only ens256 is ens2* with e1000e.
    (
        "name-and-driver-static",
        true,
        "version: 2\nethernets:\n  lan:\n    match: {name: \"ens2*\", driver: e1000e}\n    addresses: [10.1.2.3/24]\n    routes: [{to: default, via: 10.1.2.1}]\n    nameservers: {addresses: [10.1.2.53]}\n",
    ),
    // set-name with a match that finds one NIC; a MAC-keyed entry before it keeps its place.
    (
        "set-name-and-mac",
        true,
        "version: 2\nethernets:\n  first:\n    match: {macaddress: \"00:50:56:a6:8c:08\"}\n    dhcp4: true\n  backup:\n    match: {driver: \"e1000*\"}\n    set-name: backup0\n    dhcp4: true\n",
    ),
    // No match at all: the id is the interface name, as in netplan.
    (
        "id-is-the-name",
        false,
        "version: 2\nethernets:\n  ens224:\n    addresses: [192.168.7.2/24]\n",
    ),
    // v1 without mac_address: the name finds the NIC.
    (
        "v1-name",
        false,
        "version: 1\nconfig:\n  - type: physical\n    name: ens256\n    subnets:\n      - {type: static, address: 172.16.0.9/16, gateway: 172.16.0.1}\n",
    ),
];

#[test]
fn plans_show_each_entry_resolved_and_match_their_golden_files() {
    let dir = repo().join("tests/golden/match");
    for (case, drivers, network) in GOLDEN {
        let root = scratch_root();
        if *drivers {
            with_drivers(root.path());
        }
        let out = vmcust("plan", root.path(), network, "text");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{case}: {stderr}");
        let got = String::from_utf8(out.stdout).unwrap();
        support::check_golden(&dir.join(format!("{case}.txt")), &got);
        assert!(got.starts_with("network   "), "{case}: {got}");
    }
}

#[test]
fn a_glob_entry_configures_each_of_the_three_nics() {
    let root = scratch_root();
    let out = vmcust("plan", root.path(), ENS_GLOB, "json");
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = &v["network_matches"][0];
    assert_eq!(m["entry"], "ethernets.nics");
    assert_eq!(m["selector"], "name ens*");
    let nics: Vec<(&str, &str)> = m["nics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["name"].as_str().unwrap(), n["mac"].as_str().unwrap()))
        .collect();
    assert_eq!(
        nics,
        [
            ("ens192", "00:50:56:a6:8c:08"),
            ("ens224", "00:50:56:a6:ef:7d"),
            ("ens256", "00:50:56:a6:5a:de")
        ]
    );
}

/// Bad matches: exit 65, an error naming the entry (or key), and no file changed even
/// by `apply`.
#[test]
fn bad_matches_exit_65_and_change_nothing() {
    let cases: &[(&str, &str)] = &[
        (
            "version: 2\nethernets:\n  second:\n    match: {name: eth1}\n    dhcp4: true\n",
            "ethernets.second: no interface matches name eth1; the root's physical interfaces are ens192 (00:50:56:a6:8c:08), ens224 (00:50:56:a6:ef:7d), ens256 (00:50:56:a6:5a:de)",
        ),
        (
            "version: 2\nethernets:\n  nics:\n    match: {name: \"ens*\"}\n    addresses: [10.0.0.5/24]\n",
            "ethernets.nics: name ens* matches ens192 (00:50:56:a6:8c:08), ens224 (00:50:56:a6:ef:7d), ens256 (00:50:56:a6:5a:de), but it has static addresses, so it must match exactly one",
        ),
        (
            "version: 2\nethernets:\n  nics:\n    match: {name: \"ens*\"}\n    set-name: lan0\n    dhcp4: true\n",
            "but it has a set-name, so it must match exactly one",
        ),
        (
            "version: 2\nethernets:\n  nics:\n    match: {name: \"ens[1-2\"}\n    dhcp4: true\n",
            "ethernets.nics.match.name: \"ens[1-2\": the [ at position 4 is never closed",
        ),
        (
            "version: 2\nethernets:\n  a:\n    match: {macaddress: \"00:50:56:a6:ef:7d\"}\n    dhcp4: true\n  b:\n    match: {name: \"ens2*\"}\n    dhcp4: true\n",
            "ethernets.b and interface a (00:50:56:a6:ef:7d) both configure ens224",
        ),
        (
            "version: 1\nconfig:\n  - type: physical\n    name: eth0\n    subnets: [{type: dhcp}]\n",
            "config[0] (eth0): no interface matches name eth0",
        ),
    ];
    for (network, want) in cases {
        for cmd in ["plan", "apply"] {
            let root = scratch_root();
            let before = snapshot(root.path());
            let out = vmcust(cmd, root.path(), network, "text");
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(65), "{cmd} {network}: {err}");
            assert!(err.contains(want), "{cmd} {network}: {err}");
            assert!(out.stdout.is_empty(), "{cmd}: printed a plan");
            support::assert_same_tree(&before, &snapshot(root.path()), cmd);
        }
    }
}

#[test]
fn an_offline_root_cannot_resolve_a_name_match() {
    let root = scratch_root();
    fs::remove_dir_all(root.path().join("sys")).unwrap();
    let out = vmcust("plan", root.path(), ENS_GLOB, "text");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(65), "{err}");
    assert!(
        err.contains("ethernets.nics: it matches name ens*, but the root has no /sys/class/net"),
        "{err}"
    );
}

/// `show` (no root) lists the entry and says it is resolved at plan time.
#[test]
fn show_lists_match_entries() {
    let host = tempfile::tempdir().unwrap();
    fs::write(
        host.path().join("guestinfo.metadata"),
        format!(
            "instance-id: m\nnetwork:\n{}",
            ENS_GLOB
                .lines()
                .map(|l| format!("  {l}\n"))
                .collect::<String>()
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_vmcust"))
        .args(["show", "--guestinfo-dir"])
        .arg(host.path())
        .env("VMCUST_LOG", "error")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("  ethernets.nics: each NIC matching name ens* (found at plan time among the root's interfaces): ipv4 dhcp; ipv6 auto\n"),
        "{text}"
    );
}

/// The real `netplan generate` accepts the file a glob entry renders to, and gives each
/// of the three NICs DHCP.
#[test]
fn netplan_generate_accepts_the_resolved_glob_entry() {
    support::require_tool("netplan", "netplan.io");
    let value: serde_norway::Value = serde_norway::from_str(ENS_GLOB).unwrap();
    let net = vmcust::test_api::netconfig::translate(&value)
        .unwrap()
        .network
        .unwrap();
    assert_eq!(net.matched.len(), 1);
    let tree = support::network::render_tree(&net, Renderer::Netplan);
    let out = Command::new("netplan")
        .arg("generate")
        .arg("--root-dir")
        .arg(tree.path())
        .output()
        .expect("running netplan generate");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "netplan generate: {stderr}");
    assert!(!stderr.to_lowercase().contains("warning"), "{stderr}");
    let generated = support::files(&tree.path().join("run/systemd/network"));
    let mut dhcp_macs = Vec::new();
    for (path, text) in &generated {
        if path.extension().is_some_and(|e| e == "network") && text.contains("DHCP=ipv4") {
            let mac = text
                .lines()
                .find_map(|l| {
                    l.strip_prefix("PermanentMACAddress=")
                        .or_else(|| l.strip_prefix("MACAddress="))
                })
                .unwrap_or_else(|| panic!("{}: no MAC in [Match]\n{text}", path.display()));
            dhcp_macs.push(mac.to_string());
        }
    }
    dhcp_macs.sort();
    assert_eq!(
        dhcp_macs,
        [
            "00:50:56:a6:5a:de",
            "00:50:56:a6:8c:08",
            "00:50:56:a6:ef:7d"
        ],
        "{generated:?}"
    );
}
