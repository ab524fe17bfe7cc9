//! Native cloud-config at boot: `#cloud-config` user-data from guestinfo applied by vmcust
//! itself on a root without cloud-init — its accounts with the plan, what it does not
//! apply named (the customization ends degraded, `status` exits 2), a bad document
//! refused with its line and nothing changed.

mod support;

use std::fs;
use std::process::Command;

use support::text;
use support::vm::Vm;

const KEY: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f ops@example";

/// A VM whose root has the account files a Debian system has.
fn vm_with_accounts() -> Vm {
    let vm = Vm::new();
    fs::write(
        vm.path("/etc/group"),
        "root:x:0:\nsudo:x:27:\nusers:x:100:\nnogroup:x:65534:\n",
    )
    .unwrap();
    fs::write(
        vm.path("/etc/gshadow"),
        "root:*::\nsudo:*::\nusers:*::\nnogroup:*::\n",
    )
    .unwrap();
    fs::create_dir_all(vm.path("/etc/skel")).unwrap();
    fs::create_dir_all(vm.path("/home")).unwrap();
    fs::write(vm.path("/etc/skel/.profile"), "# profile\n").unwrap();
    vm
}

fn user_data(vm: &Vm, doc: &str) {
    fs::write(
        vm.host.path().join("guestinfo.metadata"),
        "instance-id: cc-native-1\nlocal-hostname: cc-vm\n",
    )
    .unwrap();
    fs::write(vm.host.path().join("guestinfo.userdata"), doc).unwrap();
}

#[test]
fn a_sudo_user_with_a_key_is_created_without_cloud_init() {
    let vm = vm_with_accounts();
    user_data(
        &vm,
        &format!(
            "#cloud-config\ngroups: [ops]\nusers:\n  - name: alice\n    groups: [ops, sudo]\n    sudo: ALL=(ALL) NOPASSWD:ALL\n    shell: /bin/bash\n    ssh_authorized_keys:\n      - {KEY}\n"
        ),
    );
    let early = vm.run("early");
    assert_eq!(early.status.code(), Some(0), "{}", text(&early.stderr));
    let passwd = fs::read_to_string(vm.path("/etc/passwd")).unwrap();
    let alice = passwd
        .lines()
        .find(|l| l.starts_with("alice:"))
        .unwrap_or_else(|| panic!("no alice in\n{passwd}"));
    assert!(alice.ends_with(":/home/alice:/bin/bash"), "{alice}");
    let group = fs::read_to_string(vm.path("/etc/group")).unwrap();
    assert!(
        group
            .lines()
            .any(|l| l.starts_with("ops:") && l.ends_with(":alice")),
        "{group}"
    );
    assert!(group.lines().any(|l| l == "sudo:x:27:alice"), "{group}");
    let shadow = fs::read_to_string(vm.path("/etc/shadow")).unwrap();
    assert!(
        shadow.lines().any(|l| l.starts_with("alice:!")),
        "locked by default, as cloud-init: {shadow}"
    );
    let keys = fs::read_to_string(vm.path("/home/alice/.ssh/authorized_keys")).unwrap();
    assert!(keys.contains(KEY), "{keys}");
    let sudoers = fs::read_dir(vm.path("/etc/sudoers.d"))
        .unwrap()
        .map(|e| fs::read_to_string(e.unwrap().path()).unwrap())
        .collect::<String>();
    assert!(
        sudoers.contains("alice ALL=(ALL) NOPASSWD:ALL"),
        "{sudoers}"
    );
    let late = vm.run("late");
    assert_eq!(late.status.code(), Some(0), "{}", text(&late.stderr));
    let (code, st) = vm.status();
    assert_eq!(code, Some(0), "{st}");
    // A second boot changes nothing.
    let before = vm.state();
    let again = vm.run("early");
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
    assert_eq!(vm.state(), before);
}

