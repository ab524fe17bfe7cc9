//! Choosing the renderer from synthetic roots (each entry of the renderer table alone,
//! every pair of them, each distribution family, none at all), moving a
//! template's leftover configuration aside (never deleting it), `/etc/resolv.conf`
//! handling, and the error for a MAC no device has.

mod support;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use support::files;
use support::network::{apply_keeping_originals, specs};
use vmcust::test_api::apply::{apply, Change};
use vmcust::test_api::facts::NetworkFacts;
use vmcust::test_api::model::Network;
use vmcust::test_api::network::{plan_network, NetworkError, Renderer};
use vmcust::test_api::plan::{Action, Plan};
use vmcust::test_api::renderers::{detect, Chosen, TABLE};
use vmcust::test_api::root::Root;

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

/// The renderer the table detects from the root's facts.
fn detected(root: &Path) -> Option<Chosen> {
    detect(&facts(root).stacks)
}

/// The static dual-stack example (ens192 static, ens224 static).
fn static_net() -> Network {
    specs()
        .into_iter()
        .find(|(n, _)| n == "static-2nic-ipv6")
        .unwrap()
        .1
}

/// A root with only the stack of one table entry, laid out as that distribution has it.
fn only_stack(r: &Path, renderer: Renderer) {
    match renderer {
        Renderer::Netplan => {
            fs::create_dir_all(r.join("etc/netplan")).unwrap();
            put(r, "usr/sbin/netplan", "");
        }
        Renderer::NetworkManager => enable(r, "NetworkManager.service"),
        Renderer::Networkd => enable(r, "systemd-networkd.service"),
        Renderer::Sysconfig => fs::create_dir_all(r.join("etc/sysconfig/network-scripts")).unwrap(),
        Renderer::Eni => {
            put(
                r,
                "etc/network/interfaces",
                "auto lo\niface lo inet loopback\n",
            );
            put(r, "sbin/ifup", "");
        }
        Renderer::Suse => put(r, "etc/sysconfig/network/ifcfg-eth0", "BOOTPROTO='dhcp'\n"),
    }
}

#[test]
fn each_table_entry_detects_its_own_stack_with_its_reason() {
    for entry in &TABLE {
        let dir = tempfile::tempdir().unwrap();
        only_stack(dir.path(), entry.renderer);
        let got =
            detected(dir.path()).unwrap_or_else(|| panic!("{}: nothing detected", entry.name));
        assert_eq!(got.renderer, entry.renderer, "{}", entry.name);
        assert_eq!(
            got.reason,
            format!("detected: {}", entry.stack),
            "{}",
            entry.name
        );
    }
}

#[test]
fn two_stacks_pick_the_earlier_entry_and_say_why() {
    // Every pair of entries: the one earlier in the table wins, and the reason names the
    // other and why the winner comes first.
    for (i, first) in TABLE.iter().enumerate() {
        for later in &TABLE[i + 1..] {
            let dir = tempfile::tempdir().unwrap();
            only_stack(dir.path(), later.renderer);
            only_stack(dir.path(), first.renderer);
            let got = detected(dir.path()).unwrap();
            let case = format!("{} + {}", first.name, later.name);
            assert_eq!(got.renderer, first.renderer, "{case}");
            assert!(got.reason.contains(first.stack), "{case}: {}", got.reason);
            assert!(
                got.reason.contains(&format!("also found {}", later.name)),
                "{case}: {}",
                got.reason
            );
            assert!(got.reason.contains(first.order), "{case}: {}", got.reason);
        }
    }
}

