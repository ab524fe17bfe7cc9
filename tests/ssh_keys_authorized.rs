//! SSH keys into a user's `authorized_keys` on a real temp root: merge, modes, owner,
//! idempotence, and every way a symlink could redirect the write.

use std::fs;
use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
use std::path::Path;

use vmcust::test_api::apply::{apply, Change};
use vmcust::test_api::customize::wanted;
use vmcust::test_api::facts::Facts;
use vmcust::test_api::model::{Customization, Identity};
use vmcust::test_api::plan::{plan, PlanError, PlanOptions};
use vmcust::test_api::root::Root;
use vmcust::test_api::ssh_keys::SshKeyError;

const PASSWD: &str = "root:x:0:0:root:/root:/bin/bash\n\
                      alice:x:1000:1001:Alice:/home/alice:/bin/bash\n\
                      nohome:x:1002:1002::/home/nohome:/bin/sh\n";
/// Real keys, as `ssh-keygen` made them (the key is checked as sshd reads it).
const KEY_A: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPfAopM++X4aFtCYoHzeir/Q5hbp/2EQ5Kl363lyh+Si alice@laptop";
macro_rules! rsa_blob {
    () => {
        "AAAAB3NzaC1yc2EAAAADAQABAAAAgQDLg3pGsSkzQ98kF2lmmuJIsVjGO1gKVkPTsKfIowBJdjbvSm2urIvkY1NN8z0YPOeRLXkol/Ksl0scHITagJ4h9and1dXde+LPZoRGEPA4VFUDoKXCP5+iWxc9yhj/3UokWDWsvzrjVyGs8tJHDMs9NFPdOdD2p0F8M5HNdl9imQ=="
    };
}
const KEY_B: &str = concat!("ssh-rsa ", rsa_blob!(), " ops");

fn temp_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for d in ["etc", "root", "home/alice"] {
        fs::create_dir_all(dir.path().join(d)).unwrap();
    }
    fs::write(dir.path().join("etc/passwd"), PASSWD).unwrap();
    fs::write(dir.path().join("etc/shadow"), "root:*:1:0:99999:7:::\n").unwrap();
    dir
}