/// What vmcust reads but does not apply is never dropped silently: the customization
/// ends degraded and `status` names the key and exits 2.
#[test]
fn a_key_vmcust_does_not_apply_ends_degraded() {
    let vm = vm_with_accounts();
    user_data(
        &vm,
        "#cloud-config\nusers: [{name: bob}]\nlandscape:\n  client: {url: 'https://landscape.invalid/message-system'}\n",
    );
    let early = vm.run("early");
    assert_eq!(early.status.code(), Some(0), "{}", text(&early.stderr));
    let log = text(&early.stderr);
    assert!(
        log.contains("not applied: ") && log.contains("landscape"),
        "{log}"
    );
    assert!(fs::read_to_string(vm.path("/etc/passwd"))
        .unwrap()
        .contains("\nbob:"));
    let late = vm.run("late");
    assert_eq!(late.status.code(), Some(0), "{}", text(&late.stderr));
    let (code, st) = vm.status();
    assert_eq!(code, Some(2), "{st}");
    assert!(
        st.contains("degraded: ") && st.contains("landscape"),
        "{st}"
    );
    // The stand-in and cloud-init's status.json say the same: a recoverable error, exit 2
    // once the boot is over (docs/boot.md, "Exit status 2").
    let link = vm.host.path().join("cloud-init");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_vmcust"), &link).unwrap();
    let o = std::process::Command::new(&link)
        .args(["status", "--long"])
        .env("VMCUST_ROOT", vm.root.path())
        .output()
        .unwrap();
    let long = text(&o.stdout);
    assert_eq!(o.status.code(), Some(2), "{long}");
    assert!(long.contains("extended_status: degraded done"), "{long}");
    assert!(
        long.contains("recoverable_errors:\nWARNING:\n\t- ") && long.contains("landscape"),
        "{long}"
    );
    let status = fs::read_to_string(vm.path("/var/lib/cloud/data/status.json")).unwrap();
    let status: serde_json::Value = serde_json::from_str(&status).unwrap();
    let warned = status["v1"]["init-local"]["recoverable_errors"]["WARNING"].to_string();
    assert!(warned.contains("landscape"), "{status}");
}

/// One policy on every surface: what vmcust does not apply — a cloud-init key it lacks
/// (`snap`), a value cloud-init takes that it cannot apply (`ntp_client: myntpclient`) —
/// costs nothing else; `plan`, the log, `status` (exit 2) and `query` name each with what
/// vmcust offers instead. With `[user-data] cloud_config_unknown = refuse` the document is
/// refused whole and nothing changes.
#[test]
fn what_is_not_applied_is_named_everywhere_with_the_nearest_offer_or_refused() {
    let doc = "#cloud-config\nusers: [{name: erin}]\nlxd: {init: {storage_backend: dir}}\nntp: {ntp_client: myntpclient}\n";
    let hint = "install lxd with packages: and run lxd init --preseed with runcmd:";
    let vm = vm_with_accounts();
    user_data(&vm, doc);
    let plan = text(&vm.vmcust(&["plan"]).stdout);
    assert!(
        plan.contains("not applied: ") && plan.contains(hint),
        "{plan}"
    );
    assert!(plan.contains("ntp.ntp_client"), "{plan}");
    let early = vm.run("early");
    assert_eq!(early.status.code(), Some(0), "{}", text(&early.stderr));
    assert!(fs::read_to_string(vm.path("/etc/passwd"))
        .unwrap()
        .contains("\nerin:"));
    let late = vm.run("late");
    assert_eq!(late.status.code(), Some(0), "{}", text(&late.stderr));
    let (code, st) = vm.status();
    assert_eq!(code, Some(2), "{st}");
    assert!(st.contains("degraded: ") && st.contains(hint), "{st}");
    assert!(st.contains("ntp.ntp_client"), "{st}");
    let q = Command::new(env!("CARGO_BIN_EXE_vmcust"))
        .args(["query", "--root"])
        .arg(vm.root.path())
        .output()
        .unwrap();
    let q = text(&q.stdout);
    assert!(q.contains("degraded: ") && q.contains(hint), "{q}");

    let vm = vm_with_accounts();
    user_data(&vm, doc);
    fs::create_dir_all(vm.path("/etc/vmcust")).unwrap();
    fs::write(
        vm.path("/etc/vmcust/vmcust.conf"),
        "[user-data]\nhandler = native\ncloud_config_unknown = refuse\n",
    )
    .unwrap();
    let mut before = vm.state();
    before.retain(|p, _| !p.starts_with("var/lib/vmcust"));
    let early = vm.run("early");
    let err = text(&early.stderr);
    assert_eq!(early.status.code(), Some(65), "{err}");
    assert!(
        err.contains("cloud_config_unknown = refuse") && err.contains("lxd"),
        "{err}"
    );
    let mut after = vm.state();
    after.retain(|p, _| !p.starts_with("var/lib/vmcust"));
    assert_eq!(after, before);
}

