//! The files and answers provisioners wait on (docs/boot.md, "What provisioners wait
//! on"): cloud-init's `status.json`, `result.json` and `boot-finished` with cloud-init's
//! life cycle, and open-vm-tools' exchange with the stand-in (tests/support/tools.rs):
//! tools waits for the whole boot, never reboots in the middle, and vCenter gets one final
//! state.

mod support;

use std::fs;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use support::tools::{CiStatus, Release, Tools};
use support::vm::Vm;
use support::{example, text};

fn json(vm: &Vm, p: &str) -> serde_json::Value {
    let t = fs::read_to_string(vm.path(p)).unwrap_or_else(|e| panic!("{p}: {e}"));
    serde_json::from_str(&t).unwrap()
}

fn stand_in(vm: &Vm, args: &[&str]) -> std::process::Output {
    let tools = Tools::new(
        Release::From13010,
        vm.root.path(),
        &vm.host.path().join("bin"),
    );
    Command::new(&tools.cloud_init)
        .args(args)
        .env("VMCUST_ROOT", vm.root.path())
        .output()
        .unwrap()
}

/// guestinfo metadata and a user-data script that leaves `/ran` (after `pause` seconds).
fn guestinfo_boot(vm: &Vm, pause: &str) {
    fs::write(
        vm.host.path().join("guestinfo.metadata"),
        "instance-id: gi-1\nlocal-hostname: web\n",
    )
    .unwrap();
    fs::write(
        vm.host.path().join("guestinfo.userdata"),
        format!("#!/bin/sh\nsleep {pause}\necho ran > /ran\n"),
    )
    .unwrap();
}

