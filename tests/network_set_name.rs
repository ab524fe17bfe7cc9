//! `set-name` and `wakeonlan` on every renderer, in Cluster API vSphere's metadata shape
//! (`id0` matched by `macaddress` alone, `set-name: eth0`, `wakeonlan: true`), on the
//! scratch root whose `/sys/class/net` calls that NIC `ens192`.
//!
//! Each renderer's `plan` is compared with `tests/golden/set-name/<renderer>.txt`
//! (regenerate after an intended change with
//! `UPDATE_GOLDEN=1 cargo test --test network_set_name`): the NIC is configured and
//! renamed as `eth0` by its MAC (networkd `.link`, netplan `set-name`, a udev rule for
//! the others), wake-on-LAN is on in each stack's own key, and the boot renames the
//! running NIC before the stack starts. netplan's generator and NetworkManager's keyfile
//! parser read what we write; a name another NIC has is refused.

mod support;

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use support::network::nmcli_roundtrip;
use support::{files, repo, require_tool, scratch_root, snapshot};
use vmcust::test_api::network::Renderer;

/// CAPV's network shape (reference: its `metadata` template), for the root's ens192.
const CAPV: &str = "version: 2
ethernets:
  id0:
    match:
      macaddress: \"00:50:56:a6:8c:08\"
    set-name: \"eth0\"
    wakeonlan: true
    dhcp4: false
    addresses:
      - \"10.20.0.11/24\"
    gateway4: \"10.20.0.1\"
    routes:
      - to: \"10.30.0.0/16\"
        via: \"10.20.0.254\"
        metric: 50
    nameservers:
      addresses:
        - \"10.20.0.2\"
";

/// Runs `vmcust <cmd>` on `root` with guestinfo metadata carrying `network`.
fn vmcust(cmd: &str, root: &Path, network: &str, renderer: &str) -> Output {
    let head = "instance-id: capv-1\nlocal-hostname: node-0\n";
    let extra = ["--renderer", renderer];
    support::network::vmcust_guestinfo_network(cmd, root, head, network, &extra)
}

fn capv_network() -> vmcust::test_api::model::Network {
    let value: serde_norway::Value = serde_norway::from_str(CAPV).unwrap();
    vmcust::test_api::netconfig::translate(&value)
        .unwrap()
        .network
        .unwrap()
}

/// `renderer`'s plan for metadata `network` that renames the NIC ens192 to eth0: it
/// succeeds, renames the running NIC first, and no file names ens192 any more.
fn renaming_plan(network: &str, renderer: Renderer) -> String {
    let root = scratch_root();
    let out = vmcust("plan", root.path(), network, renderer.name());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{}: {stderr}", renderer.name());
    let got = String::from_utf8(out.stdout).unwrap();
    assert!(
        got.contains("ip link set dev ens192 name eth0"),
        "{}: no live rename\n{got}",
        renderer.name()
    );
    assert!(
        !got.contains("ens192.") && !got.contains("-ens192"),
        "{}: a file still names ens192\n{got}",
        renderer.name()
    );
    got
}

/// Every renderer's plan: the files under the new name, the rename and wake-on-LAN in
/// the stack's own terms, and the live rename before the reload.
#[test]
fn every_renderer_renames_and_wakes_as_its_golden_plan_says() {
    let dir = repo().join("tests/golden/set-name");
    for r in support::network::renderers() {
        let got = renaming_plan(CAPV, r);
        support::check_golden(&dir.join(format!("{}.txt", r.name())), &got);
        // The mechanism each stack renames and wakes by.
        let (rename, wake) = match r {
            Renderer::Netplan => ("set-name: eth0", "wakeonlan: true"),
            Renderer::Networkd => ("Name=eth0", "WakeOnLan=magic"),
            Renderer::NetworkManager => ("NAME=\"eth0\"", "wake-on-lan=64"),
            Renderer::Sysconfig => ("NAME=\"eth0\"", "ETHTOOL_OPTS='wol g'"),
            Renderer::Eni => ("NAME=\"eth0\"", "ethernet-wol g"),
            Renderer::Suse => ("NAME=\"eth0\"", "ETHTOOL_OPTIONS='wol g'"),
        };
        for want in [rename, wake] {
            assert!(got.contains(want), "{}: no {want}\n{got}", r.name());
        }
    }
}

