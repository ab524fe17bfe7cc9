//! `ssh_keys` of cloud-init's `ssh` module: given host keys written to `/etc/ssh` —
//! `<type>_private` to `ssh_host_<type>_key` (0600, root's), `<type>_public` to its
//! `.pub` (0644; made from the private key, `root@localhost` as its comment, when not
//! given), `<type>_certificate` to `ssh_host_<type>_key-cert.pub` (0644) with a
//! `HostCertificate` line for sshd, for the types rsa, ecdsa and ed25519.
//!
//! With `ssh_keys` in the document no host key is made (cloud-init's rule): clone hygiene
//! (`src/hygiene.rs`), which runs before this module at the first boot of an instance,
//! removes the template's other keys while `ssh_deletekeys` is on and leaves the given
//! types alone, and this module then writes the given keys over whatever is there, so
//! they are the ones sshd starts with.
//!
//! Every value is checked at the door: a private key must be unencrypted and of its
//! entry's type, a public key or certificate must be the one of that private key. The
//! public half is read from the key itself (`model::ssh_private`), so no program runs and
//! no secret is handed to one. A private key is never shown: not in a message, the plan
//! (`private key given (redacted)`), the document's JSON or a world-readable file.

use serde::{Serialize, Serializer};

use crate::cloud_config::apply::driver::{failed, skipped, ModuleOutcome, Step};
use crate::cloud_config::apply::preview::{action_lines, Look};
use crate::cloud_config::node::{Node, Value};
use crate::cloud_config::read::{join, Reader};
use crate::cloud_config::CloudConfig;
use crate::facts::{Current, Facts, Wanted};
use crate::model::ssh_private::{normalised, public_half, PublicHalf, MAX_PRIVATE_KEY};
use crate::model::{Secret, SshKey};
use crate::plan::{Action, Contents, FileOwner};
use crate::root::{Existing, Root};

/// The host key types `ssh_keys` takes, in the order they are written.
pub(crate) const TYPES: &[&str] = &["rsa", "ecdsa", "ed25519"];

/// sshd's main configuration.
pub(crate) const SSHD_CONFIG: &str = "/etc/ssh/sshd_config";
/// sshd's drop-in directory.
pub(crate) const DROP_IN_DIR: &str = "/etc/ssh/sshd_config.d";
/// cloud-init's drop-in, where `HostCertificate` goes when `sshd_config` includes the
/// drop-in directory.
pub(crate) const DROP_IN: &str = "/etc/ssh/sshd_config.d/50-cloud-init.conf";

/// The entry names `ssh_keys` takes.
const NAMES: &[&str] = &[
    "rsa_private",
    "rsa_public",
    "rsa_certificate",
    "ecdsa_private",
    "ecdsa_public",
    "ecdsa_certificate",
    "ed25519_private",
    "ed25519_public",
    "ed25519_certificate",
];

/// A given private key: the text as sshd loads it (wiped on drop, never shown) and its
/// public half.
#[derive(Debug, Clone)]
pub struct PrivateKey {
    text: Secret,
    public: PublicHalf,
}

impl PartialEq for PrivateKey {
    fn eq(&self, other: &Self) -> bool {
        self.text.expose() == other.text.expose()
    }
}

impl Serialize for PrivateKey {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(crate::cloud_config::redact::REDACTED)
    }
}

/// The given keys of one host key type.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GivenKey {
    /// `rsa`, `ecdsa` or `ed25519`.
    pub key_type: &'static str,
    /// `<type>_private`, shown as `<redacted>`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub private: Option<PrivateKey>,
    /// `<type>_public`, as given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub public: Option<String>,
    /// `<type>_certificate`, as given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub certificate: Option<String>,
}

/// `ssh_keys`: the given keys, by type in [`TYPES`] order.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct GivenHostKeys {
    /// The types with at least one entry.
    pub keys: Vec<GivenKey>,
}

