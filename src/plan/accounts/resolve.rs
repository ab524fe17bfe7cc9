//! Who `users:` and `user:` make, resolved as cloud-init's `normalize_users_groups` does:
//! `user:` is merged over the distro's default user (its keys win, whole keys: its
//! `groups` replace the distro's) and adds `default` to `users`; entries naming the same
//! user are merged into the first one's place (the earlier entry's keys win); the
//! `default` entry becomes the default user, merged from the distro's settings (winning),
//! the `default` entry's own keys and an entry with the default user's name, with the
//! sorted union of that entry's and the default's groups, and moved last.

use super::request::{AccountsRequest, GroupName, UserEntry, UserRequest};
use crate::model::UserName;

/// The users to make, in order, and which of them is the default user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resolved {
    /// The users, the default user (if any) last.
    pub users: Vec<UserRequest>,
    /// The default user's name, when `users` holds `default` (or `user:` is given).
    pub default: Option<UserName>,
}

/// Copies `key` of `from` into `to`.
fn copy_key(to: &mut UserRequest, from: &UserRequest, key: &str) {
    match key {
        "name" => to.name = from.name.clone(),
        "gecos" => to.gecos = from.gecos.clone(),
        "groups" => to.groups = from.groups.clone(),
        "primary_group" => to.primary_group = from.primary_group.clone(),
        "no_user_group" => to.no_user_group = from.no_user_group,
        "sudo" => to.sudo = from.sudo.clone(),
        "shell" => to.shell = from.shell.clone(),
        "homedir" => to.homedir = from.homedir.clone(),
        "no_create_home" => to.no_create_home = from.no_create_home,
        "system" => to.system = from.system,
        "uid" => to.uid = from.uid,
        "lock_passwd" => to.lock_passwd = from.lock_passwd,
        "passwd" => to.passwd = from.passwd.clone(),
        "hashed_passwd" => to.hashed_passwd = from.hashed_passwd.clone(),
        "plain_text_passwd" => to.plain_text_passwd = from.plain_text_passwd.clone(),
        "expiredate" => to.expiredate = from.expiredate,
        "ssh_authorized_keys" => to.ssh_authorized_keys = from.ssh_authorized_keys.clone(),
        "create_groups" => to.create_groups = from.create_groups,
        _ => {}
    }
}

/// cloud-init's `mergemanydict([first, second])` for one user: every key `first` gave is
/// kept, the keys only `second` gave are taken from it.
pub(crate) fn merge(first: &UserRequest, second: &UserRequest) -> UserRequest {
    let mut out = first.clone();
    for key in &second.given {
        if !out.given.contains(key) {
            copy_key(&mut out, second, key);
            out.given.push(key);
        }
    }
    out
}

/// An entry with no settings.
fn empty(name: UserName) -> UserRequest {
    UserRequest::named(name)
}

