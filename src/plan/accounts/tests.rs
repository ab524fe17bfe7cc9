//! Planner tests on in-memory facts: cloud-init's rules for existing users, locking, ids
//! and errors.

use super::request::{PasswordHash, UserEntry};
use super::*;
use crate::facts::accounts::{DbFile, Salt, SALT_LEN};
use crate::model::UserName;

fn db(text: &str) -> Option<DbFile> {
    Some(DbFile {
        contents: text.as_bytes().to_vec(),
        mode: 0o644,
    })
}

fn facts() -> AccountDbFacts {
    AccountDbFacts {
        passwd: db("root:x:0:0:root:/root:/bin/bash\nold:x:1000:1000::/home/old:/bin/sh\n"),
        shadow: db("root:*:1:0:99999:7:::\nold:$6$x$y:1:0:99999:7:::\n"),
        group: db("root:x:0:\nold:x:1000:\nsudo:x:27:\ntaken:x:1001:\n"),
        gshadow: db("root:*::\nold:!::\nsudo:*::\ntaken:!::\n"),
        entropy: vec![Salt([3; SALT_LEN]); 4],
        today: 20_000,
        ..Default::default()
    }
}

fn user(name: &str) -> UserRequest {
    UserRequest::named(UserName::parse(name).unwrap())
}

fn req(users: Vec<UserRequest>) -> AccountsRequest {
    AccountsRequest {
        users: users
            .into_iter()
            .map(|u| UserEntry::User(Box::new(u)))
            .collect(),
        ..Default::default()
    }
}

fn file(plan: &AccountsPlan, path: &str) -> Option<String> {
    plan.actions.iter().find_map(|a| match a {
        Action::WriteFile {
            path: p, contents, ..
        } if p == Path::new(path) => Some(String::from_utf8(contents.bytes().to_vec()).unwrap()),
        _ => None,
    })
}

fn shadow_field(plan: &AccountsPlan, name: &str) -> String {
    file(plan, SHADOW)
        .unwrap()
        .lines()
        .find(|l| l.starts_with(&format!("{name}:")))
        .unwrap()
        .split(':')
        .nth(1)
        .unwrap()
        .to_string()
}

#[test]
fn an_existing_user_is_not_recreated_but_gets_its_lock() {
    let mut u = user("old");
    u.groups = vec![request::GroupName::parse("sudo").unwrap()];
    let plan = plan_accounts(&req(vec![u]), &facts()).unwrap();
    assert!(file(&plan, PASSWD).is_none());
    // cloud-init skips useradd (and so the groups) for an existing user.
    assert!(file(&plan, GROUP).is_none());
    assert_eq!(shadow_field(&plan, "old"), "!$6$x$y");
    assert!(plan.notes.iter().any(|n| n.contains("exists already")));
}

#[test]
fn lock_and_unlock_as_passwd_does() {
    // (new user?, lock_passwd, hashed_passwd, resulting field)
    let table: &[(&str, bool, Option<&str>, &str)] = &[
        ("new", true, None, "!"),
        ("new", false, None, "!"),
        ("new", true, Some("$6$a$b"), "!$6$a$b"),
        ("new", false, Some("$6$a$b"), "$6$a$b"),
        ("old", false, None, "$6$x$y"),
        ("old", true, Some("$6$a$b"), "!$6$a$b"),
    ];
    for (name, lock, hash, want) in table {
        let mut u = user(name);
        u.lock_passwd = *lock;
        u.hashed_passwd = hash.map(|h| PasswordHash::parse(h.into()).unwrap());
        let plan = plan_accounts(&req(vec![u]), &facts()).unwrap();
        let got = file(&plan, SHADOW)
            .map(|_| shadow_field(&plan, name))
            .unwrap_or_else(|| "$6$x$y".into());
        assert_eq!(got, *want, "{name} lock={lock} hash={hash:?}");
    }
}