/// A cloud-config with a wrong value is refused whole, naming its line and key; nothing
/// is changed.
#[test]
fn a_bad_cloud_config_changes_nothing() {
    let vm = vm_with_accounts();
    user_data(
        &vm,
        "#cloud-config\nusers:\n  - name: carol\n    shell: bash\n",
    );
    let before = vm.state();
    let early = vm.run("early");
    let err = text(&early.stderr);
    assert_eq!(early.status.code(), Some(65), "{err}");
    assert!(
        err.contains("line 4") && err.contains("users[0].shell"),
        "{err}"
    );
    let mut after = vm.state();
    after.retain(|p, _| !p.starts_with("var/lib/vmcust"));
    let mut before = before;
    before.retain(|p, _| !p.starts_with("var/lib/vmcust"));
    assert_eq!(after, before);
}

/// `plan` shows the users and groups the cloud-config creates, and what is not applied.
#[test]
fn plan_shows_the_accounts_and_what_is_not_applied() {
    let vm = vm_with_accounts();
    user_data(
        &vm,
        "#cloud-config\ngroups: [ops]\nusers: [{name: dave, groups: [ops]}]\nlxd: {init: {storage_backend: dir}}\n",
    );
    let out = Command::new(env!("CARGO_BIN_EXE_vmcust"))
        .args(["plan", "--root"])
        .arg(vm.root.path())
        .arg("--guestinfo-dir")
        .arg(vm.host.path())
        .output()
        .unwrap();
    let plan = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(plan.contains("cloud-config users: dave"), "{plan}");
    assert!(plan.contains("cloud-config groups: ops"), "{plan}");
    assert!(plan.contains("/etc/passwd"), "{plan}");
    assert!(
        plan.contains("not applied: ") && plan.contains("lxd"),
        "{plan}"
    );
}

/// Files, `bootcmd` and `runcmd` at boot: the file is written in the early stage, runcmd
/// runs once in the late stage, and a second boot runs bootcmd again and nothing else.
#[test]
fn bootcmd_every_boot_runcmd_and_files_once() {
    let vm = vm_with_accounts();
    user_data(
        &vm,
        "#cloud-config\nwrite_files:\n  - path: /etc/motd.d/welcome\n    content: hello\n    permissions: '0640'\nbootcmd:\n  - echo boot >> /var/tmp/bootcmd-runs\nruncmd:\n  - [sh, -c, 'echo run >> /var/tmp/runcmd-runs']\n",
    );
    fs::create_dir_all(vm.path("/var/tmp")).unwrap();
    for (boot, boots) in [(1, "boot\n"), (2, "boot\nboot\n")] {
        let early = vm.run("early");
        assert_eq!(
            early.status.code(),
            Some(0),
            "boot {boot}: {}",
            text(&early.stderr)
        );
        let late = vm.run("late");
        assert_eq!(
            late.status.code(),
            Some(0),
            "boot {boot}: {}",
            text(&late.stderr)
        );
        let runs = |f: &str| fs::read_to_string(vm.path(f)).unwrap_or_default();
        assert_eq!(runs("/var/tmp/bootcmd-runs"), boots, "boot {boot}");
        assert_eq!(runs("/var/tmp/runcmd-runs"), "run\n", "boot {boot}");
        // A new boot: the per-boot record is keyed by the boot id.
        let sem = vm.path("/var/lib/vmcust/instances");
        assert!(sem.is_dir());
        if boot == 1 {
            fake_next_boot(&vm);
        }
    }
    assert_eq!(
        fs::read_to_string(vm.path("/etc/motd.d/welcome")).unwrap(),
        "hello"
    );
    let (code, st) = vm.status();
    assert_eq!(code, Some(0), "{st}");
}

