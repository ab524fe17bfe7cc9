//! The accounts engine of cloud-config: `groups`, `users`, `chpasswd`, `password`,
//! `ssh_authorized_keys`, `ssh_pwauth` and `disable_root`, planned as rewrites of
//! `/etc/passwd`, `/etc/shadow`, `/etc/group`, `/etc/gshadow` (each written once, every
//! untouched line byte for byte), new homes filled from `/etc/skel`, `authorized_keys`
//! files, a sudoers drop-in and an sshd drop-in — the changes `groupadd`, `useradd`,
//! `usermod -a -G`, `chpasswd`, `passwd -l/-u/--expire` would make, with cloud-init's
//! semantics (an existing user is not recreated). Pure: facts come from
//! `crate::facts` (`Facts::gather` with the request [`wanted`] makes, or [`gather`]).
//!
//! Order, as cloud-init runs its modules: `groups`, then `users`, then `chpasswd`/`password`,
//! then the top-level keys and `disable_root`, then `ssh_pwauth`.

pub(crate) mod check;
pub(crate) mod dbfile;
pub(crate) mod distro;
pub(crate) mod ids;
pub(crate) mod keys;
pub(crate) mod parse;
pub(crate) mod request;
pub(crate) mod resolve;
pub(crate) mod sshd;
pub(crate) mod subids;
pub(crate) mod sudoers;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;
use sha_crypt::{PasswordHasher, PasswordVerifier, ShaCrypt};

use super::{Action, Contents, FileOwner};
use crate::facts::accounts::{
    self as facts, home_parents, AccountDbFacts, DbFile, HomeFacts, LoginDefs, PathState,
    SkelEntry, UseraddDefaults, GROUP, GSHADOW, PASSWD, SHADOW,
};
use crate::facts::AccountsDbWanted;
use crate::model::Secret;
use crate::root::Root;
pub(crate) use crate::state::RANDOM_PASSWORDS;
use dbfile::{BadField, DbEdit};
use request::{AccountsRequest, NewPassword, UserEntry, UserRequest, DISABLE_ROOT_OPTS};

/// Length of a RANDOM password, as cloud-init's.
pub(crate) const RANDOM_LEN: usize = 20;

/// Why the accounts cannot be planned for this root.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccountsError {
    /// An account file is missing.
    #[error("{path} does not exist in the target root; it is needed for {need}")]
    MissingFile {
        /// The file.
        path: &'static str,
        /// What needs it.
        need: String,
    },
    /// The uid asked for belongs to another user.
    #[error("users: {user}: uid {uid} is already used by {other} in the target root; choose another uid or leave uid out")]
    UidTaken {
        /// The new user.
        user: String,
        /// The uid.
        uid: u32,
        /// Who has it.
        other: String,
    },
    /// The user's own group exists already (useradd refuses it too).
    #[error("users: {user}: a group named {user} exists already; set primary_group: {user} to use it, or no_user_group: true")]
    GroupExists {
        /// The new user.
        user: String,
    },
    /// A group the user needs does not exist and is not to be created.
    #[error("users: {user}: group {group} does not exist in the target root; add it to groups or set create_groups: true")]
    NoSuchGroup {
        /// The user.
        user: String,
        /// The group.
        group: String,
    },
    /// A password change for a user that does not exist.
    #[error(
        "{place}: user {user} does not exist in the target root (nor in users); create it first"
    )]
    UnknownUser {
        /// The key path.
        place: String,
        /// The user.
        user: String,
    },
    /// No free id in a range.
    #[error("no free {what} is left between {min} and {max} in the target root")]
    NoFreeId {
        /// `uid` or `gid`.
        what: &'static str,
        /// Range start.
        min: u32,
        /// Range end.
        max: u32,
    },
    /// A home or `~/.ssh` cannot take the keys.
    #[error("users: {user}: {path} is {what}; {fix}")]
    BadHome {
        /// The user.
        user: String,
        /// The path.
        path: String,
        /// What is wrong.
        what: &'static str,
        /// What to do.
        fix: &'static str,
    },
    /// The key line made with `disable_root_opts` is not a valid key line.
    #[error("disable_root_opts: the authorized_keys line it makes is not valid: {0}")]
    BadKeyOptions(String),
    /// Facts lack the random bytes a new hash needs.
    #[error("no random salt was gathered for a new password hash; gather the facts for this request before planning")]
    NoSalt,
    /// login.defs' subordinate id settings are ones useradd refuses.
    #[error("users: {user}: /etc/login.defs of the target root sets SUB_{kind}_MIN {min}, SUB_{kind}_MAX {max}, SUB_{kind}_COUNT {count}, which useradd refuses (it needs MIN <= MAX, COUNT < MAX and MIN + COUNT - 1 <= MAX); correct them, or set SUB_{kind}_COUNT 0 for no ranges")]
    SubIdConfig {
        /// The new user.
        user: String,
        /// `UID` or `GID`.
        kind: String,
        /// SUB_?ID_MIN.
        min: u64,
        /// SUB_?ID_MAX.
        max: u64,
        /// SUB_?ID_COUNT.
        count: u64,
    },
    /// No block of subordinate ids is free (useradd fails the same way).
    #[error("users: {user}: no free block of {count} ids is left between {min} and {max} in {path} of the target root; remove unused ranges there or raise the SUB_ settings in /etc/login.defs")]
    NoSubIds {
        /// The new user.
        user: String,
        /// `/etc/subuid` or `/etc/subgid`.
        path: &'static str,
        /// Ids per user.
        count: u64,
        /// Range start.
        min: u64,
        /// Range end.
        max: u64,
    },
    /// A line would break an account file (a bug: the request types refuse such values).
    #[error(transparent)]
    Format(#[from] BadField),
    /// The user has no line in `/etc/shadow`.
    #[error(
        "user {user} has no line in /etc/shadow of the target root; run pwconv in the template"
    )]
    NoShadowLine {
        /// The user.
        user: String,
    },
    /// `/etc/skel` holds something vmcust cannot copy under the home.
    #[error("/etc/skel/{rel} cannot be copied: {why}")]
    Skel {
        /// Path under /etc/skel.
        rel: String,
        /// Why.
        why: &'static str,
    },
}

