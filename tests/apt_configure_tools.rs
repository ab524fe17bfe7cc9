//! The cloud-config `apt` key checked by the real tools: a signed local repository built
//! here (`dpkg-deb`, `apt-ftparchive`, a key made with `gpg`), user-data whose `sources`
//! entries name it with its ASCII-armoured key, a boot of a scratch root (the root's own
//! `gpg`, copied in, dearmours the key inside the sealed box), then Debian's `apt-get` and
//! `apt-cache` of this machine, pointed at the root's `/etc/apt` and a scratch state
//! directory, verify the repository's signature with the keyring vmcust wrote, read the
//! proxy and `conf` files and see the package. The machine's own `/etc/apt` is never used:
//! `APT_CONFIG` names a file that moves every apt directory into the test's tempdirs.

mod support;

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use support::vm::Vm;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn ok(what: &str, o: Output) -> String {
    assert!(
        o.status.success(),
        "{what}: {}\n{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    text(&o.stdout)
}

/// A repository in `dir` (flat, `./`) holding `vmcust-apt-probe` 1.0, its `InRelease`
/// signed by a new key; the key's ASCII armour.
fn signed_repository(dir: &Path) -> String {
    let pkg = dir.join("build");
    fs::create_dir_all(pkg.join("DEBIAN")).unwrap();
    fs::write(
        pkg.join("DEBIAN/control"),
        "Package: vmcust-apt-probe\nVersion: 1.0\nArchitecture: all\nMaintainer: vmcust tests <t@example.com>\nDescription: probe package of the apt test\n",
    )
    .unwrap();
    let repo = dir.join("repo");
    fs::create_dir_all(&repo).unwrap();
    ok(
        "dpkg-deb",
        Command::new("dpkg-deb")
            .args(["--root-owner-group", "--build"])
            .arg(&pkg)
            .arg(repo.join("vmcust-apt-probe_1.0_all.deb"))
            .output()
            .unwrap(),
    );
    let packages = ok(
        "apt-ftparchive packages",
        Command::new("apt-ftparchive")
            .args(["packages", "."])
            .current_dir(&repo)
            .output()
            .unwrap(),
    );
    fs::write(repo.join("Packages"), packages).unwrap();
    let release = ok(
        "apt-ftparchive release",
        Command::new("apt-ftparchive")
            .args(["release", "."])
            .current_dir(&repo)
            .output()
            .unwrap(),
    );
    fs::write(repo.join("Release"), release).unwrap();
    let home = dir.join("gnupg");
    fs::create_dir_all(&home).unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&home, fs::Permissions::from_mode(0o700)).unwrap();
    let gpg = |args: &[&str]| {
        Command::new("gpg")
            .arg("--homedir")
            .arg(&home)
            .args([
                "--batch",
                "--no-tty",
                "--pinentry-mode",
                "loopback",
                "--passphrase",
                "",
            ])
            .args(args)
            .current_dir(&repo)
            .output()
            .unwrap()
    };
    ok(
        "gpg --quick-gen-key",
        gpg(&[
            "--quick-gen-key",
            "vmcust apt test <apt@example.com>",
            "ed25519",
            "sign",
            "never",
        ]),
    );
    ok(
        "gpg --clearsign",
        gpg(&["--output", "InRelease", "--clearsign", "Release"]),
    );
    let key = ok(
        "gpg --export",
        gpg(&["--armor", "--export", "apt@example.com"]),
    );
    let _ = Command::new("gpgconf")
        .arg("--homedir")
        .arg(&home)
        .args(["--kill", "all"])
        .output();
    key
}

/// An `APT_CONFIG` file that makes apt read `etc` (the root's `/etc/apt`) and keep its
/// state and cache under `state`.
fn apt_config(etc: &Path, state: &Path) -> std::path::PathBuf {
    for d in ["lists/partial", "cache/archives/partial"] {
        fs::create_dir_all(state.join(d)).unwrap();
    }
    fs::write(state.join("status"), "").unwrap();
    let file = state.join("apt.conf");
    fs::write(
        &file,
        format!(
            "Dir::Etc \"{etc}\";\nDir::State \"{s}\";\nDir::State::Lists \"{s}/lists\";\n\
             Dir::State::status \"{s}/status\";\nDir::Cache \"{s}/cache\";\n\
             Dir::Log \"{s}\";\nAPT::Sandbox::User \"root\";\n\
             Debug::NoLocking \"true\";\nAcquire::Languages \"none\";\n",
            etc = etc.display(),
            s = state.display()
        ),
    )
    .unwrap();
    file
}

