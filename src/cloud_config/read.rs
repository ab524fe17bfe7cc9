//! Reading typed values out of [`Node`]s, each problem recorded with its part, line and
//! key path, and what to write instead.

use serde::Serialize;

use super::node::{Key, Node, Value};
use crate::model::quote;

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Severity {
    /// Worth knowing (a deprecated spelling); the document applies as written.
    Warning,
    /// Not applied, the rest of the document is: a key vmcust does not implement (a
    /// cloud-init module it lacks, or a typo), or a value cloud-init takes that vmcust
    /// cannot apply. The customization ends *degraded* naming it, or, with `[user-data]
    /// cloud_config_unknown = refuse`, the document is refused.
    Unknown,
    /// A wrong value: the document is refused.
    Error,
}

/// One problem of a cloud-config document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// How bad.
    pub severity: Severity,
    /// The user-data part (0-based).
    pub part: u16,
    /// The line within the part, 1-based.
    pub line: u32,
    /// The key path, such as `write_files[2].permissions`.
    pub path: String,
    /// What is wrong and how to fix it (never a secret value).
    pub message: String,
}

/// Collects problems while values are read.
#[derive(Debug, Default)]
pub struct Reader {
    problems: Vec<Problem>,
}

impl Reader {
    /// An empty reader.
    pub fn new() -> Self {
        Reader::default()
    }

    /// The problems found, in the order found.
    pub fn into_problems(self) -> Vec<Problem> {
        self.problems
    }

    /// Records a problem at `node`.
    pub fn report(
        &mut self,
        severity: Severity,
        node: &Node,
        path: &str,
        message: impl Into<String>,
    ) {
        self.problems.push(Problem {
            severity,
            part: node.part,
            line: node.line,
            path: path.to_string(),
            message: message.into(),
        });
    }

    /// Records an error at `node`.
    pub fn error(&mut self, node: &Node, path: &str, message: impl Into<String>) {
        self.report(Severity::Error, node, path, message);
    }

    /// Records what is not applied though cloud-init takes it (a value vmcust cannot
    /// apply, or a part of an entry it leaves out): `why`, then what to do instead; the
    /// rest of the document applies, and the customization ends degraded.
    pub fn not_applied(&mut self, node: &Node, path: &str, why: &str, instead: &str) {
        self.report(
            Severity::Unknown,
            node,
            path,
            format!("{why}; not applied (the customization ends degraded): {instead}"),
        );
    }

    /// Records a wrong type: what it is, what it should be.
    pub fn wrong_type(&mut self, node: &Node, path: &str, want: &str) {
        self.error(node, path, format!("is {}; write {want}", node.kind()));
    }

    /// A boolean (YAML 1.1: `true`, `yes`, `on`…).
    pub fn bool(&mut self, node: &Node, path: &str) -> Option<bool> {
        match node.value {
            Value::Bool(b) => Some(b),
            _ => {
                self.wrong_type(node, path, "true or false");
                None
            }
        }
    }

    /// A string of at most `max` bytes.
    pub fn string(&mut self, node: &Node, path: &str, max: usize) -> Option<String> {
        match &node.value {
            Value::Str(s) if s.len() > max => {
                self.error(
                    node,
                    path,
                    format!("is {} bytes long; at most {max}", s.len()),
                );
                None
            }
            Value::Str(s) => Some(s.clone()),
            _ => {
                self.wrong_type(node, path, "a string");
                None
            }
        }
    }

    /// A single-line string without control characters, of at most `max` bytes.
    pub fn line(&mut self, node: &Node, path: &str, max: usize) -> Option<String> {
        let s = self.string(node, path, max)?;
        if let Some(c) = s.chars().find(|c| c.is_control()) {
            self.error(
                node,
                path,
                format!("{} holds the control character {c:?}; remove it", quote(&s)),
            );
            return None;
        }
        Some(s)
    }

    /// A list of at most `max` entries.
    pub fn list<'n>(&mut self, node: &'n Node, path: &str, max: usize) -> Option<&'n [Node]> {
        match &node.value {
            Value::Seq(items) if items.len() > max => {
                self.error(
                    node,
                    path,
                    format!("has {} entries; at most {max}", items.len()),
                );
                None
            }
            Value::Seq(items) => Some(items),
            _ => {
                self.wrong_type(node, path, "a list");
                None
            }
        }
    }

    /// A mapping whose keys are all in `known`; any other key is reported unknown (with
    /// a did-you-mean) under `path`, and left out.
    pub fn map<'n>(
        &mut self,
        node: &'n Node,
        path: &str,
        known: &[&str],
    ) -> Option<Vec<(&'n Key, &'n Node)>> {
        let Value::Map(entries) = &node.value else {
            self.wrong_type(node, path, "a mapping");
            return None;
        };
        let mut out = Vec::new();
        for (k, v) in entries {
            if known.contains(&k.text.as_str()) {
                out.push((k, v));
            } else {
                let at = Node::new(Value::Null, k.line, node.part);
                let full = join(path, &k.text);
                // A nested key of cloud-init's that vmcust leaves out (`ntp.config`).
                let message = match super::instead::instead(&general(&full)) {
                    Some(_) => unknown_message(&general(&full), [], true),
                    None => unknown_message(&k.text, known.iter().copied(), false),
                };
                self.report(Severity::Unknown, &at, &full, message);
            }
        }
        Some(out)
    }
}

/// `parent.key`, or `key` at the top.
pub(crate) fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

/// A key path without its list indices: `write_files[2].source` → `write_files.source`.
pub fn general(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut depth = 0usize;
    for c in path.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            c if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// `parent[i]`.
pub(crate) fn index(parent: &str, i: usize) -> String {
    format!("{parent}[{i}]")
}

/// The message for a key vmcust does not take, with the key it probably meant.
pub(crate) fn unknown_message<'a>(
    key: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    cloud_init_knows: bool,
) -> String {
    if cloud_init_knows {
        let hint = super::instead::instead(key).unwrap_or(
            "hand the user-data to a real cloud-init ([user-data] handler = cloud-init)",
        );
        return format!("a cloud-init key vmcust does not implement; not applied (the customization ends degraded): {hint}");
    }
    match vmcust_imc::closest(key, candidates) {
        Some(meant) => format!("unknown key; did you mean {meant}?"),
        None => "unknown key".into(),
    }
}

/// The did-you-mean part of an unknown key's message, if any.
pub(crate) fn suggestion(message: &str) -> Option<&str> {
    message
        .split_once("did you mean ")
        .map(|(_, m)| m.trim_end_matches('?'))
}
