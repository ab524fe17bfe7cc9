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

use super::wanted::AccountsWanted;
use crate::model::Identity;
use crate::root::{Existing, Root};

/// Path of the account database inside the root.
pub(crate) const PASSWD: &str = "/etc/passwd";
/// Path of the shadow password file inside the root.
pub(crate) const SHADOW: &str = "/etc/shadow";
/// Bytes of randomness in a new password salt (16 characters of crypt base64, the most
/// SHA-crypt uses).
pub const SALT_LEN: usize = 12;
/// User whose `authorized_keys` receive the keys when none is configured.
pub(crate) const DEFAULT_SSH_USER: &str = "root";

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

/// The current `/etc/shadow`: an account database file (its `Debug` shows no hash).
pub(crate) type ShadowFile = DbFile;

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
pub(crate) fn passwd_entries(text: &str) -> Vec<PasswdEntry> {
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
    /// Reads the account facts `want` asks for from `root`; `passwd` is the root's
    /// `/etc/passwd`, read by the caller when `want` needs it.
    pub(crate) fn gather(
        root: &Root,
        want: &AccountsWanted,
        passwd: Option<String>,
    ) -> Result<AccountFacts> {
        let mut facts = AccountFacts {
            today: days_since_epoch(SystemTime::now()),
            ..Default::default()
        };
        if want.password || want.ssh_user.is_some() {
            facts.passwd = passwd;
        }
        if want.password {
            facts.shadow = read_db_file(root, SHADOW)
                .with_context(|| format!("reading {SHADOW} in {}", root.path().display()))?;
            if want.salt {
                facts.salt = Some(random_salt().context("reading random bytes for a salt")?);
            }
        }
        if let Some(user) = &want.ssh_user {
            facts.ssh = Some(
                gather_ssh(root, user, facts.passwd.as_deref()).with_context(|| {
                    format!("inspecting ~{user}/.ssh in {}", root.path().display())
                })?,
            );
        }
        Ok(facts)
    }
}

impl AccountsWanted {
    /// What the password and SSH key planners need for `identity`.
    pub fn of(identity: &Identity) -> AccountsWanted {
        AccountsWanted {
            password: identity.root_password.is_some(),
            salt: identity
                .root_password
                .as_ref()
                .is_some_and(|p| p.password.is_some()),
            ssh_user: (!identity.ssh_authorized_keys.is_empty()).then(|| {
                identity
                    .ssh_user
                    .as_deref()
                    .unwrap_or(DEFAULT_SSH_USER)
                    .to_string()
            }),
        }
    }
}

/// Twelve bytes from the kernel's random source. Read here, not in the planner, so that a plan
/// is a pure function of its inputs (and tests can pass a fixed salt).
fn random_salt() -> io::Result<Salt> {
    let mut bytes = [0u8; SALT_LEN];
    fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(Salt(bytes))
}

/// Whole days between the Unix epoch and `t` (0 for times before it).
pub(crate) fn days_since_epoch(t: SystemTime) -> u64 {
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

/// `/etc/group` inside the root.
pub(crate) const GROUP: &str = "/etc/group";
/// `/etc/gshadow` inside the root.
pub(crate) const GSHADOW: &str = "/etc/gshadow";
/// `/etc/login.defs` inside the root.
pub(crate) const LOGIN_DEFS: &str = "/etc/login.defs";
/// Subordinate uid ranges (newuidmap, rootless containers).
pub(crate) const SUBUID: &str = "/etc/subuid";
/// Subordinate gid ranges.
pub(crate) const SUBGID: &str = "/etc/subgid";
/// `/etc/default/useradd` inside the root.
pub(crate) const USERADD_DEFAULTS: &str = "/etc/default/useradd";
/// The skeleton directory a new home is filled from.
pub(crate) const SKEL: &str = "/etc/skel";
/// The main sudoers file.
pub(crate) const SUDOERS: &str = "/etc/sudoers";
/// cloud-init's sudoers drop-in (`Distro.ci_sudoers_fn`).
pub(crate) const SUDOERS_DROP_IN: &str = "/etc/sudoers.d/90-cloud-init-users";
/// sshd's main configuration.
pub(crate) const SSHD_CONFIG: &str = "/etc/ssh/sshd_config";
/// sshd's drop-in directory.
pub(crate) const SSHD_DROP_IN_DIR: &str = "/etc/ssh/sshd_config.d";
/// cloud-init's sshd drop-in.
pub(crate) const SSHD_DROP_IN: &str = "/etc/ssh/sshd_config.d/50-cloud-init.conf";
/// The distribution's identification, and where it is when `/etc` has none.
pub(crate) const OS_RELEASE: &str = "/etc/os-release";
/// `os-release` where the distribution ships it.
pub(crate) const USR_OS_RELEASE: &str = "/usr/lib/os-release";
/// Most entries copied from `/etc/skel` (a bigger skeleton is refused, not cut).
pub(crate) const MAX_SKEL_ENTRIES: usize = 512;
/// Largest file copied from `/etc/skel`.
pub(crate) const MAX_SKEL_FILE: u64 = 4 << 20;

/// One account database file as it is on disk. Shadow files hold hashes, so `Debug` shows
/// only the size and mode.
#[derive(Clone, PartialEq, Eq)]
pub struct DbFile {
    /// The bytes, exactly as on disk.
    pub contents: Vec<u8>,
    /// Permission bits.
    pub mode: u32,
}

impl fmt::Debug for DbFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "DbFile {{ {} bytes, mode {:04o} }}",
            self.contents.len(),
            self.mode
        )
    }
}

