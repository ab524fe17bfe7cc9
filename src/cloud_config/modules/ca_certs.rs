//! `ca_certs` (and the deprecated `ca-certs`): certificates to trust, and whether the
//! distribution's defaults are removed.
//!
//! `ca_certs` (cloud-init's `cc_ca_certs`): the trusted certificates written into the
//! place the root's certificate tool reads — `/usr/local/share/ca-certificates/`
//! (Debian's `update-ca-certificates`) or `/etc/pki/ca-trust/source/anchors/` (RHEL's
//! `update-ca-trust`) —, `remove_defaults` without deleting a packaged file, then the
//! update command in the same stage.

use crate::cloud_config::apply::driver::{absent, failed, from_end, ModuleOutcome, Step};
use crate::cloud_config::apply::error::ModuleError;
use crate::cloud_config::apply::preview::{action_lines, run_lines, Look};
use crate::cloud_config::node::Node;
use crate::cloud_config::read::{index, join, Reader, Severity};
use crate::cloud_config::CloudConfig;
use crate::facts::Facts;
use crate::plan::{Action, Contents};
use serde::Serialize;

/// Most certificates.
pub(crate) const MAX_CERTS: usize = 256;
/// Largest PEM text of one entry.
pub(crate) const MAX_CERT: usize = 64 * 1024;

/// `ca_certs`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CaCerts {
    /// Remove the distribution's trusted certificates first (default false).
    pub remove_defaults: bool,
    /// PEM certificates to trust.
    pub trusted: Vec<String>,
}

/// `ca_certs`.
pub(crate) fn parse(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    if key == "ca-certs" {
        r.report(
            Severity::Warning,
            node,
            key,
            "deprecated (cloud-init 22.3); write ca_certs",
        );
    }
    let Some(map) = r.map(
        node,
        key,
        &["remove_defaults", "remove-defaults", "trusted"],
    ) else {
        return;
    };
    let mut out = CaCerts {
        remove_defaults: false,
        trusted: Vec::new(),
    };
    for (k, v) in map {
        let at = join(key, &k.text);
        match k.text.as_str() {
            "remove_defaults" | "remove-defaults" => {
                if k.text == "remove-defaults" {
                    r.report(
                        Severity::Warning,
                        v,
                        &at,
                        "deprecated (cloud-init 22.3); write remove_defaults",
                    );
                }
                out.remove_defaults = r.bool(v, &at).unwrap_or(false);
            }
            _ => {
                let Some(items) = r.list(v, &at, MAX_CERTS) else {
                    continue;
                };
                for (i, c) in items.iter().enumerate() {
                    let at = index(&at, i);
                    let Some(pem) = r.string(c, &at, MAX_CERT) else {
                        continue;
                    };
                    let begins = pem.matches("-----BEGIN CERTIFICATE-----").count();
                    let ends = pem.matches("-----END CERTIFICATE-----").count();
                    if begins == 0 || begins != ends || pem.contains('\0') {
                        // cloud-init writes it as it is, and the trust store's tools
                        // skip it: this one is left out, the others are trusted.
                        r.not_applied(
                            c,
                            &at,
                            "is not a PEM certificate",
                            "paste the whole -----BEGIN CERTIFICATE----- … -----END CERTIFICATE----- block",
                        );
                    } else {
                        out.trusted.push(pem);
                    }
                }
            }
        }
    }
    cfg.ca_certs = Some(out);
}

/// The file the certificates are written to (one file, as cloud-init 22.4 writes).
pub(crate) const CERT_FILE: &str = "cloud-init-ca-certs.crt";
/// Debian's directory of local certificates (no `/etc/ca-certificates.conf` line needed).
pub(crate) const DEBIAN_DIR: &str = "/usr/local/share/ca-certificates";
/// Debian's list of the distribution certificates to trust.
pub(crate) const DEBIAN_CONF: &str = "/etc/ca-certificates.conf";
/// RHEL's directory of local trust anchors.
pub(crate) const RHEL_DIR: &str = "/etc/pki/ca-trust/source/anchors";
/// RHEL's bundle of the distribution's certificates.
pub(crate) const RHEL_BUNDLE: &str = "/usr/share/pki/ca-trust-source/ca-bundle.trust.p11-kit";

