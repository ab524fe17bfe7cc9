//! The trust boundary of docs/security.md, on scratch roots with the `--guestinfo-dir`
//! host: guestinfo and the OVF environment customize a new VM, not the same one again.
//! Each test names the threat (T-number in docs/security.md) it covers.

mod support;

use std::fs;
use std::path::Path;
use std::process::Command;

use support::vm::Vm;
use support::{example, ovf_env, text};

/// What a local user's forged guestinfo metadata would do: a new instance-id, a host
/// name, an SSH key for root.
const EVIL_METADATA: &str = "instance-id: evil-1\nlocal-hostname: pwned\n\
public-keys: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f evil@guest\n";

/// User-data that, run as root, leaves a file next to itself.
const EVIL_USERDATA: &str = "#!/bin/sh\necho ran >> \"$(dirname \"$0\")/pwned\"\n";

/// The message the early stage logs on the same VM instead of reading guestinfo.
const NOT_READ: &str = "guestinfo is not read this boot";

/// Forgets the RPCs recorded so far (the host's log of this VM).
fn clear_rpcs(vm: &Vm) {
    let _ = fs::remove_file(vm.host.path().join("rpc.log"));
}

/// A local user's `vmware-rpctool "info-set KEY VALUE"`, as the fake host stores it.
fn user_sets(vm: &Vm, key: &str, value: &str) {
    fs::write(vm.host.path().join(key), value).unwrap();
}

fn shadow(vm: &Vm) -> String {
    fs::read_to_string(vm.path("/etc/shadow")).unwrap()
}