impl GivenHostKeys {
    /// The types whose private key is given: clone hygiene leaves these alone.
    pub fn private_types(&self) -> Vec<String> {
        self.keys
            .iter()
            .filter(|k| k.private.is_some())
            .map(|k| k.key_type.to_string())
            .collect()
    }
}

/// The `.pub` line type names of a host key type.
fn is_type(key_type: &str, kind: &str) -> bool {
    match key_type {
        "rsa" => kind == "ssh-rsa",
        "ed25519" => kind == "ssh-ed25519",
        _ => matches!(
            kind,
            "ecdsa-sha2-nistp256" | "ecdsa-sha2-nistp384" | "ecdsa-sha2-nistp521"
        ),
    }
}

/// The host key type a `.pub` line's type is of, for messages.
fn type_of(kind: &str) -> &str {
    match kind {
        "ssh-rsa" => "rsa",
        "ssh-ed25519" => "ed25519",
        "ssh-dss" => "dsa",
        k if k.starts_with("ecdsa-sha2-") => "ecdsa",
        k => k,
    }
}

/// `ssh_keys`.
pub(crate) fn parse(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    let Some(entries) = r.map(node, key, NAMES) else {
        return;
    };
    let mut given: Vec<GivenKey> = TYPES
        .iter()
        .map(|t| GivenKey {
            key_type: t,
            private: None,
            public: None,
            certificate: None,
        })
        .collect();
    // Where each public key and certificate was, for the cross checks' messages.
    let mut at: Vec<(&str, &str, &Node, String)> = Vec::new();
    let mut ok = true;
    for (k, v) in entries {
        let path = join(key, &k.text);
        let (t, part) = k.text.split_once('_').expect("NAMES have a '_'");
        let slot = given
            .iter_mut()
            .find(|g| g.key_type == t)
            .expect("NAMES name TYPES");
        let Value::Str(text) = &v.value else {
            r.wrong_type(v, &path, "the key file's contents as a string");
            ok = false;
            continue;
        };
        if text.len() > MAX_PRIVATE_KEY {
            r.error(
                v,
                &path,
                format!("is {} bytes long; at most {MAX_PRIVATE_KEY}", text.len()),
            );
            ok = false;
            continue;
        }
        match part {
            "private" => match public_half(text) {
                Err(why) => {
                    r.error(v, &path, format!("{why} (the key is not shown)"));
                    ok = false;
                }
                Ok(half) if !is_type(t, &half.kind) => {
                    r.error(
                        v,
                        &path,
                        format!(
                            "holds a private key of type {} (the key is not shown); \
                             {path} takes a {t} key",
                            type_of(&half.kind)
                        ),
                    );
                    ok = false;
                }
                Ok(half) => {
                    // Written normalised: the check took trimmed lines, sshd does not.
                    slot.private = Some(PrivateKey {
                        text: Secret::new(normalised(text)),
                        public: half,
                    })
                }
            },
            _ => match SshKey::parse(text) {
                Err(why) => {
                    r.error(v, &path, why);
                    ok = false;
                }
                Ok(line) => {
                    let parts = line.parts();
                    let want = if part == "public" {
                        is_type(t, parts.kind)
                    } else {
                        parts
                            .kind
                            .strip_suffix("-cert-v01@openssh.com")
                            .is_some_and(|plain| is_type(t, plain))
                    };
                    if parts.options.is_some() || !want {
                        let what = if part == "public" {
                            format!("a {t} public key line (the .pub file)")
                        } else {
                            format!("a {t} host certificate (the -cert.pub file)")
                        };
                        r.error(v, &path, format!("is a {} line, not {what}", parts.kind));
                        ok = false;
                        continue;
                    }
                    at.push((t, part, v, path.clone()));
                    if part == "public" {
                        slot.public = Some(text.clone());
                    } else {
                        slot.certificate = Some(text.clone());
                    }
                }
            },
        }
    }
    // The public key and the certificate must be the given private key's (and the
    // certificate the given public key's): sshd refuses a certificate of another key,
    // and a wrong .pub would show clients a key the host cannot prove.
    for g in &given {
        let private = g.private.as_ref().map(|p| p.public.blob.clone());
        let public = g
            .public
            .as_deref()
            .and_then(|p| SshKey::parse(p).ok())
            .map(|k| k.blob());
        let certified = g.certificate.as_deref().and_then(|c| {
            let line = SshKey::parse(c).ok()?;
            crate::model::certified_key(line.parts().kind, &line.blob())
        });
        let find = |part: &str| {
            at.iter()
                .find(|(t, p, _, _)| *t == g.key_type && *p == part)
                .map(|(_, _, node, path)| (*node, path.clone()))
        };
        if let (Some(a), Some(b)) = (&private, &public) {
            if a != b {
                if let Some((node, path)) = find("public") {
                    r.error(
                        node,
                        &path,
                        format!(
                            "is not the public key of {}_private (the {} keys do not match); \
                             give the .pub file of the same key (ssh-keygen -y -f KEY prints it)",
                            g.key_type, g.key_type
                        ),
                    );
                    ok = false;
                }
            }
        }
        if let Some(c) = &certified {
            let other = private.as_ref().or(public.as_ref());
            if other.is_some_and(|o| o != c) {
                if let Some((node, path)) = find("certificate") {
                    r.error(
                        node,
                        &path,
                        format!(
                            "certifies another key than the given {} key; give the \
                             certificate signed for this host key",
                            g.key_type
                        ),
                    );
                    ok = false;
                }
            }
        }
    }
    if ok {
        let keys: Vec<GivenKey> = given
            .into_iter()
            .filter(|g| g.private.is_some() || g.public.is_some() || g.certificate.is_some())
            .collect();
        let wanted = GivenHostKeys { keys };
        cfg.ssh_host_keys.given = Some(wanted.private_types());
        cfg.ssh_keys = Some(wanted);
    }
}

