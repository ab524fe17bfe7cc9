//! `vmcust run` against a faithful fake of the host side: open-vm-tools' hand-over (files
//! renamed into `/var/run/vmware-imc`, `cust.cfg` last) and the VMX's replies
//! (`queryNicsSupported`, then `connected` after some polls), with every RPC recorded.

mod support;

use std::fs;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use support::vm::Vm;
use support::{example, scratch_root};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn spec(name: &str) -> String {
    fs::read_to_string(example(name)).unwrap()
}

const SCRIPT_SPEC: &str = "[NETWORK]\nHOSTNAME = scripted\n[NIC-CONFIG]\nNICS = NIC1\n[NIC1]\n\
MACADDR = 00:50:56:a6:8c:08\nBOOTPROTO = dhcp\n[MISC]\nMARKER-ID = m-1\n\
[CUSTOM-SCRIPT]\nSCRIPT-NAME = script0001.bat\n";

/// A custom script that records each run's phase in the root's `/root/ran`.
const COUNTING_SCRIPT: &str = "#!/bin/sh\r\necho \"$1\" >> \"$(dirname \"$0\")/../ran\"\r\n";

#[test]
fn success_applies_connects_nics_and_reports_done() {
    let vm = Vm::new();
    vm.hand_over(&spec("static-2nic-ipv6.cfg"), &[("nics.txt", "0,1\n")]);
    let out = vm.run("early");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        vm.rpcs(),
        [
            "deployPkg.update.state 4 103 /var/log/vmcust.log@0,1",
            "deployPkg.update.state 4 104 /var/log/vmcust.log@0,1",
            "deployPkg.update.state 4 104 /var/log/vmcust.log@0,1",
            "deployPkg.update.state 4 104 /var/log/vmcust.log@0,1",
            "deployPkg.update.state 5 0 /var/log/vmcust.log",
            "log vmcust: guest customization succeeded",
        ]
    );
    assert_eq!(
        fs::read_to_string(vm.path("/etc/hostname")).unwrap(),
        "web01\n"
    );
    assert!(vm.path("/etc/netplan/50-vmcust.yaml").exists());
    assert!(
        !vm.path("/var/run/vmware-imc").exists(),
        "hand-over removed"
    );
    assert!(
        !vm.path("/var/lib/vmcust/pending").exists(),
        "no copy of the spec left"
    );
    let result = fs::read_to_string(
        vm.path("/var/lib/vmcust/instances/4217e0a1-6c2b-9d7e-51a0-3b9f2c1d8e44/result.json"),
    )
    .unwrap();
    assert!(result.contains("\"outcome\": \"done\""), "{result}");
    let status = vm.command("late", 0).output().unwrap();
    assert_eq!(status.status.code(), Some(0));
    let st = Command::new(env!("CARGO_BIN_EXE_vmcust"))
        .args(["status", "--root"])
        .arg(vm.root.path())
        .output()
        .unwrap();
    let st = text(&st.stdout);
    assert!(st.contains("run: done"), "{st}");
    assert!(st.contains(": done (code 0)"), "{st}");
}