fn instance_dirs(vm: &Vm) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(vm.path("/var/lib/vmcust/instances"))
        .map(|rd| {
            rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn detect(vm: &Vm) -> serde_json::Value {
    serde_json::from_slice(&vm.vmcust(&["detect", "--format", "json"]).stdout).unwrap()
}

/// The second boot of an already customized VM after a local user wrote `keys`: nothing
/// changes, no call reaches the host, the log says why, detect calls it refused.
fn forged_guestinfo_changes_nothing(vm: &Vm, keys: &[(&str, &str)], refused_id: &str) {
    let before = vm.state();
    let shadow_before = shadow(vm);
    let instances_before = instance_dirs(vm);
    clear_rpcs(vm);
    for (k, v) in keys {
        user_sets(vm, k, v);
    }
    let (early, _late) = vm.boot();
    assert_eq!(
        vm.rpcs(),
        Vec::<String>::new(),
        "no call to the host at all"
    );
    assert!(
        text(&early.stderr).contains(NOT_READ),
        "{}",
        text(&early.stderr)
    );
    assert_eq!(vm.state(), before, "the root is unchanged");
    assert_eq!(shadow(vm), shadow_before);
    assert_eq!(instance_dirs(vm), instances_before);
    assert!(
        !vm.path("/root/.ssh/authorized_keys").exists() || {
            let keys = fs::read_to_string(vm.path("/root/.ssh/authorized_keys")).unwrap();
            !keys.contains("evil@guest")
        }
    );
    let d = detect(vm);
    assert_eq!(d["trust"]["verdict"], "refused", "{d:#}");
    assert_eq!(d["trust"]["instance_id"], refused_id, "{d:#}");
}

// threat T2: a VM first customized by a vSphere spec; a local user then sets guestinfo
// metadata (new instance-id, SSH key) and user-data.
#[test]
fn t2_vsphere_customized_vm_ignores_user_set_guestinfo() {
    let vm = Vm::new();
    vm.hand_over(
        &fs::read_to_string(example("dhcp.cfg")).unwrap(),
        &[("nics.txt", "0")],
    );
    vm.boot();
    assert!(vm.final_state().unwrap().contains(" 5 0 "));
    // The vSphere customization recorded the product UUID it was applied on.
    let recorded: Vec<String> = instance_dirs(&vm)
        .iter()
        .filter_map(|d| {
            fs::read_to_string(vm.path(&format!("/var/lib/vmcust/instances/{d}/vm-uuid"))).ok()
        })
        .collect();
    assert_eq!(recorded, ["4217e0a1-6c2b-9d7e-51a0-3b9f2c1d8e44\n"]);
    forged_guestinfo_changes_nothing(
        &vm,
        &[
            ("guestinfo.metadata", EVIL_METADATA),
            ("guestinfo.userdata", EVIL_USERDATA),
        ],
        "evil-1",
    );
    assert_eq!(
        fs::read_to_string(vm.path("/etc/hostname")).unwrap(),
        "build-agent-17\n"
    );
}

// threat T2: a VM deployed from guestinfo whose keys were redacted after use; a local
// user writes new ones.
#[test]
fn t2_guestinfo_deployed_vm_ignores_user_set_guestinfo_after_redaction() {
    let vm = Vm::new();
    user_sets(
        &vm,
        "guestinfo.metadata",
        "instance-id: gi-1\nlocal-hostname: gi-host\nredact: [metadata, userdata]\n",
    );
    user_sets(
        &vm,
        "guestinfo.userdata",
        "#!/bin/sh\necho ran >> \"$(dirname \"$0\")/ran\"\n",
    );
    vm.boot();
    assert_eq!(
        fs::read_to_string(vm.path("/etc/hostname")).unwrap(),
        "gi-host\n"
    );
    assert_eq!(
        fs::read_to_string(vm.host.path().join("guestinfo.metadata")).unwrap(),
        "---"
    );
    forged_guestinfo_changes_nothing(
        &vm,
        &[
            ("guestinfo.metadata", EVIL_METADATA),
            ("guestinfo.userdata", EVIL_USERDATA),
        ],
        "evil-1",
    );
    assert_eq!(
        fs::read_to_string(vm.path("/etc/hostname")).unwrap(),
        "gi-host\n"
    );
    let ran = vm.path("/var/lib/vmcust/instances/gi-1/ran");
    assert_eq!(fs::read_to_string(ran).unwrap(), "ran\n", "user-data once");
}

// threat T3: a VM deployed from guestinfo.ovfEnv; a local user writes an OVF environment
// with a new instance-id and a `password` that would replace root's.
#[test]
fn t3_ovfenv_deployed_vm_ignores_user_set_ovfenv_password() {
    let vm = Vm::new();
    user_sets(
        &vm,
        "guestinfo.ovfEnv",
        &ovf_env(&[("instance-id", "ovf-1"), ("hostname", "from-ovfenv")]),
    );
    vm.boot();
    assert_eq!(
        fs::read_to_string(vm.path("/etc/hostname")).unwrap(),
        "from-ovfenv\n"
    );
    forged_guestinfo_changes_nothing(
        &vm,
        &[(
            "guestinfo.ovfEnv",
            &ovf_env(&[
                ("instance-id", "ovf-evil"),
                ("hostname", "pwned"),
                ("password", "hunter2-evil"),
                ("public-keys", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f evil@guest"),
            ]),
        )],
        "ovf-evil",
    );
}

// threat T5: a real clone (another product UUID) is still customized from guestinfo,
// and records the UUID it was customized on; the clone's next boot is the same VM again.
#[test]
fn t5_a_clone_is_still_customized_from_guestinfo() {
    let vm = Vm::new();
    user_sets(
        &vm,
        "guestinfo.metadata",
        "instance-id: gi-1\nlocal-hostname: first\n",
    );
    vm.boot();
    assert_eq!(
        fs::read_to_string(vm.path("/etc/hostname")).unwrap(),
        "first\n"
    );
    fs::write(
        vm.path("/sys/class/dmi/id/product_uuid"),
        "4217E0A1-0000-0000-0000-00000000C10E\n",
    )
    .unwrap();
    user_sets(
        &vm,
        "guestinfo.metadata",
        "instance-id: clone-1\nlocal-hostname: clone\n",
    );
    let (early, _) = vm.boot();
    assert_eq!(
        fs::read_to_string(vm.path("/etc/hostname")).unwrap(),
        "clone\n",
        "{}",
        text(&early.stderr)
    );
    assert_eq!(
        fs::read_to_string(vm.path("/var/lib/vmcust/instances/clone-1/vm-uuid")).unwrap(),
        "4217e0a1-0000-0000-0000-00000000c10e\n"
    );
    assert_eq!(
        fs::read_to_string(vm.path("/var/lib/vmcust/boot-identity")).unwrap(),
        "4217e0a1-0000-0000-0000-00000000c10e\n"
    );
    forged_guestinfo_changes_nothing(&vm, &[("guestinfo.metadata", EVIL_METADATA)], "evil-1");
}

// threat T2: a VM customized before whose product UUID cannot be read is not taken for a
// new one (fail closed).
#[test]
fn t2_unreadable_product_uuid_fails_closed() {
    let vm = Vm::new();
    user_sets(
        &vm,
        "guestinfo.metadata",
        "instance-id: gi-1\nlocal-hostname: first\n",
    );
    vm.boot();
    fs::remove_file(vm.path("/sys/class/dmi/id/product_uuid")).unwrap();
    forged_guestinfo_changes_nothing(&vm, &[("guestinfo.metadata", EVIL_METADATA)], "evil-1");
}

fn ovf_iso(vm: &Vm, props: &[(&str, &str)]) {
    let dir = tempfile::tempdir().unwrap();
    let content = dir.path().join("content");
    fs::create_dir(&content).unwrap();
    fs::write(content.join("ovf-env.xml"), ovf_env(props)).unwrap();
    let iso = dir.path().join("ovf.iso");
    support::require_tool("xorriso", "xorriso");
    let made = Command::new("xorriso")
        .args(["-as", "mkisofs", "-quiet", "-J", "-R", "-o"])
        .arg(&iso)
        .arg(&content)
        .status()
        .expect("xorriso is installed (scripts/test-packages.txt)");
    assert!(made.success());
    fs::create_dir_all(vm.path("/dev")).unwrap();
    fs::copy(&iso, vm.path("/dev/sr0")).unwrap();
}

// threat T4: the OVF CD of the same VM changed to carry a new instance (someone who may
// change the VM's devices): refused with a warning, recorded, shown by status as
// degraded, and forgotten once the CD no longer carries it.
#[test]
fn t4_a_changed_ovf_cd_on_the_same_vm_is_refused_and_status_says_so() {
    let vm = Vm::new();
    ovf_iso(&vm, &[("instance-id", "cd-1"), ("hostname", "from-cd")]);
    vm.boot();
    assert_eq!(
        fs::read_to_string(vm.path("/etc/hostname")).unwrap(),
        "from-cd\n"
    );
    assert_eq!(vm.status().0, Some(0));

    ovf_iso(
        &vm,
        &[
            ("instance-id", "cd-2"),
            ("hostname", "pwned"),
            ("password", "hunter2-evil"),
        ],
    );
    let before = vm.state();
    clear_rpcs(&vm);
    let (early, _) = vm.boot();
    let log = text(&early.stderr);
    assert!(
        log.contains("warning: nothing was changed: refused: new instance cd-2"),
        "{log}"
    );
    assert!(!log.contains("hunter2"), "no secret in the log: {log}");
    assert_eq!(vm.state(), before);
    assert_eq!(vm.rpcs(), Vec::<String>::new());
    let (code, out) = vm.status();
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("trust: refused: new instance cd-2"), "{out}");
    assert!(out.contains("health: degraded"), "{out}");
    let d = detect(&vm);
    assert_eq!(d["trust"]["verdict"], "refused", "{d:#}");

    fs::remove_file(vm.path("/dev/sr0")).unwrap();
    vm.boot();
    let (code, out) = vm.status();
    assert_eq!(code, Some(0), "{out}");
    assert!(!out.contains("refused"), "{out}");
}

// threat T8: a VM customized before, booting again with nothing handed over, asks
// nothing of the host. A VM never customized does read guestinfo at each boot (threat T10:
// that is how its first customization arrives).
#[test]
fn t8_customized_vm_with_nothing_handed_over_makes_no_call() {
    let vm = Vm::new();
    vm.boot();
    clear_rpcs(&vm);
    vm.boot();
    assert!(
        vm.rpcs()
            .iter()
            .any(|r| r.starts_with("info-get guestinfo.metadata")),
        "never customized: guestinfo is read: {:?}",
        vm.rpcs()
    );
    ovf_iso(&vm, &[("instance-id", "cd-1"), ("hostname", "from-cd")]);
    vm.boot();
    assert_eq!(
        fs::read_to_string(vm.path("/etc/hostname")).unwrap(),
        "from-cd\n"
    );
    for _ in 0..2 {
        clear_rpcs(&vm);
        vm.boot();
        assert_eq!(vm.rpcs(), Vec::<String>::new());
    }
}

// threat T6: `[trust] recustomize_same_vm = true` (for a host that closed the door)
// re-opens same-VM re-customization from guestinfo.
#[test]
fn t6_recustomize_same_vm_reopens_guestinfo() {
    let vm = Vm::new();
    vm.settings("[trust]\nrecustomize_same_vm = true\n");
    user_sets(
        &vm,
        "guestinfo.metadata",
        "instance-id: gi-1\nlocal-hostname: first\n",
    );
    vm.boot();
    user_sets(
        &vm,
        "guestinfo.metadata",
        "instance-id: gi-2\nlocal-hostname: second\n",
    );
    let (early, _) = vm.boot();
    assert!(!text(&early.stderr).contains(NOT_READ));
    assert_eq!(
        fs::read_to_string(vm.path("/etc/hostname")).unwrap(),
        "second\n"
    );
    assert_eq!(instance_dirs(&vm), ["gi-1", "gi-2"]);
}

// threat T6: `[trust] sources` switches each source off, on a new VM: no read of a source
// that is off (no RPC for guestinfo), nothing applied from it.
#[test]
fn t6_sources_switch_each_source_off() {
    struct Case {
        sources: &'static str,
        /// Which of (imc, ovf, guestinfo) is offered.
        offered: &'static str,
        applied: bool,
    }
    let cases = [
        Case {
            sources: "ovf, guestinfo",
            offered: "imc",
            applied: false,
        },
        Case {
            sources: "imc, ovf",
            offered: "guestinfo",
            applied: false,
        },
        Case {
            sources: "imc, guestinfo",
            offered: "ovf",
            applied: false,
        },
        Case {
            sources: "none",
            offered: "guestinfo",
            applied: false,
        },
        Case {
            sources: "guestinfo",
            offered: "guestinfo",
            applied: true,
        },
        Case {
            sources: "ovf",
            offered: "ovf",
            applied: true,
        },
        Case {
            sources: "imc",
            offered: "imc",
            applied: true,
        },
        // A misspelt word fails closed: dropped, not a reason to turn every source on.
        Case {
            sources: "imc, ovf, gestinfo",
            offered: "guestinfo",
            applied: false,
        },
        Case {
            sources: "imc, cdrom",
            offered: "ovf",
            applied: false,
        },
        Case {
            sources: "imc, cdrom",
            offered: "imc",
            applied: true,
        },
    ];
    for c in cases {
        let vm = Vm::new();
        vm.settings(&format!("[trust]\nsources = {}\n", c.sources));
        match c.offered {
            "imc" => vm.hand_over(
                "[NETWORK]\nHOSTNAME = offered\n[NIC-CONFIG]\nNICS = NIC1\n[NIC1]\n\
                 MACADDR = 00:50:56:a6:8c:08\nBOOTPROTO = dhcp\n",
                &[],
            ),
            "ovf" => ovf_iso(&vm, &[("instance-id", "o-1"), ("hostname", "offered")]),
            _ => user_sets(
                &vm,
                "guestinfo.metadata",
                "instance-id: g-1\nlocal-hostname: offered\n",
            ),
        }
        let early = vm.run("early");
        assert_eq!(early.status.code(), Some(0), "{}", text(&early.stderr));
        let hostname = fs::read_to_string(vm.path("/etc/hostname")).unwrap();
        assert_eq!(
            hostname == "offered\n",
            c.applied,
            "sources = {}, offered {}: {}",
            c.sources,
            c.offered,
            text(&early.stderr)
        );
        if !c.sources.contains("guestinfo") {
            assert!(
                !vm.rpcs().iter().any(|r| r.starts_with("info-get ")),
                "sources = {}: {:?}",
                c.sources,
                vm.rpcs()
            );
        }
    }
}

/// Guestinfo metadata whose network names a MAC address the VM does not have: refused
/// while planning, so nothing is changed and the instance is recorded failed.
const WRONG_MAC_METADATA: &str = "instance-id: gi-1\nlocal-hostname: first\nnetwork:\n  \
version: 2\n  ethernets:\n    eth0:\n      match: {macaddress: '00:50:56:00:00:01'}\n      \
dhcp4: true\n";

fn result_json(vm: &Vm, id: &str) -> serde_json::Value {
    let path = vm.path(&format!("/var/lib/vmcust/instances/{id}/result.json"));
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

/// Boot 1 with `bad` guestinfo metadata (and `env` set): the early stage fails (exit
/// `code`), the root is unchanged, and the instance is recorded failed with nothing changed.
fn failed_boot_changes_nothing(vm: &Vm, bad: &str, env: &[(&str, &str)], code: i32) {
    let before = vm.state();
    user_sets(vm, "guestinfo.metadata", bad);
    let mut cmd = vm.command("early", 0);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let early = cmd.output().unwrap();
    assert_eq!(early.status.code(), Some(code), "{}", text(&early.stderr));
    vm.run("late");
    assert_eq!(vm.state(), before, "the failed boot changed nothing");
    let r = result_json(vm, "gi-1");
    assert_eq!(r["outcome"], "failed", "{r:#}");
    assert_eq!(r["nothing_changed"], true, "{r:#}");
}

/// A failed first boot: what, the bad metadata, the environment, the early exit status.
type Case<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)], i32);

