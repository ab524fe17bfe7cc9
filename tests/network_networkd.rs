//! systemd-networkd itself applies our `.network` files: for each example spec, a fresh
//! network namespace gets a veth NIC per interface with the spec's MAC, and the real
//! `systemd-networkd` runs in it (in a private mount namespace where our directory is
//! `/etc/systemd/network` and `/sys` is read-only, which tells networkd that no udev
//! will announce the devices). The static addresses and every gateway with its metric
//! must appear, an ONBOOT=no interface must stay down, and networkd must not complain
//! about any line of our files; the link keys network gets its MTUs. Needs root and the
//! Debian package systemd.

mod support;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::network::{
    example_names, expected, link_keys_network, render_tree, shows_route, specs, Netns,
};
use support::{require_root, require_tool};
use vmcust::test_api::network::Renderer;

const NETWORKD: &str = "/usr/lib/systemd/systemd-networkd";

/// systemd-networkd running in a namespace; killed when dropped.
struct Networkd(Child);

impl Networkd {
    fn start(ns: &Netns, config: &Path, log: &Path) -> Networkd {
        let script = format!(
            "mount -o remount,ro /sys && \
             mount --bind '{}' /etc/systemd/network && \
             mount -t tmpfs tmpfs /run/systemd && \
             mkdir -p /run/systemd/netif && chown systemd-network: /run/systemd/netif && \
             exec {NETWORKD}",
            config.display()
        );
        let child = Command::new("ip")
            .args([
                "netns", "exec", &ns.0, "unshare", "--mount", "sh", "-c", &script,
            ])
            .env("SYSTEMD_LOG_LEVEL", "debug")
            .env("SYSTEMD_LOG_TARGET", "console")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .expect("starting systemd-networkd");
        Networkd(child)
    }

    /// Polls `missing` (what is not configured yet) for up to 15 s until it is empty,
    /// then stops networkd; fails naming what is still missing, with networkd's `log`.
    /// The log's text, for more checks.
    fn settle(self, log: &Path, what: &str, mut missing: impl FnMut() -> Vec<String>) -> String {
        let deadline = Instant::now() + Duration::from_secs(15);
        let missing = loop {
            let missing = missing();
            if missing.is_empty() || Instant::now() > deadline {
                break missing;
            }
            std::thread::sleep(Duration::from_millis(200));
        };
        drop(self);
        let log_text = std::fs::read_to_string(log).unwrap();
        assert!(
            missing.is_empty(),
            "{what}: networkd did not configure {missing:?}; its log:\n{log_text}"
        );
        log_text
    }
}