/// What `useradd` reads from `/etc/login.defs`, with its own built-in defaults for
/// missing keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginDefs {
    /// UID_MIN / UID_MAX.
    pub uid: (u32, u32),
    /// SYS_UID_MIN / SYS_UID_MAX.
    pub sys_uid: (u32, u32),
    /// GID_MIN / GID_MAX.
    pub gid: (u32, u32),
    /// SYS_GID_MIN / SYS_GID_MAX.
    pub sys_gid: (u32, u32),
    /// PASS_MIN_DAYS, PASS_MAX_DAYS, PASS_WARN_AGE (`None`: empty field).
    pub pass_days: (Option<i64>, Option<i64>, Option<i64>),
    /// USERGROUPS_ENAB: a new user gets a group of its own name.
    pub usergroups: bool,
    /// Mode of a new home: HOME_MODE, else 0777 & ~UMASK.
    pub home_mode: u32,
    /// SUB_UID_MIN, SUB_UID_MAX, SUB_UID_COUNT: the subordinate uid ranges useradd hands
    /// out (shadow's defaults 100000, 600100000, 65536).
    pub sub_uid: SubIdRange,
    /// SUB_GID_MIN, SUB_GID_MAX, SUB_GID_COUNT, as `sub_uid`.
    pub sub_gid: SubIdRange,
}

/// Where and how many subordinate ids `useradd` gives a new user (login.defs'
/// `SUB_?ID_MIN`, `SUB_?ID_MAX`, `SUB_?ID_COUNT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubIdRange {
    /// The lowest id of any range.
    pub min: u64,
    /// The highest id of any range.
    pub max: u64,
    /// How many ids one user gets; 0: none.
    pub count: u64,
}

impl LoginDefs {
    /// Parses `login.defs` text (missing file: `""`).
    pub fn parse(text: &str) -> LoginDefs {
        let mut map = std::collections::HashMap::new();
        for line in text.lines() {
            let line = line.trim();
            if line.starts_with('#') {
                continue;
            }
            let mut words = line.split_whitespace();
            if let (Some(k), Some(v)) = (words.next(), words.next()) {
                map.insert(k.to_string(), v.trim_matches('"').to_string());
            }
        }
        let num = |k: &str| map.get(k).and_then(|v| parse_c_number(v));
        let u = |k: &str, d: u32| num(k).and_then(|n| u32::try_from(n).ok()).unwrap_or(d);
        let uid = (u("UID_MIN", 1000), u("UID_MAX", 60000));
        let gid = (u("GID_MIN", 1000), u("GID_MAX", 60000));
        // useradd's defaults for the system ranges: 101 up to just below UID_MIN.
        let sys_uid = (
            u("SYS_UID_MIN", 101),
            u("SYS_UID_MAX", uid.0.saturating_sub(1)),
        );
        let sys_gid = (
            u("SYS_GID_MIN", 101),
            u("SYS_GID_MAX", gid.0.saturating_sub(1)),
        );
        let umask = num("UMASK").unwrap_or(0o022) as u32 & 0o777;
        let home_mode = num("HOME_MODE").map_or(0o777 & !umask, |m| m as u32 & 0o7777);
        // getdef_ulong: a value that is not an unsigned number falls back to the default.
        let ul = |k: &str, d: u64| num(k).and_then(|n| u64::try_from(n).ok()).unwrap_or(d);
        let sub = |kind: &str| SubIdRange {
            min: ul(&format!("SUB_{kind}_MIN"), 100_000),
            max: ul(&format!("SUB_{kind}_MAX"), 600_100_000),
            count: ul(&format!("SUB_{kind}_COUNT"), 65_536),
        };
        LoginDefs {
            uid,
            sys_uid,
            gid,
            sys_gid,
            pass_days: (
                num("PASS_MIN_DAYS"),
                num("PASS_MAX_DAYS"),
                num("PASS_WARN_AGE"),
            ),
            usergroups: map
                .get("USERGROUPS_ENAB")
                .is_none_or(|v| v.eq_ignore_ascii_case("yes")),
            home_mode,
            sub_uid: sub("UID"),
            sub_gid: sub("GID"),
        }
    }
}

