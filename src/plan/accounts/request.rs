//! The validated accounts request of a cloud-config: `groups`, `users`, `chpasswd`,
//! `password`, `ssh_authorized_keys`, `ssh_pwauth`, `disable_root`, `disable_root_opts`.
//!
//! Every value that ends up in `/etc/passwd`, `/etc/shadow`, `/etc/group`, `/etc/gshadow`,
//! a sudoers drop-in or `authorized_keys` has a type here that cannot hold a value which
//! would break that file (a `:`, a newline, a NUL, a relative shell...). Passwords and hashes
//! are [`Secret`]s: never shown by `Debug`, `Display` or `Serialize`.

use std::fmt;

use serde::Serialize;

use crate::model::{quote, Secret, SshKey, UserName};

/// Most users one cloud-config may create or change.
pub(crate) const MAX_USERS: usize = 256;
/// Most groups one cloud-config may create.
pub(crate) const MAX_GROUPS: usize = 256;
/// Most names in one list (a user's groups, a group's members, keys, sudo rules,
/// chpasswd entries).
pub(crate) const MAX_LIST: usize = 1024;
/// Longest path (shell, home directory).
pub(crate) const MAX_PATH: usize = 4096;
/// Longest free-text field (gecos, a sudo rule, `disable_root_opts`).
pub(crate) const MAX_TEXT: usize = 4096;
/// Longest password or hash.
pub(crate) const MAX_PASSWORD: usize = 1024;

/// Everything a cloud-config asks of the accounts engine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AccountsRequest {
    /// `groups`: created before the users, in order.
    pub groups: Vec<GroupRequest>,
    /// `users`, in order. Absent from the document means `[default]`, as the stock
    /// `cloud.cfg` of every distro says.
    pub users: Vec<UserEntry>,
    /// `user`: settings of the distro's default user (its name, groups, ...) that win over
    /// the distro's, and `default` added to `users` (see `resolve.rs`).
    pub user: Option<Box<UserRequest>>,
    /// `chpasswd`.
    pub chpasswd: Option<Chpasswd>,
    /// Top-level `password`: the default user's password when `chpasswd` lists nobody.
    pub password: Option<Secret>,
    /// Top-level `ssh_authorized_keys`: for the default user, and root (see
    /// [`AccountsRequest::disable_root`]).
    pub ssh_authorized_keys: Vec<SshKey>,
    /// `ssh_pwauth`: sshd's `PasswordAuthentication`; `None` leaves it as it is.
    pub ssh_pwauth: Option<bool>,
    /// `disable_root` (default true): root's copy of the top-level keys is prefixed with
    /// [`AccountsRequest::disable_root_opts`], which makes a login print a hint and exit.
    pub disable_root: bool,
    /// `disable_root_opts`; `None` is cloud-init's default ([`DISABLE_ROOT_OPTS`]).
    pub disable_root_opts: Option<KeyOptions>,
    /// Keys inside these modules that vmcust does not implement (`users[0].ssh_import_id`)
    /// or that nobody knows (a typo): never silently dropped, the customization ends
    /// degraded naming them.
    pub unsupported: Vec<UnsupportedKey>,
}

/// A key inside an accounts module that vmcust does not act on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnsupportedKey {
    /// Its path, such as `users[0].ssh_import_id`.
    pub path: String,
    /// cloud-init knows it (a feature vmcust lacks) rather than nobody (a typo).
    pub cloud_init_knows: bool,
    /// The key probably meant, for a typo.
    pub did_you_mean: Option<String>,
}

impl Default for AccountsRequest {
    fn default() -> Self {
        AccountsRequest {
            groups: Vec::new(),
            users: vec![UserEntry::Default],
            user: None,
            chpasswd: None,
            password: None,
            ssh_authorized_keys: Vec::new(),
            ssh_pwauth: None,
            disable_root: true,
            disable_root_opts: None,
            unsupported: Vec::new(),
        }
    }
}