/// Each failure class: the spec, the root's tweak, the final state sent, and what the
/// root must still look like (unchanged, apart from vmcust's own records).
#[test]
fn each_failure_class_reports_its_code_and_changes_nothing() {
    let nic = "[NIC-CONFIG]\nNICS = NIC1\n[NIC1]\nMACADDR = 00:50:56:a6:8c:08\nBOOTPROTO = dhcp\n";
    // The exit status: 65 when the customization itself is at fault, 1 otherwise.
    let cases: Vec<(&str, String, bool, i32, &str)> = vec![
        (
            "invalid spec",
            "[NETWORK]\nHOSTNAME = -bad-\n".to_string(),
            false,
            65,
            "deployPkg.update.state 4 100 /var/log/vmcust.log@invalid cust.cfg: line 2:",
        ),
        (
            "unusable address",
            nic.replace("BOOTPROTO = dhcp", "BOOTPROTO = static\nIPADDR = 224.0.0.5\nNETMASK = 255.255.255.0"),
            false,
            65,
            "deployPkg.update.state 4 100 /var/log/vmcust.log@cust.cfg: [NIC1] IPADDR: 224.0.0.5/24 cannot be a NIC address",
        ),
        (
            "MAC absent from the VM",
            nic.replace("8c:08", "00:99"),
            false,
            65,
            "deployPkg.update.state 4 101 /var/log/vmcust.log@no network device has MAC address 00:50:56:a6:00:99",
        ),
        (
            "unknown time zone",
            format!("{nic}[DATETIME]\nTIMEZONE = Mars/Olympus\n"),
            false,
            65,
            "deployPkg.update.state 4 100 /var/log/vmcust.log@cust.cfg: line 7: [DATETIME] TIMEZONE = \"Mars/Olympus\": unknown time zone",
        ),
        (
            "custom script disabled by tools.conf default",
            SCRIPT_SPEC.to_string(),
            false,
            1,
            "deployPkg.update.state 4 6 /var/log/vmcust.log@",
        ),
        (
            "failing pre-customization script",
            SCRIPT_SPEC.to_string(),
            true,
            1,
            "deployPkg.update.state 4 100 /var/log/vmcust.log@pre",
        ),
    ];
    for (name, body, scripts, code, want) in cases {
        let vm = Vm::new();
        if scripts {
            vm.enable_scripts();
        }
        let before = vm.state();
        vm.hand_over(
            &body,
            &[("nics.txt", "0"), ("script0001.bat", "#!/bin/sh\nexit 3\n")],
        );
        let out = vm.run("early");
        assert_eq!(
            out.status.code(),
            Some(code),
            "{name}: {}",
            text(&out.stderr)
        );
        let last = vm.final_state().unwrap_or_default();
        assert!(
            last.starts_with(want),
            "{name}: sent {last:?}, wanted {want:?}"
        );
        assert!(
            vm.rpcs().iter().any(|r| r.contains(" 4 103 ")),
            "{name}: NICs must be connected after a failure too"
        );
        let mut after = vm.state();
        after.retain(|p, _| {
            !p.starts_with("var/lib/vmcust") && !p.starts_with("root/.customization")
        });
        let mut before = before.clone();
        before.retain(|p, _| !p.starts_with("var/lib/vmcust"));
        support::assert_same_tree(&before, &after, &format!("{name}: the root"));
        assert!(!vm.path("/var/lib/vmcust/pending").exists(), "{name}");
    }
}

#[test]
fn scripts_run_pre_then_post_once_per_marker() {
    let vm = Vm::new();
    vm.enable_scripts();
    vm.hand_over(SCRIPT_SPEC, &[("script0001.bat", COUNTING_SCRIPT)]);
    assert_eq!(vm.run("early").status.code(), Some(0));
    let ran = vm.path("/root/ran");
    assert_eq!(fs::read_to_string(&ran).unwrap(), "precustomization\n");
    let late = vm.run("late");
    assert_eq!(late.status.code(), Some(0), "{}", text(&late.stderr));
    assert_eq!(
        fs::read_to_string(&ran).unwrap(),
        "precustomization\npostcustomization\n"
    );
    assert!(
        !vm.path("/root/.customization").exists(),
        "the staged script is removed after the post-script"
    );
    assert!(vm.path("/var/lib/vmcust/.markerfile-m-1.txt").exists());
    // A new hand-over with the same marker: network and identity again, scripts not.
    vm.hand_over(SCRIPT_SPEC, &[("script0001.bat", COUNTING_SCRIPT)]);
    assert_eq!(vm.run("early").status.code(), Some(0));
    assert_eq!(vm.run("late").status.code(), Some(0));
    assert_eq!(
        fs::read_to_string(&ran).unwrap(),
        "precustomization\npostcustomization\n",
        "scripts do not run again for the same marker"
    );
    assert_eq!(
        vm.final_state().as_deref(),
        Some("deployPkg.update.state 5 0 /var/log/vmcust.log")
    );
}

#[test]
fn hanging_script_is_killed_after_the_timeout() {
    let vm = Vm::new();
    vm.enable_scripts();
    vm.settings("[scripts]\ntimeout = 1\n");
    vm.hand_over(
        SCRIPT_SPEC,
        &[("script0001.bat", "#!/bin/sh\nsleep 60 &\nsleep 60\n")],
    );
    let t = Instant::now();
    let out = vm.run("early");
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "took {:?}",
        t.elapsed()
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let last = vm.final_state().unwrap();
    assert!(
        last.contains(" 4 100 ") && last.contains("stopped"),
        "{last}"
    );
}

