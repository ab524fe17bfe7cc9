//! The cloud-config modules that need the network at boot — `snap`, `rh_subscription`,
//! `ansible` — on a scratch root with a real shell and stand-ins of our own for the
//! third-party tools (`snap`, `subscription-manager`, `ansible-pull`, …) placed on the
//! root's `PATH`: each stand-in records its exact argv, so the tests hold the commands to
//! the ones cloud-init runs; one that hangs is stopped at the timeout and reported.

mod support;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use support::outcome;
use vmcust::test_api::cc_apply::{run_late, ModuleOutcome, ModuleReport, StageContext};
use vmcust::test_api::model::InstanceId;
use vmcust::test_api::root::Root;
use vmcust::test_api::{cloud_config::CloudConfig, document};

/// A scratch root with `/bin/sh` and the `ID` of `/etc/os-release`.
fn root(os_id: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    support::install_shell(d.path());
    let etc = d.path().join("etc");
    fs::create_dir_all(&etc).unwrap();
    fs::write(etc.join("os-release"), format!("ID={os_id}\n")).unwrap();
    fs::write(
        etc.join("passwd"),
        "root:x:0:0:root:/root:/bin/sh\nops:x:1500:1500::/home/ops:/bin/sh\n",
    )
    .unwrap();
    fs::create_dir_all(d.path().join("root")).unwrap();
    d
}

/// A stand-in for `program` (a path inside the root): appends its name and each
/// argument in brackets as one line to `/root/calls`, then runs `then` (shell).
fn fake(root: &Path, program: &str, then: &str) {
    let p = root.join(program.trim_start_matches('/'));
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    let name = Path::new(program).file_name().unwrap().to_str().unwrap();
    fs::write(
        &p,
        format!(
            "#!/bin/sh\nline='{name}'\nfor a in \"$@\"; do line=\"$line [$a]\"; done\necho \"$line\" >> /root/calls\n{then}\n"
        ),
    )
    .unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
}