/// The plan for the accounts of one request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccountsPlan {
    /// The changes, in order.
    pub actions: Vec<Action>,
    /// What was left out and why (a group member that does not exist...), as cloud-init
    /// warns; for `plan`/`show` and the log.
    pub notes: Vec<String>,
    /// What was asked for and is not applied, with why (a `chpasswd` user that does not
    /// exist): the customization ends degraded, as cloud-init counts the module failed.
    pub not_applied: Vec<String>,
}

/// The name of the `default` entry for this root.
pub(crate) fn default_user(f: &AccountDbFacts) -> UserRequest {
    distro::default_user(f.os_release.as_deref())
}

/// The users of `req` as cloud-init resolves `users` and `user` (see [`resolve`]), the
/// default user last.
pub(crate) fn resolved_users(req: &AccountsRequest, f: &AccountDbFacts) -> Vec<UserRequest> {
    resolve::resolve(req, default_user(f)).users
}

/// How many salts [`plan_accounts`] may need for `req`.
pub fn salts_needed(req: &AccountsRequest) -> usize {
    let users = req
        .users
        .iter()
        .filter(|u| matches!(u, UserEntry::User(u) if u.plain_text_passwd.is_some()))
        .count()
        + usize::from(
            req.user
                .as_ref()
                .is_some_and(|u| u.plain_text_passwd.is_some()),
        );
    let ch = req.chpasswd.as_ref().map_or(0, |c| {
        c.entries
            .iter()
            .map(|e| match e.password {
                NewPassword::Text(_) => 1,
                NewPassword::Random => 2,
                NewPassword::Hash(_) => 0,
            })
            .sum()
    });
    // The top-level password may be RANDOM.
    users + ch + 2 * usize::from(req.password.is_some())
}

/// Reads every fact [`plan_accounts`] needs for `req` from `root` alone (with
/// [`AccountDbFacts::gather`], the homes from [`homes`]): for the tests and the
/// `ssh_authkey_fingerprints` module at boot; a plan gathers them with its other facts.
pub fn gather(root: &Root, req: &AccountsRequest) -> Result<AccountDbFacts> {
    AccountDbFacts::gather(root, salts_needed(req), &|f| homes(req, f))
}

/// What [`plan_accounts`] needs gathered for `req`, as part of the one gathering of facts.
pub(crate) fn wanted(req: AccountsRequest) -> AccountsDbWanted {
    AccountsDbWanted {
        salts: salts_needed(&req),
        homes: Arc::new(move |f| homes(&req, f)),
    }
}

/// The homes [`plan_accounts`] looks at for `req` on a root with the databases of `f`:
/// each resolved user's, and root's.
pub(crate) fn homes(req: &AccountsRequest, f: &AccountDbFacts) -> Vec<String> {
    let passwd_text = f
        .passwd
        .as_ref()
        .map(|p| String::from_utf8_lossy(&p.contents).into_owned())
        .unwrap_or_default();
    let existing = facts::passwd_entries(&passwd_text);
    let defaults = f
        .useradd
        .clone()
        .unwrap_or_else(|| UseraddDefaults::parse(""));
    let mut homes: Vec<String> = resolved_users(req, f)
        .iter()
        .map(|u| home_of(u, &existing, &defaults))
        .collect();
    if let Some(root_home) = existing.iter().find(|e| e.name == "root") {
        homes.push(root_home.home.clone());
    }
    homes
}