/// Resolves `req`'s users with `distro` as the root's default user.
pub(crate) fn resolve(req: &AccountsRequest, distro: UserRequest) -> Resolved {
    let default_cfg = match &req.user {
        Some(u) => merge(u, &distro),
        None => distro,
    };
    let default_key = UserName::parse("default").expect("a valid built-in name");
    // Entries by name, in first-seen order; `default` under its own key.
    let mut by_name: Vec<UserRequest> = Vec::new();
    let added_default = req.user.as_ref().map(|_| UserEntry::Default);
    for entry in req.users.iter().chain(added_default.iter()) {
        let this = match entry {
            UserEntry::Default => empty(default_key.clone()),
            UserEntry::User(u) => (**u).clone(),
        };
        match by_name.iter_mut().find(|u| u.name == this.name) {
            Some(prev) => *prev = merge(prev, &this),
            None => by_name.push(this),
        }
    }
    let Some(at) = by_name.iter().position(|u| u.name == default_key) else {
        return Resolved {
            users: by_name,
            default: None,
        };
    };
    let def_entry = by_name.remove(at);
    let name = default_cfg.name.clone();
    let mut parsed = match by_name.iter().position(|u| u.name == name) {
        Some(i) => by_name.remove(i),
        None => empty(name.clone()),
    };
    let mut groups: Vec<GroupName> = parsed
        .groups
        .iter()
        .chain(default_cfg.groups.iter())
        .cloned()
        .collect();
    groups.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    groups.dedup();
    parsed.groups = groups;
    if !parsed.given.contains(&"groups") {
        parsed.given.push("groups");
    }
    // The distro's (and `user:`'s) settings without name and groups come first.
    let mut base = default_cfg;
    base.given.retain(|k| !matches!(*k, "name" | "groups"));
    base.groups = Vec::new();
    let mut user = merge(&merge(&base, &def_entry), &parsed);
    user.name = name.clone();
    by_name.push(user);
    Resolved {
        users: by_name,
        default: Some(name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::accounts::distro::default_user;
    use crate::plan::accounts::parse::parse_accounts;

    fn resolved(yaml: &str) -> Resolved {
        let serde_norway::Value::Mapping(m) = serde_norway::from_str(yaml).unwrap() else {
            panic!("not a mapping")
        };
        let req = parse_accounts("user-data", &m).unwrap();
        resolve(&req, default_user(Some("ID=debian\n")))
    }

    /// A user as one line: name, groups, shell, lock, sudo rules, and `*` for the default.
    fn show(r: &Resolved) -> Vec<String> {
        r.users
            .iter()
            .map(|u| {
                let groups: Vec<&str> = u.groups.iter().map(|g| g.as_str()).collect();
                format!(
                    "{}{} [{}] {} lock={} sudo={}",
                    u.name,
                    if r.default.as_ref() == Some(&u.name) {
                        "*"
                    } else {
                        ""
                    },
                    groups.join(","),
                    u.shell.as_ref().map_or("-", |s| s.as_str()),
                    u.lock_passwd,
                    u.sudo.len()
                )
            })
            .collect()
    }

    const DEB: &str = "adm,audio,cdrom,dialout,dip,floppy,netdev,plugdev,sudo,video";

    #[test]
    fn user_and_users_resolve_as_cloud_init() {
        let table: &[(&str, &[&str])] = &[
            // No users key: the stock cloud.cfg's [default].
            ("{}", &["debian* [DEB] /bin/bash lock=true sudo=1"]),
            ("users: []", &[]),
            // users without default: the distro's default user is not made.
            ("users: [bob]", &["bob [] - lock=true sudo=0"]),
            // The default user is moved last.
            (
                "users: [default, bob]",
                &[
                    "bob [] - lock=true sudo=0",
                    "debian* [DEB] /bin/bash lock=true sudo=1",
                ],
            ),
            // user: renames the default user, keeping the distro's other settings.
            ("user: admin", &["admin* [DEB] /bin/bash lock=true sudo=1"]),
            (
                "user: {name: admin}",
                &["admin* [DEB] /bin/bash lock=true sudo=1"],
            ),
            // Its groups replace the distro's; its shell wins.
            (
                "user: {name: admin, groups: [wheel], shell: /bin/zsh}",
                &["admin* [wheel] /bin/zsh lock=true sudo=1"],
            ),
            // Without a name it configures the distro's user.
            (
                "user: {lock_passwd: false}",
                &["debian* [DEB] /bin/bash lock=false sudo=1"],
            ),
            // user: adds default to a users list without it.
            (
                "user: {name: admin}\nusers: [{name: bob}]",
                &[
                    "bob [] - lock=true sudo=0",
                    "admin* [DEB] /bin/bash lock=true sudo=1",
                ],
            ),
            // An entry with the default user's name merges: groups the sorted union,
            // the distro's settings winning over the entry's.
            (
                "user: admin\nusers: [default, {name: admin, groups: [docker, adm], shell: /bin/zsh}]",
                &["admin* [adm,audio,cdrom,dialout,dip,docker,floppy,netdev,plugdev,sudo,video] /bin/bash lock=true sudo=1"],
            ),
            // Two entries of one user: the first one's keys win, the place is the first's.
            (
                "users: [{name: bob, shell: /bin/sh}, carol, {name: bob, shell: /bin/zsh, groups: [adm]}]",
                &["bob [adm] /bin/sh lock=true sudo=0", "carol [] - lock=true sudo=0"],
            ),
            // An empty user: is no setting.
            ("user: ''\nusers: [bob]", &["bob [] - lock=true sudo=0"]),
        ];
        for (yaml, want) in table {
            let want: Vec<String> = want.iter().map(|w| w.replace("DEB", DEB)).collect();
            assert_eq!(show(&resolved(yaml)), want, "{yaml}");
        }
    }
}