/// The stand-ins' calls, one line each.
fn calls(root: &Path) -> Vec<String> {
    fs::read_to_string(root.join("root/calls"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

fn cfg(doc: &str) -> CloudConfig {
    let (cfg, problems) = document::from_text(doc);
    assert!(
        problems
            .iter()
            .all(|p| p.severity == vmcust::test_api::cloud_config::Severity::Warning),
        "{doc}: {problems:?}"
    );
    cfg
}

fn ctx<'a>(dir: &Path, stop: &'a AtomicBool) -> StageContext<'a> {
    let mut c = StageContext::new(
        Root::new(dir).unwrap(),
        InstanceId::parse("i-net").unwrap(),
        "boot-1".into(),
        stop,
    );
    c.command_timeout = Duration::from_secs(20);
    c.package_timeout = Duration::from_secs(20);
    c.tool_timeout = Duration::from_secs(20);
    c
}

fn late(dir: &Path, doc: &str) -> Vec<ModuleReport> {
    let stop = AtomicBool::new(false);
    run_late(&ctx(dir, &stop), &cfg(doc))
}

#[test]
fn snap_waits_acks_and_runs_every_command_as_cloud_init_does() {
    let d = root("ubuntu");
    // `snap ack` copies the file it is given, so the test sees what it read.
    fake(
        d.path(),
        "/usr/bin/snap",
        "if [ \"$1\" = ack ]; then cat \"$2\" > /root/acked; fi\nif [ \"$2\" = broken ]; then echo nope >&2; exit 4; fi",
    );
    let doc = "snap:\n  assertions:\n    00: |\n      signed\n      assertion 1\n    01: assertion 2\n  commands:\n    '02': [install, broken]\n    '01': snap install core18 && echo shell >> /root/shell\n    '03': [snap, refresh, --hold]\n";
    let reports = late(d.path(), doc);
    let o = outcome(&reports, "snap");
    assert!(
        matches!(o, ModuleOutcome::Failed { why } if why.starts_with("Failures running snap commands (1 of 3)") && why.contains("status 4")),
        "{o:?}"
    );
    assert_eq!(
        calls(d.path()),
        [
            "snap [wait] [system] [seed.loaded]",
            "snap [ack] [/var/lib/cloud/instances/i-net/snapd.assertions]",
            "snap [install] [core18]",
            "snap [install] [broken]",
            "snap [refresh] [--hold]",
        ]
    );
    // The assertions joined by newlines (the first keeps its own last newline).
    assert_eq!(
        fs::read_to_string(d.path().join("root/acked")).unwrap(),
        "signed\nassertion 1\n\nassertion 2"
    );
    assert_eq!(
        fs::read_to_string(d.path().join("root/shell")).unwrap(),
        "shell\n"
    );
    // Once per instance: the next boot runs nothing.
    let stop = AtomicBool::new(false);
    let mut c = ctx(d.path(), &stop);
    c.boot_id = "boot-2".into();
    let again = run_late(&c, &cfg(doc));
    assert!(
        matches!(outcome(&again, "snap"), ModuleOutcome::Skipped { why } if why.starts_with("already ran")),
        "{again:?}"
    );
    assert_eq!(calls(d.path()).len(), 5);
}

#[test]
fn users_commands_reach_no_report_or_record_with_their_words() {
    // snap's commands, a list and a shell string, one failing: the tool gets every word,
    // the module's report (status, query, the records) and the root's files only a count.
    let d = root("ubuntu");
    fake(
        d.path(),
        "/usr/bin/snap",
        "[ \"$1\" = install ] && exit 3; exit 0",
    );
    let reports = late(
        d.path(),
        "snap:\n  commands:\n    - [install, MARK-SNAP-1]\n    - 'echo MARK-SNAP-2 >/dev/null'\n",
    );
    assert!(
        matches!(outcome(&reports, "snap"), ModuleOutcome::Failed { why } if why.contains("status 3")),
        "{reports:?}"
    );
    assert!(calls(d.path()).contains(&"snap [install] [MARK-SNAP-1]".to_string()));
    let report = serde_json::to_string(&reports).unwrap();
    assert!(!report.contains("MARK-SNAP"), "{report}");
    assert!(
        report.contains("/usr/bin/snap (2 arguments, not shown)"),
        "{report}"
    );
    assert!(!all_text(d.path()).contains("MARK-SNAP"));
    // Ansible's galaxy actions are the user's words too.
    let d = root("debian");
    ansible_fakes(d.path(), "2.14.0");
    fake(d.path(), "/usr/bin/ansible-galaxy", "exit 2");
    fs::write(d.path().join("usr/bin/ansible"), "").unwrap();
    let reports = late(
        d.path(),
        "ansible: {install_method: distro, package_name: ansible, galaxy: {actions: [[ansible-galaxy, install, MARK-GALAXY]]}}",
    );
    assert!(
        matches!(outcome(&reports, "ansible"), ModuleOutcome::Failed { why } if why.contains("status 2")),
        "{reports:?}"
    );
    assert_eq!(calls(d.path()), ["ansible-galaxy [install] [MARK-GALAXY]"]);
    let report = serde_json::to_string(&reports).unwrap();
    assert!(!report.contains("MARK-GALAXY"), "{report}");
    assert!(!all_text(d.path()).contains("MARK-GALAXY"));
}

#[test]
fn snap_is_skipped_by_distro_off_ubuntu_and_says_so() {
    for id in ["debian", "rhel"] {
        let d = root(id);
        fake(d.path(), "/usr/bin/snap", "");
        let reports = late(d.path(), "snap: {commands: [[install, vlc]]}");
        let o = outcome(&reports, "snap");
        assert!(
            matches!(o, ModuleOutcome::Skipped { why } if why.contains("skipped by distro") && why.contains(id)),
            "{id}: {o:?}"
        );
        assert!(calls(d.path()).is_empty(), "{id}");
    }
}

#[test]
fn a_hanging_snap_command_is_stopped_at_the_timeout() {
    let d = root("ubuntu");
    fake(
        d.path(),
        "/usr/bin/snap",
        "if [ \"$1\" = install ]; then sleep 30; fi",
    );
    let stop = AtomicBool::new(false);
    let mut c = ctx(d.path(), &stop);
    c.command_timeout = Duration::from_millis(500);
    let t = std::time::Instant::now();
    let reports = run_late(&c, &cfg("snap: {commands: [[install, big], [list]]}"));
    assert!(t.elapsed() < Duration::from_secs(15), "{:?}", t.elapsed());
    let o = outcome(&reports, "snap");
    assert!(
        matches!(o, ModuleOutcome::Failed { why } if why.contains("ran longer than")),
        "{o:?}"
    );
    // The next command still ran.
    assert_eq!(calls(d.path()).last().unwrap(), "snap [list]");
}

/// A `subscription-manager` stand-in: not registered; registers with an ID; pools p1,
/// p2, p3 available and p2 consumed; repository r-on enabled and r-off disabled.
const SUBMAN: &str = r#"case "$1" in
identity) echo 'This system is not yet registered.' >&2; exit 1;;
register) echo 'The system has been registered with ID: 0b1c-42';;
list) if [ "$2" = --available ]; then echo p1; echo p2; echo p3; else echo p2; fi;;
repos) if [ "$2" = --list-enabled ]; then echo 'Repo ID:   r-on'; echo 'Repo Name: on'; fi
  if [ "$2" = --list-disabled ]; then echo 'Repo ID:   r-off'; fi;;