#[test]
fn the_wait_files_follow_cloud_inits_life_cycle() {
    let vm = Vm::new();
    guestinfo_boot(&vm, "0");
    // The previous boot's records, which the earliest stage removes.
    for (p, t) in [
        (
            "/var/lib/cloud/data/status.json",
            "{\"v1\": {\"stage\": \"modules-final\"}}",
        ),
        (
            "/var/lib/cloud/data/result.json",
            "{\"v1\": {\"errors\": []}}",
        ),
        (
            "/var/lib/cloud/instances/old/boot-finished",
            "1.0 - x - v. 1\n",
        ),
    ] {
        fs::create_dir_all(vm.path(p).parent().unwrap()).unwrap();
        fs::write(vm.path(p), t).unwrap();
    }
    std::os::unix::fs::symlink("instances/old", vm.path("/var/lib/cloud/instance")).unwrap();
    fs::create_dir_all(vm.path("/run/cloud-init")).unwrap();
    std::os::unix::fs::symlink(
        "../../var/lib/cloud/data/result.json",
        vm.path("/run/cloud-init/result.json"),
    )
    .unwrap();

    let early = vm.run("early");
    assert_eq!(early.status.code(), Some(0), "{}", text(&early.stderr));
    for gone in [
        "/var/lib/cloud/data/result.json",
        "/run/cloud-init/result.json",
        "/var/lib/cloud/instances/old/boot-finished",
    ] {
        assert!(
            fs::symlink_metadata(vm.path(gone)).is_err(),
            "{gone} stayed"
        );
    }
    let st = json(&vm, "/var/lib/cloud/data/status.json");
    let v1 = &st["v1"];
    assert!(
        v1["init-local"]["start"].is_f64() && v1["init"]["finished"].is_f64(),
        "{st}"
    );
    assert!(v1["modules-final"]["start"].is_null(), "{st}");
    assert_eq!(v1["stage"], serde_json::Value::Null);
    assert_eq!(
        fs::read_link(vm.path("/run/cloud-init/status.json")).unwrap(),
        Path::new("../../var/lib/cloud/data/status.json")
    );
    // Between the stages: still running for every waiter.
    let o = stand_in(&vm, &["status"]);
    assert_eq!(
        (o.status.code(), text(&o.stdout)),
        (Some(0), "status: running\n".into())
    );

    let late = vm.run("late");
    assert_eq!(late.status.code(), Some(0), "{}", text(&late.stderr));
    assert!(vm.path("/ran").is_file(), "the user-data ran");
    let st = json(&vm, "/var/lib/cloud/data/status.json");
    let v1 = &st["v1"];
    assert_eq!(v1["datasource"], "DataSourceVMware [seed=guestinfo]");
    for stage in ["init-local", "init", "modules-config", "modules-final"] {
        let s = &v1[stage];
        assert!(
            s["start"].is_f64() && s["finished"].is_f64(),
            "{stage}: {st}"
        );
        assert_eq!(s["errors"], serde_json::json!([]), "{stage}");
        assert_eq!(s["recoverable_errors"], serde_json::json!({}), "{stage}");
    }
    assert_eq!(v1["stage"], serde_json::Value::Null);
    assert_eq!(
        json(&vm, "/run/cloud-init/result.json"),
        serde_json::json!({"v1": {"datasource": "DataSourceVMware [seed=guestinfo]", "errors": []}})
    );
    assert_eq!(
        fs::read_link(vm.path("/var/lib/cloud/instance")).unwrap(),
        Path::new("instances/gi-1")
    );
    let line = fs::read_to_string(vm.path("/var/lib/cloud/instances/gi-1/boot-finished")).unwrap();
    let fields: Vec<&str> = line.trim_end_matches('\n').split(" - ").collect();
    assert!(line.ends_with('\n') && fields.len() == 3, "{line:?}");
    assert!(fields[0].parse::<f64>().is_ok(), "{line:?}");
    assert!(
        fields[1].ends_with(" +0000") && fields[2].starts_with("v. "),
        "{line:?}"
    );

    // The stand-in's document has cloud-init's keys.
    let o = stand_in(&vm, &["status", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for key in [
        "boot_status_code",
        "datasource",
        "detail",
        "errors",
        "extended_status",
        "last_update",
        "recoverable_errors",
        "status",
        "init",
        "init-local",
        "modules-config",
        "modules-final",
        "stage",
    ] {
        assert!(doc.get(key).is_some(), "no {key}: {doc}");
    }
    assert_eq!(
        (&doc["status"], &doc["datasource"]),
        (&"done".into(), &"vmware".into())
    );

    // The next boot's earliest stage starts from nothing again.
    vm.run("early");
    assert!(!vm.path("/var/lib/cloud/instance/boot-finished").exists());
    assert!(!vm.path("/var/lib/cloud/data/result.json").exists());
    let st = json(&vm, "/var/lib/cloud/data/status.json");
    assert!(st["v1"]["modules-final"]["start"].is_null(), "{st}");

    // Sealing the template removes them, as `cloud-init clean` removes /var/lib/cloud.
    vm.run("late");
    let o = stand_in(&vm, &["clean"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    for p in [
        "/var/lib/cloud/data/status.json",
        "/var/lib/cloud/data/result.json",
        "/run/cloud-init/status.json",
        "/run/cloud-init/result.json",
        "/var/lib/cloud/instance",
        "/var/lib/cloud/instances/gi-1/boot-finished",
    ] {
        assert!(
            fs::symlink_metadata(vm.path(p)).is_err(),
            "{p} stayed after clean"
        );
    }
}

/// Where a real cloud-init is installed, its files are its own: vmcust writes none.
#[test]
fn a_real_cloud_init_keeps_its_own_files() {
    let vm = Vm::new();
    fs::create_dir_all(vm.path("/usr/bin")).unwrap();
    fs::write(vm.path("/usr/bin/cloud-init"), "#!/usr/bin/python3\n").unwrap();
    fs::write(
        vm.host.path().join("guestinfo.metadata"),
        "instance-id: gi-1\n",
    )
    .unwrap();
    vm.boot();
    for p in [
        "/var/lib/cloud/data",
        "/run/cloud-init",
        "/var/lib/cloud/instance",
    ] {
        assert!(fs::symlink_metadata(vm.path(p)).is_err(), "{p} written");
    }
}

/// Runs a boot (early, then late, as systemd does) on a thread; `done` is set when the
/// late stage has exited.
fn boot_in_background(vm: &Vm, done: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    let early = vm.command("early", 0);
    let late = vm.command("late", 0);
    std::thread::spawn(move || {
        for mut cmd in [early, late] {
            let out = cmd.output().unwrap();
            assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        }
        done.store(true, Ordering::SeqCst);
    })
}

/// tools' traditional workflow with the stand-in installed: after its own engine it polls
/// `cloud-init status` every 5 s before rebooting. Each release, on a clean boot and on
/// one with a recoverable error (a settings problem), waits until the boot is over — no
/// answer says done, exits 2 or reads as UNKNOWN before the last user-data action — and
/// no reader sees `boot-finished` or `result.json` before it either.
#[test]
fn tools_waits_for_the_whole_boot_and_never_reboots_in_the_middle() {
    for release in [Release::Before13010, Release::From13010] {
        for settings_problem in [false, true] {
            let name = format!("{release:?}, settings problem {settings_problem}");
            let vm = Vm::new();
            if settings_problem {
                vm.settings("[imc]\nmax_wait = soon\n");
            }
            guestinfo_boot(&vm, "1");
            let mut tools = Tools::new(release, vm.root.path(), &vm.host.path().join("bin"));
            // The template's tools.conf as docs/vcenter.md asks: long enough for the boot.
            tools.wait_timeout = 600;
            let done = Arc::new(AtomicBool::new(false));
            let mut boot = None;
            let (polls, timed_out) = tools.wait_then_reboot(|second| {
                // tools asks before the units start, then while they run.
                if second == 5 {
                    boot = Some(boot_in_background(&vm, done.clone()));
                }
                if !done.load(Ordering::SeqCst) {
                    for p in [
                        "/var/lib/cloud/instance/boot-finished",
                        "/var/lib/cloud/data/result.json",
                    ] {
                        // Present only once the late stage wrote it, at its very end.
                        if vm.path(p).exists() {
                            assert!(
                                vm.path("/ran").exists(),
                                "{name}: {p} before the user-data ran"
                            );
                        }
                    }
                }
            });
            boot.unwrap().join().unwrap();
            assert!(!timed_out, "{name}: {polls:?}");
            let last = polls.last().unwrap();
            // After the end, tools before 13.0.10 read exit 2 as UNKNOWN: it stops waiting
            // then, which is the right time anyway.
            let end = match (release, settings_problem) {
                (Release::Before13010, true) => CiStatus::Unknown,
                _ => CiStatus::Done,
            };
            assert_eq!(last.status, end, "{name}: {polls:?}");
            assert!(
                done.load(Ordering::SeqCst),
                "{name}: tools stopped waiting mid-boot: {polls:?}"
            );
            assert!(vm.path("/ran").exists(), "{name}");
            for p in &polls[..polls.len() - 1] {
                assert!(
                    matches!(p.status, CiStatus::NotRun | CiStatus::Running) && p.code == Some(0),
                    "{name}: {polls:?}"
                );
            }
            assert_eq!(polls[0].status, CiStatus::NotRun, "{name}");
            assert!(
                polls.iter().any(|p| p.status == CiStatus::Running),
                "{name}: {polls:?}"
            );
            // The recoverable error is said once the boot is over (exit 2), never before.
            let want = if settings_problem { 2 } else { 0 };
            assert_eq!(last.code, Some(want), "{name}");
            assert!(tools.rebooted);
        }
    }
}

/// A raw cloud-init data spec: tools hands it over (`-v` is 21.1 or later) and leaves the
/// report and the reboot to "cloud-init"; vmcust sends exactly one final state, and the
/// stand-in says done only after the user-data ran.
#[test]
fn a_raw_data_spec_gets_exactly_one_final_state() {
    let vm = Vm::new();
    let mut tools = Tools::new(
        Release::Before13010,
        vm.root.path(),
        &vm.host.path().join("bin"),
    );
    assert!(tools.version().unwrap() >= (21, 1));
    let spec = fs::read_to_string(example("raw-cloud-init.cfg")).unwrap();
    assert!(tools.deploy_raw_data(
        &spec,
        &[
            ("metadata", "instance-id: raw-1\nlocal-hostname: raw-host\n"),
            ("userdata", "#!/bin/sh\necho ran > /ran\n"),
        ],
    ));
    assert!(!tools.rebooted);
    vm.boot();
    assert!(vm.path("/ran").exists());
    let finals: Vec<String> = tools
        .sent
        .iter()
        .cloned()
        .chain(vm.final_states())
        .filter(|s| {
            s.starts_with("deployPkg.update.state 5 ") || {
                // A failure state carries a code of 100 or more, or an error below 100 but 0.
                let code = s.split(' ').nth(2).unwrap_or("0");
                s.starts_with("deployPkg.update.state 4 ") && code != "0"
            }
        })
        .collect();
    assert_eq!(finals.len(), 1, "{finals:?} (tools sent {:?})", tools.sent);
    assert!(
        finals[0].starts_with("deployPkg.update.state 5 0 "),
        "{finals:?}"
    );
    let o = stand_in(&vm, &["status"]);
    assert_eq!(tools.read(&o), CiStatus::Done);
    assert_eq!(o.status.code(), Some(0));
}
