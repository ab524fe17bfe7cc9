//! The cloud-config runners and drivers (src/cloud_config/apply) on a scratch root with a
//! real shell, chrooted as custom scripts are: bootcmd and runcmd run once as their
//! frequency says, a failing or hanging command fails its module, packages run the
//! root's apt-get with exactly cloud-init's command lines, write_files gets owners from
//! the root's own account files.

mod support;

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use support::outcome;
use vmcust::test_api::cc_apply::{run_early, run_late, ModuleOutcome, StageContext};
use vmcust::test_api::model::InstanceId;
use vmcust::test_api::root::Root;
use vmcust::test_api::{cloud_config::CloudConfig, document};

/// A scratch root with `/bin/sh`, account files of our own and a Debian marker.
fn root() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    support::install_shell(d.path());
    let etc = d.path().join("etc");
    fs::create_dir_all(&etc).unwrap();
    fs::write(
        etc.join("passwd"),
        "root:x:0:0:root:/root:/bin/sh\nweb:x:1500:1600::/srv/web:/bin/sh\n",
    )
    .unwrap();
    fs::write(etc.join("group"), "root:x:0:\nweb:x:1600:\nops:x:1700:\n").unwrap();
    fs::write(etc.join("os-release"), "ID=debian\n").unwrap();
    fs::write(etc.join("debian_version"), "12.0\n").unwrap();
    fs::create_dir_all(d.path().join("root")).unwrap();
    d
}

fn cfg(doc: &str) -> CloudConfig {
    let (cfg, problems) = document::from_text(doc);
    assert!(problems.is_empty(), "{doc}: {problems:?}");
    cfg
}

fn ctx<'a>(dir: &Path, boot: &str, stop: &'a AtomicBool) -> StageContext<'a> {
    let mut c = StageContext::new(
        Root::new(dir).unwrap(),
        InstanceId::parse("i-test").unwrap(),
        boot.into(),
        stop,
    );
    c.command_timeout = Duration::from_secs(20);
    c
}

fn read(dir: &Path, p: &str) -> String {
    fs::read_to_string(dir.join(p.trim_start_matches('/'))).unwrap_or_default()
}

#[test]
fn runcmd_runs_once_per_instance_and_bootcmd_once_per_boot() {
    let d = root();
    let stop = AtomicBool::new(false);
    let c = cfg("bootcmd:\n- echo \"boot $INSTANCE_ID\" >> /root/log\n\
         runcmd:\n- echo run >> /root/log\n- [sh, -c, 'echo \"$0 it''s\" >> /root/log', quoted]\n");
    let early = run_early(&ctx(d.path(), "boot-1", &stop), &c);
    assert!(
        matches!(outcome(&early, "bootcmd"), ModuleOutcome::Ran { .. }),
        "{early:?}"
    );
    let late = run_late(&ctx(d.path(), "boot-1", &stop), &c);
    assert!(
        matches!(outcome(&late, "runcmd"), ModuleOutcome::Ran { .. }),
        "{late:?}"
    );
    assert_eq!(
        read(d.path(), "/root/log"),
        "boot i-test\nrun\nquoted it's\n"
    );
    // The same boot again: nothing runs twice.
    let early = run_early(&ctx(d.path(), "boot-1", &stop), &c);
    let late = run_late(&ctx(d.path(), "boot-1", &stop), &c);
    for (r, m) in [(&early, "bootcmd"), (&late, "runcmd")] {
        assert!(
            matches!(outcome(r, m), ModuleOutcome::Skipped { why } if why.starts_with("already ran")),
            "{r:?}"
        );
    }
    // The next boot: bootcmd again, runcmd not.
    run_early(&ctx(d.path(), "boot-2", &stop), &c);
    run_late(&ctx(d.path(), "boot-2", &stop), &c);
    assert_eq!(
        read(d.path(), "/root/log"),
        "boot i-test\nrun\nquoted it's\nboot i-test\n"
    );
    // The script is cloud-init's shellify of the entries.
    assert_eq!(
        read(d.path(), "/var/lib/vmcust/instances/i-test/scripts/runcmd"),
        "#!/bin/sh\necho run >> /root/log\n'sh' '-c' 'echo \"$0 it'\\''s\" >> /root/log' 'quoted'\n"
    );
}

