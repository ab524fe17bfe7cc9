//! SELinux labels with real `security.selinux` attributes on scratch roots: the lookup
//! rules of `file_contexts` (table-driven over tests/data/selinux, our own small policy,
//! and checked against the real libselinux's `selabel_lookup` where it is installed), a
//! replaced file keeping its label, created files, links and directories getting the
//! policy's, nothing labelled without a policy, and rollback putting labels back.

mod support;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use vmcust::test_api::root::{FileOwner, Root};
use vmcust::test_api::{
    selinux::{FileContexts, Input, Kind, Labeler},
    xattr,
};

/// A root holding only our test policy (config and file contexts).
fn policy_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    support::copy_tree(&support::repo().join("tests/data/selinux"), dir.path());
    dir
}

fn file_contexts(root: &Path) -> PathBuf {
    root.join("etc/selinux/targeted/contexts/files/file_contexts")
}

fn ctx(t: &str) -> Vec<u8> {
    format!("system_u:object_r:{t}:s0\0").into_bytes()
}

/// The label of `p` as text (without the NUL), not following a final symlink.
fn label(p: &Path) -> Option<String> {
    xattr::get_path(p).unwrap().map(|l| {
        String::from_utf8_lossy(&l)
            .trim_end_matches('\0')
            .to_owned()
    })
}

fn type_of(p: &Path) -> Option<String> {
    label(p).map(|l| l.split(':').nth(2).unwrap().to_owned())
}

/// What the label tests need: to set `security.selinux` on a scratch file. As root on
/// ext4 or tmpfs without SELinux enabled the kernel stores the attribute as given; without
/// privilege it refuses, and the test fails saying so (support::require_root).
fn require_labels() {
    support::require_root("setting security.selinux on scratch files");
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("probe");
    fs::write(&f, "").unwrap();
    if let Err(e) = xattr::set_path(&f, &ctx("probe_t")) {
        panic!("root cannot set security.selinux on {}: {e}", f.display());
    }
}

/// One row: path, kind looked up, expected type (`None`: no label).
type Row = (&'static str, Kind, Option<&'static str>);