/// A number as login.defs writes it: decimal, `0` octal or `0x` hex, optionally negative.
fn parse_c_number(v: &str) -> Option<i64> {
    let (neg, v) = v.strip_prefix('-').map_or((false, v), |r| (true, r));
    let n = if let Some(h) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()?
    } else if v.len() > 1 && v.starts_with('0') {
        i64::from_str_radix(&v[1..], 8).ok()?
    } else {
        v.parse().ok()?
    };
    Some(if neg { -n } else { n })
}

/// What `useradd` reads from `/etc/default/useradd`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UseraddDefaults {
    /// SHELL (`None`: empty shell field, as useradd leaves it).
    pub shell: Option<String>,
    /// HOME: the directory new homes go under.
    pub home: String,
    /// INACTIVE (`None` or -1: empty field).
    pub inactive: Option<i64>,
}

impl UseraddDefaults {
    /// Parses `/etc/default/useradd` text (missing file: `""`).
    pub fn parse(text: &str) -> UseraddDefaults {
        let mut d = UseraddDefaults {
            shell: None,
            home: "/home".into(),
            inactive: None,
        };
        for line in text.lines() {
            let Some((k, v)) = line.trim().split_once('=') else {
                continue;
            };
            let v = v.trim().trim_matches('"');
            match k.trim() {
                "SHELL" if !v.is_empty() => d.shell = Some(v.to_string()),
                "HOME" if v.starts_with('/') => d.home = v.trim_end_matches('/').to_string(),
                "INACTIVE" => d.inactive = v.parse().ok().filter(|n: &i64| *n >= 0),
                _ => {}
            }
        }
        d
    }
}

/// One entry of `/etc/skel`, relative to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkelEntry {
    /// A directory to make.
    Dir {
        /// Path relative to `/etc/skel`.
        rel: String,
        /// Its permission bits.
        mode: u32,
    },
    /// A file to copy.
    File {
        /// Path relative to `/etc/skel`.
        rel: String,
        /// Its permission bits.
        mode: u32,
        /// Its bytes.
        contents: Vec<u8>,
    },
    /// A symlink or special file: not copied (see docs/differences-from-cloud-init.md).
    Skipped {
        /// Path relative to `/etc/skel`.
        rel: String,
    },
}

/// The state of a home directory and its `~/.ssh/authorized_keys`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HomeFacts {
    /// What the home path is.
    pub home: PathState,
    /// What `~/.ssh` is.
    pub ssh_dir: PathState,
    /// What `~/.ssh/authorized_keys` is.
    pub keys_file: PathState,
    /// The keys file's text when it is a regular file.
    pub keys: Option<String>,
}

