//! `set_hostname` (`hostname`, `fqdn`, `prefer_fqdn_over_hostname`, `preserve_hostname`):
//! the names validated as host names ([`HostName`]) when read, then `/etc/hostname`, the
//! Debian-style `127.0.1.1` line of `/etc/hosts` and the running host name planned
//! through the engine's identity planner ([`crate::plan::identity::plan_identity`]).

use crate::cloud_config::apply::driver::{failed, skipped, ModuleOutcome, Step};
use crate::cloud_config::apply::error::ModuleError;
use crate::cloud_config::apply::preview::{actions, Look};
use crate::cloud_config::node::Node;
use crate::cloud_config::read::Reader;
use crate::cloud_config::CloudConfig;
use crate::facts::{Facts, Family};
use crate::model::{DnsName, HostName, Identity};
use crate::plan::identity::plan_identity;
use crate::plan::{Action, Contents};

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
pub(crate) fn hostname(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    cfg.hostname = name(r, key, node);
}

/// `fqdn`.
pub(crate) fn fqdn(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    cfg.fqdn = name(r, key, node);
}

/// `prefer_fqdn_over_hostname`.
pub(crate) fn prefer_fqdn(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    cfg.prefer_fqdn_over_hostname = r.bool(node, key);
}

/// `preserve_hostname`.
pub(crate) fn preserve(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    cfg.preserve_hostname = r.bool(node, key).unwrap_or(false);
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
mod parse_tests {
    use crate::cloud_config::document;
    use crate::cloud_config::modules::test_support::clean_config;
    use crate::cloud_config::modules::update_etc_hosts::ManageEtcHosts;
    use crate::cloud_config::read::Severity;

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
            let cfg = clean_config(doc);
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
        super::super::test_support::assert_refused(table);
        let (cfg, p) = document::from_text("manage_etc_hosts: template");
        assert_eq!(cfg.manage_etc_hosts, Some(ManageEtcHosts::Template));
        assert_eq!(p[0].severity, Severity::Warning);
        let (cfg, _) = document::from_text("manage_etc_hosts: localhost");
        assert_eq!(cfg.manage_etc_hosts, Some(ManageEtcHosts::Localhost));
    }
}

/// The short name and the FQDN to use: the document's (cloud-init's
/// `get_hostname_fqdn`), else `fallback` (the metadata's `local-hostname`); the FQDN is
/// the short name when nothing gives a domain.
pub(crate) fn names(cfg: &CloudConfig, fallback: Option<&HostName>) -> Option<(String, String)> {
    let (short, fqdn) = match cfg.host_names() {
        (Some(s), f) => (s, f),
        (None, _) => {
            let h = fallback?;
            let f = h.as_str().contains('.').then(|| h.as_str().to_string());
            (h.short().to_string(), f)
        }
    };
    let fqdn = fqdn.unwrap_or_else(|| short.clone());
    Some((short, fqdn))
}

/// The engine's identity for these names.
pub(crate) fn identity(short: &str, fqdn: &str) -> Result<Identity, ModuleError> {
    let host_name = HostName::parse(short).ok();
    let domain = fqdn
        .strip_prefix(short)
        .and_then(|d| d.strip_prefix('.'))
        .and_then(|d| DnsName::parse(d).ok());
    Ok(Identity {
        host_name,
        domain,
        ..Default::default()
    })
}

/// `cc_set_hostname`: `/etc/hostname` (the FQDN where `prefer_fqdn_over_hostname`, whose
/// default is the distribution's: true on RHEL, as cloud-init's rhel distro) and the
/// running host name. Nothing with `preserve_hostname: true` or without a name.
pub(crate) fn plan_set_hostname(
    cfg: &CloudConfig,
    facts: &Facts,
    fallback: Option<&HostName>,
) -> Result<Vec<Action>, ModuleError> {
    if cfg.preserve_hostname {
        return Ok(Vec::new());
    }
    let Some((short, fqdn)) = names(cfg, fallback) else {
        return Ok(Vec::new());
    };
    let prefer = cfg
        .prefer_fqdn_over_hostname
        .unwrap_or(facts.family == Family::Rhel);
    let name = if prefer { fqdn.clone() } else { short.clone() };
    let mut actions: Vec<Action> = plan_identity(&identity(&short, &fqdn)?, facts)?
        .into_iter()
        .filter(|a| a.path() == std::path::Path::new("/etc/hostname"))
        .filter(|_| writes_hostname_file(cfg, facts))
        .map(|a| match a {
            Action::WriteFile {
                path,
                mode,
                purpose,
                ..
            } => Action::write_file(path, Contents::text(format!("{name}\n")), mode, purpose),
            other => other,
        })
        .collect();
    actions.push(Action::SetHostname { name });
    Ok(actions)
}

