//! The template engineer's commands on the real binary and a temp root: `clean` seals a
//! template and a clone then gets new SSH host keys and machine-id; `cloud-init clean`
//! as Packer calls it exits 0; `status` exit codes; `settings check`; `collect-logs`.

mod support;

use std::path::Path;
use std::process::{Command, Output};

use vmcust::test_api::root::Root;

fn vmcust(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vmcust"))
        .args(args)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn template() -> (tempfile::TempDir, Root) {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path()).unwrap();
    root.write_file(
        Path::new("/etc/machine-id"),
        b"0123456789abcdef0123456789abcdef\n",
        0o444,
    )
    .unwrap();
    let key = dir.path().join("etc/ssh/ssh_host_ed25519_key");
    std::fs::create_dir_all(key.parent().unwrap()).unwrap();
    support::require_tool("ssh-keygen", "openssh-client");
    let ok = Command::new("ssh-keygen")
        .args(["-q", "-N", "", "-t", "ed25519", "-f"])
        .arg(&key)
        .status()
        .expect("ssh-keygen must be installed (apt-get install openssh-client)");
    assert!(ok.success());
    root.write_file(Path::new("/var/log/vmcust.log"), b"old run\n", 0o600)
        .unwrap();
    (dir, root)
}

#[test]
fn packer_style_cloud_init_clean_exits_0_and_a_clone_gets_a_new_identity() {
    let (dir, root) = template();
    // What a Packer build runs last, through the stand-in.
    let link = dir.path().join("cloud-init");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_vmcust"), &link).unwrap();
    let o = Command::new(&link)
        .args(["clean", "--logs", "--seed"])
        .env(vmcust::test_api::state::ROOT_ENV, dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(!root.is_file(Path::new("/var/log/vmcust.log")));
    // The machine-id was kept, so it was recorded as the template's.
    let key_before = std::fs::read(dir.path().join("etc/ssh/ssh_host_ed25519_key")).unwrap();
    // The clone boots: the early stage refreshes a new instance's identity.
    let changed = vmcust::test_api::hygiene::refresh(
        &root,
        &vmcust::test_api::settings::load(&root).0,
        "clone-1",
    )
    .unwrap();
    assert_eq!(changed.len(), 3, "{changed:?}");
    let id = root
        .read_text(Path::new("/etc/machine-id"))
        .unwrap()
        .unwrap();
    assert_ne!(id.trim(), "0123456789abcdef0123456789abcdef");
    assert_eq!(id.trim().len(), 32);
    let key_after = std::fs::read(dir.path().join("etc/ssh/ssh_host_ed25519_key")).unwrap();
    assert_ne!(key_before, key_after);
}

#[test]
fn vmcust_clean_dry_run_then_seal() {
    let (dir, root) = template();
    let r = dir.path().to_str().unwrap();
    let o = vmcust(&[
        "clean",
        "--root",
        r,
        "--dry-run",
        "--logs",
        "--machine-id",
        "--ssh-host-keys",
    ]);
    assert!(o.status.success(), "{o:?}");
    let out = text(&o.stdout);
    assert!(out.contains("would remove /var/log/vmcust.log"), "{out}");
    assert!(
        out.contains("would remove /etc/ssh/ssh_host_ed25519_key"),
        "{out}"
    );
    assert!(root.is_file(Path::new("/var/log/vmcust.log")));
    let o = vmcust(&[
        "clean",
        "--root",
        r,
        "--logs",
        "--machine-id",
        "--ssh-host-keys",
    ]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(
        root.read_text(Path::new("/etc/machine-id"))
            .unwrap()
            .unwrap(),
        ""
    );
    assert!(!root.is_file(Path::new("/etc/ssh/ssh_host_ed25519_key")));
    // The clone gets a key of the type the template had.
    vmcust::test_api::hygiene::refresh_host_keys(&root).unwrap();
    assert!(root.is_file(Path::new("/etc/ssh/ssh_host_ed25519_key")));
}

#[test]
fn status_exit_codes_follow_cloud_init() {
    use vmcust::test_api::state::{write_status, RunState, RunStatus};
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path()).unwrap();
    let r = dir.path().to_str().unwrap();
    assert_eq!(vmcust(&["status", "--root", r]).status.code(), Some(0));
    write_status(
        &root,
        &RunStatus::now(RunState::Error, Some("early"), Some("boom".into())),
    )
    .unwrap();
    let o = vmcust(&["status", "--root", r]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(text(&o.stdout).contains("last error: boom"));
    write_status(&root, &RunStatus::now(RunState::Done, Some("late"), None)).unwrap();
    assert_eq!(
        vmcust(&["status", "--root", r, "--wait"]).status.code(),
        Some(0)
    );
    // Readable times, not Unix seconds.
    let out = text(&vmcust(&["status", "--root", r]).stdout);
    assert!(out.contains("updated 20"), "{out}");
    assert!(out.contains("Z)"), "{out}");
    root.write_file(
        Path::new("/etc/vmcust/vmcust.conf"),
        b"[imc]\nmax_wait = soon\n",
        0o644,
    )
    .unwrap();
    let o = vmcust(&["status", "--root", r, "--format", "json"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(text(&o.stdout).contains("\"health\": \"degraded\""));
}

#[test]
fn settings_check_names_each_bad_line() {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path()).unwrap();
    let r = dir.path().to_str().unwrap();
    assert!(vmcust(&["settings", "check", "--root", r]).status.success());
    root.write_file(
        Path::new("/etc/vmcust/vmcust.conf"),
        b"[imc]\nmax_wait = 5\n= x\n[log]\nlevel = loud\n",
        0o644,
    )
    .unwrap();
    let o = vmcust(&["settings", "check", "--root", r]);
    assert_eq!(o.status.code(), Some(65), "{o:?}");
    let out = text(&o.stdout);
    assert!(out.contains("vmcust.conf:3"), "{out}");
    assert!(out.contains("vmcust.conf:5: [log] level"), "{out}");
    // The good line still applies.
    assert!(out.contains("[imc] max_wait = 5\n"), "{out}");
    assert!(
        text(&o.stderr).starts_with("vmcust: error: 2 problem(s)"),
        "{o:?}"
    );
}

#[test]
fn collect_logs_makes_one_redacted_tarball() {
    let (dir, root) = template();
    root.write_file(
        Path::new("/var/log/vmware-imc/toolsDeployPkg.log"),
        b"deploy ok\nadmin password: hunter2\n",
        0o600,
    )
    .unwrap();
    root.write_file(
        Path::new("/var/lib/vmcust/pending/cust.cfg"),
        b"-PASS = x\n",
        0o600,
    )
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let tar = out.path().join("logs.tar.gz");
    let o = vmcust(&[
        "collect-logs",
        "--root",
        dir.path().to_str().unwrap(),
        "--tarfile",
        tar.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{o:?}");
    support::require_tool("tar", "tar");
    let list = Command::new("tar").arg("-tzf").arg(&tar).output().unwrap();
    let list = text(&list.stdout);
    for want in [
        "vmcust-logs/MANIFEST.txt",
        "vmcust-logs/detect.txt",
        "vmcust-logs/var/log/vmcust.log",
        "vmcust-logs/var/log/vmware-imc/toolsDeployPkg.log",
    ] {
        assert!(list.lines().any(|l| l == want), "{want} not in {list}");
    }
    assert!(!list.contains("pending"), "{list}");
    let x = tempfile::tempdir().unwrap();
    assert!(Command::new("tar")
        .arg("-C")
        .arg(x.path())
        .arg("-xzf")
        .arg(&tar)
        .status()
        .unwrap()
        .success());
    let deploy = std::fs::read_to_string(
        x.path()
            .join("vmcust-logs/var/log/vmware-imc/toolsDeployPkg.log"),
    )
    .unwrap();
    assert!(
        !deploy.contains("hunter2") && deploy.contains("<redacted>"),
        "{deploy}"
    );
    let detect = std::fs::read_to_string(x.path().join("vmcust-logs/detect.txt")).unwrap();
    assert!(detect.contains("network renderer:"), "{detect}");
}

#[test]
fn the_example_ovf_environment_plans_onto_the_example_root() {
    let dir = tempfile::tempdir().unwrap();
    let status = Command::new("cp")
        .arg("-a")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/root/."))
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    let o = vmcust(&[
        "plan",
        "--root",
        dir.path().to_str().unwrap(),
        "--ovf",
        concat!(env!("CARGO_MANIFEST_DIR"), "/examples/ovf/ovf-env.xml"),
    ]);
    assert!(o.status.success(), "{o:?}");
    let out = text(&o.stdout);
    assert!(
        out.contains("app01") && out.contains("192.0.2.10/24"),
        "{out}"
    );
}

/// Runs vmcust with stderr to a file; with `journal`, `JOURNAL_STREAM` names that file as
/// systemd would name the journal's stream. Returns stderr.
fn stderr_of(args: &[&str], journal: bool) -> String {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stderr");
    let file = std::fs::File::create(&path).unwrap();
    let meta = file.metadata().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vmcust"));
    cmd.args(args).stderr(file).env_remove("JOURNAL_STREAM");
    if journal {
        cmd.env("JOURNAL_STREAM", format!("{}:{}", meta.dev(), meta.ino()));
    }
    cmd.status().unwrap();
    std::fs::read_to_string(&path).unwrap()
}

#[test]
fn journal_lines_carry_syslog_priorities_and_one_format() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path().to_str().unwrap();
    // Whatever the early stage has to say on this machine (it depends on the CPU's
    // hypervisor bit), every line carries a priority and the one prefix.
    let journal = stderr_of(
        &["run", "--stage", "early", "--root", r, "--max-wait", "0"],
        true,
    );
    assert!(!journal.is_empty());
    for line in journal.lines() {
        let rest = line
            .strip_prefix('<')
            .and_then(|l| l.split_once('>'))
            .filter(|(n, _)| ["3", "4", "6", "7"].contains(n))
            .map(|(_, rest)| rest);
        assert!(
            rest.is_some_and(|r| r.starts_with("vmcust: ")),
            "{line:?} in {journal}"
        );
    }
    let plain = stderr_of(
        &["run", "--stage", "early", "--root", r, "--max-wait", "0"],
        false,
    );
    assert!(plain.lines().all(|l| l.starts_with("vmcust: ")), "{plain}");
    let err = stderr_of(&["status", "--root", "/nonexistent/root"], true);
    assert!(err.starts_with("<3>vmcust: error: opening root"), "{err}");
    // The log file has the time instead.
    let log = std::fs::read_to_string(root.path().join("var/log/vmcust.log")).unwrap();
    assert!(
        log.lines()
            .all(|l| l.contains("Z vmcust: ") && !l.starts_with('<')),
        "{log}"
    );
}

#[test]
fn version_names_the_git_revision() {
    let out = text(&vmcust(&["--version"]).stdout);
    // Built from a git checkout here; a build without git prints the version alone.
    support::require_tool("git", "git");
    let rev = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let rev = text(&rev.stdout);
    assert!(out.starts_with("vmcust 0."), "{out}");
    if !rev.trim().is_empty() {
        assert!(out.contains("(git "), "{out}");
    }
}

#[test]
fn the_stand_in_collects_logs_too() {
    let (dir, _root) = template();
    let link = dir.path().join("cloud-init");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_vmcust"), &link).unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = Command::new(&link)
        .args(["collect-logs", "-t", "ci.tar.gz"])
        .current_dir(out.path())
        .env(vmcust::test_api::state::ROOT_ENV, dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(out.path().join("ci.tar.gz").is_file());
}

#[test]
fn man_pages_and_completions_are_generated_from_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let man = dir.path().join("man");
    let comp = dir.path().join("completions");
    assert!(vmcust(&["generate", "man", man.to_str().unwrap()])
        .status
        .success());
    assert!(vmcust(&["generate", "completions", comp.to_str().unwrap()])
        .status
        .success());
    let page = std::fs::read_to_string(man.join("vmcust.1")).unwrap();
    assert!(page.contains(".TH vmcust 1"), "{page}");
    for cmd in ["clean", "status", "collect-logs", "settings"] {
        assert!(man.join(format!("vmcust-{cmd}.1")).is_file(), "{cmd}");
    }
    // The packaging helpers stay out of the pages people read.
    assert!(!man.join("vmcust-generate.1").exists());
    assert!(!man.join("vmcust-cloud-init-link.1").exists());
    let bash = std::fs::read_to_string(comp.join("vmcust.bash")).unwrap();
    assert!(bash.contains("complete") && bash.contains("collect-logs"));
    assert!(comp.join("_vmcust").is_file() && comp.join("vmcust.fish").is_file());
}