/// One list entry runs without the shell, with the same effect: its program's parent is
/// the sealed box's stub init, PID 1 there, which vmcust started (no `sh` in between), and the script is written as cloud-init writes it.
/// A builtin, or a program without `#!` that the shell reads as a script, still goes
/// through the shell, with the shell's result.
#[test]
fn a_single_list_entry_runs_without_the_shell_as_the_shell_would_run_it() {
    let d = root();
    let plain = d.path().join("bin/plain");
    fs::write(&plain, "echo plain >> /root/log\n").unwrap();
    fs::set_permissions(&plain, fs::Permissions::from_mode(0o755)).unwrap();
    let stop = AtomicBool::new(false);
    let c = cfg(
        "bootcmd:\n- [sh, -c, 'echo \"boot $PPID $INSTANCE_ID\" >> /root/log']\n\
         runcmd:\n- [sh, -c, 'echo \"run $PPID\" >> /root/log']\n",
    );
    run_early(&ctx(d.path(), "boot-1", &stop), &c);
    run_late(&ctx(d.path(), "boot-1", &stop), &c);
    assert_eq!(read(d.path(), "/root/log"), "boot 1 i-test\nrun 1\n");
    assert_eq!(
        read(d.path(), "/var/lib/vmcust/instances/i-test/scripts/runcmd"),
        "#!/bin/sh\n'sh' '-c' 'echo \"run $PPID\" >> /root/log'\n"
    );
    let d = root();
    fs::write(d.path().join("bin/plain"), "echo plain >> /root/log\n").unwrap();
    fs::set_permissions(
        d.path().join("bin/plain"),
        fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let c = cfg("bootcmd:\n- [plain]\nruncmd:\n- [cd, /nowhere]\n");
    let early = run_early(&ctx(d.path(), "boot-1", &stop), &c);
    assert!(
        matches!(outcome(&early, "bootcmd"), ModuleOutcome::Ran { .. }),
        "{early:?}"
    );
    assert_eq!(read(d.path(), "/root/log"), "plain\n");
    // `cd` is the shell's: its failure is the shell's (there is no program `cd` to run).
    let late = run_late(&ctx(d.path(), "boot-1", &stop), &c);
    match outcome(&late, "runcmd") {
        ModuleOutcome::Failed { why } => assert!(why.contains("exited with status 2"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_failing_or_hanging_runcmd_fails_the_module_once() {
    let d = root();
    let stop = AtomicBool::new(false);
    let late = run_late(
        &ctx(d.path(), "b", &stop),
        &cfg("runcmd: ['echo oops >&2; exit 3']"),
    );
    match outcome(&late, "runcmd") {
        ModuleOutcome::Failed { why } => {
            assert!(
                why.contains("exited with status 3") && why.contains("oops"),
                "{why}"
            )
        }
        other => panic!("{other:?}"),
    }
    // Reported once; the next run does not run it again.
    let again = run_late(
        &ctx(d.path(), "b", &stop),
        &cfg("runcmd: ['echo oops >&2; exit 3']"),
    );
    assert!(
        matches!(outcome(&again, "runcmd"), ModuleOutcome::Skipped { why } if why.contains("failed")),
        "{again:?}"
    );

    let d = root();
    let mut c = ctx(d.path(), "b", &stop);
    c.command_timeout = Duration::from_millis(500);
    let t = std::time::Instant::now();
    let late = run_late(&c, &cfg("runcmd: ['sleep 30 & sleep 30']"));
    assert!(t.elapsed() < Duration::from_secs(15), "{:?}", t.elapsed());
    assert!(
        matches!(outcome(&late, "runcmd"), ModuleOutcome::Failed { why } if why.contains("ran longer than")),
        "{late:?}"
    );
}

#[test]
fn packages_run_the_roots_apt_get_with_cloud_inits_command_lines() {
    let d = root();
    let apt = d.path().join("usr/bin/apt-get");
    fs::create_dir_all(apt.parent().unwrap()).unwrap();
    // Our own stand-in: records its arguments and the front end it was given.
    fs::write(
        &apt,
        "#!/bin/sh\necho \"$DEBIAN_FRONTEND $*\" >> /root/apt\n",
    )
    .unwrap();
    fs::set_permissions(&apt, fs::Permissions::from_mode(0o755)).unwrap();
    let stop = AtomicBool::new(false);
    let c = cfg("packages: [nginx, [libc6, 2.36-9+deb12u4]]\npackage_upgrade: true\n");
    let late = run_late(&ctx(d.path(), "b", &stop), &c);
    assert!(
        matches!(outcome(&late, "package_update_upgrade_install"), ModuleOutcome::Ran { note } if note.contains("apt-get")),
        "{late:?}"
    );
    let opts = "--option=Dpkg::Options::=--force-confold --option=Dpkg::options::=--force-unsafe-io --assume-yes --quiet";
    assert_eq!(
        read(d.path(), "/root/apt"),
        format!(
            "noninteractive {opts} update\nnoninteractive {opts} dist-upgrade\nnoninteractive {opts} install nginx libc6=2.36-9+deb12u4\n"
        )
    );
    // A failing apt-get fails the module, naming it.
    let d = root();
    let apt = d.path().join("usr/bin/apt-get");
    fs::create_dir_all(apt.parent().unwrap()).unwrap();
    fs::write(
        &apt,
        "#!/bin/sh\necho 'E: Unable to locate package nope'\nexit 100\n",
    )
    .unwrap();
    fs::set_permissions(&apt, fs::Permissions::from_mode(0o755)).unwrap();
    let late = run_late(&ctx(d.path(), "b", &stop), &cfg("packages: [nope]"));
    assert!(
        matches!(outcome(&late, "package_update_upgrade_install"), ModuleOutcome::Failed { why } if why.contains("status 100") && why.contains("Unable to locate")),
        "{late:?}"
    );
    // No package manager at all.
    let d = root();
    let late = run_late(&ctx(d.path(), "b", &stop), &cfg("packages: [nginx]"));
    assert!(
        matches!(outcome(&late, "package_update_upgrade_install"), ModuleOutcome::Failed { why } if why.contains("no package manager")),
        "{late:?}"
    );
}

#[test]
fn write_files_early_and_deferred_with_owners() {
    let d = root();
    fs::write(d.path().join("etc/motd"), "hello\n").unwrap();
    let stop = AtomicBool::new(false);
    let c = cfg("write_files:\n\
         - {path: /srv/web/index.html, content: hi, owner: 'web:ops', permissions: '0640'}\n\
         - {path: /etc/motd, content: \"more\\n\", append: true}\n\
         - {path: /etc/late.conf, content: late, defer: true}\n");
    let early = run_early(&ctx(d.path(), "b", &stop), &c);
    assert!(
        matches!(outcome(&early, "write_files"), ModuleOutcome::Ran { .. }),
        "{early:?}"
    );
    let m = fs::metadata(d.path().join("srv/web/index.html")).unwrap();
    assert_eq!((m.uid(), m.gid(), m.mode() & 0o7777), (1500, 1700, 0o640));
    assert_eq!(read(d.path(), "/etc/motd"), "hello\nmore\n");
    assert!(!d.path().join("etc/late.conf").exists());
    let late = run_late(&ctx(d.path(), "b", &stop), &c);
    assert!(
        matches!(
            outcome(&late, "write_files_deferred"),
            ModuleOutcome::Ran { .. }
        ),
        "{late:?}"
    );
    assert_eq!(read(d.path(), "/etc/late.conf"), "late");
    // Appending is per instance: a second run does not append again.
    run_early(&ctx(d.path(), "b2", &stop), &c);
    assert_eq!(read(d.path(), "/etc/motd"), "hello\nmore\n");

    // Entries for one path apply in order, as cloud-init writes them: the second sees
    // the first; a deferred entry (written in the late stage) sees both, wherever it
    // stands in the list.
    let d = root();
    let c = cfg("write_files:\n\
         - {path: /etc/app.conf, content: \"late\\n\", append: true, defer: true}\n\
         - {path: /etc/app.conf, content: \"a\\n\"}\n\
         - {path: /etc/app.conf, content: \"b\\n\", append: true}\n");
    run_early(&ctx(d.path(), "b", &stop), &c);
    assert_eq!(read(d.path(), "/etc/app.conf"), "a\nb\n");
    run_late(&ctx(d.path(), "b", &stop), &c);
    assert_eq!(read(d.path(), "/etc/app.conf"), "a\nb\nlate\n");

    // An owner the root lacks fails the module and writes nothing of it.
    let d = root();
    let c = cfg("write_files:\n- {path: /etc/a, content: a}\n- {path: /etc/b, content: b, owner: 'ghost:root'}\n");
    let early = run_early(&ctx(d.path(), "b", &stop), &c);
    assert!(
        matches!(outcome(&early, "write_files"), ModuleOutcome::Failed { why } if why.contains("write_files[1]") && why.contains("ghost")),
        "{early:?}"
    );
    assert!(!d.path().join("etc/a").exists());
}

#[test]
fn host_name_time_zone_and_what_another_root_never_gets() {
    let d = root();
    fs::write(d.path().join("etc/hosts"), "127.0.0.1 localhost\n").unwrap();
    let zone = d.path().join("usr/share/zoneinfo/Europe");
    fs::create_dir_all(&zone).unwrap();
    fs::write(zone.join("Berlin"), "TZif").unwrap();
    let stop = AtomicBool::new(false);
    let c = cfg(
        "fqdn: web.example.com\nmanage_etc_hosts: localhost\ntimezone: Europe/Berlin\n\
         power_state: {mode: reboot}\nfinal_message: done after $UPTIME s\n",
    );
    let early = run_early(&ctx(d.path(), "b", &stop), &c);
    assert_eq!(read(d.path(), "/etc/hostname"), "web\n");
    assert_eq!(
        read(d.path(), "/etc/hosts"),
        "127.0.0.1 localhost\n127.0.1.1\tweb.example.com\tweb\n"
    );
    for m in ["growpart", "resizefs"] {
        assert!(
            matches!(outcome(&early, m), ModuleOutcome::Skipped { why } if why.contains("not the running system")),
            "{early:?}"
        );
    }
    let late = run_late(&ctx(d.path(), "b", &stop), &c);
    assert_eq!(
        fs::read_link(d.path().join("etc/localtime")).unwrap(),
        Path::new("/usr/share/zoneinfo/Europe/Berlin")
    );
    assert_eq!(read(d.path(), "/etc/timezone"), "Europe/Berlin\n");
    assert!(
        matches!(outcome(&late, "power_state_change"), ModuleOutcome::Skipped { why } if why.contains("not the running system")),
        "{late:?}"
    );
    assert!(
        matches!(outcome(&late, "final_message"), ModuleOutcome::Ran { note } if note.starts_with("done after ") && !note.contains('$')),
        "{late:?}"
    );
    let order: Vec<&str> = late.iter().map(|r| r.module).collect();
    assert_eq!(order, vmcust::test_api::driver::late_modules());
}

#[test]
fn an_owned_file_is_unchanged_only_with_its_contents_mode_and_owner() {
    use vmcust::test_api::apply::{apply, dry_run, Change};
    use vmcust::test_api::plan::{Action, Contents, FileOwner, Plan};
    let d = root();
    let r = Root::new(d.path()).unwrap();
    let plan = Plan {
        actions: vec![Action::write_file_as(
            "/srv/owned",
            Contents::sensitive(b"secret".to_vec()),
            0o600,
            FileOwner::Chown {
                uid: 1500,
                gid: 1700,
            },
            "test",
        )],
    };
    assert_eq!(apply(&r, &plan).unwrap(), [Change::Created]);
    assert_eq!(dry_run(&r, &plan).unwrap(), [Change::Unchanged]);
    let f = d.path().join("srv/owned");
    std::os::unix::fs::chown(&f, Some(0), Some(0)).unwrap();
    assert_eq!(dry_run(&r, &plan).unwrap(), [Change::Updated]);
    assert_eq!(apply(&r, &plan).unwrap(), [Change::Updated]);
    let m = fs::metadata(&f).unwrap();
    assert_eq!((m.uid(), m.gid(), m.mode() & 0o7777), (1500, 1700, 0o600));
    assert!(!format!("{plan:?}").contains("secret"));
}

/// A MIME multipart of `(headers, body)` parts.
fn mime(parts: &[(&str, &str)]) -> String {
    let mut s =
        String::from("MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"XX\"\n\n");
    for (headers, body) in parts {
        s.push_str(&format!("--XX\n{headers}\n\n{body}\n"));
    }
    s + "--XX--\n"
}

/// Script parts over two boots: the boothook before bootcmd on every boot with
/// `INSTANCE_ID`, the vendor script with its prefix, per-once once, per-boot on each boot,
/// and scripts_user's scripts once in name order with runcmd's among them; a failing one
/// fails scripts_user and stops none of the others.
#[test]
fn script_parts_run_in_cloud_inits_order_and_frequencies() {
    let d = root();
    let stop = AtomicBool::new(false);
    let named = |n: &str| format!("Content-Disposition: attachment; filename=\"{n}\"");
    let (zz, fail, every) = (named("zz.sh"), named("aa-fail.sh"), named("every.sh"));
    let user = mime(&[
        (
            "Content-Type: text/cloud-config",
            "#cloud-config\nbootcmd: ['echo bootcmd >> /root/log']\n\
             runcmd: ['echo runcmd >> /root/log']\n\
             vendor_data: {prefix: [/bin/sh, -c, 'echo \"prefixed $0\" >> /root/log; . \"$0\"']}",
        ),
        (
            "Content-Type: text/cloud-boothook",
            "#cloud-boothook\n#!/bin/sh\necho \"hook $INSTANCE_ID\" >> /root/log",
        ),
        (
            &format!("Content-Type: text/x-shellscript\n{zz}"),
            "#!/bin/sh\necho zz >> /root/log",
        ),
        (
            "Content-Type: text/x-shellscript",
            "#!/bin/sh\necho user >> /root/log",
        ),
        (
            &format!("Content-Type: text/x-shellscript\n{fail}"),
            "#!/bin/sh\necho fail >> /root/log\nexit 7",
        ),
        (
            &format!("Content-Type: text/x-shellscript-per-boot\n{every}"),
            "#!/bin/sh\necho boot >> /root/log",
        ),
        (
            "Content-Type: text/x-shellscript-per-once",
            "#!/bin/sh\necho once >> /root/log",
        ),
    ]);
    let vendor = mime(&[(
        "Content-Type: text/x-shellscript",
        "#!/bin/sh\necho vendor >> /root/log",
    )]);
    let u = vmcust::test_api::userdata::read(user.as_bytes(), Some(vendor.as_bytes())).unwrap();
    assert!(u.problems.is_empty(), "{:?}", u.problems);
    let boot = |id: &str| {
        let mut c = ctx(d.path(), id, &stop);
        c.script_parts = u.scripts.clone();
        let early = run_early(&c, &u.config);
        let late = run_late(&c, &u.config);
        (early, late)
    };
    let (early, late) = boot("boot-1");
    let script = "/var/lib/vmcust/instances/i-test/scripts";
    let first = format!(
        "hook i-test\nbootcmd\nprefixed {script}/vendor/part-001\nvendor\nonce\nboot\nfail\nuser\nruncmd\nzz\n"
    );
    assert_eq!(read(d.path(), "/root/log"), first);
    assert!(
        matches!(outcome(&early, "boothooks"), ModuleOutcome::Ran { note } if note == "ran part-002"),
        "{early:?}"
    );
    for m in [
        "scripts_vendor",
        "scripts_per_once",
        "scripts_per_boot",
        "runcmd",
    ] {
        assert!(
            matches!(outcome(&late, m), ModuleOutcome::Ran { .. }),
            "{m}: {late:?}"
        );
    }
    assert!(
        matches!(
            outcome(&late, "scripts_per_instance"),
            ModuleOutcome::Skipped { .. }
        ),
        "{late:?}"
    );
    match outcome(&late, "scripts_user") {
        ModuleOutcome::Failed { why } => assert!(
            why.starts_with("1 of 3 scripts failed: aa-fail.sh (user-data part 4)")
                && why.contains("exited with status 7"),
            "{why}"
        ),
        other => panic!("{other:?}"),
    }
    let order: Vec<&str> = late.iter().map(|r| r.module).collect();
    assert_eq!(order, vmcust::test_api::driver::late_modules());
    let order: Vec<&str> = early.iter().map(|r| r.module).collect();
    assert_eq!(order, vmcust::test_api::driver::early_modules());
    for f in [
        "part-004",
        "zz.sh",
        "runcmd",
        "per-boot/every.sh",
        "per-once/part-007",
    ] {
        let m = fs::metadata(d.path().join(format!("{}/{f}", &script[1..]))).unwrap();
        assert_eq!(m.mode() & 0o7777, 0o700, "{f}");
    }
    // The boothook is written without its #cloud-boothook line.
    assert_eq!(
        read(
            d.path(),
            "/var/lib/vmcust/instances/i-test/boothooks/part-002"
        ),
        "#!/bin/sh\necho \"hook $INSTANCE_ID\" >> /root/log"
    );
    // The same boot again (a restarted unit): nothing runs twice.
    let (early, late) = boot("boot-1");
    assert_eq!(read(d.path(), "/root/log"), first);
    for r in early.iter().chain(&late) {
        assert!(
            !matches!(
                r.outcome,
                ModuleOutcome::Ran { .. } | ModuleOutcome::Failed { .. }
            ) || r.module == "final_message",
            "{r:?}"
        );
    }
    // The next boot: the boothook, bootcmd and the per-boot script again, nothing else.
    boot("boot-2");
    assert_eq!(
        read(d.path(), "/root/log"),
        format!("{first}hook i-test\nbootcmd\nboot\n")
    );
}