/// What the cloud-config accounts planner may know about the root, read by
/// [`AccountDbFacts::gather`]: the account databases and what `useradd` reads, then the
/// homes the planner names (it knows which users the request resolves to).
#[derive(Debug, Clone, Default)]
pub struct AccountDbFacts {
    /// `/etc/passwd`.
    pub passwd: Option<DbFile>,
    /// `/etc/shadow`.
    pub shadow: Option<DbFile>,
    /// `/etc/group`.
    pub group: Option<DbFile>,
    /// `/etc/gshadow`.
    pub gshadow: Option<DbFile>,
    /// `/etc/subuid` (useradd adds a new user's range only when it exists).
    pub subuid: Option<DbFile>,
    /// `/etc/subgid`, as `subuid`.
    pub subgid: Option<DbFile>,
    /// `/etc/login.defs`, parsed.
    pub login_defs: Option<LoginDefs>,
    /// `/etc/default/useradd`, parsed.
    pub useradd: Option<UseraddDefaults>,
    /// `/etc/skel`, in order (directories before what is in them).
    pub skel: Vec<SkelEntry>,
    /// `/etc/os-release` (or `/usr/lib/os-release`) text.
    pub os_release: Option<String>,
    /// Homes by path (inside the root).
    pub homes: std::collections::BTreeMap<String, HomeFacts>,
    /// `/etc/sudoers`.
    pub sudoers: Option<String>,
    /// The current cloud-init style sudoers drop-in.
    pub sudoers_dropin: Option<String>,
    /// `/etc/ssh/sshd_config`.
    pub sshd_config: Option<String>,
    /// The current sshd drop-in vmcust (or cloud-init) writes.
    pub sshd_dropin: Option<String>,
    /// `/etc/ssh/sshd_config.d` is a directory.
    pub sshd_config_d: bool,
    /// Permission bits of `sshd_config` and of the drop-in, when they exist (kept when
    /// they are rewritten: RHEL's `sshd_config` is 0600).
    pub sshd_modes: (Option<u32>, Option<u32>),
    /// Random bytes, one salt per password to hash (plain and RANDOM) and one more per
    /// RANDOM password for the password itself.
    pub entropy: Vec<Salt>,
    /// Days since the epoch (shadow's `lastchg`).
    pub today: u64,
}

/// The homes the accounts planner needs, named once the databases are read: the planner's
/// knowledge (which users the request resolves to on this root, and their homes).
pub(crate) type HomesOf<'a> = dyn Fn(&AccountDbFacts) -> Vec<String> + 'a;

/// The files [`AccountDbFacts`] shares with the rest of [`super::Facts`], handed in when
/// they were read already.
#[derive(Debug, Default)]
pub(crate) struct SharedFiles {
    /// `/etc/passwd`.
    pub(crate) passwd: Option<DbFile>,
    /// `/etc/group`.
    pub(crate) group: Option<DbFile>,
    /// `/etc/os-release`.
    pub(crate) os_release: Option<String>,
}

impl SharedFiles {
    /// Reads them from `root`.
    pub(crate) fn read(root: &Root) -> Result<SharedFiles> {
        Ok(SharedFiles {
            passwd: read_db_file_in(root, PASSWD)?,
            group: read_db_file_in(root, GROUP)?,
            os_release: read_text_in(root, OS_RELEASE)?,
        })
    }
}

impl AccountDbFacts {
    /// Reads every fact the accounts planner needs from `root`: the account databases,
    /// `login.defs`, useradd's defaults, `/etc/skel`, `os-release`, sudoers and sshd's
    /// configuration, `salts` fresh salts, then the homes `homes` names (each home's
    /// directories above it too: useradd makes the missing ones).
    pub(crate) fn gather(root: &Root, salts: usize, homes: &HomesOf) -> Result<AccountDbFacts> {
        Self::gather_with(root, SharedFiles::read(root)?, salts, homes)
    }

    /// [`AccountDbFacts::gather`], with the files `shared` already read.
    pub(crate) fn gather_with(
        root: &Root,
        shared: SharedFiles,
        salts: usize,
        homes: &HomesOf,
    ) -> Result<AccountDbFacts> {
        let text = |p: &str| read_text_in(root, p);
        let mut f = AccountDbFacts {
            passwd: shared.passwd,
            shadow: read_db_file_in(root, SHADOW)?,
            group: shared.group,
            gshadow: read_db_file_in(root, GSHADOW)?,
            subuid: read_db_file_in(root, SUBUID)?,
            subgid: read_db_file_in(root, SUBGID)?,
            login_defs: text(LOGIN_DEFS)?.map(|t| LoginDefs::parse(&t)),
            useradd: text(USERADD_DEFAULTS)?.map(|t| UseraddDefaults::parse(&t)),
            skel: read_skel(root).with_context(|| in_root(root, "reading", SKEL))?,
            os_release: match shared.os_release {
                Some(t) => Some(t),
                None => text(USR_OS_RELEASE)?,
            },
            sudoers: text(SUDOERS)?,
            sudoers_dropin: text(SUDOERS_DROP_IN)?,
            sshd_config: text(SSHD_CONFIG)?,
            sshd_dropin: text(SSHD_DROP_IN)?,
            sshd_config_d: root.is_dir(Path::new(SSHD_DROP_IN_DIR)),
            sshd_modes: (mode_of(root, SSHD_CONFIG)?, mode_of(root, SSHD_DROP_IN)?),
            entropy: random_salts(salts).context("reading random bytes")?,
            today: days_since_epoch(SystemTime::now()),
            ..Default::default()
        };
        // Each home's directories above it too: useradd makes the missing ones (root's,
        // 0755).
        let mut paths: Vec<String> = Vec::new();
        for home in homes(&f).iter().filter(|h| h.starts_with('/')) {
            paths.extend(home_parents(home).map(str::to_string));
            paths.push(home.clone());
        }
        for home in paths {
            if f.homes.contains_key(&home) {
                continue;
            }
            let facts =
                read_home(root, &home).with_context(|| in_root(root, "inspecting", &home))?;
            f.homes.insert(home, facts);
        }
        Ok(f)
    }
}