#[test]
fn plain_passwords_are_hashed_and_kept_when_they_verify() {
    let mut u = user("old");
    u.plain_text_passwd = Some(Secret::new("pw-1".into()));
    u.lock_passwd = false;
    let first = plan_accounts(&req(vec![u.clone()]), &facts()).unwrap();
    let hash = shadow_field(&first, "old");
    assert!(verifies("pw-1", &hash), "{hash}");
    assert!(!format!("{first:?}").contains(&hash));
    let mut again = facts();
    again.shadow = db(&file(&first, SHADOW).unwrap());
    again.entropy = vec![Salt([9; SALT_LEN]); 4];
    let second = plan_accounts(&req(vec![u]), &again).unwrap();
    assert!(file(&second, SHADOW).is_none());
}

#[test]
fn conflicts_are_clear_errors() {
    let mut u = user("new");
    u.uid = Some(1000);
    assert!(matches!(
        plan_accounts(&req(vec![u]), &facts()),
        Err(AccountsError::UidTaken { uid: 1000, .. })
    ));
    assert!(matches!(
        plan_accounts(&req(vec![user("taken")]), &facts()),
        Err(AccountsError::GroupExists { .. })
    ));
    let mut u = user("new");
    u.groups = vec![request::GroupName::parse("nosuch").unwrap()];
    u.create_groups = false;
    assert!(matches!(
        plan_accounts(&req(vec![u]), &facts()),
        Err(AccountsError::NoSuchGroup { .. })
    ));
    let mut f = facts();
    f.shadow = None;
    assert!(matches!(
        plan_accounts(&req(vec![user("new")]), &f),
        Err(AccountsError::MissingFile { path: SHADOW, .. })
    ));
}

#[test]
fn new_user_gets_next_ids_and_its_group() {
    let plan = plan_accounts(&req(vec![user("new")]), &facts()).unwrap();
    assert!(file(&plan, PASSWD)
        .unwrap()
        .ends_with("new:x:1001:1002::/home/new:\n"));
    assert!(file(&plan, GROUP).unwrap().ends_with("new:x:1002:\n"));
    assert!(file(&plan, SHADOW)
        .unwrap()
        .ends_with("new:!:20000::::::\n"));
}

/// Top-level keys go to the default user, which is created after the named ones (the
/// parity harness found them written to the first named user instead).
#[test]
fn top_level_keys_go_to_the_default_user_created_last() {
    let key = crate::model::SshKey::parse(
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f top",
    )
    .unwrap();
    let mut r = req(vec![user("zed")]);
    r.users.insert(0, UserEntry::Default);
    r.ssh_authorized_keys = vec![key];
    let mut f = facts();
    f.os_release = Some("ID=debian\n".into());
    f.homes.insert(
        "/root".into(),
        crate::facts::accounts::HomeFacts {
            home: crate::facts::accounts::PathState::Dir,
            ssh_dir: crate::facts::accounts::PathState::Missing,
            keys_file: crate::facts::accounts::PathState::Missing,
            keys: None,
        },
    );
    let plan = plan_accounts(&r, &f).unwrap();
    let keys_of: Vec<String> = plan
        .actions
        .iter()
        .filter_map(|a| match a {
            Action::WriteFile {
                path,
                owner: FileOwner::InUserDir { .. },
                ..
            } => Some(path.display().to_string()),
            _ => None,
        })
        .collect();
    assert!(
        keys_of.contains(&"/home/debian/.ssh/authorized_keys".to_string()),
        "{keys_of:?}"
    );
    assert!(
        !keys_of.iter().any(|p| p.contains("/home/zed/")),
        "{keys_of:?}"
    );
    let passwd = file(&plan, PASSWD).unwrap();
    let zed = passwd.find("\nzed:").unwrap();
    let debian = passwd.find("\ndebian:").unwrap();
    assert!(zed < debian, "{passwd}");
}

/// The top-level `password` is the default user's, wherever `default` stands in `users`
/// (it went to the user at `default`'s index in the resolved list, a named user).
#[test]
fn top_level_password_goes_to_the_default_user() {
    for users in [
        vec![UserEntry::Default, UserEntry::User(Box::new(user("zed")))],
        vec![UserEntry::User(Box::new(user("zed"))), UserEntry::Default],
    ] {
        let r = AccountsRequest {
            users,
            password: Some(Secret::new("pw-top".into())),
            ..Default::default()
        };
        let mut f = facts();
        f.os_release = Some("ID=debian\n".into());
        let plan = plan_accounts(&r, &f).unwrap();
        assert!(verifies("pw-top", &shadow_field(&plan, "debian")));
        assert_eq!(shadow_field(&plan, "zed"), "!");
    }
}

