//! `ca_certs` (cloud-init's `cc_ca_certs`): the trusted certificates written into the
//! place the root's certificate tool reads — `/usr/local/share/ca-certificates/`
//! (Debian's `update-ca-certificates`) or `/etc/pki/ca-trust/source/anchors/` (RHEL's
//! `update-ca-trust`) —, `remove_defaults` without deleting a packaged file, then the
//! update command in the same stage.

use crate::cloud_config::CloudConfig;
use crate::plan::{Action, Contents};

use super::error::ModuleError;
use super::facts::CcFacts;

/// The file the certificates are written to (one file, as cloud-init 22.4 writes).
pub const CERT_FILE: &str = "cloud-init-ca-certs.crt";
/// Debian's directory of local certificates (no `/etc/ca-certificates.conf` line needed).
pub const DEBIAN_DIR: &str = "/usr/local/share/ca-certificates";
/// Debian's list of the distribution certificates to trust.
pub const DEBIAN_CONF: &str = "/etc/ca-certificates.conf";
/// RHEL's directory of local trust anchors.
pub const RHEL_DIR: &str = "/etc/pki/ca-trust/source/anchors";
/// RHEL's bundle of the distribution's certificates.
pub const RHEL_BUNDLE: &str = "/usr/share/pki/ca-trust-source/ca-bundle.trust.p11-kit";

/// What `ca_certs` does: files, then commands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertsPlan {
    /// The certificate file, and what removes the defaults.
    pub actions: Vec<Action>,
    /// The update command.
    pub commands: Vec<Vec<String>>,
}

/// Plans `cfg.ca_certs`; `None` without it.
pub fn plan_ca_certs(cfg: &CloudConfig, facts: &CcFacts) -> Result<Option<CertsPlan>, ModuleError> {
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
            Action::WriteFile {
                path: DEBIAN_CONF.into(),
                mode: 0o644,
                contents: Contents::text(String::new()),
                purpose: "cloud-config ca_certs remove_defaults",
            }
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
        actions.push(Action::WriteFile {
            path: format!("{dir}/{CERT_FILE}").into(),
            mode: 0o644,
            contents: Contents::text(text),
            purpose: "cloud-config ca_certs",
        });
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::document;

    const CERT: &str = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

    fn with(tool: &str) -> CcFacts {
        let mut f = CcFacts::default();
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
            plan_ca_certs(&cfg, &CcFacts::default()).unwrap_err(),
            ModuleError::NoCertTool
        );
        assert_eq!(
            plan_ca_certs(&document::from_text("{}").0, &CcFacts::default()).unwrap(),
            None
        );
    }
}
