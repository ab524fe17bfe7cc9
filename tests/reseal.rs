//! Sealing is the inverse of customizing: on a template root of each network stack, a
//! customization (the real binary, `vmcust apply`) followed by `vmcust clean
//! --network-configs` (or the stand-in's `cloud-init clean --configs network`) leaves the
//! template's network configuration exactly as it was — every file's bytes, mode and
//! owner, every directory. And `clean` never follows a symlink out of what it removes.

mod support;

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;

use support::vmcust;

/// A file in a scratch root, with its parents, mode and owner.
fn put(root: &Path, path: &str, text: &str, mode: u32, owner: (u32, u32)) {
    let p = root.join(path);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(&p, text).unwrap();
    fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(mode)).unwrap();
    std::os::unix::fs::lchown(&p, Some(owner.0), Some(owner.1)).unwrap();
}

/// Enables a systemd unit the way `systemctl enable` does.
fn enable(root: &Path, unit: &str) {
    let wants = root.join("etc/systemd/system/multi-user.target.wants");
    fs::create_dir_all(&wants).unwrap();
    symlink(format!("/usr/lib/systemd/system/{unit}"), wants.join(unit)).unwrap();
}

/// Two VMware NICs, as the kernel names them.
fn nics(root: &Path) {
    for (dev, mac) in [
        ("ens192", "00:50:56:a6:8c:08"),
        ("ens224", "00:50:56:a6:ef:7d"),
    ] {
        put(
            root,
            &format!("sys/class/net/{dev}/address"),
            &format!("{mac}\n"),
            0o444,
            (0, 0),
        );
        fs::create_dir_all(root.join(format!("sys/class/net/{dev}/device"))).unwrap();
    }
}

/// The customization: both NICs static, DNS from the spec (so `/etc/resolv.conf` is
/// written where nothing else carries DNS).
const SPEC: &str = "[NETWORK]\nNETWORKING = yes\nHOSTNAME = clone01\nDOMAINNAME = example.com\n\n\
[NIC-CONFIG]\nNICS = NIC1,NIC2\n\n\
[NIC1]\nMACADDR = 00:50:56:a6:8c:08\nONBOOT = yes\nBOOTPROTO = static\nIPADDR = 10.20.87.154\nNETMASK = 255.255.252.0\nGATEWAY = 10.20.87.253\nPRIMARY = yes\n\n\
[NIC2]\nMACADDR = 00:50:56:a6:ef:7d\nONBOOT = yes\nBOOTPROTO = static\nIPADDR = 192.168.6.102\nNETMASK = 255.255.0.0\n\n\
[DNS]\nDNSFROMDHCP = no\nSUFFIX|1 = example.com\nNAMESERVER|1 = 10.20.145.1\n";

/// Where network configuration lives in a root.
const NETWORK_PATHS: &[&str] = &[
    "etc/netplan",
    "etc/systemd/network",
    "etc/NetworkManager",
    "etc/sysconfig",
    "etc/network",
    "etc/resolv.conf",
];

/// Every file, link and directory under the network paths, with mode and owner.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, String> {
    support::snapshot_of(root, NETWORK_PATHS)
}

/// A template of one stack: (name, renderer, how its root is laid out).
type Stack = (&'static str, &'static str, fn(&Path));

