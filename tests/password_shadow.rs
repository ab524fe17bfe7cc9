//! Root password through the whole engine: facts from a real temp root, plan, apply, and
//! `vmcust plan`/`apply` on the command line. Every test checks that neither the plaintext
//! nor its base64 shows up anywhere a person or a log could see it.

mod support;

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;

use sha_crypt::{PasswordVerifier, ShaCrypt};
use vmcust::test_api::apply::{apply, Change};
use vmcust::test_api::customize::wanted;
use vmcust::test_api::facts::Facts;
use vmcust::test_api::model::{Customization, Identity, RootPassword, Secret};
use vmcust::test_api::plan::{plan, PlanError, PlanOptions};
use vmcust::test_api::root::Root;

const PLAIN: &str = "Vmw@re-2026!";
const B64: &str = "Vm13QHJlLTIwMjYh";
const PASSWD: &str = "root:x:0:0:root:/root:/bin/bash\n\
                      daemon:x:1:1::/usr/sbin:/usr/sbin/nologin\n\
                      toor:x:0:0::/root:/bin/sh\n";
const SHADOW: &str = "root:*:19000:0:99999:7:::\n\
                      daemon:*:19000:0:99999:7:::\n\
                      toor:!:19000:0:99999:7:::\n";

fn temp_root(shadow: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("etc")).unwrap();
    fs::write(dir.path().join("etc/passwd"), PASSWD).unwrap();
    if let Some(shadow) = shadow {
        let p = dir.path().join("etc/shadow");
        fs::write(&p, shadow).unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o640)).unwrap();
    }
    dir
}

