//! SSH public keys are checked as `sshd` reads them: every key type `ssh-keygen` makes, and
//! a certificate of each, is accepted; the same key cut at every length, with bytes after
//! its end, or under another type's name is refused, naming the key and never quoting it.
//! `ssh-keygen -l` is asked too, so the two agree on real keys.

use std::path::Path;
use std::process::Command;

use base64::Engine as _;
use proptest::prelude::*;
use vmcust::test_api::model::SshKey;

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// Runs `ssh-keygen` with `args`; whether it succeeded.
fn keygen(args: &[&str], file: &Path) -> bool {
    Command::new("ssh-keygen")
        .args(args)
        .arg(file)
        .output()
        .unwrap_or_else(|e| {
            panic!("ssh-keygen cannot run ({e}); install the Debian package openssh-client")
        })
        .status
        .success()
}

/// Whether `ssh-keygen -l` reads `line` as a public key.
fn keygen_reads(dir: &Path, line: &str) -> bool {
    let file = dir.join("probe.pub");
    std::fs::write(&file, format!("{line}\n")).unwrap();
    keygen(&["-l", "-f"], &file)
}

/// SSH wire strings, concatenated.
fn wire(parts: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for p in parts {
        out.extend_from_slice(&(p.len() as u32).to_be_bytes());
        out.extend_from_slice(p);
    }
    out
}

/// The wire strings of a blob, in order.
fn fields(mut blob: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    while let Some((n, rest)) = blob.split_first_chunk::<4>() {
        let n = u32::from_be_bytes(*n) as usize;
        out.push(rest[..n].to_vec());
        blob = &rest[n..];
    }
    out
}

/// A key line's type, blob and comment.
fn split(line: &str) -> (String, Vec<u8>, String) {
    let mut words = line.split_whitespace();
    let kind = words.next().unwrap().to_string();
    let blob = B64.decode(words.next().unwrap()).unwrap();
    (kind, blob, words.collect::<Vec<_>>().join(" "))
}

/// Every key this machine's `ssh-keygen` can make or read, plain and certified, as
/// (name, line). A type `ssh-keygen` cannot make is skipped, and said so.
fn real_keys(dir: &Path) -> Vec<(String, String)> {
    let made: &[(&str, &[&str])] = &[
        ("ed25519", &["-t", "ed25519"]),
        ("rsa", &["-t", "rsa", "-b", "2048"]),
        ("ecdsa256", &["-t", "ecdsa", "-b", "256"]),
        ("ecdsa384", &["-t", "ecdsa", "-b", "384"]),
        ("ecdsa521", &["-t", "ecdsa", "-b", "521"]),
        ("dsa", &["-t", "dsa"]),
    ];
    let mut keys = Vec::new();
    for (name, args) in made {
        let file = dir.join(name);
        let mut all = vec!["-q", "-N", "", "-C", "made@test"];
        all.extend_from_slice(args);
        all.push("-f");
        if !keygen(&all, &file) {
            eprintln!("skipping {name}: this ssh-keygen does not make {args:?} keys");
            continue;
        }
        let line = std::fs::read_to_string(file.with_extension("pub")).unwrap();
        keys.push((name.to_string(), line.trim().to_string()));
    }
    // Security-key (FIDO) keys need the device to be made; their public half is the
    // Ed25519 or ECDSA key and an application string, built here from the keys above
    // and checked below to be what ssh-keygen reads.
    let by_name = |n: &str| keys.iter().find(|(k, _)| k == n).map(|(_, l)| split(l).1);
    let mut sk = Vec::new();
    if let Some(ed) = by_name("ed25519") {
        let f = fields(&ed);
        let blob = wire(&[b"sk-ssh-ed25519@openssh.com", &f[1], b"ssh:"]);
        sk.push(("sk-ed25519", "sk-ssh-ed25519@openssh.com", blob));
    }
    if let Some(ec) = by_name("ecdsa256") {
        let f = fields(&ec);
        let blob = wire(&[b"sk-ecdsa-sha2-nistp256@openssh.com", &f[1], &f[2], b"ssh:"]);
        sk.push(("sk-ecdsa256", "sk-ecdsa-sha2-nistp256@openssh.com", blob));
    }
    for (name, kind, blob) in sk {
        let line = format!("{kind} {} made@test", B64.encode(blob));
        std::fs::write(dir.join(format!("{name}.pub")), format!("{line}\n")).unwrap();
        keys.push((name.to_string(), line));
    }
    // A certificate of each, signed in turn by an Ed25519 and an RSA authority.
    let cas = ["ca-ed25519", "ca-rsa"];
    assert!(keygen(
        &["-q", "-N", "", "-t", "ed25519", "-f"],
        &dir.join(cas[0])
    ));
    assert!(keygen(
        &["-q", "-N", "", "-t", "rsa", "-b", "2048", "-f"],
        &dir.join(cas[1])
    ));
    let plain: Vec<String> = keys.iter().map(|(n, _)| n.clone()).collect();
    for (i, name) in plain.iter().enumerate() {
        let ca = dir.join(cas[i % 2]).display().to_string();
        let public = dir.join(format!("{name}.pub"));
        let signed = keygen(
            &[
                "-q",
                "-s",
                &ca,
                "-I",
                "key id",
                "-n",
                "alice,bob",
                "-V",
                "+52w",
                "-O",
                "force-command=/bin/true",
            ],
            &public,
        );
        assert!(signed, "ssh-keygen cannot certify {name}");
        let cert = std::fs::read_to_string(dir.join(format!("{name}-cert.pub"))).unwrap();
        keys.push((format!("{name} certificate"), cert.trim().to_string()));
    }
    keys
}

