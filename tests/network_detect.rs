//! Choosing the renderer from synthetic roots of each distribution family, moving a
//! template's leftover configuration aside (never deleting it), `/etc/resolv.conf`
//! handling, and the error for a MAC no device has.

mod support;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use support::files;
use support::network::{apply_keeping_originals, specs};
use vmcust::apply::{apply, Change};
use vmcust::facts::NetworkFacts;
use vmcust::model::Network;
use vmcust::plan::network::{detect::detect, plan_network, NetworkError, Renderer};
use vmcust::plan::{Action, Plan};
use vmcust::root::Root;

/// A file in a synthetic root (parents created).
fn put(root: &Path, path: &str, text: &str) {
    let p = root.join(path);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

/// Enables a systemd unit the way `systemctl enable` does.
fn enable(root: &Path, unit: &str) {
    let wants = root.join("etc/systemd/system/multi-user.target.wants");
    fs::create_dir_all(&wants).unwrap();
    symlink(format!("/usr/lib/systemd/system/{unit}"), wants.join(unit)).unwrap();
}

/// A root with the examples' first NIC (ens192, 00:50:56:a6:8c:08).
fn root_with_nic() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    put(
        dir.path(),
        "sys/class/net/ens192/address",
        "00:50:56:a6:8c:08\n",
    );
    fs::create_dir_all(dir.path().join("sys/class/net/ens192/device")).unwrap();
    dir
}

fn facts(root: &Path) -> NetworkFacts {
    NetworkFacts::gather(&Root::new(root).unwrap()).unwrap()
}

/// The static dual-stack example (ens192 static, ens224 static).
fn static_net() -> Network {
    specs()
        .into_iter()
        .find(|(n, _)| n == "static-2nic-ipv6")
        .unwrap()
        .1
}

#[test]
fn each_distribution_family_gets_its_renderer() {
    type Setup = fn(&Path);
    let table: &[(&str, Setup, Renderer)] = &[
        ("empty root", |_| {}, Renderer::Netplan),
        (
            "Ubuntu server: netplan over networkd",
            |r| {
                put(
                    r,
                    "etc/netplan/50-cloud-init.yaml",
                    "network: {version: 2}\n",
                );
                put(r, "usr/sbin/netplan", "");
                enable(r, "systemd-networkd.service");
            },
            Renderer::Netplan,
        ),
        (
            "netplan directory without netplan installed",
            |r| {
                fs::create_dir_all(r.join("etc/netplan")).unwrap();
                enable(r, "NetworkManager.service");
            },
            Renderer::NetworkManager,
        ),
        (
            "RHEL 9: NetworkManager with a sysconfig tree",
            |r| {
                fs::create_dir_all(r.join("etc/sysconfig/network-scripts")).unwrap();
                enable(r, "NetworkManager.service");
            },
            Renderer::NetworkManager,
        ),
        (
            "Photon OS: networkd",
            |r| enable(r, "systemd-networkd.service"),
            Renderer::Networkd,
        ),
        (
            "RHEL 7 with the network service",
            |r| fs::create_dir_all(r.join("etc/sysconfig/network-scripts")).unwrap(),
            Renderer::Sysconfig,
        ),
        (
            "Debian with ifupdown",
            |r| {
                put(
                    r,
                    "etc/network/interfaces",
                    "auto lo\niface lo inet loopback\n",
                );
                put(r, "sbin/ifup", "");
            },
            Renderer::Eni,
        ),
        (
            "interfaces file without ifupdown",
            |r| put(r, "etc/network/interfaces", ""),
            Renderer::Netplan,
        ),
        (
            "SLES 15: wicked enabled",
            |r| enable(r, "wicked.service"),
            Renderer::Suse,
        ),
        (
            "openSUSE image: ifcfg files, wicked not enabled",
            |r| {
                put(r, "etc/sysconfig/network/ifcfg-lo", "STARTMODE='auto'\n");
                put(r, "etc/sysconfig/network/ifcfg-eth0", "BOOTPROTO='dhcp'\n");
            },
            Renderer::Suse,
        ),
        (
            "SLES: wicked installed, no ifcfg yet",
            |r| put(r, "usr/sbin/wicked", ""),
            Renderer::Suse,
        ),
        (
            "SLES with NetworkManager enabled",
            |r| {
                put(r, "etc/sysconfig/network/ifcfg-eth0", "BOOTPROTO='dhcp'\n");
                put(r, "usr/sbin/wicked", "");
                enable(r, "NetworkManager.service");
            },
            Renderer::NetworkManager,
        ),
        (
            "SUSE directory without ifcfg files or wicked",
            |r| {
                put(
                    r,
                    "etc/sysconfig/network/config",
                    "NETCONFIG_DNS_POLICY=\"auto\"\n",
                )
            },
            Renderer::Netplan,
        ),
        (
            "RHEL 7: /etc/sysconfig/network is a file",
            |r| {
                put(r, "etc/sysconfig/network", "NETWORKING=yes\n");
                fs::create_dir_all(r.join("etc/sysconfig/network-scripts")).unwrap();
            },
            Renderer::Sysconfig,
        ),
    ];
    for (family, setup, want) in table {
        let dir = tempfile::tempdir().unwrap();
        setup(dir.path());
        assert_eq!(&detect(&facts(dir.path()).stacks), want, "{family}");
    }
}