/// `reading /etc/x in /mnt/root`: the context of an error about `path`.
fn in_root(root: &Root, what: &str, path: &str) -> String {
    format!("{what} {path} in {}", root.path().display())
}

/// The text of `file` (the root's `path`), as [`Root::read_text`] reads it: invalid UTF-8
/// is an error.
pub(crate) fn db_file_text(root: &Root, file: &DbFile, path: &str) -> Result<String> {
    String::from_utf8(file.contents.clone())
        .map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{path} is not valid UTF-8"),
            )
        })
        .with_context(|| in_root(root, "reading", path))
}

/// [`read_db_file`], its error naming the file and the root.
fn read_db_file_in(root: &Root, path: &str) -> Result<Option<DbFile>> {
    read_db_file(root, path).with_context(|| in_root(root, "reading", path))
}

/// A text file of the root, its error naming the file and the root.
fn read_text_in(root: &Root, path: &str) -> Result<Option<String>> {
    super::read_log::note(path);
    root.read_text(Path::new(path))
        .with_context(|| in_root(root, "reading", path))
}

/// The directories above `home`, outermost first, `/` left out: `/srv/a/b` gives `/srv`,
/// `/srv/a`.
pub(crate) fn home_parents(home: &str) -> impl Iterator<Item = &str> {
    home.match_indices('/')
        .map(|(i, _)| &home[..i])
        .filter(|p| !p.is_empty())
}

/// The permission bits of `path` in the root, if something is there.
fn mode_of(root: &Root, path: &str) -> Result<Option<u32>> {
    Ok(root
        .owner_and_mode(Path::new(path))
        .with_context(|| in_root(root, "inspecting", path))?
        .map(|(_, _, mode)| mode))
}

/// Reads an account database file (not following a final symlink outside the root). Only
/// a regular file is read: a FIFO planted there would block the run.
pub(crate) fn read_db_file(root: &Root, path: &str) -> io::Result<Option<DbFile>> {
    super::read_log::note(path);
    let real = root.resolve(Path::new(path), true)?;
    match fs::metadata(&real) {
        Ok(m) if !m.is_file() => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{path} is not a regular file"),
        )),
        Ok(m) => Ok(Some(DbFile {
            contents: fs::read(&real)?,
            mode: m.mode() & 0o7777,
        })),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// `count` fresh salts from the kernel.
pub(crate) fn random_salts(count: usize) -> io::Result<Vec<Salt>> {
    (0..count).map(|_| random_salt()).collect()
}

/// Reads `/etc/skel` of the root, refusing one over [`MAX_SKEL_ENTRIES`] entries or with
/// a file over [`MAX_SKEL_FILE`].
pub(crate) fn read_skel(root: &Root) -> io::Result<Vec<SkelEntry>> {
    let mut out = Vec::new();
    walk_skel(root, "", &mut out)?;
    Ok(out)
}