/// The private host key file of a type.
fn key_path(t: &str) -> String {
    format!("/etc/ssh/ssh_host_{t}_key")
}

/// One of sshd's configuration files as it is: its text and permission bits.
type SshdFile = Option<(String, u32)>;

/// sshd's configuration as the `HostCertificate` lines are planned against.
#[derive(Debug, Default)]
struct Sshd {
    /// `sshd_config`, when a regular file.
    main: SshdFile,
    /// cloud-init's drop-in, when a regular file.
    drop_in: SshdFile,
    /// Whether something other than a regular file (the directory) is at
    /// [`DROP_IN_DIR`].
    drop_in_dir: bool,
}

impl Sshd {
    /// As the stage's facts saw it, for the preview.
    fn of_facts(facts: &Facts) -> Sshd {
        // Gathered facts hold every file's mode; facts made by hand may not: the new
        // file's default then.
        let file = |p: &str, default: u32| match facts.files.get(p) {
            Some(Current::File(b)) => Some((
                String::from_utf8_lossy(b).into_owned(),
                facts.modes.get(p).copied().unwrap_or(default),
            )),
            _ => None,
        };
        Sshd {
            main: file(SSHD_CONFIG, 0o644),
            drop_in: file(DROP_IN, 0o600),
            drop_in_dir: matches!(facts.files.get(DROP_IN_DIR), Some(Current::NotAFile)),
        }
    }

    /// As the root holds it now: the stage's facts were read before `write_files` ran,
    /// which may have written either file, and that file must be the one edited.
    fn of_root(root: &Root) -> Result<Sshd, String> {
        let existing = |p: &str| {
            root.existing(std::path::Path::new(p))
                .map_err(|e| format!("reading {p} in {}: {e}", root.path().display()))
        };
        let file = |p: &str| -> Result<SshdFile, String> {
            Ok(match existing(p)? {
                Existing::File { contents, mode } => {
                    Some((String::from_utf8_lossy(&contents).into_owned(), mode))
                }
                _ => None,
            })
        };
        Ok(Sshd {
            main: file(SSHD_CONFIG)?,
            drop_in: file(DROP_IN)?,
            drop_in_dir: !matches!(
                existing(DROP_IN_DIR)?,
                Existing::Missing | Existing::File { .. }
            ),
        })
    }
}