esac"#;

/// Every file of the tree but the stand-ins' own record, as text.
fn all_text(root: &Path) -> String {
    let mut out = String::new();
    for p in support::walk(root) {
        if p.is_file() && !p.ends_with("root/calls") {
            out.push_str(&String::from_utf8_lossy(&fs::read(&p).unwrap_or_default()));
        }
    }
    out
}

#[test]
fn rh_subscription_registers_attaches_and_sets_repos_with_cloud_inits_command_lines() {
    let d = root("rhel");
    fake(d.path(), "/usr/sbin/subscription-manager", SUBMAN);
    fs::create_dir_all(d.path().join("var/cache/dnf/x")).unwrap();
    fs::write(d.path().join("var/cache/dnf/x/f"), "cache").unwrap();
    let doc = "rh_subscription:\n  username: joe@example.com\n  password: 'S3cr3t-pw'\n  server_hostname: sub.example\n  auto_attach: true\n  service_level: self-support\n  add_pool: [p1, p2, p9]\n  enable_repo: [r-off, r-gone]\n  disable_repo: [r-on]\n  release_version: '9.4'\n";
    let reports = late(d.path(), doc);
    let o = outcome(&reports, "rh_subscription");
    assert!(
        matches!(o, ModuleOutcome::Ran { note } if note.contains("completed successfully")),
        "{o:?}"
    );
    assert_eq!(
        calls(d.path()),
        [
            "subscription-manager [identity]",
            "subscription-manager [register] [--username=joe@example.com] [--password=S3cr3t-pw] [--serverurl=sub.example]",
            "subscription-manager [attach] [--auto] [--servicelevel=self-support]",
            "subscription-manager [list] [--available] [--pool-only]",
            "subscription-manager [list] [--consumed] [--pool-only]",
            "subscription-manager [attach] [--pool=p1]",
            "subscription-manager [repos] [--list-enabled]",
            "subscription-manager [repos] [--list-disabled]",
            "subscription-manager [repos] [--disable=r-on] [--enable=r-off]",
            "subscription-manager [release] [--set=9.4]",
        ]
    );
    assert!(!d.path().join("var/cache/dnf").exists());
    // The password reached the tool only: not the module's report (what status, query
    // and the records are made of), not a file of the root.
    let report = serde_json::to_string(&reports).unwrap();
    assert!(!report.contains("S3cr3t"), "{report}");
    assert!(
        report.contains("subscription-manager (4 arguments, not shown)"),
        "{report}"
    );
    assert!(!all_text(d.path()).contains("S3cr3t"));
}

#[test]
fn rh_subscription_failures_are_warnings_except_unguarded_listings() {
    // Registration refused: a warning, the module does not fail, nothing else runs.
    let d = root("rhel");
    fake(
        d.path(),
        "/usr/sbin/subscription-manager",
        "[ \"$1\" = register ] && { echo 'Invalid credentials' >&2; exit 70; }; exit 1",
    );
    let reports = late(
        d.path(),
        "rh_subscription: {activation_key: AK-k1-SECRET, org: '123', auto_attach: true}",
    );
    let o = outcome(&reports, "rh_subscription");
    assert!(
        matches!(o, ModuleOutcome::Ran { note } if note.contains("did not complete successfully") && note.contains("status 70")),
        "{o:?}"
    );
    assert_eq!(
        calls(d.path()),
        [
            "subscription-manager [identity]",
            "subscription-manager [register] [--activationkey=AK-k1-SECRET] [--org=123]",
        ]
    );
    // The activation key is a credential: the tool gets it, the report does not.
    let report = serde_json::to_string(&reports).unwrap();
    assert!(!report.contains("AK-k1"), "{report}");
    assert!(!all_text(d.path()).contains("AK-k1"));
    // Already registered: nothing else.
    let d = root("fedora");
    fake(d.path(), "/usr/sbin/subscription-manager", "");
    let reports = late(d.path(), "rh_subscription: {activation_key: k, org: o}");
    assert!(
        matches!(outcome(&reports, "rh_subscription"), ModuleOutcome::Ran { note } if note == "System is already registered"),
        "{reports:?}"
    );
    assert_eq!(calls(d.path()), ["subscription-manager [identity]"]);
    // The pool listing failing is not guarded in cloud-init: the module fails.
    let d = root("rhel");
    fake(
        d.path(),
        "/usr/sbin/subscription-manager",
        "case \"$1\" in identity|list) exit 1;; register) echo 'ID: x';; esac",
    );
    let reports = late(
        d.path(),
        "rh_subscription: {activation_key: k, org: o, add_pool: [p]}",
    );
    assert!(
        matches!(outcome(&reports, "rh_subscription"), ModuleOutcome::Failed { why } if why.contains("status 1")),
        "{reports:?}"
    );
    // Not RHEL or Fedora: skipped by distro, saying so.
    let d = root("centos");
    fake(d.path(), "/usr/sbin/subscription-manager", "");
    let reports = late(d.path(), "rh_subscription: {activation_key: k, org: o}");
    assert!(
        matches!(outcome(&reports, "rh_subscription"), ModuleOutcome::Skipped { why } if why.contains("skipped by distro") && why.contains("centos")),
        "{reports:?}"
    );
    assert!(calls(d.path()).is_empty());
}