/// Kill -9 right after each journal step, then run again: the end state is the one an
/// uninterrupted run reaches, and the pre-script ran exactly once.
#[test]
fn kill_at_every_step_then_rerun_ends_like_an_uninterrupted_run() {
    let reference = {
        let vm = Vm::new();
        vm.enable_scripts();
        vm.hand_over(
            SCRIPT_SPEC,
            &[("nics.txt", "0"), ("script0001.bat", COUNTING_SCRIPT)],
        );
        assert_eq!(vm.run("early").status.code(), Some(0));
        vm.state()
    };
    for step in [
        "pre-script",
        "applied",
        "post-scheduled",
        "marker",
        "nics",
        "reported",
    ] {
        let vm = Vm::new();
        vm.enable_scripts();
        vm.hand_over(
            SCRIPT_SPEC,
            &[("nics.txt", "0"), ("script0001.bat", COUNTING_SCRIPT)],
        );
        let crashed = vm
            .command("early", 0)
            .env(vmcust::test_api::boot::CRASH_AFTER_ENV, step)
            .output()
            .unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            crashed.status.signal(),
            Some(9),
            "{step}: {}",
            text(&crashed.stderr)
        );
        let again = vm.run("early");
        assert_eq!(
            again.status.code(),
            Some(0),
            "{step}: {}",
            text(&again.stderr)
        );
        assert_eq!(vm.state(), reference, "{step}: the end state differs");
        assert_eq!(
            vm.final_state().as_deref(),
            Some("deployPkg.update.state 5 0 /var/log/vmcust.log"),
            "{step}"
        );
    }
}

#[test]
fn sigterm_during_a_hanging_pre_script_exits_within_a_second() {
    let vm = Vm::new();
    vm.enable_scripts();
    // The background child is found by its argument: inside the root's sealed box the
    // script sees process ids of its own namespace, not this machine's.
    let tag = format!("60.{}", std::process::id());
    let script = format!(
        "#!/bin/sh\necho $$ > \"$(dirname \"$0\")/pid\"\nsleep {tag} &\necho $! > \"$(dirname \"$0\")/child\"\nwait\n"
    );
    vm.hand_over(SCRIPT_SPEC, &[("script0001.bat", &script)]);
    let mut child: Child = vm
        .command("early", 0)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let child_pid = vm.path("/root/.customization/child");
    let t = Instant::now();
    while !child_pid.exists() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "script never started"
        );
        thread::sleep(Duration::from_millis(20));
    }
    let sent = Instant::now();
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert!(
        sent.elapsed() < Duration::from_secs(1),
        "took {:?}",
        sent.elapsed()
    );
    assert_eq!(status.code(), Some(75));
    // The script's whole process group is gone, no final state was sent, and the
    // customization is still pending for the next boot.
    thread::sleep(Duration::from_millis(100));
    let alive = fs::read_dir("/proc").unwrap().flatten().any(|e| {
        let cmdline = fs::read(e.path().join("cmdline")).unwrap_or_default();
        let stat = fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        String::from_utf8_lossy(&cmdline).contains(&tag) && !stat.contains(") Z ")
    });
    assert!(!alive, "the script's background child survived");
    assert_eq!(vm.final_state(), None);
    assert!(vm.path("/var/lib/vmcust/pending/cust.cfg").exists());
}

#[test]
fn cust_cfg_at_start_mid_wait_and_after_the_maximum() {
    // At 0 s: found without waiting.
    let vm = Vm::new();
    vm.hand_over(&spec("dhcp.cfg"), &[]);
    let t = Instant::now();
    assert_eq!(
        vm.command("early", 5).output().unwrap().status.code(),
        Some(0)
    );
    assert!(t.elapsed() < Duration::from_secs(3));
    assert!(vm.final_state().unwrap().contains(" 5 0 "));

    // Mid-wait: picked up as soon as tools renames it into place.
    let vm = Vm::new();
    let child = vm.command("early", 20).spawn().unwrap();
    thread::sleep(Duration::from_millis(500));
    vm.hand_over(&spec("dhcp.cfg"), &[]);
    let t = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert!(vm.final_state().unwrap().contains(" 5 0 "));

    // After the maximum: nothing done, nothing reported, the file is left for next boot.
    let vm = Vm::new();
    let t = Instant::now();
    let out = vm.command("early", 1).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(t.elapsed() >= Duration::from_secs(1));
    assert!(
        vm.rpcs().iter().all(|r| r.starts_with("info-get ")),
        "{:?}",
        vm.rpcs()
    );
    vm.hand_over(&spec("dhcp.cfg"), &[]);
    assert_eq!(vm.run("early").status.code(), Some(0));
    assert!(vm.final_state().unwrap().contains(" 5 0 "));
}

