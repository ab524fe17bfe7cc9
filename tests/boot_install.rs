//! The boot integration files: both systemd units pass `systemd-analyze verify`, and
//! `scripts/install.sh` installs (and uninstalls) the right files into a temp root, with
//! and without a real cloud-init.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use vmcust::test_api::root::Root;
use vmcust::test_api::{coexist, coexist::VmwareCustomization};
use vmcust::test_api::{
    settings,
    settings::{Settings, EARLY_UNIT_TIMEOUT_SECS},
};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn units_pass_systemd_analyze_verify() {
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for unit in [
        "vmcust-early.service",
        "vmcust-late.service",
        "vmcust-imc.path",
        "vmcust-imc.service",
    ] {
        let body = std::fs::read_to_string(repo().join("systemd").join(unit)).unwrap();
        assert!(
            unit.ends_with(".path") || body.contains("ExecStart=/usr/bin/vmcust run --stage "),
            "{unit}"
        );
        // verify checks that ExecStart's program exists; point it at the built binary.
        let body = body.replace("/usr/bin/vmcust", env!("CARGO_BIN_EXE_vmcust"));
        let path = dir.path().join(unit);
        std::fs::write(&path, body).unwrap();
        paths.push(path);
    }
    // A missing systemd-analyze fails the test: the units must be checked, not skipped.
    support::require_tool("systemd-analyze", "systemd");
    let out = Command::new("systemd-analyze")
        .arg("verify")
        .arg("--man=no")
        .args(&paths)
        .env("SYSTEMD_LOG_COLOR", "0")
        .output()
        .expect("systemd-analyze must be installed to verify the units (apt-get install systemd)");
    assert!(
        out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(),
        "systemd-analyze verify complained:\n{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

#[test]
fn unit_ordering_and_timeouts() {
    let early = std::fs::read_to_string(repo().join("systemd/vmcust-early.service")).unwrap();
    let late = std::fs::read_to_string(repo().join("systemd/vmcust-late.service")).unwrap();
    for line in [
        "After=vmtoolsd.service open-vm-tools.service",
        "Before=network-pre.target",
        "Wants=network-pre.target",
        "DefaultDependencies=no",
        "ConditionVirtualization=vmware",
        "RemainAfterExit=yes",
        "KillMode=mixed",
        "TimeoutStopSec=5",
        "ExecStart=/usr/bin/vmcust run --stage early",
        "StartupCPUWeight=1000",
    ] {
        assert!(early.lines().any(|l| l == line), "early unit lacks {line}");
    }
    assert!(early
        .lines()
        .any(|l| l == format!("TimeoutStartSec={EARLY_UNIT_TIMEOUT_SECS}")));
    for line in [
        "After=network-online.target vmcust-early.service",
        "Wants=network-online.target",
        "ExecStart=/usr/bin/vmcust run --stage late",
        "KillMode=mixed",
        // The end of the boot waits for it, as networking waits for the early unit.
        "StartupCPUWeight=1000",
    ] {
        assert!(late.lines().any(|l| l == line), "late unit lacks {line}");
    }
    // The default settings fit in the early unit without a warning.
    let (s, w) = settings::parse("", Path::new(vmcust::test_api::state::SETTINGS_PATH));
    assert_eq!((s, w), (Settings::default(), vec![]));
    for unit in [&early, &late] {
        assert!(!unit.contains("reboot"), "units never reboot");
    }
}

#[test]
fn dropin_enables_vmware_customization_for_tools() {
    let dropin = std::fs::read(repo().join("systemd/99-vmcust.cfg")).unwrap();
    assert_eq!(coexist::flag_in(&dropin), Some(false));
}

#[test]
fn install_script_knows_the_stand_in_marker() {
    let script = std::fs::read_to_string(repo().join("scripts/install.sh")).unwrap();
    assert!(script.contains(&format!("marker={}", coexist::STAND_IN_MARKER)));
}

fn install(root: &Path, extra: &[&str]) -> Output {
    let out = Command::new("sh")
        .arg(repo().join("scripts/install.sh"))
        .arg("--root")
        .arg(root)
        .arg("--binary")
        .arg(env!("CARGO_BIN_EXE_vmcust"))
        // The test build is dynamic, for this machine only (tests/install_portable.rs
        // has the refusal without this flag).
        .arg("--allow-newer-glibc")
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "install.sh {extra:?} failed:\n{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    out
}

fn link(p: &Path) -> Option<PathBuf> {
    std::fs::read_link(p).ok()
}

#[test]
fn install_without_cloud_init_makes_vmcust_the_consumer() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    let out = install(r, &[]);
    assert!(
        text(&out.stdout).contains("no real cloud-init"),
        "{}",
        text(&out.stdout)
    );

    assert!(r.join("usr/bin/vmcust").is_file());
    for unit in ["vmcust-early.service", "vmcust-late.service"] {
        assert!(r.join("etc/systemd/system").join(unit).is_file(), "{unit}");
        assert_eq!(
            link(
                &r.join("etc/systemd/system/multi-user.target.wants")
                    .join(unit)
            ),
            Some(Path::new("/etc/systemd/system").join(unit))
        );
    }
    assert!(r.join("etc/vmcust/vmcust.conf.example").is_file());
    assert!(
        !r.join("etc/vmcust/vmcust.conf").exists(),
        "the settings file stays optional"
    );
    assert_eq!(
        link(&r.join("usr/bin/cloud-init")),
        Some(PathBuf::from("vmcust"))
    );

    let root = Root::new(r).unwrap();
    assert!(coexist::is_vmcust_stand_in(&root));
    assert_eq!(coexist::real_cloud_init(&root), None);
    assert_eq!(
        coexist::vmware_customization(&root),
        VmwareCustomization::Enabled {
            file: "/etc/cloud/cloud.cfg.d/99-vmcust.cfg".into()
        }
    );
    assert_eq!(
        coexist::should_step_aside(&root, &Settings::default()),
        None
    );

    // The installed stand-in answers as tools needs.
    let o = Command::new(r.join("usr/bin/cloud-init"))
        .arg("-v")
        .output()
        .unwrap();
    assert!(
        o.status.success() && text(&o.stdout).contains("23.4"),
        "{o:?}"
    );

    // Installing twice is harmless; uninstalling removes everything it added.
    install(r, &[]);
    install(r, &["--uninstall"]);
    for p in [
        "usr/bin/vmcust",
        "usr/bin/cloud-init",
        "etc/cloud/cloud.cfg.d/99-vmcust.cfg",
        "etc/systemd/system/vmcust-early.service",
        "etc/systemd/system/multi-user.target.wants/vmcust-late.service",
        "etc/vmcust",
    ] {
        assert!(
            !r.join(p).exists() && link(&r.join(p)).is_none(),
            "{p} left behind"
        );
    }
}

#[test]
fn install_with_a_real_cloud_init_leaves_it_alone() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    let ci = r.join("usr/bin/cloud-init");
    let script = "#!/usr/bin/python3\nfrom cloudinit.cmd.main import main\n";
    std::fs::create_dir_all(ci.parent().unwrap()).unwrap();
    std::fs::write(&ci, script).unwrap();
    std::fs::create_dir_all(r.join("etc/cloud")).unwrap();
    std::fs::write(
        r.join("etc/cloud/cloud.cfg"),
        "disable_vmware_customization: false\n",
    )
    .unwrap();

    let out = install(r, &[]);
    let said = text(&out.stdout);
    assert!(
        said.contains("real cloud-init") && said.contains("step"),
        "{said}"
    );
    assert_eq!(std::fs::read_to_string(&ci).unwrap(), script);
    assert!(!r.join("etc/cloud/cloud.cfg.d/99-vmcust.cfg").exists());
    assert!(r.join("usr/bin/vmcust").is_file());
    assert!(r.join("etc/systemd/system/vmcust-early.service").is_file());

    let root = Root::new(r).unwrap();
    let reason = coexist::should_step_aside(&root, &Settings::default()).unwrap();
    assert!(reason.contains("/etc/cloud/cloud.cfg"), "{reason}");

    install(r, &["--uninstall"]);
    assert_eq!(
        std::fs::read_to_string(&ci).unwrap(),
        script,
        "uninstall keeps the real cloud-init"
    );
}

#[test]
fn install_refuses_a_missing_binary() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new("sh")
        .arg(repo().join("scripts/install.sh"))
        .args([
            "--root",
            dir.path().to_str().unwrap(),
            "--binary",
            "/nonexistent/vmcust",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("scripts/build-portable.sh"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "nothing installed"
    );
}
