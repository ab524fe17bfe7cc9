//! Private key material is never quoted, not even in part, in any message or file,
//! whatever field it was pasted into (docs/security.md, "Secrets"): real keys from
//! `ssh-keygen` (OpenSSH and PEM) and a PuTTY `.ppk`, whole or line by line, in
//! cloud-config fields of every module and in the `authorized_keys` lines every source
//! reads.

mod support;

use std::process::Command;

use vmcust::test_api::document;
use vmcust::test_api::model::SshKey;

/// Private keys as users paste them: OpenSSH's own format, PEM, and PuTTY's.
fn private_keys() -> Vec<String> {
    support::require_tool("ssh-keygen", "openssh-client");
    let dir = tempfile::tempdir().unwrap();
    let mut keys = Vec::new();
    for (name, args) in [
        ("ed", &["-t", "ed25519"][..]),
        ("pem", &["-t", "ecdsa", "-m", "PEM"][..]),
    ] {
        let file = dir.path().join(name);
        let out = Command::new("ssh-keygen")
            .args(args)
            .args(["-q", "-N", "", "-C", "x@y", "-f"])
            .arg(&file)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        keys.push(std::fs::read_to_string(&file).unwrap());
    }
    keys.push(
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: x@y\n\
         Public-Lines: 2\nAAAAC3NzaC1lZDI1NTE5AAAAIDk2M2NkNjQ0YzQ2ZmQ0NzRlNzRh\nYTM=\n\
         Private-Lines: 1\nAAAAIFhVRnGk9oCkmKJ0ZWxxbmRqYWtzZGprc2FqZGFzZA==\n\
         Private-MAC: 2a3d4c5b6a7f8e9d0c1b2a3d4c5b6a7f8e9d0c1b2a3d4c5b6a7f8e9d0c1b2a3d\n"
            .into(),
    );
    keys
}

/// Every 10-character piece of every long word of `key` (its base64 lines, PuTTY's
/// header): none may show in a message. Short words (`ssh-ed25519`, `-----BEGIN`) are
/// left out: messages name key types themselves.
fn pieces(key: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in key.split_whitespace().filter(|w| w.len() >= 16) {
        let chars: Vec<char> = word.chars().collect();
        for w in chars.windows(10) {
            out.push(w.iter().collect());
        }
    }
    out
}

fn assert_not_quoted(key: &str, what: &str, text: &str) {
    for p in pieces(key) {
        assert!(
            !text.contains(&p),
            "{what}: {p:?} of the key quoted in {text}"
        );
    }
}

/// The key pasted whole, and each of its lines, into fields of every module: the
/// problems (what `vmcust schema`, the logs, the result and status files say) quote
/// none of it.
#[test]
fn no_field_quotes_a_pasted_private_key() {
    let fields = [
        "ssh_authorized_keys: [{K}]",
        "users: [{name: alice, ssh_authorized_keys: [{K}]}]",
        "users: [{name: {K}}]",
        "users: [{name: alice, shell: {K}}]",
        "chpasswd: {users: [{name: {K}, type: RANDOM}]}",
        "hostname: {K}",
        "fqdn: {K}",
        "timezone: {K}",
        "write_files: [{path: {K}, content: x}]",
        "write_files: [{path: /etc/x, owner: {K}}]",
        "write_files: [{path: /etc/x, encoding: {K}}]",
        "write_files: [{path: /etc/x, permissions: {K}}]",
        "ntp: {servers: [{K}]}",
        "ntp: {ntp_client: {K}}",
        "ca_certs: {trusted: [{K}]}",
        "power_state: {mode: {K}}",
        "packages: [{K}]",
        "groups: [{K}]",
        "ssh_keys: {rsa_private: {K}}",
        "ssh_keys: {ed25519_private: {K}}",
        "ssh_keys: {ecdsa_private: {K}}",
        "ssh_keys: {ed25519_public: {K}}",
        "ssh_keys: {rsa_certificate: {K}}",
        "authkey_hash: {K}",
    ];
    for key in private_keys() {
        let mut values: Vec<String> = vec![key.clone()];
        values.extend(key.lines().map(str::to_string));
        for field in fields {
            for v in &values {
                let doc = format!(
                    "#cloud-config\n{}\n",
                    field.replace("{K}", &serde_json::to_string(v).unwrap())
                );
                let (_, problems) = document::from_text(&doc);
                let json = serde_json::to_string(&problems).unwrap();
                assert_not_quoted(&key, field, &json);
            }
        }
    }
}

