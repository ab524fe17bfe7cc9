//! Every action and report at most once, every customization answered exactly once
//! (issue 16 item 5): kills inside each script and inside the hand-over's ingestion and
//! retirement, a full disk at 0–64 KiB free, a read-only root. Threat: a run cut off by a
//! kill or a power cut repeats a script or tells vCenter two different things.

mod support;

use support::text;

use std::fs;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::thread;
use std::time::{Duration, Instant};

use support::vm::{Vm, NIC_REPLIES};

const SPEC: &str = "[NETWORK]\nHOSTNAME = once\n[NIC-CONFIG]\nNICS = NIC1\n[NIC1]\n\
MACADDR = 00:50:56:a6:8c:08\nBOOTPROTO = dhcp\n[MISC]\nMARKER-ID = m-1\n\
[CUSTOM-SCRIPT]\nSCRIPT-NAME = script0001.bat\n";

/// Appends its phase to `/root/ran` (inside the root: scripts run chrooted), writes its
/// pid, then waits until `/root/go` exists (at most 20 s): a script the test can catch
/// in the middle.
const WAITING_SCRIPT: &str = "#!/bin/sh\necho \"$1\" >> /root/ran\necho $$ > /root/script.pid\n\
i=0\nwhile [ ! -e /root/go ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done\n";

