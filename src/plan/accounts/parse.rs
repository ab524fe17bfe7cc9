//! The accounts keys of a cloud-config document, from its parsed YAML
//! (`serde_norway::Value`, what the repo's readers use) into an [`AccountsRequest`].
//! Errors name the key path (`users[1].shell`); a secret's value is never quoted.
//! The document reader calls [`parse_accounts`] with the top-level mapping.

use serde_norway::{Mapping, Value};

use super::request::*;
use crate::model::{InvalidValue, SshKey, UserName};

/// Keys of a `chpasswd.users` entry.
const CHPASSWD_USER_KEYS: &[&str] = &["name", "type", "password"];

/// Keys of a `users` entry vmcust reads.
const USER_KEYS: &[&str] = &[
    "name",
    "gecos",
    "groups",
    "primary_group",
    "no_user_group",
    "sudo",
    "shell",
    "homedir",
    "no_create_home",
    "system",
    "uid",
    "lock_passwd",
    "passwd",
    "hashed_passwd",
    "plain_text_passwd",
    "expiredate",
    "ssh_authorized_keys",
    "create_groups",
];

/// Keys of a `users` entry cloud-init knows and vmcust does not do: reported, not dropped.
const USER_UNSUPPORTED: &[&str] = &[
    "doas",
    "inactive",
    "no_log_init",
    "selinux_user",
    "snapuser",
    "ssh_import_id",
    "ssh_redirect_user",
    "lock-passwd",
];

struct Ctx<'a> {
    source: &'a str,
    errors: Vec<InvalidValue>,
}

impl Ctx<'_> {
    fn err(&mut self, place: &str, reason: impl Into<String>) {
        self.errors.push(InvalidValue::new(
            format!("{}: {place}", self.source),
            reason,
        ));
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a mapping",
        Value::Tagged(_) => "a tagged value",
    }
}

/// A boolean as cloud-init's `util.is_true`/`is_false` read one (strings too).
fn boolean(c: &mut Ctx, place: &str, v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" | "1" => Some(true),
            "false" | "no" | "off" | "0" => Some(false),
            _ => {
                c.err(
                    place,
                    format!("{} is not true or false", crate::model::quote(s)),
                );
                None
            }
        },
        other => {
            c.err(
                place,
                format!("expected true or false, found {}", type_name(other)),
            );
            None
        }
    }
}

fn string<'v>(c: &mut Ctx, place: &str, v: &'v Value) -> Option<&'v str> {
    match v {
        Value::String(s) => Some(s),
        other => {
            c.err(
                place,
                format!("expected a string, found {}", type_name(other)),
            );
            None
        }
    }
}

/// A password as text: a string, or a number as cloud-init's `str()` makes it
/// (`password: 12345`). The message names the type only, never the value.
fn secret_text(c: &mut Ctx, place: &str, v: &Value) -> Option<String> {
    text_of(c, place, v, "a password")
}

/// Whether a list is over [`MAX_LIST`] (reported: nothing of it is used).
fn too_long(c: &mut Ctx, place: &str, items: &[Value]) -> bool {
    let over = items.len() > MAX_LIST;
    if over {
        c.err(
            place,
            format!("{} entries; at most {MAX_LIST}", items.len()),
        );
    }
    over
}

/// A string or a number as text (uids, names written unquoted).
fn scalar(c: &mut Ctx, place: &str, v: &Value) -> Option<String> {
    text_of(c, place, v, "a string")
}

/// A string or a number as text; anything else is an error expecting `what` (its type
/// named, never its value).
fn text_of(c: &mut Ctx, place: &str, v: &Value, what: &str) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        other => {
            c.err(
                place,
                format!("expected {what}, found {}", type_name(other)),
            );
            None
        }
    }
}

/// A list of strings, or one comma-separated string (as cloud-init takes `groups`).
fn names(c: &mut Ctx, place: &str, v: &Value) -> Vec<String> {
    match v {
        Value::Null => Vec::new(),
        Value::String(s) => s
            .split(',')
            .map(|g| g.trim().to_string())
            .filter(|g| !g.is_empty())
            .collect(),
        Value::Sequence(items) if items.len() <= MAX_LIST => items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| scalar(c, &format!("{place}[{i}]"), item))
            .map(|s| s.trim().to_string())
            .collect(),
        Value::Sequence(items) => {
            c.err(
                place,
                format!("{} entries; at most {MAX_LIST}", items.len()),
            );
            Vec::new()
        }
        other => {
            c.err(
                place,
                format!(
                    "expected a list or a comma-separated string, found {}",
                    type_name(other)
                ),
            );
            Vec::new()
        }
    }
}