/// What `ca_certs` does: files, then commands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CertsPlan {
    /// The certificate file, and what removes the defaults.
    pub actions: Vec<Action>,
    /// The update command.
    pub commands: Vec<Vec<String>>,
}

/// Plans `cfg.ca_certs`; `None` without it.
pub(crate) fn plan_ca_certs(
    cfg: &CloudConfig,
    facts: &Facts,
) -> Result<Option<CertsPlan>, ModuleError> {
    let Some(ca) = &cfg.ca_certs else {
        return Ok(None);
    };
    let debian = if facts.has("update-ca-certificates") {
        true
    } else if facts.has("update-ca-trust") {
        false
    } else {
        return Err(ModuleError::NoCertTool);
    };
    let mut actions = Vec::new();
    if ca.remove_defaults {
        actions.push(if debian {
            // An empty list: update-ca-certificates --fresh then trusts none of the
            // distribution's certificates, which stay installed (the package owns them).
            Action::write_file(
                DEBIAN_CONF,
                Contents::text(String::new()),
                0o644,
                "cloud-config ca_certs remove_defaults",
            )
        } else {
            Action::Rename {
                from: RHEL_BUNDLE.into(),
                to: format!("{RHEL_BUNDLE}.vmcust-removed").into(),
                purpose: "cloud-config ca_certs remove_defaults",
            }
        });
    }
    if !ca.trusted.is_empty() {
        let dir = if debian { DEBIAN_DIR } else { RHEL_DIR };
        let mut text = ca.trusted.join("\n");
        if !text.ends_with('\n') {
            text.push('\n');
        }
        actions.push(Action::write_file(
            format!("{dir}/{CERT_FILE}"),
            Contents::text(text),
            0o644,
            "cloud-config ca_certs",
        ));
    }
    let command: Vec<String> = match (debian, ca.remove_defaults) {
        (true, true) => vec!["update-ca-certificates".into(), "--fresh".into()],
        (true, false) => vec!["update-ca-certificates".into()],
        (false, _) => vec!["update-ca-trust".into()],
    };
    Ok(Some(CertsPlan {
        actions,
        commands: vec![command],
    }))
}

/// The programs it may run.
pub(crate) fn programs(cfg: &CloudConfig) -> &'static [&'static str] {
    if cfg.ca_certs.is_some() {
        &["update-ca-certificates", "update-ca-trust"]
    } else {
        &[]
    }
}

/// Writes the certificates, then has the root's tool rebuild its bundle.
pub(crate) fn run(s: &Step) -> ModuleOutcome {
    match plan_ca_certs(s.cfg, s.cc) {
        Err(e) => failed(e.to_string()),
        Ok(None) => absent("ca_certs"),
        Ok(Some(p)) => match s.apply(p.actions) {
            Err(e) => failed(e),
            Ok(note) => from_end(s.follow_up("ca_certs", &p.commands), note),
        },
    }
}