/// Each row is one of libselinux's rules, on tests/data/selinux's policy.
const LOOKUPS: &[Row] = &[
    // A later regex wins over an earlier one (`/etc(/.*)?` over `/.*`).
    ("/etc/hosts", Kind::File, Some("etc_t")),
    ("/etc", Kind::Dir, Some("etc_t")),
    // The type field: `--` lines are for regular files only.
    ("/etc/shadow", Kind::File, Some("shadow_t")),
    ("/etc/shadow-", Kind::File, Some("shadow_t")),
    ("/etc/shadow", Kind::Dir, Some("etc_t")),
    // A literal line beats a later regex; `\.` is a literal dot.
    ("/etc/resolv.conf", Kind::File, Some("net_conf_t")),
    ("/etc/sysctl.conf", Kind::File, Some("conf_regex_t")),
    ("/etc/resolvXconf", Kind::File, Some("etc_t")),
    // file_contexts.local comes after the base file: its literal wins.
    ("/etc/hostname", Kind::File, Some("local_hostname_t")),
    ("/opt/app/bin", Kind::File, Some("app_t")),
    ("/opt/lib", Kind::File, Some("usr_t")),
    // Anchored at the end: `/root/\.ssh(/.*)?` does not match `/root/.sshfoo`.
    ("/root/.ssh", Kind::Dir, Some("ssh_home_t")),
    ("/root/.ssh/authorized_keys", Kind::File, Some("ssh_home_t")),
    ("/root/.sshfoo", Kind::File, Some("admin_home_t")),
    // `-l` lines are for symlinks.
    ("/etc/localtime", Kind::Symlink, Some("locale_t")),
    ("/etc/localtime", Kind::File, Some("etc_t")),
    (
        "/etc/ssh/ssh_host_ed25519_key",
        Kind::File,
        Some("sshd_key_t"),
    ),
    (
        "/etc/ssh/ssh_host_ed25519_key.pub",
        Kind::File,
        Some("sshd_key_t"),
    ),
    ("/etc/ssh/sshd_config", Kind::File, Some("etc_t")),
    // `<<none>>`: no label.
    ("/tmp/x", Kind::File, None),
    ("/etc/vmcust-unlabelled", Kind::File, None),
    // `^` + regex + `$` without a group: `/srv/a|/srv/b` matches `/srv/abc`, but only
    // below its stem `/srv`.
    ("/srv/abc", Kind::File, Some("alt_t")),
    ("/srv/b", Kind::File, Some("alt_t")),
    ("/srv/bc", Kind::File, Some("default_t")),
    ("/x/srv/b", Kind::File, Some("default_t")),
    // The same path, different types: a directory and a file.
    ("/var/lib/x", Kind::Dir, Some("x_dir_t")),
    ("/var/lib/x", Kind::File, Some("x_file_t")),
    // file_contexts.homedirs.
    ("/home", Kind::Dir, Some("home_root_t")),
    ("/home/al", Kind::Dir, Some("user_home_dir_t")),
    (
        "/home/al/.ssh/authorized_keys",
        Kind::File,
        Some("ssh_home_t"),
    ),
    ("/home/al/notes", Kind::File, Some("user_home_t")),
    // Equivalences: .subs_dist, .subs then .subs_dist, and .subs last line first.
    (
        "/export/home/al/.ssh/authorized_keys",
        Kind::File,
        Some("ssh_home_t"),
    ),
    ("/srv/homes/al/.ssh", Kind::Dir, Some("ssh_home_t")),
    ("/w/x", Kind::File, Some("other_t")),
    ("/export/homes/al", Kind::File, Some("default_t")),
    // The key is cleaned: `//` folded, a trailing `/` dropped.
    ("//etc//hosts/", Kind::File, Some("etc_t")),
];

fn mode_of(kind: Kind) -> u32 {
    match kind {
        Kind::File => 0o100000,
        Kind::Dir => 0o040000,
        Kind::Symlink => 0o120000,
        _ => 0,
    }
}

#[test]
fn lookups_follow_libselinux_rules() {
    let dir = policy_root();
    let root = Root::new(dir.path()).unwrap();
    let labeler = Labeler::new();
    for (path, kind, want) in LOOKUPS {
        let got = labeler.label_for(&root, Path::new(path), *kind).unwrap();
        // The type field: users differ (homedirs' lines say unconfined_u).
        let got = got.map(|l| String::from_utf8(l).unwrap());
        let got_type = got.as_deref().map(|l| l.split(':').nth(2).unwrap());
        assert!(got.as_ref().is_none_or(|l| l.ends_with(":s0\0")), "{got:?}");
        assert_eq!(got_type, *want, "{path} as {kind:?}");
    }
}

/// The same table through the real libselinux (selinux-utils' `selabel_lookup`, listed in
/// scripts/test-packages.txt): our rows are what libselinux answers, not what we think it
/// answers. Without the tool the test fails, naming the package.
#[test]
fn the_table_agrees_with_the_real_libselinux() {
    let tool = Path::new("/usr/sbin/selabel_lookup");
    support::require_tool("/usr/sbin/selabel_lookup", "selinux-utils");
    let fc = file_contexts(&support::repo().join("tests/data/selinux"));
    for (path, kind, want) in LOOKUPS {
        let out = Command::new(tool)
            .args(["-b", "file", "-k", path, "-t"])
            .arg(mode_of(*kind).to_string())
            .arg("-f")
            .arg(&fc)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let got = text
            .trim()
            .strip_prefix("Default context: ")
            .map(|c| c.split(':').nth(2).unwrap().to_owned());
        assert_eq!(got.as_deref(), *want, "{path} as {kind:?}: {text}");
    }
}