#[test]
fn a_hanging_registration_is_stopped_and_warned_about() {
    let d = root("rhel");
    fake(
        d.path(),
        "/usr/sbin/subscription-manager",
        "[ \"$1\" = register ] && sleep 30; exit 1",
    );
    let stop = AtomicBool::new(false);
    let mut c = ctx(d.path(), &stop);
    c.command_timeout = Duration::from_millis(500);
    let t = std::time::Instant::now();
    let reports = run_late(
        &c,
        &cfg("rh_subscription: {username: u, password: 'Hidden-1'}"),
    );
    assert!(t.elapsed() < Duration::from_secs(15), "{:?}", t.elapsed());
    let o = outcome(&reports, "rh_subscription");
    assert!(
        matches!(o, ModuleOutcome::Ran { note } if note.contains("ran longer than") && !note.contains("Hidden")),
        "{o:?}"
    );
}

/// The Ansible stand-ins: apt-get "installs" `ansible`, `git clone` makes its target,
/// `ansible-pull --version` says `version`, `ansible-playbook` also records where it
/// runs and its environment.
fn ansible_fakes(root: &Path, version: &str) {
    fake(
        root,
        "/usr/bin/apt-get",
        "case \"$*\" in *install*) touch /usr/bin/ansible;; esac",
    );
    fake(root, "/usr/bin/ansible-galaxy", "");
    fake(root, "/usr/bin/git", "mkdir -p \"$3\"");
    fake(
        root,
        "/usr/bin/ansible-pull",
        &format!("[ \"$1\" = --version ] && echo '{version}'; exit 0"),
    );
    fake(
        root,
        "/usr/bin/ansible-playbook",
        "echo \"cwd=$(pwd) config=$ANSIBLE_CONFIG home=$HOME\" >> /root/calls",
    );
}

const ANSIBLE_DOC: &str = "ansible:\n  install_method: distro\n  package_name: ansible-core\n  ansible_config: /etc/ansible/site.cfg\n  galaxy: {actions: [[ansible-galaxy, collection, install, community.general]]}\n  pull:\n  - url: https://git.example/pb.git\n    accept_host_key: true\n    clean: false\n    checkout: main\n    playbook_names: [site.yml, db.yml]\n  setup_controller:\n    repositories: [{source: 'https://git.example/ctl.git', path: /root/ctl}]\n    run_ansible: [{playbook_dir: /root/ctl, playbook_name: ctl.yml, inventory: hosts, forks: 2}]\n";

