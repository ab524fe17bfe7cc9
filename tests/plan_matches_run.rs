//! `vmcust plan` shows what `vmcust run` does: for a raw cloud-init spec, an OVF ISO
//! whose `seedfrom` names a local seed, and a root with an appliance property mapping,
//! the files plan says it would create or update are exactly the files run changes (run
//! logs each one), on two identical copies of the same root.

mod support;

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::process::Command;

use support::vm::Vm;

/// The files a `plan --format json` would create or update.
fn planned(root: &Path, input: &[&str]) -> BTreeSet<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_vmcust"))
        .args(["plan", "--format", "json", "--root"])
        .arg(root)
        .args(input)
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    report["actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["change"] == "created" || a["change"] == "updated")
        .map(|a| a["path"].as_str().unwrap().to_string())
        .collect()
}

/// The files `run --stage early` logged as created or updated.
fn ran(vm: &Vm) -> BTreeSet<String> {
    let out = vm.run("early");
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{log}");
    log.lines()
        .filter_map(|l| {
            // Info lines are `vmcust: <message>` (docs/troubleshooting.md).
            let rest = l.strip_prefix("vmcust: ")?;
            let (verb, rest) = rest.split_once(' ')?;
            matches!(verb, "created" | "updated")
                .then(|| rest.split(" (").next().unwrap().to_string())
        })
        .collect()
}

/// An ISO9660 image holding `ovf-env.xml`, built by xorriso as the tests of the ISO
/// reader do, placed as the VM's CD drive `/dev/sr0`.
fn insert_cd(vm: &Vm, xml: &str) {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("ovf-env.xml"), xml).unwrap();
    let dev = vm.path("/dev");
    fs::create_dir_all(&dev).unwrap();
    support::require_tool("xorriso", "xorriso");
    let out = Command::new("xorriso")
        .args([
            "-as", "mkisofs", "-quiet", "-J", "-R", "-V", "OVF ENV", "-o",
        ])
        .arg(dev.join("sr0"))
        .arg(dir.path())
        .output()
        .expect("xorriso is installed (scripts/test-packages.txt)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn raw_cloud_init_spec() {
    let vm = Vm::new();
    let specs = support::repo().join("examples/specs");
    let want = planned(
        vm.root.path(),
        &[specs.join("raw-cloud-init.cfg").to_str().unwrap()],
    );
    assert!(want.contains("/etc/hostname"), "{want:?}");
    vm.hand_over(
        &fs::read_to_string(specs.join("raw-cloud-init.cfg")).unwrap(),
        &[
            (
                "metadata",
                &fs::read_to_string(specs.join("metadata")).unwrap(),
            ),
            (
                "userdata",
                &fs::read_to_string(specs.join("userdata")).unwrap(),
            ),
        ],
    );
    assert_eq!(ran(&vm), want);
}

#[test]
fn ovf_iso_with_a_local_seed_and_an_appliance_mapping() {
    let vm = Vm::new();
    let seed = vm.path("/var/lib/ovf-seed");
    fs::create_dir_all(&seed).unwrap();
    fs::write(
        seed.join("meta-data"),
        "instance-id: seeded-1\nlocal-hostname: from-seed\n",
    )
    .unwrap();
    fs::create_dir_all(vm.path("/etc/vmcust")).unwrap();
    fs::write(
        vm.path("/etc/vmcust/ovf-properties.conf"),
        "[properties]\ntime-zone = appliance.tz\nipv4-address = appliance.ip\nipv4-gateway = appliance.gw\n",
    )
    .unwrap();
    fs::create_dir_all(vm.path("/usr/share/zoneinfo/Europe")).unwrap();
    fs::write(vm.path("/usr/share/zoneinfo/Europe/Berlin"), "TZif").unwrap();
    insert_cd(
        &vm,
        &support::ovf_env(&[
            ("seedfrom", "file:///var/lib/ovf-seed/"),
            ("appliance.tz", "Europe/Berlin"),
            ("appliance.ip", "10.9.8.7/24"),
            ("appliance.gw", "10.9.8.1"),
        ]),
    );
    let want = planned(
        vm.root.path(),
        &["--ovf", vm.path("/dev/sr0").to_str().unwrap()],
    );
    for path in [
        "/etc/hostname",
        "/etc/localtime",
        "/etc/netplan/50-vmcust.yaml",
    ] {
        assert!(want.contains(path), "{path} not planned: {want:?}");
    }
    assert_eq!(ran(&vm), want);
}
