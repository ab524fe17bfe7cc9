//! What a plan asks the facts for: one request, built by each planner's side (the engine
//! from its customization, the cloud-config side from its document through the module
//! table), joined when one plan has both, so that the root is read once.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

use super::accounts::HomesOf;
use super::apt::AptWanted;
use super::disks::DisksWanted;
use super::mounts::MountsWanted;

/// The facts a plan needs. `/etc/hosts`, `/etc/debian_version` and `/etc/timezone` are
/// always read; everything else only when asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Wanted {
    /// Time zones whose zoneinfo file is looked for.
    pub zones: BTreeSet<String>,
    /// `/etc/adjtime` (the hardware clock setting).
    pub adjtime: bool,
    /// The root's network: devices, stacks and their leftover files.
    pub network: bool,
    /// What the password and SSH key planners need.
    pub accounts: Option<AccountsWanted>,
    /// What the cloud-config accounts planner needs (every cloud-config document's).
    pub accounts_db: Option<AccountsDbWanted>,
    /// `/etc/os-release`: the distribution's `ID` and family.
    pub os: bool,
    /// `/etc/passwd` and `/etc/group` as text.
    pub account_files: bool,
    /// Whether `/etc/hostname` exists.
    pub hostname_file: bool,
    /// Programs looked for (by name on the fixed `PATH`, or `systemd-timesyncd`).
    pub programs: BTreeSet<String>,
    /// Files read with their mode, by path inside the root.
    pub files: BTreeSet<String>,
    /// Files read that `write_files` appends to.
    pub appended: BTreeSet<String>,
    /// What the `apt` module needs.
    pub apt: Option<AptWanted>,
    /// What the `mounts` module needs.
    pub mounts: Option<MountsWanted>,
    /// What the `disk_setup` module needs.
    pub disks: Option<DisksWanted>,
}

/// What the account planners need: a password set (and whether it needs a new hash's
/// salt), keys installed for a user.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccountsWanted {
    /// A root password is set: `/etc/passwd` and `/etc/shadow`.
    pub password: bool,
    /// The password is given in clear: a salt for its hash.
    pub salt: bool,
    /// SSH keys are installed for this user: `/etc/passwd` and the user's `~/.ssh`.
    pub ssh_user: Option<String>,
}

/// What the cloud-config accounts planner needs: its salts, and which homes it looks at.
///
/// The homes are a function of the databases, supplied by the planner, not plain data:
/// which users a request resolves to depends on the distribution's default user (from
/// `os-release`) and on how cloud-init merges `users` and `user`, and a home on the
/// user's passwd entry or useradd's defaults. That is the planner's knowledge; facts
/// calls it once the databases are read, and reads the homes it names.
#[derive(Clone)]
pub struct AccountsDbWanted {
    /// Fresh salts to read.
    pub salts: usize,
    /// The homes to inspect, given the databases.
    pub homes: Arc<HomesOf<'static>>,
}

impl fmt::Debug for AccountsDbWanted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AccountsDbWanted {{ salts: {}, homes: .. }}", self.salts)
    }
}

/// The same request: the same salts and the same function.
impl PartialEq for AccountsDbWanted {
    fn eq(&self, other: &Self) -> bool {
        self.salts == other.salts && Arc::ptr_eq(&self.homes, &other.homes)
    }
}

impl Eq for AccountsDbWanted {}

impl Wanted {
    /// Both requests in one: everything either asks for.
    pub fn union(mut self, other: Wanted) -> Wanted {
        self.zones.extend(other.zones);
        self.adjtime |= other.adjtime;
        self.network |= other.network;
        self.accounts = match (self.accounts, other.accounts) {
            (Some(a), Some(b)) => Some(AccountsWanted {
                password: a.password || b.password,
                salt: a.salt || b.salt,
                ssh_user: a.ssh_user.or(b.ssh_user),
            }),
            (a, b) => a.or(b),
        };
        // One document's accounts: only the cloud-config side asks.
        self.accounts_db = self.accounts_db.or(other.accounts_db);
        self.os |= other.os;
        self.account_files |= other.account_files;
        self.hostname_file |= other.hostname_file;
        self.programs.extend(other.programs);
        self.files.extend(other.files);
        self.appended.extend(other.appended);
        self.apt = self.apt.or(other.apt);
        self.mounts = self.mounts.or(other.mounts);
        self.disks = self.disks.or(other.disks);
        self
    }
}
