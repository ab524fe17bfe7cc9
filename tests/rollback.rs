//! All or nothing: a failure at any action of a realistic plan — injected at every index,
//! or real (an immutable file, a directory where a file goes, a full filesystem) — leaves
//! the root exactly as it was, byte for byte with modes and owners, in `vmcust apply` and
//! in `vmcust run`.

mod support;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

use support::vm::Vm;
use support::{example, scratch_root, snapshot};

const FAIL_AT: &str = vmcust::test_api::apply::FAIL_AT_ENV;

fn apply(root: &Path, spec: &str, fail_at: Option<usize>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vmcust"));
    cmd.args(["apply", "--root"])
        .arg(root)
        .arg(example(spec))
        .env("PATH", "/nonexistent")
        .env_remove(FAIL_AT);
    if let Some(i) = fail_at {
        cmd.env(FAIL_AT, i.to_string());
    }
    cmd.output().unwrap()
}

/// The number of actions `spec`'s plan has on the example root.
fn action_count(spec: &str) -> usize {
    let root = scratch_root();
    let out = Command::new(env!("CARGO_BIN_EXE_vmcust"))
        .args(["plan", "--format", "json", "--root"])
        .arg(root.path())
        .arg(example(spec))
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["actions"].as_array().unwrap().len()
}

/// A root with things the plan must put back: an owned file with an odd mode, a
/// template leftover that gets moved aside, and an old /etc/hosts.
fn lived_in_root() -> tempfile::TempDir {
    let root = scratch_root();
    let p = root.path();
    fs::write(
        p.join("etc/hosts"),
        "127.0.0.1 localhost\n127.0.1.1 template\n",
    )
    .unwrap();
    fs::set_permissions(p.join("etc/hosts"), fs::Permissions::from_mode(0o640)).unwrap();
    std::os::unix::fs::chown(p.join("etc/hosts"), Some(0), Some(4)).unwrap();
    fs::create_dir_all(p.join("etc/netplan")).unwrap();
    fs::write(
        p.join("etc/netplan/01-template.yaml"),
        "network:\n  version: 2\n  ethernets:\n    ens192:\n      dhcp4: true\n",
    )
    .unwrap();
    root
}

#[test]
fn a_failure_at_every_action_puts_everything_back() {
    for spec in ["static-2nic-ipv6.cfg", "password-marker-script.cfg"] {
        let n = action_count(spec);
        assert!(
            n >= 5,
            "{spec}: a realistic plan has several actions, got {n}"
        );
        for i in 0..n {
            let root = lived_in_root();
            let before = snapshot(root.path());
            let out = apply(root.path(), spec, Some(i));
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(74), "{spec} at {i}: {err}");
            assert!(err.contains("nothing was changed"), "{spec} at {i}: {err}");
            support::assert_same_tree(
                &before,
                &snapshot(root.path()),
                &format!("{spec}: failure at action {i}"),
            );
        }
        // And without a failure, the same root does change.
        let root = lived_in_root();
        let before = snapshot(root.path());
        assert!(apply(root.path(), spec, None).status.success());
        assert_ne!(snapshot(root.path()), before);
    }
}

#[test]
fn a_directory_where_a_file_goes_changes_nothing() {
    let root = lived_in_root();
    let target = root.path().join("etc/netplan/50-vmcust.yaml");
    fs::create_dir_all(target.join("occupied")).unwrap();
    let before = snapshot(root.path());
    let out = apply(root.path(), "static-2nic-ipv6.cfg", None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(74), "{err}");
    assert!(err.contains("were put back"), "{err}");
    support::assert_same_tree(&before, &snapshot(root.path()), "directory in the way");
}

#[test]
fn an_immutable_file_changes_nothing() {
    let root = lived_in_root();
    let timezone = root.path().join("etc/timezone");
    fs::write(&timezone, "Etc/UTC\n").unwrap();
    let chattr = |flag: &str| {
        support::require_tool("chattr", "e2fsprogs");
        Command::new("chattr")
            .arg(flag)
            .arg(&timezone)
            .status()
            .is_ok_and(|s| s.success())
    };
    assert!(
        chattr("+i"),
        "chattr +i (e2fsprogs, as root on ext4) must work here"
    );
    let before = snapshot(root.path());
    let out = apply(root.path(), "static-2nic-ipv6.cfg", None);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let after = snapshot(root.path());
    chattr("-i");
    assert_eq!(out.status.code(), Some(74), "{err}");
    assert!(err.contains("were put back"), "{err}");
    support::assert_same_tree(&before, &after, "immutable file");
}

#[test]
fn a_full_filesystem_changes_nothing() {
    support::require_root("mounting a small tmpfs");
    let mnt = tempfile::tempdir().unwrap();
    let mount = |args: &[&str]| Command::new(args[0]).args(&args[1..]).status().unwrap();
    let dir = mnt.path().to_str().unwrap();
    assert!(mount(&["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", dir]).success());
    let mut mid_plan = false;
    for free_pages in 1..8u64 {
        let root = mnt.path().join(format!("root{free_pages}"));
        support::copy_tree(&support::repo().join("examples/root"), &root);
        // Fill the filesystem up to a few free pages.
        let filler = mnt.path().join("filler");
        let _ = fs::remove_file(&filler);
        let free = free_bytes(mnt.path());
        let keep = free_pages * 4096;
        fs::write(&filler, vec![0u8; free.saturating_sub(keep) as usize]).ok();
        let before = snapshot(&root);
        let out = apply(&root, "static-2nic-ipv6.cfg", None);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        let _ = fs::remove_file(&filler);
        if out.status.success() {
            fs::remove_dir_all(&root).unwrap();
            continue;
        }
        assert_eq!(out.status.code(), Some(74), "{err}");
        support::assert_same_tree(
            &before,
            &snapshot(&root),
            &format!("{free_pages} free pages: {err}"),
        );
        mid_plan |= !err.contains("the 0 change(s)");
        fs::remove_dir_all(&root).unwrap();
    }
    mount(&["umount", dir]);
    assert!(mid_plan, "no run failed in the middle of the plan");
}

/// Bytes free for an unprivileged writer on the filesystem of `dir`.
fn free_bytes(dir: &Path) -> u64 {
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid C string and `st` a valid out-pointer for the call.
    assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut st) }, 0);
    st.f_bavail * st.f_frsize
}

#[test]
fn run_puts_everything_back_and_reports_the_failure() {
    let spec = fs::read_to_string(example("static-2nic-ipv6.cfg")).unwrap();
    let n = action_count("static-2nic-ipv6.cfg");
    for i in 0..n {
        let vm = Vm::new();
        let before = vm.state();
        vm.hand_over(&spec, &[("nics.txt", "0")]);
        let out = vm
            .command("early", 0)
            .env(FAIL_AT, i.to_string())
            .output()
            .unwrap();
        // A write that fails is I/O, 74, at boot as from `vmcust apply`.
        assert_eq!(
            out.status.code(),
            Some(74),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let last = vm.final_state().unwrap();
        assert!(
            last.starts_with("deployPkg.update.state 4 100 "),
            "action {i}: {last}"
        );
        support::assert_same_tree(
            &before,
            &vm.state(),
            &format!("run with a failure at action {i}"),
        );
    }
}
