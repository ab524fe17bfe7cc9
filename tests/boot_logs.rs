//! The log of a boot reads as words: boots of a scratch root (a cloud-config from guestinfo
//! twice over, a vSphere spec with a custom script twice over) log no Rust debug
//! formatting — no `Skipped { why: … }`, no `AlreadyRan("…")`, no `Exited(0)`.

mod support;

use std::fs;

use support::vm::Vm;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The debug shapes a log line must not hold: a struct variant's `Name { `, a tuple
/// variant's or `Some`'s `Name(` before a quoted string or a number, a list of strings.
fn debug_shapes(line: &str) -> Vec<String> {
    let mut found = Vec::new();
    let bytes = line.as_bytes();
    for (i, w) in line.char_indices() {
        let before_is_name = i > 0 && (bytes[i - 1] as char).is_ascii_alphanumeric();
        let rest = &line[i..];
        if w == ' ' && before_is_name && rest.starts_with(" { ") {
            found.push(format!("`… {{ ` at byte {i}"));
        }
        if w == '(' && before_is_name {
            let next = rest[1..].chars().next();
            let name_start = line[..i]
                .rfind(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .map_or(0, |j| j + 1);
            let name = &line[name_start..i];
            // `Exited(0)`, `Some("x")`: a capitalised name right before `(` and a quote or digit.
            if name.starts_with(|c: char| c.is_ascii_uppercase())
                && matches!(next, Some('"') | Some('0'..='9'))
            {
                found.push(format!("`{name}(` at byte {i}"));
            }
        }
        if rest.starts_with("(\"") || rest.starts_with("[\"") {
            found.push(format!("`{}` at byte {i}", &rest[..2]));
        }
    }
    found
}

#[test]
fn the_shape_finder_finds_debug_output() {
    for (line, bad) in [
        ("outcome=Skipped { why: \"x\" }", true),
        ("turn=AlreadyRan(\"ran at boot 1\")", true),
        ("ended with Exited(1); the new network", true),
        ("args=[\"-c\", \"echo\"]", true),
        ("outcome=skipped: not in the cloud-config", false),
        ("turn=already ran: at boot boot-1", false),
        (
            "running module=runcmd program=/bin/sh args=-c 'echo (a) { b }'",
            false,
        ),
        ("vmcust (0.1.0) started", false),
    ] {
        assert_eq!(!debug_shapes(line).is_empty(), bad, "{line}");
    }
}

/// Every line of both stages' standard error and of the root's log, checked.
fn assert_words(vm: &Vm, outputs: &[std::process::Output]) {
    let mut all: Vec<String> = outputs.iter().map(|o| text(&o.stderr)).collect();
    all.push(fs::read_to_string(vm.path("/var/log/vmcust.log")).unwrap_or_default());
    let mut bad = Vec::new();
    for line in all.iter().flat_map(|t| t.lines()) {
        let shapes = debug_shapes(line);
        if !shapes.is_empty() {
            bad.push(format!("{line}\n    {}", shapes.join(", ")));
        }
    }
    assert!(
        bad.is_empty(),
        "debug formatting in the log:\n{}",
        bad.join("\n")
    );
    assert!(all.iter().any(|t| !t.is_empty()), "no log at all");
}

#[test]
fn a_cloud_config_boot_logs_words() {
    let vm = Vm::new();
    fs::create_dir_all(vm.path("/root")).unwrap();
    fs::create_dir_all(vm.path("/home")).unwrap();
    if !vm.path("/etc/group").exists() {
        fs::write(vm.path("/etc/group"), "root:x:0:\n").unwrap();
    }
    fs::write(
        vm.host.path().join("guestinfo.metadata"),
        "instance-id: logs-1\nlocal-hostname: words\n",
    )
    .unwrap();
    fs::write(
        vm.host.path().join("guestinfo.userdata"),
        "#cloud-config\n\
         bootcmd:\n  - echo boot >> /root/bootlog\n\
         runcmd:\n  - [sh, -c, 'echo run >> /root/runlog']\n  - echo \"two words\" >> /root/runlog\n\
         write_files:\n  - path: /etc/motd-words\n    content: hello\n\
         final_message: done\n",
    )
    .unwrap();
    let mut outputs = Vec::new();
    for _ in 0..2 {
        let (early, late) = vm.boot();
        outputs.push(early);
        outputs.push(late);
    }
    assert_eq!(
        fs::read_to_string(vm.path("/root/runlog")).unwrap(),
        "run\ntwo words\n"
    );
    assert_words(&vm, &outputs);
}

const SCRIPT_SPEC: &str = "[NETWORK]\nHOSTNAME = scripted\n[NIC-CONFIG]\nNICS = NIC1\n[NIC1]\n\
MACADDR = 00:50:56:a6:8c:08\nBOOTPROTO = dhcp\n[MISC]\nMARKER-ID = m-1\n\
[CUSTOM-SCRIPT]\nSCRIPT-NAME = script0001.bat\n";

#[test]
fn a_spec_with_a_script_logs_words() {
    let vm = Vm::new();
    vm.enable_scripts();
    let script = "#!/bin/sh\necho \"$1\" >> \"$(dirname \"$0\")/../ran\"\n";
    let mut outputs = Vec::new();
    for _ in 0..2 {
        vm.hand_over(SCRIPT_SPEC, &[("script0001.bat", script)]);
        let (early, late) = vm.boot();
        outputs.push(early);
        outputs.push(late);
    }
    assert_words(&vm, &outputs);
}

/// Host keys a sealed template no longer has (`clean --ssh-host-keys` recorded their
/// types) are logged as created; a machine-id the template kept, as replaced.
#[test]
fn missing_host_keys_are_created_not_replaced() {
    let vm = Vm::new();
    let ssh = vm.path("/etc/ssh");
    fs::create_dir_all(&ssh).unwrap();
    let made = std::process::Command::new("ssh-keygen")
        .args(["-q", "-N", "", "-C", "", "-t", "ed25519", "-f"])
        .arg(ssh.join("ssh_host_ed25519_key"))
        .status()
        .expect("ssh-keygen cannot run; install the Debian package openssh-client");
    assert!(made.success());
    let sealed = std::process::Command::new(env!("CARGO_BIN_EXE_vmcust"))
        .args(["clean", "--ssh-host-keys", "--root"])
        .arg(vm.root.path())
        .output()
        .unwrap();
    assert!(sealed.status.success(), "{}", text(&sealed.stderr));
    assert!(!ssh.join("ssh_host_ed25519_key").exists());
    fs::write(
        vm.host.path().join("guestinfo.metadata"),
        "instance-id: keys-1\nlocal-hostname: keys\n",
    )
    .unwrap();
    let early = vm.run("early");
    let log = text(&early.stderr)
        + &fs::read_to_string(vm.path("/var/log/vmcust.log")).unwrap_or_default();
    assert!(early.status.success(), "{log}");
    assert!(ssh.join("ssh_host_ed25519_key").exists(), "{log}");
    for key in ["ssh_host_ed25519_key", "ssh_host_ed25519_key.pub"] {
        let line = format!("clone hygiene: created /etc/ssh/{key}");
        assert!(log.contains(&line), "no {line:?} in {log}");
    }
    assert!(!log.contains("clone hygiene: replaced /etc/ssh"), "{log}");
}

/// A failed guestinfo customization shows in `vmcust status` as `failed: <why>`, never as
/// `failed (code 0)`.
#[test]
fn a_failed_instance_says_why_in_status() {
    let vm = Vm::new();
    fs::write(
        vm.host.path().join("guestinfo.metadata"),
        "instance-id: bad-1\nlocal-hostname: ok\n",
    )
    .unwrap();
    fs::write(
        vm.host.path().join("guestinfo.userdata"),
        "#cloud-config\nwrite_files:\n  - path: /etc/x\n    permissions: rw\n",
    )
    .unwrap();
    let early = vm.run("early");
    assert!(!early.status.success(), "{}", text(&early.stderr));
    let (_, status) = vm.status();
    let line = status
        .lines()
        .find(|l| l.starts_with("instance bad-1: "))
        .unwrap_or_else(|| panic!("{status}"));
    assert!(line.contains(": failed: "), "{status}");
    assert!(!line.contains("(code 0)"), "{status}");
}