/// `apply` writes the udev rule for the stacks that cannot rename by themselves, and
/// nothing names the kernel's old name.
#[test]
fn apply_writes_the_rule_by_mac_where_the_stack_cannot_rename() {
    for r in support::network::renderers() {
        let root = scratch_root();
        let out = vmcust("apply", root.path(), CAPV, r.name());
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            r.name(),
            String::from_utf8_lossy(&out.stderr)
        );
        let rules = root
            .path()
            .join("etc/udev/rules.d/70-vmcust-net-names.rules");
        let by_udev = !matches!(r, Renderer::Netplan | Renderer::Networkd);
        assert_eq!(rules.is_file(), by_udev, "{}", r.name());
        if by_udev {
            let text = fs::read_to_string(&rules).unwrap();
            assert!(
                text.lines().any(|l| l
                    == "SUBSYSTEM==\"net\", ACTION==\"add\", DRIVERS==\"?*\", ATTR{address}==\"00:50:56:a6:8c:08\", NAME=\"eth0\""),
                "{text}"
            );
        }
        for (path, text) in files(&root.path().join("etc")) {
            if text.starts_with("# Written by vmcust") {
                assert!(
                    !text.contains("ens192"),
                    "{}: {} still names ens192:\n{text}",
                    r.name(),
                    path.display()
                );
            }
        }
    }
}

/// netplan's own generator takes our `set-name` and `wakeonlan` into the `.link` file
/// udev renames by, and configures the address on the new name.
#[test]
fn netplan_generate_renames_by_mac_and_wakes() {
    require_tool("netplan", "netplan.io");
    let tree = support::network::render_tree(&capv_network(), Renderer::Netplan);
    let out = Command::new("netplan")
        .arg("generate")
        .arg("--root-dir")
        .arg(tree.path())
        .output()
        .expect("running netplan generate");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "netplan generate: {stderr}");
    let generated = files(&tree.path().join("run/systemd/network"));
    let link = generated
        .iter()
        .find(|(p, _)| p.extension().is_some_and(|e| e == "link"))
        .map(|(_, t)| t.clone())
        .unwrap_or_else(|| panic!("no .link file: {generated:?}"));
    for want in [
        "PermanentMACAddress=00:50:56:a6:8c:08",
        "Name=eth0",
        "WakeOnLan=magic",
    ] {
        assert!(link.lines().any(|l| l == want), "{want} missing:\n{link}");
    }
    let network = generated
        .iter()
        .find(|(p, _)| p.extension().is_some_and(|e| e == "network"))
        .map(|(_, t)| t.clone())
        .unwrap();
    for want in ["Name=eth0", "Address=10.20.0.11/24"] {
        assert!(
            network.lines().any(|l| l == want),
            "{want} missing:\n{network}"
        );
    }
}

/// NetworkManager's keyfile parser accepts the profile bound to the new name with
/// wake-on-LAN, and keeps both.
#[test]
fn networkmanager_reads_the_renamed_profile_with_wake_on_lan() {
    require_tool("nmcli", "network-manager");
    let tree = support::network::render_tree(&capv_network(), Renderer::NetworkManager);
    let keyfile = fs::read_to_string(
        tree.path()
            .join("etc/NetworkManager/system-connections/vmcust-eth0.nmconnection"),
    )
    .unwrap();
    let normalized = nmcli_roundtrip(&keyfile).unwrap_or_else(|e| panic!("nmcli: {e}"));
    for want in ["interface-name=eth0", "wake-on-lan=64"] {
        assert!(
            normalized.lines().any(|l| l == want),
            "{want} missing:\n{normalized}"
        );
    }
}