/// The `authorized_keys` line check every source uses (guestinfo metadata, OVF
/// `public-keys`, cust.cfg, cloud-config): a private key whole or line by line is
/// refused and none of it is quoted.
#[test]
fn a_private_key_is_refused_as_a_public_key_without_a_quote() {
    for key in private_keys() {
        for line in std::iter::once(key.as_str()).chain(key.lines()) {
            if SshKey::is_not_a_key(line) {
                continue;
            }
            let e = SshKey::parse(line).unwrap_err();
            assert_not_quoted(&key, line, &e);
        }
    }
}

/// End to end, through a boot: a private key pasted into `ssh_authorized_keys` of the
/// guestinfo user-data (whole, and line by line) is refused, and none of it shows on any
/// surface — the stages' output, `vmcust status`, the stand-in's `cloud-init status
/// --long`, the world-readable result and status files, and vmcust's log.
#[test]
fn a_booted_private_key_reaches_no_message_log_or_status_file() {
    use std::fs;
    use std::os::unix::fs::PermissionsExt as _;
    use support::vm::Vm;

    for key in private_keys() {
        let entries: Vec<String> = std::iter::once(key.clone())
            .chain(key.lines().map(str::to_string))
            .collect();
        let vm = Vm::new();
        fs::create_dir_all(vm.path("/root")).unwrap();
        fs::write(
            vm.host.path().join("guestinfo.metadata"),
            "instance-id: pk-1\nlocal-hostname: pk\n",
        )
        .unwrap();
        fs::write(
            vm.host.path().join("guestinfo.userdata"),
            format!(
                "#cloud-config\nssh_authorized_keys: {}\n",
                serde_json::to_string(&entries).unwrap()
            ),
        )
        .unwrap();
        let mut said = String::new();
        for stage in ["early", "late"] {
            let out = vm.run(stage);
            said += &support::text(&out.stdout);
            said += &support::text(&out.stderr);
        }
        let (_, status) = vm.status();
        said += &status;
        let bin = vm.host.path().join("bin");
        fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_vmcust"), bin.join("cloud-init")).unwrap();
        let long = Command::new(bin.join("cloud-init"))
            .args(["status", "--long"])
            .env("VMCUST_ROOT", vm.root.path())
            .output()
            .unwrap();
        said += &support::text(&long.stdout);
        assert!(
            said.contains("ssh_authorized_keys"),
            "the refusal names the field: {said}"
        );
        assert_not_quoted(&key, "the stages' output and status", &said);

        // Every text file others may read, and the logs whatever their mode.
        let mut files = vec![vm.root.path().to_path_buf()];
        let mut seen = 0;
        while let Some(p) = files.pop() {
            let meta = fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                files.extend(fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
                continue;
            }
            let rel = p.strip_prefix(vm.root.path()).unwrap();
            let readable = meta.permissions().mode() & 0o004 != 0;
            if !meta.is_file() || !(readable || rel.starts_with("var/log")) {
                continue;
            }
            let bytes = fs::read(&p).unwrap();
            if bytes.contains(&0) {
                continue; // the root's programs
            }
            let text = String::from_utf8_lossy(&bytes).into_owned();
            assert_not_quoted(&key, &rel.display().to_string(), &text);
            seen += 1;
        }
        for f in [
            "var/lib/cloud/data/status.json",
            "var/lib/cloud/data/result.json",
            "var/log/vmcust.log",
        ] {
            assert!(vm.path(f).is_file(), "{f} was written");
        }
        assert!(seen > 3, "{seen} files looked at");
    }
}
