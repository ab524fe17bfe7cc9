//! One merged cloud-config document into a [`CloudConfig`]: each top-level key handed to
//! its module table row's parser; a key no row takes kept as unknown, with a did-you-mean.

use serde::Serialize;

use super::modules::{self, CLOUD_INIT_ONLY};
use super::node::{self, Node, Value};
use super::read::{suggestion, unknown_message, Problem, Reader, Severity};
use super::CloudConfig;

/// A key vmcust does not implement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnknownKey {
    /// Its path (`ntp.peers`, `apt`).
    pub key: String,
    /// The part it is in.
    pub part: u16,
    /// Its line.
    pub line: u32,
    /// Whether cloud-init knows it (a module vmcust lacks) or nobody does (a typo).
    pub cloud_init_knows: bool,
    /// The key probably meant.
    pub did_you_mean: Option<String>,
}

/// Reads a merged document (a mapping, or null for an empty one).
pub fn from_node(doc: &Node) -> (CloudConfig, Vec<Problem>) {
    let mut cfg = CloudConfig::default();
    let mut r = Reader::new();
    match &doc.value {
        Value::Null => {}
        Value::Map(entries) => {
            for (k, v) in entries {
                match modules::lookup(&k.text) {
                    Some((_, key)) => (key.parse)(&mut cfg, &mut r, &k.text, v),
                    None => {
                        let knows = CLOUD_INIT_ONLY.contains(&k.text.as_str());
                        let candidates = modules::keys().chain(CLOUD_INIT_ONLY.iter().copied());
                        let at = Node::new(Value::Null, k.line, v.part);
                        r.report(
                            Severity::Unknown,
                            &at,
                            &k.text,
                            unknown_message(&k.text, candidates, knows),
                        );
                    }
                }
            }
        }
        _ => r.error(
            doc,
            "",
            format!(
                "the document is {}; cloud-config is a mapping of keys such as runcmd:",
                doc.kind()
            ),
        ),
    }
    let problems = r.into_problems();
    cfg.unknown = problems
        .iter()
        .filter(|p| p.severity == Severity::Unknown)
        .map(|p| UnknownKey {
            key: p.path.clone(),
            part: p.part,
            line: p.line,
            cloud_init_knows: !p.message.starts_with("unknown key"),
            did_you_mean: suggestion(&p.message).map(str::to_string),
        })
        .collect();
    (cfg, problems)
}

/// Reads one `#cloud-config` text (a YAML error is a problem at its line).
pub fn from_text(text: &str) -> (CloudConfig, Vec<Problem>) {
    match node::parse(text, 0) {
        Ok(doc) => from_node(&doc),
        Err(e) => (
            CloudConfig::default(),
            vec![Problem {
                severity: Severity::Error,
                part: 0,
                line: e.line(),
                path: String::new(),
                message: e
                    .to_string()
                    .split_once(": ")
                    .map_or(e.to_string(), |(_, m)| m.to_string()),
            }],
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_are_kept_with_a_suggestion() {
        let (cfg, p) = from_text("#cloud-config\nruncmdd: [ls]\nlandscape: {}\nzzzz: 1\nwrite_files: [{path: /x, permision: '0600'}]\n");
        let got: Vec<(&str, u32, bool, Option<&str>)> = cfg
            .unknown
            .iter()
            .map(|u| {
                (
                    u.key.as_str(),
                    u.line,
                    u.cloud_init_knows,
                    u.did_you_mean.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("runcmdd", 2, false, Some("runcmd")),
                ("landscape", 3, true, None),
                ("zzzz", 4, false, None),
                ("write_files[0].permision", 5, false, Some("permissions")),
            ]
        );
        assert!(p.iter().all(|p| p.severity == Severity::Unknown));
        // The entry itself is still written, with the default mode.
        assert_eq!(cfg.write_files[0].permissions, 0o644);
    }

    /// A misspelt key inside an entry of every module that takes a mapping is named with
    /// its line and the key probably meant, and the entry is not silently read without it.
    #[test]
    fn unknown_keys_inside_every_module_entry_are_named() {
        let table: &[(&str, &str, u32, Option<&str>)] = &[
            // (document after `#cloud-config`, key path, line, did you mean)
            (
                "users:\n- name: a\n  passwrd: x\n",
                "users[0].passwrd",
                4,
                Some("passwd"),
            ),
            (
                "chpasswd:\n  users:\n  - name: a\n    pasword: x\n",
                "chpasswd.users[0].pasword",
                5,
                Some("password"),
            ),
            (
                "chpasswd:\n  users:\n  - {name: a, type: RANDOM}\n  - name: b\n    typ: text\n",
                "chpasswd.users[1].typ",
                6,
                Some("type"),
            ),
            (
                "chpasswd:\n  expier: false\n",
                "chpasswd.expier",
                3,
                Some("expire"),
            ),
            (
                "write_files:\n- path: /x\n  permisions: '0600'\n",
                "write_files[0].permisions",
                4,
                Some("permissions"),
            ),
            (
                "ca_certs:\n  trustd: [x]\n",
                "ca_certs.trustd",
                3,
                Some("trusted"),
            ),
            ("ntp:\n  server: [a.b]\n", "ntp.server", 3, Some("servers")),
            (
                "power_state:\n  mode: reboot\n  delya: now\n",
                "power_state.delya",
                4,
                Some("delay"),
            ),
            ("growpart:\n  mod: auto\n", "growpart.mod", 3, Some("mode")),
            (
                "vendor_data:\n  enabld: true\n",
                "vendor_data.enabld",
                3,
                Some("enabled"),
            ),
        ];
        for (doc, key, line, meant) in table {
            let (cfg, problems) = from_text(&format!("#cloud-config\n{doc}"));
            let found = cfg.unknown.iter().find(|u| u.key == *key);
            let Some(u) = found else {
                panic!("{doc}: {key} not named: {:?} {problems:?}", cfg.unknown)
            };
            assert_eq!(
                (u.line, u.did_you_mean.as_deref()),
                (*line, *meant),
                "{doc}"
            );
            assert!(!u.cloud_init_knows, "{doc}");
            let p = problems.iter().find(|p| p.path == *key).unwrap();
            assert_eq!((p.severity, p.line), (Severity::Unknown, *line), "{doc}");
        }
    }

    #[test]
    fn a_document_that_is_not_a_mapping_is_an_error() {
        for doc in ["- a\n- b\n", "just text\n", "a: [1\n"] {
            let (_, p) = from_text(doc);
            assert_eq!(p[0].severity, Severity::Error, "{doc}");
        }
    }
}
