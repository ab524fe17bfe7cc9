//! `hostname`, `fqdn`, `prefer_fqdn_over_hostname`, `preserve_hostname` and
//! `manage_etc_hosts`, validated as host names ([`HostName`]).

use serde::Serialize;

use super::node::{Node, Value};
use super::read::{Reader, Severity};
use super::CloudConfig;
use crate::model::{quote, HostName};

/// What `manage_etc_hosts` asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ManageEtcHosts {
    /// `false` (the default): `/etc/hosts` is left alone.
    No,
    /// `true` (or the deprecated `template`): `/etc/hosts` rendered from the template.
    Template,
    /// `localhost`: a `127.0.1.1 fqdn hostname` line kept up to date.
    Localhost,
}

fn name(r: &mut Reader, key: &str, node: &Node) -> Option<HostName> {
    let s = r.line(node, key, 253)?;
    match HostName::parse(&s) {
        Ok(h) => Some(h),
        Err(why) => {
            r.error(node, key, why);
            None
        }
    }
}

/// `hostname`.
pub fn hostname(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    cfg.hostname = name(r, key, node);
}

/// `fqdn`.
pub fn fqdn(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    cfg.fqdn = name(r, key, node);
}

/// `prefer_fqdn_over_hostname`.
pub fn prefer_fqdn(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    cfg.prefer_fqdn_over_hostname = r.bool(node, key);
}

/// `preserve_hostname`.
pub fn preserve(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    cfg.preserve_hostname = r.bool(node, key).unwrap_or(false);
}

/// `manage_etc_hosts`: `true`, `false`, `localhost` (`template` is the deprecated `true`).
pub fn manage_etc_hosts(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    cfg.manage_etc_hosts = match &node.value {
        Value::Bool(false) => Some(ManageEtcHosts::No),
        Value::Bool(true) => Some(ManageEtcHosts::Template),
        Value::Str(s) if s == "localhost" => Some(ManageEtcHosts::Localhost),
        Value::Str(s) if s == "template" => {
            r.report(
                Severity::Warning,
                node,
                key,
                "`template` is deprecated (cloud-init 22.3); write true",
            );
            Some(ManageEtcHosts::Template)
        }
        Value::Str(s) => {
            r.error(
                node,
                key,
                format!("{} is not taken; write true, false or localhost", quote(s)),
            );
            None
        }
        _ => {
            r.wrong_type(node, key, "true, false or localhost");
            None
        }
    };
}

impl CloudConfig {
    /// The host name and FQDN the document asks for, as cloud-init's
    /// `get_hostname_fqdn` derives them from `fqdn` and `hostname` (an FQDN given as
    /// `hostname` gives both). `None` where it comes from the metadata instead.
    pub fn host_names(&self) -> (Option<String>, Option<String>) {
        match (&self.fqdn, &self.hostname) {
            (Some(f), h) => (
                Some(
                    h.as_ref()
                        .map_or_else(|| f.short().to_string(), |h| h.as_str().to_string()),
                ),
                Some(f.as_str().to_string()),
            ),
            (None, Some(h)) if h.as_str().contains('.') => {
                (Some(h.short().to_string()), Some(h.as_str().to_string()))
            }
            (None, Some(h)) => (Some(h.as_str().to_string()), None),
            (None, None) => (None, None),
        }
    }
}

#[cfg(test)]
#[allow(clippy::type_complexity)]
mod tests {
    use super::*;
    use crate::cloud_config::document;

    #[test]
    fn host_names_follow_get_hostname_fqdn() {
        let table: &[(&str, (Option<&str>, Option<&str>))] = &[
            ("hostname: web1", (Some("web1"), None)),
            (
                "hostname: web1.example.com",
                (Some("web1"), Some("web1.example.com")),
            ),
            ("fqdn: db.example.com", (Some("db"), Some("db.example.com"))),
            (
                "{hostname: h, fqdn: db.example.com}",
                (Some("h"), Some("db.example.com")),
            ),
            ("{}", (None, None)),
        ];
        for (doc, (h, f)) in table {
            let (cfg, p) = document::from_text(doc);
            assert!(p.is_empty(), "{doc}: {p:?}");
            let (gh, gf) = cfg.host_names();
            assert_eq!((gh.as_deref(), gf.as_deref()), (*h, *f), "{doc}");
        }
    }

    #[test]
    fn hostile_names_and_etc_hosts_values() {
        let table: &[(&str, &str)] = &[
            ("hostname: 'bad_name!'", "hostname"),
            ("hostname: 42", "is an integer; write a string"),
            ("fqdn: \"a\\nb\"", "control character"),
            (
                "manage_etc_hosts: sometimes",
                "write true, false or localhost",
            ),
            ("manage_etc_hosts: 1", "is an integer"),
            ("prefer_fqdn_over_hostname: 'true'", "write true or false"),
        ];
        for (doc, want) in table {
            let (_, p) = document::from_text(doc);
            assert!(
                p.iter().any(|p| p.severity == Severity::Error
                    && format!("{}: {}", p.path, p.message).contains(want)),
                "{doc}: {p:?}"
            );
        }
        let (cfg, p) = document::from_text("manage_etc_hosts: template");
        assert_eq!(cfg.manage_etc_hosts, Some(ManageEtcHosts::Template));
        assert_eq!(p[0].severity, Severity::Warning);
        let (cfg, _) = document::from_text("manage_etc_hosts: localhost");
        assert_eq!(cfg.manage_etc_hosts, Some(ManageEtcHosts::Localhost));
    }
}