/// Only a VM that may be new (its BIOS UUID is not the one of the last boot) waits for a
/// spec; the same VM booting again does not, and a spec that arrives later is applied by
/// a run with no wait (what vmcust-imc.path starts).
#[test]
fn only_a_new_vm_waits_and_a_late_spec_is_still_applied() {
    let vm = Vm::new();
    let t = Instant::now();
    assert_eq!(
        vm.command("early", 2).output().unwrap().status.code(),
        Some(0)
    );
    assert!(t.elapsed() >= Duration::from_secs(2), "a new VM waits");

    let t = Instant::now();
    let out = vm.command("early", 20).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "the same VM again: {:?}",
        t.elapsed()
    );
    assert!(
        text(&out.stderr).contains("not waiting"),
        "{}",
        text(&out.stderr)
    );

    // Re-customization of the same VM: the spec arrives after boot.
    vm.hand_over(&spec("dhcp.cfg"), &[("nics.txt", "0")]);
    let out = vm.command("early", 0).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(vm.final_state().unwrap().contains(" 5 0 "));

    // A clone: another BIOS UUID, so it waits again.
    fs::write(
        vm.path("/sys/class/dmi/id/product_uuid"),
        "4217E0A1-0000-0000-0000-00000000C10E\n",
    )
    .unwrap();
    let t = Instant::now();
    vm.command("early", 2).output().unwrap();
    assert!(t.elapsed() >= Duration::from_secs(2), "a clone waits");
}

/// A CD drive whose driver loads after the early stage started: its OVF environment is
/// applied as soon as the device appears, within the wait for a spec.
#[test]
fn a_cd_drive_that_appears_late_is_read() {
    let vm = Vm::new();
    let iso_dir = tempfile::tempdir().unwrap();
    let content = iso_dir.path().join("content");
    fs::create_dir(&content).unwrap();
    fs::write(
        content.join("ovf-env.xml"),
        "<?xml version=\"1.0\"?><Environment xmlns=\"http://schemas.dmtf.org/ovf/environment/1\" \
         xmlns:oe=\"http://schemas.dmtf.org/ovf/environment/1\" oe:id=\"\"><PropertySection>\
         <Property oe:key=\"instance-id\" oe:value=\"late-cd-1\"/>\
         <Property oe:key=\"hostname\" oe:value=\"from-late-cd\"/></PropertySection></Environment>",
    )
    .unwrap();
    let iso = iso_dir.path().join("ovf.iso");
    support::require_tool("xorriso", "xorriso");
    let made = Command::new("xorriso")
        .args(["-as", "mkisofs", "-quiet", "-J", "-R", "-o"])
        .arg(&iso)
        .arg(&content)
        .status()
        .expect("xorriso is installed (scripts/test-packages.txt)");
    assert!(made.success());
    fs::create_dir_all(vm.path("/dev")).unwrap();
    let child = vm.command("early", 20).spawn().unwrap();
    thread::sleep(Duration::from_millis(700));
    let t = Instant::now();
    fs::copy(&iso, vm.path("/dev/sr0.tmp")).unwrap();
    fs::rename(vm.path("/dev/sr0.tmp"), vm.path("/dev/sr0")).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert_eq!(
        fs::read_to_string(vm.path("/etc/hostname")).unwrap(),
        "from-late-cd\n"
    );
}

/// open-vm-tools hands raw cloud-init data to any installed cloud-init, whatever
/// `disable_vmware_customization` says: with a real cloud-init here, vmcust leaves such a
/// spec alone (and still takes a traditional one).
#[test]
fn raw_data_is_left_to_a_real_cloud_init() {
    let vm = Vm::new();
    let bin = vm.path("/usr/bin");
    fs::create_dir_all(&bin).unwrap();
    fs::write(bin.join("cloud-init"), "#!/bin/sh\necho 23.4\n").unwrap();
    vm.hand_over(
        &spec("raw-cloud-init.cfg"),
        &[("metadata", "{\"instance-id\": \"raw-2\"}")],
    );
    let out = vm.run("early");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("leaving the vSphere customization to cloud-init"));
    assert!(
        vm.path("/var/run/vmware-imc/cust.cfg").exists(),
        "hand-over left alone"
    );
    assert_eq!(
        vm.final_state(),
        None,
        "nothing reported: cloud-init owns it"
    );

    let vm = Vm::new();
    fs::create_dir_all(vm.path("/usr/bin")).unwrap();
    fs::write(vm.path("/usr/bin/cloud-init"), "#!/bin/sh\necho 23.4\n").unwrap();
    vm.hand_over(&spec("dhcp.cfg"), &[]);
    assert_eq!(vm.run("early").status.code(), Some(0));
    assert!(
        vm.final_state().unwrap().contains(" 5 0 "),
        "a traditional spec is ours"
    );
}

