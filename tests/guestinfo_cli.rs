//! `vmcust guestinfo get|set` and `vmcust detect` against the fake host directory and
//! temporary roots. Nothing here touches a real VMware host.

mod support;

use std::path::Path;
use std::process::Output;

/// The binary with no real tools on its PATH.
fn vmcust(args: &[&str]) -> Output {
    support::vmcust_env(args, &[("PATH", "/nonexistent")])
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn dir_arg(d: &Path) -> String {
    d.display().to_string()
}

#[test]
fn get_set_through_the_fake() {
    let d = tempfile::tempdir().unwrap();
    let dir = dir_arg(d.path());
    std::fs::write(d.path().join("guestinfo.metadata"), "aW5zdGFuY2UtaWQ6IHgK").unwrap();
    std::fs::write(d.path().join("guestinfo.metadata.encoding"), "base64").unwrap();

    let o = vmcust(&["guestinfo", "get", "metadata", "--guestinfo-dir", &dir]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "aW5zdGFuY2UtaWQ6IHgK\n");

    let o = vmcust(&[
        "guestinfo",
        "get",
        "guestinfo.metadata",
        "--decode",
        "--guestinfo-dir",
        &dir,
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "instance-id: x\n");

    let o = vmcust(&["guestinfo", "get", "missing", "--guestinfo-dir", &dir]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("guestinfo.missing: no value found"));

    let o = vmcust(&[
        "guestinfo",
        "set",
        "local-ipv4",
        "10.0.0.5",
        "--guestinfo-dir",
        &dir,
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        std::fs::read_to_string(d.path().join("guestinfo.local-ipv4")).unwrap(),
        "10.0.0.5"
    );
    let log = std::fs::read_to_string(d.path().join("rpc.log")).unwrap();
    assert!(
        log.ends_with("info-set guestinfo.local-ipv4 10.0.0.5\n"),
        "{log}"
    );

    let o = vmcust(&["guestinfo", "get", "bad key", "--guestinfo-dir", &dir]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("invalid guestinfo key"));
}

#[test]
fn get_without_any_transport_says_so() {
    let o = vmcust(&["guestinfo", "get", "metadata"]);
    assert_eq!(o.status.code(), Some(1));
    let e = text(&o.stderr);
    assert!(e.contains("neither vmware-rpctool nor vmtoolsd"), "{e}");
}

fn vmware_root() -> tempfile::TempDir {
    let r = tempfile::tempdir().unwrap();
    let dmi = r.path().join("sys/class/dmi/id");
    std::fs::create_dir_all(&dmi).unwrap();
    std::fs::write(dmi.join("product_name"), "VMware7,1\n").unwrap();
    std::fs::write(dmi.join("sys_vendor"), "VMware, Inc.\n").unwrap();
    std::fs::write(
        dmi.join("product_uuid"),
        "82343CED-E4C7-423B-8F6B-0D34D19067AB\n",
    )
    .unwrap();
    r
}

#[test]
fn detect_json_with_fake_sources() {
    let root = vmware_root();
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("guestinfo.metadata"), "instance-id: x\n").unwrap();
    std::fs::write(d.path().join("guestinfo.userdata"), "---\n").unwrap();
    std::fs::write(d.path().join("guestinfo.ovfEnv"), "<?xml version='1.0'?>").unwrap();
    let o = vmcust(&[
        "detect",
        "--format",
        "json",
        "--root",
        &dir_arg(root.path()),
        "--guestinfo-dir",
        &dir_arg(d.path()),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["vmware"], true);
    assert_eq!(v["platform"]["product_name"], "VMware7,1");
    assert_eq!(
        v["default_instance_id"],
        "82343ced-e4c7-423b-8f6b-0d34d19067ab"
    );
    assert_eq!(v["transport_used"], "fake");
    let present: Vec<(String, serde_json::Value)> = v["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["key"].as_str().unwrap().to_string(), s["present"].clone()))
        .collect();
    assert_eq!(
        present,
        [
            ("guestinfo.metadata".to_string(), serde_json::json!(true)),
            ("guestinfo.userdata".to_string(), serde_json::json!(false)),
            ("guestinfo.vendordata".to_string(), serde_json::json!(false)),
            ("guestinfo.ovfEnv".to_string(), serde_json::json!(true)),
        ]
    );
}

#[test]
fn detect_off_vmware_costs_nothing() {
    let root = tempfile::tempdir().unwrap();
    let o = vmcust(&["detect", "--root", &dir_arg(root.path())]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    if out.contains("cpuid hypervisor: VMwareVMware") {
        return; // running on a real VMware guest
    }
    assert!(out.starts_with("platform: not vmware\n"), "{out}");
    assert!(
        out.contains("sources: not looked for (not a vmware platform)"),
        "{out}"
    );
}

#[test]
fn detect_text_on_a_vmware_root_without_tools() {
    let root = vmware_root();
    let o = vmcust(&["detect", "--root", &dir_arg(root.path())]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.starts_with("platform: vmware\n"), "{out}");
    assert!(out.contains("  vmware-rpctool: not found\n"), "{out}");
    if !out.contains("cpuid hypervisor: VMwareVMware") {
        assert!(
            out.contains("sources: not looked for (no guest rpc transport works)"),
            "{out}"
        );
    }
}