fn keys(c: &mut Ctx, place: &str, v: &Value) -> Vec<SshKey> {
    let list: Vec<(String, &str)> = match v {
        Value::Null => Vec::new(),
        Value::String(s) => vec![(place.to_string(), s.as_str())],
        Value::Sequence(items) if too_long(c, place, items) => Vec::new(),
        Value::Sequence(items) => items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| {
                let p = format!("{place}[{i}]");
                string(c, &p, item).map(|s| (p, s))
            })
            .collect(),
        other => {
            c.err(
                place,
                format!("expected a list of keys, found {}", type_name(other)),
            );
            Vec::new()
        }
    };
    list.into_iter()
        .filter(|(_, k)| !SshKey::is_not_a_key(k))
        .filter_map(|(p, k)| SshKey::parse(k).map_err(|e| c.err(&p, e)).ok())
        .collect()
}

/// A `users` entry (`name_needed`) or the `user` mapping, whose name may be left to the
/// distro's default user.
fn parse_user(
    c: &mut Ctx,
    place: &str,
    m: &Mapping,
    unsupported: &mut Vec<UnsupportedKey>,
    name_needed: bool,
) -> Option<UserRequest> {
    let name = match m.get("name") {
        Some(name) => {
            let name = scalar(c, &format!("{place}.name"), name)?;
            match UserName::parse(&name) {
                Ok(n) => Some(n),
                Err(e) => {
                    c.err(&format!("{place}.name"), e);
                    return None;
                }
            }
        }
        None if name_needed => {
            c.err(place, "a user needs a name");
            return None;
        }
        None => None,
    };
    let mut u = UserRequest::named(match name {
        Some(n) => n,
        None => UserName::parse("default").expect("a valid built-in name"),
    });
    for (k, v) in m {
        let Some(key) = k.as_str() else {
            c.err(place, "a key that is not a string");
            continue;
        };
        if let Some(known) = USER_KEYS.iter().find(|k| **k == key) {
            u.given.push(known);
        }
        let p = format!("{place}.{key}");
        let text = |c: &mut Ctx| string(c, &p, v).map(str::to_string);
        match key {
            "name" => {}
            "gecos" => {
                u.gecos = text(c).and_then(|s| Gecos::parse(&s).map_err(|e| c.err(&p, e)).ok())
            }
            "groups" => {
                u.groups = names(c, &p, v)
                    .iter()
                    .filter_map(|g| GroupName::parse(g).map_err(|e| c.err(&p, e)).ok())
                    .collect()
            }
            "primary_group" => {
                u.primary_group =
                    text(c).and_then(|s| GroupName::parse(&s).map_err(|e| c.err(&p, e)).ok())
            }
            "sudo" => {
                u.sudo = match v {
                    Value::Null | Value::Bool(false) => Vec::new(),
                    Value::String(s) => SudoRule::parse(s)
                        .map_err(|e| c.err(&p, e))
                        .ok()
                        .into_iter()
                        .collect(),
                    Value::Sequence(items) if too_long(c, &p, items) => Vec::new(),
                    Value::Sequence(items) => items
                        .iter()
                        .enumerate()
                        .filter_map(|(i, r)| {
                            let pi = format!("{p}[{i}]");
                            string(c, &pi, r)
                                .and_then(|s| SudoRule::parse(s).map_err(|e| c.err(&pi, e)).ok())
                        })
                        .collect(),
                    other => {
                        c.err(
                            &p,
                            format!(
                                "expected a rule or a list of rules, found {}",
                                type_name(other)
                            ),
                        );
                        Vec::new()
                    }
                }
            }
            "shell" => {
                u.shell =
                    text(c).and_then(|s| AbsPath::parse(&s, "shell").map_err(|e| c.err(&p, e)).ok())
            }
            "homedir" => {
                u.homedir = text(c)
                    .and_then(|s| AbsPath::parse(&s, "homedir").map_err(|e| c.err(&p, e)).ok())
            }
            "no_create_home" => u.no_create_home = boolean(c, &p, v).unwrap_or(false),
            "no_user_group" => u.no_user_group = boolean(c, &p, v).unwrap_or(false),
            "system" => u.system = boolean(c, &p, v).unwrap_or(false),
            "lock_passwd" => u.lock_passwd = boolean(c, &p, v).unwrap_or(true),
            "create_groups" => u.create_groups = boolean(c, &p, v).unwrap_or(true),
            "uid" => {
                u.uid = scalar(c, &p, v).and_then(|s| match s.trim().parse::<u32>() {
                    Ok(n) if n < u32::MAX => Some(n),
                    _ => {
                        c.err(
                            &p,
                            format!(
                                "uid {} is not a number from 0 to 4294967294",
                                crate::model::quote(&s)
                            ),
                        );
                        None
                    }
                })
            }
            "passwd" | "hashed_passwd" => {
                let h = match v {
                    Value::String(s) => PasswordHash::parse(s.clone())
                        .map_err(|e| c.err(&p, e))
                        .ok(),
                    other => {
                        c.err(
                            &p,
                            format!("expected a password hash, found {}", type_name(other)),
                        );
                        None
                    }
                };
                if key == "passwd" {
                    u.passwd = h;
                } else {
                    u.hashed_passwd = h;
                }
            }
            "plain_text_passwd" => {
                u.plain_text_passwd = secret_text(c, &p, v)
                    .and_then(|s| plain_password(s).map_err(|e| c.err(&p, e)).ok())
            }
            "expiredate" => {
                u.expiredate =
                    scalar(c, &p, v).and_then(|s| Days::parse(&s).map_err(|e| c.err(&p, e)).ok())
            }
            "ssh_authorized_keys" => u.ssh_authorized_keys = keys(c, &p, v),
            k if USER_UNSUPPORTED.contains(&k) => unsupported.push(UnsupportedKey {
                path: p,
                cloud_init_knows: true,
                did_you_mean: None,
            }),
            k => unsupported.push(UnsupportedKey {
                path: p,
                cloud_init_knows: false,
                did_you_mean: vmcust_imc::closest(k, USER_KEYS.iter().copied()).map(str::to_string),
            }),
        }
    }
    Some(u)
}