fn ran(vm: &Vm) -> Vec<String> {
    fs::read_to_string(vm.path("/root/ran"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Waits until `path` exists.
fn wait_for(path: &Path) {
    let t = Instant::now();
    while !path.exists() {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "{} never appeared",
            path.display()
        );
        thread::sleep(Duration::from_millis(10));
    }
}

/// Runs `stage` and, once the script has started, stops it with `signal` as systemd
/// would: SIGTERM to vmcust alone (KillMode=mixed), or SIGKILL to vmcust and the script's
/// process group (the cgroup kill after TimeoutStopSec).
fn cut_off_in_script(vm: &Vm, stage: &str, signal: i32) -> Output {
    let _ = fs::remove_file(vm.path("/root/script.pid"));
    let child = vm.command(stage, 0).spawn().unwrap();
    let pid_file = vm.path("/root/script.pid");
    wait_for(&pid_file);
    thread::sleep(Duration::from_millis(50));
    unsafe { libc::kill(child.id() as i32, signal) };
    if signal == libc::SIGKILL {
        let pid: i32 = fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
    child.wait_with_output().unwrap()
}

/// The root's customized part without what the test's scripts write in `/root` (their
/// pids differ from run to run; what they ran is checked on its own) and the hand-over.
fn state_without_script_files(vm: &Vm) -> std::collections::BTreeMap<PathBuf, String> {
    let mut s = vm.state();
    s.retain(|p, _| !p.starts_with("root") && !p.starts_with("var/run"));
    s
}

fn scripted_vm() -> Vm {
    let vm = Vm::new();
    fs::create_dir_all(vm.path("/root")).unwrap();
    vm.enable_scripts();
    vm.hand_over(
        SPEC,
        &[("nics.txt", "0"), ("script0001.bat", WAITING_SCRIPT)],
    );
    vm
}

/// A pre-customization script cut off by SIGTERM or SIGKILL is reported failed at the
/// next run and never run a second time; vCenter gets that one failure.
// threat T13 (docs/security.md)
#[test]
fn a_pre_script_cut_off_is_reported_and_not_run_again() {
    for signal in [libc::SIGTERM, libc::SIGKILL] {
        let vm = scripted_vm();
        let before = state_without_script_files(&vm);
        let cut = cut_off_in_script(&vm, "early", signal);
        if signal == libc::SIGTERM {
            assert_eq!(cut.status.code(), Some(75), "{}", text(&cut.stderr));
        } else {
            assert_eq!(cut.status.signal(), Some(9));
        }
        assert!(vm.final_states().is_empty(), "{signal}: {:?}", vm.rpcs());
        let again = vm.run("early");
        assert_eq!(again.status.code(), Some(1), "{}", text(&again.stderr));
        let states = vm.final_states();
        assert_eq!(states.len(), 1, "{signal}: {states:?}");
        assert!(
            states[0].contains(" 4 100 ") && states[0].contains("interrupted"),
            "{states:?}"
        );
        assert_eq!(ran(&vm), ["precustomization"], "{signal}");
        support::assert_same_tree(
            &before,
            &state_without_script_files(&vm),
            "a failed customization",
        );
        // Nothing is left to resume: a third run does nothing and sends nothing.
        assert_eq!(vm.run("early").status.code(), Some(0));
        assert_eq!(vm.final_states().len(), 1);
    }
}

/// The post-customization script and `#!` user-data, likewise, in the late stage.
// threat T13 (docs/security.md)
#[test]
fn a_post_script_cut_off_is_reported_and_not_run_again() {
    for signal in [libc::SIGTERM, libc::SIGKILL] {
        let vm = scripted_vm();
        // The pre-script runs to its end this time.
        fs::write(vm.path("/root/go"), "").unwrap();
        assert_eq!(vm.run("early").status.code(), Some(0));
        fs::remove_file(vm.path("/root/go")).unwrap();
        let cut = cut_off_in_script(&vm, "late", signal);
        assert_ne!(cut.status.code(), Some(0));
        let again = vm.run("late");
        assert_eq!(again.status.code(), Some(1), "{}", text(&again.stderr));
        assert_eq!(ran(&vm), ["precustomization", "postcustomization"]);
        let states = vm.final_states();
        assert_eq!(states.len(), 2, "{states:?}");
        assert!(states[0].contains(" 5 0 "), "{states:?}");
        assert!(
            states[1].contains(" 4 100 ")
                && states[1].contains("post-customization script was interrupted"),
            "{states:?}"
        );
        assert!(
            !vm.path("/root/.customization").exists(),
            "the staged script is removed"
        );
        assert_eq!(vm.run("late").status.code(), Some(0));
        assert_eq!(ran(&vm).len(), 2);
    }
}

// threat T13 (docs/security.md)
#[test]
fn a_user_data_script_cut_off_is_reported_and_not_run_again() {
    let md = "{\"instance-id\": \"ud-1\", \"local-hostname\": \"ud-host\"}";
    let ud = "#!/bin/sh\necho user-data >> /root/ran\necho $$ > /root/script.pid\nsleep 20\n";
    for signal in [libc::SIGTERM, libc::SIGKILL] {
        let vm = Vm::new();
        fs::create_dir_all(vm.path("/root")).unwrap();
        vm.hand_over(
            &fs::read_to_string(support::example("raw-cloud-init.cfg")).unwrap(),
            &[("metadata", md), ("userdata", ud)],
        );
        assert_eq!(vm.run("early").status.code(), Some(0));
        let cut = cut_off_in_script(&vm, "late", signal);
        assert_ne!(cut.status.code(), Some(0));
        let again = vm.run("late");
        assert_eq!(again.status.code(), Some(1), "{}", text(&again.stderr));
        assert!(text(&again.stderr).contains("user-data script was interrupted"));
        assert_eq!(ran(&vm), ["user-data"]);
        let done = vm.path("/var/lib/vmcust/instances/ud-1/user-data.done");
        assert_eq!(fs::read_to_string(done).unwrap(), "cut off\n");
        assert_eq!(vm.final_states().len(), 1, "{:?}", vm.rpcs());
        let status = fs::read_to_string(vm.path("/run/vmcust/status.json")).unwrap();
        assert!(status.contains("interrupted"), "{status}");
    }
}

/// SIGKILL at each named point inside the ingestion, the final report and the
/// retirement, then a run to the end: the end state of an uninterrupted run, the script
/// once, and one final state. A kill between the `reporting` record and the RPC is the
/// one documented window: then no final state is sent at all (never two).
// threat T13 (docs/security.md)
#[test]
fn kills_inside_the_ingestion_report_and_retirement() {
    let reference = {
        let vm = scripted_vm();
        fs::write(vm.path("/root/go"), "").unwrap();
        assert_eq!(vm.run("early").status.code(), Some(0));
        state_without_script_files(&vm)
    };
    for point in [
        "ingest-copied",
        "ingest-renamed",
        "pre-script-started",
        "pre-script",
        "applied",
        "nics",
        "reporting",
        "sent",
        "reported",
        "retire-renamed",
    ] {
        let vm = scripted_vm();
        fs::write(vm.path("/root/go"), "").unwrap();
        let crashed = vm
            .command("early", 0)
            .env(vmcust::test_api::boot::CRASH_AFTER_ENV, point)
            .output()
            .unwrap();
        assert_eq!(
            crashed.status.signal(),
            Some(9),
            "{point}: {}",
            text(&crashed.stderr)
        );
        let again = vm.run("early");
        let err = text(&again.stderr);
        let states = vm.final_states();
        match point {
            // Cut off in the script (recorded as started, not as finished).
            "pre-script-started" => {
                assert_eq!(again.status.code(), Some(1), "{point}: {err}");
                assert_eq!(states.len(), 1, "{point}: {states:?}");
                assert!(states[0].contains("interrupted"), "{point}: {states:?}");
                continue;
            }
            "reporting" => {
                assert_eq!(again.status.code(), Some(0), "{point}: {err}");
                assert!(states.is_empty(), "{point}: {states:?}");
                assert!(err.contains("not sent again"), "{point}: {err}");
            }
            _ => {
                assert_eq!(again.status.code(), Some(0), "{point}: {err}");
                assert_eq!(
                    states,
                    ["deployPkg.update.state 5 0 /var/log/vmcust.log"],
                    "{point}"
                );
            }
        }
        assert_eq!(ran(&vm), ["precustomization"], "{point}");
        support::assert_same_tree(&reference, &state_without_script_files(&vm), point);
        for left in ["pending", "pending.new", "pending.retired"] {
            assert!(
                !vm.path(&format!("/var/lib/vmcust/{left}")).exists(),
                "{point}: {left}"
            );
        }
        assert!(!vm.path("/var/run/vmware-imc").exists(), "{point}");
        // And nothing more at the next boot.
        assert_eq!(vm.run("early").status.code(), Some(0));
        assert_eq!(vm.final_states(), states, "{point}: sent again");
    }
}

fn mount(args: &[&str]) {
    support::require_root("mounting a tmpfs or a read-only bind");
    support::run(args[0], &args[1..]);
}

/// Unmounts when dropped, so that a failing assertion leaves no mount behind.
struct Mounted(PathBuf);
impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// A VM-like root at `root` (any directory): the example root, VMware DMI, `/var/run`
/// a link to `/run` as on every systemd distribution, `/run` its own small tmpfs.
fn root_at(root: &Path) -> Mounted {
    support::copy_tree(&support::repo().join("examples/root"), root);
    support::vm::vmware_dmi(root);
    fs::create_dir_all(root.join("var")).unwrap();
    fs::create_dir_all(root.join("run")).unwrap();
    std::os::unix::fs::symlink("/run", root.join("var/run")).unwrap();
    let run = root.join("run");
    mount(&[
        "mount",
        "-t",
        "tmpfs",
        "-o",
        "size=1m",
        "tmpfs",
        run.to_str().unwrap(),
    ]);
    Mounted(run)
}

fn hand_over_into(root: &Path, spec: &str) {
    let dir = root.join("run/vmware-imc");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("nics.txt"), "0\n").unwrap();
    fs::write(dir.join("cust.cfg"), spec).unwrap();
}

fn run_early(root: &Path, host: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vmcust"))
        .args(["run", "--stage", "early", "--root"])
        .arg(root)
        .arg("--guestinfo-dir")
        .arg(host)
        .args(["--max-wait", "0", "--nic-poll-ms", "10"])
        .env("VMCUST_LOG", "info")
        .env_remove(vmcust::test_api::boot::CRASH_AFTER_ENV)
        .output()
        .unwrap()
}

fn states_in(host: &Path) -> Vec<String> {
    fs::read_to_string(host.join("rpc.log"))
        .unwrap_or_default()
        .lines()
        .filter(|r| r.starts_with("deployPkg.update.state"))
        .filter(|r| !r.contains(" 103 ") && !r.contains(" 104 "))
        .map(str::to_string)
        .collect()
}

fn free_bytes(dir: &Path) -> u64 {
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid C string and `st` a valid out-pointer for the call.
    assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut st) }, 0);
    st.f_bavail * st.f_frsize
}