/// What the module writes: the keys, then the `HostCertificate` lines (planned against
/// the stage's facts).
pub(crate) fn plan_keys(cfg: &CloudConfig, facts: &Facts) -> Vec<Action> {
    plan_with(cfg, &Sshd::of_facts(facts))
}

/// [`plan_keys`] against sshd's configuration `sshd`.
fn plan_with(cfg: &CloudConfig, sshd: &Sshd) -> Vec<Action> {
    let Some(given) = &cfg.ssh_keys else {
        return Vec::new();
    };
    let mut actions = Vec::new();
    let mut certificates = Vec::new();
    for g in &given.keys {
        let key = key_path(g.key_type);
        if let Some(p) = &g.private {
            actions.push(Action::write_file_as(
                key.clone(),
                Contents::sensitive(p.text.expose().as_bytes().to_vec()),
                0o600,
                FileOwner::Chown { uid: 0, gid: 0 },
                "a given SSH host key (cloud-config ssh_keys)",
            ));
        }
        let public = match (&g.public, &g.private) {
            (Some(text), _) => Some(text.clone()),
            // cloud-init's `ssh-keygen -yf KEY` with `root@localhost` after it.
            (None, Some(p)) => Some(format!("{} root@localhost\n", p.public.line())),
            (None, None) => None,
        };
        if let Some(text) = public {
            actions.push(Action::write_file(
                format!("{key}.pub"),
                Contents::text(text),
                0o644,
                "a given SSH host key's public key (cloud-config ssh_keys)",
            ));
        }
        if let Some(text) = &g.certificate {
            let path = format!("{key}-cert.pub");
            actions.push(Action::write_file(
                path.clone(),
                Contents::text(text.clone()),
                0o644,
                "a given SSH host certificate (cloud-config ssh_keys)",
            ));
            certificates.push(path);
        }
    }
    if let Some(a) = host_certificates(&certificates, sshd) {
        actions.push(a);
    }
    actions
}

/// The files [`plan_keys`] reads: sshd's configuration, when certificates are given.
pub(crate) fn looked_at(cfg: &CloudConfig) -> Vec<String> {
    let certificates = cfg
        .ssh_keys
        .as_ref()
        .is_some_and(|g| g.keys.iter().any(|k| k.certificate.is_some()));
    if certificates {
        vec![SSHD_CONFIG.into(), DROP_IN_DIR.into(), DROP_IN.into()]
    } else {
        Vec::new()
    }
}

/// The `HostCertificate` lines for `paths`, where cloud-init puts them: cloud-init's
/// drop-in when `sshd_config` includes the drop-in directory (or there is no
/// `sshd_config` but the directory), else `sshd_config`, before its first `Match` block
/// (`HostCertificate` is refused inside one). A line already there is not added again.
fn host_certificates(paths: &[String], sshd: &Sshd) -> Option<Action> {
    if paths.is_empty() {
        return None;
    }
    let includes = match &sshd.main {
        Some((text, _)) => text
            .lines()
            .any(|l| l.starts_with(&format!("Include {DROP_IN_DIR}/*.conf"))),
        None => sshd.drop_in_dir,
    };
    // An existing file keeps its mode (RHEL's sshd_config is 0600, and stays so, as
    // cloud-init keeps it); a new drop-in is 0600 (cloud-init's), a new sshd_config 0644.
    let (path, current, new_mode) = if includes {
        (DROP_IN, &sshd.drop_in, 0o600)
    } else {
        (SSHD_CONFIG, &sshd.main, 0o644)
    };
    let (current, mode) = match current {
        Some((text, mode)) => (text.as_str(), *mode),
        None => ("", new_mode),
    };
    let mut lines: Vec<String> = current.lines().map(str::to_string).collect();
    let first_match = lines.iter().position(|l| {
        l.split_whitespace()
            .next()
            .is_some_and(|k| k.eq_ignore_ascii_case("match"))
    });
    let mut at = first_match.unwrap_or(lines.len());
    let mut changed = false;
    for p in paths {
        let has = lines
            .iter()
            .take(first_match.unwrap_or(usize::MAX))
            .any(|l| {
                let mut w = l.split_whitespace();
                w.next()
                    .is_some_and(|k| k.eq_ignore_ascii_case("HostCertificate"))
                    && w.next() == Some(p.as_str())
            });
        if !has {
            lines.insert(at, format!("HostCertificate {p}"));
            at += 1;
            changed = true;
        }
    }
    if !changed {
        return None;
    }
    let mut text = lines.join("\n");
    text.push('\n');
    Some(Action::write_file(
        path,
        Contents::text(text),
        mode,
        "sshd's HostCertificate for the given certificates (cloud-config ssh_keys)",
    ))
}