#[test]
fn no_match_is_no_label_and_bad_lines_say_where() {
    let input = |text| Input {
        name: "/etc/selinux/t/contexts/files/file_contexts",
        text,
    };
    let fc = FileContexts::parse(&[input("/etc(/.*)?  u:r:etc_t\n")], None, None).unwrap();
    assert_eq!(fc.lookup(b"/usr/bin/x", Kind::File).unwrap(), None);

    let rows: &[(&str, &str)] = &[
        ("/a u:r:t\n/b -x u:r:t\n", "line 2: file type \"-x\""),
        ("# c\n\n/a\n", "line 3: expected `regex [type] context`"),
        (
            "/a not-a-context\n",
            "line 1: \"not-a-context\" is not a security context",
        ),
        ("/a -- u:r:t extra\n", "line 1: expected"),
    ];
    for (text, want) in rows {
        let err = FileContexts::parse(&[input(text)], None, None).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.starts_with("/etc/selinux/t/contexts/files/file_contexts"),
            "{msg}"
        );
        assert!(msg.contains(want), "{text:?}: {msg}");
    }

    // Regexes compile when first tried: a broken one is an error only for paths it could
    // match, and the error names its line.
    let fc = FileContexts::parse(&[input("/.* u:r:d_t\n/opt/(x u:r:t\n")], None, None).unwrap();
    assert!(fc.lookup(b"/etc/hosts", Kind::File).unwrap().is_some());
    let err = fc.lookup(b"/opt/y", Kind::File).unwrap_err().to_string();
    assert!(
        err.contains("file_contexts line 2: regular expression"),
        "{err}"
    );
}

#[test]
fn a_replaced_file_keeps_its_label() {
    require_labels();
    for with_policy in [true, false] {
        let dir = if with_policy {
            policy_root()
        } else {
            tempfile::tempdir().unwrap()
        };
        let d = dir.path();
        fs::create_dir_all(d.join("etc")).unwrap();
        fs::create_dir_all(d.join("root/.ssh")).unwrap();
        for (p, t) in [
            ("etc/hostname", "custom_t"),
            ("etc/shadow", "shadow_t"),
            ("root/.ssh/authorized_keys", "mine_t"),
        ] {
            fs::write(d.join(p), "old\n").unwrap();
            xattr::set_path(&d.join(p), &ctx(t)).unwrap();
        }
        let root = Root::new(d).unwrap();
        root.write_file(Path::new("/etc/hostname"), b"new\n", 0o644)
            .unwrap();
        root.write_file(Path::new("/etc/shadow"), b"new\n", 0o640)
            .unwrap();
        root.write(
            Path::new("/root/.ssh/authorized_keys"),
            b"ssh-ed25519 AAAA k\n",
            0o600,
            FileOwner::InUserDir {
                uid: 0,
                gid: 0,
                dir_mode: 0o700,
            },
        )
        .unwrap();
        let at = |p: &str| type_of(&d.join(p));
        // The label it had, not the policy's (local_hostname_t, ssh_home_t).
        assert_eq!(at("etc/hostname").as_deref(), Some("custom_t"));
        assert_eq!(at("etc/shadow").as_deref(), Some("shadow_t"));
        assert_eq!(at("root/.ssh/authorized_keys").as_deref(), Some("mine_t"));
        assert_eq!(fs::read(d.join("etc/shadow")).unwrap(), b"new\n");
        // A file that had no label gets the policy's, or stays without one.
        fs::write(d.join("etc/hosts"), "old\n").unwrap();
        root.write_file(Path::new("/etc/hosts"), b"new\n", 0o644)
            .unwrap();
        let want = with_policy.then(|| "etc_t".to_owned());
        assert_eq!(at("etc/hosts"), want, "policy {with_policy}");
    }
}