/// `user:` renames the default user: one user made, with the distro's groups, and the
/// top-level password is its.
#[test]
fn user_key_renames_the_default_user() {
    let mut admin = user("admin");
    admin.given = vec!["name"];
    let r = AccountsRequest {
        user: Some(Box::new(admin)),
        users: vec![UserEntry::User(Box::new(user("zed")))],
        password: Some(Secret::new("pw-top".into())),
        ..Default::default()
    };
    let mut f = facts();
    f.os_release = Some("ID=debian\n".into());
    let plan = plan_accounts(&r, &f).unwrap();
    let passwd = file(&plan, PASSWD).unwrap();
    assert!(passwd.contains("\nadmin:x:") && passwd.contains("\nzed:x:"));
    assert!(!passwd.contains("\ndebian:"), "{passwd}");
    assert!(file(&plan, GROUP).unwrap().contains("sudo:x:27:admin\n"));
    assert!(verifies("pw-top", &shadow_field(&plan, "admin")));
}

/// A `chpasswd` user that does not exist is reported, not a refusal: the other entries
/// are set.
#[test]
fn chpasswd_for_a_missing_user_is_reported_and_the_rest_set() {
    use request::{Chpasswd, ChpasswdEntry, NewPassword};
    let entry = |name: &str, pw: &str| ChpasswdEntry {
        user: UserName::parse(name).unwrap(),
        password: NewPassword::Text(Secret::new(pw.into())),
    };
    let r = AccountsRequest {
        users: vec![],
        chpasswd: Some(Chpasswd {
            expire: false,
            entries: vec![entry("ghost", "pw-ghost"), entry("old", "pw-old")],
        }),
        ..Default::default()
    };
    let plan = plan_accounts(&r, &facts()).unwrap();
    assert!(verifies("pw-old", &shadow_field(&plan, "old")));
    assert_eq!(plan.not_applied.len(), 1, "{:?}", plan.not_applied);
    assert!(plan.not_applied[0].starts_with("chpasswd[0]: user ghost does not exist"));
    assert!(!plan.not_applied[0].contains("pw-ghost"));
}

/// A home whose directories above it are missing gets them made first, root's, 0755, as
/// useradd does (the parity harness found `homedir: /local/testdir`, from cloud-init's own
/// example, failing the whole customization); a directory that exists is left alone.
#[test]
fn missing_directories_above_a_home_are_made_first() {
    use crate::facts::accounts::{HomeFacts, PathState};
    let state = |home| HomeFacts {
        home,
        ssh_dir: PathState::Missing,
        keys_file: PathState::Missing,
        keys: None,
    };
    let mut f = facts();
    for (p, s) in [
        ("/local", PathState::Missing),
        ("/local/testdir", PathState::Missing),
        ("/srv", PathState::Dir),
        ("/srv/x", PathState::Missing),
        ("/srv/x/y", PathState::Missing),
    ] {
        f.homes.insert(p.into(), state(s));
    }
    let mut a = user("a");
    a.homedir = Some(request::AbsPath::parse("/local/testdir", "homedir").unwrap());
    let mut b = user("b");
    b.homedir = Some(request::AbsPath::parse("/srv/x/y", "homedir").unwrap());
    let plan = plan_accounts(&req(vec![a, b]), &f).unwrap();
    let dirs: Vec<(String, u32, u32)> = plan
        .actions
        .iter()
        .filter_map(|a| match a {
            Action::MakeDir {
                path, mode, uid, ..
            } => Some((path.display().to_string(), *mode, *uid)),
            _ => None,
        })
        .collect();
    assert_eq!(
        dirs,
        [
            ("/local".to_string(), 0o755, 0),
            ("/local/testdir".to_string(), 0o755, 1001),
            ("/srv/x".to_string(), 0o755, 0),
            ("/srv/x/y".to_string(), 0o755, 1002),
        ],
        "{:?}",
        plan.actions
    );
}
