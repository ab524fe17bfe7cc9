//! Given SSH host keys (`ssh_keys`) and the fingerprints of the authorized keys
//! (`ssh_authkey_fingerprints`) on a booted clone: keys made by the real `ssh-keygen`,
//! the template's own host keys in place, clone hygiene on. The given keys win and stay
//! (a second boot keeps them), no key is made besides them, no log or plan line quotes a
//! private key, `sshd -t` takes the result, and the fingerprints printed are the ones
//! `ssh-keygen -l` reads from the same keys.

mod support;

use std::fs;
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;
use std::process::Command;

use base64::Engine as _;
use support::vm::Vm;

/// A key made by `ssh-keygen` in `dir`: its private file.
fn keygen(dir: &Path, name: &str, args: &[&str]) -> std::path::PathBuf {
    support::require_tool("ssh-keygen", "openssh-client");
    let f = dir.join(name);
    let out = Command::new("ssh-keygen")
        .args(["-q", "-N", "", "-C", &format!("{name}@test"), "-f"])
        .arg(&f)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    f
}

fn read(p: &Path) -> String {
    fs::read_to_string(p).unwrap()
}

/// Lines of `text` that quote a line of the body of `key`.
fn quotes(text: &str, key: &str) -> Vec<String> {
    key.lines()
        .filter(|l| l.len() > 20 && !l.starts_with("-----"))
        .filter(|l| text.contains(*l))
        .map(str::to_string)
        .collect()
}