/// The home of `u`: its passwd entry's when it exists, else `homedir` or HOME/name.
fn home_of(u: &UserRequest, existing: &[facts::PasswdEntry], d: &UseraddDefaults) -> String {
    if let Some(e) = existing.iter().find(|e| e.name == u.name.as_str()) {
        return e.home.clone();
    }
    u.homedir.as_ref().map_or_else(
        || format!("{}/{}", d.home, u.name),
        |h| h.as_str().to_string(),
    )
}

/// The four account files being edited, and what was made for whom.
struct Db {
    passwd: DbEdit,
    shadow: DbEdit,
    group: DbEdit,
    gshadow: Option<DbEdit>,
    modes: [u32; 4],
    /// `/etc/subuid` and `/etc/subgid`, when the root has them.
    subuid: Option<subids::SubIdFile>,
    subgid: Option<subids::SubIdFile>,
}

impl Db {
    fn load(f: &AccountDbFacts) -> Result<Db, AccountsError> {
        let need = |file: &Option<DbFile>, path: &'static str| {
            file.clone().ok_or_else(|| AccountsError::MissingFile {
                path,
                need: "users, groups and passwords".into(),
            })
        };
        let passwd = need(&f.passwd, PASSWD)?;
        let shadow = need(&f.shadow, SHADOW)?;
        let group = need(&f.group, GROUP)?;
        Ok(Db {
            passwd: DbEdit::new(PASSWD, &passwd.contents),
            shadow: DbEdit::new(SHADOW, &shadow.contents),
            group: DbEdit::new(GROUP, &group.contents),
            gshadow: f
                .gshadow
                .as_ref()
                .map(|g| DbEdit::new(GSHADOW, &g.contents)),
            modes: [
                passwd.mode,
                shadow.mode,
                group.mode,
                f.gshadow.as_ref().map_or(0o640, |g| g.mode),
            ],
            subuid: f.subuid.as_ref().map(|s| subids::SubIdFile::load("uid", s)),
            subgid: f.subgid.as_ref().map(|s| subids::SubIdFile::load("gid", s)),
        })
    }

    fn gid_of(&self, group: &str) -> Option<u32> {
        self.group.field(group, 2)?.parse().ok()
    }

    /// `groupadd NAME` (or the user's own group): a `group` and a `gshadow` line.
    fn add_group(&mut self, name: &str, gid: u32) -> Result<(), AccountsError> {
        self.group.append(&[name, "x", &gid.to_string(), ""])?;
        if let Some(gs) = &mut self.gshadow {
            gs.append(&[name, "!", "", ""])?;
        }
        Ok(())
    }

    /// `usermod -a -G group user`.
    fn add_member(&mut self, group: &str, user: &str) -> Result<bool, AccountsError> {
        let found = self.group.add_member(group, 3, user)?;
        if let Some(gs) = &mut self.gshadow {
            gs.add_member(group, 3, user)?;
        }
        Ok(found)
    }

    fn actions(self, out: &mut Vec<Action>) {
        let Db {
            passwd,
            shadow,
            group,
            gshadow,
            modes,
            subuid,
            subgid,
        } = self;
        if group.changed() {
            out.push(Action::write_file(
                GROUP,
                Contents::text(String::from_utf8_lossy(&group.bytes()).into_owned()),
                modes[2],
                "groups (cloud-config)",
            ));
        }
        if let Some(gs) = gshadow.filter(DbEdit::changed) {
            out.push(Action::write_file(
                GSHADOW,
                Contents::sensitive(gs.bytes()),
                modes[3],
                "group passwords (cloud-config)",
            ));
        }
        if passwd.changed() {
            out.push(Action::write_file(
                PASSWD,
                Contents::text(String::from_utf8_lossy(&passwd.bytes()).into_owned()),
                modes[0],
                "users (cloud-config)",
            ));
        }
        if shadow.changed() {
            out.push(Action::write_file(
                SHADOW,
                Contents::sensitive(shadow.bytes()),
                modes[1],
                "passwords (cloud-config)",
            ));
        }
        for (file, purpose) in [
            (subuid, "subordinate uids of new users (cloud-config)"),
            (subgid, "subordinate gids of new users (cloud-config)"),
        ] {
            if let Some(file) = file.filter(subids::SubIdFile::changed) {
                out.push(Action::write_file(
                    file.path(),
                    Contents::text(file.text()),
                    file.mode(),
                    purpose,
                ));
            }
        }
    }
}