#[test]
fn each_distribution_family_gets_its_renderer() {
    type Setup = fn(&Path);
    let table: &[(&str, Setup, Option<Renderer>)] = &[
        ("empty root", |_| {}, None),
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
            Some(Renderer::Netplan),
        ),
        (
            "netplan directory without netplan installed",
            |r| {
                fs::create_dir_all(r.join("etc/netplan")).unwrap();
                enable(r, "NetworkManager.service");
            },
            Some(Renderer::NetworkManager),
        ),
        (
            "netplan directory alone",
            |r| fs::create_dir_all(r.join("etc/netplan")).unwrap(),
            None,
        ),
        (
            "RHEL 9: NetworkManager with a sysconfig tree",
            |r| {
                fs::create_dir_all(r.join("etc/sysconfig/network-scripts")).unwrap();
                enable(r, "NetworkManager.service");
            },
            Some(Renderer::NetworkManager),
        ),
        (
            "Photon OS: networkd",
            |r| enable(r, "systemd-networkd.service"),
            Some(Renderer::Networkd),
        ),
        (
            "RHEL 7 with the network service",
            |r| fs::create_dir_all(r.join("etc/sysconfig/network-scripts")).unwrap(),
            Some(Renderer::Sysconfig),
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
            Some(Renderer::Eni),
        ),
        (
            "interfaces file without ifupdown",
            |r| put(r, "etc/network/interfaces", ""),
            None,
        ),
        (
            "SLES 15: wicked enabled",
            |r| enable(r, "wicked.service"),
            Some(Renderer::Suse),
        ),
        (
            "openSUSE image: ifcfg files, wicked not enabled",
            |r| {
                put(r, "etc/sysconfig/network/ifcfg-lo", "STARTMODE='auto'\n");
                put(r, "etc/sysconfig/network/ifcfg-eth0", "BOOTPROTO='dhcp'\n");
            },
            Some(Renderer::Suse),
        ),
        (
            "SLES: wicked installed, no ifcfg yet",
            |r| put(r, "usr/sbin/wicked", ""),
            Some(Renderer::Suse),
        ),
        (
            "SLES with NetworkManager enabled",
            |r| {
                put(r, "etc/sysconfig/network/ifcfg-eth0", "BOOTPROTO='dhcp'\n");
                put(r, "usr/sbin/wicked", "");
                enable(r, "NetworkManager.service");
            },
            Some(Renderer::NetworkManager),
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
            None,
        ),
        (
            "RHEL 7: /etc/sysconfig/network is a file",
            |r| {
                put(r, "etc/sysconfig/network", "NETWORKING=yes\n");
                fs::create_dir_all(r.join("etc/sysconfig/network-scripts")).unwrap();
            },
            Some(Renderer::Sysconfig),
        ),
    ];
    for (family, setup, want) in table {
        let dir = tempfile::tempdir().unwrap();
        setup(dir.path());
        let got = detected(dir.path()).map(|d| d.renderer);
        assert_eq!(&got, want, "{family}");
    }
}