#[test]
fn given_host_keys_win_over_clone_hygiene_and_sshd_takes_them() {
    let keys = tempfile::tempdir().unwrap();
    let ed = keygen(keys.path(), "ed", &["-t", "ed25519"]);
    let rsa = keygen(
        keys.path(),
        "rsa",
        &["-t", "rsa", "-b", "2048", "-m", "PEM"],
    );
    let cert = host_certificate(keys.path(), &ed);
    let user_key = read(&keygen(keys.path(), "user", &["-t", "ed25519"]).with_extension("pub"));

    let vm = Vm::new();
    fs::write(vm.path("/etc/os-release"), "ID=debian\n").unwrap();
    fs::write(vm.path("/etc/group"), "root:x:0:\nsudo:x:27:\n").unwrap();
    fs::write(vm.path("/etc/gshadow"), "root:*::\nsudo:*::\n").unwrap();
    fs::create_dir_all(vm.path("/home")).unwrap();
    // The template's host keys: ecdsa (a type not given) and ed25519 (given).
    fs::create_dir_all(vm.path("/etc/ssh")).unwrap();
    for t in ["ecdsa", "ed25519"] {
        let ok = Command::new("ssh-keygen")
            .args(["-q", "-N", "", "-t", t, "-f"])
            .arg(vm.path(&format!("/etc/ssh/ssh_host_{t}_key")))
            .status()
            .unwrap();
        assert!(ok.success());
    }
    fs::write(
        vm.path("/etc/ssh/sshd_config"),
        "Include /etc/ssh/sshd_config.d/*.conf\nPort 22\n",
    )
    .unwrap();
    fs::create_dir_all(vm.path("/etc/ssh/sshd_config.d")).unwrap();
    let json = |s: &str| serde_json::to_string(s).unwrap();
    let user_data = format!(
        "#cloud-config\nusers: [{{name: alice, ssh_authorized_keys: [{}]}}]\nssh_keys:\n  ed25519_private: {}\n  ed25519_certificate: {}\n  rsa_private: {}\n  rsa_public: {}\nauthkey_hash: sha256\n",
        json(user_key.trim()),
        json(&read(&ed)),
        json(cert.trim()),
        json(&read(&rsa)),
        json(read(&rsa.with_extension("pub")).trim()),
    );
    fs::write(
        vm.host.path().join("guestinfo.metadata"),
        "instance-id: keys-1\nlocal-hostname: vm\n",
    )
    .unwrap();
    fs::write(vm.host.path().join("guestinfo.userdata"), &user_data).unwrap();

    let plan = vm.vmcust(&["plan"]);
    let plan_text =
        String::from_utf8_lossy(&plan.stdout).into_owned() + &String::from_utf8_lossy(&plan.stderr);
    assert!(plan.status.success(), "{plan_text}");
    assert!(
        plan_text.contains(
            "write /etc/ssh/ssh_host_ed25519_key (0600, 0:0): private key given (redacted)"
        ),
        "{plan_text}"
    );

    let (early, late) = vm.boot();
    let log = String::from_utf8_lossy(&early.stderr).into_owned()
        + &String::from_utf8_lossy(&late.stderr);
    for key in [&ed, &rsa] {
        let k = read(key);
        assert!(quotes(&plan_text, &k).is_empty(), "plan quotes a key");
        assert!(quotes(&log, &k).is_empty(), "log quotes a key: {log}");
        // Nor any file vmcust keeps (records, status, the applied list).
        for dir in [
            "/var/lib/vmcust",
            "/run/vmcust",
            "/run/cloud-init",
            "/var/lib/cloud",
            "/var/log",
        ] {
            if !vm.path(dir).exists() {
                continue;
            }
            for (path, text) in support::snapshot(&vm.path(dir)) {
                let m = fs::metadata(vm.path(dir).join(&path)).unwrap();
                if m.mode() & 0o004 != 0 {
                    assert!(
                        quotes(&text, &k).is_empty(),
                        "{dir}/{} quotes a key",
                        path.display()
                    );
                }
            }
        }
    }

    // The given keys are there, as given, with cloud-init's modes; the ecdsa key the
    // template had is gone (ssh_deletekeys), none was made.
    let host = |t: &str| vm.path(&format!("/etc/ssh/ssh_host_{t}_key"));
    assert_eq!(read(&host("ed25519")), read(&ed));
    assert_eq!(read(&host("rsa")), read(&rsa));
    assert_eq!(
        fs::metadata(host("ed25519")).unwrap().mode() & 0o7777,
        0o600
    );
    assert_eq!(
        fs::metadata(host("ed25519").with_extension("pub"))
            .unwrap()
            .mode()
            & 0o7777,
        0o644
    );
    assert!(!host("ecdsa").exists(), "{log}");
    let derived = read(&host("ed25519").with_extension("pub"));
    let ed_pub = read(&ed.with_extension("pub"));
    let want: Vec<&str> = ed_pub.split_whitespace().take(2).collect();
    assert_eq!(derived, format!("{} root@localhost\n", want.join(" ")));
    assert_eq!(
        read(&vm.path("/etc/ssh/ssh_host_ed25519_key-cert.pub")),
        cert.trim()
    );
    assert_eq!(
        read(&vm.path("/etc/ssh/sshd_config.d/50-cloud-init.conf")),
        "HostCertificate /etc/ssh/ssh_host_ed25519_key-cert.pub\n"
    );

    // The fingerprints printed: the sha256 digest ssh-keygen -l reads from the key.
    let lf = Command::new("ssh-keygen")
        .args(["-l", "-E", "sha256", "-f"])
        .arg(keys.path().join("user.pub"))
        .output()
        .unwrap();
    let lf = String::from_utf8_lossy(&lf.stdout).into_owned();
    let b64 = lf
        .split_whitespace()
        .nth(1)
        .and_then(|f| f.strip_prefix("SHA256:"))
        .unwrap();
    let digest = base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(b64)
        .unwrap();
    let hex: Vec<String> = digest.iter().map(|b| format!("{b:02x}")).collect();
    let row = format!("| ssh-ed25519 | {} |    -    | user@test |", hex.join(":"));
    assert!(log.contains(&row), "{row}\n{log}");
    assert!(
        log.contains("Authorized keys from /home/alice/.ssh/authorized_keys for user alice"),
        "{log}"
    );

    // A later boot of the same instance leaves them as they are.
    vm.boot();
    assert_eq!(read(&host("ed25519")), read(&ed));

    // sshd takes the configuration with these keys, where openssh-server is installed.
    if Path::new("/usr/sbin/sshd").is_file() {
        let cfg = keys.path().join("sshd_config");
        fs::write(
            &cfg,
            format!(
                "HostKey {}\nHostKey {}\nHostCertificate {}\n{}",
                host("ed25519").display(),
                host("rsa").display(),
                vm.path("/etc/ssh/ssh_host_ed25519_key-cert.pub").display(),
                "UsePAM no\nPidFile none\n"
            ),
        )
        .unwrap();
        // sshd wants its privilege separation directory, /run/sshd: given in a mount
        // namespace of its own (a tmpfs on /run there), so the machine's / is untouched.
        support::require_tool("unshare", "util-linux");
        let out = Command::new("unshare")
            .args([
                "-rm",
                "sh",
                "-c",
                "mount -t tmpfs tmpfs /run && mkdir /run/sshd && exec /usr/sbin/sshd -t -f \"$0\"",
            ])
            .arg(&cfg)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The host certificate (for `vm.example`) of the key at `key`, signed by a new ed25519
/// CA made by ssh-keygen in `dir`: the text of `<key>-cert.pub`.
fn host_certificate(dir: &Path, key: &Path) -> String {
    let ca = keygen(dir, "ca", &["-t", "ed25519"]);
    let out = Command::new("ssh-keygen")
        .args(["-q", "-s"])
        .arg(&ca)
        .args(["-I", "host", "-h", "-n", "vm.example"])
        .arg(key.with_extension("pub"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let name = format!("{}-cert.pub", key.file_name().unwrap().to_string_lossy());
    read(&dir.join(name))
}

/// An ed25519 host key and its host certificate, made by ssh-keygen in `dir`: (private
/// key text, certificate line).
fn certified_key(dir: &Path) -> (String, String) {
    let key = keygen(dir, "host", &["-t", "ed25519"]);
    (read(&key), host_certificate(dir, &key).trim().to_string())
}

/// A clone with a template `sshd_config` of `template` in `/etc/ssh` (and the drop-in
/// directory), booted with `user_data` (both stages must succeed).
fn boot_with_sshd(template: &str, user_data: &str) -> Vm {
    let vm = Vm::new();
    fs::create_dir_all(vm.path("/etc/ssh/sshd_config.d")).unwrap();
    fs::write(vm.path("/etc/ssh/sshd_config"), template).unwrap();
    boot_prepared(vm, user_data)
}

/// `vm`, its `/etc/ssh` set up by the caller, booted with `user_data` (both stages must
/// succeed).
fn boot_prepared(vm: Vm, user_data: &str) -> Vm {
    fs::write(vm.path("/etc/os-release"), "ID=debian\n").unwrap();
    fs::write(vm.path("/etc/group"), "root:x:0:\nsudo:x:27:\n").unwrap();
    fs::write(vm.path("/etc/gshadow"), "root:*::\nsudo:*::\n").unwrap();
    fs::write(
        vm.host.path().join("guestinfo.metadata"),
        "instance-id: sshd-1\nlocal-hostname: vm\n",
    )
    .unwrap();
    fs::write(vm.host.path().join("guestinfo.userdata"), user_data).unwrap();
    vm.boot();
    vm
}

/// A `write_files` entry for sshd's configuration runs before `ssh_keys` in the same
/// stage: the `HostCertificate` line is added to the user's file, not to the template's.
#[test]
fn host_certificate_goes_into_the_sshd_file_write_files_wrote() {
    let keys = tempfile::tempdir().unwrap();
    let (key, cert) = certified_key(keys.path());
    let json = |s: &str| serde_json::to_string(s).unwrap();
    const CERT_LINE: &str = "HostCertificate /etc/ssh/ssh_host_ed25519_key-cert.pub";
    // (template sshd_config, file write_files writes, its content)
    let table = [
        ("Port 22\n", "/etc/ssh/sshd_config", "Port 2222\n"),
        (
            "Include /etc/ssh/sshd_config.d/*.conf\nPort 22\n",
            "/etc/ssh/sshd_config.d/50-cloud-init.conf",
            "PermitRootLogin no\n",
        ),
    ];
    for (template, path, content) in table {
        let user_data = format!(
            "#cloud-config\nwrite_files: [{{path: {path}, content: {}}}]\nssh_keys:\n  ed25519_private: {}\n  ed25519_certificate: {}\n",
            json(content),
            json(&key),
            json(&cert),
        );
        let vm = boot_with_sshd(template, &user_data);
        assert_eq!(
            read(&vm.path(path)),
            format!("{content}{CERT_LINE}\n"),
            "{path}"
        );
    }
}

/// The `HostCertificate` line keeps the mode of the sshd file it goes into (RHEL's
/// `sshd_config` is 0600 and must not become world-readable); a new file gets
/// cloud-init's mode.
#[test]
fn host_certificate_keeps_the_sshd_file_mode() {
    use std::os::unix::fs::PermissionsExt as _;
    let keys = tempfile::tempdir().unwrap();
    let (key, cert) = certified_key(keys.path());
    let json = |s: &str| serde_json::to_string(s).unwrap();
    let user_data = format!(
        "#cloud-config\nssh_keys:\n  ed25519_private: {}\n  ed25519_certificate: {}\n",
        json(&key),
        json(&cert),
    );
    let include = "Include /etc/ssh/sshd_config.d/*.conf\n";
    // (sshd_config, its mode, the drop-in and its mode if there, the file edited, its
    // mode after)
    let table: &[(&str, u32, Option<u32>, &str, u32)] = &[
        ("Port 22\n", 0o600, None, "/etc/ssh/sshd_config", 0o600),
        ("Port 22\n", 0o640, None, "/etc/ssh/sshd_config", 0o640),
        ("Port 22\n", 0o644, None, "/etc/ssh/sshd_config", 0o644),
        (
            include,
            0o600,
            Some(0o644),
            "/etc/ssh/sshd_config.d/50-cloud-init.conf",
            0o644,
        ),
        (
            include,
            0o600,
            None,
            "/etc/ssh/sshd_config.d/50-cloud-init.conf",
            0o600,
        ),
    ];
    for &(main, main_mode, drop_in, edited, want) in table {
        let vm = Vm::new();
        fs::create_dir_all(vm.path("/etc/ssh/sshd_config.d")).unwrap();
        let set = |p: &str, text: &str, mode: u32| {
            fs::write(vm.path(p), text).unwrap();
            fs::set_permissions(vm.path(p), fs::Permissions::from_mode(mode)).unwrap();
        };
        set("/etc/ssh/sshd_config", main, main_mode);
        if let Some(mode) = drop_in {
            set(
                "/etc/ssh/sshd_config.d/50-cloud-init.conf",
                "Port 22\n",
                mode,
            );
        }
        let vm = boot_prepared(vm, &user_data);
        assert!(
            read(&vm.path(edited)).contains("HostCertificate "),
            "{edited}"
        );
        assert_eq!(
            fs::metadata(vm.path(edited)).unwrap().mode() & 0o7777,
            want,
            "{edited} of {main_mode:o}/{drop_in:?}"
        );
        assert_eq!(
            fs::metadata(vm.path("/etc/ssh/sshd_config"))
                .unwrap()
                .mode()
                & 0o7777,
            main_mode
        );
    }
}

/// A private key given indented (a YAML block indented more than its key, or lines
/// pasted with leading spaces) or with CRLF endings passes the check, which reads
/// trimmed lines: it is written as sshd loads it, so `ssh-keygen -y` reads the written
/// file and finds the same public key.
#[test]
fn a_private_key_is_written_as_sshd_loads_it() {
    let keys = tempfile::tempdir().unwrap();
    let key_file = keygen(keys.path(), "host", &["-t", "ed25519"]);
    let key = read(&key_file);
    let public: Vec<String> = read(&key_file.with_extension("pub"))
        .split_whitespace()
        .take(2)
        .map(str::to_string)
        .collect();
    let json = |s: &str| serde_json::to_string(s).unwrap();
    let indented: String = key.lines().map(|l| format!("   {l}\n")).collect();
    let table = [
        // A YAML block whose indentation indicator keeps 3 spaces in each line.
        format!(
            "#cloud-config\nssh_keys:\n  ed25519_private: |2\n{}",
            indented
                .lines()
                .map(|l| format!("  {l}\n"))
                .collect::<String>()
        ),
        format!(
            "#cloud-config\nssh_keys:\n  ed25519_private: {}\n",
            json(&indented)
        ),
        format!(
            "#cloud-config\nssh_keys:\n  ed25519_private: {}\n",
            json(&key.replace('\n', "\r\n"))
        ),
    ];
    for user_data in &table {
        let vm = Vm::new();
        fs::create_dir_all(vm.path("/etc/ssh")).unwrap();
        let vm = boot_prepared(vm, user_data);
        let written = vm.path("/etc/ssh/ssh_host_ed25519_key");
        assert_eq!(read(&written), key, "{user_data}");
        let out = Command::new("ssh-keygen")
            .arg("-y")
            .arg("-f")
            .arg(&written)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{user_data}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .take(2)
            .map(str::to_string)
            .collect();
        assert_eq!(got, public);
    }
}