/// A user the plan knows: made now or already there.
struct Known {
    uid: u32,
    gid: u32,
    home: String,
    new: bool,
}

/// Plans every change `req` asks for against a root described by `f`.
pub fn plan_accounts(
    req: &AccountsRequest,
    f: &AccountDbFacts,
) -> Result<AccountsPlan, AccountsError> {
    let mut plan = AccountsPlan::default();
    let resolve::Resolved {
        users,
        default: default_name,
    } = resolve::resolve(req, default_user(f));
    let touches_db = !req.groups.is_empty()
        || !users.is_empty()
        || req.chpasswd.as_ref().is_some_and(|c| !c.entries.is_empty())
        || req.password.is_some()
        || !req.ssh_authorized_keys.is_empty();
    let defs = f.login_defs.clone().unwrap_or_else(|| LoginDefs::parse(""));
    let defaults = f
        .useradd
        .clone()
        .unwrap_or_else(|| UseraddDefaults::parse(""));
    let mut salts = f.entropy.iter();
    let mut later: Vec<Action> = Vec::new();
    let mut sudo_blocks: Vec<(String, Vec<String>)> = Vec::new();
    let mut known: BTreeMap<String, Known> = BTreeMap::new();
    let mut randoms: Vec<(String, Secret)> = Vec::new();
    // One authorized_keys write per user, whichever keys (own, top-level) it gets.
    let mut keys_for: Vec<(String, Vec<String>)> = Vec::new();
    let mut want_keys =
        |user: &str, lines: Vec<String>| match keys_for.iter_mut().find(|(u, _)| u == user) {
            Some((_, have)) => have.extend(lines),
            None => keys_for.push((user.to_string(), lines)),
        };

    let mut db = if touches_db { Some(Db::load(f)?) } else { None };
    if let Some(db) = db.as_mut() {
        for name in db.passwd.names() {
            let field = |i| db.passwd.field(&name, i).and_then(|v| v.parse().ok());
            if let (Some(uid), Some(gid)) = (field(2), field(3)) {
                let home = db.passwd.field(&name, 5).unwrap_or_default();
                known.insert(
                    name.clone(),
                    Known {
                        uid,
                        gid,
                        home,
                        new: false,
                    },
                );
            }
        }
        // groups: created first; members must already exist (cloud-init runs usermod
        // for each and skips the missing ones with a warning).
        for g in &req.groups {
            if !db.group.has(g.name.as_str()) {
                let gid = ids::new_gid(&db.group.numbers(2), &defs, false, None)?;
                db.add_group(g.name.as_str(), gid)?;
            }
            for m in &g.members {
                if known.get(m.as_str()).is_some_and(|k| !k.new) {
                    db.add_member(g.name.as_str(), m.as_str())?;
                } else {
                    plan.notes.push(format!(
                        "groups: {}: member {m} is not a user of the root when groups are made; left out (as cloud-init)",
                        g.name
                    ));
                }
            }
        }
        for u in &users {
            let k = if known.contains_key(u.name.as_str()) {
                plan.notes.push(format!(
                    "users: {} exists already: not recreated (its groups, shell and home are kept); password, lock, sudo and keys are applied",
                    u.name
                ));
                if u.passwd.is_some() {
                    plan.notes.push(format!(
                        "users: {}: passwd is only used for a new user; ignored (use hashed_passwd)",
                        u.name
                    ));
                }
                let k = &known[u.name.as_str()];
                Known {
                    uid: k.uid,
                    gid: k.gid,
                    home: k.home.clone(),
                    new: false,
                }
            } else {
                let k = add_user(db, u, &defs, &defaults, f.today, &mut plan.notes)?;
                if !(u.no_create_home || u.system) {
                    make_home(u, &k, f, &defs, &mut later, &mut plan.notes)?;
                }
                k
            };
            set_user_password(db, u, k.new, f.today, &mut salts)?;
            if !u.sudo.is_empty() {
                sudo_blocks.push((
                    u.name.to_string(),
                    u.sudo.iter().map(|r| r.as_str().to_string()).collect(),
                ));
            }
            if !u.ssh_authorized_keys.is_empty() {
                let lines: Vec<String> = u
                    .ssh_authorized_keys
                    .iter()
                    .map(|k| k.as_str().to_string())
                    .collect();
                want_keys(u.name.as_str(), lines);
            }
            known.insert(u.name.to_string(), k);
        }
        chpasswd(
            req,
            db,
            &known,
            default_name.as_ref(),
            f.today,
            &mut salts,
            &mut randoms,
            &mut plan.not_applied,
        )?;
    }

    // Top-level keys: the default user's, and root's (prefixed while disable_root).
    if !req.ssh_authorized_keys.is_empty() {
        let default = default_name.as_ref().map(ToString::to_string);
        let plain: Vec<String> = req
            .ssh_authorized_keys
            .iter()
            .map(|k| k.as_str().to_string())
            .collect();
        if let Some(name) = &default {
            want_keys(name, plain.clone());
        }
        let prefix = if req.disable_root {
            let opts = req
                .disable_root_opts
                .as_ref()
                .map_or(DISABLE_ROOT_OPTS, |o| o.as_str());
            opts.replace("$USER", default.as_deref().unwrap_or("NONE"))
                .replace("$DISABLE_USER", "root")
        } else {
            String::new()
        };
        let root_lines = plain
            .iter()
            .map(|k| keys::with_options(k, &prefix).map_err(AccountsError::BadKeyOptions))
            .collect::<Result<Vec<_>, _>>()?;
        want_keys("root", root_lines);
    }
    for (user, lines) in &keys_for {
        let k = known.get(user).ok_or_else(|| AccountsError::UnknownUser {
            place: "ssh_authorized_keys".into(),
            user: user.clone(),
        })?;
        later.push(keys_action(user, k, f, lines)?);
    }

    if let Some(db) = db {
        db.actions(&mut plan.actions);
    }
    plan.actions.extend(later);
    if !sudo_blocks.is_empty() {
        plan.actions.extend(sudoers::plan(&sudo_blocks, f));
    }
    if let Some(yes) = req.ssh_pwauth {
        plan.actions.extend(sshd::plan(yes, f));
    }
    if !randoms.is_empty() {
        let mut text = zeroize::Zeroizing::new(String::new());
        for (user, pw) in &randoms {
            text.push_str(user);
            text.push(':');
            text.push_str(pw.expose());
            text.push('\n');
        }
        plan.actions.push(Action::write_file(
            RANDOM_PASSWORDS,
            Contents::sensitive(text.as_bytes().to_vec()),
            0o600,
            "chpasswd RANDOM passwords (root only)",
        ));
        plan.notes.push(format!(
            "chpasswd: the RANDOM passwords are in {RANDOM_PASSWORDS} (mode 0600), never in a log"
        ));
    }
    Ok(plan)
}