const LEFTOVER_NETPLAN: &str =
    "network:\n  version: 2\n  ethernets:\n    ens192:\n      dhcp4: true\n";
const LEFTOVER_KEYFILE: &str =
    "[connection]\nid=Wired connection 1\ntype=ethernet\n\n[ethernet]\nmac-address=00:50:56:A6:8C:08\n";
const LEFTOVER_IFCFG: &str = "DEVICE=ens192\nBOOTPROTO=dhcp\nONBOOT=yes\n";
const OTHER_IFCFG: &str = "DEVICE=ens999\nBOOTPROTO=dhcp\n";
const LEFTOVER_ENI: &str =
    "auto lo\niface lo inet loopback\n\nallow-hotplug ens192\niface ens192 inet dhcp\n";

#[test]
fn leftovers_for_our_nics_are_moved_aside_never_deleted() {
    let dir = root_with_nic();
    let r = dir.path();
    put(r, "sys/class/net/ens224/address", "00:50:56:a6:ef:7d\n");
    put(r, "etc/netplan/50-cloud-init.yaml", LEFTOVER_NETPLAN);
    put(
        r,
        "etc/NetworkManager/system-connections/Wired connection 1.nmconnection",
        LEFTOVER_KEYFILE,
    );
    put(
        r,
        "etc/sysconfig/network-scripts/ifcfg-ens192",
        LEFTOVER_IFCFG,
    );
    put(r, "etc/sysconfig/network-scripts/ifcfg-ens999", OTHER_IFCFG);
    put(r, "etc/network/interfaces", LEFTOVER_ENI);
    let before = files(r);

    let net = static_net();
    let actions = plan_network(&net, &facts(r), Some(Renderer::Sysconfig)).unwrap();
    let renames: Vec<(String, String)> = actions
        .iter()
        .filter_map(|a| match a {
            Action::Rename { from, to, .. } => {
                Some((from.display().to_string(), to.display().to_string()))
            }
            _ => None,
        })
        .collect();
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        renames,
        [
            pair(
                "/etc/netplan/50-cloud-init.yaml",
                "/etc/netplan/.vmcust-disabled/50-cloud-init.yaml"
            ),
            pair(
                "/etc/NetworkManager/system-connections/Wired connection 1.nmconnection",
                "/etc/NetworkManager/system-connections/.vmcust-disabled/Wired connection 1.nmconnection"
            ),
            pair(
                "/etc/sysconfig/network-scripts/ifcfg-ens192",
                "/etc/sysconfig/network-scripts/.vmcust-disabled/ifcfg-ens192"
            ),
            pair("/etc/network/interfaces", "/etc/network/interfaces.vmcust-backup"),
        ]
    );

    // Every original text is still somewhere in the root.
    let after = apply_keeping_originals(r, &actions, &before);
    assert_eq!(
        after[Path::new("etc/sysconfig/network-scripts/.vmcust-disabled/ifcfg-ens192")],
        LEFTOVER_IFCFG
    );
    assert_eq!(
        after[Path::new("etc/sysconfig/network-scripts/ifcfg-ens999")],
        OTHER_IFCFG
    );
    assert!(!after[Path::new("etc/network/interfaces")].contains("ens192"));

    // A second run plans no moves and changes nothing: the backups stay the originals.
    let again = plan_network(&net, &facts(r), Some(Renderer::Sysconfig)).unwrap();
    assert!(
        again.iter().all(|a| !matches!(a, Action::Rename { .. })),
        "{again:#?}"
    );
    let changes = apply(&Root::new(r).unwrap(), &Plan { actions: again }).unwrap();
    assert!(
        changes.iter().all(|c| *c == Change::Unchanged),
        "{changes:?}"
    );
    assert_eq!(files(r), after);
}

/// A Debian template's DHCP configuration in the common shape: by name pattern, not by
/// MAC or device name (seen winning over ours on real Debian 12 boots, tests/vm).
const TEMPLATE_NETPLAN: &str = "network:\n  version: 2\n  renderer: networkd\n  ethernets:\n    template:\n      match:\n        name: \"en*\"\n      dhcp4: true\n";
const TEMPLATE_NETWORKD: &str = "[Match]\nName=en*\n\n[Network]\nDHCP=ipv4\n";
const OTHER_NETWORKD: &str = "[Match]\nName=eth*\n\n[Network]\nDHCP=ipv4\n";