const STACKS: &[Stack] = &[
    ("Ubuntu: netplan, a plain resolv.conf", "netplan", |r| {
        put(r, "usr/sbin/netplan", "", 0o755, (0, 0));
        put(
            r,
            "etc/netplan/50-cloud-init.yaml",
            "network:\n  version: 2\n  ethernets:\n    ens192:\n      dhcp4: true\n",
            0o600,
            (0, 0),
        );
        put(r, "etc/netplan/01-template.yaml",
            "network:\n  version: 2\n  ethernets:\n    all:\n      match:\n        name: \"en*\"\n      dhcp4: true\n",
            0o640, (0, 4));
        put(
            r,
            "etc/resolv.conf",
            "nameserver 192.0.2.53\n",
            0o644,
            (0, 0),
        );
    }),
    ("Photon OS: networkd", "networkd", |r| {
        enable(r, "systemd-networkd.service");
        put(
            r,
            "etc/systemd/network/01-template.network",
            "[Match]\nName=en*\n\n[Network]\nDHCP=yes\n",
            0o644,
            (0, 101),
        );
        put(
            r,
            "etc/systemd/network/20-eth.network",
            "[Match]\nName=eth*\n\n[Network]\nDHCP=yes\n",
            0o644,
            (0, 0),
        );
        put(
            r,
            "etc/resolv.conf",
            "nameserver 192.0.2.53\n",
            0o644,
            (0, 0),
        );
    }),
    ("RHEL 9: NetworkManager", "networkmanager", |r| {
        enable(r, "NetworkManager.service");
        put(
            r,
            "etc/NetworkManager/NetworkManager.conf",
            "[main]\nplugins=keyfile\n",
            0o644,
            (0, 0),
        );
        fs::create_dir_all(r.join("etc/NetworkManager/conf.d")).unwrap();
        put(r, "etc/NetworkManager/system-connections/Wired connection 1.nmconnection",
            "[connection]\nid=Wired connection 1\ntype=ethernet\ninterface-name=ens192\n\n[ipv4]\nmethod=auto\n",
            0o600, (0, 0));
        put(
            r,
            "etc/NetworkManager/system-connections/ens224.nmconnection",
            "[connection]\nid=ens224\ntype=ethernet\n\n[ethernet]\nmac-address=00:50:56:A6:EF:7D\n",
            0o600,
            (0, 0),
        );
    }),
    ("RHEL 7: ifcfg and the network service", "sysconfig", |r| {
        put(
            r,
            "etc/sysconfig/network",
            "NETWORKING=yes\n",
            0o644,
            (0, 0),
        );
        put(
            r,
            "etc/sysconfig/network-scripts/ifcfg-lo",
            "DEVICE=lo\nONBOOT=yes\n",
            0o644,
            (0, 0),
        );
        put(
            r,
            "etc/sysconfig/network-scripts/ifcfg-ens192",
            "DEVICE=ens192\nBOOTPROTO=dhcp\nONBOOT=yes\n",
            0o644,
            (0, 0),
        );
        put(
            r,
            "etc/sysconfig/network-scripts/route-ens192",
            "10.0.0.0/8 via 10.20.87.1 dev ens192\n",
            0o600,
            (0, 0),
        );
        put(
            r,
            "etc/resolv.conf",
            "search template.example\nnameserver 192.0.2.53\n",
            0o644,
            (0, 0),
        );
    }),
    ("SLES 15: wicked", "suse", |r| {
        enable(r, "wicked.service");
        put(
            r,
            "etc/sysconfig/network/ifcfg-lo",
            "STARTMODE='nfsroot'\n",
            0o644,
            (0, 0),
        );
        put(
            r,
            "etc/sysconfig/network/ifcfg-ens192",
            "BOOTPROTO='dhcp'\nSTARTMODE='auto'\n",
            0o600,
            (0, 0),
        );
        put(
            r,
            "etc/sysconfig/network/ifroute-ens192",
            "default 10.20.87.1 - -\n",
            0o644,
            (0, 0),
        );
        put(
            r,
            "etc/sysconfig/network/config",
            "## Path: System\nNETCONFIG_DNS_POLICY=\"auto\"\nNETCONFIG_DNS_STATIC_SERVERS=\"\"\n",
            0o644,
            (0, 0),
        );
    }),
    ("Debian: ifupdown", "eni", |r| {
        put(r, "sbin/ifup", "", 0o755, (0, 0));
        put(
            r,
            "etc/network/interfaces",
            "auto lo\niface lo inet loopback\n\nallow-hotplug ens192\niface ens192 inet dhcp\n",
            0o644,
            (0, 0),
        );
        put(
            r,
            "etc/network/interfaces.d/ens224",
            "auto ens224\niface ens224 inet dhcp\n",
            0o640,
            (1000, 1000),
        );
        put(
            r,
            "etc/resolv.conf",
            "nameserver 192.0.2.53\n",
            0o644,
            (0, 0),
        );
    }),
];

