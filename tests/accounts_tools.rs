//! The cloud-config accounts engine against Debian's real tools on a scratch root: what it
//! writes passes `pwck -r` and `grpck -r`, matches what `groupadd`/`useradd --root`/
//! `usermod --lock` make from the same request (salt and change date aside), its sudoers
//! drop-in passes `visudo -cf`, and a second plan changes nothing. A missing tool fails
//! the test naming its package (scripts/test-packages.txt installs them).

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

use vmcust::test_api::plan::Plan;
use vmcust::test_api::root::Root;
use vmcust::test_api::{accounts, parse::parse_accounts, request::AccountsRequest};
use vmcust::test_api::{apply, apply::Change};

mod accounts_support;

use accounts_support::*;

mod support;

fn request(yaml: &str) -> AccountsRequest {
    let serde_norway::Value::Mapping(m) = serde_norway::from_str(yaml).unwrap() else {
        panic!("not a mapping")
    };
    parse_accounts("user-data", &m).unwrap()
}

fn plan_for(root: &Root, req: &AccountsRequest) -> Plan {
    let facts = accounts::gather(root, req).unwrap();
    Plan {
        actions: accounts::plan_accounts(req, &facts).unwrap().actions,
    }
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The request of the comparison: a new group, a user with groups (one to create), a
/// shell, gecos, expiry and keys, a system user.
const COMPARED: &str = "
groups:
  - ops: [root]
users:
  - name: alice
    gecos: Alice Liddell
    groups: [sudo, adm, devs]
    shell: /bin/bash
    expiredate: '2030-01-02'
    sudo: ALL=(ALL) NOPASSWD:ALL
    ssh_authorized_keys: [\"KEY\"]
  - name: sysbob
    system: true
  - name: carol
    uid: 1500
    no_create_home: true
";

#[test]
fn same_fields_as_useradd_and_the_checkers_accept_them() {
    let useradd = tool("/usr/sbin/useradd", "passwd");
    let groupadd = tool("/usr/sbin/groupadd", "passwd");
    let usermod = tool("/usr/sbin/usermod", "passwd");
    let pwck = tool("/usr/sbin/pwck", "passwd");
    let grpck = tool("/usr/sbin/grpck", "passwd");
    let visudo = tool("/usr/sbin/visudo", "sudo");

    // Ours.
    let ours = debian_root();
    let root = Root::new(ours.path()).unwrap();
    let req = request(&COMPARED.replace("KEY", KEY));
    let plan = plan_for(&root, &req);
    apply::apply(&root, &plan).unwrap();

    // Theirs: the commands cloud-init runs for the same request, in its order.
    let theirs = debian_root();
    let t = theirs.path().to_str().unwrap();
    run(Command::new(&groupadd).args(["--root", t, "ops"]));
    run(Command::new(&usermod).args(["--root", t, "-a", "-G", "ops", "root"]));
    run(Command::new(&groupadd).args(["--root", t, "devs"]));
    run(Command::new(&useradd).args([
        "--root",
        t,
        "alice",
        "--comment",
        "Alice Liddell",
        "--expiredate",
        "2030-01-02",
        "--groups",
        "sudo,adm,devs",
        "--shell",
        "/bin/bash",
        "-m",
    ]));
    run(Command::new(&usermod).args(["--root", t, "--lock", "alice"]));
    run(Command::new(&useradd).args(["--root", t, "sysbob", "--system", "-M"]));
    run(Command::new(&usermod).args(["--root", t, "--lock", "sysbob"]));
    run(Command::new(&useradd).args(["--root", t, "carol", "--uid", "1500", "-M"]));
    run(Command::new(&usermod).args(["--root", t, "--lock", "carol"]));

    let read = |d: &Path, f: &str| fs::read_to_string(d.join(f)).unwrap();
    for f in [
        "etc/passwd",
        "etc/group",
        "etc/gshadow",
        "etc/subuid",
        "etc/subgid",
    ] {
        assert_eq!(read(ours.path(), f), read(theirs.path(), f), "{f}");
    }
    // Shadow: every field but the change date (today for both, but the tools may see
    // another day than our facts around midnight).
    let mask = |text: String| -> Vec<Vec<String>> {
        text.lines()
            .map(|l| {
                let mut f: Vec<String> = l.split(':').map(String::from).collect();
                if f.len() > 2 && f[0] != "root" && !SHADOW.contains(&format!("{}:", f[0])) {
                    f[2] = "<lastchg>".into();
                }
                f
            })
            .collect()
    };
    assert_eq!(
        mask(read(ours.path(), "etc/shadow")),
        mask(read(theirs.path(), "etc/shadow"))
    );
    // The homes: the same files, modes and owners. (`useradd --root` of shadow 4.13 does
    // not copy the skeleton's subdirectories' contents and makes them 0700, unlike useradd
    // on a running system; only the top level is compared.)
    for rel in ["home/alice", "home/alice/.bashrc", "home/alice/.profile"] {
        let (a, b) = (
            fs::symlink_metadata(ours.path().join(rel)).unwrap(),
            fs::symlink_metadata(theirs.path().join(rel)).unwrap(),
        );
        assert_eq!(
            (a.mode(), a.uid(), a.gid()),
            (b.mode(), b.uid(), b.gid()),
            "{rel}"
        );
    }
    let conf = fs::metadata(ours.path().join("home/alice/.config/app.conf")).unwrap();
    assert_eq!((conf.mode() & 0o7777, conf.uid()), (0o600, 1000));
    assert!(!ours.path().join("home/sysbob").exists());
    assert!(!ours.path().join("home/carol").exists());
    let keys = ours.path().join("home/alice/.ssh/authorized_keys");
    assert_eq!(fs::read_to_string(&keys).unwrap(), format!("{KEY}\n"));
    let m = fs::metadata(&keys).unwrap();
    assert_eq!((m.mode() & 0o7777, m.uid()), (0o600, 1000));

    // The checkers accept what we wrote (they take file arguments; -r: read only).
    let o = ours.path();
    let p = |f: &str| o.join(f).to_str().unwrap().to_string();
    let check = |prog: &str, args: &[&str]| {
        let out = Command::new(prog).arg("-r").args(args).output().unwrap();
        // pwck -r exits 2 for entries whose home is missing, which the root's own system
        // accounts (/nonexistent) cause; any other complaint is a broken file.
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        let bad: Vec<&str> = text
            .lines()
            .filter(|l| !l.contains("directory") && !l.contains("no changes"))
            .collect();
        assert!(
            bad.is_empty() && out.status.code() != Some(1),
            "{prog}: {text}"
        );
    };
    check(&pwck, &["-q", &p("etc/passwd"), &p("etc/shadow")]);
    // grpck looks group members up through NSS: -R makes that the root's own passwd.
    check(&grpck, &["-R", o.to_str().unwrap()]);

    let dropin = p("etc/sudoers.d/90-cloud-init-users");
    assert_eq!(fs::metadata(&dropin).unwrap().mode() & 0o7777, 0o440);
    run(Command::new(&visudo).args(["-cf", &dropin]));
    assert!(read(o, "etc/sudoers.d/90-cloud-init-users")
        .contains("\n# User rules for alice\nalice ALL=(ALL) NOPASSWD:ALL\n"));

    // A second plan of the same request changes nothing.
    let again = plan_for(&root, &req);
    let changes = apply::dry_run(&root, &again).unwrap();
    assert!(
        changes.iter().all(|c| *c == Change::Unchanged),
        "{changes:?}\n{again:#?}"
    );
}

#[test]
fn default_user_passwords_and_root_keys() {
    let pwck = tool("/usr/sbin/pwck", "passwd");
    let visudo = tool("/usr/sbin/visudo", "sudo");
    let dir = debian_root();
    let root = Root::new(dir.path()).unwrap();
    let yaml = format!(
        "ssh_authorized_keys: [\"{ROOT_KEY}\"]\nchpasswd:\n  users:\n    - {{name: debian, password: s3cret-Pw, type: text}}\n    - {{name: root, type: RANDOM}}\nssh_pwauth: false\n"
    );
    let req = request(&yaml);
    let facts = accounts::gather(&root, &req).unwrap();
    let planned = accounts::plan_accounts(&req, &facts).unwrap();
    // Nothing secret in the plan's printouts.
    let shown = format!("{planned:?}") + &serde_json::to_string(&planned.actions).unwrap();
    assert!(
        !shown.contains("s3cret") && !shown.contains("$6$"),
        "{shown}"
    );
    let plan = Plan {
        actions: planned.actions,
    };
    apply::apply(&root, &plan).unwrap();
    let read = |f: &str| fs::read_to_string(dir.path().join(f)).unwrap();

    // The distro's default user, with its groups (netdev, plugdev... created).
    let passwd = read("etc/passwd");
    // The missing groups (netdev, plugdev...) are made first, as cloud-init runs groupadd
    // before useradd, so the user's own group gets the next gid after them.
    assert!(
        passwd.ends_with("debian:x:1000:1006:Debian:/home/debian:/bin/bash\n"),
        "{passwd}"
    );
    let group = read("etc/group");
    for g in [
        "sudo:x:27:debian",
        "adm:x:4:debian",
        "video:x:44:debian",
        "netdev:x:",
        "plugdev:x:",
    ] {
        assert!(group.contains(g), "{g}: {group}");
    }
    // chpasswd: a hash of the text password, expired (lastchg 0), and the lock
    // from users: came first, so chpasswd's hash replaced it, as on cloud-init.
    let shadow = read("etc/shadow");
    let debian: Vec<&str> = shadow
        .lines()
        .find(|l| l.starts_with("debian:"))
        .unwrap()
        .split(':')
        .collect();
    assert!(debian[1].starts_with("$6$"), "{}", debian[1]);
    assert_eq!(debian[2], "0");
    let root_line: Vec<&str> = shadow
        .lines()
        .find(|l| l.starts_with("root:"))
        .unwrap()
        .split(':')
        .collect();
    assert!(root_line[1].starts_with("$6$") && root_line[2] == "0");
    let randoms = read("var/lib/vmcust/random-passwords");
    assert!(randoms.starts_with("root:") && randoms.trim_end().len() == "root:".len() + 20);
    assert_eq!(
        fs::metadata(dir.path().join("var/lib/vmcust/random-passwords"))
            .unwrap()
            .mode()
            & 0o777,
        0o600
    );
    // Keys: the default user's plain, root's behind disable_root's command.
    assert_eq!(
        read("home/debian/.ssh/authorized_keys"),
        format!("{ROOT_KEY}\n")
    );
    let root_keys = read("root/.ssh/authorized_keys");
    assert!(
        root_keys.starts_with("no-port-forwarding,no-agent-forwarding,no-X11-forwarding,command=\"echo 'Please login as the user \\\"debian\\\" rather than the user \\\"root\\\".';echo;sleep 10;exit 142\" ssh-ed25519 "),
        "{root_keys}"
    );
    // sshd: no sshd_config in this root and no sshd_config.d: the main file gets it.
    assert_eq!(read("etc/ssh/sshd_config"), "PasswordAuthentication no\n");
    run(Command::new(&visudo).args([
        "-cf",
        dir.path()
            .join("etc/sudoers.d/90-cloud-init-users")
            .to_str()
            .unwrap(),
    ]));
    let out = Command::new(&pwck)
        .args(["-r", "-q"])
        .arg(dir.path().join("etc/passwd"))
        .arg(dir.path().join("etc/shadow"))
        .output()
        .unwrap();
    assert_ne!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The drop-in is checked by the root's own `visudo`, run sealed inside the root: a bad
/// rule is refused with visudo's words, naming the real file and whose rules it holds; a
/// good one passes.
#[test]
fn a_bad_sudo_rule_is_caught_by_the_roots_visudo_before_install() {
    tool("/usr/sbin/visudo", "sudo");
    let dir = debian_root();
    support::install_shell(dir.path());
    support::install_tool(dir.path(), "/usr/sbin/visudo");
    let root = Root::new(dir.path()).unwrap();
    let req = request("users:\n  - name: eve\n    sudo: \"ALL=(ALL NOPASSWD:ALL\"\n");
    let facts = accounts::gather(&root, &req).unwrap();
    let plan = accounts::plan_accounts(&req, &facts).unwrap();
    let e = vmcust::test_api::check::check(&root, &plan.actions).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("/etc/sudoers.d/90-cloud-init-users") && msg.contains("syntax error"),
        "{msg}"
    );
    assert!(msg.contains("the `sudo` rules of users eve"), "{msg}");
    assert!(!msg.contains("/tmp/") && !msg.contains("stdin"), "{msg}");
    assert!(!msg.contains("users[].sudo"), "{msg}");
    // A good rule passes.
    let req = request("users:\n  - name: eve\n    sudo: [\"ALL=(ALL) NOPASSWD:ALL\"]\n");
    let facts = accounts::gather(&root, &req).unwrap();
    let plan = accounts::plan_accounts(&req, &facts).unwrap();
    assert_eq!(
        vmcust::test_api::check::check(&root, &plan.actions).unwrap(),
        Vec::<String>::new()
    );
}

/// Never this machine's `visudo`: the root's runs, inside the root (here one that accepts
/// everything and leaves a mark in the root's `/tmp`, not in this machine's).
#[test]
fn the_sudoers_check_runs_the_roots_visudo_inside_the_root() {
    let dir = debian_root();
    support::install_shell(dir.path());
    fs::create_dir_all(dir.path().join("tmp")).unwrap();
    let mark = format!("/tmp/visudo-ran-{}", std::process::id());
    write(
        dir.path(),
        "/usr/sbin/visudo",
        &format!("#!/bin/sh\ncat > {mark}\nexit 0\n"),
        0o755,
    );
    let root = Root::new(dir.path()).unwrap();
    let req = request("users:\n  - name: eve\n    sudo: \"ALL=(ALL NOPASSWD:ALL\"\n");
    let facts = accounts::gather(&root, &req).unwrap();
    let plan = accounts::plan_accounts(&req, &facts).unwrap();
    assert_eq!(
        vmcust::test_api::check::check(&root, &plan.actions).unwrap(),
        Vec::<String>::new()
    );
    let seen = fs::read_to_string(dir.path().join(mark.trim_start_matches('/'))).unwrap();
    assert!(seen.contains("eve ALL=(ALL NOPASSWD:ALL"), "{seen}");
    assert!(!Path::new(&mark).exists(), "ran on this machine");
}

#[test]
fn a_failure_after_the_account_files_puts_them_back() {
    let dir = debian_root();
    let root = Root::new(dir.path()).unwrap();
    let req = request(&format!(
        "users:\n  - name: alice\n    ssh_authorized_keys: [\"{KEY}\"]\n"
    ));
    let mut plan = plan_for(&root, &req);
    // A last action that cannot succeed: a file under a path that is a file.
    plan.actions.push(vmcust::test_api::plan::Action::MakeDir {
        path: "/etc/passwd/x".into(),
        mode: 0o755,
        uid: 0,
        gid: 0,
        purpose: "test",
    });
    assert!(apply::apply(&root, &plan).is_err());
    assert_eq!(
        fs::read_to_string(dir.path().join("etc/passwd")).unwrap(),
        PASSWD
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("etc/shadow")).unwrap(),
        SHADOW
    );
    // alice's subordinate ranges were written before the failure; they are gone again.
    for f in ["etc/subuid", "etc/subgid"] {
        assert_eq!(fs::read_to_string(dir.path().join(f)).unwrap(), "", "{f}");
    }
    assert!(!dir.path().join("home/alice").exists());
}

/// Runs `cmds` (tool name, arguments; `ROOT` is the root's path) on a scratch root.
fn run_tools(root: &Path, cmds: &[(&str, &[&str])]) {
    let r = root.to_str().unwrap();
    for (prog, args) in cmds {
        let path = tool(&format!("/usr/sbin/{prog}"), "passwd");
        let mut c = Command::new(path);
        c.arg("--root").arg(r).args(args.iter());
        run(&mut c);
    }
}

/// The account files with shadow's change dates of new lines masked.
fn accounts_of(root: &Path) -> Vec<String> {
    ["etc/passwd", "etc/group", "etc/gshadow", "etc/shadow"]
        .iter()
        .map(|f| {
            let text = fs::read_to_string(root.join(f)).unwrap();
            if *f != "etc/shadow" {
                return text;
            }
            text.lines()
                .map(|l| {
                    let mut fields: Vec<&str> = l.split(':').collect();
                    if !SHADOW.lines().any(|s| s == l) && fields.len() > 2 {
                        fields[2] = "<lastchg>";
                    }
                    fields.join(":") + "\n"
                })
                .collect()
        })
        .collect()
}

#[test]
fn table_of_requests_against_the_real_tools() {
    // (cloud-config, extra passwd/group lines of the root, the commands cloud-init runs)
    type Case<'a> = (&'a str, &'a str, &'a str, &'a [(&'a str, &'a [&'a str])]);
    let cases: &[Case] = &[
        (
            // The distro default user: its missing groups are made first, in order.
            "users: [default]\n",
            "",
            "",
            &[
                ("groupadd", &["cdrom"]),
                ("groupadd", &["dialout"]),
                ("groupadd", &["dip"]),
                ("groupadd", &["floppy"]),
                ("groupadd", &["netdev"]),
                ("groupadd", &["plugdev"]),
                (
                    "useradd",
                    &[
                        "debian", "--comment", "Debian", "--groups",
                        "adm,audio,cdrom,dialout,dip,floppy,netdev,plugdev,sudo,video",
                        "--shell", "/bin/bash", "-m",
                    ],
                ),
                ("usermod", &["--lock", "debian"]),
            ],
        ),
        (
            // Gaps in the uid ranges; a system user; primary_group.
            "users:\n  - name: n1\n  - name: s1\n    system: true\n  - name: p1\n    primary_group: users\n",
            "old1:x:1000:1000::/home/old1:/bin/sh\nold5:x:1005:1005::/home/old5:/bin/sh\nsys5:x:500:500::/:/bin/sh\n",
            "old1:x:1000:\nold5:x:1005:\nsys5:x:500:\n",
            &[
                ("useradd", &["n1", "-m"]),
                ("usermod", &["--lock", "n1"]),
                ("useradd", &["s1", "--system", "-M"]),
                ("usermod", &["--lock", "s1"]),
                ("useradd", &["p1", "--gid", "users", "-m"]),
                ("usermod", &["--lock", "p1"]),
            ],
        ),
        (
            // A hash given with passwd and lock_passwd: false.
            "users:\n  - name: h1\n    lock_passwd: false\n    passwd: $6$abcdefgh$Qw1\n",
            "",
            "",
            &[("useradd", &["h1", "--password", "$6$abcdefgh$Qw1", "-m"])],
        ),
    ];
    for (yaml, passwd, group, cmds) in cases {
        let make = || {
            let d = debian_root();
            let add = |f: &str, extra: &str| {
                let p = d.path().join(f);
                let text = fs::read_to_string(&p).unwrap() + extra;
                fs::write(&p, text).unwrap();
            };
            add("etc/passwd", passwd);
            add("etc/group", group);
            let shadow: String = passwd
                .lines()
                .map(|l| format!("{}:!:19800:0:99999:7:::\n", l.split(':').next().unwrap()))
                .collect();
            add("etc/shadow", &shadow);
            let gshadow: String = group
                .lines()
                .map(|l| format!("{}:!::\n", l.split(':').next().unwrap()))
                .collect();
            add("etc/gshadow", &gshadow);
            d
        };
        let ours = make();
        let root = Root::new(ours.path()).unwrap();
        apply::apply(&root, &plan_for(&root, &request(yaml))).unwrap();
        let theirs = make();
        run_tools(theirs.path(), cmds);
        // Lines the root had before are not new: masking compares their dates too.
        let (a, b) = (accounts_of(ours.path()), accounts_of(theirs.path()));
        for (i, f) in ["passwd", "group", "gshadow", "shadow"].iter().enumerate() {
            assert_eq!(a[i], b[i], "{yaml}: {f}");
        }
    }
}

