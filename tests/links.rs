//! No write as root follows a link another user could have placed, anywhere in its path
//! (docs/security.md, "Links"): a user who owns a home directory plants `~/.ssh ->
//! /root/.ssh` or `~/cfg -> /etc`, and `write_files`, the accounts' `authorized_keys`
//! writer and every other writer refuse the path with an error naming it and the link,
//! while root-owned system links (`/var/run -> /run`, `/etc/resolv.conf -> ../run/...`)
//! go on working.

mod support;

use std::fs;
use std::os::unix::fs::{lchown, symlink, MetadataExt};
use std::path::Path;
use std::sync::atomic::AtomicBool;

use vmcust::test_api::apply::apply;
use vmcust::test_api::cc_apply::{run_early, ModuleOutcome, ModuleReport, StageContext};
use vmcust::test_api::document;
use vmcust::test_api::model::InstanceId;
use vmcust::test_api::plan::Plan;
use vmcust::test_api::root::{FileOwner, Root};
use vmcust::test_api::{accounts, parse::parse_accounts};

const ROOT_KEYS: &str = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIrootkey root@admin\n";
const KEY: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPs3b8YwS1Qm1K0pSXv4fXyEQeJWlGm0iC5cWzpV2m2l alice@laptop";

/// A scratch root with alice (uid 1000) owning `/home/alice`, root's own
/// `authorized_keys`, and `/etc/profile.d`.
fn scratch() -> tempfile::TempDir {
    support::require_root("chowning a scratch home to another user");
    let d = tempfile::tempdir().unwrap();
    support::install_shell(d.path());
    let p = d.path();
    for dir in ["etc/profile.d", "root/.ssh", "home/alice", "run"] {
        fs::create_dir_all(p.join(dir)).unwrap();
    }
    fs::write(
        p.join("etc/passwd"),
        "root:x:0:0:root:/root:/bin/sh\nalice:x:1000:1000::/home/alice:/bin/sh\n\
         bob:x:1001:1001::/home/alice/sub/root:/bin/sh\n",
    )
    .unwrap();
    fs::write(
        p.join("etc/group"),
        "root:x:0:\nalice:x:1000:\nbob:x:1001:\n",
    )
    .unwrap();
    fs::write(
        p.join("etc/shadow"),
        "root:*:1::::::\nalice:*:1::::::\nbob:*:1::::::\n",
    )
    .unwrap();
    fs::write(p.join("etc/gshadow"), "root:*::\nalice:!::\nbob:!::\n").unwrap();
    fs::write(p.join("etc/os-release"), "ID=debian\n").unwrap();
    fs::write(p.join("root/.ssh/authorized_keys"), ROOT_KEYS).unwrap();
    std::os::unix::fs::chown(p.join("home/alice"), Some(1000), Some(1000)).unwrap();
    d
}

/// A link alice planted: made by her, so hers.
fn plant(root: &Path, at: &str, target: &str) {
    let link = root.join(at.trim_start_matches('/'));
    symlink(target, &link).unwrap();
    lchown(&link, Some(1000), Some(1000)).unwrap();
}

fn write_files(dir: &Path, doc: &str) -> Vec<ModuleReport> {
    let (cfg, problems) = document::from_text(doc);
    assert!(problems.is_empty(), "{problems:?}");
    let stop = AtomicBool::new(false);
    let ctx = StageContext::new(
        Root::new(dir).unwrap(),
        InstanceId::parse("i-links").unwrap(),
        "b".into(),
        &stop,
    );
    run_early(&ctx, &cfg)
}

fn failure(reports: &[ModuleReport], module: &str) -> String {
    let r = reports.iter().find(|r| r.module == module).unwrap();
    match &r.outcome {
        ModuleOutcome::Failed { why } => why.clone(),
        other => panic!("{module} did not fail: {other:?}"),
    }
}