fn parse_users(c: &mut Ctx, v: &Value, unsupported: &mut Vec<UnsupportedKey>) -> Vec<UserEntry> {
    let items: Vec<(String, Value)> = match v {
        Value::Null => return Vec::new(),
        // "default, bob": names.
        Value::String(s) => s
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .enumerate()
            .map(|(i, n)| (format!("users[{i}]"), Value::String(n.to_string())))
            .collect(),
        Value::Sequence(items) if items.len() <= MAX_USERS => items
            .iter()
            .enumerate()
            .map(|(i, item)| (format!("users[{i}]"), item.clone()))
            .collect(),
        Value::Sequence(items) => {
            c.err(
                "users",
                format!("{} users; at most {MAX_USERS}", items.len()),
            );
            return Vec::new();
        }
        other => {
            c.err(
                "users",
                format!("expected a list, found {}", type_name(other)),
            );
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for (place, item) in items {
        match &item {
            Value::String(s) if s == "default" => out.push(UserEntry::Default),
            Value::String(s) => match UserName::parse(s) {
                Ok(n) => out.push(UserEntry::User(Box::new(UserRequest::named(n)))),
                Err(e) => c.err(&place, e),
            },
            // A snap user (`snap create-user`): cloud-init hands it to snapd, which vmcust
            // does not drive; reported as not applied, the other users are still made.
            Value::Mapping(m) if m.get("name").is_none() && m.get("snapuser").is_some() => {
                unsupported.push(UnsupportedKey {
                    path: format!("{place}.snapuser"),
                    cloud_init_knows: true,
                    did_you_mean: None,
                })
            }
            Value::Mapping(m) => {
                if let Some(u) = parse_user(c, &place, m, unsupported, true) {
                    out.push(UserEntry::User(Box::new(u)));
                }
            }
            other => c.err(
                &place,
                format!(
                    "expected a user name or a mapping, found {}",
                    type_name(other)
                ),
            ),
        }
    }
    out
}

/// `user`: a name or a `users`-entry mapping (whose name may be left out); an empty
/// value is no setting, as cloud-init ignores a false `user`.
fn parse_default_user(
    c: &mut Ctx,
    v: &Value,
    unsupported: &mut Vec<UnsupportedKey>,
) -> Option<UserRequest> {
    match v {
        Value::Null => None,
        Value::String(s) if s.is_empty() => None,
        Value::Mapping(m) if m.is_empty() => None,
        Value::String(s) => match UserName::parse(s) {
            Ok(n) => {
                let mut u = UserRequest::named(n);
                u.given.push("name");
                Some(u)
            }
            Err(e) => {
                c.err("user", e);
                None
            }
        },
        Value::Mapping(m) => parse_user(c, "user", m, unsupported, false),
        other => {
            c.err(
                "user",
                format!(
                    "expected a user name or a mapping like a users entry, found {}",
                    type_name(other)
                ),
            );
            None
        }
    }
}

fn parse_groups(c: &mut Ctx, v: &Value) -> Vec<GroupRequest> {
    let mut out = Vec::new();
    let mut one = |c: &mut Ctx, place: String, name: &str, members: Option<&Value>| {
        let Ok(name) = GroupName::parse(name).map_err(|e| c.err(&place, e)) else {
            return;
        };
        let mut members: Vec<UserName> = members
            .map(|m| names(c, &place, m))
            .unwrap_or_default()
            .iter()
            .filter_map(|m| UserName::parse(m).map_err(|e| c.err(&place, e)).ok())
            .collect();
        // cloud-init's `uniq_merge_sorted`: a group's listed members are added sorted,
        // each once.
        members.sort_by(|a, b| a.as_str().cmp(b.as_str()));
        members.dedup_by(|a, b| a.as_str() == b.as_str());
        out.push(GroupRequest { name, members });
    };
    match v {
        Value::Null => {}
        Value::String(s) => {
            for (i, g) in s
                .split(',')
                .map(str::trim)
                .filter(|g| !g.is_empty())
                .enumerate()
            {
                one(c, format!("groups[{i}]"), g, None);
            }
        }
        Value::Mapping(m) => {
            for (k, members) in m {
                let name = k.as_str().unwrap_or("");
                one(c, format!("groups.{name}"), name, Some(members));
            }
        }
        Value::Sequence(items) if items.len() > MAX_GROUPS => c.err(
            "groups",
            format!("{} groups; at most {MAX_GROUPS}", items.len()),
        ),
        Value::Sequence(items) => {
            for (i, item) in items.iter().enumerate() {
                let place = format!("groups[{i}]");
                match item {
                    Value::String(s) => one(c, place, s, None),
                    Value::Mapping(m) => {
                        for (k, members) in m {
                            let name = k.as_str().unwrap_or("");
                            one(c, format!("{place}.{name}"), name, Some(members));
                        }
                    }
                    other => c.err(
                        &place,
                        format!(
                            "expected a group name or a mapping, found {}",
                            type_name(other)
                        ),
                    ),
                }
            }
        }
        other => c.err(
            "groups",
            format!("expected a list, found {}", type_name(other)),
        ),
    }
    out
}

fn parse_chpasswd(
    c: &mut Ctx,
    v: &Value,
    unsupported: &mut Vec<UnsupportedKey>,
) -> Option<Chpasswd> {
    let Value::Mapping(m) = v else {
        c.err(
            "chpasswd",
            format!("expected a mapping, found {}", type_name(v)),
        );
        return None;
    };
    let mut ch = Chpasswd {
        entries: Vec::new(),
        expire: true,
    };
    for (k, v) in m {
        let key = k.as_str().unwrap_or("");
        let p = format!("chpasswd.{key}");
        match key {
            "expire" => ch.expire = boolean(c, &p, v).unwrap_or(true),
            "users" => {
                let Value::Sequence(items) = v else {
                    c.err(&p, format!("expected a list, found {}", type_name(v)));
                    continue;
                };
                if too_long(c, &p, items) {
                    continue;
                }
                for (i, item) in items.iter().enumerate() {
                    let pi = format!("{p}[{i}]");
                    let Value::Mapping(e) = item else {
                        c.err(&pi, "expected a mapping with name, type and password");
                        continue;
                    };
                    // A misspelt key (`pasword:`) is named, not passed over: the user
                    // would silently get a random password.
                    for k in e.keys() {
                        let k = k.as_str().unwrap_or("");
                        if !CHPASSWD_USER_KEYS.contains(&k) {
                            unsupported.push(UnsupportedKey {
                                path: format!("{pi}.{k}"),
                                cloud_init_knows: false,
                                did_you_mean: vmcust_imc::closest(
                                    k,
                                    CHPASSWD_USER_KEYS.iter().copied(),
                                )
                                .map(str::to_string),
                            });
                        }
                    }
                    let Some(user) = e
                        .get("name")
                        .and_then(|n| scalar(c, &format!("{pi}.name"), n))
                        .and_then(|n| {
                            UserName::parse(&n)
                                .map_err(|er| c.err(&format!("{pi}.name"), er))
                                .ok()
                        })
                    else {
                        if e.get("name").is_none() {
                            c.err(&pi, "an entry needs a name");
                        }
                        continue;
                    };
                    let kind = e.get("type").and_then(Value::as_str).unwrap_or("hash");
                    let pw = match e.get("password") {
                        None | Some(Value::Null) => None,
                        Some(v) => match secret_text(c, &format!("{pi}.password"), v) {
                            Some(p) => Some(p),
                            None => continue,
                        },
                    };
                    let password = match (kind, pw) {
                        ("RANDOM", _) => Some(NewPassword::Random),
                        ("text", Some(p)) => plain_password(p)
                            .map(NewPassword::Text)
                            .map_err(|er| c.err(&pi, er))
                            .ok(),
                        ("hash", Some(p)) => PasswordHash::parse(p)
                            .map(NewPassword::Hash)
                            .map_err(|er| c.err(&pi, er))
                            .ok(),
                        // cloud-init's default password is RANDOM.
                        ("text" | "hash", None) => Some(NewPassword::Random),
                        (other, _) => {
                            c.err(
                                &format!("{pi}.type"),
                                format!(
                                    "{} is not text, hash or RANDOM",
                                    crate::model::quote(other)
                                ),
                            );
                            None
                        }
                    };
                    if let Some(password) = password {
                        ch.entries.push(ChpasswdEntry { user, password });
                    }
                }
            }
            "list" => {
                let lines: Vec<(String, String)> = match v {
                    Value::String(s) if s.lines().count() > MAX_LIST => {
                        c.err(
                            &p,
                            format!("{} lines; at most {MAX_LIST}", s.lines().count()),
                        );
                        Vec::new()
                    }
                    Value::String(s) => s
                        .lines()
                        .enumerate()
                        .map(|(i, l)| (format!("{p} line {}", i + 1), l.to_string()))
                        .collect(),
                    Value::Sequence(items) if too_long(c, &p, items) => Vec::new(),
                    Value::Sequence(items) => items
                        .iter()
                        .enumerate()
                        .filter_map(|(i, l)| {
                            let pi = format!("{p}[{i}]");
                            string(c, &pi, l).map(|s| (pi, s.to_string()))
                        })
                        .collect(),
                    other => {
                        c.err(&p, format!("expected a list, found {}", type_name(other)));
                        Vec::new()
                    }
                };
                for (place, line) in lines.into_iter().filter(|(_, l)| !l.trim().is_empty()) {
                    let Some((user, pw)) = line.split_once(':') else {
                        c.err(&place, "expected user:password");
                        continue;
                    };
                    let Ok(user) = UserName::parse(user).map_err(|e| c.err(&place, e)) else {
                        continue;
                    };
                    let password = if looks_hashed(pw) {
                        PasswordHash::parse(pw.to_string()).map(NewPassword::Hash)
                    } else if pw == "R" || pw == "RANDOM" {
                        Ok(NewPassword::Random)
                    } else {
                        plain_password(pw.to_string()).map(NewPassword::Text)
                    };
                    match password {
                        Ok(password) => ch.entries.push(ChpasswdEntry { user, password }),
                        Err(e) => c.err(&place, e),
                    }
                }
            }
            other => unsupported.push(UnsupportedKey {
                path: p,
                cloud_init_knows: false,
                did_you_mean: vmcust_imc::closest(other, ["expire", "users", "list"])
                    .map(str::to_string),
            }),
        }
    }
    Some(ch)
}

/// Reads the accounts keys of `doc` (a cloud-config's top-level mapping); `source` names
/// the document in messages (`user-data`). Every problem is reported, not only the first.
pub fn parse_accounts(source: &str, doc: &Mapping) -> Result<AccountsRequest, Vec<InvalidValue>> {
    let (req, errors) = parse_accounts_all(source, doc);
    if errors.is_empty() {
        Ok(req)
    } else {
        Err(errors)
    }
}

/// [`parse_accounts`] that also gives back what it read when there were errors (the
/// document reader reports the unsupported keys of a document that has errors too).
pub(crate) fn parse_accounts_all(
    source: &str,
    doc: &Mapping,
) -> (AccountsRequest, Vec<InvalidValue>) {
    let mut c = Ctx {
        source,
        errors: Vec::new(),
    };
    let mut req = AccountsRequest::default();
    let mut unsupported = Vec::new();
    if let Some(v) = doc.get("groups") {
        req.groups = parse_groups(&mut c, v);
    }
    if let Some(v) = doc.get("users") {
        req.users = parse_users(&mut c, v, &mut unsupported);
    }
    if let Some(v) = doc.get("user") {
        req.user = parse_default_user(&mut c, v, &mut unsupported).map(Box::new);
    }
    if let Some(v) = doc.get("chpasswd") {
        req.chpasswd = parse_chpasswd(&mut c, v, &mut unsupported);
    }
    if let Some(v) = doc.get("password") {
        req.password = secret_text(&mut c, "password", v)
            .and_then(|s| plain_password(s).map_err(|e| c.err("password", e)).ok());
    }
    if let Some(v) = doc.get("ssh_authorized_keys") {
        req.ssh_authorized_keys = keys(&mut c, "ssh_authorized_keys", v);
    }
    if let Some(v) = doc.get("ssh_pwauth") {
        req.ssh_pwauth = match v {
            Value::Null => None,
            Value::String(s) if s.eq_ignore_ascii_case("unchanged") => None,
            v => boolean(&mut c, "ssh_pwauth", v),
        };
    }
    if let Some(v) = doc.get("disable_root") {
        req.disable_root = boolean(&mut c, "disable_root", v).unwrap_or(true);
    }
    if let Some(v) = doc.get("disable_root_opts") {
        req.disable_root_opts = string(&mut c, "disable_root_opts", v).and_then(|s| {
            KeyOptions::parse(s)
                .map_err(|e| c.err("disable_root_opts", e))
                .ok()
        });
    }
    req.unsupported = unsupported;
    (req, c.errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(yaml: &str) -> Mapping {
        match serde_norway::from_str::<Value>(yaml).unwrap() {
            Value::Mapping(m) => m,
            _ => panic!("not a mapping"),
        }
    }

    fn errors(yaml: &str) -> Vec<String> {
        parse_accounts("user-data", &doc(yaml))
            .err()
            .unwrap_or_default()
            .iter()
            .map(|e| e.to_string())
            .collect()
    }

    const KEY: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKwQShPXkfntT8srVCK4T0fXZM7NCXBG7X+sOMK3icWI t";

    #[test]
    fn the_documented_shapes_parse() {
        let yaml = format!(
            "groups:\n  - admingroup: [root, sys]\n  - cloud-users\nusers:\n  - default\n  - name: foobar\n    gecos: Foo B. Bar\n    primary_group: foobar\n    groups: users, admin\n    expiredate: '2032-09-01'\n    lock_passwd: false\n    passwd: $6$j212wezy$7H/1LT4f9/N3wpgNunhsIqtMj62OKiS3nyNwuizouQc3u7MbYCarYeAHWYPYb2FT.lbioDm2RrkJPb9BZMN1O/\n  - name: barfoo\n    sudo: ALL=(ALL) NOPASSWD:ALL\n    ssh_authorized_keys:\n      - {KEY}\n    uid: 1500\n  - name: cloudy\n    system: true\n    ssh_import_id: [lp:x]\nchpasswd:\n  expire: false\n  users:\n    - {{name: user1, password: password1, type: text}}\n    - {{name: user2, type: RANDOM}}\n    - {{name: user3, password: $6$a$b}}\n  list:\n    - user4:R\n    - user5:$6$x$y\nssh_pwauth: true\ndisable_root: false\n"
        );
        let r = parse_accounts("user-data", &doc(&yaml)).unwrap();
        assert_eq!(r.groups.len(), 2);
        assert_eq!(r.groups[0].members.len(), 2);
        assert_eq!(r.users.len(), 4);
        assert_eq!(r.users[0], UserEntry::Default);
        let UserEntry::User(foobar) = &r.users[1] else {
            panic!()
        };
        assert_eq!(foobar.groups.len(), 2);
        assert!(!foobar.lock_passwd);
        assert_eq!(foobar.expiredate, Some(Days(22_889)));
        assert_eq!(
            r.unsupported,
            vec![UnsupportedKey {
                path: "users[3].ssh_import_id".into(),
                cloud_init_knows: true,
                did_you_mean: None,
            }]
        );
        let ch = r.chpasswd.unwrap();
        assert!(!ch.expire);
        let kinds: Vec<&str> = ch
            .entries
            .iter()
            .map(|e| match e.password {
                NewPassword::Text(_) => "text",
                NewPassword::Hash(_) => "hash",
                NewPassword::Random => "random",
            })
            .collect();
        assert_eq!(kinds, ["text", "random", "hash", "random", "hash"]);
        assert_eq!(r.ssh_pwauth, Some(true));
        assert!(!r.disable_root);
        // Nothing secret in Debug.
        let dbg = format!("{:?}", parse_accounts("user-data", &doc(&yaml)).unwrap());
        assert!(
            !dbg.contains("password1") && !dbg.contains("j212wezy"),
            "{dbg}"
        );
    }

    #[test]
    fn a_snap_user_entry_is_reported_and_the_others_kept() {
        let r = parse_accounts(
            "user-data",
            &doc("users:\n  - default\n  - snapuser: joe@example.com\n  - name: bob\n"),
        )
        .unwrap();
        assert_eq!(r.users.len(), 2);
        assert_eq!(r.unsupported.len(), 1);
        assert_eq!(r.unsupported[0].path, "users[1].snapuser");
        assert!(r.unsupported[0].cloud_init_knows);
    }

    #[test]
    fn typos_inside_the_modules_are_kept_as_unsupported_with_a_suggestion() {
        let r = parse_accounts(
            "user-data",
            &doc("users:\n  - name: a\n    shel: /bin/sh\nchpasswd:\n  exprie: false\n  users:\n    - {name: a, pasword: x}\n"),
        )
        .unwrap();
        let got: Vec<(&str, bool, Option<&str>)> = r
            .unsupported
            .iter()
            .map(|u| {
                (
                    u.path.as_str(),
                    u.cloud_init_knows,
                    u.did_you_mean.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("users[0].shel", false, Some("shell")),
                ("chpasswd.exprie", false, Some("expire")),
                // Not passed over: the user would silently get a random password.
                ("chpasswd.users[0].pasword", false, Some("password"))
            ]
        );
    }

    #[test]
    fn numeric_passwords_are_text_and_wrong_types_are_errors() {
        let r = parse_accounts(
            "user-data",
            &doc("password: 12345\nusers: [{name: a, plain_text_passwd: 987}]\nchpasswd: {users: [{name: a, password: 42, type: text}]}\n"),
        )
        .unwrap();
        assert_eq!(r.password.as_ref().unwrap().expose(), "12345");
        let Some(ch) = &r.chpasswd else { panic!() };
        assert!(matches!(&ch.entries[0].password, NewPassword::Text(p) if p.expose() == "42"));
        let e = errors("chpasswd: {users: [{name: a, password: [x], type: text}]}\n");
        assert!(
            e.iter().any(|e| e.contains("chpasswd.users[0].password")),
            "{e:?}"
        );
    }

    #[test]
    fn absent_users_means_the_default_user() {
        let r = parse_accounts("user-data", &doc("runcmd: [ls]\n")).unwrap();
        assert_eq!(r.users, vec![UserEntry::Default]);
        assert!(r.disable_root);
        let r = parse_accounts("user-data", &doc("users: []\n")).unwrap();
        assert!(r.users.is_empty());
    }

    #[test]
    fn bad_values_are_refused_with_their_key_path() {
        let table: &[(&str, &str)] = &[
            ("users:\n  - name: a\n    shell: bash\n", "users[0].shell"),
            ("users:\n  - name: a\n    gecos: \"x:y\"\n", "users[0].gecos"),
            ("users:\n  - name: \"a:b\"\n", "users[0].name"),
            ("users:\n  - name: a\n    homedir: \"/home/a\\nb\"\n", "users[0].homedir"),
            ("users:\n  - name: a\n    sudo: \"ALL=(ALL) ALL\\nroot ALL=(ALL) ALL\"\n", "users[0].sudo"),
            ("users:\n  - name: a\n    uid: -1\n", "users[0].uid"),
            ("users:\n  - name: a\n    uid: 4294967295\n", "users[0].uid"),
            ("users:\n  - name: a\n    expiredate: someday\n", "users[0].expiredate"),
            ("users:\n  - name: a\n    hashed_passwd: \"$6$a:b$c\"\n", "users[0].hashed_passwd"),
            ("users:\n  - name: a\n    ssh_authorized_keys: [\"ssh-ed25519 notbase64!\"]\n", "users[0].ssh_authorized_keys[0]"),
            ("users:\n  - name: a\n    ssh_authorized_keys: [\"ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIKwQShPXkfntT8srVCK4T0fXZM7NCXBG7X+sOMK3icWI\"]\n", "users[0].ssh_authorized_keys[0]"),
            // A key cut on a 4-character base64 boundary (ssh-keygen -l refuses it).
            ("users:\n  - name: a\n    ssh_authorized_keys: [\"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKwQShPXkfntT8srVCK4T0fXZM7NCXBG7X+sOMK3 c\"]\n", "users[0].ssh_authorized_keys[0]: ssh public key: the ssh-ed25519 key \"c\" is cut short"),
            ("users:\n  - name: a\n    lock_passwd: maybe\n", "users[0].lock_passwd"),
            ("users:\n  - gecos: x\n", "needs a name"),
            ("groups:\n  - \"bad group\"\n", "groups[0]"),
            ("chpasswd:\n  list:\n    - nocolon\n", "chpasswd.list[0]"),
            ("chpasswd:\n  users:\n    - {name: a, type: magic}\n", "chpasswd.users[0].type"),
            ("ssh_pwauth: sometimes\n", "ssh_pwauth"),
            ("disable_root_opts: \"a\\nb\"\n", "disable_root_opts"),
            ("password: \"a\\nb\"\n", "password"),
            ("user: [admin]\n", "user: expected a user name or a mapping"),
            ("user: \"a:b\"\n", "user: "),
            ("user:\n  shell: bash\n", "user.shell"),
        ];
        for (yaml, want) in table {
            let e = errors(yaml);
            assert!(e.iter().any(|e| e.contains(want)), "{yaml:?}: {e:?}");
            assert!(e.iter().all(|e| e.starts_with("user-data: ")), "{e:?}");
        }
    }

    #[test]
    fn lists_over_their_bound_are_refused_not_cut() {
        let many = |n: usize, item: &str| format!("[{}]", vec![item; n].join(", "));
        for (yaml, want) in [
            (
                format!("users: {}\n", many(MAX_USERS + 1, "default")),
                "users",
            ),
            (format!("groups: {}\n", many(MAX_GROUPS + 1, "g")), "groups"),
            (
                format!("chpasswd: {{list: {}}}\n", many(MAX_LIST + 1, "a:b")),
                "chpasswd.list",
            ),
            (
                format!(
                    "chpasswd: {{users: {}}}\n",
                    many(MAX_LIST + 1, "{name: a, type: RANDOM}")
                ),
                "chpasswd.users",
            ),
            (
                format!("ssh_authorized_keys: {}\n", many(MAX_LIST + 1, "'#'")),
                "ssh_authorized_keys",
            ),
            (
                format!(
                    "users: [{{name: a, sudo: {}}}]\n",
                    many(MAX_LIST + 1, "ALL")
                ),
                "users[0].sudo",
            ),
        ] {
            let e = errors(&yaml);
            assert!(
                e.iter()
                    .any(|e| e.contains(&format!("{want}: ")) && e.contains("at most")),
                "{want}: {e:?}"
            );
        }
    }

    #[test]
    fn secrets_never_reach_messages() {
        let e = errors("users:\n  - name: a\n    hashed_passwd: \"$6$topsecret:b$c\"\n    plain_text_passwd: \"hunter2\\n\"\n");
        assert_eq!(e.len(), 2, "{e:?}");
        assert!(
            e.iter()
                .all(|e| !e.contains("topsecret") && !e.contains("hunter2")),
            "{e:?}"
        );
    }
}