#[test]
fn subordinate_ids_as_useradd_writes_them() {
    // (login.defs lines added, /etc/subuid and /etc/subgid before (None: absent, with
    // their mode), the users, the useradd commands cloud-init runs for them)
    type Case<'a> = (
        &'a str,
        Option<(&'a str, u32)>,
        Option<(&'a str, u32)>,
        &'a str,
        &'a [(&'a str, &'a [&'a str])],
    );
    let two = "users:\n  - name: n1\n  - name: s1\n    system: true\n  - name: low\n    uid: 500\n    no_create_home: true\n  - name: n2\n    uid: 1500\n    no_create_home: true\n";
    let two_cmds: &[(&str, &[&str])] = &[
        ("useradd", &["n1", "-m"]),
        ("useradd", &["s1", "--system", "-M"]),
        ("useradd", &["low", "--uid", "500", "-M"]),
        ("useradd", &["n2", "--uid", "1500", "-M"]),
    ];
    let cases: &[Case] = &[
        // Debian 12: both empty; the system user and the uid below UID_MIN get none.
        ("", Some(("", 0o644)), Some(("", 0o644)), two, two_cmds),
        // Entries out of order, a comment and a blank line, a hole that is too small;
        // other SUB_ settings; no gid ranges at all (count 0); a 0600 file kept 0600.
        (
            "SUB_UID_MIN 200000\nSUB_UID_MAX 900000\nSUB_UID_COUNT 1000\nSUB_GID_COUNT 0\n",
            Some(("# ranges\nold:201500:100\n\nold2:200000:1200\n", 0o600)),
            Some(("old:100000:65536\n", 0o644)),
            two,
            two_cmds,
        ),
        // No /etc/subuid: useradd does not make it; /etc/subgid still gets the range.
        (
            "",
            None,
            Some(("x:100000:65536\n", 0o644)),
            "users:\n  - name: n1\n",
            &[("useradd", &["n1", "-m"])],
        ),
    ];
    for (defs, subuid, subgid, yaml, cmds) in cases {
        let make = || {
            let d = debian_root();
            let r = d.path();
            let text = fs::read_to_string(r.join("etc/login.defs")).unwrap() + defs;
            write(r, "/etc/login.defs", &text, 0o644);
            for (f, given) in [("/etc/subuid", subuid), ("/etc/subgid", subgid)] {
                match given {
                    Some((text, mode)) => write(r, f, text, *mode),
                    None => fs::remove_file(r.join(&f[1..])).unwrap(),
                }
            }
            d
        };
        let ours = make();
        let root = Root::new(ours.path()).unwrap();
        let req = request(yaml);
        let facts = accounts::gather(&root, &req).unwrap();
        let planned = accounts::plan_accounts(&req, &facts).unwrap();
        apply::apply(
            &root,
            &Plan {
                actions: planned.actions,
            },
        )
        .unwrap();
        let theirs = make();
        run_tools(theirs.path(), cmds);
        for f in ["etc/subuid", "etc/subgid"] {
            let (a, b) = (ours.path().join(f), theirs.path().join(f));
            assert_eq!(a.exists(), b.exists(), "{yaml}: {f}");
            if b.exists() {
                assert_eq!(
                    fs::read_to_string(&a).unwrap(),
                    fs::read_to_string(&b).unwrap(),
                    "{defs}{yaml}: {f}"
                );
                let mode = |p: &Path| fs::metadata(p).unwrap().mode() & 0o7777;
                assert_eq!(mode(&a), mode(&b), "{yaml}: {f}");
            }
        }
        // What the plan says it gave.
        if subgid.is_some() {
            assert!(
                planned
                    .notes
                    .iter()
                    .any(|n| n.starts_with("users: n1: subordinate ids ")),
                "{:?}",
                planned.notes
            );
        }
    }
}