/// cloud-init's `disable_root_opts` default (`ssh_util.DISABLE_USER_OPTS`); `$USER` is the
/// default user, `$DISABLE_USER` root.
pub(crate) const DISABLE_ROOT_OPTS: &str = "no-port-forwarding,no-agent-forwarding,\
no-X11-forwarding,command=\"echo 'Please login as the user \\\"$USER\\\" rather than \
the user \\\"$DISABLE_USER\\\".';echo;sleep 10;exit 142\"";

/// One entry of `users`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum UserEntry {
    /// `default`: the distro's default user of the root (see `distro.rs`).
    Default,
    /// A user described in full.
    User(Box<UserRequest>),
}

/// A user to create, or (when it exists) to give a password, lock, sudo rules and keys.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UserRequest {
    /// Login name.
    pub name: UserName,
    /// `gecos`: the comment field.
    pub gecos: Option<Gecos>,
    /// `groups`: supplementary groups (created if missing and `create_groups`).
    pub groups: Vec<GroupName>,
    /// `primary_group`: an existing (or created) group instead of the user's own.
    pub primary_group: Option<GroupName>,
    /// `no_user_group`: no group of the user's own name.
    pub no_user_group: bool,
    /// `sudo`: rules for the drop-in, each after the user's name; empty for none.
    pub sudo: Vec<SudoRule>,
    /// `shell`; `None` is the root's `/etc/default/useradd` SHELL.
    pub shell: Option<AbsPath>,
    /// `homedir`; `None` is HOME (`/home`) of `/etc/default/useradd` and the name.
    pub homedir: Option<AbsPath>,
    /// `no_create_home`.
    pub no_create_home: bool,
    /// `system`: a system account (uid below UID_MIN, no home made).
    pub system: bool,
    /// `uid`.
    pub uid: Option<u32>,
    /// `lock_passwd` (default true): `!` before the hash, as `passwd -l`.
    pub lock_passwd: bool,
    /// `passwd`: a hash, used only when the user is created (as cloud-init).
    pub passwd: Option<PasswordHash>,
    /// `hashed_passwd`: a hash, set for new and existing users.
    pub hashed_passwd: Option<PasswordHash>,
    /// `plain_text_passwd`: hashed here (SHA-512 crypt), for new and existing users.
    pub plain_text_passwd: Option<Secret>,
    /// `expiredate`: shadow's expiry, in days since 1970-01-01.
    pub expiredate: Option<Days>,
    /// `ssh_authorized_keys`.
    pub ssh_authorized_keys: Vec<SshKey>,
    /// `create_groups` (default true): missing `groups` are created.
    pub create_groups: bool,
    /// The keys the document (or the distro's default) gave, in order: cloud-init merges
    /// the entries of one user key by key, the first giver of a key winning.
    #[serde(skip)]
    pub given: Vec<&'static str>,
}

impl UserRequest {
    /// A request for `name` with cloud-init's defaults for every other key.
    pub fn named(name: UserName) -> UserRequest {
        UserRequest {
            name,
            gecos: None,
            groups: Vec::new(),
            primary_group: None,
            no_user_group: false,
            sudo: Vec::new(),
            shell: None,
            homedir: None,
            no_create_home: false,
            system: false,
            uid: None,
            lock_passwd: true,
            passwd: None,
            hashed_passwd: None,
            plain_text_passwd: None,
            expiredate: None,
            ssh_authorized_keys: Vec::new(),
            create_groups: true,
            given: Vec::new(),
        }
    }
}

/// One entry of `groups`: a group and the existing users to add to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GroupRequest {
    /// The group.
    pub name: GroupName,
    /// Users to add (those not in the root when groups are made are left out, as
    /// cloud-init leaves them out with a warning).
    pub members: Vec<UserName>,
}

/// `chpasswd`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Chpasswd {
    /// The users whose password changes, in order (`users:` entries, then `list:`).
    pub entries: Vec<ChpasswdEntry>,
    /// `expire` (default true): each changed user must change it at the next login.
    pub expire: bool,
}

/// One password change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChpasswdEntry {
    /// Whose.
    pub user: UserName,
    /// The new password.
    pub password: NewPassword,
}

