//! The root password: an atomic rewrite of the root's `/etc/shadow` that sets root's hash
//! (SHA-512 crypt) and, on RESET, forces every uid-0 account to change its password at next
//! login. See `docs/password.md` for why we hash ourselves instead of running `chpasswd`.
//!
//! Pure: the salt and today's date come from [`AccountFacts`]. Every line other than the ones
//! changed is kept byte for byte, and a password that already verifies against root's current
//! hash keeps that hash, so a second apply changes nothing.

use sha_crypt::{PasswordHasher, PasswordVerifier, ShaCrypt};
use zeroize::Zeroizing;

use super::{Action, Contents, PlanError};
use crate::facts::accounts::{passwd_entries, AccountFacts, PASSWD, SHADOW};
use crate::model::RootPassword;

/// Index of shadow's `lastchg` field (days since the epoch of the last change; 0 = must change).
const LASTCHG: usize = 2;

/// Plans the `/etc/shadow` rewrite for `pw`; `None` when nothing is asked for.
pub(crate) fn plan_password(
    pw: &RootPassword,
    facts: &AccountFacts,
) -> Result<Option<Action>, PlanError> {
    if pw.password.is_none() && !pw.expire {
        return Ok(None);
    }
    let shadow = facts.shadow.as_ref().ok_or(PlanError::MissingAccountFile {
        path: SHADOW,
        need: "the root password",
    })?;
    let mut lines: Vec<Line> = split_lines(&shadow.contents);
    let root_at = lines
        .iter()
        .position(|l| l.name() == Some(b"root".as_slice()))
        .ok_or(PlanError::NoRootInShadow { path: SHADOW })?;

    if let Some(secret) = &pw.password {
        let line = &mut lines[root_at];
        let current = std::str::from_utf8(line.field(1)).unwrap_or("");
        if !verifies(secret.expose(), current) {
            let salt = facts.salt.ok_or(PlanError::NoSalt)?;
            let hash = ShaCrypt::SHA512
                .hash_password_with_salt(secret.expose().as_bytes(), &salt.0)
                .map_err(|_| PlanError::NoSalt)?;
            line.set_field(1, hash.as_str().as_bytes());
            // As chpasswd does: the change happened today, so age limits count from now.
            if !pw.expire {
                line.set_field(LASTCHG, facts.today.to_string().as_bytes());
            }
        }
    }

    if pw.expire {
        let passwd = facts
            .passwd
            .as_deref()
            .ok_or(PlanError::MissingAccountFile {
                path: PASSWD,
                need: "RESET (it lists the uid-0 accounts)",
            })?;
        let uid0: Vec<String> = passwd_entries(passwd)
            .into_iter()
            .filter(|e| e.uid == 0)
            .map(|e| e.name)
            .collect();
        for line in lines.iter_mut() {
            let is_uid0 = line
                .name()
                .is_some_and(|n| uid0.iter().any(|u| u.as_bytes() == n));
            if is_uid0 {
                line.set_field(LASTCHG, b"0");
            }
        }
    }

    let mut out = Zeroizing::new(Vec::with_capacity(shadow.contents.len() + 128));
    for line in &lines {
        out.extend_from_slice(&line.bytes);
    }
    Ok(Some(Action::write_file(
        SHADOW,
        Contents::sensitive(out.to_vec()),
        shadow.mode,
        "root password",
    )))
}

/// Whether `password` matches the SHA-crypt hash `hash`. Other schemes (yescrypt, MD5, a
/// locked `!`/`*` field) never verify, which only means the hash is replaced.
fn verifies(password: &str, hash: &str) -> bool {
    (hash.starts_with("$6$") || hash.starts_with("$5$"))
        && ShaCrypt::SHA512
            .verify_password(password.as_bytes(), hash)
            .is_ok()
}

/// One line of the file, with its line ending, so untouched lines are copied exactly.
struct Line {
    bytes: Vec<u8>,
}

fn split_lines(contents: &[u8]) -> Vec<Line> {
    contents
        .split_inclusive(|&b| b == b'\n')
        .map(|l| Line { bytes: l.to_vec() })
        .collect()
}

impl Line {
    fn body(&self) -> &[u8] {
        self.bytes.strip_suffix(b"\n").unwrap_or(&self.bytes)
    }

    fn name(&self) -> Option<&[u8]> {
        let body = self.body();
        let name = body.split(|&b| b == b':').next()?;
        (body.contains(&b':') && !name.is_empty()).then_some(name)
    }

    fn field(&self, i: usize) -> &[u8] {
        self.body().split(|&b| b == b':').nth(i).unwrap_or(b"")
    }

