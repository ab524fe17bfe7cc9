//! `vmcust plan` shows what `vmcust run` does: for a raw cloud-init spec, an OVF ISO
//! whose `seedfrom` names a local seed, and a root with an appliance property mapping,
//! on two identical copies of the same root (a template with its own machine-id and SSH
//! host key), the plan and the run agree on
//! - the files plan says it would create or update and the files run changes (run logs
//!   each one),
//! - the files clone hygiene replaces (machine-id, SSH host keys), and
//! - the network reload's commands (logged, not run: a scratch root is never the running
//!   system).

mod support;

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::process::Command;

use support::vm::Vm;

/// What a plan or a run does, in the terms both can be compared in.
#[derive(Debug, PartialEq, Eq)]
struct Done {
    /// Files created or updated.
    files: BTreeSet<String>,
    /// Files clone hygiene replaces.
    hygiene: BTreeSet<String>,
    /// The network reload's commands, in order.
    reload: Vec<String>,
}

/// What a `plan --format json` would do.
fn planned(root: &Path, input: &[&str]) -> Done {
    let out = Command::new(env!("CARGO_BIN_EXE_vmcust"))
        .args(["plan", "--format", "json", "--root"])
        .arg(root)
        .args(input)
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let strings = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .map(|a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    };
    let boot = &report["boot"];
    Done {
        files: report["actions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["change"] == "created" || a["change"] == "updated")
            .map(|a| a["path"].as_str().unwrap().to_string())
            .collect(),
        hygiene: strings(&boot["hygiene"]["files"]).into_iter().collect(),
        reload: boot["network_reload"]["commands"]
            .as_array()
            .map(|cmds| cmds.iter().map(|c| strings(c).join(" ")).collect())
            .unwrap_or_default(),
    }
}

/// What `run --stage early` logged.
fn ran(vm: &Vm) -> Done {
    let out = vm.run("early");
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{log}");
    let mut done = Done {
        files: BTreeSet::new(),
        hygiene: BTreeSet::new(),
        reload: Vec::new(),
    };
    for l in log.lines() {
        // Info lines are `vmcust: <message>` (docs/troubleshooting.md).
        let Some(rest) = l.strip_prefix("vmcust: ") else {
            continue;
        };
        if let Some(path) = rest
            .strip_prefix("clone hygiene: replaced ")
            .or_else(|| rest.strip_prefix("clone hygiene: created "))
        {
            done.hygiene.insert(path.to_string());
        } else if let Some(cmd) =
            rest.strip_prefix("network reload not run (the root is not the running system): ")
        {
            done.reload.push(cmd.to_string());
        } else if let Some(rest) = rest.strip_prefix("moved aside ") {
            done.files
                .insert(rest.split(" (").next().unwrap().to_string());
        } else if let Some((verb, rest)) = rest.split_once(' ') {
            if matches!(verb, "created" | "updated") {
                done.files
                    .insert(rest.split(" (").next().unwrap().to_string());
            }
        }
    }
    done
}

/// Makes the VM's root a sealed template's clone: the template's machine-id (recorded
/// as the template's, as `vmcust clean` does) and an SSH host key.
fn template_identity(vm: &Vm) {
    fs::write(
        vm.path("/etc/machine-id"),
        "0123456789abcdef0123456789abcdef\n",
    )
    .unwrap();
    let records = vm.path("/var/lib/vmcust/hygiene");
    fs::create_dir_all(&records).unwrap();
    fs::write(
        records.join("template-machine-id"),
        "0123456789abcdef0123456789abcdef\n",
    )
    .unwrap();
    fs::create_dir_all(vm.path("/etc/ssh")).unwrap();
    let ok = Command::new("ssh-keygen")
        .args(["-q", "-N", "", "-t", "ed25519", "-f"])
        .arg(vm.path("/etc/ssh/ssh_host_ed25519_key"))
        .status()
        .expect("ssh-keygen is installed (openssh-client, scripts/test-packages.txt)");
    assert!(ok.success());
}

/// The parts of a plan every case here must have, so that agreeing is not agreeing on
/// nothing.
fn assert_whole(want: &Done) {
    for path in [
        "/etc/machine-id",
        "/etc/ssh/ssh_host_ed25519_key",
        "/etc/ssh/ssh_host_ed25519_key.pub",
    ] {
        assert!(want.hygiene.contains(path), "{path} not planned: {want:?}");
    }
    assert_eq!(want.reload, ["netplan generate"], "{want:?}");
}

/// An ISO9660 image holding `ovf-env.xml`, built by xorriso as the tests of the ISO
/// reader do, placed as the VM's CD drive `/dev/sr0`.
fn insert_cd(vm: &Vm, xml: &str) {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("ovf-env.xml"), xml).unwrap();
    let dev = vm.path("/dev");
    fs::create_dir_all(&dev).unwrap();
    support::require_tool("xorriso", "xorriso");
    let out = Command::new("xorriso")
        .args([
            "-as", "mkisofs", "-quiet", "-J", "-R", "-V", "OVF ENV", "-o",
        ])
        .arg(dev.join("sr0"))
        .arg(dir.path())
        .output()
        .expect("xorriso is installed (scripts/test-packages.txt)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn raw_cloud_init_spec() {
    let vm = Vm::new();
    template_identity(&vm);
    let specs = support::repo().join("examples/specs");
    let want = planned(
        vm.root.path(),
        &[specs.join("raw-cloud-init.cfg").to_str().unwrap()],
    );
    assert!(want.files.contains("/etc/hostname"), "{want:?}");
    assert_whole(&want);
    vm.hand_over(
        &fs::read_to_string(specs.join("raw-cloud-init.cfg")).unwrap(),
        &[
            (
                "metadata",
                &fs::read_to_string(specs.join("metadata")).unwrap(),
            ),
            (
                "userdata",
                &fs::read_to_string(specs.join("userdata")).unwrap(),
            ),
        ],
    );
    assert_eq!(ran(&vm), want);
}

#[test]
fn ovf_iso_with_a_local_seed_and_an_appliance_mapping() {
    let vm = Vm::new();
    template_identity(&vm);
    let seed = vm.path("/var/lib/ovf-seed");
    fs::create_dir_all(&seed).unwrap();
    fs::write(
        seed.join("meta-data"),
        "instance-id: seeded-1\nlocal-hostname: from-seed\n",
    )
    .unwrap();
    fs::create_dir_all(vm.path("/etc/vmcust")).unwrap();
    fs::write(
        vm.path("/etc/vmcust/ovf-properties.conf"),
        "[properties]\ntime-zone = appliance.tz\nipv4-address = appliance.ip\nipv4-gateway = appliance.gw\n",
    )
    .unwrap();
    fs::create_dir_all(vm.path("/usr/share/zoneinfo/Europe")).unwrap();
    fs::write(vm.path("/usr/share/zoneinfo/Europe/Berlin"), "TZif").unwrap();
    insert_cd(
        &vm,
        &support::ovf_env(&[
            ("seedfrom", "file:///var/lib/ovf-seed/"),
            ("appliance.tz", "Europe/Berlin"),
            ("appliance.ip", "10.9.8.7/24"),
            ("appliance.gw", "10.9.8.1"),
        ]),
    );
    let want = planned(
        vm.root.path(),
        &["--ovf", vm.path("/dev/sr0").to_str().unwrap()],
    );
    for path in [
        "/etc/hostname",
        "/etc/localtime",
        "/etc/netplan/50-vmcust.yaml",
    ] {
        assert!(want.files.contains(path), "{path} not planned: {want:?}");
    }
    assert_whole(&want);
    assert_eq!(ran(&vm), want);
}

/// One cloud-config module's case: the user-data (and vendor-data) that makes it work, and
/// what the root needs for it.
struct ModuleCase {
    module: &'static str,
    user_data: &'static str,
    vendor_data: Option<&'static str>,
    setup: fn(&Vm),
}

/// A program in the root that does nothing and succeeds.
fn fake_program(vm: &Vm, path: &str) {
    use std::os::unix::fs::PermissionsExt;
    let p = vm.path(path);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(&p, "#!/bin/sh\nexit 0\n").unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
}

fn os_release(vm: &Vm, id: &str) {
    fs::write(vm.path("/etc/os-release"), format!("ID={id}\n")).unwrap();
}

fn nothing(_: &Vm) {}

fn multipart(kind: &str) -> String {
    format!(
        "Content-Type: multipart/mixed; boundary=\"BB\"\nMIME-Version: 1.0\n\n--BB\nContent-Type: {kind}\n\n#!/bin/sh\nexit 0\n--BB--\n"
    )
}

const KEY: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f ops@example";

/// A private ed25519 key made by ssh-keygen, for `ssh_keys`.
fn host_key() -> String {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("k");
    let ok = Command::new("ssh-keygen")
        .args(["-q", "-N", "", "-t", "ed25519", "-f"])
        .arg(&f)
        .status()
        .expect("ssh-keygen is installed (openssh-client, scripts/test-packages.txt)");
    assert!(ok.success());
    fs::read_to_string(f).unwrap()
}

/// Every module of the module table has a case here (a module without one fails
/// `every_cloud_config_module_does_what_plan_shows`).
fn module_cases() -> Vec<ModuleCase> {
    let case = |module, user_data| ModuleCase {
        module,
        user_data,
        vendor_data: None,
        setup: nothing,
    };
    vec![
        case("boothooks", "#cloud-boothook\n#!/bin/sh\nexit 0\n"),
        case("bootcmd", "#cloud-config\nbootcmd: ['exit 0']\n"),
        case(
            "write_files",
            "#cloud-config\nwrite_files: [{path: /etc/motd.d/welcome, content: hello}]\n",
        ),
        case("growpart", "#cloud-config\ngrowpart: {mode: auto}\n"),
        case("resizefs", "#cloud-config\nresize_rootfs: true\n"),
        // A scratch root is not the running system: partitioning and mkfs are refused
        // there (they would reach the build machine's disks), and shown as such.
        case(
            "disk_setup",
            "#cloud-config\ndevice_aliases: {data: /dev/sdb}\ndisk_setup: {data: {table_type: gpt, layout: [50, [50, 82]]}}\nfs_setup: [{device: data.1, filesystem: ext4, label: data}, {device: data.2, filesystem: swap}]\n",
        ),
        case(
            "mounts",
            "#cloud-config\nmounts: [[sdb, /data], ['LABEL=logs', '/srv/my logs', ext4], [sdc]]\nswap: {size: auto}\n",
        ),
        case("set_hostname", "#cloud-config\nhostname: cc-host\nfqdn: cc-host.example.com\n"),
        case(
            "update_etc_hosts",
            "#cloud-config\nfqdn: cc-host.example.com\nmanage_etc_hosts: true\n",
        ),
        ModuleCase {
            setup: |vm| os_release(vm, "rhel"),
            ..case(
                "resolv_conf",
                "#cloud-config\nmanage_resolv_conf: true\nresolv_conf: {nameservers: [10.0.0.1], searchdomains: [a.example]}\n",
            )
        },
        ModuleCase {
            setup: |vm| fake_program(vm, "/usr/sbin/update-ca-certificates"),
            ..case(
                "ca_certs",
                "#cloud-config\nca_certs: {trusted: ['-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n']}\n",
            )
        },
        case(
            "rsyslog",
            "#cloud-config\nrsyslog: {configs: ['*.* @@10.0.0.1'], remotes: {central: '@logs.example:514'}}\n",
        ),
        case("users_groups", "#cloud-config\ngroups: [ops]\nusers: [{name: dave, groups: [ops]}]\n"),
        // A given host key (written by the module, after clone hygiene) besides the
        // accounts engine's authorized keys.
        ModuleCase {
            setup: |vm| fs::create_dir_all(vm.path("/root")).unwrap(),
            user_data: Box::leak(
                format!(
                    "#cloud-config\nusers: []\ndisable_root: false\nssh_authorized_keys: [KEY]\nssh_keys:\n  ed25519_private: {}\n",
                    serde_json::to_string(&host_key()).unwrap()
                )
                .into_boxed_str(),
            ),
            ..case("ssh", "")
        },
        case(
            "set_passwords",
            "#cloud-config\nusers: []\nchpasswd: {expire: false, users: [{name: root, password: 'S3cret-pw', type: text}]}\n",
        ),
        // Ubuntu only: cloud-init skips it by distro elsewhere.
        ModuleCase {
            setup: |vm| {
                os_release(vm, "ubuntu");
                fake_program(vm, "/usr/bin/snap");
            },
            ..case("snap", "#cloud-config\nsnap: {commands: [[install, hello], 'snap list']}\n")
        },
        case("keyboard", "#cloud-config\nkeyboard: {layout: de, variant: nodeadkeys}\n"),
        ModuleCase {
            setup: |vm| {
                fake_program(vm, "/usr/sbin/locale-gen");
                fs::create_dir_all(vm.path("/usr/share/i18n")).unwrap();
                fs::write(
                    vm.path("/usr/share/i18n/SUPPORTED"),
                    "de_DE.UTF-8 UTF-8\nen_US.UTF-8 UTF-8\n",
                )
                .unwrap();
                fs::write(vm.path("/etc/locale.gen"), "# de_DE.UTF-8 UTF-8\n").unwrap();
            },
            ..case("locale", "#cloud-config\nlocale: de_DE.UTF-8\n")
        },
        // RHEL and Fedora only; the stand-in says the system is registered.
        ModuleCase {
            setup: |vm| {
                use std::os::unix::fs::PermissionsExt;
                os_release(vm, "rhel");
                // Not registered: `identity` fails, so `register` runs with the password.
                let p = vm.path("/usr/sbin/subscription-manager");
                fs::create_dir_all(p.parent().unwrap()).unwrap();
                fs::write(&p, "#!/bin/sh\n[ \"$1\" = identity ] && exit 1\necho 'ID: 42'\n").unwrap();
                fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
            },
            ..case(
                "rh_subscription",
                "#cloud-config\nrh_subscription: {username: joe, password: 'S3cret-pw', auto_attach: true}\n",
            )
        },
        ModuleCase {
            setup: |vm| fake_program(vm, "/usr/bin/dnf"),
            ..case(
                "yum_add_repo",
                "#cloud-config\nyum_repos: {epel: {baseurl: 'https://repo.example/epel/$basearch', gpgcheck: true}}\n",
            )
        },
        ModuleCase {
            setup: |vm| {
                fake_program(vm, "/usr/bin/zypper");
                fs::create_dir_all(vm.path("/etc/zypp")).unwrap();
                fs::write(vm.path("/etc/zypp/zypp.conf"), "[main]\n").unwrap();
            },
            ..case(
                "zypper_add_repo",
                "#cloud-config\nzypper: {repos: [{id: oss, baseurl: 'http://repo.example/oss/'}], config: {solver.onlyRequires: true}}\n",
            )
        },
        ModuleCase {
            setup: |vm| fake_program(vm, "/usr/bin/apt-get"),
            ..case("apt_pipelining", "#cloud-config\napt_pipelining: false\n")
        },
        // No key: the scratch root has no gpg (tests/apt_configure_tools.rs runs a real one).
        ModuleCase {
            setup: |vm| {
                fake_program(vm, "/usr/bin/apt-get");
                fs::create_dir_all(vm.path("/etc/apt/apt.conf.d")).unwrap();
                fs::write(vm.path("/etc/apt/apt.conf.d/94cloud-init-config"), "old\n").unwrap();
            },
            ..case(
                "apt_configure",
                "#cloud-config\napt: {proxy: 'http://proxy.example:3128', sources: {tools: {source: 'deb http://repo.example/ $RELEASE main'}}}\n",
            )
        },
        ModuleCase {
            setup: |vm| {
                fake_program(vm, "/usr/sbin/chronyd");
                fake_program(vm, "/usr/bin/systemctl");
            },
            ..case("ntp", "#cloud-config\nntp: {servers: [ntp.example.com]}\n")
        },
        ModuleCase {
            setup: |vm| {
                fs::create_dir_all(vm.path("/usr/share/zoneinfo/Europe")).unwrap();
                fs::write(vm.path("/usr/share/zoneinfo/Europe/Berlin"), "TZif").unwrap();
            },
            ..case("timezone", "#cloud-config\ntimezone: Europe/Berlin\n")
        },
        ModuleCase {
            setup: |vm| fake_program(vm, "/usr/bin/apt-get"),
            ..case(
                "package_update_upgrade_install",
                "#cloud-config\npackages: [curl]\n",
            )
        },
        case(
            "write_files_deferred",
            "#cloud-config\nwrite_files: [{path: /etc/motd.d/later, content: bye, defer: true}]\n",
        ),
        ModuleCase {
            setup: |vm| {
                fake_program(vm, "/usr/bin/ansible");
                fake_program(vm, "/usr/bin/ansible-pull");
            },
            ..case(
                "ansible",
                "#cloud-config\nansible: {install_method: distro, package_name: ansible-core, pull: [{url: 'https://git.example/pb.git', playbook_names: [site.yml]}]}\n",
            )
        },
        // Owned by a user the same document creates: the plan knows the accounts the
        // boot applies before any module runs.
        case(
            "write_files_deferred",
            "#cloud-config\nusers: [{name: alice}]\nwrite_files: [{path: /home/alice/later, content: bye, owner: 'alice:alice', defer: true}]\n",
        ),
        ModuleCase {
            vendor_data: Some("#!/bin/sh\nexit 0\n"),
            ..case("scripts_vendor", "#cloud-config\nfinal_message: vendor\n")
        },
        ModuleCase {
            user_data: Box::leak(multipart("text/x-shellscript-per-once").into_boxed_str()),
            ..case("scripts_per_once", "")
        },
        ModuleCase {
            user_data: Box::leak(multipart("text/x-shellscript-per-boot").into_boxed_str()),
            ..case("scripts_per_boot", "")
        },
        ModuleCase {
            user_data: Box::leak(multipart("text/x-shellscript-per-instance").into_boxed_str()),
            ..case("scripts_per_instance", "")
        },
        case("runcmd", "#cloud-config\nruncmd: ['exit 0']\n"),
        // (A lone script is the user-data's own script, run as such: not a module's.)
        ModuleCase {
            user_data: Box::leak(multipart("text/x-shellscript").into_boxed_str()),
            ..case("scripts_user", "")
        },
        ModuleCase {
            setup: |vm| fs::create_dir_all(vm.path("/root")).unwrap(),
            ..case(
                "ssh_authkey_fingerprints",
                "#cloud-config\nusers: []\ndisable_root: false\nssh_authorized_keys: [KEY]\nauthkey_hash: sha512\n",
            )
        },
        case("final_message", "#cloud-config\nfinal_message: done\n"),
        case("power_state_change", "#cloud-config\npower_state: {mode: reboot}\n"),
        // Vendor-data turned off: its file is neither planned nor written.
        ModuleCase {
            vendor_data: Some(
                "#cloud-config\nwrite_files: [{path: /etc/motd.d/vendor, content: v}]\n",
            ),
            ..case(
                "vendor_data",
                "#cloud-config\nvendor_data: {enabled: false}\nfinal_message: x\n",
            )
        },
    ]
}

/// What plan shows of a module: its lines.
fn module_lines(report: &serde_json::Value, module: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![report];
    while let Some(v) = stack.pop() {
        match v {
            serde_json::Value::Object(m) => {
                if let Some(serde_json::Value::Array(lines)) = m.get("modules") {
                    for l in lines.iter().filter_map(|l| l.as_str()) {
                        if let Some(rest) = l.strip_prefix(&format!("{module} (")) {
                            out.push(rest.split_once("): ").unwrap().1.to_string());
                        }
                    }
                }
                stack.extend(m.values());
            }
            serde_json::Value::Array(a) => stack.extend(a),
            _ => {}
        }
    }
    out
}

/// For every module of the module table: on a fresh VM, `plan` with the module's case,
/// then a boot (early and late stage). The files the run changed are the files the plan
/// shows (the engine's actions and the modules' `write` lines), and the module ran if
/// and only if plan showed it doing something on this (not running) system.
#[test]
fn every_cloud_config_module_does_what_plan_shows() {
    let cases = module_cases();
    for m in vmcust::test_api::modules::TABLE {
        assert!(
            cases.iter().any(|c| c.module == m.name),
            "cloud-config module {} has no case in module_cases()",
            m.name
        );
    }
    for c in &cases {
        let vm = Vm::new();
        os_release(&vm, "debian");
        // The account files a Debian system has (the default user is always planned).
        fs::write(
            vm.path("/etc/group"),
            "root:x:0:\nsudo:x:27:\nusers:x:100:\n",
        )
        .unwrap();
        fs::write(vm.path("/etc/gshadow"), "root:*::\nsudo:*::\nusers:*::\n").unwrap();
        fs::create_dir_all(vm.path("/home")).unwrap();
        (c.setup)(&vm);
        fs::write(
            vm.host.path().join("guestinfo.metadata"),
            "instance-id: cc-plan-1\nlocal-hostname: cc-vm\n",
        )
        .unwrap();
        let user_data = c.user_data.replace("[KEY]", &format!("['{KEY}']"));
        fs::write(vm.host.path().join("guestinfo.userdata"), &user_data).unwrap();
        if let Some(v) = c.vendor_data {
            fs::write(vm.host.path().join("guestinfo.vendordata"), v).unwrap();
        }
        let out = vm.vmcust(&["plan", "--format", "json"]);
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let mut planned: BTreeSet<String> = report["actions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["change"] == "created" || a["change"] == "updated")
            .map(|a| a["path"].as_str().unwrap().to_string())
            .collect();
        let mut shown = BTreeSet::new();
        for m in vmcust::test_api::modules::TABLE {
            let lines = module_lines(&report, m.name);
            for l in &lines {
                if let Some(w) = l.strip_prefix("write ") {
                    planned.insert(w.split(" (").next().unwrap().to_string());
                } else if let Some(w) = l.strip_prefix("mkdir ") {
                    planned.insert(w.split(" (").next().unwrap().to_string());
                } else if let Some(w) = l.strip_prefix("link ") {
                    planned.insert(w.split(" -> ").next().unwrap().to_string());
                } else if let Some((_, to)) =
                    l.strip_prefix("move ").and_then(|w| w.split_once(" to "))
                {
                    // A file moved aside: its new name appears.
                    planned.insert(to.to_string());
                }
            }
            // scripts_user's lines show runcmd's script among its own (they run in name
            // order); that line is runcmd's work.
            let does = lines.iter().any(|l| {
                let runcmds = m.name == "scripts_user" && l.starts_with("run runcmd (");
                !(l.starts_with("nothing:")
                    || l.starts_with("on the running system only")
                    || runcmds)
            });
            if does {
                shown.insert(m.name.to_string());
            }
        }
        let before = vm.state();
        let (early, late) = vm.boot();
        let after = vm.state();
        let changed: BTreeSet<String> = after
            .iter()
            .filter(|(p, v)| before.get(*p) != Some(*v))
            .map(|(p, _)| format!("/{}", p.display()))
            .filter(|p| !p.starts_with("/var/tmp") && !p.starts_with("/etc/vmcust"))
            .collect();
        // A directory made on the way to a planned file is no change of its own.
        let changed: BTreeSet<String> = changed
            .iter()
            .filter(|p| {
                planned.contains(*p) || !changed.iter().any(|q| q.starts_with(&format!("{p}/")))
            })
            .cloned()
            .collect();
        let log = format!("{}{}", text(&early.stderr), text(&late.stderr));
        // The cases' passwords (chpasswd's, rh_subscription's) reach no plan and no log.
        for shown in [&log, &report.to_string()] {
            assert!(
                !shown.contains("S3cret-pw"),
                "{}: a password shown\n{shown}",
                c.module
            );
        }
        // Nor the records of the run (status, query, the module records); the copy of
        // the user-data itself is root's alone, as cloud-init keeps it.
        for p in support::walk(&vm.path("/var/lib/vmcust")) {
            if p.file_name().is_some_and(|n| n == "user-data") {
                use std::os::unix::fs::PermissionsExt;
                let mode = fs::metadata(&p).unwrap().permissions().mode() & 0o777;
                assert_eq!(mode, 0o600, "{}", p.display());
                continue;
            }
            let bytes = fs::read(&p).unwrap_or_default();
            assert!(
                !String::from_utf8_lossy(&bytes).contains("S3cret-pw"),
                "{}: a password in {}",
                c.module,
                p.display()
            );
        }
        let ran: BTreeSet<String> = vmcust::test_api::modules::TABLE
            .iter()
            .filter(|m| log.contains(&format!("vmcust: cloud-config {}: ", m.name)))
            .map(|m| m.name.to_string())
            .collect();
        assert_eq!(changed, planned, "{}: files\n{log}", c.module);
        assert_eq!(ran, shown, "{}: modules that ran\n{log}", c.module);
        let m = vmcust::test_api::modules::module(c.module).unwrap();
        let meaningful = shown.contains(c.module)
            || m.preview.is_none_or(|_| {
                module_lines(&report, c.module)
                    .first()
                    .is_some_and(|l| l.starts_with("on the running system only"))
            });
        assert!(meaningful, "{}: the case does nothing: {report}", c.module);
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}