/// A new password as `chpasswd` is given one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NewPassword {
    /// Clear text, hashed here.
    Text(Secret),
    /// A crypt hash, written as it is.
    Hash(PasswordHash),
    /// `RANDOM`/`R`: a random 20-character password, written for root alone to read
    /// (never to a log).
    Random,
}

/// The cloud-init regex for a hash in `chpasswd.list`: `$1$`, `$2a$`, `$2y$`, `$5$`, `$6$`
/// with at least two more `$`-separated parts.
pub(crate) fn looks_hashed(p: &str) -> bool {
    let Some(rest) = p.strip_prefix('$') else {
        return false;
    };
    let Some((id, rest)) = rest.split_once('$') else {
        return false;
    };
    // `(\$.+){2}`: at least one more `$` after a non-empty part.
    matches!(id, "1" | "2a" | "2y" | "5" | "6")
        && rest.len() >= 3
        && rest[1..rest.len() - 1].contains('$')
        && !p.contains(':')
}

/// A value for the `:`-separated account files: no `:`, no control character.
fn field_safe(s: &str, what: &str, max: usize) -> Result<(), String> {
    if s.len() > max {
        return Err(format!("{what} is {} bytes long; at most {max}", s.len()));
    }
    if let Some(c) = s.chars().find(|c| c.is_control()) {
        return Err(format!(
            "{what} {} holds the control character {c:?}, which would break the account files; remove it",
            quote(s)
        ));
    }
    if s.contains(':') {
        return Err(format!(
            "{what} {} holds ':', the field separator of /etc/passwd; remove it",
            quote(s)
        ));
    }
    Ok(())
}

use crate::model::string_value as text_type;

text_type!(
    /// A group name, with `useradd`'s rules for names.
    GroupName
);

impl GroupName {
    /// Validates a group name.
    pub fn parse(s: &str) -> Result<Self, String> {
        UserName::parse(s)
            .map(|u| GroupName(u.as_str().to_owned()))
            .map_err(|_| {
                format!(
                    "invalid group name {}; use letters, digits, '_', '-' or '.' starting \
                     with a letter or '_' (at most 32 characters)",
                    quote(s)
                )
            })
    }
}

text_type!(
    /// The gecos (comment) field: free text without `:` or control characters.
    Gecos
);

impl Gecos {
    /// Validates a gecos.
    pub fn parse(s: &str) -> Result<Self, String> {
        field_safe(s, "gecos", MAX_TEXT)?;
        Ok(Gecos(s.to_owned()))
    }
}

text_type!(
    /// An absolute path for a shell or a home directory: starts with `/`, no `..`
    /// component, no `:` and no control character.
    AbsPath
);

impl AbsPath {
    /// Validates a path; `what` names it in the message (`shell`, `homedir`).
    pub fn parse(s: &str, what: &str) -> Result<Self, String> {
        field_safe(s, what, MAX_PATH)?;
        if !s.starts_with('/') {
            return Err(format!(
                "{what} {} is not an absolute path; write it from /, such as /bin/bash",
                quote(s)
            ));
        }
        if s.split('/').any(|c| c == "..") {
            return Err(format!("{what} {} has a .. component", quote(s)));
        }
        Ok(AbsPath(s.to_owned()))
    }
}

text_type!(
    /// One sudoers rule, written after the user's name (`ALL=(ALL) NOPASSWD:ALL`): one line,
    /// checked by the root's `visudo` before it is installed.
    SudoRule
);

impl SudoRule {
    /// Validates a rule.
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s.is_empty() {
            return Err("empty sudo rule; write one such as ALL=(ALL) NOPASSWD:ALL".into());
        }
        if s.len() > MAX_TEXT {
            return Err(format!(
                "sudo rule of {} bytes; at most {MAX_TEXT}",
                s.len()
            ));
        }
        if let Some(c) = s.chars().find(|c| c.is_control()) {
            return Err(format!(
                "sudo rule {} holds the control character {c:?}; one rule is one line",
                quote(s)
            ));
        }
        // A trailing backslash would join the next line of the drop-in to this rule.
        if s.ends_with('\\') {
            return Err(format!(
                "sudo rule {} ends with a backslash (a line continuation)",
                quote(s)
            ));
        }
        Ok(SudoRule(s.to_owned()))
    }
}