impl Drop for Networkd {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn systemd_networkd_applies_our_files() {
    require_root("systemd-networkd in a network namespace");
    require_tool("ip", "iproute2");
    require_tool("unshare", "util-linux");
    assert!(
        Path::new(NETWORKD).is_file(),
        "{NETWORKD} is missing; install the Debian package systemd"
    );
    let names = example_names();
    // The example specs, and the link keys (MTU, accept-ra, DHCPv4 overrides).
    let link_keys = ("link-keys".to_string(), link_keys_network());
    for (spec, net) in specs().into_iter().chain([link_keys]) {
        let tree = render_tree(&net, Renderer::Networkd);
        let ns = Netns::new("networkd");
        ns.exec("ip", &["link", "set", "lo", "up"]);
        let mut nics = Vec::new();
        for (i, iface) in net.interfaces.iter().enumerate() {
            let mac = iface.mac.to_string();
            let name = names
                .iter()
                .find(|(_, m)| **m == mac)
                .map(|(n, _)| n.clone())
                .unwrap();
            ns.add_nic(&name, &mac, &format!("vmcpeer{i}"));
            nics.push((name, mac, iface.start_on_boot, iface.ip.mtu));
        }
        let log = tree.path().join("networkd.log");
        let networkd = Networkd::start(&ns, &tree.path().join("etc/systemd/network"), &log);

        let want = expected(&net);
        let log_text = networkd.settle(&log, &spec, || {
            let mut missing = Vec::new();
            for (name, mac, on_boot, mtu) in &nics {
                if !on_boot {
                    continue;
                }
                if let Some(mtu) = mtu {
                    let link = ns.exec("ip", &["-o", "link", "show", "dev", name]);
                    if !link.contains(&format!(" mtu {mtu} ")) {
                        missing.push(format!("mtu {mtu} on {name}"));
                    }
                }
                let addrs = ns.exec("ip", &["-o", "addr", "show", "dev", name]);
                for a in &want.addresses[mac] {
                    if !addrs.contains(&format!(" {a} ")) {
                        missing.push(format!("address {a} on {name}"));
                    }
                }
                let routes = ns.exec("ip", &["route", "show", "dev", name])
                    + &ns.exec("ip", &["-6", "route", "show", "dev", name]);
                for (to, via, metric) in &want.routes[mac] {
                    let found = shows_route(&routes, to, via, *metric);
                    if !found {
                        missing.push(format!("route {to} via {via} metric {metric:?} on {name}"));
                    }
                }
            }
            missing
        });
        for (name, _, on_boot, _) in &nics {
            if !on_boot {
                let link = ns.exec("ip", &["-o", "link", "show", "dev", name]);
                assert!(
                    !link.contains(",UP"),
                    "{spec}: {name} has ONBOOT=no but networkd brought it up: {link}"
                );
            }
        }
        let complaints: Vec<&str> = log_text
            .lines()
            .filter(|l| l.contains("10-vmcust-") && l.contains(".network:"))
            .collect();
        assert!(
            complaints.is_empty(),
            "{spec}: networkd complains about our files: {complaints:#?}"
        );
    }
}

/// The VLANs (`vlans`): networkd loads our `.netdev` files as VLANs, each link's file
/// (matched by the MAC its VLANs share) requests its VLAN and configures the link,
/// without a complaint about any of our files. Where the kernel has 802.1Q (this
/// machine's has not), the VLANs must also appear with their id, addresses, routes and
/// MTU, and the link's address must stay off them.
#[test]
fn systemd_networkd_creates_the_vlans() {
    require_root("systemd-networkd in a network namespace");
    require_tool("ip", "iproute2");
    require_tool("unshare", "util-linux");
    let net = support::network::vlan_network();
    let tree = render_tree(&net, Renderer::Networkd);
    let ns = Netns::new("networkd-vlan");
    ns.exec("ip", &["link", "set", "lo", "up"]);
    // The names the files give them (no udev here to apply the `.link` rename).
    ns.add_nic("eth0", "00:50:56:a6:8c:08", "vmcpeer0");
    ns.add_nic("ens224", "00:50:56:a6:ef:7d", "vmcpeer1");
    let kernel_vlans = Command::new("ip")
        .args([
            "netns", "exec", &ns.0, "ip", "link", "add", "link", "vmcpeer0",
        ])
        .args(["name", "vmcprobe", "type", "vlan", "id", "4094"])
        .output()
        .unwrap()
        .status
        .success();
    if kernel_vlans {
        ns.exec("ip", &["link", "del", "vmcprobe"]);
    }
    let log = tree.path().join("networkd.log");
    let networkd = Networkd::start(&ns, &tree.path().join("etc/systemd/network"), &log);
    let mut want: Vec<(&str, &str)> = vec![("eth0", " 10.0.0.5/24 "), ("ens224", " 10.2.0.5/24 ")];
    if kernel_vlans {
        want.extend([
            ("eth0.100", "vlan protocol 802.1Q id 100 "),
            ("eth0.100", " 10.100.0.5/24 "),
            ("eth0.100", " fd00:100::5/64 "),
            ("eth0.100", " mtu 1400 "),
            ("storage", "vlan protocol 802.1Q id 200 "),
            ("storage", " 10.200.0.5/24 "),
        ]);
    }
    let log_lines = [
        "eth0.100: loaded \"vlan\"",
        "storage: loaded \"vlan\"",
        "eth0: Requested stacked netdev 'eth0.100'",
        "ens224: Requested stacked netdev 'storage'",
    ];
    let log_text = networkd.settle(&log, "the VLANs", || {
        let mut missing = Vec::new();
        for (dev, item) in &want {
            let shown = Command::new("ip")
                .args([
                    "netns", "exec", &ns.0, "ip", "-d", "addr", "show", "dev", dev,
                ])
                .output()
                .unwrap();
            let shown = String::from_utf8_lossy(&shown.stdout).replace('\n', " ");
            if !shown.contains(item) {
                missing.push(format!("{item:?} on {dev}"));
            }
        }
        let log_text = std::fs::read_to_string(&log).unwrap_or_default();
        for l in log_lines {
            if !log_text.contains(l) {
                missing.push(format!("log line {l:?}"));
            }
        }
        missing
    });
    if kernel_vlans {
        let routes = ns.exec("ip", &["route", "show", "dev", "eth0.100"]);
        assert!(
            shows_route(&routes, "192.168.0.0/16", "10.100.0.254", Some(50)),
            "{routes}"
        );
        // The link's address stays on the link: its file does not match the VLAN.
        let vlan = ns.exec("ip", &["-o", "addr", "show", "dev", "eth0.100"]);
        assert!(!vlan.contains(" 10.0.0.5/24 "), "{vlan}");
    }
    let complaints: Vec<&str> = log_text
        .lines()
        .filter(|l| l.contains("10-vmcust-") && (l.contains(".network:") || l.contains(".netdev:")))
        .collect();
    assert!(
        complaints.is_empty(),
        "networkd complains about our files: {complaints:#?}"
    );
}