/// `useradd` with cloud-init's options: the user's own group (or `primary_group`), the
/// missing `groups` made first when `create_groups`, a new uid as useradd picks it.
fn add_user(
    db: &mut Db,
    u: &UserRequest,
    defs: &LoginDefs,
    defaults: &UseraddDefaults,
    today: u64,
    notes: &mut Vec<String>,
) -> Result<Known, AccountsError> {
    let name = u.name.as_str();
    let mut wanted: Vec<&str> = u.groups.iter().map(|g| g.as_str()).collect();
    if let Some(p) = &u.primary_group {
        wanted.push(p.as_str());
    }
    for g in &wanted {
        if !db.group.has(g) {
            if !u.create_groups {
                return Err(AccountsError::NoSuchGroup {
                    user: name.into(),
                    group: (*g).into(),
                });
            }
            let gid = ids::new_gid(&db.group.numbers(2), defs, false, None)?;
            db.add_group(g, gid)?;
        }
    }
    let uids = db.passwd.numbers(2);
    let uid = match u.uid {
        Some(uid) => {
            if let Some(other) = db
                .passwd
                .names()
                .into_iter()
                .find(|n| db.passwd.field(n, 2).as_deref() == Some(&uid.to_string()))
            {
                return Err(AccountsError::UidTaken {
                    user: name.into(),
                    uid,
                    other,
                });
            }
            uid
        }
        None => ids::new_uid(&uids, defs, u.system)?,
    };
    if subids::wanted(defs, u.system, u.uid) {
        for (file, range) in [
            (db.subuid.as_mut(), defs.sub_uid),
            (db.subgid.as_mut(), defs.sub_gid),
        ] {
            if let Some(file) = file.filter(|_| range.count > 0) {
                let start = file.allocate(name, range)?;
                notes.push(format!(
                    "users: {name}: subordinate ids {start}-{} in {} (as useradd)",
                    start + range.count - 1,
                    file.path()
                ));
            }
        }
    }
    let gid = if let Some(p) = &u.primary_group {
        db.gid_of(p.as_str())
            .ok_or_else(|| AccountsError::NoSuchGroup {
                user: name.into(),
                group: p.to_string(),
            })?
    } else if u.no_user_group || !defs.usergroups {
        // useradd's GROUP default.
        100
    } else {
        if db.group.has(name) {
            return Err(AccountsError::GroupExists { user: name.into() });
        }
        let gid = ids::new_gid(&db.group.numbers(2), defs, u.system, Some(uid))?;
        db.add_group(name, gid)?;
        gid
    };
    for g in &u.groups {
        db.add_member(g.as_str(), name)?;
    }
    let home = u.homedir.as_ref().map_or_else(
        || format!("{}/{name}", defaults.home),
        |h| h.as_str().to_string(),
    );
    let shell = u
        .shell
        .as_ref()
        .map(|s| s.as_str().to_string())
        .or_else(|| defaults.shell.clone())
        .unwrap_or_default();
    let gecos = u.gecos.as_ref().map_or("", |g| g.as_str());
    db.passwd.append(&[
        name,
        "x",
        &uid.to_string(),
        &gid.to_string(),
        gecos,
        &home,
        &shell,
    ])?;
    let opt = |n: Option<i64>| n.map(|n| n.to_string()).unwrap_or_default();
    let (min, max, warn, inactive) = if u.system {
        (String::new(), String::new(), String::new(), String::new())
    } else {
        (
            opt(defs.pass_days.0),
            opt(defs.pass_days.1),
            opt(defs.pass_days.2),
            opt(defaults.inactive),
        )
    };
    let hash = u.passwd.as_ref().map_or("!", |h| h.expose());
    let expire = u.expiredate.map(|d| d.0.to_string()).unwrap_or_default();
    db.shadow.append(&[
        name,
        hash,
        &today.to_string(),
        &min,
        &max,
        &warn,
        &inactive,
        &expire,
        "",
    ])?;
    Ok(Known {
        uid,
        gid,
        home,
        new: true,
    })
}