// threat T17: a first customization from guestinfo that failed and changed nothing (a MAC
// address the VM lacks, refused while planning; or a failure whose changes the undo put
// back) leaves the VM as never customized: corrected guestinfo customizes it at the next
// boot, under the same instance-id or a new one; after that it is the VM customized
// before again.
#[test]
fn t17_corrected_guestinfo_customizes_a_vm_whose_first_customization_changed_nothing() {
    let put_back = [(vmcust::test_api::apply::FAIL_AT_ENV, "1")];
    let cases: [Case; 3] = [
        ("wrong MAC, same id", WRONG_MAC_METADATA, &[], 65),
        ("wrong MAC, new id", WRONG_MAC_METADATA, &[], 65),
        (
            "put back by the undo",
            "instance-id: gi-1\nlocal-hostname: first\n",
            &put_back,
            74,
        ),
    ];
    for (what, bad, env, code) in cases {
        let vm = Vm::new();
        failed_boot_changes_nothing(&vm, bad, env, code);
        let id = if what.ends_with("new id") {
            "gi-2"
        } else {
            "gi-1"
        };
        user_sets(
            &vm,
            "guestinfo.metadata",
            &format!("instance-id: {id}\nlocal-hostname: fixed\n"),
        );
        let (early, _) = vm.boot();
        assert!(
            text(&early.stderr).contains(&format!("instance {id} customized from")),
            "{what}: {}",
            text(&early.stderr)
        );
        assert_eq!(
            fs::read_to_string(vm.path("/etc/hostname")).unwrap(),
            "fixed\n",
            "{what}"
        );
        assert_eq!(result_json(&vm, id)["outcome"], "done", "{what}");
        let (code, status) = vm.status();
        assert_eq!(code, Some(0), "{what}: {status}");
        assert!(status.contains("done"), "{what}: {status}");
        forged_guestinfo_changes_nothing(&vm, &[("guestinfo.metadata", EVIL_METADATA)], "evil-1");
    }
}

