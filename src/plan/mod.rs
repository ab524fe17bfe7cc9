//! Planning: a pure function from a [`Customization`] and the target root's facts to an
//! ordered list of actions. No I/O happens here; `vmcust plan` prints the result and the
//! golden tests compare it.

pub(crate) mod accounts;
pub(crate) mod identity;
pub(crate) mod network;
pub(crate) mod password;
pub(crate) mod ssh_keys;
pub(crate) mod writer;

use std::path::PathBuf;

use serde::Serialize;

use crate::facts::Facts;
use crate::model::Customization;
pub use crate::root::FileOwner;
use vmcust_imc::REDACTED;

/// An ordered list of changes to make to the target root.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Plan {
    /// Actions in the order they must be applied.
    pub actions: Vec<Action>,
}

/// One change to the target root. Paths are absolute as seen from inside the root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "kebab-case")]
pub enum Action {
    /// Make `path` a regular file with exactly these contents and mode, owned as `owner`
    /// says (root's, chowned to a user, or a user's file in the user's own directory):
    /// every file write, carried out by [`Root::write`](crate::root::Root::write). Built with
    /// [`Action::write_file`] or [`Action::write_file_as`].
    WriteFile {
        /// Where, inside the root.
        path: PathBuf,
        /// Permission bits.
        #[serde(serialize_with = "octal")]
        mode: u32,
        /// Whose the file is and how its directory is made; in the JSON plan as the
        /// fields `uid`, `gid` (and `dir_mode`) when it is not [`FileOwner::Kept`].
        #[serde(flatten)]
        owner: FileOwner,
        /// The new contents.
        contents: Contents,
        /// What this file is for, for people reading the plan.
        purpose: &'static str,
    },
    /// Move `from` aside to `to` (a configuration that would fight ours), keeping it as
    /// a backup. Nothing happens if `from` does not exist.
    Rename {
        /// The file to move away.
        from: PathBuf,
        /// Its backup name.
        to: PathBuf,
        /// Why it is moved.
        purpose: &'static str,
    },
    /// Set the running kernel's host name (only when the root is `/`: another root's
    /// name is not this machine's), so that DHCP and logs use the new name from the start.
    SetHostname {
        /// The short host name.
        name: String,
    },
    /// Make `path` a directory owned by `uid`:`gid` with `mode` (a new home, or a
    /// directory of `/etc/skel` copied into one). Its parent must exist; a symlink at
    /// `path` is refused, never followed.
    MakeDir {
        /// Where, inside the root.
        path: PathBuf,
        /// Permission bits.
        #[serde(serialize_with = "octal")]
        mode: u32,
        /// Owner.
        uid: u32,
        /// Group.
        gid: u32,
        /// What this directory is for.
        purpose: &'static str,
    },
    /// Make `path` a symbolic link to `target`.
    Symlink {
        /// Where, inside the root.
        path: PathBuf,
        /// The link's target, as written into the link.
        target: PathBuf,
        /// What this link is for.
        purpose: &'static str,
    },
}

impl Action {
    /// Write `path` with `contents` and `mode`, root's when new (an existing file keeps its
    /// owner): the common [`Action::WriteFile`].
    pub fn write_file(
        path: impl Into<PathBuf>,
        contents: Contents,
        mode: u32,
        purpose: &'static str,
    ) -> Action {
        Action::write_file_as(path, contents, mode, FileOwner::Kept, purpose)
    }

    /// Write `path` with `contents` and `mode`, owned as `owner` says.
    pub fn write_file_as(
        path: impl Into<PathBuf>,
        contents: Contents,
        mode: u32,
        owner: FileOwner,
        purpose: &'static str,
    ) -> Action {
        Action::WriteFile {
            path: path.into(),
            mode,
            owner,
            contents,
            purpose,
        }
    }

    /// The path this action changes (the kernel's host name file for
    /// [`Action::SetHostname`]).
    pub fn path(&self) -> &std::path::Path {
        match self {
            Action::WriteFile { path, .. }
            | Action::MakeDir { path, .. }
            | Action::Symlink { path, .. } => path,
            Action::Rename { from, .. } => from,
            Action::SetHostname { .. } => std::path::Path::new(LIVE_HOSTNAME),
        }
    }

    /// What the action is for.
    pub fn purpose(&self) -> &'static str {
        match self {
            Action::WriteFile { purpose, .. }
            | Action::MakeDir { purpose, .. }
            | Action::Symlink { purpose, .. }
            | Action::Rename { purpose, .. } => purpose,
            Action::SetHostname { .. } => "running host name (only on the running system)",
        }
    }
}

/// Where the running kernel keeps its host name.
pub(crate) const LIVE_HOSTNAME: &str = "/proc/sys/kernel/hostname";

/// File contents that know whether they may be shown.
#[derive(Clone, PartialEq, Eq)]
pub struct Contents {
    bytes: Vec<u8>,
    sensitive: bool,
}

impl Contents {
    /// Contents that may be printed.
    pub fn text(text: String) -> Contents {
        Contents {
            bytes: text.into_bytes(),
            sensitive: false,
        }
    }