/// `useradd -m`: the home, then `/etc/skel` copied into it, owned by the user. A home that
/// exists is left as it is (useradd copies nothing into it either).
fn make_home(
    u: &UserRequest,
    k: &Known,
    f: &AccountDbFacts,
    defs: &LoginDefs,
    out: &mut Vec<Action>,
    notes: &mut Vec<String>,
) -> Result<(), AccountsError> {
    match f.homes.get(&k.home).map(|h| h.home) {
        Some(PathState::Missing) | None => {}
        Some(PathState::Dir) => {
            notes.push(format!(
                "users: {}: home {} exists already; nothing copied from /etc/skel (as useradd)",
                u.name, k.home
            ));
            return Ok(());
        }
        Some(_) => {
            return Err(AccountsError::BadHome {
                user: u.name.to_string(),
                path: k.home.clone(),
                what: "not a directory",
                fix: "remove it or set homedir",
            })
        }
    }
    // useradd (shadow 4.13) makes the missing directories above the home, root's, 0755.
    for parent in home_parents(&k.home) {
        let made = out
            .iter()
            .any(|a| matches!(a, Action::MakeDir { path, .. } if path == Path::new(parent)));
        if !made && f.homes.get(parent).map(|h| h.home) == Some(PathState::Missing) {
            out.push(Action::MakeDir {
                path: PathBuf::from(parent),
                mode: 0o755,
                uid: 0,
                gid: 0,
                purpose: "directory above a home directory",
            });
        }
    }
    let home = PathBuf::from(&k.home);
    out.push(Action::MakeDir {
        path: home.clone(),
        mode: defs.home_mode,
        uid: k.uid,
        gid: k.gid,
        purpose: "home directory",
    });
    let mut dir_modes: BTreeMap<String, u32> = BTreeMap::new();
    for e in &f.skel {
        match e {
            SkelEntry::Dir { rel, mode } => {
                // Modes kept, as useradd's copy_tree keeps them on a running system.
                dir_modes.insert(rel.clone(), *mode);
                out.push(Action::MakeDir {
                    path: home.join(rel),
                    mode: *mode,
                    uid: k.uid,
                    gid: k.gid,
                    purpose: "home directory (from /etc/skel)",
                });
            }
            SkelEntry::File {
                rel,
                mode,
                contents,
            } => {
                let parent = rel.rsplit_once('/').map(|(p, _)| p.to_string());
                let dir_mode = parent
                    .as_ref()
                    .and_then(|p| dir_modes.get(p).copied())
                    .unwrap_or(defs.home_mode);
                let text =
                    String::from_utf8(contents.clone()).map_err(|_| AccountsError::Skel {
                        rel: rel.clone(),
                        why: "it is not UTF-8 text",
                    })?;
                out.push(Action::write_file_as(
                    home.join(rel),
                    Contents::text(text),
                    *mode,
                    FileOwner::InUserDir {
                        uid: k.uid,
                        gid: k.gid,
                        dir_mode,
                    },
                    "home file (from /etc/skel)",
                ));
            }
            SkelEntry::Skipped { rel } => notes.push(format!(
                "users: {}: /etc/skel/{rel} is a symlink or special file; not copied",
                u.name
            )),
        }
    }
    Ok(())
}

