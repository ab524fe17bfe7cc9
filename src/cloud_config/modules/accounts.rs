//! The accounts modules' keys (`users_groups`: `users`, `groups`; `ssh`:
//! `ssh_authorized_keys`, `disable_root`, `disable_root_opts`; `set_passwords`:
//! `ssh_pwauth`, `chpasswd`, `password`): each checked when the document is read with the
//! accounts engine's parser (`crate::plan::accounts::parse`), each problem reported at the
//! line of the value it is about (and each key vmcust does not implement as *unknown*,
//! which ends the customization degraded), then kept as a raw node — recognised, printed
//! only redacted. [`request`] turns a read document's accounts keys into one
//! `AccountsRequest`, which `src/plan/accounts` plans with the engine's plan.
//!
//! The value is handed over as a `serde_norway::Value` (what the accounts parser reads):
//! the document reader has already resolved YAML 1.1 scalars as cloud-init's PyYAML does,
//! so the conversion keeps every value as it was read.

use crate::cloud_config::node::{Node, Value};
use crate::cloud_config::read::{unknown_message, Reader, Severity};
use crate::cloud_config::redact;
use crate::cloud_config::CloudConfig;
use crate::plan::accounts::parse::{parse_accounts, parse_accounts_all};
use crate::plan::accounts::request::AccountsRequest;
use serde::Serialize;
use serde_norway::{Mapping, Number, Value as Yaml};
use std::fmt;

/// One accounts key and its value as written.
#[derive(Clone, PartialEq)]
pub struct RawModule {
    /// The top-level key.
    pub key: String,
    /// Its value (may hold password hashes and plain passwords).
    pub node: Node,
}

impl fmt::Debug for RawModule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "RawModule({}: {})",
            self.key,
            redact::to_json(&self.key, &self.node)
        )
    }
}

impl Serialize for RawModule {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let mut st = s.serialize_struct("RawModule", 3)?;
        st.serialize_field("key", &self.key)?;
        st.serialize_field("line", &self.node.line)?;
        st.serialize_field("value", &redact::to_json(&self.key, &self.node))?;
        st.end()
    }
}

/// The source name in messages, stripped again before they reach the reader.
const SOURCE: &str = "user-data";

/// The node as the YAML value [`parse_accounts`] reads.
fn to_yaml(n: &Node) -> Yaml {
    match &n.value {
        Value::Null => Yaml::Null,
        Value::Bool(b) => Yaml::Bool(*b),
        Value::Int(i) => Yaml::Number(Number::from(*i)),
        Value::Float(f) => Yaml::Number(Number::from(*f)),
        Value::Str(s) => Yaml::String(s.clone()),
        // `!!binary` is no text these keys take: a clear type error follows.
        Value::Binary(_) => Yaml::Sequence(vec![Yaml::Null]),
        Value::Seq(items) => Yaml::Sequence(items.iter().map(to_yaml).collect()),
        Value::Map(entries) => Yaml::Mapping(
            entries
                .iter()
                .map(|(k, v)| (Yaml::String(k.text.clone()), to_yaml(v)))
                .collect(),
        ),
    }
}

/// The deepest node of `top` (the value of top-level key `key`) that `path` names:
/// `users[1].shell`, `groups.admins`, `chpasswd.list line 3`.
fn locate<'n>(top: &'n Node, key: &str, path: &str) -> &'n Node {
    let rest = path.strip_prefix(key).unwrap_or("");
    let mut at = top;
    for segment in rest.split('.').filter(|s| !s.is_empty()) {
        let segment = segment.split(' ').next().unwrap_or("");
        let (name, indices) = segment.split_once('[').unwrap_or((segment, ""));
        if !name.is_empty() {
            match at.get(name) {
                Some(n) => at = n,
                None => return at,
            }
        }
        for index in indices.split('[').filter(|s| !s.is_empty()) {
            let i: usize = match index.trim_end_matches(']').parse() {
                Ok(i) => i,
                Err(_) => return at,
            };
            match &at.value {
                Value::Seq(items) if i < items.len() => at = &items[i],
                _ => return at,
            }
        }
    }
    at
}

fn one(key: &str, node: &Node) -> Mapping {
    let mut m = Mapping::new();
    m.insert(Yaml::String(key.to_string()), to_yaml(node));
    m
}

