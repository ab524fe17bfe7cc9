//! The SUSE renderer on synthetic SLES roots: netconfig's `config` keeps every line but
//! its DNS keys and is backed up once, a template's leftover ifcfg/ifroute files for our
//! NICs are moved aside (never `ifcfg-lo`), a second run changes nothing, and DHCP DNS
//! is refused through `NETCONFIG_DNS_POLICY`. No wicked runs on Debian: what wicked makes
//! of the files is covered by the golden trees and the equivalence test only.

mod support;

use std::fs;
use std::path::Path;

use support::files;
use support::network::{apply_keeping_originals, specs};
use vmcust::test_api::apply::{apply, Change};
use vmcust::test_api::facts::NetworkFacts;
use vmcust::test_api::model::Network;
use vmcust::test_api::network::{plan_network, NetworkError, Renderer, HEADER};
use vmcust::test_api::plan::{Action, Plan};
use vmcust::test_api::root::Root;

/// A file in a synthetic root (parents created).
fn put(root: &Path, path: &str, text: &str) {
    let p = root.join(path);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

/// A network device with a MAC in the root's `/sys/class/net`.
fn nic(root: &Path, name: &str, mac: &str) {
    put(
        root,
        &format!("sys/class/net/{name}/address"),
        &format!("{mac}\n"),
    );
    fs::create_dir_all(root.join(format!("sys/class/net/{name}/device"))).unwrap();
}

/// A SLES 15 root with wicked installed and the examples' NICs.
fn sles_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    nic(r, "ens192", "00:50:56:a6:8c:08");
    nic(r, "ens224", "00:50:56:a6:ef:7d");
    nic(r, "ens256", "00:50:56:a6:5a:de");
    // Installed, as on SLES; `files()` could not read a dangling unit link.
    put(r, "usr/sbin/wicked", "");
    dir
}

fn facts(root: &Path) -> NetworkFacts {
    NetworkFacts::gather(&Root::new(root).unwrap()).unwrap()
}

fn spec(name: &str) -> Network {
    specs().into_iter().find(|(n, _)| n == name).unwrap().1
}

/// The shape of SLES's `config`: long comment blocks around shell variables.
const SLES_CONFIG: &str = "\
## Path:        System/Network/General
## Description: Global network configuration
#
# Note: some of these settings are also in ifcfg-* files.
#
## Type:        yesno
## Default:     yes
NETCONFIG_MODIFY_RESOLV_CONF=\"yes\"

## Type:        string
## Default:     \"auto\"
#
# Defines the DNS merge policy as documented in netconfig(8).
#
NETCONFIG_DNS_POLICY=\"auto\"

## Type:        string
## Default:     \"\"
#
# List of DNS domain names used for host-name lookup.
#
NETCONFIG_DNS_STATIC_SEARCHLIST=\"template.example\"

## Type:        string
## Default:     \"\"
#
# List of DNS nameserver IP addresses to use for host-name lookup.
#
NETCONFIG_DNS_STATIC_SERVERS=\"192.0.2.53\"
\t
LINK_REQUIRED=\"auto\"
";

const LEFTOVER_IFCFG: &str = "BOOTPROTO='dhcp'\nSTARTMODE='auto'\n";
const LEFTOVER_IFROUTE: &str = "default 192.0.2.1 - -\n";
const LOOPBACK: &str = "IPADDR='127.0.0.1/8'\nSTARTMODE='nfsroot'\nBOOTPROTO='static'\n";
const OTHER_IFCFG: &str = "BOOTPROTO='dhcp'\n";

#[test]
fn config_keeps_its_other_lines_and_leftovers_move_once() {
    let dir = sles_root();
    let r = dir.path();
    put(r, "etc/sysconfig/network/config", SLES_CONFIG);
    put(r, "etc/sysconfig/network/ifcfg-lo", LOOPBACK);
    put(r, "etc/sysconfig/network/ifcfg-ens192", LEFTOVER_IFCFG);
    put(r, "etc/sysconfig/network/ifroute-ens192", LEFTOVER_IFROUTE);
    put(r, "etc/sysconfig/network/ifcfg-eth9", OTHER_IFCFG);
    let before = files(r);

    // Detected, not forced: wicked is installed.
    let net = spec("static-2nic-ipv6");
    let actions = plan_network(&net, &facts(r), None).unwrap();
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
                "/etc/sysconfig/network/ifcfg-ens192",
                "/etc/sysconfig/network/.vmcust-disabled/ifcfg-ens192"
            ),
            pair(
                "/etc/sysconfig/network/ifroute-ens192",
                "/etc/sysconfig/network/.vmcust-disabled/ifroute-ens192"
            ),
            pair(
                "/etc/sysconfig/network/config",
                "/etc/sysconfig/network/config.vmcust-backup"
            ),
        ]
    );

    // Every original text is still somewhere in the root.
    let after = apply_keeping_originals(r, &actions, &before);
    let at = |p: &str| after[Path::new(p)].as_str();
    assert_eq!(
        at("etc/sysconfig/network/config.vmcust-backup"),
        SLES_CONFIG
    );
    assert_eq!(at("etc/sysconfig/network/ifcfg-lo"), LOOPBACK);
    assert_eq!(at("etc/sysconfig/network/ifcfg-eth9"), OTHER_IFCFG);
    // Only the two DNS lines differ; the policy stays the template's.
    let want = SLES_CONFIG
        .replace(
            "NETCONFIG_DNS_STATIC_SEARCHLIST=\"template.example\"",
            "NETCONFIG_DNS_STATIC_SEARCHLIST=\"prod.example.com example.com\"",
        )
        .replace(
            "NETCONFIG_DNS_STATIC_SERVERS=\"192.0.2.53\"",
            "NETCONFIG_DNS_STATIC_SERVERS=\"10.20.145.1 10.20.145.2\"",
        );
    assert_eq!(
        at("etc/sysconfig/network/config"),
        format!("{HEADER}{want}")
    );
    assert!(!after.contains_key(Path::new("etc/resolv.conf")));

    // A second run plans no moves and changes nothing: the backup stays the original.
    let again = plan_network(&net, &facts(r), None).unwrap();
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