/// Whether `password` matches `hash` (a leading `!` of a locked account ignored).
fn verifies(password: &str, hash: &str) -> bool {
    let hash = hash.trim_start_matches('!');
    (hash.starts_with("$6$") || hash.starts_with("$5$"))
        && ShaCrypt::SHA512
            .verify_password(password.as_bytes(), hash)
            .is_ok()
}

/// Sets `user`'s shadow hash to `password` hashed (kept if it already verifies).
fn set_plain<'a>(
    db: &mut Db,
    user: &str,
    password: &str,
    today: u64,
    salts: &mut impl Iterator<Item = &'a facts::Salt>,
) -> Result<(), AccountsError> {
    let current = db
        .shadow
        .field(user, 1)
        .ok_or_else(|| AccountsError::NoShadowLine { user: user.into() })?;
    if verifies(password, &current) {
        return Ok(());
    }
    let salt = salts.next().ok_or(AccountsError::NoSalt)?;
    let hash = ShaCrypt::SHA512
        .hash_password_with_salt(password.as_bytes(), &salt.0)
        .map_err(|_| AccountsError::NoSalt)?;
    db.shadow.set_field(user, 1, hash.as_str())?;
    db.shadow.set_field(user, 2, &today.to_string())?;
    Ok(())
}

/// Sets a hash as `chpasswd -e` does (and the change date, unless it is the same hash).
fn set_hash(db: &mut Db, user: &str, hash: &str, today: u64) -> Result<(), AccountsError> {
    let current = db
        .shadow
        .field(user, 1)
        .ok_or_else(|| AccountsError::NoShadowLine { user: user.into() })?;
    if current != hash {
        db.shadow.set_field(user, 1, hash)?;
        db.shadow.set_field(user, 2, &today.to_string())?;
    }
    Ok(())
}

/// cloud-init's `create_user` password steps: `plain_text_passwd`, `hashed_passwd`, then
/// `lock_passwd` (`passwd -l`, default) or an unlock when a password is known.
fn set_user_password<'a>(
    db: &mut Db,
    u: &UserRequest,
    new: bool,
    today: u64,
    salts: &mut impl Iterator<Item = &'a facts::Salt>,
) -> Result<(), AccountsError> {
    let name = u.name.as_str();
    let mut blank = false;
    let mut specified = false;
    if let Some(p) = &u.plain_text_passwd {
        specified = true;
        if p.expose().is_empty() {
            blank = true;
        } else {
            set_plain(db, name, p.expose(), today, salts)?;
        }
    }
    if let Some(h) = &u.hashed_passwd {
        specified = true;
        if h.expose().is_empty() {
            blank = true;
        } else {
            set_hash(db, name, h.expose(), today)?;
        }
    }
    if new && u.passwd.is_some() {
        specified = true;
        blank |= u.passwd.as_ref().is_some_and(|h| h.expose().is_empty());
    }
    let current = db
        .shadow
        .field(name, 1)
        .ok_or_else(|| AccountsError::NoShadowLine { user: name.into() })?;
    if u.lock_passwd {
        // passwd -l: a `!` before the hash, once.
        if !current.starts_with('!') {
            db.shadow.set_field(name, 1, &format!("!{current}"))?;
        }
        return Ok(());
    }
    let has_existing = !new && !matches!(current.as_str(), "" | "!" | "!!" | "*" | "!*");
    if has_existing || specified {
        // passwd -u: one `!` off; an account that would be left with an empty hash gets
        // an empty field only when user-data asked for a blank password (passwd -d).
        let unlocked = current.strip_prefix('!').unwrap_or(&current).to_string();
        if !unlocked.is_empty() || blank {
            db.shadow.set_field(name, 1, &unlocked)?;
        }
    }
    Ok(())
}

/// A RANDOM password as cloud-init makes it: 20 characters with a digit, a lower- and an
/// upper-case letter and a punctuation character, from `bytes`.
fn random_password(bytes: &[u8]) -> Secret {
    const DIGITS: &[u8] = b"0123456789";
    const LOWER: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
    const UPPER: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    const PUNCT: &[u8] = b"!\"#$%&'()*+,-./;<=>?@[\\]^_`{|}~";
    let all: Vec<u8> = [DIGITS, LOWER, UPPER, PUNCT].concat();
    let mut out = zeroize::Zeroizing::new(String::with_capacity(RANDOM_LEN));
    for (i, b) in bytes.iter().cycle().take(RANDOM_LEN).enumerate() {
        let set: &[u8] = match i {
            0 => DIGITS,
            1 => LOWER,
            2 => UPPER,
            3 => PUNCT,
            _ => &all,
        };
        out.push(set[*b as usize % set.len()] as char);
    }
    Secret::new(out.to_string())
}