/// The early stage keeps the `cloud-init` stand-in in step at every boot (an rpm has no
/// trigger for a cloud-init installed later): link and drop-in where no real cloud-init
/// is, our drop-in taken away where one has been installed since.
#[test]
fn the_early_stage_keeps_the_cloud_init_stand_in_in_step() {
    let vm = Vm::new();
    fs::create_dir_all(vm.path("/usr/bin")).unwrap();
    fs::write(vm.path("/usr/bin/vmcust"), "binary").unwrap();
    let drop_in = vm.path("/etc/cloud/cloud.cfg.d/99-vmcust.cfg");
    vm.hand_over(&spec("dhcp.cfg"), &[]);
    assert_eq!(vm.run("early").status.code(), Some(0));
    assert_eq!(
        fs::read_link(vm.path("/usr/bin/cloud-init")).unwrap(),
        Path::new("vmcust")
    );
    assert!(fs::read_to_string(&drop_in)
        .unwrap()
        .contains("disable_vmware_customization: false"));

    // A real cloud-init replaces the link: the next boot takes our drop-in away.
    fs::remove_file(vm.path("/usr/bin/cloud-init")).unwrap();
    fs::write(vm.path("/usr/bin/cloud-init"), "#!/usr/bin/python3\n").unwrap();
    let out = vm.run("early");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!drop_in.exists());
    assert!(text(&out.stderr).contains("cloud-init stand-in: removed"));
}

#[test]
fn not_vmware_costs_nothing() {
    let root = scratch_root();
    let t = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_vmcust"))
        .args(["run", "--stage", "early", "--root"])
        .arg(root.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(t.elapsed() < Duration::from_secs(1));
    assert!(!root.path().join("run/vmcust").exists());
}

#[test]
fn guestinfo_metadata_applies_once_per_instance_and_is_redacted_after() {
    let vm = Vm::new();
    let md = "instance-id: gi-1\nlocal-hostname: gi-host.example.net\nredact: [userdata]\n\
network:\n  version: 2\n  ethernets:\n    nic0:\n      match:\n        macaddress: '00:50:56:a6:8c:08'\n      dhcp4: true\n";
    fs::write(vm.host.path().join("guestinfo.metadata"), md).unwrap();
    fs::write(
        vm.host.path().join("guestinfo.userdata"),
        "#!/bin/sh\necho ran >> \"$(dirname \"$0\")/ud-ran\"\n",
    )
    .unwrap();
    let t = Instant::now();
    let out = vm.command("early", 15).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "guestinfo data must not wait for cust.cfg"
    );
    assert_eq!(
        fs::read_to_string(vm.path("/etc/hostname")).unwrap(),
        "gi-host\n"
    );
    assert!(
        vm.rpcs()
            .contains(&"info-set guestinfo.userdata ---".to_string()),
        "{:?}",
        vm.rpcs()
    );
    assert_eq!(
        fs::read_to_string(vm.host.path().join("guestinfo.userdata")).unwrap(),
        "---"
    );
    let late = vm.run("late");
    assert_eq!(late.status.code(), Some(0), "{}", text(&late.stderr));
    let ran = vm.path("/var/lib/vmcust/instances/gi-1/ud-ran");
    assert_eq!(fs::read_to_string(&ran).unwrap(), "ran\n");
    // Next boot: the same instance is not customized again, the user-data not rerun.
    fs::write(vm.path("/etc/hostname"), "changed-by-admin\n").unwrap();
    assert_eq!(vm.run("early").status.code(), Some(0));
    assert_eq!(vm.run("late").status.code(), Some(0));
    assert_eq!(
        fs::read_to_string(vm.path("/etc/hostname")).unwrap(),
        "changed-by-admin\n"
    );
    assert_eq!(fs::read_to_string(&ran).unwrap(), "ran\n");
}

