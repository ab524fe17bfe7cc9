//! `ca_certs` (and the deprecated `ca-certs`): certificates to trust, and whether the
//! distribution's defaults are removed.

use serde::Serialize;

use super::node::Node;
use super::read::{index, join, Reader, Severity};
use super::CloudConfig;

/// Most certificates.
pub const MAX_CERTS: usize = 256;
/// Largest PEM text of one entry.
pub const MAX_CERT: usize = 64 * 1024;

/// `ca_certs`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CaCerts {
    /// Remove the distribution's trusted certificates first (default false).
    pub remove_defaults: bool,
    /// PEM certificates to trust.
    pub trusted: Vec<String>,
}

/// `ca_certs`.
pub fn parse(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
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
                        r.error(c, &at, "is not a PEM certificate; paste the whole -----BEGIN CERTIFICATE----- … -----END CERTIFICATE----- block");
                    } else {
                        out.trusted.push(pem);
                    }
                }
            }
        }
    }
    cfg.ca_certs = Some(out);
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
            ("ca_certs: {trusted: [hello]}", "not a PEM certificate"),
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
        let (cfg, p) = document::from_text("ca-certs: {remove-defaults: true}");
        assert!(cfg.ca_certs.unwrap().remove_defaults);
        assert_eq!(p.len(), 2);
        assert!(p.iter().all(|p| p.severity == Severity::Warning));
    }
}