/// Applies the customization with the stack's renderer and checks it changed the
/// network tree (moved the template's files aside), so the comparison after sealing
/// can fail.
fn customize(root: &Path, renderer: &str, name: &str) -> BTreeMap<PathBuf, String> {
    let spec = root.join("cust.cfg");
    fs::write(&spec, SPEC).unwrap();
    let before = snapshot(root);
    let r = root.to_str().unwrap();
    let o = vmcust(&[
        "apply",
        "--root",
        r,
        "--renderer",
        renderer,
        spec.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{name}: apply: {o:?}");
    let after = snapshot(root);
    assert!(
        after
            .keys()
            .any(|p| p.to_string_lossy().contains(".vmcust-")),
        "{name}: the customization moved nothing aside: {after:#?}"
    );
    assert_ne!(before, after, "{name}");
    before
}

#[test]
fn clean_network_configs_puts_every_stacks_template_back_byte_mode_and_owner() {
    for (name, renderer, setup) in STACKS {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        nics(r);
        setup(r);
        let template = customize(r, renderer, name);
        let o = vmcust(&["clean", "--root", r.to_str().unwrap(), "--network-configs"]);
        assert_eq!(o.status.code(), Some(0), "{name}: clean: {o:?}");
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains("put back /etc/"), "{name}: {out}");
        assert_eq!(
            snapshot(r),
            template,
            "{name}: the sealed template differs; clean said:\n{out}"
        );
    }
}

#[test]
fn a_template_customized_twice_is_still_put_back_as_it_was() {
    let (name, renderer, setup) = STACKS[0];
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    nics(r);
    setup(r);
    let template = customize(r, renderer, name);
    let again = vmcust(&[
        "apply",
        "--root",
        r.to_str().unwrap(),
        "--renderer",
        renderer,
        r.join("cust.cfg").to_str().unwrap(),
    ]);
    assert_eq!(again.status.code(), Some(0), "{again:?}");
    let o = vmcust(&["clean", "--root", r.to_str().unwrap(), "--network-configs"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert_eq!(snapshot(r), template);
}

#[test]
fn the_stand_ins_clean_configs_network_puts_the_template_back_too() {
    let (name, renderer, setup) = STACKS[2];
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    nics(r);
    setup(r);
    let template = customize(r, renderer, name);
    let bin = tempfile::tempdir().unwrap();
    let link = bin.path().join("cloud-init");
    symlink(env!("CARGO_BIN_EXE_vmcust"), &link).unwrap();
    let o = Command::new(&link)
        .args(["clean", "--configs", "network"])
        .env(vmcust::test_api::state::ROOT_ENV, r)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert_eq!(snapshot(r), template);
}

#[test]
fn a_file_put_in_the_way_after_customizing_stops_clean_before_it_changes_anything() {
    let (name, renderer, setup) = STACKS[0];
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    nics(r);
    setup(r);
    customize(r, renderer, name);
    put(
        r,
        "etc/netplan/50-cloud-init.yaml",
        "network: {version: 2}\n",
        0o600,
        (0, 0),
    );
    put(r, "var/log/vmcust.log", "log\n", 0o600, (0, 0));
    let before = snapshot(r);
    let o = vmcust(&[
        "clean",
        "--root",
        r.to_str().unwrap(),
        "--network-configs",
        "--logs",
    ]);
    assert_eq!(o.status.code(), Some(65), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("/etc/netplan/50-cloud-init.yaml was not written by vmcust")
            && err.contains("/etc/netplan/.vmcust-disabled/50-cloud-init.yaml"),
        "{err}"
    );
    assert_eq!(snapshot(r), before);
    assert!(
        r.join("var/log/vmcust.log").exists(),
        "the log went before the error"
    );
}

/// Files outside the state directory that a symlinked state directory points at.
fn planted(r: &Path) -> Vec<(&'static str, &'static str)> {
    let files = [
        ("srv/data/important.db", "records"),
        ("srv/data/sub/nested.txt", "nested"),
        ("etc/passwd", "root:x:0:0::/root:/bin/sh\n"),
        ("etc/shadow", "root:*:19000::::::\n"),
    ];
    for (p, t) in files {
        put(r, p, t, 0o600, (0, 0));
    }
    files.to_vec()
}

// threat T11 (docs/security.md)
#[test]
fn clean_removes_a_symlinked_state_directory_as_a_link_and_never_empties_its_target() {
    // Threat (issue 16): /var/lib/vmcust -> / made clean empty the root.
    for target in ["/", "/srv/data", "../../srv/data"] {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        let files = planted(r);
        fs::create_dir_all(r.join("var/lib")).unwrap();
        symlink(target, r.join("var/lib/vmcust")).unwrap();
        // A link inside a real log rotation directory is not followed either.
        fs::create_dir_all(r.join("var/log/vmcust.log.d")).unwrap();
        symlink("/srv/data", r.join("var/log/vmcust.log.d/escape")).unwrap();
        let o = vmcust(&["clean", "--root", r.to_str().unwrap(), "--state", "--logs"]);
        assert_eq!(o.status.code(), Some(0), "{target}: {o:?}");
        for (p, t) in &files {
            assert_eq!(fs::read_to_string(r.join(p)).unwrap(), *t, "{target}: {p}");
        }
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains("removed /var/lib/vmcust\n"), "{target}: {out}");
        assert!(!fs::symlink_metadata(r.join("var/lib/vmcust"))
            .is_ok_and(|m| m.file_type().is_symlink()));
        assert!(!r.join("var/log/vmcust.log.d").exists());
    }
}

// threat T11 (docs/security.md)
#[test]
fn links_inside_the_state_directory_are_removed_as_links() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    let files = planted(r);
    put(
        r,
        "var/lib/vmcust/instances/i-1/result.json",
        "{}",
        0o600,
        (0, 0),
    );
    symlink("/srv/data", r.join("var/lib/vmcust/instances/i-1/data")).unwrap();
    symlink("/etc", r.join("var/lib/vmcust/pending")).unwrap();
    let o = vmcust(&["clean", "--root", r.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    for (p, t) in &files {
        assert_eq!(fs::read_to_string(r.join(p)).unwrap(), *t, "{p}");
    }
    assert!(!r.join("var/lib/vmcust/instances").exists());
    assert!(fs::symlink_metadata(r.join("var/lib/vmcust/pending")).is_err());
}

#[test]
fn a_dry_run_says_what_it_would_put_back_and_a_clean_cut_short_is_finished_by_another() {
    let (name, renderer, setup) = STACKS[3];
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    nics(r);
    setup(r);
    let template = customize(r, renderer, name);
    let root = r.to_str().unwrap();
    let customized = snapshot(r);
    let o = vmcust(&["clean", "--root", root, "--network-configs", "--dry-run"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("would put back /etc/sysconfig/network-scripts/ifcfg-ens192 (the template's, from /etc/sysconfig/network-scripts/.vmcust-disabled/ifcfg-ens192)"),
        "{out}"
    );
    assert!(out.contains("would put back /etc/resolv.conf"), "{out}");
    assert_eq!(snapshot(r), customized, "the dry run changed something");
    // A clean killed after its first steps: one vmcust file gone, one file back.
    fs::remove_file(r.join("etc/sysconfig/network-scripts/ifcfg-ens224")).unwrap();
    fs::rename(
        r.join("etc/resolv.conf.vmcust-backup"),
        r.join("etc/resolv.conf"),
    )
    .unwrap();
    let o = vmcust(&["clean", "--root", root, "--network-configs"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert_eq!(snapshot(r), template);
}
