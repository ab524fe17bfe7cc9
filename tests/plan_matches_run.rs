//! `vmcust plan` shows what `vmcust run` does: for a raw cloud-init spec, an OVF ISO
//! whose `seedfrom` names a local seed, and a root with an appliance property mapping,
//! on two identical copies of the same root (a template with its own machine-id and SSH
//! host key), the plan and the run agree on
//! - the files plan says it would create or update and the files run changes (run logs
//!   each one),
//! - the files clone hygiene replaces (machine-id, SSH host keys), and
//! - the network reload's commands (logged, not run: a scratch root is never the running
//!   system).

mod support;

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::process::Command;

use support::vm::Vm;

/// What a plan or a run does, in the terms both can be compared in.
#[derive(Debug, PartialEq, Eq)]
struct Done {
    /// Files created or updated.
    files: BTreeSet<String>,
    /// Files clone hygiene replaces.
    hygiene: BTreeSet<String>,
    /// The network reload's commands, in order.
    reload: Vec<String>,
}

/// What a `plan --format json` would do.
fn planned(root: &Path, input: &[&str]) -> Done {
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
    let strings = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .map(|a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    };
    let boot = &report["boot"];
    Done {
        files: report["actions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["change"] == "created" || a["change"] == "updated")
            .map(|a| a["path"].as_str().unwrap().to_string())
            .collect(),
        hygiene: strings(&boot["hygiene"]["files"]).into_iter().collect(),
        reload: boot["network_reload"]["commands"]
            .as_array()
            .map(|cmds| cmds.iter().map(|c| strings(c).join(" ")).collect())
            .unwrap_or_default(),
    }
}

/// What `run --stage early` logged.
fn ran(vm: &Vm) -> Done {
    let out = vm.run("early");
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{log}");
    let mut done = Done {
        files: BTreeSet::new(),
        hygiene: BTreeSet::new(),
        reload: Vec::new(),
    };
    for l in log.lines() {
        // Info lines are `vmcust: <message>` (docs/troubleshooting.md).
        let Some(rest) = l.strip_prefix("vmcust: ") else {
            continue;
        };
        if let Some(path) = rest
            .strip_prefix("clone hygiene: replaced ")
            .or_else(|| rest.strip_prefix("clone hygiene: created "))
        {
            done.hygiene.insert(path.to_string());
        } else if let Some(cmd) =
            rest.strip_prefix("network reload not run (the root is not the running system): ")
        {
            done.reload.push(cmd.to_string());
        } else if let Some(rest) = rest.strip_prefix("moved aside ") {
            done.files
                .insert(rest.split(" (").next().unwrap().to_string());
        } else if let Some((verb, rest)) = rest.split_once(' ') {
            if matches!(verb, "created" | "updated") {
                done.files
                    .insert(rest.split(" (").next().unwrap().to_string());
            }
        }
    }
    done
}

/// Makes the VM's root a sealed template's clone: the template's machine-id (recorded
/// as the template's, as `vmcust clean` does) and an SSH host key.
fn template_identity(vm: &Vm) {
    fs::write(
        vm.path("/etc/machine-id"),
        "0123456789abcdef0123456789abcdef\n",
    )
    .unwrap();
    let records = vm.path("/var/lib/vmcust/hygiene");
    fs::create_dir_all(&records).unwrap();
    fs::write(
        records.join("template-machine-id"),
        "0123456789abcdef0123456789abcdef\n",
    )
    .unwrap();
    fs::create_dir_all(vm.path("/etc/ssh")).unwrap();
    let ok = Command::new("ssh-keygen")
        .args(["-q", "-N", "", "-t", "ed25519", "-f"])
        .arg(vm.path("/etc/ssh/ssh_host_ed25519_key"))
        .status()
        .expect("ssh-keygen is installed (openssh-client, scripts/test-packages.txt)");
    assert!(ok.success());
}

/// The parts of a plan every case here must have, so that agreeing is not agreeing on
/// nothing.
fn assert_whole(want: &Done) {
    for path in [
        "/etc/machine-id",
        "/etc/ssh/ssh_host_ed25519_key",
        "/etc/ssh/ssh_host_ed25519_key.pub",
    ] {
        assert!(want.hygiene.contains(path), "{path} not planned: {want:?}");
    }
    assert_eq!(want.reload, ["netplan generate"], "{want:?}");
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
    template_identity(&vm);
    let specs = support::repo().join("examples/specs");
    let want = planned(
        vm.root.path(),
        &[specs.join("raw-cloud-init.cfg").to_str().unwrap()],
    );
    assert!(want.files.contains("/etc/hostname"), "{want:?}");
    assert_whole(&want);
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
    template_identity(&vm);
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
        assert!(want.files.contains(path), "{path} not planned: {want:?}");
    }
    assert_whole(&want);
    assert_eq!(ran(&vm), want);
}
