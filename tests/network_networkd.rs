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
use vmcust::plan::network::Renderer;

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
            nics.push((name, mac, iface.start_on_boot, iface.mtu));
        }
        let log = tree.path().join("networkd.log");
        let networkd = Networkd::start(&ns, &tree.path().join("etc/systemd/network"), &log);

        let want = expected(&net);
        let deadline = Instant::now() + Duration::from_secs(15);
        let missing = loop {
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
            if missing.is_empty() || Instant::now() > deadline {
                break missing;
            }
            std::thread::sleep(Duration::from_millis(200));
        };
        drop(networkd);
        let log_text = std::fs::read_to_string(&log).unwrap();
        assert!(
            missing.is_empty(),
            "{spec}: networkd did not configure {missing:?}; its log:\n{log_text}"
        );
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