    /// Contents that must never be printed (they hold a secret).
    pub fn sensitive(bytes: Vec<u8>) -> Contents {
        Contents {
            bytes,
            sensitive: true,
        }
    }

    /// The bytes to write.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The contents for display: the text, or a redaction marker for sensitive files.
    pub fn display(&self) -> std::borrow::Cow<'_, str> {
        if self.sensitive {
            REDACTED.into()
        } else {
            String::from_utf8_lossy(&self.bytes)
        }
    }
}

impl std::fmt::Debug for Contents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.display())
    }
}

impl Serialize for Contents {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.display())
    }
}

/// In the JSON plan an owner is the fields it adds to its action: none for
/// [`FileOwner::Kept`], `uid` and `gid` for a chown, and `dir_mode` too for a user's
/// directory.
impl Serialize for FileOwner {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        match *self {
            FileOwner::Kept => {}
            FileOwner::Chown { uid, gid } => {
                map.serialize_entry("uid", &uid)?;
                map.serialize_entry("gid", &gid)?;
            }
            FileOwner::InUserDir { uid, gid, dir_mode } => {
                map.serialize_entry("dir_mode", &format_args!("{dir_mode:04o}").to_string())?;
                map.serialize_entry("uid", &uid)?;
                map.serialize_entry("gid", &gid)?;
            }
        }
        map.end()
    }
}

fn octal<S: serde::Serializer>(mode: &u32, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(&format_args!("{mode:04o}"))
}

/// Why a customization cannot be planned for this root.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// The time zone is not in the root's zoneinfo.
    #[error(
        "time zone {zone:?} does not exist under {dir} in the target root; \
         use a zone name from the tzdata package such as Europe/Berlin or UTC"
    )]
    UnknownTimeZone {
        /// The zone asked for.
        zone: String,
        /// Where it was looked for.
        dir: &'static str,
    },
    /// The network configuration cannot be rendered for this root.
    #[error(transparent)]
    Network(#[from] network::NetworkError),
    /// An account file the customization needs is missing from the root.
    #[error("{path} does not exist in the target root; it is needed for {need}")]
    MissingAccountFile {
        /// The missing file.
        path: &'static str,
        /// What needs it.
        need: &'static str,
    },
    /// The shadow file has no line for root, so there is no password to set.
    #[error(
        "{path} in the target root has no entry for root; add a root line \
         (root:*:1:0:99999:7:::) or remove the password from the spec"
    )]
    NoRootInShadow {
        /// The shadow file.
        path: &'static str,
    },
    /// Facts were gathered without a salt although a new hash is needed.
    #[error(
        "no random salt was gathered for the new password hash; \
         gather the root's facts for this customization before planning"
    )]
    NoSalt,
    /// The SSH keys cannot be installed for the configured user.
    #[error(transparent)]
    SshKeys(#[from] ssh_keys::SshKeyError),
    /// The cloud-config accounts (users, groups, passwords) do not fit this root.
    #[error(transparent)]
    Accounts(#[from] accounts::AccountsError),
}

/// Choices that change how a customization is carried out, not what it means.
#[derive(Debug, Clone, Default)]
pub struct PlanOptions {
    /// Network stack to write for; `None` detects it from the root.
    pub renderer: Option<network::Renderer>,
}

/// Plans everything `c` asks for against a root described by `facts`.
pub fn plan(c: &Customization, facts: &Facts, opts: &PlanOptions) -> Result<Plan, PlanError> {
    let mut actions = identity::plan_identity(&c.identity, facts)?;
    if let Some(pw) = &c.identity.root_password {
        actions.extend(password::plan_password(pw, &facts.accounts)?);
    }
    actions.extend(ssh_keys::plan_ssh_keys(&c.identity, &facts.accounts)?);
    if let Some(net) = &c.network {
        actions.extend(network::plan_network(net, &facts.network, opts.renderer)?);
    }
    Ok(Plan { actions })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In the JSON plan every file write is a `write-file`; its owner adds `uid` and `gid`
    /// (and a user's directory `dir_mode`), root's adds nothing.
    #[test]
    fn a_file_write_shows_its_owner_as_fields() {
        let json = |owner| {
            let a = Action::write_file_as("/f", Contents::text("x".into()), 0o600, owner, "p");
            serde_json::to_value(&a).unwrap()
        };
        for (owner, want) in [
            (
                FileOwner::Kept,
                serde_json::json!({"action": "write-file", "path": "/f", "mode": "0600",
                                   "contents": "x", "purpose": "p"}),
            ),
            (
                FileOwner::Chown { uid: 7, gid: 8 },
                serde_json::json!({"action": "write-file", "path": "/f", "mode": "0600",
                                   "uid": 7, "gid": 8, "contents": "x", "purpose": "p"}),
            ),
            (
                FileOwner::InUserDir {
                    uid: 7,
                    gid: 8,
                    dir_mode: 0o700,
                },
                serde_json::json!({"action": "write-file", "path": "/f", "mode": "0600",
                                   "dir_mode": "0700", "uid": 7, "gid": 8, "contents": "x",
                                   "purpose": "p"}),
            ),
        ] {
            assert_eq!(json(owner), want, "{owner:?}");
        }
    }
}