#[test]
fn created_files_links_and_directories_get_the_policy_label() {
    require_labels();
    let dir = policy_root();
    let d = dir.path();
    fs::create_dir_all(d.join("root")).unwrap();
    let root = Root::new(d).unwrap();
    root.write_file(Path::new("/etc/netplan/50-vmcust.yaml"), b"n\n", 0o600)
        .unwrap();
    root.write_file(Path::new("/var/lib/x"), b"x\n", 0o644)
        .unwrap();
    root.write(
        Path::new("/root/.ssh/authorized_keys"),
        b"ssh-ed25519 AAAA k\n",
        0o600,
        FileOwner::InUserDir {
            uid: 0,
            gid: 0,
            dir_mode: 0o700,
        },
    )
    .unwrap();
    root.symlink(
        Path::new("/etc/localtime"),
        Path::new("/usr/share/zoneinfo/UTC"),
    )
    .unwrap();
    root.write_file(Path::new("/etc/vmcust-unlabelled"), b"", 0o644)
        .unwrap();
    root.write_file(Path::new("/tmp/a/b"), b"", 0o644).unwrap();
    let rows: &[(&str, Option<&str>)] = &[
        ("etc/netplan", Some("net_conf_t")),
        ("etc/netplan/50-vmcust.yaml", Some("net_conf_t")),
        ("var", Some("default_t")),
        ("var/lib", Some("default_t")),
        ("var/lib/x", Some("x_file_t")),
        ("root/.ssh", Some("ssh_home_t")),
        ("root/.ssh/authorized_keys", Some("ssh_home_t")),
        ("etc/localtime", Some("locale_t")),
        ("etc/vmcust-unlabelled", None),
        ("tmp", None),
        ("tmp/a/b", None),
        // Made by the test, not by vmcust: left as they were.
        ("root", None),
        ("etc", None),
    ];
    for (p, want) in rows {
        assert_eq!(type_of(&d.join(p)).as_deref(), *want, "{p}");
    }
}

#[test]
fn without_a_policy_nothing_is_labelled() {
    require_labels();
    let none = tempfile::tempdir().unwrap();
    let disabled = policy_root();
    fs::write(
        disabled.path().join("etc/selinux/config"),
        "SELINUX=disabled\nSELINUXTYPE=targeted\n",
    )
    .unwrap();
    let no_file_contexts = policy_root();
    fs::remove_file(file_contexts(no_file_contexts.path())).unwrap();
    for dir in [&none, &disabled, &no_file_contexts] {
        let d = dir.path();
        let root = Root::new(d).unwrap();
        root.write_file(Path::new("/etc/netplan/50-vmcust.yaml"), b"n\n", 0o600)
            .unwrap();
        root.symlink(Path::new("/etc/localtime"), Path::new("/x"))
            .unwrap();
        for p in ["etc/netplan", "etc/netplan/50-vmcust.yaml", "etc/localtime"] {
            assert_eq!(label(&d.join(p)), None, "{}: {p}", d.display());
        }
    }
}

/// The policy is read when a created path first needs a label, not before: replacing
/// labelled files never reads it, so a root whose file_contexts we cannot use is only a
/// problem (a clear one, naming file and line) when vmcust creates something.
#[test]
fn the_policy_is_read_only_when_a_label_is_needed() {
    require_labels();
    let dir = policy_root();
    let d = dir.path();
    fs::write(file_contexts(d), "/.* u:r:d_t\n/etc -x u:r:t\n").unwrap();
    fs::write(d.join("etc/hostname"), "old\n").unwrap();
    xattr::set_path(&d.join("etc/hostname"), &ctx("custom_t")).unwrap();
    let root = Root::new(d).unwrap();
    root.write_file(Path::new("/etc/hostname"), b"new\n", 0o644)
        .unwrap();
    let err = root
        .write_file(Path::new("/etc/adjtime"), b"x\n", 0o644)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("/etc/selinux/targeted/contexts/files/file_contexts line 2: file type"),
        "{err}"
    );
    assert!(!d.join("etc/adjtime").exists());
}

