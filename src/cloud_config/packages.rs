//! `packages` (names and `[name, version]` pairs), `package_update`, `package_upgrade`,
//! `package_reboot_if_required` (and their deprecated `apt_` spellings, any true
//! meaning true, as cloud-init ORs them).

use serde::Serialize;

use super::node::{Node, Value};
use super::read::{index, Reader, Severity};
use super::CloudConfig;
use crate::model::quote;

/// Most packages.
pub const MAX_PACKAGES: usize = 1024;

/// One package to install.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Package {
    /// Its name (an architecture qualifier such as `:amd64` allowed).
    pub name: String,
    /// The version asked for, if any.
    pub version: Option<String>,
}

/// A package name or version no package manager could take as an option or as two
/// words: starts with a letter or digit, then letters, digits and `+ . _ - : ~`.
fn word_ok(s: &str, extra: &[u8]) -> bool {
    !s.is_empty()
        && s.len() <= 256
        && s.as_bytes()[0].is_ascii_alphanumeric()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+._-".contains(&b) || extra.contains(&b))
}

fn word(r: &mut Reader, at: &str, node: &Node, what: &str, extra: &[u8]) -> Option<String> {
    let s = match &node.value {
        Value::Str(s) => s.clone(),
        Value::Int(n) if what == "version" => n.to_string(),
        Value::Float(f) if what == "version" => f.to_string(),
        _ => {
            r.wrong_type(node, at, &format!("a package {what} (a string)"));
            return None;
        }
    };
    if word_ok(&s, extra) {
        Some(s)
    } else {
        r.error(node, at, format!("{} is not a package {what}; it starts with a letter or digit and holds letters, digits and + . _ - :", quote(&s)));
        None
    }
}

/// `packages`.
pub fn packages(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    let Some(items) = r.list(node, key, MAX_PACKAGES) else {
        return;
    };
    for (i, item) in items.iter().enumerate() {
        let at = index(key, i);
        match &item.value {
            Value::Str(_) => {
                if let Some(name) = word(r, &at, item, "name", b":*") {
                    cfg.packages.push(Package {
                        name,
                        version: None,
                    });
                }
            }
            Value::Seq(pair) if pair.len() == 2 => {
                let name = word(r, &index(&at, 0), &pair[0], "name", b":");
                let version = word(r, &index(&at, 1), &pair[1], "version", b":~");
                if let (Some(name), Some(version)) = (name, version) {
                    cfg.packages.push(Package {
                        name,
                        version: Some(version),
                    });
                }
            }
            Value::Seq(_) => r.error(item, &at, "a list entry is [name, version]: two entries"),
            Value::Map(_) => r.report(
                Severity::Unknown,
                item,
                &at,
                "package-manager lists (apt:, snap:) are not implemented; list the names directly",
            ),
            _ => r.wrong_type(item, &at, "a package name or [name, version]"),
        }
    }
}

fn flag(r: &mut Reader, key: &str, node: &Node, field: &mut bool) {
    if let Some(rest) = key.strip_prefix("apt_") {
        r.report(
            Severity::Warning,
            node,
            key,
            format!("deprecated (cloud-init 22.2); write package_{rest}"),
        );
    }
    if let Some(b) = r.bool(node, key) {
        *field |= b;
    }
}

/// `package_update` / `apt_update`.
pub fn update(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    flag(r, key, node, &mut cfg.package_update);
}

/// `package_upgrade` / `apt_upgrade`.
pub fn upgrade(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    flag(r, key, node, &mut cfg.package_upgrade);
}

/// `package_reboot_if_required` / `apt_reboot_if_required`.
pub fn reboot_if_required(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    flag(r, key, node, &mut cfg.package_reboot_if_required);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::document;

    #[test]
    fn packages_good_and_hostile() {
        let (cfg, p) = document::from_text("packages: [nginx, [libc6, 2.36-9], 'python3-*', [foo, 1.2]]\napt_update: true\npackage_update: false\n");
        assert!(p.iter().all(|p| p.severity == Severity::Warning), "{p:?}");
        let got: Vec<(&str, Option<&str>)> = cfg
            .packages
            .iter()
            .map(|p| (p.name.as_str(), p.version.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("nginx", None),
                ("libc6", Some("2.36-9")),
                ("python3-*", None),
                ("foo", Some("1.2"))
            ]
        );
        assert!(cfg.package_update);
        let table: &[(&str, &str)] = &[
            ("packages: ['--force-yes']", "not a package name"),
            ("packages: ['a b']", "not a package name"),
            ("packages: [[a]]", "two entries"),
            ("packages: [[a, '-1']]", "packages[0][1]"),
            ("packages: [5]", "a package name or [name, version]"),
            ("packages: nginx", "is a string; write a list"),
            ("package_upgrade: 'yes'", "write true or false"),
        ];
        for (doc, want) in table {
            let (_, p) = document::from_text(doc);
            assert!(
                p.iter().any(|p| p.severity == Severity::Error
                    && format!("{}: {}", p.path, p.message).contains(want)),
                "{doc}: {p:?}"
            );
        }
    }
}