/// Why the module has nothing to do.
const NOTHING: &str = "no ssh_keys in the cloud-config (host keys: clone hygiene, \
                       ssh_deletekeys and ssh_genkeytypes; authorized keys: the accounts modules)";

/// Writes the given keys.
pub(crate) fn run(s: &Step) -> ModuleOutcome {
    // sshd's files are read now, after write_files, only when a certificate needs them.
    let sshd = if looked_at(s.cfg).is_empty() {
        Sshd::default()
    } else {
        match Sshd::of_root(&s.ctx.root) {
            Ok(sshd) => sshd,
            Err(why) => return failed(why),
        }
    };
    let actions = plan_with(s.cfg, &sshd);
    if actions.is_empty() {
        return skipped(NOTHING);
    }
    s.apply_outcome(actions)
}

/// The files, a private key as `private key given (redacted)`.
pub(crate) fn preview(l: &Look) -> Vec<String> {
    let actions = plan_keys(l.cfg, l.facts);
    if actions.is_empty() {
        let why = match &l.cfg.ssh_keys {
            Some(_) => "ssh_keys is empty: no host key is written, and none is made",
            None => NOTHING,
        };
        return vec![format!("nothing: {why}")];
    }
    actions
        .iter()
        .flat_map(|a| match a {
            Action::WriteFile {
                path,
                mode,
                owner: FileOwner::Chown { uid, gid },
                ..
            } => vec![format!(
                "write {} ({mode:04o}, {uid}:{gid}): private key given (redacted)",
                path.display()
            )],
            a => action_lines(a),
        })
        .collect()
}