/// guestinfo metadata's `wait-on-network` (docs/guestinfo.md) reaches the late stage: the
/// early stage keeps the families for it, a second boot changes nothing, and the next
/// instance's metadata (here without it) replaces the record, so the late stage never
/// waits for an earlier instance's families.
#[test]
fn guestinfo_wait_on_network_is_kept_for_the_late_stage() {
    let vm = Vm::new();
    vm.settings("[trust]\nrecustomize_same_vm = true\n");
    let record = vm.path("/var/lib/vmcust/wait-on-network");
    let metadata = vm.host.path().join("guestinfo.metadata");
    fs::write(
        &metadata,
        "instance-id: gi-w1\nlocal-hostname: first\nwait-on-network: {ipv4: false, ipv6: true}\n",
    )
    .unwrap();
    let plan = || text(&vm.vmcust(&["plan"]).stdout);
    let shown = plan();
    assert!(
        shown.contains("/var/lib/vmcust/wait-on-network"),
        "the plan shows the record: {shown}"
    );
    for stage in ["early", "late"] {
        let out = vm.run(stage);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    assert_eq!(fs::read_to_string(&record).unwrap(), "ipv6\n");
    // Kept as it is: nothing left to write for it, and a second boot leaves it alone.
    assert!(!plan().contains("wait-on-network"));
    let written = fs::metadata(&record).unwrap().modified().unwrap();
    for stage in ["early", "late"] {
        assert_eq!(vm.run(stage).status.code(), Some(0));
    }
    assert_eq!(fs::metadata(&record).unwrap().modified().unwrap(), written);
    fs::write(&metadata, "instance-id: gi-w2\nlocal-hostname: second\n").unwrap();
    let out = vm.run("early");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        fs::read_to_string(vm.path("/etc/hostname")).unwrap(),
        "second\n"
    );
    assert_eq!(fs::read_to_string(&record).unwrap(), "");
}

#[test]
fn ovf_seed_file_is_applied() {
    let vm = Vm::new();
    let seed = vm.path("/var/lib/vmcust/seed");
    fs::create_dir_all(&seed).unwrap();
    fs::write(
        seed.join("ovf-env.xml"),
        "<Environment xmlns=\"http://schemas.dmtf.org/ovf/environment/1\" \
         xmlns:oe=\"http://schemas.dmtf.org/ovf/environment/1\"><PropertySection>\
         <Property oe:key=\"instance-id\" oe:value=\"ovf-7\"/>\
         <Property oe:key=\"hostname\" oe:value=\"from-ovf\"/></PropertySection></Environment>",
    )
    .unwrap();
    let out = vm.run("early");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        fs::read_to_string(vm.path("/etc/hostname")).unwrap(),
        "from-ovf\n"
    );
    assert!(vm
        .path("/var/lib/vmcust/instances/ovf-7/result.json")
        .exists());
}

#[test]
fn raw_cloud_init_spec_applies_metadata_and_keeps_user_data() {
    let vm = Vm::new();
    let md = "{\"instance-id\": \"raw-1\", \"local-hostname\": \"raw-host\", \"network\": {\"version\": 2, \
\"ethernets\": {\"e\": {\"match\": {\"macaddress\": \"00:50:56:a6:8c:08\"}, \"dhcp4\": true}}}}";
    vm.hand_over(
        &spec("raw-cloud-init.cfg"),
        &[("metadata", md), ("userdata", "#!/bin/sh\r\ntrue\r\n")],
    );
    let out = vm.run("early");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        fs::read_to_string(vm.path("/etc/hostname")).unwrap(),
        "raw-host\n"
    );
    assert_eq!(
        fs::read_to_string(vm.path("/var/lib/vmcust/instances/raw-1/user-data")).unwrap(),
        "#!/bin/sh\ntrue\n"
    );
    assert!(vm.final_state().unwrap().contains(" 5 0 "));

    let bad = Vm::new();
    bad.hand_over(
        &spec("raw-cloud-init.cfg"),
        &[("metadata", "[not yaml: a=b")],
    );
    assert_eq!(bad.run("early").status.code(), Some(65));
    assert!(bad
        .final_state()
        .unwrap()
        .starts_with("deployPkg.update.state 4 9 "));
}
