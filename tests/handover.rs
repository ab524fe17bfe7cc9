//! A hand-over that cannot be used is answered, moved aside and not retried (issue 16
//! item 6). Threat: a local user plants `/var/run/vmware-imc/cust.cfg` (or the directory)
//! to have root apply their spec, or a broken one makes vCenter wait for its timeout and
//! `vmcust-imc.path` restart the unit on every boot.

mod support;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use support::{text, vm::Vm};

const NOBODY: u32 = 65534;

fn chown(path: &Path, uid: u32) {
    std::os::unix::fs::lchown(path, Some(uid), Some(uid)).unwrap();
}

/// Each bad shape: its name, how to make it in the hand-over directory, and what the
/// reason must say.
type Shape = (&'static str, fn(&Path), &'static str);

fn shapes() -> Vec<Shape> {
    vec![
        (
            "cust.cfg is a directory",
            |d| fs::create_dir(d.join("cust.cfg")).unwrap(),
            "is a directory, not a regular file",
        ),
        (
            "cust.cfg is a FIFO",
            |d| {
                let c = std::ffi::CString::new(
                    d.join("cust.cfg").into_os_string().into_encoded_bytes(),
                )
                .unwrap();
                // SAFETY: a valid C string.
                assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            },
            "is a FIFO, not a regular file",
        ),
        (
            "cust.cfg is a symlink",
            |d| {
                fs::write(d.join("real.cfg"), "[NETWORK]\nHOSTNAME = evil\n").unwrap();
                std::os::unix::fs::symlink("real.cfg", d.join("cust.cfg")).unwrap();
            },
            "is a symbolic link, not a regular file",
        ),
        (
            "cust.cfg over the cap",
            |d| {
                let big = format!("[NETWORK]\nHOSTNAME = big\n#{}\n", "x".repeat(1024 * 1024));
                fs::write(d.join("cust.cfg"), big).unwrap();
            },
            "over the cap of 1048576 bytes",
        ),
        (
            "cust.cfg not owned by root",
            |d| {
                fs::write(d.join("cust.cfg"), "[NETWORK]\nHOSTNAME = evil\n").unwrap();
                chown(&d.join("cust.cfg"), NOBODY);
            },
            "is owned by uid 65534, not root",
        ),
        (
            "hand-over directory world-writable",
            |d| {
                fs::write(d.join("cust.cfg"), "[NETWORK]\nHOSTNAME = evil\n").unwrap();
                fs::set_permissions(d, fs::Permissions::from_mode(0o1777)).unwrap();
            },
            "has mode 1777: group or others may write it",
        ),
        (
            "hand-over directory group-writable",
            |d| {
                fs::write(d.join("cust.cfg"), "[NETWORK]\nHOSTNAME = evil\n").unwrap();
                fs::set_permissions(d, fs::Permissions::from_mode(0o770)).unwrap();
            },
            "has mode 770: group or others may write it",
        ),
        (
            "hand-over directory owned by a user",
            |d| {
                fs::write(d.join("cust.cfg"), "[NETWORK]\nHOSTNAME = evil\n").unwrap();
                chown(d, NOBODY);
            },
            "/var/run/vmware-imc is owned by uid 65534, not root",
        ),
        (
            "hand-over directory a symlink",
            |d| {
                let elsewhere = d.parent().unwrap().join("elsewhere");
                fs::create_dir(&elsewhere).unwrap();
                fs::write(elsewhere.join("cust.cfg"), "[NETWORK]\nHOSTNAME = evil\n").unwrap();
                fs::remove_dir(d).unwrap();
                std::os::unix::fs::symlink("elsewhere", d).unwrap();
            },
            "/var/run/vmware-imc is a symbolic link, not a directory",
        ),
    ]
}

// threat T1 (docs/security.md)
#[test]
fn every_bad_hand_over_is_refused_answered_moved_aside_and_not_retried() {
    for (name, make, says) in shapes() {
        let vm = Vm::new();
        let dir = vm.path("/var/run/vmware-imc");
        fs::create_dir_all(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        // Before the shape is made: a snapshot would block reading a FIFO.
        let before = vm.state();
        make(&dir);
        let out = vm.run("early");
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(65), "{name}: {err}");
        assert!(
            err.contains("refusing the hand-over") && err.contains(says),
            "{name}: {err}"
        );
        let states: Vec<String> = vm
            .rpcs()
            .into_iter()
            .filter(|r| r.starts_with("deployPkg.update.state"))
            .collect();
        assert_eq!(states.len(), 1, "{name}: {states:?}");
        assert!(
            states[0].starts_with(
                "deployPkg.update.state 4 100 /var/log/vmcust.log@refusing the hand-over"
            ) && states[0].contains(says),
            "{name}: {states:?}"
        );
        // Nothing applied, nothing left where the path unit looks.
        let mut after = vm.state();
        after.retain(|p, _| !p.starts_with("var/run"));
        let mut before = before;
        before.retain(|p, _| !p.starts_with("var/run"));
        support::assert_same_tree(&before, &after, name);
        assert!(
            fs::symlink_metadata(&dir).is_err(),
            "{name}: the hand-over is still there"
        );
        assert_eq!(
            fs::read_to_string(vm.path("/etc/hostname")).unwrap(),
            "template\n",
            "{name}"
        );
        // Moved aside, with the reason, private.
        let refused = vm.path("/var/lib/vmcust/refused");
        let entries: Vec<_> = fs::read_dir(&refused).unwrap().flatten().collect();
        assert_eq!(entries.len(), 1, "{name}");
        let reason = fs::read_to_string(entries[0].path().join("reason")).unwrap();
        assert!(reason.contains(says), "{name}: {reason}");
        assert_eq!(
            fs::metadata(&refused).unwrap().permissions().mode() & 0o777,
            0o700
        );
        // The status says why.
        let status = fs::read_to_string(vm.path("/run/vmcust/status.json")).unwrap();
        assert!(
            status.contains("refusing the hand-over"),
            "{name}: {status}"
        );
        // Not retried: the next boot has nothing to do and says nothing to the host.
        let again = vm.run("early");
        assert_eq!(
            again.status.code(),
            Some(0),
            "{name}: {}",
            text(&again.stderr)
        );
        let states_again = vm
            .rpcs()
            .into_iter()
            .filter(|r| r.starts_with("deployPkg.update.state"))
            .count();
        assert_eq!(states_again, 1, "{name}: {:?}", vm.rpcs());
    }
}

/// Only the newest few refused hand-overs are kept.
// threat T1 (docs/security.md)
#[test]
fn refused_hand_overs_are_bounded() {
    let vm = Vm::new();
    for _ in 0..8 {
        let dir = vm.path("/var/run/vmware-imc");
        fs::create_dir_all(dir.join("cust.cfg")).unwrap();
        assert_eq!(vm.run("early").status.code(), Some(65));
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let kept = fs::read_dir(vm.path("/var/lib/vmcust/refused"))
        .unwrap()
        .count();
    assert_eq!(kept, vmcust::test_api::boot_state::MAX_REFUSED);
}