/// The root's file system full but for 0, 4, … 64 KiB: every run sends exactly one final
/// state (a success only with the customization applied), and once space is free again
/// nothing is sent a second time.
// threat T13 (docs/security.md)
#[test]
fn a_full_disk_still_gets_exactly_one_final_state() {
    let spec = fs::read_to_string(support::example("static-2nic-ipv6.cfg")).unwrap();
    let mnt = tempfile::tempdir().unwrap();
    let dir = mnt.path().to_str().unwrap().to_string();
    mount(&["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", &dir]);
    let _fs = Mounted(mnt.path().to_path_buf());
    let mut outcomes = Vec::new();
    for kib in (0..=64u64).step_by(4) {
        let root = mnt.path().join(format!("root{kib}"));
        let run = root_at(&root);
        let host = tempfile::tempdir().unwrap();
        fs::write(host.path().join("replies"), NIC_REPLIES).unwrap();
        hand_over_into(&root, &spec);
        let filler = mnt.path().join("filler");
        let free = free_bytes(mnt.path());
        fs::write(&filler, vec![0u8; free.saturating_sub(kib * 1024) as usize]).ok();
        let out = run_early(&root, host.path());
        let err = text(&out.stderr);
        let states = states_in(host.path());
        assert_eq!(states.len(), 1, "{kib} KiB free: {states:?}\n{err}");
        let hostname = fs::read_to_string(root.join("etc/hostname")).unwrap();
        if states[0].contains(" 5 0 ") {
            assert_eq!(out.status.code(), Some(0), "{kib} KiB: {err}");
            assert_eq!(hostname, "web01\n", "{kib} KiB: success without the change");
        } else {
            assert!(states[0].contains(" 4 "), "{kib} KiB: {states:?}");
            assert_ne!(out.status.code(), Some(0), "{kib} KiB: {err}");
        }
        assert!(
            !root.join("run/vmware-imc").exists(),
            "{kib} KiB: hand-over left"
        );
        fs::remove_file(&filler).ok();
        let again = run_early(&root, host.path());
        assert_eq!(
            again.status.code(),
            Some(0),
            "{kib} KiB: {}",
            text(&again.stderr)
        );
        assert_eq!(states_in(host.path()), states, "{kib} KiB: sent again");
        outcomes.push((kib, states[0].contains(" 5 0 ")));
        drop(run);
        fs::remove_dir_all(&root).unwrap();
    }
    eprintln!("KiB free -> success: {outcomes:?}");
    assert!(outcomes.iter().any(|(_, ok)| !ok), "no run met a full disk");
    assert!(outcomes.iter().any(|(_, ok)| *ok), "no run had room enough");
}

