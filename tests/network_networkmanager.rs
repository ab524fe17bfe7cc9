//! NetworkManager's own code reads what we render: every keyfile of every example spec
//! goes through `nmcli --offline` (libnm's keyfile parser and profile verification, no
//! daemon needed), which must accept it and give back the same addresses, routes and
//! DNS; and `NetworkManager --print-config` must merge our `conf.d` drop-in into a
//! `no-auto-default` list holding both an existing `*` and our MACs. Needs the Debian
//! package network-manager.

mod support;

use std::fs;
use std::process::Command;

use support::network::{
    expected, link_keys_network, nmcli_roundtrip, parse_nm, render_tree, specs, Summary,
};
use support::{files, require_tool};
use vmcust::test_api::network::Renderer;

#[test]
fn networkmanager_accepts_every_keyfile_and_reads_the_same_settings() {
    require_tool("nmcli", "network-manager");
    for (spec, net) in specs() {
        let tree = render_tree(&net, Renderer::NetworkManager);
        let mut ours = Summary::default();
        let mut theirs = Summary::default();
        for (path, text) in files(tree.path()) {
            if path.extension().is_none_or(|e| e != "nmconnection") {
                continue;
            }
            let mode = fs::metadata(tree.path().join(&path)).unwrap().permissions();
            assert_eq!(
                std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
                0o600,
                "{}: NetworkManager ignores keyfiles others can read",
                path.display()
            );
            let normalized = nmcli_roundtrip(&text)
                .unwrap_or_else(|e| panic!("{spec}: nmcli rejects {}: {e}", path.display()));
            parse_nm(&text, &mut ours);
            parse_nm(&normalized, &mut theirs);
        }
        assert_eq!(ours, expected(&net), "{spec}: our keyfiles");
        assert_eq!(
            theirs, ours,
            "{spec}: keyfiles as NetworkManager reads them"
        );
    }
}

#[test]
fn our_drop_in_adds_to_an_existing_no_auto_default() {
    require_tool("NetworkManager", "network-manager");
    let (_, net) = specs().into_iter().next().unwrap();
    let tree = render_tree(&net, Renderer::NetworkManager);
    let conf_d = tree.path().join("etc/NetworkManager/conf.d");
    // What RHEL's server profile ships; ours must not replace it.
    fs::write(conf_d.join("00-server.conf"), "[main]\nno-auto-default=*\n").unwrap();
    let main = tree.path().join("NetworkManager.conf");
    fs::write(&main, "").unwrap();
    let out = Command::new("NetworkManager")
        .arg("--print-config")
        .arg("--config")
        .arg(&main)
        .arg("--config-dir")
        .arg(&conf_d)
        .arg("--system-config-dir")
        .arg(tree.path().join("none"))
        .output()
        .expect("running NetworkManager --print-config");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = text
        .lines()
        .find(|l| l.starts_with("no-auto-default="))
        .unwrap_or_else(|| panic!("no no-auto-default in:\n{text}"));
    assert!(line.contains("*"), "{line}");
    for iface in &net.interfaces {
        assert!(line.contains(&iface.mac.to_string()), "{line}");
    }
}

/// `mtu` and the IPv6 method `accept-ra` decides survive NetworkManager's own reading
/// of the keyfiles.
#[test]
fn networkmanager_keeps_mtu_and_the_accept_ra_method() {
    require_tool("nmcli", "network-manager");
    let tree = render_tree(&link_keys_network(), Renderer::NetworkManager);
    let profiles = files(tree.path());
    for (name, mtu, method) in [
        ("ens192", "9000", "link-local"),
        ("ens224", "1400", "auto"),
        ("ens256", "1280", "link-local"),
    ] {
        let (_, text) = profiles
            .iter()
            .find(|(p, _)| {
                p.to_string_lossy()
                    .ends_with(&format!("vmcust-{name}.nmconnection"))
            })
            .unwrap_or_else(|| panic!("no profile for {name}"));
        let read = nmcli_roundtrip(text).unwrap_or_else(|e| panic!("{name}: nmcli rejects: {e}"));
        let ini: String = read.lines().map(|l| format!("{}\n", l.trim())).collect();
        assert!(ini.contains(&format!("mtu={mtu}\n")), "{name}: {read}");
        let v6 = ini.split("[ipv6]").nth(1).unwrap_or_default();
        assert!(v6.contains(&format!("method={method}\n")), "{name}: {read}");
    }
}