/// Fresh SSH host keys (made by ssh-keygen, renamed over the template's) keep the old
/// keys' labels, or get the policy's: sshd cannot read a key labelled otherwise.
#[test]
fn fresh_host_keys_keep_the_label_of_the_old_ones() {
    require_labels();
    let dir = policy_root();
    let d = dir.path();
    let ssh = d.join("etc/ssh");
    fs::create_dir_all(&ssh).unwrap();
    for t in ["ed25519", "ecdsa"] {
        let key = ssh.join(format!("ssh_host_{t}_key"));
        support::require_tool("ssh-keygen", "openssh-client");
        let ok = Command::new("ssh-keygen")
            .args(["-q", "-N", "", "-t", t, "-f"])
            .arg(&key)
            .status()
            .expect("ssh-keygen must be installed (apt-get install openssh-client)");
        assert!(ok.success());
    }
    let old = ssh.join("ssh_host_ed25519_key");
    xattr::set_path(&old, &ctx("custom_key_t")).unwrap();
    xattr::set_path(&old.with_extension("pub"), &ctx("custom_pub_t")).unwrap();
    let before = fs::read(&old).unwrap();
    let root = Root::new(d).unwrap();
    vmcust::test_api::hygiene::refresh_host_keys(&root).unwrap();
    assert_ne!(fs::read(&old).unwrap(), before, "a fresh key");
    let rows = [
        ("ssh_host_ed25519_key", "custom_key_t"),
        ("ssh_host_ed25519_key.pub", "custom_pub_t"),
        ("ssh_host_ecdsa_key", "sshd_key_t"),
        ("ssh_host_ecdsa_key.pub", "sshd_key_t"),
    ];
    for (name, want) in rows {
        assert_eq!(type_of(&ssh.join(name)).as_deref(), Some(want), "{name}");
    }
}

/// Labels of every path under `dir` (not following symlinks).
fn labels(dir: &Path) -> BTreeMap<PathBuf, Option<String>> {
    support::walk(dir)
        .into_iter()
        .map(|p| (p.strip_prefix(dir).unwrap().to_path_buf(), label(&p)))
        .collect()
}

/// A lived-in SELinux root: the example template root plus our policy, with labels on
/// most files (an odd one on /etc/hostname) and none on /etc/hosts.
fn labelled_root() -> tempfile::TempDir {
    let root = support::scratch_root();
    let p = root.path();
    support::copy_tree(&support::repo().join("tests/data/selinux"), p);
    // netplan named by the settings file rather than found in /etc/netplan: the
    // directory is then one vmcust creates, which must get the policy's label.
    fs::remove_dir_all(p.join("etc/netplan")).unwrap();
    fs::create_dir_all(p.join("etc/vmcust")).unwrap();
    fs::write(
        p.join("etc/vmcust/vmcust.conf"),
        "[network]\nrenderer = netplan\n",
    )
    .unwrap();
    for (path, t) in [
        ("", "root_t"),
        ("etc", "etc_t"),
        ("etc/shadow", "shadow_t"),
        ("etc/hostname", "custom_t"),
        ("etc/localtime", "locale_t"),
        ("etc/timezone", "locale_t"),
    ] {
        xattr::set_path(&p.join(path), &ctx(t)).unwrap();
    }
    root
}

fn apply(root: &Path, fail_at: Option<usize>) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vmcust"));
    cmd.args(["apply", "--root"])
        .arg(root)
        .arg(support::example("password-marker-script.cfg"))
        .env("PATH", "/nonexistent")
        .env_remove(vmcust::test_api::apply::FAIL_AT_ENV);
    if let Some(i) = fail_at {
        cmd.env(vmcust::test_api::apply::FAIL_AT_ENV, i.to_string());
    }
    cmd.output().unwrap()
}