/// `chpasswd` (list and `users:` forms) and the top-level `password`, then
/// `passwd --expire` for each changed user while `expire` (the default). A user that does
/// not exist is left out and reported in `not_applied`; the others' passwords are set.
#[allow(clippy::too_many_arguments)]
fn chpasswd<'a>(
    req: &AccountsRequest,
    db: &mut Db,
    known: &BTreeMap<String, Known>,
    default: Option<&crate::model::UserName>,
    today: u64,
    salts: &mut impl Iterator<Item = &'a facts::Salt>,
    randoms: &mut Vec<(String, Secret)>,
    not_applied: &mut Vec<String>,
) -> Result<(), AccountsError> {
    let mut entries: Vec<(String, String, NewPassword)> = req
        .chpasswd
        .iter()
        .flat_map(|c| c.entries.iter().enumerate())
        .map(|(i, e)| {
            (
                format!("chpasswd[{i}]"),
                e.user.to_string(),
                e.password.clone(),
            )
        })
        .collect();
    let expire = req.chpasswd.as_ref().is_none_or(|c| c.expire);
    if entries.is_empty() {
        if let Some(pw) = &req.password {
            // The default user's password, with the list form's hash/RANDOM detection.
            if let Some(default) = default {
                let p = pw.expose();
                let new = if request::looks_hashed(p) {
                    NewPassword::Hash(
                        request::PasswordHash::parse(p.to_string())
                            .map_err(|_| AccountsError::Format(BadField { file: SHADOW }))?,
                    )
                } else if p == "R" || p == "RANDOM" {
                    NewPassword::Random
                } else {
                    NewPassword::Text(pw.clone())
                };
                entries.push(("password".into(), default.to_string(), new));
            }
        }
    }
    for (place, user, password) in entries {
        if !known.contains_key(&user) {
            not_applied.push(format!(
                "{place}: user {user} does not exist in the target root (nor in users); its password is not set (the other passwords are); create the user first or correct the name"
            ));
            continue;
        }
        match &password {
            NewPassword::Text(p) => set_plain(db, &user, p.expose(), today, salts)?,
            NewPassword::Hash(h) => set_hash(db, &user, h.expose(), today)?,
            NewPassword::Random => {
                let bytes = salts.next().ok_or(AccountsError::NoSalt)?;
                let p = random_password(&bytes.0);
                set_plain(db, &user, p.expose(), today, salts)?;
                randoms.push((user.clone(), p));
            }
        }
        if expire {
            db.shadow.set_field(&user, 2, "0")?;
        }
    }
    Ok(())
}

/// `~user/.ssh/authorized_keys` with `lines` merged in as cloud-init merges them.
fn keys_action(
    user: &str,
    k: &Known,
    f: &AccountDbFacts,
    lines: &[String],
) -> Result<Action, AccountsError> {
    let bad = |path: String, what, fix| AccountsError::BadHome {
        user: user.into(),
        path,
        what,
        fix,
    };
    let home = f.homes.get(&k.home).cloned().unwrap_or(HomeFacts {
        home: PathState::Missing,
        ssh_dir: PathState::Missing,
        keys_file: PathState::Missing,
        keys: None,
    });
    // A home planned above is made before the keys are written.
    let home_made = k.new && home.home == PathState::Missing;
    if !k.home.starts_with('/') || (home.home != PathState::Dir && !home_made) {
        return Err(bad(
            k.home.clone(),
            "not an existing directory",
            "create the home (leave no_create_home out) or set homedir",
        ));
    }
    let dir = Path::new(&k.home).join(".ssh");
    match home.ssh_dir {
        PathState::Missing | PathState::Dir => {}
        _ => {
            return Err(bad(
                dir.display().to_string(),
                "a symlink or not a directory",
                "replace it with a real directory owned by the user",
            ))
        }
    }
    let path = dir.join("authorized_keys");
    if matches!(home.keys_file, PathState::Dir | PathState::Other) {
        return Err(bad(
            path.display().to_string(),
            "not a regular file",
            "remove it so the keys can be written",
        ));
    }
    Ok(Action::write_file_as(
        path,
        Contents::text(keys::merge(home.keys.as_deref().unwrap_or(""), lines)),
        0o600,
        FileOwner::InUserDir {
            uid: k.uid,
            gid: k.gid,
            dir_mode: 0o700,
        },
        "ssh authorized keys (cloud-config)",
    ))
}

#[cfg(test)]
mod tests;