// threat T17: a failure after which something ran still counts as a customization: a
// vSphere spec whose pre-customization script ran (and failed); the guestinfo a local
// user writes next is not read.
#[test]
fn t17_a_failure_after_a_pre_script_ran_still_counts_as_customized() {
    let vm = Vm::new();
    fs::create_dir_all(vm.path("/root")).unwrap();
    vm.enable_scripts();
    vm.hand_over(
        "[NETWORK]\nHOSTNAME = imc\n[NIC-CONFIG]\nNICS = NIC1\n[NIC1]\n\
         MACADDR = 00:50:56:a6:8c:08\nBOOTPROTO = dhcp\n[MISC]\nMARKER-ID = m-1\n\
         [CUSTOM-SCRIPT]\nSCRIPT-NAME = script0001.bat\n",
        &[
            ("nics.txt", "0"),
            (
                "script0001.bat",
                "#!/bin/sh\necho \"$1\" >> /root/ran\nexit 3\n",
            ),
        ],
    );
    let early = vm.run("early");
    assert_eq!(early.status.code(), Some(1), "{}", text(&early.stderr));
    vm.run("late");
    assert_eq!(
        fs::read_to_string(vm.path("/root/ran")).unwrap(),
        "precustomization\n"
    );
    // A vSphere customization is recorded under the product UUID.
    let r = result_json(&vm, "4217e0a1-6c2b-9d7e-51a0-3b9f2c1d8e44");
    assert_eq!(r["outcome"], "failed", "{r:#}");
    assert!(r.get("nothing_changed").is_none(), "{r:#}");
    forged_guestinfo_changes_nothing(&vm, &[("guestinfo.metadata", EVIL_METADATA)], "evil-1");
}

