//! A hostile or sloppy host, at every door: values that would inject into a system file
//! (a shell command in a sourced ifcfg file, extra lines in /etc/hosts or resolv.conf, a
//! time zone that is a path) are refused by the model's constructors whatever the source.
//! Each row: `vmcust apply` exits 65, the root is unchanged, the message names the place.

mod support;

use std::fs;
use std::path::Path;
use std::process::Output;

use support::{scratch_root, snapshot};

/// The binary with no real tools on its PATH.
fn vmcust(args: &[&str]) -> Output {
    support::vmcust_env(args, &[("PATH", "/nonexistent")])
}

/// A guestinfo directory holding `metadata`.
fn guestinfo(metadata: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("guestinfo.metadata"), metadata).unwrap();
    d
}

/// An OVF environment file with these properties (values already XML-escaped).
fn ovf(dir: &Path, props: &[(&str, &str)]) -> String {
    let path = dir.join("ovf-env.xml");
    fs::write(&path, support::ovf_env(props)).unwrap();
    path.display().to_string()
}

const NET_V2: &str = "network:\n  version: 2\n  ethernets:\n    id0:\n      match: {macaddress: '00:50:56:a6:8c:08'}\n      addresses: [10.1.2.3/24]\n";

/// Applies with `extra` arguments to a scratch copy of the example root (with `tweak`
/// applied first) and checks the refusal.
fn refused(name: &str, extra: &[&str], tweak: impl Fn(&Path), place: &str) {
    for renderer in [
        "sysconfig",
        "networkd",
        "eni",
        "suse",
        "networkmanager",
        "netplan",
    ] {
        let root = scratch_root();
        tweak(root.path());
        let before = snapshot(root.path());
        let mut args = vec![
            "apply",
            "--root",
            root.path().to_str().unwrap(),
            "--renderer",
            renderer,
        ];
        args.extend_from_slice(extra);
        let out = vmcust(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(65), "{name} ({renderer}): {err}");
        assert!(
            err.contains(place),
            "{name}: message {err:?} does not name {place:?}"
        );
        assert!(err.contains("nothing was changed"), "{name}: {err}");
        assert!(err.len() < 2000, "{name}: message of {} bytes", err.len());
        support::assert_same_tree(
            &before,
            &snapshot(root.path()),
            &format!("{name} ({renderer}) changed the root"),
        );
    }
}

#[test]
fn guestinfo_search_domain_with_a_shell_command() {
    let md = format!(
        "{NET_V2}      nameservers:\n        search: [corp.example.com, 'corp.example.com\"; touch /tmp/vmcust-pwned; : \"']\n"
    );
    let gi = guestinfo(&md);
    refused(
        "search domain with a quote and ;",
        &["--guestinfo-dir", gi.path().to_str().unwrap()],
        |_| {},
        "guestinfo.metadata: network config: ethernets.id0.nameservers.search[1]",
    );
    assert!(!Path::new("/tmp/vmcust-pwned").exists());
}

#[test]
fn guestinfo_v1_search_domain_with_a_newline() {
    let md = "network:\n  version: 1\n  config:\n    - type: physical\n      name: eth0\n      mac_address: '00:50:56:a6:8c:08'\n      subnets:\n        - type: static\n          address: 10.1.2.3/24\n          dns_search: [\"ok.example.com\", \"evil.example.com\\nnameserver 6.6.6.6\"]\n";
    let gi = guestinfo(md);
    refused(
        "v1 dns_search with a newline",
        &["--guestinfo-dir", gi.path().to_str().unwrap()],
        |_| {},
        "dns_search[1]",
    );
}

#[test]
fn guestinfo_host_name_with_a_newline() {
    let gi = guestinfo("local-hostname: \"web\\n127.0.0.1 evil.example.com\"\n");
    refused(
        "local-hostname with a newline",
        &["--guestinfo-dir", gi.path().to_str().unwrap()],
        |_| {},
        "guestinfo.metadata: local-hostname",
    );
}

#[test]
fn guestinfo_unusable_address_and_bad_instance_id() {
    let md = NET_V2.replace("10.1.2.3/24", "224.0.0.5/24");
    let gi = guestinfo(&md);
    refused(
        "multicast NIC address",
        &["--guestinfo-dir", gi.path().to_str().unwrap()],
        |_| {},
        "ethernets.id0.addresses[0]: 224.0.0.5/24 cannot be a NIC address",
    );
    let gi = guestinfo("instance-id: \"a\\nb\"\n");
    refused(
        "instance id with a newline",
        &["--guestinfo-dir", gi.path().to_str().unwrap()],
        |_| {},
        "guestinfo.metadata: instance-id",
    );
}

#[test]
fn ovf_host_names_that_are_not_host_names() {
    for (name, value) in [
        ("newline", "web&#10;127.0.0.1 evil"),
        ("markup", "a&lt;b&gt;c"),
        ("space", "web server"),
    ] {
        let d = tempfile::tempdir().unwrap();
        let file = ovf(d.path(), &[("hostname", value)]);
        refused(name, &["--ovf", &file], |_| {}, "ovf property hostname");
    }
}

#[test]
fn appliance_time_zone_that_is_a_path() {
    let d = tempfile::tempdir().unwrap();
    let file = ovf(d.path(), &[("tz", "../../../etc/shadow")]);
    refused(
        "time zone ../../../etc/shadow",
        &["--ovf", &file],
        |root| {
            fs::create_dir_all(root.join("etc/vmcust")).unwrap();
            fs::write(
                root.join("etc/vmcust/ovf-properties.conf"),
                "[properties]\ntime-zone = tz\n",
            )
            .unwrap();
        },
        "ovf property tz",
    );
}

#[test]
fn a_huge_value_gives_a_short_message() {
    let gi = guestinfo(&format!("local-hostname: {}\n", "a".repeat(1 << 20)));
    let root = scratch_root();
    let out = vmcust(&[
        "plan",
        "--root",
        root.path().to_str().unwrap(),
        "--guestinfo-dir",
        gi.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(65));
    assert!(
        out.stderr.len() < 1000,
        "{} bytes of message",
        out.stderr.len()
    );
}