/// Whether `/etc/hostname` is written, as `create_hostname_file` (default true) says:
/// `false` keeps a missing file missing on Debian and other families (an existing one is
/// still rewritten), and on RHEL and SUSE sets only the running name (cloud-init's
/// `hostnamectl set-hostname --transient`), leaving the file alone.
fn writes_hostname_file(cfg: &CloudConfig, facts: &Facts) -> bool {
    match cfg.create_hostname_file {
        None | Some(true) => true,
        Some(false) => match facts.family {
            Family::Rhel | Family::Suse => false,
            _ => facts.hostname_file,
        },
    }
}

/// `create_hostname_file`.
pub(crate) fn create_hostname_file(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    cfg.create_hostname_file = r.bool(node, key);
}

/// Writes the names (and sets the running one on the running system).
pub(crate) fn run(s: &Step) -> ModuleOutcome {
    match plan_set_hostname(s.cfg, s.cc, s.ctx.fallback_hostname.as_ref()) {
        Err(e) => failed(e.to_string()),
        Ok(a) if a.is_empty() => skipped(if s.cfg.preserve_hostname {
            "preserve_hostname is true"
        } else {
            "no host name in the cloud-config or the metadata"
        }),
        Ok(a) => s.apply_outcome(a),
    }
}

/// The names' files, or why not.
pub(crate) fn preview(l: &Look) -> Vec<String> {
    actions(
        plan_set_hostname(l.cfg, l.facts, l.fallback),
        "nothing: no host name, or preserve_hostname",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::modules::test_support::clean_config;

    use super::super::test_support::show_names as show;

    #[test]
    fn set_hostname_goldens() {
        let rhel = Facts {
            family: Family::Rhel,
            ..Default::default()
        };
        let deb = Facts {
            family: Family::Debian,
            ..Default::default()
        };
        let deb_with_file = Facts {
            family: Family::Debian,
            hostname_file: true,
            ..Default::default()
        };
        let meta = HostName::parse("meta.example.org").unwrap();
        let table: &[(&str, &Facts, Option<&HostName>, &str)] = &[
            // create_hostname_file: false keeps a missing file missing on Debian, rewrites
            // an existing one, and never writes it on RHEL (only the running name).
            (
                "{hostname: web1, create_hostname_file: false}",
                &deb,
                None,
                "live=web1",
            ),
            (
                "{hostname: web1, create_hostname_file: false}",
                &deb_with_file,
                None,
                "/etc/hostname=\"web1\\n\" live=web1",
            ),
            (
                "{hostname: web1, create_hostname_file: false}",
                &rhel,
                None,
                "live=web1",
            ),
            (
                "{hostname: web1, create_hostname_file: true}",
                &deb,
                None,
                "/etc/hostname=\"web1\\n\" live=web1",
            ),
            (
                "hostname: web1",
                &deb,
                None,
                "/etc/hostname=\"web1\\n\" live=web1",
            ),
            (
                "fqdn: db.example.com",
                &deb,
                None,
                "/etc/hostname=\"db\\n\" live=db",
            ),
            (
                "fqdn: db.example.com",
                &rhel,
                None,
                "/etc/hostname=\"db.example.com\\n\" live=db.example.com",
            ),
            (
                "{fqdn: db.example.com, prefer_fqdn_over_hostname: false}",
                &rhel,
                None,
                "/etc/hostname=\"db\\n\" live=db",
            ),
            (
                "{hostname: h.example.com, prefer_fqdn_over_hostname: true}",
                &deb,
                None,
                "/etc/hostname=\"h.example.com\\n\" live=h.example.com",
            ),
            (
                "{}",
                &deb,
                Some(&meta),
                "/etc/hostname=\"meta\\n\" live=meta",
            ),
            ("{}", &deb, None, ""),
            ("{hostname: web1, preserve_hostname: true}", &deb, None, ""),
        ];
        for (doc, facts, fallback, want) in table {
            let cfg = clean_config(doc);
            let got = plan_set_hostname(&cfg, facts, *fallback).unwrap();
            assert_eq!(show(&got), *want, "{doc}");
        }
    }
}