text_type!(
    /// `authorized_keys` options put before root's keys (`disable_root_opts`): one line.
    KeyOptions
);

impl KeyOptions {
    /// Validates the options (the whole key line is checked again when it is made).
    pub fn parse(s: &str) -> Result<Self, String> {
        if s.len() > MAX_TEXT {
            return Err(format!(
                "disable_root_opts is {} bytes; at most {MAX_TEXT}",
                s.len()
            ));
        }
        if let Some(c) = s.chars().find(|c| c.is_control()) {
            return Err(format!(
                "disable_root_opts holds the control character {c:?}; it is one line"
            ));
        }
        Ok(KeyOptions(s.trim().to_owned()))
    }
}

/// A crypt hash for shadow's password field (or `!`/`*` forms): printable ASCII without
/// `:`. A secret: never shown.
#[derive(Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct PasswordHash(Secret);

impl PasswordHash {
    /// Validates a hash; the message never quotes it.
    pub fn parse(s: String) -> Result<Self, String> {
        let secret = Secret::new(s);
        let s = secret.expose();
        if s.len() > MAX_PASSWORD {
            return Err(format!(
                "password hash of {} bytes; at most {MAX_PASSWORD}",
                s.len()
            ));
        }
        if !s.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(
                "password hash holds a blank, a control or a non-ASCII character; a crypt \
                 hash is printable ASCII (such as the output of mkpasswd -m sha-512)"
                    .into(),
            );
        }
        if s.contains(':') {
            return Err("password hash holds ':', which would break /etc/shadow".into());
        }
        Ok(PasswordHash(secret))
    }

    /// The hash, for the shadow writer.
    pub fn expose(&self) -> &str {
        self.0.expose()
    }
}

impl fmt::Debug for PasswordHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

/// Validates a clear-text password (it is hashed, so only its size and NUL/newline matter:
/// `chpasswd` would cut it there).
pub(crate) fn plain_password(s: String) -> Result<Secret, String> {
    let secret = Secret::new(s);
    let p = secret.expose();
    if p.len() > MAX_PASSWORD {
        return Err(format!(
            "password of {} bytes; at most {MAX_PASSWORD}",
            p.len()
        ));
    }
    if p.contains(['\n', '\r', '\0']) {
        return Err("password holds a newline or NUL character; remove it".into());
    }
    Ok(secret)
}

/// A date as shadow stores it: whole days since 1970-01-01.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct Days(pub u32);

