//! `hostname`, `fqdn`, `prefer_fqdn_over_hostname`, `preserve_hostname` (cloud-init's
//! `cc_set_hostname`) and `manage_etc_hosts` (`cc_update_etc_hosts`), mapped onto the
//! engine's identity planner ([`crate::plan::identity::plan_identity`]): it writes
//! `/etc/hostname` and the Debian-style `127.0.1.1` line of `/etc/hosts`, which is what
//! `manage_etc_hosts: localhost` asks; `manage_etc_hosts: true` replaces `/etc/hosts` with
//! cloud-init's template shape for the distribution, and unset or `false` leaves it alone.

use crate::cloud_config::host::ManageEtcHosts;
use crate::cloud_config::CloudConfig;
use crate::model::{DnsName, HostName, Identity};
use crate::plan::identity::plan_identity;
use crate::plan::{Action, Contents};

use super::error::ModuleError;
use super::facts::{CcFacts, Family};

/// The short name and the FQDN to use: the document's (cloud-init's
/// `get_hostname_fqdn`), else `fallback` (the metadata's `local-hostname`); the FQDN is
/// the short name when nothing gives a domain.
pub fn names(cfg: &CloudConfig, fallback: Option<&HostName>) -> Option<(String, String)> {
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
fn identity(short: &str, fqdn: &str) -> Result<Identity, ModuleError> {
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
pub fn plan_set_hostname(
    cfg: &CloudConfig,
    facts: &CcFacts,
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
    let mut actions: Vec<Action> = plan_identity(&identity(&short, &fqdn)?, &facts.engine)?
        .into_iter()
        .filter(|a| a.path() == std::path::Path::new("/etc/hostname"))
        .map(|a| match a {
            Action::WriteFile {
                path,
                mode,
                purpose,
                ..
            } => Action::WriteFile {
                path,
                mode,
                contents: Contents::text(format!("{name}\n")),
                purpose,
            },
            other => other,
        })
        .collect();
    actions.push(Action::SetHostname { name });
    Ok(actions)
}

/// `cc_update_etc_hosts`: `/etc/hosts` as `manage_etc_hosts` asks.
pub fn plan_etc_hosts(
    cfg: &CloudConfig,
    facts: &CcFacts,
    fallback: Option<&HostName>,
) -> Result<Vec<Action>, ModuleError> {
    let mode = cfg.manage_etc_hosts.unwrap_or(ManageEtcHosts::No);
    if mode == ManageEtcHosts::No {
        return Ok(Vec::new());
    }
    let Some((short, fqdn)) = names(cfg, fallback) else {
        return Ok(Vec::new());
    };
    Ok(match mode {
        ManageEtcHosts::No => Vec::new(),
        // The engine's own /etc/hosts line: 127.0.1.1 replaced in place.
        ManageEtcHosts::Localhost => plan_identity(&identity(&short, &fqdn)?, &facts.engine)?
            .into_iter()
            .filter(|a| a.path() == std::path::Path::new("/etc/hosts"))
            .collect(),
        ManageEtcHosts::Template => vec![Action::WriteFile {
            path: "/etc/hosts".into(),
            mode: 0o644,
            contents: Contents::text(hosts_template(facts.family, &short, &fqdn)),
            purpose: "host name in /etc/hosts (manage_etc_hosts: true)",
        }],
    })
}

/// `/etc/hosts` in the shape of cloud-init's `hosts.debian.tmpl` (Debian family) or
/// `hosts.redhat.tmpl` (every other family), with vmcust's own header.
pub fn hosts_template(family: Family, short: &str, fqdn: &str) -> String {
    let header =
        "# Written by vmcust at every boot: the cloud-config sets manage_etc_hosts: true.\n\
                  # To keep changes to this file, set manage_etc_hosts to false (or localhost)\n\
                  # in the cloud-config.\n";
    match family {
        Family::Debian => format!(
            "{header}127.0.1.1 {fqdn} {short}\n127.0.0.1 localhost\n\n\
             # The following lines are desirable for IPv6 capable hosts\n\
             ::1 localhost ip6-localhost ip6-loopback\nff02::1 ip6-allnodes\nff02::2 ip6-allrouters\n"
        ),
        _ => format!(
            "{header}# The following lines are desirable for IPv4 capable hosts\n\
             127.0.0.1 {fqdn} {short}\n127.0.0.1 localhost.localdomain localhost\n\
             127.0.0.1 localhost4.localdomain4 localhost4\n\n\
             # The following lines are desirable for IPv6 capable hosts\n\
             ::1 {fqdn} {short}\n::1 localhost.localdomain localhost\n::1 localhost6.localdomain6 localhost6\n"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::document;

    fn show(actions: &[Action]) -> String {
        actions
            .iter()
            .map(|a| match a {
                Action::WriteFile { path, contents, .. } => {
                    format!("{}={:?}", path.display(), contents.display())
                }
                Action::SetHostname { name } => format!("live={name}"),
                other => format!("{other:?}"),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn set_hostname_goldens() {
        let rhel = CcFacts {
            family: Family::Rhel,
            ..Default::default()
        };
        let deb = CcFacts {
            family: Family::Debian,
            ..Default::default()
        };
        let meta = HostName::parse("meta.example.org").unwrap();
        let table: &[(&str, &CcFacts, Option<&HostName>, &str)] = &[
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
            let (cfg, p) = document::from_text(doc);
            assert!(p.is_empty(), "{doc}: {p:?}");
            let got = plan_set_hostname(&cfg, facts, *fallback).unwrap();
            assert_eq!(show(&got), *want, "{doc}");
        }
    }

    #[test]
    fn etc_hosts_goldens() {
        let mut deb = CcFacts {
            family: Family::Debian,
            ..Default::default()
        };
        deb.engine.hosts = Some("127.0.0.1 localhost\n127.0.1.1 template\n10.0.0.9 db\n".into());
        let (cfg, _) = document::from_text("{fqdn: web.example.com, manage_etc_hosts: localhost}");
        assert_eq!(
            show(&plan_etc_hosts(&cfg, &deb, None).unwrap()),
            "/etc/hosts=\"127.0.0.1 localhost\\n127.0.1.1\\tweb.example.com\\tweb\\n10.0.0.9 db\\n\""
        );
        let (cfg, _) = document::from_text("{fqdn: web.example.com, manage_etc_hosts: true}");
        let got = plan_etc_hosts(&cfg, &deb, None).unwrap();
        let Action::WriteFile { contents, .. } = &got[0] else {
            panic!("{got:?}")
        };
        let body: Vec<String> = contents
            .display()
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .map(str::to_string)
            .collect();
        assert_eq!(
            body,
            [
                "127.0.1.1 web.example.com web",
                "127.0.0.1 localhost",
                "::1 localhost ip6-localhost ip6-loopback",
                "ff02::1 ip6-allnodes",
                "ff02::2 ip6-allrouters"
            ]
        );
        let rhel = hosts_template(Family::Rhel, "web", "web.example.com");
        assert!(
            rhel.contains("\n127.0.0.1 web.example.com web\n")
                && rhel.contains("\n::1 web.example.com web\n"),
            "{rhel}"
        );
        for doc in [
            "{hostname: web}",
            "{hostname: web, manage_etc_hosts: false}",
        ] {
            let (cfg, _) = document::from_text(doc);
            assert!(
                plan_etc_hosts(&cfg, &deb, None).unwrap().is_empty(),
                "{doc}"
            );
        }
    }
}