#[test]
fn ansible_installs_then_runs_galaxy_pull_and_the_controller_as_cloud_init_does() {
    let d = root("debian");
    ansible_fakes(d.path(), "ansible-pull [core 2.14.3]");
    let reports = late(d.path(), ANSIBLE_DOC);
    let o = outcome(&reports, "ansible");
    assert!(matches!(o, ModuleOutcome::Ran { .. }), "{o:?}");
    let opts = "[--option=Dpkg::Options::=--force-confold] [--option=Dpkg::options::=--force-unsafe-io] [--assume-yes] [--quiet]";
    assert_eq!(
        calls(d.path()),
        [
            format!("apt-get {opts} [update]"),
            format!("apt-get {opts} [install] [ansible-core]"),
            "ansible-galaxy [collection] [install] [community.general]".into(),
            "ansible-pull [--version]".into(),
            "ansible-pull [--url=https://git.example/pb.git] [--accept-host-key] [--checkout=main] [site.yml] [db.yml]".into(),
            "git [clone] [https://git.example/ctl.git] [/root/ctl]".into(),
            "ansible-playbook [ctl.yml] [--inventory=hosts] [--forks=2]".into(),
            "cwd=/root/ctl config=/etc/ansible/site.cfg home=/root".into(),
        ]
    );
    // Before Ansible 2.12, one ansible-pull per playbook; ansible already there: no
    // install.
    let d = root("debian");
    ansible_fakes(d.path(), "ansible-pull 2.9.27");
    fs::write(d.path().join("usr/bin/ansible"), "").unwrap();
    late(
        d.path(),
        "ansible: {install_method: distro, package_name: ansible, pull: [{url: u, playbook_names: [a.yml, b.yml]}]}",
    );
    assert_eq!(
        calls(d.path()),
        [
            "ansible-pull [--version]",
            "ansible-pull [--url=u] [a.yml]",
            "ansible-pull [--url=u] [b.yml]",
        ]
    );
}

#[test]
fn ansible_as_run_user_goes_through_su_as_cloud_init_does() {
    let d = root("debian");
    fake(
        d.path(),
        "/usr/bin/su",
        "case \"$4\" in *--version*) echo 'ansible-pull [core 2.16.0]';; esac",
    );
    fs::write(d.path().join("usr/bin/ansible"), "").unwrap();
    late(
        d.path(),
        "ansible: {install_method: distro, package_name: ansible, run_user: ops, pull: [{url: 'https://git.example/a b.git', playbook_names: [site.yml]}], setup_controller: {run_ansible: [{playbook_dir: /home/ops/pb, playbook_name: x.yml}]}}",
    );
    assert_eq!(
        calls(d.path()),
        [
            "su [-] [ops] [-c] [env PATH=$PATH ansible-pull --version]",
            "su [-] [ops] [-c] [env PATH=$PATH ansible-pull '--url=https://git.example/a b.git' site.yml]",
            "su [-] [ops] [-c] [cd /home/ops/pb && env PATH=$PATH ansible-playbook x.yml]",
        ]
    );
}

#[test]
fn ansible_failures_fail_the_module_and_stop_it() {
    // A missing install_method: cloud-init's message, nothing run.
    let d = root("debian");
    ansible_fakes(d.path(), "2.14.0");
    let reports = late(
        d.path(),
        "ansible: {package_name: ansible, pull: [{url: u, playbook_names: [a.yml]}]}",
    );
    assert!(
        matches!(outcome(&reports, "ansible"), ModuleOutcome::Failed { why } if why.contains("Missing required key 'install_method'")),
        "{reports:?}"
    );
    assert!(calls(d.path()).is_empty());
    // A galaxy action failing: nothing after it.
    let d = root("debian");
    ansible_fakes(d.path(), "2.14.0");
    fake(d.path(), "/usr/bin/ansible-galaxy", "exit 2");
    fs::write(d.path().join("usr/bin/ansible"), "").unwrap();
    let reports = late(d.path(), ANSIBLE_DOC);
    assert!(
        matches!(outcome(&reports, "ansible"), ModuleOutcome::Failed { why } if why.contains("ansible-galaxy exited with status 2")),
        "{reports:?}"
    );
    assert_eq!(calls(d.path()).len(), 1);
    // A hanging pull is stopped at the timeout.
    let d = root("debian");
    ansible_fakes(d.path(), "2.14.0");
    fake(
        d.path(),
        "/usr/bin/ansible-pull",
        "[ \"$1\" = --version ] && { echo 2.14.0; exit 0; }; sleep 30",
    );
    fs::write(d.path().join("usr/bin/ansible"), "").unwrap();
    let stop = AtomicBool::new(false);
    let mut c = ctx(d.path(), &stop);
    c.command_timeout = Duration::from_millis(500);
    let t = std::time::Instant::now();
    let reports = run_late(
        &c,
        &cfg("ansible: {install_method: distro, package_name: ansible, pull: [{url: u, playbook_names: [a.yml]}]}"),
    );
    assert!(t.elapsed() < Duration::from_secs(15), "{:?}", t.elapsed());
    assert!(
        matches!(outcome(&reports, "ansible"), ModuleOutcome::Failed { why } if why.contains("ran longer than")),
        "{reports:?}"
    );
}