#[test]
fn dhcp_dns_is_refused_through_the_netconfig_policy() {
    let dir = sles_root();
    let r = dir.path();
    put(r, "etc/sysconfig/network/config", SLES_CONFIG);
    // ens224 takes DHCP without its DNS; netconfig may then merge no interface's DNS.
    let net = spec("mixed-3nic");
    let actions = plan_network(&net, &facts(r), Some(Renderer::Suse)).unwrap();
    apply(&Root::new(r).unwrap(), &Plan { actions }).unwrap();
    let config = fs::read_to_string(r.join("etc/sysconfig/network/config")).unwrap();
    assert!(
        config.contains("\nNETCONFIG_DNS_POLICY=\"STATIC\"\n"),
        "{config}"
    );
    let ifcfg = fs::read_to_string(r.join("etc/sysconfig/network/ifcfg-ens224")).unwrap();
    assert!(ifcfg.contains("BOOTPROTO='dhcp4'\n"), "{ifcfg}");
}

#[test]
fn a_missing_config_is_created_and_a_missing_mac_is_an_error() {
    let dir = sles_root();
    let r = dir.path();
    let net = spec("static-2nic-ipv6");
    let actions = plan_network(&net, &facts(r), Some(Renderer::Suse)).unwrap();
    apply(&Root::new(r).unwrap(), &Plan { actions }).unwrap();
    let config = fs::read_to_string(r.join("etc/sysconfig/network/config")).unwrap();
    assert!(config.starts_with(HEADER), "{config}");
    assert!(
        config.contains("NETCONFIG_DNS_STATIC_SERVERS=\"10.20.145.1 10.20.145.2\"\n"),
        "{config}"
    );
    assert!(!r
        .join("etc/sysconfig/network/config.vmcust-backup")
        .exists());

    fs::remove_dir_all(r.join("sys/class/net/ens224")).unwrap();
    let err = plan_network(&net, &facts(r), Some(Renderer::Suse)).unwrap_err();
    assert!(matches!(err, NetworkError::MacNotFound { .. }), "{err:?}");
}

/// `accept-ra` (SUSE has no ifcfg key for it) goes to a sysctl file wicked reads per
/// interface; the real `systemd-sysctl` (which applies it when a NIC appears) takes
/// every line: in a network namespace with the link keys network's three NICs, each
/// NIC's `accept_ra` becomes what the source says.
#[test]
fn accept_ra_is_a_sysctl_systemd_sysctl_applies() {
    support::require_root("ip netns");
    support::require_tool("ip", "iproute2");
    const SYSCTL: &str = "/usr/lib/systemd/systemd-sysctl";
    assert!(
        Path::new(SYSCTL).is_file(),
        "{SYSCTL} is missing; install the Debian package systemd"
    );
    let net = support::network::link_keys_network();
    let tree = support::network::render_tree(&net, Renderer::Suse);
    let file = tree.path().join("etc/sysctl.d/70-vmcust-net.conf");
    let text = fs::read_to_string(&file).unwrap();
    assert_eq!(
        text,
        format!(
            "{HEADER}net/ipv6/conf/ens192/accept_ra = 0\n\
             net/ipv6/conf/ens224/accept_ra = 1\n\
             net/ipv6/conf/ens256/accept_ra = 0\n"
        )
    );
    let ns = support::network::Netns::new("suse-sysctl");
    let want = [
        ("ens192", "00:50:56:a6:8c:08", "0"),
        ("ens224", "00:50:56:a6:ef:7d", "1"),
        ("ens256", "00:50:56:a6:5a:de", "0"),
    ];
    for (i, (name, mac, _)) in want.iter().enumerate() {
        ns.add_nic(name, mac, &format!("vmcpeer{i}"));
        // The opposite of what the file says, so that applying it shows.
        let flip = if want[i].2 == "0" { "1" } else { "0" };
        ns.exec(
            "sysctl",
            &[
                "-q",
                "-w",
                &format!("net/ipv6/conf/{name}/accept_ra={flip}"),
            ],
        );
    }
    ns.exec(SYSCTL, &[file.to_str().unwrap()]);
    for (name, _, value) in want {
        let got = ns.exec(
            "cat",
            &[&format!("/proc/sys/net/ipv6/conf/{name}/accept_ra")],
        );
        assert_eq!(got.trim(), value, "{name}");
    }
}