/// What it needs of the root's facts: what the files it looks at hold now, and their
/// modes.
pub(crate) fn wants(cfg: &CloudConfig, w: &mut Wanted) {
    w.files.extend(looked_at(cfg));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::document;
    use std::process::Command;

    /// A key made by ssh-keygen: (private, public line).
    fn keygen(args: &[&str]) -> (String, String) {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("k");
        let out = Command::new("ssh-keygen")
            .args(["-q", "-N", "", "-C", "k@test", "-f"])
            .arg(&f)
            .args(args)
            .output()
            .expect("ssh-keygen is installed (openssh-client)");
        assert!(out.status.success(), "{out:?}");
        (
            std::fs::read_to_string(&f).unwrap(),
            std::fs::read_to_string(f.with_extension("pub")).unwrap(),
        )
    }

    fn doc(entries: &[(&str, &str)]) -> String {
        let mut s = "#cloud-config\nssh_keys:\n".to_string();
        for (k, v) in entries {
            s.push_str(&format!("  {k}: {}\n", serde_json::to_string(v).unwrap()));
        }
        s
    }

    /// The public half read from the key is ssh-keygen's own, for every type and file
    /// format ssh-keygen writes.
    #[test]
    fn the_public_half_is_ssh_keygens() {
        for args in [
            &["-t", "ed25519"][..],
            &["-t", "rsa", "-b", "2048"],
            &["-t", "rsa", "-b", "2048", "-m", "PEM"],
            &["-t", "rsa", "-b", "2048", "-m", "PKCS8"],
            &["-t", "ecdsa"],
            &["-t", "ecdsa", "-b", "384", "-m", "PEM"],
            &["-t", "ecdsa", "-b", "521", "-m", "PKCS8"],
        ] {
            let (private, public) = keygen(args);
            let half = public_half(&private).unwrap();
            let want: Vec<&str> = public.split_whitespace().take(2).collect();
            assert_eq!(half.line(), want.join(" "), "{args:?}");
        }
    }

    #[test]
    fn given_keys_are_read_and_checked() {
        let (ed, ed_pub) = keygen(&["-t", "ed25519"]);
        let (rsa, _) = keygen(&["-t", "rsa", "-b", "2048", "-m", "PEM"]);
        let (_, other_pub) = keygen(&["-t", "ed25519"]);
        let (ok, p) = document::from_text(&doc(&[
            ("ed25519_private", &ed),
            ("ed25519_public", ed_pub.trim()),
            ("rsa_private", &rsa),
        ]));
        assert!(p.is_empty(), "{p:?}");
        let given = ok.ssh_keys.as_ref().unwrap();
        assert_eq!(
            given.keys.iter().map(|k| k.key_type).collect::<Vec<_>>(),
            ["rsa", "ed25519"]
        );
        assert_eq!(
            ok.ssh_host_keys.given,
            Some(vec!["rsa".to_string(), "ed25519".to_string()])
        );
        // Shown, the private keys are redacted.
        let json = serde_json::to_string(&ok).unwrap() + &format!("{ok:?}");
        for key in [&ed, &rsa] {
            let body = key.lines().nth(1).unwrap();
            assert!(!json.contains(body), "{json}");
        }
        assert!(json.contains("<redacted>"), "{json}");
        // (entries, the message's place and words)
        let table: &[(Vec<(&str, &str)>, &str)] = &[
            (
                vec![("ed25519_private", &ed), ("ed25519_public", other_pub.trim())],
                "ssh_keys.ed25519_public: is not the public key of ed25519_private (the ed25519 keys do not match)",
            ),
            (vec![("rsa_private", &ed)], "ssh_keys.rsa_private: holds a private key of type ed25519"),
            (vec![("rsa_public", ed_pub.trim())], "ssh_keys.rsa_public: is a ssh-ed25519 line, not a rsa public key line"),
            (vec![("ed25519_certificate", ed_pub.trim())], "not a ed25519 host certificate"),
            (vec![("ed25519_private", "not a key")], "ssh_keys.ed25519_private: not a private key (no -----BEGIN line)"),
            (vec![("ed25519_private", &ed[..ed.len() / 2])], "without its -----END line"),
        ];
        for (entries, want) in table {
            let (cfg, p) = document::from_text(&doc(entries));
            let all: String = p
                .iter()
                .map(|p| format!("{}: {}\n", p.path, p.message))
                .collect();
            assert!(all.contains(want), "{want}: {all}");
            assert!(cfg.ssh_keys.is_none(), "{want}");
            assert!(!all.contains(ed.lines().nth(1).unwrap()), "{all}");
        }
        let (cfg, p) = document::from_text("#cloud-config\nssh_keys: {dsa_private: x}\n");
        assert!(format!("{p:?}").contains("dsa_private"), "{p:?}");
        assert_eq!(cfg.ssh_keys, Some(GivenHostKeys::default()));
        assert_eq!(cfg.ssh_host_keys.given, Some(vec![]));
    }

    #[test]
    fn keys_are_planned_as_cloud_init_writes_them() {
        let (ed, ed_pub) = keygen(&["-t", "ed25519"]);
        let dir = tempfile::tempdir().unwrap();
        let ca = dir.path().join("ca");
        let host = dir.path().join("host.pub");
        std::fs::write(&host, &ed_pub).unwrap();
        let ok = Command::new("ssh-keygen")
            .args(["-q", "-N", "", "-t", "ed25519", "-f"])
            .arg(&ca)
            .status()
            .unwrap();
        assert!(ok.success());
        let ok = Command::new("ssh-keygen")
            .args(["-q", "-s"])
            .arg(&ca)
            .args(["-I", "host", "-h", "-n", "h.example"])
            .arg(&host)
            .status()
            .unwrap();
        assert!(ok.success());
        let cert = std::fs::read_to_string(dir.path().join("host-cert.pub")).unwrap();
        let (cfg, p) = document::from_text(&doc(&[
            ("ed25519_private", &ed),
            ("ed25519_certificate", cert.trim()),
        ]));
        assert!(p.is_empty(), "{p:?}");
        let mut facts = Facts::default();
        facts.files.insert(
            SSHD_CONFIG.into(),
            Current::File(b"Port 22\nMatch User x\n  X11Forwarding no\n".to_vec()),
        );
        let actions = plan_keys(&cfg, &facts);
        let shown: Vec<(String, u32)> = actions
            .iter()
            .map(|a| match a {
                Action::WriteFile { path, mode, .. } => (path.display().to_string(), *mode),
                a => panic!("{a:?}"),
            })
            .collect();
        assert_eq!(
            shown,
            [
                ("/etc/ssh/ssh_host_ed25519_key".to_string(), 0o600),
                ("/etc/ssh/ssh_host_ed25519_key.pub".to_string(), 0o644),
                ("/etc/ssh/ssh_host_ed25519_key-cert.pub".to_string(), 0o644),
                (SSHD_CONFIG.to_string(), 0o644),
            ]
        );
        let Action::WriteFile { contents, .. } = &actions[3] else {
            panic!()
        };
        assert_eq!(
            contents.display(),
            "Port 22\nHostCertificate /etc/ssh/ssh_host_ed25519_key-cert.pub\nMatch User x\n  X11Forwarding no\n"
        );
        // The derived .pub is ssh-keygen's key with cloud-init's comment.
        let Action::WriteFile { contents, .. } = &actions[1] else {
            panic!()
        };
        let want: Vec<&str> = ed_pub.split_whitespace().take(2).collect();
        assert_eq!(
            contents.display(),
            format!("{} root@localhost\n", want.join(" "))
        );
        // A drop-in directory included: the line goes to cloud-init's drop-in, once.
        facts.files.insert(
            SSHD_CONFIG.into(),
            Current::File(b"Include /etc/ssh/sshd_config.d/*.conf\n".to_vec()),
        );
        facts.files.insert(
            DROP_IN.into(),
            Current::File(b"HostCertificate /etc/ssh/ssh_host_ed25519_key-cert.pub\n".to_vec()),
        );
        let actions = plan_keys(&cfg, &facts);
        assert_eq!(actions.len(), 3, "{actions:?}");
        facts.files.remove(DROP_IN);
        let actions = plan_keys(&cfg, &facts);
        assert!(
            matches!(&actions[3], Action::WriteFile { path, mode: 0o600, .. } if path.to_str() == Some(DROP_IN)),
            "{actions:?}"
        );
        // An existing drop-in keeps its mode.
        facts
            .files
            .insert(DROP_IN.into(), Current::File(b"Port 22\n".to_vec()));
        facts.modes.insert(DROP_IN.into(), 0o640);
        let actions = plan_keys(&cfg, &facts);
        assert!(
            matches!(&actions[3], Action::WriteFile { path, mode: 0o640, .. } if path.to_str() == Some(DROP_IN)),
            "{actions:?}"
        );
        // The plan never shows the private key.
        let look_lines: Vec<String> = actions
            .iter()
            .flat_map(|a| match a {
                Action::WriteFile {
                    owner: FileOwner::Chown { .. },
                    ..
                } => vec!["redacted".to_string()],
                a => action_lines(a),
            })
            .collect();
        assert!(!look_lines.join("\n").contains(ed.lines().nth(1).unwrap()));
    }
}