fn root_keys_untouched(p: &Path) {
    let keys = p.join("root/.ssh/authorized_keys");
    assert_eq!(fs::read_to_string(&keys).unwrap(), ROOT_KEYS);
    let m = fs::metadata(&keys).unwrap();
    assert_eq!((m.uid(), m.gid()), (0, 0), "root's keys were handed over");
}

/// `~/.ssh -> /root/.ssh` and `~/cfg -> /etc`: each `write_files` entry is refused with
/// the path and the link named, and nothing is written where the links point.
#[test]
fn write_files_through_a_users_link_is_refused() {
    let table: &[(&str, &str, &str, &str)] = &[
        // (link, its target, entry, what must stay untouched)
        (
            "/home/alice/.ssh",
            "/root/.ssh",
            "{path: /home/alice/.ssh/authorized_keys, owner: 'alice:alice', content: mine}",
            "root/.ssh/authorized_keys",
        ),
        (
            "/home/alice/cfg",
            "/etc",
            "{path: /home/alice/cfg/profile.d/x.sh, owner: alice, content: 'echo owned'}",
            "etc/profile.d/x.sh",
        ),
        // A relative link is hers as much.
        (
            "/home/alice/up",
            "../../etc",
            "{path: /home/alice/up/profile.d/y.sh, content: x}",
            "etc/profile.d/y.sh",
        ),
    ];
    for (link, target, entry, victim) in table {
        let d = scratch();
        plant(d.path(), link, target);
        let reports = write_files(d.path(), &format!("write_files:\n- {entry}\n"));
        let why = failure(&reports, "write_files");
        assert!(why.contains(link) && why.contains("symbolic link"), "{why}");
        assert!(why.contains("owned by uid 1000"), "{why}");
        root_keys_untouched(d.path());
        if *victim != "root/.ssh/authorized_keys" {
            assert!(!d.path().join(victim).exists(), "{victim} was written");
        }
    }
}

/// The accounts' `authorized_keys` writer for a user's `ssh_authorized_keys`: bob's home
/// lies under alice's, where she has planted `sub -> /`, so that it reads as `/root`.
#[test]
fn a_users_keys_are_not_written_through_a_link_above_their_home() {
    let d = scratch();
    plant(d.path(), "/home/alice/sub", "/");
    let serde_norway::Value::Mapping(m) = serde_norway::from_str(&format!(
        "users:\n- name: bob\n  ssh_authorized_keys: ['{KEY}']\n"
    ))
    .unwrap() else {
        panic!()
    };
    let req = parse_accounts("user-data", &m).unwrap();
    let root = Root::new(d.path()).unwrap();
    let facts = accounts::gather(&root, &req).unwrap();
    let plan = Plan {
        actions: accounts::plan_accounts(&req, &facts).unwrap().actions,
    };
    let err = format!("{:#}", apply(&root, &plan).unwrap_err());
    assert!(
        err.contains("/home/alice/sub ") && err.contains("symbolic link"),
        "{err}"
    );
    root_keys_untouched(d.path());
    // All or nothing: the account files are as they were.
    assert!(!fs::read_to_string(d.path().join("etc/shadow"))
        .unwrap()
        .contains("bob:!"));
}

