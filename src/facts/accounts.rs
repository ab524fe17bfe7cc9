//! Facts about the root's user accounts: `/etc/passwd`, `/etc/shadow`, fresh salt for a new
//! password hash, today's date, and the state of the SSH user's `~/.ssh`.
//!
//! Everything the password and SSH-key planners need is read here, so that both planners stay
//! pure functions. Files are read only when the customization asks for something that needs
//! them: a spec without a password never reads `/etc/shadow`.

use std::fmt;
use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};

use crate::model::Identity;
use crate::root::{Existing, Root};

/// Path of the account database inside the root.
pub const PASSWD: &str = "/etc/passwd";
/// Path of the shadow password file inside the root.
pub const SHADOW: &str = "/etc/shadow";
/// Bytes of randomness in a new password salt (16 characters of crypt base64, the most
/// SHA-crypt uses).
pub const SALT_LEN: usize = 12;
/// User whose `authorized_keys` receive the keys when none is configured.
pub const DEFAULT_SSH_USER: &str = "root";

/// What the account planners may know about the root.
#[derive(Debug, Clone, Default)]
pub struct AccountFacts {
    /// `/etc/passwd`, if it was needed and exists.
    pub passwd: Option<String>,
    /// `/etc/shadow`, if it was needed and exists.
    pub shadow: Option<ShadowFile>,
    /// Random bytes for the salt of a new hash; gathered only when a password is set.
    pub salt: Option<Salt>,
    /// Days since 1970-01-01 (shadow's `lastchg` unit), for a changed password.
    pub today: u64,
    /// The SSH key user's home and `~/.ssh`, when keys are to be installed.
    pub ssh: Option<SshFacts>,
}

/// The current `/etc/shadow`. Its contents hold password hashes, so they are never shown by
/// `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub struct ShadowFile {
    /// The file's bytes, exactly as on disk.
    pub contents: Vec<u8>,
    /// Its permission bits.
    pub mode: u32,
}

impl fmt::Debug for ShadowFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ShadowFile {{ {} bytes, mode {:04o} }}",
            self.contents.len(),
            self.mode
        )
    }
}

/// Random bytes for a password salt.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Salt(pub [u8; SALT_LEN]);

impl fmt::Debug for Salt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Salt(..)")
    }
}

/// One `/etc/passwd` entry (the fields the planners use).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PasswdEntry {
    /// Login name.
    pub name: String,
    /// Numeric user id.
    pub uid: u32,
    /// Numeric primary group id.
    pub gid: u32,
    /// Home directory, as written in the file.
    pub home: String,
}

/// Parses `/etc/passwd` text; lines that are comments, NIS `+`/`-` entries or malformed are
/// skipped, because they name no local account we could write for.
pub fn passwd_entries(text: &str) -> Vec<PasswdEntry> {
    text.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split(':').collect();
            if f.len() < 7 || f[0].is_empty() || f[0].starts_with(['#', '+', '-']) {
                return None;
            }
            Some(PasswdEntry {
                name: f[0].to_string(),
                uid: f[2].parse().ok()?,
                gid: f[3].parse().ok()?,
                home: f[5].to_string(),
            })
        })
        .collect()
}

/// What is at a path the SSH planner cares about (without following a final symlink).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathState {
    /// Nothing there.
    Missing,
    /// A directory.
    Dir,
    /// A regular file.
    File,
    /// A symbolic link (never followed).
    Symlink,
    /// A device, socket or other special file.
    Other,
}

/// The SSH key user's account and the state of their `~/.ssh`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshFacts {
    /// The user the keys are for.
    pub user: String,
    /// Their passwd entry, if the user exists.
    pub entry: Option<PasswdEntry>,
    /// Whether the home directory exists (symlinks inside the root followed).
    pub home_exists: bool,
    /// What `~/.ssh` is.
    pub ssh_dir: PathState,
    /// What `~/.ssh/authorized_keys` is.
    pub keys_file: PathState,
    /// The current `authorized_keys` contents when it is a regular file (a symlink is
    /// never read: it could point at a file the user must not see).
    pub keys: Option<String>,
}