/// A read-only root (its `/run` a writable tmpfs, as at boot): the hand-over is answered
/// with a failure that says why, removed, and not answered again.
// threat T13 (docs/security.md)
#[test]
fn a_read_only_root_still_gets_exactly_one_final_state() {
    let spec = fs::read_to_string(support::example("static-2nic-ipv6.cfg")).unwrap();
    let base = tempfile::tempdir().unwrap();
    let root = base.path().join("root");
    fs::create_dir_all(&root).unwrap();
    let r = root.to_str().unwrap();
    mount(&["mount", "--bind", r, r]);
    let _bind = Mounted(root.clone());
    let run = root_at(&root);
    mount(&["mount", "-o", "remount,bind,ro", r]);
    let host = tempfile::tempdir().unwrap();
    fs::write(host.path().join("replies"), NIC_REPLIES).unwrap();
    hand_over_into(&root, &spec);
    let out = run_early(&root, host.path());
    let err = text(&out.stderr);
    // An I/O failure: 74 (EX_IOERR), as the same fault gives from `vmcust apply`.
    assert_eq!(out.status.code(), Some(74), "{err}");
    let states = states_in(host.path());
    assert_eq!(states.len(), 1, "{states:?}\n{err}");
    assert!(
        states[0].starts_with("deployPkg.update.state 4 100 ")
            && states[0].contains("Read-only file system"),
        "{states:?}"
    );
    assert!(!root.join("run/vmware-imc").exists());
    assert_eq!(run_early(&root, host.path()).status.code(), Some(0));
    assert_eq!(states_in(host.path()), states, "sent again");
    drop(run);
}