#[test]
fn a_root_with_no_stack_is_an_error_unless_a_renderer_is_named() {
    let dir = root_with_nic();
    let net: Network = specs().into_iter().find(|(n, _)| n == "dhcp").unwrap().1;
    let f = facts(dir.path());
    assert_eq!(detect(&f.stacks), None);
    let err = plan_network(&net, &f, None).unwrap_err();
    assert!(matches!(err, NetworkError::NoStack { .. }), "{err:?}");
    let msg = err.to_string();
    // What was looked for, and how to choose.
    for entry in &TABLE {
        assert!(
            msg.contains(&format!("{} ({})", entry.name, entry.stack)),
            "{msg}"
        );
    }
    assert!(
        msg.contains("[network] renderer in /etc/vmcust/vmcust.conf"),
        "{msg}"
    );
    assert!(msg.contains("--renderer"), "{msg}");
    // Named, it plans; nothing about it comes from a default.
    let actions = plan_network(&net, &f, Some(Renderer::Networkd)).unwrap();
    assert!(
        actions
            .iter()
            .any(|a| a.path().starts_with("/etc/systemd/network")),
        "{actions:#?}"
    );
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

/// `vmcust ARGS` with the examples' DHCP spec's network, as people run it.
fn vmcust(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_vmcust"))
        .args(args)
        .env("PATH", "/nonexistent")
        .output()
        .unwrap()
}

/// A root with the first NIC and what the DHCP spec needs besides a network stack.
fn root_for_dhcp_spec() -> tempfile::TempDir {
    let dir = root_with_nic();
    put(dir.path(), "usr/share/zoneinfo/UTC", "TZif");
    dir
}

fn dhcp_spec() -> String {
    support::repo()
        .join("examples/specs/dhcp.cfg")
        .display()
        .to_string()
}

#[test]
fn plan_and_detect_show_the_renderer_and_why() {
    let dir = root_for_dhcp_spec();
    let r = dir.path();
    only_stack(r, Renderer::Netplan);
    enable(r, "systemd-networkd.service");
    let root = r.to_str().unwrap();
    let spec = dhcp_spec();
    let out = vmcust(&["plan", "--root", root, &spec]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.starts_with(
            "network   renderer netplan (detected: /etc/netplan exists and netplan is installed; \
             also found networkd, but netplan comes first: it drives networkd or \
             NetworkManager itself)\n"
        ),
        "{text}"
    );
    let out = vmcust(&["plan", "--root", root, "--format", "json", &spec]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["renderer"], "netplan");
    assert!(
        json["renderer_reason"]
            .as_str()
            .unwrap()
            .starts_with("detected: /etc/netplan exists"),
        "{json}"
    );
    let out = vmcust(&["detect", "--root", root]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("network renderer: netplan (detected: /etc/netplan exists"),
        "{text}"
    );

    // Named in the settings file: said so, with what the root has.
    put(r, "etc/vmcust/vmcust.conf", "[network]\nrenderer = eni\n");
    let out = vmcust(&["detect", "--root", root]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "network renderer: eni (set by [network] renderer in /etc/vmcust/vmcust.conf; \
             the root's own stack is netplan)"
        ),
        "{text}"
    );
    // --renderer wins over the settings file.
    let out = vmcust(&["plan", "--root", root, "--renderer", "networkd", &spec]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with(
            "network   renderer networkd (set by --renderer; the root's own stack is netplan)\n"
        ),
        "{text}"
    );
}

#[test]
fn plan_refuses_a_root_with_no_stack_and_detect_says_why() {
    let dir = root_for_dhcp_spec();
    let r = dir.path();
    let root = r.to_str().unwrap();
    let before = files(r);
    let out = vmcust(&["plan", "--root", root, &dhcp_spec()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(65), "{err}");
    assert!(
        err.contains("the root has no network stack vmcust can name"),
        "{err}"
    );
    assert!(
        err.contains("[network] renderer in /etc/vmcust/vmcust.conf"),
        "{err}"
    );
    let out = vmcust(&["apply", "--root", root, &dhcp_spec()]);
    assert_eq!(out.status.code(), Some(65));
    assert_eq!(files(r), before, "a refused apply changed the root");
    let out = vmcust(&["detect", "--root", root]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("network renderer: none (the root has no network stack vmcust can name"),
        "{text}"
    );
    // Named in the settings file, the same root plans.
    put(
        r,
        "etc/vmcust/vmcust.conf",
        "[network]\nrenderer = networkd\n",
    );
    let out = vmcust(&["plan", "--root", root, &dhcp_spec()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.starts_with(
            "network   renderer networkd (set by [network] renderer in /etc/vmcust/vmcust.conf)\n"
        ),
        "{text}"
    );
}

#[test]
fn a_boot_on_a_root_with_no_stack_fails_and_changes_nothing() {
    let vm = support::vm::Vm::new();
    // The example root's netplan taken away: no stack the table can name.
    fs::remove_dir_all(vm.path("/etc/netplan")).unwrap();
    fs::remove_file(vm.path("/usr/sbin/netplan")).unwrap();
    let etc = support::snapshot(&vm.path("/etc"));
    vm.hand_over(
        &fs::read_to_string(support::repo().join("examples/specs/dhcp.cfg")).unwrap(),
        &[],
    );
    let out = vm.run("early");
    let log = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(65), "{log}");
    assert!(
        log.contains("the root has no network stack vmcust can name"),
        "{log}"
    );
    // Reported to vCenter as a network failure (GUESTCUST_EVENT_NETWORK_SETUP_FAILED).
    let state = vm.final_state().unwrap();
    assert!(state.contains(" 101 "), "{state}");
    assert_eq!(support::snapshot(&vm.path("/etc")), etc);
}
