//! Netplan's own generator accepts every rendered netplan file: for each example spec,
//! `netplan generate --root-dir` (Debian's netplan.io) turns our YAML into systemd-networkd
//! files, and those carry the addresses, routes and DNS the model asked for.

mod support;

use std::process::Command;

use support::network::{expected, link_keys_network, parse_networkd, render_tree, specs, Summary};
use support::{files, require_tool};
use vmcust::test_api::network::Renderer;

#[test]
fn netplan_generate_accepts_our_files_and_keeps_every_setting() {
    require_tool("netplan", "netplan.io");
    for (spec, net) in specs() {
        let tree = render_tree(&net, Renderer::Netplan);
        let out = Command::new("netplan")
            .arg("generate")
            .arg("--root-dir")
            .arg(tree.path())
            .output()
            .expect("running netplan generate");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "netplan generate failed for {spec}: {stderr}"
        );
        // Netplan warns (but succeeds) about permissions and deprecated keys.
        assert!(
            !stderr.to_lowercase().contains("warning"),
            "netplan warned for {spec}: {stderr}"
        );
        let mut got = Summary::default();
        let generated = files(&tree.path().join("run/systemd/network"));
        for (path, text) in &generated {
            if path.extension().is_some_and(|e| e == "network") {
                parse_networkd(text, &mut got);
            }
        }
        assert_eq!(got, expected(&net), "netplan's networkd output for {spec}");
    }
}

/// `mtu`, `accept-ra` and the DHCP overrides survive netplan's generator: its networkd
/// files carry `MTUBytes=` and `IPv6AcceptRA=` for each NIC, and the overrides.
#[test]
fn netplan_generate_keeps_mtu_and_accept_ra() {
    require_tool("netplan", "netplan.io");
    let tree = render_tree(&link_keys_network(), Renderer::Netplan);
    let out = Command::new("netplan")
        .arg("generate")
        .arg("--root-dir")
        .arg(tree.path())
        .output()
        .expect("running netplan generate");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "netplan generate failed: {stderr}");
    let generated = files(&tree.path().join("run/systemd/network"));
    let text_of = |name: &str| -> String {
        generated
            .iter()
            .filter(|(p, _)| p.to_string_lossy().contains(name))
            .map(|(_, t)| t.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    };
    for (name, mtu, ra) in [
        ("ens192", "9000", "no"),
        ("ens224", "1400", "yes"),
        ("ens256", "1280", "no"),
    ] {
        let text = text_of(name);
        assert!(text.contains(&format!("MTUBytes={mtu}")), "{name}: {text}");
        assert!(
            text.contains(&format!("IPv6AcceptRA={ra}")),
            "{name}: {text}"
        );
    }
    // The DHCPv4 overrides reach networkd's [DHCPv4] section.
    let text = text_of("ens192");
    for line in ["RouteMetric=100", "Hostname=node-a"] {
        assert!(text.contains(line), "ens192 lacks {line}: {text}");
    }
}