/// A customization that fails after its post-script was scheduled (here the marker
/// cannot be written: a directory stands where the old marker file is) gets one final
/// state, `4 100`; the late stage then runs no post-script and sends nothing more.
// threat T13 (docs/security.md)
#[test]
fn a_failed_customization_runs_no_post_script() {
    let vm = scripted_vm();
    fs::write(vm.path("/root/go"), "").unwrap();
    fs::create_dir_all(vm.path("/var/lib/vmcust/.markerfile-old.txt/x")).unwrap();
    let early = vm.run("early");
    // The marker cannot be written: an I/O failure, 74.
    assert_eq!(early.status.code(), Some(74), "{}", text(&early.stderr));
    let late = vm.run("late");
    assert_eq!(late.status.code(), Some(0), "{}", text(&late.stderr));
    let states = vm.final_states();
    assert_eq!(states.len(), 1, "{states:?}");
    assert!(states[0].contains(" 4 100 "), "{states:?}");
    assert_eq!(ran(&vm), ["precustomization"]);
    let flag = vm.path("/var/lib/vmcust/instances/m-1/post-customization-pending");
    assert!(!flag.exists() && !vm.path("/root/.customization").exists());
}

/// An early stage killed after scheduling the post-script (before its final state): the
/// late stage that follows does not run the script ahead of the final state; the next
/// early stage sends `5 0`, and only then does a late stage run the script, once.
// threat T13 (docs/security.md)
#[test]
fn the_post_script_waits_for_the_final_state_of_a_customization_cut_off() {
    let vm = scripted_vm();
    fs::write(vm.path("/root/go"), "").unwrap();
    let crashed = vm
        .command("early", 0)
        .env(vmcust::test_api::boot::CRASH_AFTER_ENV, "post-scheduled")
        .output()
        .unwrap();
    assert_eq!(
        crashed.status.signal(),
        Some(9),
        "{}",
        text(&crashed.stderr)
    );
    let late = vm.run("late");
    assert_eq!(late.status.code(), Some(0), "{}", text(&late.stderr));
    assert!(
        text(&late.stderr).contains("unfinished"),
        "{}",
        text(&late.stderr)
    );
    assert_eq!(ran(&vm), ["precustomization"]);
    assert!(vm.final_states().is_empty(), "{:?}", vm.final_states());
    assert_eq!(vm.run("early").status.code(), Some(0));
    assert_eq!(vm.run("late").status.code(), Some(0));
    assert_eq!(ran(&vm), ["precustomization", "postcustomization"]);
    assert_eq!(
        vm.final_states(),
        ["deployPkg.update.state 5 0 /var/log/vmcust.log"]
    );
}

/// A refused hand-over and one that cannot be taken in are removed before they are
/// answered: a kill in between loses the answer (vCenter times out) and the next start
/// finds nothing to answer again — never two `4 100`.
// threat T13 (docs/security.md)
#[test]
fn a_kill_before_answering_a_bad_hand_over_sends_nothing_twice() {
    type Spoil = fn(&Vm);
    let cases: [(&str, Spoil); 2] = [
        ("refused", |vm| {
            let dir = vm.path("/var/run/vmware-imc");
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
        }),
        ("not taken in", |vm| {
            // A file where the pending directory goes: the rename into place fails.
            fs::create_dir_all(vm.path("/var/lib/vmcust")).unwrap();
            fs::write(vm.path("/var/lib/vmcust/pending"), "").unwrap();
        }),
    ];
    for (what, spoil) in cases {
        // Uninterrupted: one failure.
        let vm = scripted_vm();
        spoil(&vm);
        let out = vm.run("early");
        assert_ne!(out.status.code(), Some(0), "{what}: {}", text(&out.stderr));
        assert_eq!(vm.final_states().len(), 1, "{what}: {:?}", vm.rpcs());
        assert!(vm.final_states()[0].contains(" 4 100 "), "{what}");
        // Killed between the removal and the answer.
        let vm = scripted_vm();
        spoil(&vm);
        let crashed = vm
            .command("early", 0)
            .env(vmcust::test_api::boot::CRASH_AFTER_ENV, "handover-removed")
            .output()
            .unwrap();
        assert_eq!(
            crashed.status.signal(),
            Some(9),
            "{what}: {}",
            text(&crashed.stderr)
        );
        assert!(!vm.path("/var/run/vmware-imc").exists(), "{what}");
        assert_eq!(vm.run("early").status.code(), Some(0), "{what}");
        assert!(vm.final_states().is_empty(), "{what}: {:?}", vm.rpcs());
    }
}