/// What happens to the user-data is decided once, with the plan, and kept in the instance
/// record: a real cloud-init that appears between the early and the late stage (the
/// user-data may install one itself) does not turn native cloud-config into a NoCloud
/// seed for it.
#[test]
fn the_user_datas_fate_is_the_plans_even_when_cloud_init_appears_later() {
    let vm = vm_with_accounts();
    user_data(
        &vm,
        "#cloud-config\nruncmd:\n  - [sh, -c, 'echo run >> /var/tmp/runcmd-runs']\n",
    );
    fs::create_dir_all(vm.path("/var/tmp")).unwrap();
    let early = vm.run("early");
    assert_eq!(early.status.code(), Some(0), "{}", text(&early.stderr));
    let dir = vm.path("/var/lib/vmcust/instances/cc-native-1");
    let record = fs::read_to_string(dir.join("result.json")).unwrap();
    assert!(
        record.contains("\"user-data\": {\n    \"disposition\": \"native\""),
        "{record}"
    );
    fs::create_dir_all(vm.path("/usr/bin")).unwrap();
    fs::write(vm.path("/usr/bin/cloud-init"), "#!/usr/bin/python3\n").unwrap();
    let late = vm.run("late");
    assert_eq!(late.status.code(), Some(0), "{}", text(&late.stderr));
    assert_eq!(
        fs::read_to_string(vm.path("/var/tmp/runcmd-runs")).unwrap_or_default(),
        "run\n"
    );
    assert!(!vm.path("/var/lib/cloud/seed/nocloud/user-data").exists());
    assert_eq!(
        fs::read_to_string(dir.join("user-data.done")).unwrap(),
        "applied natively\n"
    );
}

/// `manage_etc_hosts: true` without a host name in the cloud-config takes the metadata's
/// `local-hostname`, as cloud-init's `update_etc_hosts` does (the boot path once passed
/// the modules no fallback, and the module was skipped).
#[test]
fn manage_etc_hosts_uses_the_metadatas_host_name() {
    let vm = vm_with_accounts();
    user_data(&vm, "#cloud-config\nmanage_etc_hosts: true\n");
    let early = vm.run("early");
    assert_eq!(early.status.code(), Some(0), "{}", text(&early.stderr));
    let hosts = fs::read_to_string(vm.path("/etc/hosts")).unwrap();
    assert!(
        hosts.contains("manage_etc_hosts: true") && hosts.contains("\n127.0.1.1 cc-vm cc-vm\n"),
        "{hosts}"
    );
}

/// `preserve_hostname: true` keeps the host's name, the metadata's `local-hostname`
/// included, as cloud-init's `set_hostname` and `update_hostname` do: no `/etc/hostname`
/// written, and `plan` and `status` say what was left and why (the engine once named the
/// host from the metadata before the modules ran; found by the parity harness).
#[test]
fn preserve_hostname_keeps_the_metadatas_name_away() {
    let vm = vm_with_accounts();
    fs::write(vm.path("/etc/hostname"), "template\n").unwrap();
    user_data(&vm, "#cloud-config\npreserve_hostname: true\n");
    let plan = vm.vmcust(&["plan"]);
    let shown = text(&plan.stdout);
    assert!(
        shown.contains("name the host cc-vm from the metadata")
            && shown.contains("preserve_hostname is true")
            && !shown.contains("/etc/hostname"),
        "{shown}"
    );
    let early = vm.run("early");
    assert_eq!(early.status.code(), Some(0), "{}", text(&early.stderr));
    assert_eq!(
        fs::read_to_string(vm.path("/etc/hostname")).unwrap(),
        "template\n"
    );
}