impl AccountFacts {
    /// Reads the account facts `identity` needs from `root`.
    pub fn gather(root: &Root, identity: &Identity) -> Result<AccountFacts> {
        let mut facts = AccountFacts {
            today: days_since_epoch(SystemTime::now()),
            ..Default::default()
        };
        let wants_password = identity.root_password.is_some();
        let wants_keys = !identity.ssh_authorized_keys.is_empty();
        if wants_password || wants_keys {
            facts.passwd = root
                .read_text(Path::new(PASSWD))
                .with_context(|| format!("reading {PASSWD} in {}", root.path().display()))?;
        }
        if wants_password {
            facts.shadow = read_shadow(root)
                .with_context(|| format!("reading {SHADOW} in {}", root.path().display()))?;
            if identity
                .root_password
                .as_ref()
                .is_some_and(|p| p.password.is_some())
            {
                facts.salt = Some(random_salt().context("reading random bytes for a salt")?);
            }
        }
        if wants_keys {
            let user = identity.ssh_user.as_deref().unwrap_or(DEFAULT_SSH_USER);
            facts.ssh = Some(
                gather_ssh(root, user, facts.passwd.as_deref()).with_context(|| {
                    format!("inspecting ~{user}/.ssh in {}", root.path().display())
                })?,
            );
        }
        Ok(facts)
    }
}

fn read_shadow(root: &Root) -> io::Result<Option<ShadowFile>> {
    let real = root.resolve(Path::new(SHADOW), true)?;
    let meta = match fs::metadata(&real) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    Ok(Some(ShadowFile {
        contents: fs::read(&real)?,
        mode: meta.mode() & 0o7777,
    }))
}

/// Twelve bytes from the kernel's random source. Read here, not in the planner, so that a plan
/// is a pure function of its inputs (and tests can pass a fixed salt).
fn random_salt() -> io::Result<Salt> {
    let mut bytes = [0u8; SALT_LEN];
    fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(Salt(bytes))
}

/// Whole days between the Unix epoch and `t` (0 for times before it).
pub fn days_since_epoch(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() / 86_400)
        .unwrap_or(0)
}

fn state(root: &Root, path: &Path) -> io::Result<PathState> {
    Ok(match root.existing(path)? {
        Existing::Missing => PathState::Missing,
        Existing::File { .. } => PathState::File,
        Existing::Symlink(_) => PathState::Symlink,
        Existing::Other => {
            if fs::symlink_metadata(root.resolve(path, false)?)?.is_dir() {
                PathState::Dir
            } else {
                PathState::Other
            }
        }
    })
}

fn gather_ssh(root: &Root, user: &str, passwd: Option<&str>) -> io::Result<SshFacts> {
    let entry = passwd
        .map(passwd_entries)
        .unwrap_or_default()
        .into_iter()
        .find(|e| e.name == user);
    let mut facts = SshFacts {
        user: user.to_string(),
        entry: entry.clone(),
        home_exists: false,
        ssh_dir: PathState::Missing,
        keys_file: PathState::Missing,
        keys: None,
    };
    let Some(entry) = entry.filter(|e| e.home.starts_with('/')) else {
        return Ok(facts);
    };
    let home = PathBuf::from(&entry.home);
    facts.home_exists = root.is_dir(&home);
    if !facts.home_exists {
        return Ok(facts);
    }
    let ssh_dir = home.join(".ssh");
    facts.ssh_dir = state(root, &ssh_dir)?;
    if facts.ssh_dir != PathState::Dir {
        return Ok(facts);
    }
    let keys_file = ssh_dir.join("authorized_keys");
    facts.keys_file = state(root, &keys_file)?;
    if facts.keys_file == PathState::File {
        if let Existing::File { contents, .. } = root.existing(&keys_file)? {
            facts.keys = Some(String::from_utf8_lossy(&contents).into_owned());
        }
    }
    Ok(facts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwd_parsing_skips_what_is_not_a_local_account() {
        let text = "root:x:0:0:root:/root:/bin/bash\n\
                    # comment\n\
                    +nis::::::\n\
                    bad:x:notanumber:0::/:/bin/sh\n\
                    toor:x:0:0::/root:/bin/sh\n\
                    short:x:1\n";
        let names: Vec<_> = passwd_entries(text).into_iter().map(|e| e.name).collect();
        assert_eq!(names, ["root", "toor"]);
    }

    #[test]
    fn days_are_whole_days_since_the_epoch() {
        let t = UNIX_EPOCH + std::time::Duration::from_secs(86_400 * 20_000 + 5);
        assert_eq!(days_since_epoch(t), 20_000);
        assert_eq!(days_since_epoch(UNIX_EPOCH), 0);
    }

    #[test]
    fn debug_never_shows_shadow_contents_or_salt() {
        let f = AccountFacts {
            shadow: Some(ShadowFile {
                contents: b"root:$6$abc$def:1:0:99999:7:::\n".to_vec(),
                mode: 0o640,
            }),
            salt: Some(Salt([7; SALT_LEN])),
            ..Default::default()
        };
        let dbg = format!("{f:?}");
        assert!(!dbg.contains("$6$"), "{dbg}");
        assert!(dbg.contains("0640"), "{dbg}");
    }
}
