//! Scripts stay in their root (issue 16 item 4): under `run --root DIR` the custom
//! scripts and `#!` user-data run sealed inside DIR (DIR is their `/`), with `/proc`,
//! `/sys` and `/dev` of their own mounted there only for them, and are refused where that
//! cannot be done (tests/sandbox.rs: what else of the machine they cannot reach). Threat: an
//! image builder's build host running the clone's scripts as root.

mod support;

use std::fs;
use std::path::Path;

use support::{text, vm::Vm};

const SPEC: &str = "[NETWORK]\nHOSTNAME = jailed\n[NIC-CONFIG]\nNICS = NIC1\n[NIC1]\n\
MACADDR = 00:50:56:a6:8c:08\nBOOTPROTO = dhcp\n[MISC]\nMARKER-ID = m-1\n\
[CUSTOM-SCRIPT]\nSCRIPT-NAME = script0001.bat\n";

/// A name no other run uses, so that a file the script wrote on this machine is found.
fn unique() -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{}-{t}", std::process::id())
}

/// What the script saw of `/proc`, `/sys` and `/dev`, written into `/root/seen`: its own
/// `/proc`, an empty `/sys` (not even the root's own files under it), a working `/dev`.
const PROBE: &str = "test -e /proc/self/stat && echo proc >> /root/seen\n\
test -d /sys && ! test -e /sys/class && echo sys >> /root/seen\n\
echo x > /dev/null && echo dev >> /root/seen\n";

/// The mounts of this machine under `dir`.
fn mounts_under(dir: &Path) -> Vec<String> {
    let dir = fs::canonicalize(dir).unwrap();
    fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .filter(|l| {
            l.split_whitespace()
                .nth(4)
                .is_some_and(|m| Path::new(m).starts_with(&dir))
        })
        .map(str::to_string)
        .collect()
}

// threat T12 (docs/security.md)
#[test]
fn scripts_and_user_data_write_absolute_paths_inside_the_root() {
    let id = unique();
    let marker = format!("/tmp/marker-{id}");
    let etc = format!("/etc/x-{id}");
    let vm = Vm::new();
    vm.enable_scripts();
    for dir in ["/tmp", "/root"] {
        fs::create_dir_all(vm.path(dir)).unwrap();
    }
    let script = format!("#!/bin/sh\necho \"$1\" >> {marker}\necho \"$1\" >> {etc}\n{PROBE}");
    vm.hand_over(SPEC, &[("script0001.bat", &script)]);
    let out = vm.run("early");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let late = vm.run("late");
    assert_eq!(late.status.code(), Some(0), "{}", text(&late.stderr));
    assert_eq!(
        fs::read_to_string(vm.path(&marker)).unwrap(),
        "precustomization\npostcustomization\n"
    );
    assert_eq!(
        fs::read_to_string(vm.path(&etc)).unwrap(),
        "precustomization\npostcustomization\n"
    );
    assert!(
        !Path::new(&marker).exists(),
        "the script wrote {marker} on this machine"
    );
    assert!(
        !Path::new(&etc).exists(),
        "the script wrote {etc} on this machine"
    );
    assert_eq!(
        fs::read_to_string(vm.path("/root/seen")).unwrap(),
        "proc\nsys\ndev\n".repeat(2),
        "the script saw its own /proc, an empty /sys and a /dev"
    );
    assert_eq!(
        mounts_under(vm.root.path()),
        Vec::<String>::new(),
        "mounts left behind"
    );
    // The root's own /sys (here the test's DMI files) is untouched by the mount.
    assert!(vm.path("/sys/class/dmi/id/product_uuid").exists());

    // `#!` user-data, through a raw cloud-init spec.
    let vm = Vm::new();
    fs::create_dir_all(vm.path("/tmp")).unwrap();
    let md = "{\"instance-id\": \"jail-1\", \"local-hostname\": \"jail\"}";
    let ud = format!("#!/bin/sh\necho user-data >> {marker}\necho user-data >> {etc}\n");
    vm.hand_over(
        &fs::read_to_string(support::example("raw-cloud-init.cfg")).unwrap(),
        &[("metadata", md), ("userdata", &ud)],
    );
    assert_eq!(vm.run("early").status.code(), Some(0));
    let late = vm.run("late");
    assert_eq!(late.status.code(), Some(0), "{}", text(&late.stderr));
    assert_eq!(fs::read_to_string(vm.path(&marker)).unwrap(), "user-data\n");
    assert_eq!(fs::read_to_string(vm.path(&etc)).unwrap(), "user-data\n");
    assert!(!Path::new(&marker).exists() && !Path::new(&etc).exists());
}

/// A root without its own shell: the script is refused with the reason, reported to
/// vCenter, and nothing runs on this machine.
// threat T12 (docs/security.md)
#[test]
fn a_root_without_a_shell_is_refused() {
    let id = unique();
    let marker = format!("/tmp/marker-{id}");
    let vm = Vm::new();
    vm.enable_scripts();
    fs::remove_file(vm.path("/bin/sh")).unwrap();
    vm.hand_over(
        SPEC,
        &[(
            "script0001.bat",
            &format!("#!/bin/sh\necho ran > {marker}\n"),
        )],
    );
    let out = vm.run("early");
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("its interpreter /bin/sh (the #! line) is not in the root"),
        "{err}"
    );
    let last = vm.final_state().unwrap();
    assert!(
        last.contains(" 4 100 ") && last.contains("not in the root"),
        "{last}"
    );
    assert!(!Path::new(&marker).exists());

    // No /proc to mount on: refused likewise.
    let vm = Vm::new();
    vm.enable_scripts();
    fs::remove_dir(vm.path("/proc")).unwrap();
    vm.hand_over(SPEC, &[("script0001.bat", "#!/bin/sh\ntrue\n")]);
    let out = vm.run("early");
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("has no /proc directory to mount /proc on"),
        "{err}"
    );
}