impl Days {
    /// Parses `YYYY-MM-DD` (what `useradd --expiredate` takes), 1970-01-01 or later.
    pub fn parse(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "expiredate {} is not a date; write it as YYYY-MM-DD, such as 2030-12-31",
                quote(s)
            )
        };
        let mut parts = s.trim().splitn(3, '-');
        let (Some(y), Some(m), Some(d)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(bad());
        };
        let num = |p: &str, len: usize| {
            (p.len() == len && p.bytes().all(|b| b.is_ascii_digit()))
                .then(|| p.parse::<i64>().ok())
                .flatten()
        };
        let (Some(y), Some(m), Some(d)) = (num(y, 4), num(m, 2), num(d, 2)) else {
            return Err(bad());
        };
        let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        let month_days = [
            31,
            if leap { 29 } else { 28 },
            31,
            30,
            31,
            30,
            31,
            31,
            30,
            31,
            30,
            31,
        ];
        if !(1..=12).contains(&m) || d < 1 || d > month_days[(m - 1) as usize] || y < 1970 {
            return Err(bad());
        }
        Ok(Days(days_from_civil(y, m, d) as u32))
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_must_be_absolute_and_safe() {
        let table: &[(&str, bool)] = &[
            ("/bin/bash", true),
            ("/home/a b", true),
            ("bin/bash", false),
            ("", false),
            ("/bin/ba:sh", false),
            ("/bin/bash\n", false),
            ("/bin/\0", false),
            ("/home/../etc", false),
            ("/home/..x", true),
        ];
        for (s, ok) in table {
            assert_eq!(AbsPath::parse(s, "shell").is_ok(), *ok, "{s:?}");
        }
        assert!(AbsPath::parse(&format!("/{}", "a".repeat(MAX_PATH)), "homedir").is_err());
    }

    #[test]
    fn gecos_keeps_commas_refuses_separators() {
        let table: &[(&str, bool)] = &[
            ("Alice Liddell,Room 1,,", true),
            ("", true),
            ("a:b", false),
            ("a\nb", false),
            ("a\tb", false),
        ];
        for (s, ok) in table {
            assert_eq!(Gecos::parse(s).is_ok(), *ok, "{s:?}");
        }
    }

    #[test]
    fn group_names_follow_useradd() {
        for (s, ok) in [
            ("sudo", true),
            ("_x", true),
            ("web-admins", true),
            ("1abc", false),
            ("a:b", false),
            ("a b", false),
            ("", false),
        ] {
            assert_eq!(GroupName::parse(s).is_ok(), ok, "{s:?}");
        }
        assert!(GroupName::parse(&"g".repeat(33)).is_err());
    }

    #[test]
    fn sudo_rules_are_one_line() {
        for (s, ok) in [
            ("ALL=(ALL) NOPASSWD:ALL", true),
            ("  ALL=(ALL) ALL  ", true),
            ("", false),
            ("ALL=(ALL) ALL\nroot ALL=(ALL) ALL", false),
            ("ALL=(ALL) ALL\\", false),
        ] {
            assert_eq!(SudoRule::parse(s).is_ok(), ok, "{s:?}");
        }
        assert_eq!(SudoRule::parse(" ALL ").unwrap().as_str(), "ALL");
    }

    #[test]
    fn hashes_are_checked_and_never_shown() {
        for (s, ok) in [
            ("$6$salt$hash", true),
            ("!", true),
            ("*", true),
            ("", true),
            ("$6$sa:lt$hash", false),
            ("$6$salt$ha sh", false),
            ("$6$salt$h\nash", false),
            ("$6$salté$hash", false),
        ] {
            let r = PasswordHash::parse(s.to_string());
            assert_eq!(r.is_ok(), ok, "{s:?}");
            if let Err(e) = r {
                assert!(!e.contains("salt"), "{e}");
            }
        }
        let h = PasswordHash::parse("$6$salt$hash".into()).unwrap();
        assert!(!format!("{h:?}").contains("salt"));
        assert!(!serde_json::to_string(&h).unwrap().contains("salt"));
        assert!(plain_password("a\nb".into()).is_err());
        assert!(plain_password("pa:ss word".into()).is_ok());
        assert!(plain_password("x".repeat(MAX_PASSWORD + 1)).is_err());
    }

    #[test]
    fn cloud_init_hash_detection() {
        for (s, hashed) in [
            ("$6$rounds=4096$salt$hash", true),
            ("$6$salt$hash", true),
            ("$1$a$b", true),
            ("$2y$10$abc", true),
            ("$y$j9T$salt$hash", false),
            ("$6$salt", false),
            ("$6$$", false),
            ("plain", false),
            ("$6$a$b:c", false),
        ] {
            assert_eq!(looks_hashed(s), hashed, "{s:?}");
        }
    }

    #[test]
    fn expiry_dates_in_days() {
        assert_eq!(Days::parse("1970-01-01"), Ok(Days(0)));
        assert_eq!(Days::parse("2030-01-02"), Ok(Days(21_916)));
        assert_eq!(Days::parse("2024-02-29"), Ok(Days(19_782)));
        for bad in [
            "2023-02-29",
            "2030-13-01",
            "2030-1-1",
            "1969-12-31",
            "tomorrow",
            "2030-01-01x",
        ] {
            assert!(Days::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn key_options_are_one_line() {
        assert!(KeyOptions::parse(DISABLE_ROOT_OPTS).is_ok());
        assert!(KeyOptions::parse("no-pty\ncommand=\"x\"").is_err());
    }
}