#[test]
fn template_configuration_by_name_pattern_is_moved_aside() {
    let dir = root_with_nic();
    let r = dir.path();
    put(r, "sys/class/net/ens224/address", "00:50:56:a6:ef:7d\n");
    put(r, "etc/netplan/01-template.yaml", TEMPLATE_NETPLAN);
    put(
        r,
        "etc/systemd/network/01-template.network",
        TEMPLATE_NETWORKD,
    );
    put(r, "etc/systemd/network/20-eth.network", OTHER_NETWORKD);
    let before = files(r);

    for renderer in [Renderer::Netplan, Renderer::Networkd] {
        let actions = plan_network(&static_net(), &facts(r), Some(renderer)).unwrap();
        let moved: Vec<String> = actions
            .iter()
            .filter_map(|a| match a {
                Action::Rename { from, .. } => Some(from.display().to_string()),
                _ => None,
            })
            .collect();
        assert_eq!(
            moved,
            [
                "/etc/netplan/01-template.yaml",
                "/etc/systemd/network/01-template.network"
            ],
            "{}",
            renderer.name()
        );
    }

    let actions = plan_network(&static_net(), &facts(r), Some(Renderer::Networkd)).unwrap();
    let after = apply_keeping_originals(r, &actions, &before);
    assert_eq!(
        after[Path::new("etc/systemd/network/.vmcust-disabled/01-template.network")],
        TEMPLATE_NETWORKD
    );
    assert_eq!(
        after[Path::new("etc/netplan/.vmcust-disabled/01-template.yaml")],
        TEMPLATE_NETPLAN
    );
    assert_eq!(
        after[Path::new("etc/systemd/network/20-eth.network")],
        OTHER_NETWORKD
    );
    assert!(!after.contains_key(Path::new("etc/systemd/network/01-template.network")));
}

#[test]
fn resolv_conf_is_written_only_where_nothing_else_carries_dns() {
    let net = static_net();
    let writes_resolv = |r: &Path, renderer| {
        plan_network(&net, &facts(r), Some(renderer))
            .unwrap()
            .iter()
            .any(|a| matches!(a, Action::WriteFile { path, .. } if path == Path::new("/etc/resolv.conf")))
    };

    // ENI on a plain Debian: the file is ours to write, after a backup.
    let dir = root_with_nic();
    put(
        dir.path(),
        "sys/class/net/ens224/address",
        "00:50:56:a6:ef:7d\n",
    );
    put(dir.path(), "etc/resolv.conf", "nameserver 192.0.2.1\n");
    assert!(writes_resolv(dir.path(), Renderer::Eni));
    assert!(writes_resolv(dir.path(), Renderer::Sysconfig));
    // networkd (alone or under netplan) without systemd-resolved: nothing turns the
    // .network file's DNS= into this file (seen on a real Debian 12 boot, tests/vm).
    assert!(writes_resolv(dir.path(), Renderer::Networkd));
    assert!(writes_resolv(dir.path(), Renderer::Netplan));
    // Stacks that carry DNS themselves.
    for r in [Renderer::NetworkManager, Renderer::Suse] {
        assert!(!writes_resolv(dir.path(), r), "{}", r.name());
    }
    // resolvconf turns ENI's dns-* lines into the file.
    put(dir.path(), "usr/sbin/resolvconf", "");
    assert!(!writes_resolv(dir.path(), Renderer::Eni));
    fs::remove_file(dir.path().join("usr/sbin/resolvconf")).unwrap();
    // A link to systemd-resolved's stub is managed.
    fs::remove_file(dir.path().join("etc/resolv.conf")).unwrap();
    symlink(
        "../run/systemd/resolve/stub-resolv.conf",
        dir.path().join("etc/resolv.conf"),
    )
    .unwrap();
    assert!(!writes_resolv(dir.path(), Renderer::Eni));
    assert!(!writes_resolv(dir.path(), Renderer::Networkd));
    assert!(!writes_resolv(dir.path(), Renderer::Netplan));
    // So is a file NetworkManager generated, and any root where NetworkManager runs.
    fs::remove_file(dir.path().join("etc/resolv.conf")).unwrap();
    put(
        dir.path(),
        "etc/resolv.conf",
        "# Generated by NetworkManager\nnameserver 192.0.2.1\n",
    );
    assert!(!writes_resolv(dir.path(), Renderer::Sysconfig));
    put(dir.path(), "etc/resolv.conf", "nameserver 192.0.2.1\n");
    enable(dir.path(), "NetworkManager.service");
    assert!(!writes_resolv(dir.path(), Renderer::Sysconfig));
}

#[test]
fn a_mac_no_device_has_is_a_clear_error() {
    let dir = root_with_nic();
    let net = static_net(); // its second NIC, 00:50:56:a6:ef:7d, is not in this root
    let err = plan_network(&net, &facts(dir.path()), Some(Renderer::Networkd)).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, NetworkError::MacNotFound { .. }), "{err:?}");
    assert!(msg.contains("00:50:56:a6:ef:7d"), "{msg}");
    assert!(msg.contains("ens192 (00:50:56:a6:8c:08)"), "{msg}");
}