/// Every writer of `Root` keeps the rule, not only the ones above.
#[test]
fn every_root_writer_refuses_a_users_link_in_the_path() {
    let d = scratch();
    plant(d.path(), "/home/alice/cfg", "/etc");
    let root = Root::new(d.path()).unwrap();
    let p = |s: &str| Path::new(s).to_path_buf();
    let attempts: Vec<(&str, std::io::Result<()>)> = vec![
        (
            "write_file",
            root.write_file(&p("/home/alice/cfg/hosts"), b"x", 0o644),
        ),
        (
            "write, chowned",
            root.write(
                &p("/home/alice/cfg/a"),
                b"x",
                0o644,
                FileOwner::Chown {
                    uid: 1000,
                    gid: 1000,
                },
            ),
        ),
        (
            "write, in a user's directory",
            root.write(
                &p("/home/alice/cfg/b/k"),
                b"x",
                0o600,
                FileOwner::InUserDir {
                    uid: 1000,
                    gid: 1000,
                    dir_mode: 0o700,
                },
            ),
        ),
        (
            "make_dir",
            root.make_dir(&p("/home/alice/cfg/c"), 0o700, (1000, 1000)),
        ),
        (
            "symlink",
            root.symlink(&p("/home/alice/cfg/d"), Path::new("/x")),
        ),
        (
            "remove_file",
            root.remove_file(&p("/home/alice/cfg/passwd")),
        ),
        (
            "rename from",
            root.rename(&p("/home/alice/cfg/passwd"), &p("/tmp/p")),
        ),
        (
            "rename to",
            root.rename(&p("/root/.ssh/authorized_keys"), &p("/home/alice/cfg/k")),
        ),
    ];
    for (what, result) in attempts {
        let e = result.expect_err(what).to_string();
        assert!(
            e.contains("/home/alice/cfg") && e.contains("symbolic link"),
            "{what}: {e}"
        );
    }
    let mut etc: Vec<_> = fs::read_dir(d.path().join("etc"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    etc.sort();
    assert_eq!(
        etc,
        [
            "group",
            "gshadow",
            "os-release",
            "passwd",
            "profile.d",
            "shadow"
        ]
    );
    root_keys_untouched(d.path());
}

/// Root-owned system links are followed (`/var/run -> /run`) or, as the last component,
/// replaced (`/etc/resolv.conf`), as before; so is a root-owned link in a sticky directory.
#[test]
fn root_owned_system_links_still_work() {
    let d = scratch();
    let p = d.path();
    fs::create_dir_all(p.join("var")).unwrap();
    fs::create_dir_all(p.join("run/systemd/resolve")).unwrap();
    fs::write(
        p.join("run/systemd/resolve/stub-resolv.conf"),
        "nameserver 127.0.0.53\n",
    )
    .unwrap();
    symlink("/run", p.join("var/run")).unwrap();
    symlink(
        "../run/systemd/resolve/stub-resolv.conf",
        p.join("etc/resolv.conf"),
    )
    .unwrap();
    fs::create_dir_all(p.join("tmp")).unwrap();
    fs::set_permissions(
        p.join("tmp"),
        std::os::unix::fs::PermissionsExt::from_mode(0o1777),
    )
    .unwrap();
    symlink("/run", p.join("tmp/r")).unwrap();
    let reports = write_files(
        p,
        "write_files:\n- {path: /var/run/app/pid, content: '1'}\n\
         - {path: /etc/resolv.conf, content: \"nameserver 10.0.0.1\\n\"}\n\
         - {path: /tmp/r/s, content: s}\n",
    );
    let r = reports.iter().find(|r| r.module == "write_files").unwrap();
    assert!(
        matches!(r.outcome, ModuleOutcome::Ran { .. }),
        "{reports:?}"
    );
    assert_eq!(fs::read_to_string(p.join("run/app/pid")).unwrap(), "1");
    assert_eq!(fs::read_to_string(p.join("run/s")).unwrap(), "s");
    assert_eq!(
        fs::read_to_string(p.join("etc/resolv.conf")).unwrap(),
        "nameserver 10.0.0.1\n"
    );
    // A root-owned link in a directory others may write to and that is not sticky is
    // not one to follow: anyone could have swapped it.
    fs::create_dir_all(p.join("srv/open")).unwrap();
    fs::set_permissions(
        p.join("srv/open"),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    symlink("/etc", p.join("srv/open/e")).unwrap();
    let e = Root::new(p)
        .unwrap()
        .write_file(Path::new("/srv/open/e/x"), b"x", 0o644)
        .unwrap_err();
    assert!(e.to_string().contains("others may write to"), "{e}");
}