#[test]
fn a_customization_keeps_labels_and_a_failure_puts_them_back() {
    require_labels();
    let root = labelled_root();
    let p = root.path();
    let out = apply(p, None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: &[(&str, Option<&str>)] = &[
        ("etc/shadow", Some("shadow_t")),
        ("etc/hostname", Some("custom_t")),
        ("etc/localtime", Some("locale_t")),
        ("etc/timezone", Some("locale_t")),
        ("etc/hosts", Some("etc_t")),
        ("etc/adjtime", Some("etc_t")),
        ("etc/netplan", Some("net_conf_t")),
        ("etc/netplan/50-vmcust.yaml", Some("net_conf_t")),
    ];
    for (path, want) in rows {
        assert_eq!(type_of(&p.join(path)).as_deref(), *want, "{path}");
    }

    // A failure at each action puts every label back as it was (and removes the ones
    // given to files that had none), with the contents.
    let mut failures = 0;
    let mut finished = false;
    for i in 0..50 {
        let root = labelled_root();
        let p = root.path();
        let before = (labels(p), support::snapshot(p));
        let out = apply(p, Some(i));
        if out.status.success() {
            finished = true; // past the last action
            break;
        }
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("nothing was changed"), "at {i}: {err}");
        assert_eq!(labels(p), before.0, "labels after a failure at {i}");
        assert_eq!(
            support::snapshot(p),
            before.1,
            "files after a failure at {i}"
        );
        failures += 1;
    }
    assert!(finished && failures >= 5, "{failures} actions");
}

/// Every path of a root labelled by the real `setfiles -F` (policycoreutils, with the
/// root's own policy) has the label our lookup gives it. Needs such a root, so it is
/// `--ignored`: `VMCUST_SELINUX_LABELLED_ROOT=DIR cargo test --test selinux -- --ignored`
/// (docs/selinux.md says how one was made from Debian's selinux-policy-default).
#[test]
#[ignore]
fn lookups_agree_with_setfiles_on_a_real_policy() {
    let dir = PathBuf::from(
        std::env::var_os("VMCUST_SELINUX_LABELLED_ROOT")
            .expect("VMCUST_SELINUX_LABELLED_ROOT names a root labelled by setfiles -F"),
    );
    let root = Root::new(&dir).unwrap();
    let labeler = Labeler::new();
    assert!(
        labeler.has_policy(&root).unwrap(),
        "{} has no policy",
        dir.display()
    );
    let (mut checked, mut wrong) = (0, Vec::new());
    for p in support::walk(&dir) {
        let meta = fs::symlink_metadata(&p).unwrap();
        let t = meta.file_type();
        use std::os::unix::fs::FileTypeExt as _;
        let kind = if t.is_dir() {
            Kind::Dir
        } else if t.is_symlink() {
            Kind::Symlink
        } else if t.is_file() {
            Kind::File
        } else if t.is_char_device() {
            Kind::Char
        } else if t.is_block_device() {
            Kind::Block
        } else if t.is_fifo() {
            Kind::Fifo
        } else {
            Kind::Socket
        };
        let inside = Path::new("/").join(p.strip_prefix(&dir).unwrap());
        let want = xattr::get_path(&p).unwrap();
        let got = labeler.label_for(&root, &inside, kind).unwrap();
        checked += 1;
        if got != want {
            wrong.push(format!(
                "{} ({kind:?}): setfiles {:?}, vmcust {:?}",
                inside.display(),
                want.map(|l| String::from_utf8_lossy(&l).into_owned()),
                got.map(|l| String::from_utf8_lossy(&l).into_owned()),
            ));
        }
    }
    eprintln!("{checked} paths checked");
    assert!(checked > 1000, "{checked} paths: not a real root");
    assert!(
        wrong.is_empty(),
        "{} of {checked} differ:\n{}",
        wrong.len(),
        wrong[..wrong.len().min(30)].join("\n")
    );
}
