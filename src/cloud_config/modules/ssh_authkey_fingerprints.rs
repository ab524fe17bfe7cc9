//! `ssh_authkey_fingerprints` (cloud-init's `cc_ssh_authkey_fingerprints`): at the end
//! of the late stage, the fingerprints of each user's authorized keys logged as
//! cloud-init prints them to the console — per user a `ci-info: ` table framed by
//! `Authorized keys from FILE for user NAME`, with the key type, the hex digest of the
//! key (`authkey_hash`, default sha256) in colon-separated pairs, the options and the
//! comment. `no_ssh_fingerprints: true` turns it off. It writes no file.
//!
//! The users are the ones the accounts modules resolve (the document's, the default
//! user), less `system` and `no_create_home` ones, as cloud-init's; the file is the one
//! vmcust installs keys to, `~/.ssh/authorized_keys` (cloud-init reads sshd's
//! `AuthorizedKeysFile`, which vmcust leaves as the template has it).

use std::io;
use std::path::Path;

use sha2::Digest as _;

use crate::cloud_config::apply::driver::{failed, skipped, ModuleOutcome, Step};
use crate::cloud_config::apply::preview::Look;
use crate::cloud_config::node::{Node, Value};
use crate::cloud_config::read::Reader;
use crate::cloud_config::CloudConfig;
use crate::model::{SshKey, SSH_KEY_TYPES};

/// The hashes `authkey_hash` takes: Python's `hashlib` names of the SHA-2 family.
pub(crate) const HASHES: &[&str] = &["sha224", "sha256", "sha384", "sha512"];

/// The longest `authorized_keys` file read (sshd reads lines of up to 16 KiB; a few
/// hundred keys).
const MAX_KEYS_FILE: u64 = 4 * 1024 * 1024;

/// What cloud-init prints before each line.
const PREFIX: &str = "ci-info: ";

/// `no_ssh_fingerprints`.
pub(crate) fn parse_disable(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    cfg.no_ssh_fingerprints = r.bool(node, key);
}

/// `authkey_hash`: one of [`HASHES`]; `md5` and `sha1` (which `hashlib` also knows) are
/// not applied.
pub(crate) fn parse_hash(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    let Some(name) = r.line(node, key, 32) else {
        return;
    };
    let lower = name.to_ascii_lowercase();
    if HASHES.contains(&lower.as_str()) {
        cfg.authkey_hash = Some(lower);
    } else if matches!(lower.as_str(), "md5" | "sha1") {
        r.not_applied(
            node,
            key,
            &format!("{lower} fingerprints are not printed"),
            &format!("use one of {}", HASHES.join(", ")),
        );
    } else if let Value::Str(_) = node.value {
        r.error(
            node,
            key,
            format!(
                "{} is not a hash vmcust knows; use one of {}",
                crate::model::quote(&name),
                HASHES.join(", ")
            ),
        );
    }
}