/// A refusal names the key by its type and comment, and quotes no part of its base64.
fn assert_refused(line: &str, kind: &str, blob_b64: &str, case: &str) {
    match SshKey::parse(line) {
        Ok(_) => panic!("{case}: accepted"),
        Err(e) => {
            assert!(
                e.contains(&format!("the {kind} key \"made@test\"")),
                "{case}: the key is not named: {e}"
            );
            assert!(
                !e.contains(&blob_b64[..blob_b64.len().min(24)]),
                "{case}: the key is quoted: {e}"
            );
        }
    }
}

#[test]
fn real_keys_are_taken_and_every_cut_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let keys = real_keys(dir.path());
    assert!(keys.len() >= 6, "{keys:?}");
    for (name, line) in &keys {
        assert!(
            keygen_reads(dir.path(), line),
            "ssh-keygen -l refuses {name}"
        );
        assert!(
            SshKey::parse(line).is_ok(),
            "{name}: {:?}",
            SshKey::parse(line)
        );
        let (kind, blob, comment) = split(line);
        assert_eq!(comment, "made@test");
        let b64 = B64.encode(&blob);
        // The blob cut at every byte.
        for len in 1..blob.len() {
            let cut = format!("{kind} {} made@test", B64.encode(&blob[..len]));
            assert_refused(&cut, &kind, &b64, &format!("{name} cut to {len} bytes"));
        }
        // The text cut at every 4-character boundary, as a copy that lost its end; for
        // some, ssh-keygen agrees.
        for (i, len) in (4..b64.len()).step_by(4).enumerate() {
            let cut = format!("{kind} {} made@test", &b64[..len]);
            let case = format!("{name} cut to {len} characters");
            assert_refused(&cut, &kind, &b64, &case);
            if i % 8 == 0 {
                assert!(
                    !keygen_reads(dir.path(), &cut),
                    "{case}: ssh-keygen reads it"
                );
            }
        }
        // Bytes after the end.
        let mut longer = blob.clone();
        longer.push(0);
        let trailing = format!("{kind} {} made@test", B64.encode(&longer));
        assert!(!keygen_reads(dir.path(), &trailing), "{name}");
        assert_refused(&trailing, &kind, &b64, &format!("{name} with a byte more"));
        assert!(
            SshKey::parse(&trailing)
                .unwrap_err()
                .contains("1 bytes after the end of the key"),
            "{name}"
        );
        // Under another type's name.
        let other = if kind == "ssh-ed25519" {
            "ssh-rsa"
        } else {
            "ssh-ed25519"
        };
        let mixed = format!("{other} {b64} made@test");
        assert!(!keygen_reads(dir.path(), &mixed), "{name}");
        let e = SshKey::parse(&mixed).unwrap_err();
        assert!(
            e.contains(&format!("holds a key of type \"{kind}\"")),
            "{e}"
        );
    }
}

