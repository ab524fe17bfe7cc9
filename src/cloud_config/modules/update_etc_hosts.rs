//! `update_etc_hosts` (`manage_etc_hosts`): `true` replaces `/etc/hosts` with
//! cloud-init's template shape for the distribution, `localhost` keeps the engine's
//! `127.0.1.1` line up to date, unset or `false` leaves the file alone.

use serde::Serialize;

use crate::cloud_config::apply::driver::{failed, skipped, ModuleOutcome, Step};
use crate::cloud_config::apply::error::ModuleError;
use crate::cloud_config::apply::preview::{actions, Look};
use crate::cloud_config::modules::set_hostname::{identity, names};
use crate::cloud_config::node::{Node, Value};
use crate::cloud_config::read::{Reader, Severity};
use crate::cloud_config::CloudConfig;
use crate::facts::{Facts, Family};
use crate::model::{quote, HostName};
use crate::plan::identity::plan_identity;
use crate::plan::{Action, Contents};

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

/// `manage_etc_hosts`: `true`, `false`, `localhost` (`template` is the deprecated `true`).
pub(crate) fn parse(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
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

/// `cc_update_etc_hosts`: `/etc/hosts` as `manage_etc_hosts` asks.
pub(crate) fn plan_etc_hosts(
    cfg: &CloudConfig,
    facts: &Facts,
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
        ManageEtcHosts::Localhost => plan_identity(&identity(&short, &fqdn)?, facts)?
            .into_iter()
            .filter(|a| a.path() == std::path::Path::new("/etc/hosts"))
            .collect(),
        ManageEtcHosts::Template => vec![Action::write_file(
            "/etc/hosts",
            Contents::text(hosts_template(facts.family, &short, &fqdn)),
            0o644,
            "host name in /etc/hosts (manage_etc_hosts: true)",
        )],
    })
}

/// `/etc/hosts` in the shape of cloud-init's `hosts.debian.tmpl` (Debian family) or
/// `hosts.redhat.tmpl` (every other family), with vmcust's own header.
pub(crate) fn hosts_template(family: Family, short: &str, fqdn: &str) -> String {
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

/// Writes `/etc/hosts`.
pub(crate) fn run(s: &Step) -> ModuleOutcome {
    match plan_etc_hosts(s.cfg, s.cc, s.ctx.fallback_hostname.as_ref()) {
        Err(e) => failed(e.to_string()),
        Ok(a) if a.is_empty() => skipped("manage_etc_hosts is not true or localhost"),
        Ok(a) => s.apply_outcome(a),
    }
}

/// `/etc/hosts`, or why not.
pub(crate) fn preview(l: &Look) -> Vec<String> {
    actions(
        plan_etc_hosts(l.cfg, l.facts, l.fallback),
        "nothing: manage_etc_hosts is not true or localhost",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::document;

    use super::super::test_support::show_names as show;

    #[test]
    fn etc_hosts_goldens() {
        let mut deb = Facts {
            family: Family::Debian,
            ..Default::default()
        };
        deb.hosts = Some("127.0.0.1 localhost\n127.0.1.1 template\n10.0.0.9 db\n".into());
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
