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
        let (cfg, p) = from_text("#cloud-config\nruncmdd: [ls]\napt: {}\nzzzz: 1\nwrite_files: [{path: /x, permision: '0600'}]\n");
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
                ("apt", 3, true, None),
                ("zzzz", 4, false, None),
                ("write_files[0].permision", 5, false, Some("permissions")),
            ]
        );
        assert!(p.iter().all(|p| p.severity == Severity::Unknown));
        // The entry itself is still written, with the default mode.
        assert_eq!(cfg.write_files[0].permissions, 0o644);
    }

    #[test]
    fn a_document_that_is_not_a_mapping_is_an_error() {
        for doc in ["- a\n- b\n", "just text\n", "a: [1\n"] {
            let (_, p) = from_text(doc);
            assert_eq!(p[0].severity, Severity::Error, "{doc}");
        }
    }
}
