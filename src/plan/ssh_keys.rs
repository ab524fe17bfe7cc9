//! SSH public keys into the configured user's `~/.ssh/authorized_keys`.
//!
//! Existing keys stay as they are; keys not yet present are appended. The file is 0600 and
//! `~/.ssh` 0700, both owned by the user, as `ssh-keygen`/`ssh-copy-id` leave them (sshd's
//! `StrictModes` refuses anything group- or world-writable). A symlinked `~/.ssh` is refused
//! and a symlinked `authorized_keys` is replaced, never read or written through: either could
//! point at a file the user must not see or own.

use std::path::PathBuf;

use super::Contents;
use super::{Action, FileOwner};
use crate::facts::accounts::{AccountFacts, PathState, DEFAULT_SSH_USER};
use crate::model::Identity;

/// Mode of `authorized_keys`.
pub(crate) const KEYS_MODE: u32 = 0o600;
/// Mode of `~/.ssh`.
pub(crate) const SSH_DIR_MODE: u32 = 0o700;

/// Why the keys cannot be installed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SshKeyError {
    /// The user is not in the root's `/etc/passwd`.
    #[error(
        "ssh key user {user:?} is not in /etc/passwd of the target root; \
         create the user in the template or configure another ssh user"
    )]
    UnknownUser {
        /// The configured user.
        user: String,
    },
    /// The user's home directory is not usable.
    #[error(
        "home directory {home:?} of ssh key user {user:?} does not exist in the target root; \
         create it (owned by the user) in the template"
    )]
    NoHome {
        /// The user.
        user: String,
        /// Their home as written in /etc/passwd.
        home: String,
    },
    /// `~/.ssh` is a symlink or not a directory.
    #[error(
        "{path} is {what}, not a directory; refusing to write ssh keys through it \\
         (replace it with a real directory owned by {user:?})"
    )]
    BadSshDir {
        /// The user.
        user: String,
        /// `~/.ssh` inside the root.
        path: PathBuf,
        /// What was found there.
        what: &'static str,
    },
    /// `authorized_keys` is a directory or special file.
    #[error("{path} is not a regular file; remove it so the ssh keys can be written")]
    BadKeysFile {
        /// The path inside the root.
        path: PathBuf,
    },
}

/// Plans `authorized_keys` for `id`'s SSH keys; empty when there are none.
pub(crate) fn plan_ssh_keys(
    id: &Identity,
    facts: &AccountFacts,
) -> Result<Vec<Action>, SshKeyError> {
    let wanted: Vec<&str> = id
        .ssh_authorized_keys
        .iter()
        .flat_map(|k| k.lines())
        .map(str::trim)
        .filter(|k| !k.is_empty() && !k.starts_with('#'))
        .collect();
    if wanted.is_empty() {
        return Ok(Vec::new());
    }
    let user = id
        .ssh_user
        .as_deref()
        .unwrap_or(DEFAULT_SSH_USER)
        .to_string();
    let ssh = facts.ssh.as_ref().filter(|s| s.user == user);
    let entry = ssh
        .and_then(|s| s.entry.clone())
        .ok_or_else(|| SshKeyError::UnknownUser { user: user.clone() })?;
    let ssh = ssh.expect("entry implies facts");
    if !entry.home.starts_with('/') || !ssh.home_exists {
        return Err(SshKeyError::NoHome {
            user,
            home: entry.home,
        });
    }
    let dir = PathBuf::from(&entry.home).join(".ssh");
    let what = match ssh.ssh_dir {
        PathState::Missing | PathState::Dir => None,
        PathState::Symlink => Some("a symbolic link"),
        PathState::File => Some("a regular file"),
        PathState::Other => Some("a special file"),
    };
    if let Some(what) = what {
        return Err(SshKeyError::BadSshDir {
            user,
            path: dir,
            what,
        });
    }
    let path = dir.join("authorized_keys");
    if matches!(ssh.keys_file, PathState::Dir | PathState::Other) {
        return Err(SshKeyError::BadKeysFile { path });
    }
    let contents = merge_keys(ssh.keys.as_deref().unwrap_or(""), &wanted);
    Ok(vec![Action::write_file_as(
        path,
        Contents::text(contents),
        KEYS_MODE,
        FileOwner::InUserDir {
            uid: entry.uid,
            gid: entry.gid,
            dir_mode: SSH_DIR_MODE,
        },
        "ssh authorized keys",
    )])
}

/// `current` with each key of `wanted` appended unless a key with the same type and blob is
/// already there (options and comments may differ: the key is what grants access).
pub(crate) fn merge_keys(current: &str, wanted: &[&str]) -> String {
    let mut out = current.to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    let mut have: Vec<String> = current.lines().map(key_identity).collect();
    for key in wanted {
        let id = key_identity(key);
        if !have.contains(&id) {
            out.push_str(key);
            out.push('\n');
            have.push(id);
        }
    }
    out
}

/// The part of an `authorized_keys` line that identifies the key: `type blob`, found as the
/// first token naming a key type followed by another token; the whole trimmed line otherwise.
fn key_identity(line: &str) -> String {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    tokens
        .windows(2)
        .find(|w| {
            let t = w[0];
            t.starts_with("ssh-") || t.starts_with("ecdsa-") || t.starts_with("sk-")
        })
        .map(|w| format!("{} {}", w[0], w[1]))
        .unwrap_or_else(|| line.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_identified_by_type_and_blob() {
        let cases = [
            ("ssh-ed25519 AAAA1 alice@x", "ssh-ed25519 AAAA1"),
            (
                "from=\"10.0.0.0/8\",no-pty ssh-rsa AAAAB bob",
                "ssh-rsa AAAAB",
            ),
            ("ecdsa-sha2-nistp256 AAAAE2 c", "ecdsa-sha2-nistp256 AAAAE2"),
            (
                "sk-ssh-ed25519@openssh.com AAAAG",
                "sk-ssh-ed25519@openssh.com AAAAG",
            ),
            ("  garbage  ", "garbage"),
        ];
        for (line, want) in cases {
            assert_eq!(key_identity(line), want, "{line}");
        }
    }

    #[test]
    fn merging_keeps_existing_and_appends_missing_once() {
        let cases: [(&str, &[&str], &str); 4] = [
            ("", &["ssh-ed25519 A a"], "ssh-ed25519 A a\n"),
            (
                "ssh-ed25519 A old-comment",
                &["ssh-ed25519 A new-comment", "ssh-rsa B"],
                "ssh-ed25519 A old-comment\nssh-rsa B\n",
            ),
            (
                "# mine\nno-pty ssh-rsa B\n",
                &["ssh-rsa B", "ssh-rsa B", "ssh-ed25519 C"],
                "# mine\nno-pty ssh-rsa B\nssh-ed25519 C\n",
            ),
            ("ssh-rsa B\n", &["ssh-rsa B"], "ssh-rsa B\n"),
        ];
        for (current, wanted, want) in cases {
            assert_eq!(merge_keys(current, wanted), want, "{current:?}");
        }
    }
}