// threat T17: guestinfo whose user-data ran and failed counts as a customization (its
// commands ran): new guestinfo is not read at the next boot.
#[test]
fn t17_guestinfo_whose_user_data_ran_and_failed_still_counts_as_customized() {
    let vm = Vm::new();
    user_sets(
        &vm,
        "guestinfo.metadata",
        "instance-id: gi-1\nlocal-hostname: first\n",
    );
    user_sets(
        &vm,
        "guestinfo.userdata",
        "#!/bin/sh\necho ran >> \"$(dirname \"$0\")/ran\"\nexit 3\n",
    );
    let early = vm.run("early");
    assert_eq!(early.status.code(), Some(0), "{}", text(&early.stderr));
    let late = vm.run("late");
    assert_ne!(late.status.code(), Some(0), "{}", text(&late.stderr));
    let ran = vm.path("/var/lib/vmcust/instances/gi-1/ran");
    assert_eq!(fs::read_to_string(&ran).unwrap(), "ran\n");
    forged_guestinfo_changes_nothing(&vm, &[("guestinfo.metadata", EVIL_METADATA)], "evil-1");
    assert_eq!(fs::read_to_string(&ran).unwrap(), "ran\n", "user-data once");
}

/// The threat model names every test of this file, and this file names only threats
/// the model lists: docs and tests cannot drift apart silently.
#[test]
fn security_md_lists_the_tests_of_each_threat() {
    let doc =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/security.md")).unwrap();
    let me =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/trust.rs")).unwrap();
    let names: Vec<&str> = me
        .lines()
        .filter_map(|l| l.trim().strip_prefix("fn t"))
        .filter(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
        .filter_map(|rest| rest.split('(').next())
        .collect();
    assert!(names.len() >= 8, "{names:?}");
    for n in names {
        let name = format!("t{n}");
        assert!(doc.contains(&name), "docs/security.md does not list {name}");
        let threat = name[1..].split('_').next().unwrap();
        assert!(
            doc.contains(&format!("| T{threat} |")),
            "docs/security.md has no row for T{threat} ({name})"
        );
    }
}