/// The hex digest of `blob` with `hash`, in colon-separated pairs.
pub(crate) fn fingerprint(hash: &str, blob: &[u8]) -> String {
    let digest: Vec<u8> = match hash {
        "sha224" => sha2::Sha224::digest(blob).to_vec(),
        "sha384" => sha2::Sha384::digest(blob).to_vec(),
        "sha512" => sha2::Sha512::digest(blob).to_vec(),
        _ => sha2::Sha256::digest(blob).to_vec(),
    };
    digest
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// Python's `str.center`: the odd space goes left when the width is odd too.
fn center(text: &str, width: usize) -> String {
    let len = text.chars().count();
    if len >= width {
        return text.to_string();
    }
    let marg = width - len;
    let left = marg / 2 + (marg & width & 1);
    format!("{}{text}{}", " ".repeat(left), " ".repeat(marg - left))
}

/// The lines printed for `user` whose keys file `file` holds `text` (`None`: missing),
/// each with the `ci-info: ` prefix, as cloud-init's `_pprint_key_entries` lays them out.
pub(crate) fn table(user: &str, file: &str, text: Option<&str>, hash: &str) -> Vec<String> {
    let lines: Vec<&str> = text.map(|t| t.lines().collect()).unwrap_or_default();
    if lines.is_empty() {
        return vec![format!(
            "{PREFIX}no authorized SSH keys fingerprints found for user {user}."
        )];
    }
    let fields = [
        "Keytype".to_string(),
        format!("Fingerprint ({hash})"),
        "Options".to_string(),
        "Comment".to_string(),
    ];
    let mut rows: Vec<[String; 4]> = Vec::new();
    for l in lines {
        // cloud-init prints the lines whose type it knows.
        let Ok(key) = SshKey::parse(l) else {
            continue;
        };
        let p = key.parts();
        if !SSH_KEY_TYPES.contains(&p.kind) {
            continue;
        }
        let or_dash = |s: &str| {
            if s.is_empty() {
                "-".to_string()
            } else {
                s.to_string()
            }
        };
        rows.push([
            p.kind.to_string(),
            fingerprint(hash, &key.blob()),
            or_dash(p.options.unwrap_or("").trim()),
            or_dash(p.comment),
        ]);
    }
    let mut widths: Vec<usize> = fields.iter().map(|f| f.chars().count()).collect();
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let hdiv = format!(
        "+{}+",
        widths
            .iter()
            .map(|w| "-".repeat(w + 2))
            .collect::<Vec<_>>()
            .join("+")
    );
    let row = |cells: &[String]| {
        format!(
            "|{}|",
            cells
                .iter()
                .zip(&widths)
                .map(|(c, w)| center(c, w + 2))
                .collect::<Vec<_>>()
                .join("|")
        )
    };
    let mut body = vec![hdiv.clone(), row(&fields), hdiv.clone()];
    body.extend(rows.iter().map(|r| row(r)));
    body.push(hdiv);
    let width = body.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    // Python's format `^` with `+` as fill: the odd one goes right.
    let title = format!("Authorized keys from {file} for user {user}");
    let pad = width.saturating_sub(title.chars().count());
    let head = format!(
        "{}{title}{}",
        "+".repeat(pad / 2),
        "+".repeat(pad - pad / 2)
    );
    std::iter::once(head)
        .chain(body)
        .map(|l| format!("{PREFIX}{l}"))
        .collect()
}

/// The users whose keys are printed, with their `authorized_keys` path: the accounts
/// modules' users, less `system` and `no_create_home` ones, homes from `/etc/passwd`.
fn users(s: &Step) -> Result<Vec<(String, String)>, String> {
    let req = crate::cloud_config::modules::accounts::request(s.cfg)?;
    let facts = crate::plan::accounts::gather(&s.ctx.root, &req).map_err(|e| format!("{e:#}"))?;
    let passwd = s.cc.passwd.as_deref().unwrap_or("");
    Ok(crate::plan::accounts::resolved_users(&req, &facts)
        .into_iter()
        .filter(|u| !u.system && !u.no_create_home)
        .map(|u| {
            let name = u.name.to_string();
            let home = passwd
                .lines()
                .map(|l| l.split(':').collect::<Vec<_>>())
                .find(|f| f.len() >= 7 && f[0] == name)
                .map(|f| f[5].to_string())
                .unwrap_or_else(|| format!("/home/{name}"));
            let file = format!("{}/.ssh/authorized_keys", home.trim_end_matches('/'));
            (name, file)
        })
        .collect())
}

/// A user's keys file as root reads it: only a regular file, never through a link at
/// its end (the user owns the directory: a link or a FIFO there would have root open a
/// device or hang), at most [`MAX_KEYS_FILE`] bytes. `None`, with a warning, otherwise.
fn read_keys(s: &Step, file: &str) -> Option<String> {
    let read = s
        .ctx
        .root
        .read_user_file_capped(Path::new(file), MAX_KEYS_FILE, "authorized_keys file")
        .and_then(|bytes| {
            bytes
                .map(String::from_utf8)
                .transpose()
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8 text"))
        });
    read.unwrap_or_else(|e| {
        tracing::warn!("{file}: {e:#}; its keys are not listed");
        None
    })
}

/// Logs the tables.
pub(crate) fn run(s: &Step) -> ModuleOutcome {
    if s.cfg.no_ssh_fingerprints == Some(true) {
        return skipped("no_ssh_fingerprints is true");
    }
    let hash = s.cfg.authkey_hash.as_deref().unwrap_or("sha256");
    let users = match users(s) {
        Ok(u) => u,
        Err(e) => return failed(format!("the users' keys cannot be found: {e}")),
    };
    let mut printed = Vec::new();
    for (user, file) in &users {
        let text = read_keys(s, file);
        for line in table(user, file, text.as_deref(), hash) {
            tracing::info!(target: "ssh_authkey_fingerprints", "{line}");
        }
        printed.push(user.as_str());
    }
    ModuleOutcome::Ran {
        note: if printed.is_empty() {
            "no user to print the keys of".into()
        } else {
            format!(
                "printed the {hash} fingerprints of the authorized keys of {}",
                printed.join(", ")
            )
        },
    }
}

/// What it would log.
pub(crate) fn preview(l: &Look) -> Vec<String> {
    if l.cfg.no_ssh_fingerprints == Some(true) {
        return vec!["nothing: no_ssh_fingerprints is true".into()];
    }
    vec![format!(
        "log: the {} fingerprints of the authorized keys of each user (not system or \
         no_create_home ones), as ci-info tables",
        l.cfg.authkey_hash.as_deref().unwrap_or("sha256")
    )]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::document;

    #[test]
    fn centred_as_python_centres() {
        // Python: '01'.center(5) == '  01 ', 'x'.center(4) == ' x  ', 'ab'.center(5) == '  ab '
        for (text, width, want) in [
            ("01", 5, "  01 "),
            ("x", 4, " x  "),
            ("abc", 6, " abc  "),
            ("abc", 7, "  abc  "),
            ("long", 2, "long"),
        ] {
            assert_eq!(center(text, width), want, "{text} {width}");
        }
    }

    /// The lines cloud-init 24.4's module prints for this file (its `SimpleTable` and
    /// `util.center` run on the same keys).
    #[test]
    fn the_table_is_cloud_inits() {
        let key =
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f";
        let text = format!("# mine\nno-pty {key} ops@example\n{key}\n");
        let lines = table(
            "alice",
            "/home/alice/.ssh/authorized_keys",
            Some(&text),
            "sha256",
        );
        let fp = "66:40:2c:94:68:c5:89:41:dd:19:ff:d6:50:bf:2b:42:f9:22:6f:83:d3:bd:06:ad:51:5d:0e:51:04:a7:70:20";
        let want = [
            "ci-info: ++++++++++++++++++++++++++++++++++Authorized keys from /home/alice/.ssh/authorized_keys for user alice+++++++++++++++++++++++++++++++++++".to_string(),
            "ci-info: +-------------+-------------------------------------------------------------------------------------------------+---------+-------------+".to_string(),
            "ci-info: |   Keytype   |                                       Fingerprint (sha256)                                      | Options |   Comment   |".to_string(),
            "ci-info: +-------------+-------------------------------------------------------------------------------------------------+---------+-------------+".to_string(),
            format!("ci-info: | ssh-ed25519 | {fp} |  no-pty | ops@example |"),
            format!("ci-info: | ssh-ed25519 | {fp} |    -    |      -      |"),
            "ci-info: +-------------+-------------------------------------------------------------------------------------------------+---------+-------------+".to_string(),
        ];
        assert_eq!(lines, want);
        for empty in [None, Some("")] {
            assert_eq!(
                table("bob", "/home/bob/.ssh/authorized_keys", empty, "sha256"),
                ["ci-info: no authorized SSH keys fingerprints found for user bob."]
            );
        }
    }

    #[test]
    fn keys_are_read_as_cloud_init_takes_them() {
        let (cfg, p) =
            document::from_text("#cloud-config\nno_ssh_fingerprints: true\nauthkey_hash: SHA512\n");
        assert!(p.is_empty(), "{p:?}");
        assert_eq!(cfg.no_ssh_fingerprints, Some(true));
        assert_eq!(cfg.authkey_hash.as_deref(), Some("sha512"));
        let (cfg, p) = document::from_text("#cloud-config\nauthkey_hash: md5\n");
        assert!(
            format!("{p:?}").contains("md5 fingerprints are not printed"),
            "{p:?}"
        );
        assert_eq!(cfg.authkey_hash, None);
        let (_, p) = document::from_text("#cloud-config\nauthkey_hash: whirl\n");
        assert!(
            format!("{p:?}").contains("is not a hash vmcust knows"),
            "{p:?}"
        );
    }
}