/// The per-boot records name the boot id they were made in: removing them is what a new
/// boot id amounts to for the next run.
fn fake_next_boot(vm: &Vm) {
    let mut stack = vec![vm.path("/var/lib/vmcust")];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().contains("/sem/")
                && fs::read_to_string(&p).is_ok_and(|t| t.starts_with("boot "))
            {
                fs::remove_file(&p).unwrap();
            }
        }
    }
}

/// Script parts of MIME user-data: `plan` and `show` name each with its module, stage and
/// frequency (never its body) and none is "not applied"; at boot the boothook runs on
/// every boot, the per-boot script on every boot, the user script once, and the
/// customization is not degraded.
#[test]
fn script_parts_are_shown_and_run_at_boot() {
    let vm = vm_with_accounts();
    let part = |ctype: &str, name: &str, body: &str| {
        format!(
            "--XX\nContent-Type: {ctype}\nContent-Disposition: attachment; filename=\"{name}\"\n\n{body}\n"
        )
    };
    let doc = [
        "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"XX\"\n\n".to_string(),
        part(
            "text/cloud-config",
            "cc.yaml",
            "#cloud-config\nruncmd: ['echo runcmd >> /var/tmp/ran']",
        ),
        part(
            "text/cloud-boothook",
            "hook.sh",
            "#cloud-boothook\n#!/bin/sh\necho \"hook $INSTANCE_ID\" >> /var/tmp/ran",
        ),
        part(
            "text/x-shellscript",
            "setup.sh",
            "#!/bin/sh\nTOKEN=s3cret-token\necho setup >> /var/tmp/ran",
        ),
        part(
            "text/x-shellscript-per-boot",
            "every.sh",
            "#!/bin/sh\necho every >> /var/tmp/ran",
        ),
        "--XX--\n".to_string(),
    ]
    .concat();
    user_data(&vm, &doc);
    fs::create_dir_all(vm.path("/var/tmp")).unwrap();
    let cli = |what: &str| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_vmcust"));
        c.arg(what);
        if what == "plan" {
            c.arg("--root").arg(vm.root.path());
        }
        let out = c
            .arg("--guestinfo-dir")
            .arg(vm.host.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{what}: {}", text(&out.stderr));
        text(&out.stdout) + &text(&out.stderr)
    };
    let plan = cli("plan");
    for want in [
        "cloud-config boothooks (early): run hook.sh (user-data part 1",
        "), on every boot",
        "cloud-config scripts_per_boot (late): run every.sh (user-data part 3",
        "cloud-config scripts_user (late): run runcmd (the 1 runcmd entries",
        "cloud-config scripts_user (late): run setup.sh (user-data part 2",
        "user-data part 2 setup.sh: text/x-shellscript",
    ] {
        assert!(plan.contains(want), "{want} not in {plan}");
    }
    assert!(!plan.contains("not applied"), "{plan}");
    let show = cli("show");
    assert!(
        show.contains(
            "script setup.sh (user-data part 2, 55 bytes): scripts_user (late stage), once per instance"
        ),
        "{show}"
    );
    assert!(show.contains("script hook.sh (user-data part 1"), "{show}");
    for out in [&plan, &show] {
        assert!(!out.contains("s3cret"), "{out}");
    }
    for boot in 1..=2 {
        for stage in ["early", "late"] {
            let out = vm.run(stage);
            assert_eq!(
                out.status.code(),
                Some(0),
                "boot {boot} {stage}: {}",
                text(&out.stderr)
            );
            assert!(!text(&out.stderr).contains("s3cret"));
        }
        if boot == 1 {
            fake_next_boot(&vm);
        }
    }
    assert_eq!(
        fs::read_to_string(vm.path("/var/tmp/ran")).unwrap(),
        "hook cc-native-1\nevery\nruncmd\nsetup\nhook cc-native-1\nevery\n"
    );
    let (code, st) = vm.status();
    assert_eq!(code, Some(0), "{st}");
}