    /// Replaces field `i`, adding empty fields if the line is short. The old bytes are wiped:
    /// they may be a hash.
    fn set_field(&mut self, i: usize, value: &[u8]) {
        let newline = self.bytes.ends_with(b"\n");
        let mut fields: Vec<Vec<u8>> = self
            .body()
            .split(|&b| b == b':')
            .map(<[u8]>::to_vec)
            .collect();
        if fields.len() <= i {
            fields.resize(i + 1, Vec::new());
        }
        fields[i] = value.to_vec();
        let mut bytes = fields.join(&b':');
        if newline {
            bytes.push(b'\n');
        }
        zeroize::Zeroize::zeroize(&mut self.bytes);
        self.bytes = bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::accounts::{Salt, ShadowFile, SALT_LEN};
    use crate::model::Secret;

    const PASSWD_TEXT: &str = "root:x:0:0:root:/root:/bin/bash\n\
                               daemon:x:1:1::/usr/sbin:/usr/sbin/nologin\n\
                               toor:x:0:0::/root:/bin/sh\n\
                               ghost:x:0:0::/root:/bin/sh\n";
    const SHADOW_TEXT: &str = "root:*:19000:0:99999:7:::\n\
                               daemon:*:19000:0:99999:7:::\n\
                               toor:!:19000:0:99999:7:::\n";

    fn facts(shadow: &str) -> AccountFacts {
        AccountFacts {
            passwd: Some(PASSWD_TEXT.into()),
            shadow: Some(ShadowFile {
                contents: shadow.as_bytes().to_vec(),
                mode: 0o640,
            }),
            salt: Some(Salt([42; SALT_LEN])),
            today: 20_422,
            ssh: None,
        }
    }

    fn written(a: &Action) -> String {
        match a {
            Action::WriteFile { contents, .. } => {
                String::from_utf8(contents.bytes().to_vec()).unwrap()
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    fn pw(p: Option<&str>, expire: bool) -> RootPassword {
        RootPassword {
            password: p.map(|p| Secret::new(p.into())),
            expire,
        }
    }

    #[test]
    fn nothing_asked_nothing_planned() {
        assert_eq!(
            plan_password(&pw(None, false), &facts(SHADOW_TEXT)),
            Ok(None)
        );
    }

    #[test]
    fn new_hash_for_root_only_other_lines_kept() {
        let a = plan_password(&pw(Some("s3cret"), false), &facts(SHADOW_TEXT))
            .unwrap()
            .unwrap();
        for shown in [format!("{a:?}"), serde_json::to_string(&a).unwrap()] {
            // The plaintext and its base64 never show.
            assert!(
                !shown.contains("s3cret") && !shown.contains("czNjcmV0"),
                "{shown}"
            );
            assert!(!shown.contains("$6$"), "{shown}");
        }
        let text = written(&a);
        let lines: Vec<&str> = text.lines().collect();
        let f: Vec<&str> = lines[0].split(':').collect();
        assert!(f[1].starts_with("$6$rounds=5000$"), "{}", f[1]);
        assert!(verifies("s3cret", f[1]));
        assert_eq!(f[2], "20422");
        assert_eq!(&lines[1..], &SHADOW_TEXT.lines().collect::<Vec<_>>()[1..]);
    }

    #[test]
    fn reset_expires_every_uid0_account_in_shadow() {
        let a = plan_password(&pw(None, true), &facts(SHADOW_TEXT))
            .unwrap()
            .unwrap();
        assert_eq!(
            written(&a),
            "root:*:0:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\ntoor:!:0:0:99999:7:::\n"
        );
    }

    #[test]
    fn a_verifying_hash_is_kept_so_a_second_apply_changes_nothing() {
        let first = written(
            &plan_password(&pw(Some("s3cret"), true), &facts(SHADOW_TEXT))
                .unwrap()
                .unwrap(),
        );
        let mut again = facts(&first);
        again.salt = Some(Salt([1; SALT_LEN]));
        let second = written(
            &plan_password(&pw(Some("s3cret"), true), &again)
                .unwrap()
                .unwrap(),
        );
        assert_eq!(first, second);
    }

    #[test]
    fn missing_pieces_are_clear_errors() {
        let mut f = facts(SHADOW_TEXT);
        f.shadow = None;
        assert!(matches!(
            plan_password(&pw(Some("x"), false), &f),
            Err(PlanError::MissingAccountFile { path: SHADOW, .. })
        ));
        let f = facts("daemon:*:1:0:99999:7:::\n");
        assert_eq!(
            plan_password(&pw(Some("x"), false), &f),
            Err(PlanError::NoRootInShadow { path: SHADOW })
        );
        let mut f = facts(SHADOW_TEXT);
        f.salt = None;
        assert_eq!(
            plan_password(&pw(Some("x"), false), &f),
            Err(PlanError::NoSalt)
        );
    }

    #[test]
    fn no_trailing_newline_and_short_lines_survive() {
        let a = plan_password(&pw(None, true), &facts("root:*\nx:y:1"))
            .unwrap()
            .unwrap();
        assert_eq!(written(&a), "root:*:0\nx:y:1");
    }
}