fn walk_skel(root: &Root, rel: &str, out: &mut Vec<SkelEntry>) -> io::Result<()> {
    let dir = if rel.is_empty() {
        PathBuf::from(SKEL)
    } else {
        Path::new(SKEL).join(rel)
    };
    for name in root.list_dir(&dir)? {
        if out.len() >= MAX_SKEL_ENTRIES {
            return Err(io::Error::other(format!(
                "{SKEL} has more than {MAX_SKEL_ENTRIES} entries"
            )));
        }
        let rel = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        let real = root.resolve(&dir.join(&name), false)?;
        let meta = fs::symlink_metadata(&real)?;
        let mode = meta.mode() & 0o7777;
        if meta.is_dir() {
            out.push(SkelEntry::Dir {
                rel: rel.clone(),
                mode,
            });
            walk_skel(root, &rel, out)?;
        } else if meta.is_file() {
            if meta.len() > MAX_SKEL_FILE {
                return Err(io::Error::other(format!(
                    "{SKEL}/{rel} is larger than {MAX_SKEL_FILE} bytes"
                )));
            }
            out.push(SkelEntry::File {
                rel,
                mode,
                contents: fs::read(&real)?,
            });
        } else {
            out.push(SkelEntry::Skipped { rel });
        }
    }
    Ok(())
}

/// The state of `home` and its keys file in the root.
pub(crate) fn read_home(root: &Root, home: &str) -> io::Result<HomeFacts> {
    let home = PathBuf::from(home);
    let mut facts = HomeFacts {
        home: state(root, &home)?,
        ssh_dir: PathState::Missing,
        keys_file: PathState::Missing,
        keys: None,
    };
    if facts.home != PathState::Dir {
        return Ok(facts);
    }
    let ssh_dir = home.join(".ssh");
    facts.ssh_dir = state(root, &ssh_dir)?;
    if facts.ssh_dir != PathState::Dir {
        return Ok(facts);
    }
    let keys_file = ssh_dir.join("authorized_keys");
    facts.keys_file = state(root, &keys_file)?;
    if let Existing::File { contents, .. } = root.existing(&keys_file)? {
        facts.keys = Some(String::from_utf8_lossy(&contents).into_owned());
    }
    Ok(facts)
}

/// The uid of `user` in `/etc/passwd` text.
pub(crate) fn uid_of(passwd: &str, user: &str) -> Option<u32> {
    passwd_entries(passwd)
        .into_iter()
        .find(|e| e.name == user)
        .map(|e| e.uid)
}

/// The gid of `group` in `/etc/group` text (`name:x:gid:members`).
pub(crate) fn gid_of(group: &str, name: &str) -> Option<u32> {
    group.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.len() >= 3 && f[0] == name)
            .then(|| f[2].parse().ok())
            .flatten()
    })
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

    #[test]
    fn login_defs_with_useradd_defaults() {
        let d = LoginDefs::parse(
            "UID_MIN 2000\n#UID_MAX 1\nSYS_UID_MAX 0777\nUMASK 027\nUSERGROUPS_ENAB no\n",
        );
        assert_eq!(d.uid, (2000, 60000));
        assert_eq!(d.sys_uid, (101, 511));
        assert_eq!(d.gid, (1000, 60000));
        assert_eq!(d.sys_gid, (101, 999));
        assert_eq!(d.home_mode, 0o750);
        assert!(!d.usergroups);
        assert_eq!(d.pass_days, (None, None, None));
        let d = LoginDefs::parse("HOME_MODE 0700\nPASS_MAX_DAYS 99999\nUMASK 022\n");
        assert_eq!(d.home_mode, 0o700);
        assert_eq!(d.pass_days.1, Some(99999));
        assert!(d.usergroups);
    }

    #[test]
    fn useradd_defaults() {
        let d = UseraddDefaults::parse("# c\nSHELL=/bin/bash\nHOME=/srv/home/\nINACTIVE=-1\n");
        assert_eq!(d.shell.as_deref(), Some("/bin/bash"));
        assert_eq!(d.home, "/srv/home");
        assert_eq!(d.inactive, None);
        assert_eq!(UseraddDefaults::parse("INACTIVE=30").inactive, Some(30));
    }

    #[test]
    fn ids_from_account_files() {
        let passwd =
            "root:x:0:0:root:/root:/bin/bash\nwww-data:x:33:33::/var/www:/usr/sbin/nologin\n";
        let group = "root:x:0:\n# c\nbad\nwww-data:x:33:\nadm:x:4:syslog\n";
        assert_eq!(uid_of(passwd, "www-data"), Some(33));
        assert_eq!(uid_of(passwd, "nobody"), None);
        assert_eq!(gid_of(group, "adm"), Some(4));
        assert_eq!(gid_of(group, "bad"), None);
        assert_eq!(gid_of(group, "wheel"), None);
    }
}