fn customization(password: Option<&str>, expire: bool) -> Customization {
    Customization {
        identity: Identity {
            root_password: Some(RootPassword {
                password: password.map(|p| Secret::new(p.into())),
                expire,
            }),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn assert_no_secret(what: &str, text: &str) {
    for s in [PLAIN, B64] {
        assert!(!text.contains(s), "{what} leaks the password: {text}");
    }
}

fn fields(line: &str) -> Vec<String> {
    line.split(':').map(str::to_string).collect()
}

/// Each row: password, RESET, and what root's and toor's lastchg must become ("today" for
/// the current day); daemon's line never changes.
#[test]
fn shadow_rows() {
    let today = (std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        / 86_400)
        .to_string();
    let cases: [(Option<&str>, bool, &str, &str); 3] = [
        (Some(PLAIN), false, "today", "19000"),
        (Some(PLAIN), true, "0", "0"),
        (None, true, "0", "0"),
    ];
    for (password, expire, root_lastchg, toor_lastchg) in cases {
        let dir = temp_root(Some(SHADOW));
        let root = Root::new(dir.path()).unwrap();
        let c = customization(password, expire);
        let facts = Facts::gather(&root, &wanted(&c)).unwrap();
        let p = plan(&c, &facts, &PlanOptions::default()).unwrap();
        assert_no_secret("plan debug", &format!("{p:?}"));
        assert_no_secret("plan json", &serde_json::to_string(&p).unwrap());
        assert_eq!(apply(&root, &p).unwrap(), [Change::Updated]);

        let text = fs::read_to_string(dir.path().join("etc/shadow")).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let (r, d, t) = (fields(lines[0]), lines[1], fields(lines[2]));
        let want_root = if root_lastchg == "today" {
            &today
        } else {
            root_lastchg
        };
        assert_eq!(r[2], *want_root, "{password:?} {expire}");
        assert_eq!(t[2], toor_lastchg);
        assert_eq!(d, "daemon:*:19000:0:99999:7:::");
        assert_eq!(t[1], "!", "toor's hash is not touched");
        match password {
            Some(pw) => {
                assert!(r[1].starts_with("$6$"), "{}", r[1]);
                ShaCrypt::SHA512
                    .verify_password(pw.as_bytes(), r[1].as_str())
                    .expect("root's new hash verifies");
            }
            None => assert_eq!(r[1], "*"),
        }
        assert_eq!(r[3..], fields(SHADOW.lines().next().unwrap())[3..]);
        let meta = fs::metadata(dir.path().join("etc/shadow")).unwrap();
        assert_eq!(meta.mode() & 0o7777, 0o640, "mode kept");

        // Idempotent: the hash verifies, so the second plan keeps it and nothing changes.
        let facts = Facts::gather(&root, &wanted(&c)).unwrap();
        let again = plan(&c, &facts, &PlanOptions::default()).unwrap();
        assert_eq!(apply(&root, &again).unwrap(), [Change::Unchanged]);
    }
}

#[test]
fn hash_matches_what_openssl_computes_for_the_same_salt() {
    support::require_tool("openssl", "openssl");
    let dir = temp_root(Some(SHADOW));
    let root = Root::new(dir.path()).unwrap();
    let c = customization(Some(PLAIN), false);
    let facts = Facts::gather(&root, &wanted(&c)).unwrap();
    apply(&root, &plan(&c, &facts, &PlanOptions::default()).unwrap()).unwrap();
    let text = fs::read_to_string(dir.path().join("etc/shadow")).unwrap();
    let hash = fields(text.lines().next().unwrap())[1].clone();
    // $6$rounds=5000$<salt>$<digest>; 5000 is the default, which openssl leaves out.
    let parts: Vec<&str> = hash.split('$').collect();
    assert_eq!(parts[2], "rounds=5000");
    let out = Command::new("openssl")
        .args(["passwd", "-6", "-salt", parts[3], PLAIN])
        .output()
        .unwrap();
    let want = format!("$6${}${}", parts[3], parts[4]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), want);
}

#[test]
fn owner_is_kept() {
    let dir = temp_root(Some(SHADOW));
    let p = dir.path().join("etc/shadow");
    support::require_root("giving /etc/shadow to group 42");
    std::os::unix::fs::chown(&p, Some(0), Some(42)).unwrap();
    let root = Root::new(dir.path()).unwrap();
    let c = customization(Some(PLAIN), true);
    let facts = Facts::gather(&root, &wanted(&c)).unwrap();
    apply(&root, &plan(&c, &facts, &PlanOptions::default()).unwrap()).unwrap();
    assert_eq!(fs::metadata(&p).unwrap().gid(), 42);
}

#[test]
fn missing_shadow_or_root_entry_is_a_clear_error() {
    let cases: [(Option<&str>, &str); 2] = [
        (None, "/etc/shadow does not exist in the target root"),
        (
            Some("daemon:*:1:0:99999:7:::\n"),
            "/etc/shadow in the target root has no entry for root",
        ),
    ];
    for (shadow, needle) in cases {
        let dir = temp_root(shadow);
        let root = Root::new(dir.path()).unwrap();
        let c = customization(Some(PLAIN), false);
        let facts = Facts::gather(&root, &wanted(&c)).unwrap();
        let err = plan(&c, &facts, &PlanOptions::default()).unwrap_err();
        assert!(
            matches!(
                err,
                PlanError::MissingAccountFile { .. } | PlanError::NoRootInShadow { .. }
            ),
            "{err:?}"
        );
        assert!(err.to_string().contains(needle), "{err}");
        assert_no_secret("error", &format!("{err} {err:?}"));
    }
}

#[test]
fn no_password_means_shadow_is_not_even_read() {
    let dir = temp_root(None);
    let root = Root::new(dir.path()).unwrap();
    let c = Customization::default();
    let facts = Facts::gather(&root, &wanted(&c)).unwrap();
    assert!(facts.accounts.shadow.is_none() && facts.accounts.salt.is_none());
    assert!(plan(&c, &facts, &PlanOptions::default())
        .unwrap()
        .actions
        .is_empty());
}

fn vmcust(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_vmcust"))
        .args(args)
        .env("VMCUST_LOG", "trace")
        .output()
        .unwrap()
}

#[test]
fn the_command_line_never_shows_the_password() {
    let spec = support::example("password-marker-script.cfg");
    let spec = spec.to_str().unwrap();
    let dir = support::scratch_root();
    let r = dir.path().to_str().unwrap();
    // The template's root already has this password: use one it does not have.
    let shadow = dir.path().join("etc/shadow");
    let text = fs::read_to_string(&shadow).unwrap();
    let locked: String = text
        .lines()
        .map(|l| match l.strip_prefix("root:") {
            Some(rest) => format!("root:*:{}\n", rest.split_once(':').unwrap().1),
            None => format!("{l}\n"),
        })
        .collect();
    fs::write(&shadow, locked).unwrap();
    for args in [
        vec!["plan", "--root", r, "--imc", spec],
        vec!["plan", "--root", r, "--imc", spec, "--format", "json"],
        vec!["apply", "--root", r, "--imc", spec],
    ] {
        let out = vmcust(&args);
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(0), "{args:?}: {all}");
        assert!(all.contains("/etc/shadow"), "{args:?}: {all}");
        assert_no_secret(&format!("{args:?}"), &all);
    }
    let text = fs::read_to_string(&shadow).unwrap();
    assert_no_secret("/etc/shadow", &text);
    let hash = fields(text.lines().next().unwrap())[1].clone();
    ShaCrypt::SHA512
        .verify_password(PLAIN.as_bytes(), hash.as_str())
        .unwrap();
    assert!(Path::new(&shadow).exists());
}