/// The files and commands.
pub(crate) fn preview(l: &Look) -> Vec<String> {
    match plan_ca_certs(l.cfg, l.facts) {
        Err(e) => vec![format!("fails: {e}")],
        Ok(None) => vec!["nothing: no ca_certs".into()],
        Ok(Some(p)) => p
            .actions
            .iter()
            .flat_map(action_lines)
            .chain(run_lines(&p.commands))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use crate::cloud_config::document;
    use crate::cloud_config::read::Severity;

    #[test]
    fn certs_good_and_hostile() {
        let (cfg, p) = document::from_text("ca_certs:\n  remove_defaults: true\n  trusted:\n  - |\n    -----BEGIN CERTIFICATE-----\n    MIIB\n    -----END CERTIFICATE-----\n");
        assert!(p.is_empty(), "{p:?}");
        let c = cfg.ca_certs.unwrap();
        assert!(c.remove_defaults);
        assert_eq!(c.trusted.len(), 1);
        for (doc, want) in [
            ("ca_certs: {trusted: x}", "is a string; write a list"),
            ("ca_certs: {remove_defaults: maybe}", "write true or false"),
        ] {
            let (_, p) = document::from_text(doc);
            assert!(
                p.iter()
                    .any(|p| p.severity == Severity::Error && p.message.contains(want)),
                "{doc}: {p:?}"
            );
        }
        // cloud-init writes a non-certificate as given and the trust store skips it: that
        // entry is not applied (degraded), the others are trusted, the document applies.
        let (cfg, p) = document::from_text("ca_certs:\n  trusted:\n  - single_line_cert\n  - |\n    -----BEGIN CERTIFICATE-----\n    MIIB\n    -----END CERTIFICATE-----\n");
        assert_eq!(cfg.ca_certs.unwrap().trusted.len(), 1);
        assert_eq!(
            p.iter()
                .map(|p| (p.severity, p.path.as_str(), p.line))
                .collect::<Vec<_>>(),
            [(Severity::Unknown, "ca_certs.trusted[0]", 3)]
        );
        assert!(
            p[0].message.contains("not a PEM certificate; not applied"),
            "{p:?}"
        );
        assert_eq!(cfg.unknown.len(), 1);
        let (cfg, p) = document::from_text("ca-certs: {remove-defaults: true}");
        assert!(cfg.ca_certs.unwrap().remove_defaults);
        assert_eq!(p.len(), 2);
        assert!(p.iter().all(|p| p.severity == Severity::Warning));
    }

    use super::*;

    const CERT: &str = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

    fn with(tool: &str) -> Facts {
        let mut f = Facts::default();
        f.programs.insert(tool.into(), format!("/usr/sbin/{tool}"));
        f
    }

    fn show(p: &CertsPlan) -> String {
        let mut out: Vec<String> = p
            .actions
            .iter()
            .map(|a| match a {
                Action::WriteFile { path, contents, .. } => {
                    format!("write {} {:?}", path.display(), contents.display())
                }
                Action::Rename { from, to, .. } => {
                    format!("rename {} {}", from.display(), to.display())
                }
                other => format!("{other:?}"),
            })
            .collect();
        out.extend(p.commands.iter().map(|c| format!("run {}", c.join(" "))));
        out.join("\n")
    }

    #[test]
    fn ca_certs_goldens() {
        let doc = format!(
            "ca_certs:\n  remove_defaults: true\n  trusted:\n  - |\n{}",
            CERT.lines()
                .map(|l| format!("    {l}\n"))
                .collect::<String>()
        );
        let (cfg, p) = document::from_text(&doc);
        assert!(p.is_empty(), "{p:?}");
        assert_eq!(
            show(&plan_ca_certs(&cfg, &with("update-ca-certificates")).unwrap().unwrap()),
            format!(
                "write /etc/ca-certificates.conf \"\"\nwrite /usr/local/share/ca-certificates/cloud-init-ca-certs.crt {CERT:?}\nrun update-ca-certificates --fresh"
            )
        );
        assert_eq!(
            show(&plan_ca_certs(&cfg, &with("update-ca-trust")).unwrap().unwrap()),
            format!(
                "rename {RHEL_BUNDLE} {RHEL_BUNDLE}.vmcust-removed\nwrite /etc/pki/ca-trust/source/anchors/cloud-init-ca-certs.crt {CERT:?}\nrun update-ca-trust"
            )
        );
        let (cfg, _) = document::from_text("ca_certs: {remove_defaults: false}");
        assert_eq!(
            show(
                &plan_ca_certs(&cfg, &with("update-ca-certificates"))
                    .unwrap()
                    .unwrap()
            ),
            "run update-ca-certificates"
        );
        assert_eq!(
            plan_ca_certs(&cfg, &Facts::default()).unwrap_err(),
            ModuleError::NoCertTool
        );
        assert_eq!(
            plan_ca_certs(&document::from_text("{}").0, &Facts::default()).unwrap(),
            None
        );
    }
}