fn apt(config: &Path, program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .env("APT_CONFIG", config)
        .args(args)
        .output()
        .unwrap()
}

/// A scratch Debian root: the account files the engine's plan reads, `os-release`.
fn debian_vm(os_release: &str) -> Vm {
    let vm = Vm::new();
    fs::write(vm.path("/etc/os-release"), os_release).unwrap();
    fs::write(
        vm.path("/etc/group"),
        "root:x:0:\nsudo:x:27:\nusers:x:100:\n",
    )
    .unwrap();
    fs::write(vm.path("/etc/gshadow"), "root:*::\nsudo:*::\nusers:*::\n").unwrap();
    for d in ["/home", "/tmp", "/var/tmp", "/etc/apt/apt.conf.d"] {
        fs::create_dir_all(vm.path(d)).unwrap();
    }
    vm
}

fn fake_apt_get(vm: &Vm) {
    use std::os::unix::fs::PermissionsExt;
    let p = vm.path("/usr/bin/apt-get");
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(
        &p,
        "#!/bin/sh\necho \"apt-get $*\" >> /var/tmp/apt-get.log\n",
    )
    .unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn sources_written_by_vmcust_make_a_local_package_visible_to_real_apt() {
    let work = tempfile::tempdir().unwrap();
    let key = signed_repository(work.path());
    let repo = work.path().join("repo");
    // apt takes one key per repository: the hardened entry names a copy.
    let copy = work.path().join("repo-copy");
    support::copy_tree(&repo, &copy);

    let vm = debian_vm("ID=debian\nVERSION_CODENAME=bookworm\n");
    support::install_tool(vm.root.path(), "/usr/bin/gpg");
    fake_apt_get(&vm);
    // An old proxy file of an earlier cloud-init: no proxy is asked for the second source
    // set, so it goes (see below); this one asks for a proxy.
    let armour: String = key.lines().map(|l| format!("        {l}\n")).collect();
    let user_data = format!(
        "#cloud-config\napt:\n  proxy: http://proxy.example:3128\n  conf: |\n    Acquire::Retries \"3\";\n  sources:\n    probe:\n      source: deb file:{repo} ./\n      key: |\n{armour}    hardened:\n      source: deb [signed-by=$KEY_FILE] file:{copy} ./\n      key: |\n{armour}      filename: hardened.list\n      append: false\n",
        repo = repo.display(),
        copy = copy.display()
    );
    fs::write(
        vm.host.path().join("guestinfo.metadata"),
        "instance-id: apt-1\nlocal-hostname: apt-vm\n",
    )
    .unwrap();
    fs::write(vm.host.path().join("guestinfo.userdata"), &user_data).unwrap();

    let plan = text(&vm.vmcust(&["plan"]).stdout);
    for want in [
        "apt_configure (late)",
        "run: gpg --dearmor (apt.sources.probe.key)",
        "write /etc/apt/trusted.gpg.d/probe.gpg (0644",
        "write /etc/apt/cloud-init.gpg.d/hardened.gpg (0644",
        "write /etc/apt/sources.list.d/probe.list (0644)",
        "run: apt-get --option=Dpkg::Options::=--force-confold",
    ] {
        assert!(plan.contains(want), "plan lacks {want:?}:\n{plan}");
    }

    let (_, late) = vm.boot();
    let log = text(&late.stderr);
    assert!(
        log.contains("vmcust: cloud-config apt_configure: 6 file(s), 6 changed; apt-get update"),
        "{log}"
    );
    assert_eq!(
        fs::read_to_string(vm.path("/var/tmp/apt-get.log")).unwrap(),
        "apt-get --option=Dpkg::Options::=--force-confold --option=Dpkg::options::=--force-unsafe-io --assume-yes --quiet update\n"
    );
    assert_eq!(
        fs::read_to_string(vm.path("/etc/apt/sources.list.d/hardened.list")).unwrap(),
        format!(
            "deb [signed-by=/etc/apt/cloud-init.gpg.d/hardened.gpg] file:{} ./\n",
            copy.display()
        )
    );
    for (file, mode) in [
        ("/etc/apt/trusted.gpg.d/probe.gpg", 0o644),
        ("/etc/apt/cloud-init.gpg.d/hardened.gpg", 0o644),
        ("/etc/apt/apt.conf.d/90cloud-init-aptproxy", 0o644),
        ("/etc/apt/apt.conf.d/94cloud-init-config", 0o644),
    ] {
        use std::os::unix::fs::PermissionsExt;
        let m = fs::metadata(vm.path(file)).unwrap().permissions().mode() & 0o7777;
        assert_eq!(m, mode, "{file}");
    }
    // A binary keyring (an OpenPGP public-key packet), not the armour.
    let ring = fs::read(vm.path("/etc/apt/trusted.gpg.d/probe.gpg")).unwrap();
    assert!(matches!(ring[0], 0x98 | 0x99 | 0xc6), "{:x}", ring[0]);

    // Real apt reads the root's /etc/apt: the proxy and conf files parse …
    let etc = vm.path("/etc/apt");
    let config = apt_config(&etc, &work.path().join("state"));
    let dump = ok("apt-config dump", apt(&config, "apt-config", &["dump"]));
    assert!(
        dump.contains("Acquire::http::Proxy \"http://proxy.example:3128\";"),
        "{dump}"
    );
    assert!(dump.contains("Acquire::Retries \"3\";"), "{dump}");
    // … the signature verifies with the keyring vmcust wrote to trusted.gpg.d, and the
    // package is there (probe.list as vmcust wrote it, alone: the hardened one names
    // its key by its path inside the root) …
    let parts = work.path().join("parts-probe");
    fs::create_dir_all(&parts).unwrap();
    fs::copy(
        etc.join("sources.list.d/probe.list"),
        parts.join("probe.list"),
    )
    .unwrap();
    let policy = visible(&config, &parts);
    assert!(policy.contains("Candidate: 1.0"), "{policy}");
    let sim = ok(
        "apt-get -s install",
        apt(
            &config,
            "apt-get",
            &[
                "-o",
                &format!("Dir::Etc::SourceParts={}", parts.display()),
                "-s",
                "install",
                "vmcust-apt-probe",
            ],
        ),
    );
    assert!(sim.contains("Inst vmcust-apt-probe (1.0"), "{sim}");

    // … and the hardened key alone verifies its copy of the repository (signed-by), with
    // the global key out of the way: the same list, naming the key by its path here.
    fs::remove_file(etc.join("trusted.gpg.d/probe.gpg")).unwrap();
    let hardened = fs::read_to_string(etc.join("sources.list.d/hardened.list")).unwrap();
    let parts = work.path().join("parts-hardened");
    fs::create_dir_all(&parts).unwrap();
    fs::write(
        parts.join("hardened.list"),
        hardened.replace("/etc/apt/", &format!("{}/", etc.display())),
    )
    .unwrap();
    let config = apt_config(&etc, &work.path().join("state2"));
    let policy = visible(&config, &parts);
    assert!(policy.contains("Candidate: 1.0"), "{policy}");
    // Without the key apt refuses the repository: the key did the verifying.
    fs::remove_file(etc.join("cloud-init.gpg.d/hardened.gpg")).unwrap();
    let config = apt_config(&etc, &work.path().join("state3"));
    let o = apt(
        &config,
        "apt-get",
        &[
            "-o",
            &format!("Dir::Etc::SourceParts={}", parts.display()),
            "update",
        ],
    );
    let said = text(&o.stdout) + &text(&o.stderr);
    assert!(
        !o.status.success() || said.contains("not signed") || said.contains("NO_PUBKEY"),
        "{said}"
    );
}

/// `apt-get update`, then `apt-cache policy vmcust-apt-probe`, with the sources of `parts`.
fn visible(config: &Path, parts: &Path) -> String {
    let parts = format!("Dir::Etc::SourceParts={}", parts.display());
    let update = ok(
        "apt-get update",
        apt(config, "apt-get", &["-o", &parts, "update"]),
    );
    assert!(!update.contains("NO_PUBKEY"), "{update}");
    ok(
        "apt-cache policy",
        apt(
            config,
            "apt-cache",
            &["-o", &parts, "policy", "vmcust-apt-probe"],
        ),
    )
}

#[test]
fn a_second_document_without_proxy_or_conf_moves_cloud_inits_files_aside() {
    let vm = debian_vm("ID=debian\n");
    fake_apt_get(&vm);
    fs::write(
        vm.path("/etc/apt/apt.conf.d/90cloud-init-aptproxy"),
        "Acquire::http::Proxy \"http://old:3128\";\n",
    )
    .unwrap();
    fs::write(
        vm.host.path().join("guestinfo.metadata"),
        "instance-id: apt-2\nlocal-hostname: apt-vm\n",
    )
    .unwrap();
    fs::write(
        vm.host.path().join("guestinfo.userdata"),
        "#cloud-config\napt: {sources: {}}\napt_pipelining: false\n",
    )
    .unwrap();
    vm.boot();
    assert!(!vm
        .path("/etc/apt/apt.conf.d/90cloud-init-aptproxy")
        .exists());
    assert!(vm
        .path("/etc/apt/apt.conf.d/90cloud-init-aptproxy.disabled")
        .exists());
    let config = apt_config(&vm.path("/etc/apt"), &vm.path("/var/tmp/apt-state"));
    let dump = ok("apt-config dump", apt(&config, "apt-config", &["dump"]));
    assert!(!dump.contains("http://old:3128"), "{dump}");
    assert!(
        dump.contains("Acquire::http::Pipeline-Depth \"0\";"),
        "{dump}"
    );
}

/// A key that cannot be fetched fails the module as cloud-init's does (three tries), and
/// nothing of the module is written: not the key, not the source naming it.
#[test]
fn a_key_the_keyserver_cannot_give_fails_the_module_and_writes_nothing() {
    let vm = debian_vm("ID=debian\nVERSION_CODENAME=bookworm\n");
    support::install_tool(vm.root.path(), "/usr/bin/gpg");
    fake_apt_get(&vm);
    fs::write(
        vm.host.path().join("guestinfo.metadata"),
        "instance-id: apt-3\nlocal-hostname: apt-vm\n",
    )
    .unwrap();
    fs::write(
        vm.host.path().join("guestinfo.userdata"),
        "#cloud-config\napt:\n  proxy: http://proxy.example:3128\n  sources:\n    fetched:\n      keyid: 0123456789ABCDEF\n      keyserver: hkps://keyserver.invalid\n      source: deb [signed-by=$KEY_FILE] http://repo.example/ ./\n",
    )
    .unwrap();
    let early = vm.run("early");
    assert_eq!(early.status.code(), Some(0), "{}", text(&early.stderr));
    let late = vm.run("late");
    let log = text(&late.stderr);
    assert!(
        log.contains(
            "failed to import key 0123456789ABCDEF from hkps://keyserver.invalid after 3 tries"
        ),
        "{log}"
    );
    for file in [
        "/etc/apt/sources.list.d/fetched.list",
        "/etc/apt/cloud-init.gpg.d/fetched.gpg",
        "/etc/apt/apt.conf.d/90cloud-init-aptproxy",
        "/var/tmp/apt-get.log",
    ] {
        assert!(!vm.path(file).exists(), "{file}");
    }
    // The scratch GNUPGHOME is gone.
    let left: Vec<_> = fs::read_dir(vm.path("/tmp")).unwrap().flatten().collect();
    assert!(left.is_empty(), "{left:?}");
    let (code, st) = vm.status();
    assert_ne!(code, Some(0), "{st}");
    assert!(st.contains("apt_configure"), "{st}");
}

/// `debconf_selections` reach the root's real debconf database through its own
/// `debconf-set-selections` (Debian's perl script, copied in with what it loads), in name
/// order; a password answer lands in debconf's 0600 password file and in no log or plan.
#[test]
fn debconf_selections_reach_the_roots_debconf_database() {
    let vm = debian_vm("ID=debian\nVERSION_CODENAME=bookworm\n");
    fake_apt_get(&vm);
    support::install_tool(vm.root.path(), "/usr/bin/perl");
    support::install_tool(vm.root.path(), "/usr/bin/debconf-set-selections");
    support::copy_tree(
        Path::new("/usr/lib/x86_64-linux-gnu/perl-base"),
        &vm.path("/usr/lib/x86_64-linux-gnu/perl-base"),
    );
    support::copy_tree(
        Path::new("/usr/share/perl5/Debconf"),
        &vm.path("/usr/share/perl5/Debconf"),
    );
    fs::copy("/etc/debconf.conf", vm.path("/etc/debconf.conf")).unwrap();
    fs::create_dir_all(vm.path("/var/cache/debconf")).unwrap();
    fs::write(
        vm.host.path().join("guestinfo.metadata"),
        "instance-id: apt-4\nlocal-hostname: apt-vm\n",
    )
    .unwrap();
    fs::write(
        vm.host.path().join("guestinfo.userdata"),
        "#cloud-config\napt:\n  debconf_selections:\n    zone: tzdata tzdata/Areas select Europe\n    db: |\n      probe-db probe-db/root_password password Db-s3cret-pw\n      probe-db probe-db/root_password_again password Db-s3cret-pw\n",
    )
    .unwrap();
    let plan = vm.vmcust(&["plan"]);
    let plan = text(&plan.stdout) + &text(&plan.stderr);
    assert!(
        plan.contains(
            "run: debconf-set-selections (3 selection(s) on its standard input, not shown)"
        ),
        "{plan}"
    );
    let (early, late) = vm.boot();
    let config = fs::read_to_string(vm.path("/var/cache/debconf/config.dat")).unwrap();
    assert!(
        config.contains("Name: tzdata/Areas\nTemplate: tzdata/Areas\nValue: Europe\n"),
        "{config}"
    );
    let passwords = vm.path("/var/cache/debconf/passwords.dat");
    assert!(fs::read_to_string(&passwords)
        .unwrap()
        .contains("Value: Db-s3cret-pw"));
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        fs::metadata(&passwords).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert!(!config.contains("Db-s3cret-pw"));
    for said in [plan, text(&early.stderr), text(&late.stderr)] {
        assert!(!said.contains("Db-s3cret-pw"), "{said}");
    }
    for log in support::walk(&vm.path("/var/log")) {
        if log.is_file() {
            assert!(
                !fs::read_to_string(&log)
                    .unwrap_or_default()
                    .contains("Db-s3cret-pw"),
                "{}",
                log.display()
            );
        }
    }
}

/// Issue 33: a `runcmd` that depends on an apt source finds it written (the module runs
/// before `runcmd`), and the customization ends done, not degraded.
#[test]
fn runcmd_sees_the_apt_source_and_the_customization_is_not_degraded() {
    let vm = debian_vm("ID=debian\nVERSION_CODENAME=trixie\n");
    fake_apt_get(&vm);
    fs::write(
        vm.host.path().join("guestinfo.metadata"),
        "instance-id: apt-5\nlocal-hostname: apt-vm\n",
    )
    .unwrap();
    fs::write(
        vm.host.path().join("guestinfo.userdata"),
        "#cloud-config\napt:\n  sources:\n    tools: {source: 'deb http://repo.example/debian $RELEASE main'}\nruncmd:\n  - cat /etc/apt/sources.list.d/tools.list > /var/tmp/seen-by-runcmd\n",
    )
    .unwrap();
    vm.boot();
    assert_eq!(
        fs::read_to_string(vm.path("/var/tmp/seen-by-runcmd")).unwrap(),
        "deb http://repo.example/debian trixie main\n"
    );
    let (code, st) = vm.status();
    assert_eq!(code, Some(0), "{st}");
    assert!(!st.contains("degraded"), "{st}");
}