/// Fields that are there but wrong: each refused with the field named, as ssh-keygen
/// refuses it.
#[test]
fn wrong_fields_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let rsa_n = |bytes: usize| {
        let mut n = vec![0xc5; bytes];
        n.insert(0, 0);
        n
    };
    let point = |tag: u8, len: usize| {
        let mut p = vec![tag];
        p.extend(std::iter::repeat_n(7, len));
        p
    };
    let table: Vec<(&str, &str, Vec<u8>, &str)> = vec![
        (
            "an RSA key of 512 bits",
            "ssh-rsa",
            wire(&[b"ssh-rsa", &[1, 0, 1], &rsa_n(64)]),
            "bad RSA modulus n: 512 bits",
        ),
        (
            "a negative RSA modulus",
            "ssh-rsa",
            wire(&[b"ssh-rsa", &[1, 0, 1], &[0xc5; 256]]),
            "bad RSA modulus n: a negative number",
        ),
        (
            "an Ed25519 key of 31 bytes",
            "ssh-ed25519",
            wire(&[b"ssh-ed25519", &[9; 31]]),
            "bad Ed25519 public key: 31 bytes instead of 32",
        ),
        (
            "a nistp384 curve in a nistp256 key",
            "ecdsa-sha2-nistp256",
            wire(&[b"ecdsa-sha2-nistp256", b"nistp384", &point(4, 64)]),
            "bad ECDSA curve name: \"nistp384\" inside a key whose type names nistp256",
        ),
        (
            "a compressed point",
            "ecdsa-sha2-nistp256",
            wire(&[b"ecdsa-sha2-nistp256", b"nistp256", &point(2, 32)]),
            "not in uncompressed form",
        ),
        (
            "a short point",
            "ecdsa-sha2-nistp384",
            wire(&[b"ecdsa-sha2-nistp384", b"nistp384", &point(4, 64)]),
            "bad ECDSA public point: 65 bytes; a nistp384 point is 0x04 and 96 bytes",
        ),
    ];
    for (case, kind, blob, want) in table {
        let line = format!("{kind} {} made@test", B64.encode(&blob));
        assert!(
            !keygen_reads(dir.path(), &line),
            "{case}: ssh-keygen reads it"
        );
        let e = SshKey::parse(&line).unwrap_err();
        assert!(
            e.contains(&format!("the {kind} key \"made@test\" has a {want}")) || e.contains(want),
            "{case}: {e}"
        );
    }
}

/// An Ed25519 or RSA blob built from arbitrary key material.
fn any_blob() -> impl Strategy<Value = (&'static str, Vec<u8>)> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 32)
            .prop_map(|k| ("ssh-ed25519", wire(&[b"ssh-ed25519", &k]))),
        (
            proptest::collection::vec(any::<u8>(), 1..8),
            proptest::collection::vec(any::<u8>(), 129..300)
        )
            .prop_map(|(mut e, mut n)| {
                e[0] = e[0].clamp(1, 0x7f);
                n[0] = n[0].clamp(0x40, 0x7f);
                ("ssh-rsa", wire(&[b"ssh-rsa", &e, &n]))
            }),
    ]
}

proptest! {
    /// A well-formed key is taken; the same key cut anywhere or with anything after it
    /// is refused; and no line of any bytes makes the check panic.
    #[test]
    fn cuts_and_tails_are_always_refused(
        (kind, blob) in any_blob(),
        cut in any::<prop::sample::Index>(),
        tail in proptest::collection::vec(any::<u8>(), 1..16),
        noise in proptest::collection::vec(any::<u8>(), 0..200),
    ) {
        let line = |b: &[u8]| format!("{kind} {} k@x", B64.encode(b));
        prop_assert!(SshKey::parse(&line(&blob)).is_ok());
        let len = 1 + cut.index(blob.len() - 1);
        prop_assert!(SshKey::parse(&line(&blob[..len])).is_err());
        let mut longer = blob.clone();
        longer.extend_from_slice(&tail);
        prop_assert!(SshKey::parse(&line(&longer)).is_err());
        let mut typed = wire(&[kind.as_bytes()]);
        typed.extend_from_slice(&noise);
        let _ = SshKey::parse(&line(&typed));
    }
}