/// A snap user entry and a `chpasswd` user that does not exist do not refuse the
/// document: the default user and every other user are made, the other password is set,
/// and the customization ends degraded naming both.
#[test]
fn snap_users_and_missing_chpasswd_users_degrade_and_the_rest_applies() {
    let vm = vm_with_accounts();
    user_data(
        &vm,
        "#cloud-config\nusers:\n  - default\n  - snapuser: joe@example.com\n  - name: bob\nchpasswd:\n  expire: false\n  users:\n    - {name: ghost, password: Gh0st-pw-1, type: text}\n    - {name: bob, password: B0b-pw-1, type: text}\n",
    );
    let early = vm.run("early");
    let log = text(&early.stderr);
    assert_eq!(early.status.code(), Some(0), "{log}");
    assert!(
        !log.contains("Gh0st-pw-1") && !log.contains("B0b-pw-1"),
        "{log}"
    );
    let passwd = fs::read_to_string(vm.path("/etc/passwd")).unwrap();
    // No os-release: cloud-init's fallback default user, ubuntu.
    assert!(
        passwd.contains("\nubuntu:") && passwd.contains("\nbob:"),
        "{passwd}"
    );
    let shadow = fs::read_to_string(vm.path("/etc/shadow")).unwrap();
    let bob = shadow.lines().find(|l| l.starts_with("bob:")).unwrap();
    assert!(bob.starts_with("bob:$6$"), "{bob}");
    let late = vm.run("late");
    assert_eq!(late.status.code(), Some(0), "{}", text(&late.stderr));
    let (code, st) = vm.status();
    assert_eq!(code, Some(2), "{st}");
    assert!(
        st.contains("users[1].snapuser") && st.contains("user ghost does not exist"),
        "{st}"
    );
}

/// `ssh_genkeytypes` and `ssh_deletekeys` are done by clone hygiene at the first boot,
/// as cloud-init's `ssh` module does them: the template's rsa key is gone, the asked-for
/// types are made, and nothing is reported as not applied.
#[test]
fn host_key_keys_are_done_by_clone_hygiene() {
    let vm = vm_with_accounts();
    let rsa = vm.path("/etc/ssh/ssh_host_rsa_key");
    fs::create_dir_all(rsa.parent().unwrap()).unwrap();
    let made = Command::new("ssh-keygen")
        .args(["-q", "-N", "", "-t", "rsa", "-b", "1024", "-f"])
        .arg(&rsa)
        .status()
        .expect("ssh-keygen (apt-get install openssh-client)");
    assert!(made.success());
    user_data(
        &vm,
        "#cloud-config\nusers: []\nssh_genkeytypes: [ed25519]\nssh_quiet_keygen: true\nssh_publish_hostkeys: {enabled: true}\n",
    );
    let plan = vm.vmcust(&["plan"]);
    let shown = text(&plan.stdout);
    assert!(
        shown.contains("fresh SSH host keys (ed25519)") && shown.contains("removed (rsa"),
        "{shown}"
    );
    let early = vm.run("early");
    assert_eq!(early.status.code(), Some(0), "{}", text(&early.stderr));
    assert!(!rsa.exists() && !vm.path("/etc/ssh/ssh_host_rsa_key.pub").exists());
    assert!(vm.path("/etc/ssh/ssh_host_ed25519_key").is_file());
    let late = vm.run("late");
    assert_eq!(late.status.code(), Some(0), "{}", text(&late.stderr));
    let (code, st) = vm.status();
    assert_eq!(code, Some(0), "{st}");
}
