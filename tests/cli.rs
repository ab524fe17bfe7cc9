//! The `vmcust` binary end to end: outputs, exit codes, and "bad input changes nothing".

mod support;

use std::path::Path;
use std::process::Output;

use support::{example, scratch_root, snapshot};

/// The binary, logging warnings only.
fn vmcust(args: &[&str]) -> Output {
    support::vmcust_env(args, &[("VMCUST_LOG", "warn")])
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn spec_file(dir: &Path, body: &str) -> String {
    let p = dir.join("cust.cfg");
    std::fs::write(&p, body).unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn apply_then_apply_again_changes_nothing() {
    let root = scratch_root();
    let r = root.path().to_str().unwrap();
    let spec = example("static-2nic-ipv6.cfg");
    let spec = spec.to_str().unwrap();
    let first = vmcust(&["apply", "--root", r, "--imc", spec]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let out = text(&first.stdout);
    assert!(
        out.contains("created   /etc/netplan/50-vmcust.yaml"),
        "{out}"
    );
    assert!(out.contains("updated   /etc/hostname"), "{out}");
    let after_first = snapshot(root.path());
    let second = vmcust(&["apply", "--root", r, "--imc", spec]);
    assert_eq!(second.status.code(), Some(0));
    assert!(
        text(&second.stdout).contains("nothing to change"),
        "{}",
        text(&second.stdout)
    );
    assert_eq!(snapshot(root.path()), after_first);
}

#[test]
fn plan_changes_nothing_and_json_names_each_change() {
    let root = scratch_root();
    let before = snapshot(root.path());
    let spec = example("mixed-3nic.cfg");
    let out = vmcust(&[
        "plan",
        "--root",
        root.path().to_str().unwrap(),
        "--imc",
        spec.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(snapshot(root.path()), before);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["renderer"], "netplan");
    assert!(report["warnings"].is_array());
    let steps = report["actions"].as_array().unwrap();
    let netplan = steps
        .iter()
        .find(|s| s["path"] == "/etc/netplan/50-vmcust.yaml")
        .unwrap();
    assert_eq!(netplan["change"], "created");
    assert_eq!(netplan["mode"], "0600");
    assert_eq!(netplan["action"], "write-file");
}

/// Each row: a spec that must be refused, the exit code, and a piece of the message.
#[test]
fn invalid_input_is_refused_and_changes_nothing() {
    let nic = "[NIC-CONFIG]\nNICS = NIC1\n[NIC1]\nMACADDR = 00:50:56:a6:8c:08\nBOOTPROTO = dhcp\n";
    let cases: Vec<(&str, String, i32, &str)> = vec![
        (
            "bad netmask",
            nic.replace(
                "BOOTPROTO = dhcp",
                "BOOTPROTO = static\nIPADDR = 10.0.0.5\nNETMASK = 255.0.255.0",
            ),
            65,
            "cust.cfg: line 7: [NIC1] NETMASK",
        ),
        (
            "unknown time zone",
            format!("{nic}[DATETIME]\nTIMEZONE = Mars/Olympus\n"),
            65,
            "line 7: [DATETIME] TIMEZONE = \"Mars/Olympus\": unknown time zone",
        ),
        (
            "mac absent from the VM",
            nic.replace("00:50:56:a6:8c:08", "00:50:56:00:00:99"),
            65,
            "no network device has MAC address 00:50:56:00:00:99 (NIC1)",
        ),
        (
            "garbage line",
            "[NETWORK]\nthis is not ini\n".to_string(),
            65,
            "line 2",
        ),
    ];
    for (name, body, code, needle) in cases {
        let root = scratch_root();
        let before = snapshot(root.path());
        let dir = tempfile::tempdir().unwrap();
        let spec = spec_file(dir.path(), &body);
        let out = vmcust(&[
            "apply",
            "--root",
            root.path().to_str().unwrap(),
            "--imc",
            &spec,
        ]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "case {name}: {err}");
        assert!(err.contains(needle), "case {name}: {err}");
        support::assert_same_tree(
            &before,
            &snapshot(root.path()),
            &format!("case {name} changed the root"),
        );
    }
}

#[test]
fn exit_codes_for_io_and_usage() {
    let root = scratch_root();
    let out = vmcust(&[
        "apply",
        "--root",
        root.path().to_str().unwrap(),
        "--imc",
        "/nonexistent/cust.cfg",
    ]);
    assert_eq!(out.status.code(), Some(74), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("reading /nonexistent/cust.cfg"));
    assert_eq!(vmcust(&["apply", "--bogus"]).status.code(), Some(64));
    let none = vmcust(&["plan", "--root", root.path().to_str().unwrap()]);
    assert_eq!(
        none.status.code(),
        Some(64),
        "no source at all is a usage error"
    );
    assert!(text(&none.stderr).contains("no customization given"));
    assert_eq!(vmcust(&["--version"]).status.code(), Some(0));
    // A tarball that cannot be written is 74 with vmcust's own message, not tar's.
    let logs = vmcust(&[
        "collect-logs",
        "--root",
        root.path().to_str().unwrap(),
        "--tarfile",
        "/nonexistent/x.tgz",
    ]);
    let err = text(&logs.stderr);
    assert_eq!(logs.status.code(), Some(74), "{err}");
    assert!(
        err.starts_with(
            "vmcust: error: writing /nonexistent/x.tgz: cannot create a file in /nonexistent"
        ),
        "{err}"
    );
    assert!(!err.contains("tar"), "tar's own stderr leaked: {err}");
    // A root that is not there is 74 for every command that reads one, detect included.
    for cmd in ["detect", "status", "query"] {
        let o = vmcust(&[cmd, "--root", "/nonexistent"]);
        assert_eq!(o.status.code(), Some(74), "{cmd}: {}", text(&o.stderr));
        assert!(
            text(&o.stderr).contains("opening root /nonexistent: No such file or directory"),
            "{cmd}: {}",
            text(&o.stderr)
        );
    }
}

#[test]
fn status_says_plainly_that_vmcust_never_ran() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path().to_str().unwrap();
    let out = vmcust(&["status", "--root", r]);
    assert_eq!(out.status.code(), Some(0));
    let t = text(&out.stdout);
    assert!(
        t.starts_with("run: never ran on this root (disabled)\n"),
        "{t}"
    );
    assert!(!t.contains("1970"), "{t}");
    let out = vmcust(&["status", "--root", r, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["never_ran"], true);
    assert_eq!(v["state"], "disabled");
    assert!(v["run"].is_null() && v.get("updated").is_none(), "{v}");
}

#[test]
fn show_redacts_the_password_everywhere() {
    let spec = example("password-marker-script.cfg");
    for format in ["text", "json", "yaml"] {
        let out = vmcust(&["show", spec.to_str().unwrap(), "--format", format]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let all = text(&out.stdout) + &text(&out.stderr);
        assert!(all.contains("<redacted>"), "{all}");
        for secret in ["Vmw@re-2026!", "Vm13QHJlLTIwMjYh"] {
            assert!(!all.contains(secret), "{format} output leaks the password");
        }
    }
}

#[test]
fn show_prints_the_network_as_netplan_v2() {
    let out = vmcust(&[
        "show",
        example("dhcp.cfg").to_str().unwrap(),
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let nic = &v["netplan"]["network"]["ethernets"]["NIC1"];
    assert_eq!(v["netplan"]["network"]["version"], 2);
    assert_eq!(nic["match"]["macaddress"], "00:50:56:a6:8c:08");
    assert_eq!(nic["dhcp4"], true);
    assert!(
        nic.get("dhcp4-overrides").is_none(),
        "DNSFROMDHCP=yes keeps DHCP DNS"
    );
}