/// The table's parser for every accounts key: problems reported with their lines, the
/// raw node kept for [`request`].
pub(crate) fn parse_key(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    let (req, errors) = parse_accounts_all(SOURCE, &one(key, node));
    for e in errors {
        let path = e
            .place
            .strip_prefix(SOURCE)
            .and_then(|p| p.strip_prefix(": "))
            .unwrap_or(&e.place);
        r.error(locate(node, key, path), path, e.reason);
    }
    for u in &req.unsupported {
        let at = locate(node, key, &u.path);
        let last = u.path.rsplit('.').next().unwrap_or(&u.path);
        let message = match (&u.did_you_mean, u.cloud_init_knows) {
            (Some(meant), false) => unknown_message(last, [meant.as_str()], false),
            (_, knows) => unknown_message(last, [], knows),
        };
        r.report(Severity::Unknown, at, &u.path, message);
    }
    cfg.accounts.push(RawModule {
        key: key.to_string(),
        node: node.clone(),
    });
}

/// The accounts request of a read document (its accounts keys together, so that
/// `password` and `ssh_authorized_keys` see `users`). Problems were reported when the
/// document was read; an error here means the document was used despite them, and
/// says them all on one line.
pub(crate) fn request(cfg: &CloudConfig) -> Result<AccountsRequest, String> {
    let mut m = Mapping::new();
    for raw in &cfg.accounts {
        m.insert(Yaml::String(raw.key.clone()), to_yaml(&raw.node));
    }
    parse_accounts(SOURCE, &m).map_err(|errors| {
        errors
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    })
}

#[cfg(test)]
mod tests {
    use crate::cloud_config::document;

    #[test]
    fn accounts_keys_pass_through_redacted() {
        let (cfg, p) = document::from_text(
            "users: [{name: a, passwd: HASHX}]\nchpasswd: {list: 'root:PW'}\nssh_pwauth: true\n",
        );
        assert!(p.is_empty(), "{p:?}");
        assert_eq!(cfg.accounts.len(), 3);
        let shown = format!("{:?} {}", cfg, serde_json::to_string(&cfg).unwrap());
        assert!(
            !shown.contains("HASHX") && !shown.contains("root:PW"),
            "{shown}"
        );
        assert!(shown.contains("ssh_pwauth"));
    }

    use super::*;

    #[test]
    fn problems_carry_the_line_of_their_value() {
        let text = "#cloud-config\nusers:\n  - default\n  - name: bob\n    shell: bash\n    shel: /bin/sh\n    ssh_import_id: [gh:bob]\nchpasswd:\n  list:\n    - nocolon\n";
        let (cfg, problems) = document::from_text(text);
        let got: Vec<(Severity, u32, &str)> = problems
            .iter()
            .map(|p| (p.severity, p.line, p.path.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (Severity::Error, 5, "users[1].shell"),
                (Severity::Unknown, 6, "users[1].shel"),
                (Severity::Unknown, 7, "users[1].ssh_import_id"),
                (Severity::Error, 10, "chpasswd.list[0]"),
            ]
        );
        let typo = cfg
            .unknown
            .iter()
            .find(|u| u.key == "users[1].shel")
            .unwrap();
        assert!(!typo.cloud_init_knows);
        assert_eq!(typo.did_you_mean.as_deref(), Some("shell"));
        let known = cfg
            .unknown
            .iter()
            .find(|u| u.key.ends_with("ssh_import_id"))
            .unwrap();
        assert!(known.cloud_init_knows);
    }

    #[test]
    fn the_request_sees_all_keys_together() {
        let text = "#cloud-config\nusers: [default, {name: bob, lock_passwd: no, uid: 0x10}]\npassword: 'pw'\nssh_pwauth: yes\ndisable_root: off\n";
        let (cfg, problems) = document::from_text(text);
        assert!(problems.is_empty(), "{problems:?}");
        let req = request(&cfg).unwrap();
        assert_eq!(req.users.len(), 2);
        let crate::plan::accounts::request::UserEntry::User(bob) = &req.users[1] else {
            panic!()
        };
        // YAML 1.1 as cloud-init reads it: `no` is false, 0x10 is 16.
        assert!(!bob.lock_passwd);
        assert_eq!(bob.uid, Some(16));
        assert!(req.password.is_some());
        assert_eq!(req.ssh_pwauth, Some(true));
        assert!(!req.disable_root);
        // Secrets stay out of the document's printouts.
        let shown = format!("{cfg:?}") + &serde_json::to_string(&cfg).unwrap();
        assert!(
            !shown.contains("'pw'") && !shown.contains("\"pw\""),
            "{shown}"
        );
    }
}