fn customization(user: Option<&str>, keys: &[&str]) -> Customization {
    Customization {
        identity: Identity {
            ssh_authorized_keys: keys
                .iter()
                .map(|k| vmcust::test_api::model::SshKey::parse(k).unwrap())
                .collect(),
            ssh_user: user.map(|u| vmcust::test_api::model::UserName::parse(u).unwrap()),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn plan_for(root: &Root, c: &Customization) -> Result<vmcust::test_api::plan::Plan, PlanError> {
    let facts = Facts::gather(root, &wanted(c)).unwrap();
    plan(c, &facts, &PlanOptions::default())
}

fn mode_owner(p: &Path) -> (u32, u32, u32) {
    let m = fs::symlink_metadata(p).unwrap();
    (m.mode() & 0o7777, m.uid(), m.gid())
}

/// One row: user, existing authorized_keys, keys asked for, resulting file.
type Row<'a> = (Option<&'a str>, Option<&'a str>, &'a [&'a str], String);

/// Each row: user, existing authorized_keys, keys asked for, resulting file.
#[test]
fn keys_are_merged_with_modes_and_owner() {
    let cases: [Row; 4] = [
        (None, None, &[KEY_A], format!("{KEY_A}\n")),
        (
            Some("alice"),
            Some(concat!("# mine\nno-pty ssh-rsa ", rsa_blob!(), " old")),
            &[KEY_B, KEY_A],
            format!("# mine\nno-pty ssh-rsa {} old\n{KEY_A}\n", rsa_blob!()),
        ),
        (
            Some("alice"),
            None,
            &[KEY_A, KEY_B, KEY_A],
            format!("{KEY_A}\n{KEY_B}\n"),
        ),
        (
            Some("root"),
            Some(&format!("{KEY_A}\n")),
            &[KEY_A],
            format!("{KEY_A}\n"),
        ),
    ];
    for (user, existing, keys, want) in cases {
        let dir = temp_root();
        let root = Root::new(dir.path()).unwrap();
        let (home, uid, gid) = match user {
            Some("alice") => ("home/alice", 1000, 1001),
            _ => ("root", 0, 0),
        };
        let ssh = dir.path().join(home).join(".ssh");
        if let Some(existing) = existing {
            fs::create_dir_all(&ssh).unwrap();
            fs::set_permissions(&ssh, fs::Permissions::from_mode(0o755)).unwrap();
            fs::write(ssh.join("authorized_keys"), existing).unwrap();
        }
        let c = customization(user, keys);
        let p = plan_for(&root, &c).unwrap();
        apply(&root, &p).unwrap();
        let file = ssh.join("authorized_keys");
        assert_eq!(fs::read_to_string(&file).unwrap(), want, "{user:?}");
        assert_eq!(mode_owner(&file), (0o600, uid, gid), "{user:?}");
        assert_eq!(mode_owner(&ssh), (0o700, uid, gid), "{user:?}");
        assert_eq!(
            apply(&root, &plan_for(&root, &c).unwrap()).unwrap(),
            [Change::Unchanged],
            "{user:?}: a second apply changes nothing"
        );
    }
}

#[test]
fn no_keys_no_action() {
    let dir = temp_root();
    let root = Root::new(dir.path()).unwrap();
    assert!(plan_for(&root, &customization(Some("ghost"), &[]))
        .unwrap()
        .actions
        .is_empty());
}

#[test]
fn bad_users_and_homes_are_clear_errors() {
    let cases = [
        ("ghost", "is not in /etc/passwd"),
        ("nohome", "does not exist"),
    ];
    for (user, needle) in cases {
        let dir = temp_root();
        let root = Root::new(dir.path()).unwrap();
        let err = plan_for(&root, &customization(Some(user), &[KEY_A])).unwrap_err();
        assert!(matches!(err, PlanError::SshKeys(_)), "{err:?}");
        assert!(err.to_string().contains(needle), "{err}");
    }
}

#[test]
fn a_symlinked_ssh_dir_is_refused() {
    let dir = temp_root();
    let root = Root::new(dir.path()).unwrap();
    fs::create_dir_all(dir.path().join("etc/ssh-target")).unwrap();
    symlink("/etc/ssh-target", dir.path().join("home/alice/.ssh")).unwrap();
    let err = plan_for(&root, &customization(Some("alice"), &[KEY_A])).unwrap_err();
    assert!(
        matches!(
            err,
            PlanError::SshKeys(SshKeyError::BadSshDir {
                what: "a symbolic link",
                ..
            })
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("/home/alice/.ssh"), "{err}");
    assert!(fs::read_dir(dir.path().join("etc/ssh-target"))
        .unwrap()
        .next()
        .is_none());
}

#[test]
fn a_symlinked_authorized_keys_is_replaced_not_read_or_followed() {
    let dir = temp_root();
    let root = Root::new(dir.path()).unwrap();
    let ssh = dir.path().join("home/alice/.ssh");
    fs::create_dir_all(&ssh).unwrap();
    symlink("/etc/shadow", ssh.join("authorized_keys")).unwrap();
    let p = plan_for(&root, &customization(Some("alice"), &[KEY_A])).unwrap();
    assert!(!format!("{p:?}").contains("root:*"), "shadow was read");
    apply(&root, &p).unwrap();
    let file = ssh.join("authorized_keys");
    assert!(!fs::symlink_metadata(&file)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(fs::read_to_string(&file).unwrap(), format!("{KEY_A}\n"));
    assert_eq!(
        fs::read_to_string(dir.path().join("etc/shadow")).unwrap(),
        "root:*:1:0:99999:7:::\n"
    );
}

#[test]
fn a_symlink_swapped_in_after_planning_is_refused_at_apply() {
    let dir = temp_root();
    let root = Root::new(dir.path()).unwrap();
    let p = plan_for(&root, &customization(Some("alice"), &[KEY_A])).unwrap();
    fs::create_dir_all(dir.path().join("etc/elsewhere")).unwrap();
    symlink("/etc/elsewhere", dir.path().join("home/alice/.ssh")).unwrap();
    let err = apply(&root, &p).unwrap_err();
    assert!(format!("{err:#}").contains("symbolic link"), "{err:#}");
    assert!(!dir.path().join("etc/elsewhere/authorized_keys").exists());
}