/// A `set-name` another NIC has (ens224 is the root's second NIC, not configured) or
/// two alike: exit 65, the error names both, nothing changed.
#[test]
fn a_name_another_nic_has_is_refused() {
    let cases = [
        (
            CAPV.replace("eth0", "ens224"),
            "the set-name of interface ens224 (00:50:56:a6:8c:08) is ens224, but the root's ens224 (00:50:56:a6:ef:7d), which this customization does not configure, has that name too",
        ),
        (
            format!(
                "{CAPV}  id1:\n    match:\n      macaddress: \"00:50:56:a6:ef:7d\"\n    set-name: eth0\n    dhcp4: true\n"
            ),
            "is eth0, but the NIC with MAC address 00:50:56:a6:8c:08 has that name too",
        ),
        (
            CAPV.replace("\"eth0\"", "\"eth0:1\""),
            "ethernets.id0.set-name: \"eth0:1\" cannot name a NIC",
        ),
    ];
    for (network, want) in cases {
        for cmd in ["plan", "apply"] {
            let root = scratch_root();
            let before = snapshot(root.path());
            let out = vmcust(cmd, root.path(), &network, "networkd");
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(65), "{cmd}: {err}");
            assert!(err.contains(want), "{cmd}: {err}");
            support::assert_same_tree(&before, &snapshot(root.path()), cmd);
        }
    }
}

/// Network config v1: a `physical` entry's `name` with a `mac_address` is the name that
/// NIC gets (cloud-init's v1, where it is the set-name), so each renderer renames the
/// NIC as for a v2 `set-name` and configures it under the new name.
const V1_NAMED: &str = "version: 1
config:
  - type: physical
    name: eth0
    mac_address: '00:50:56:a6:8c:08'
    subnets:
      - type: static
        address: 10.20.0.2/24
        gateway: 10.20.0.1
";

#[test]
fn a_v1_name_with_a_mac_renames_the_nic_on_every_renderer() {
    for r in support::network::renderers() {
        let got = renaming_plan(V1_NAMED, r);
        // The mechanism each stack renames by, and the address on the new name.
        let (rename, file) = match r {
            Renderer::Netplan => ("set-name: eth0", "    eth0:\n"),
            Renderer::Networkd => ("Name=eth0", "10-vmcust-eth0.network"),
            Renderer::NetworkManager => ("NAME=\"eth0\"", "vmcust-eth0.nmconnection"),
            Renderer::Sysconfig => ("NAME=\"eth0\"", "ifcfg-eth0"),
            Renderer::Eni => ("NAME=\"eth0\"", "iface eth0 inet static"),
            Renderer::Suse => ("NAME=\"eth0\"", "ifcfg-eth0"),
        };
        for want in [rename, file, "10.20.0.2"] {
            assert!(got.contains(want), "{}: no {want}\n{got}", r.name());
        }
    }
    // A v1 entry with a MAC and no name keeps the kernel's name: nothing is renamed.
    let unnamed = V1_NAMED.replace("    name: eth0\n", "");
    let root = scratch_root();
    let out = vmcust("plan", root.path(), &unnamed, "networkd");
    let got = String::from_utf8(out.stdout).unwrap();
    assert!(!got.contains("name eth0"), "{got}");
    assert!(got.contains("10-vmcust-ens192.network"), "{got}");
    // A name the kernel cannot take is refused, naming the entry.
    let bad = V1_NAMED.replace("name: eth0", "name: averyveryverylongname");
    let out = vmcust("plan", scratch_root().path(), &bad, "networkd");
    assert_eq!(out.status.code(), Some(65));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("config[0] (averyveryverylongname).name:")
            && err.contains("cannot name a NIC"),
        "{err}"
    );
}
