//! The whole read: user-data (and vendor-data) bytes into one validated [`CloudConfig`]
//! and the script parts, with every problem placed by part and line.
//!
//! As cloud-init: the cloud-config parts of one user-data are merged in order with
//! `dict(replace)+list()+str()` (or the part's own `merge_how` / `Merge-Type`); the
//! vendor-data's merged cloud-config goes under the user-data's with `dict()+list()+str()`
//! (user-data wins), unless the user-data says `vendor_data: {enabled: false}`.

use serde::Serialize;

use super::document;
use super::jinja::Vars;
use super::merge::{self, merge, Mergers};
use super::modules::vendor_data as vendor;
use super::node::{self, Node, Value};
use super::parts::{self, Part, PartKind, PartsError};
use super::read::{Problem, Severity};
use super::CloudConfig;

/// Vendor-data parts are numbered from here, so a problem's part says which input it is in.
pub(crate) const VENDOR_PART: u16 = 1000;

/// What a part is, for the report (its body stays in [`ParsedUserData::scripts`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartInfo {
    /// Its number ([`VENDOR_PART`] and up for vendor-data).
    pub part: u16,
    /// What it is.
    pub kind: PartKind,
    /// Its file name, if it had one.
    pub filename: Option<String>,
    /// The line of the input its body starts on, when lines map one to one.
    pub first_line: Option<u32>,
    /// Whether it was rendered from a Jinja template (its lines are the rendered text's).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub template: bool,
}

/// User-data (and vendor-data), read.
#[derive(Debug, Clone, Serialize)]
pub struct ParsedUserData {
    /// The parts, in order (user-data's, then vendor-data's).
    pub parts: Vec<PartInfo>,
    /// The merged, validated cloud-config.
    pub config: CloudConfig,
    /// Whether vendor-data was merged in (present and not disabled).
    pub vendor_applied: bool,
    /// Every problem, in the order found.
    pub problems: Vec<Problem>,
    /// The script and boothook parts, user-data's then (if applied) vendor-data's.
    #[serde(skip)]
    pub scripts: Vec<(u16, Part)>,
}

impl ParsedUserData {
    /// Whether any problem refuses the document.
    pub fn has_errors(&self) -> bool {
        self.problems.iter().any(|p| p.severity == Severity::Error)
    }
}

/// Why the user-data (or vendor-data) could not even be split.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{which}: {err}")]
pub struct ReadError {
    /// `user-data` or `vendor-data`.
    pub which: &'static str,
    /// Why.
    #[source]
    pub err: PartsError,
}

/// One input's parts and its merged cloud-config.
struct Input {
    infos: Vec<PartInfo>,
    scripts: Vec<(u16, Part)>,
    merged: Option<Node>,
}

fn problem(part: u16, line: u32, path: &str, message: String) -> Problem {
    Problem {
        severity: Severity::Error,
        part,
        line,
        path: path.to_string(),
        message,
    }
}

/// Splits and merges one input; `base` numbers its parts.
fn input(
    data: &[u8],
    base: u16,
    which: &'static str,
    problems: &mut Vec<Problem>,
    vars: &Vars,
) -> Result<Input, ReadError> {
    let parts = parts::read(data, vars).map_err(|err| ReadError { which, err })?;
    let mut out = Input {
        infos: Vec::new(),
        scripts: Vec::new(),
        merged: None,
    };
    for p in parts {
        let number = base + u16::try_from(p.index).unwrap_or(u16::MAX - base);
        out.infos.push(PartInfo {
            part: number,
            kind: p.kind,
            filename: p.filename.clone(),
            first_line: p.first_line,
            template: p.template.is_some(),
        });
        if let Some(missing) = p.template.as_ref().filter(|m| !m.is_empty()) {
            // cloud-init's warning; the part is still used, with the markers in it.
            problems.push(Problem {
                severity: Severity::Warning,
                part: number,
                line: 1,
                path: String::new(),
                message: format!(
                    "the Jinja template uses variables the instance data does not define, \
                     rendered as {}<name>: {}",
                    super::jinja::MISSING,
                    missing.join(", ")
                ),
            });
        }
        if p.kind != PartKind::CloudConfig {
            out.scripts.push((number, p));
            continue;
        }
        let Ok(text) = std::str::from_utf8(&p.body) else {
            problems.push(problem(
                number,
                1,
                "",
                "the cloud-config is not UTF-8 text".into(),
            ));
            continue;
        };
        let mut doc = match node::parse(text, number) {
            Ok(d) => d,
            Err(e) => {
                let msg = e.to_string();
                let msg = msg
                    .split_once(": ")
                    .map_or(msg.clone(), |(_, m)| m.to_string());
                problems.push(problem(number, e.line(), "", msg));
                continue;
            }
        };
        match doc.value {
            // cloud-init: "empty cloud config", the part ignored.
            Value::Null => continue,
            Value::Map(_) => {}
            _ => {
                problems.push(problem(
                    number,
                    doc.line,
                    "",
                    format!(
                        "the document is {}; cloud-config is a mapping of keys such as runcmd:",
                        doc.kind()
                    ),
                ));
                continue;
            }
        }
        let Some(mergers) = part_mergers(&mut doc, p.merge_type.as_deref(), number, problems)
        else {
            continue;
        };
        let old = out
            .merged
            .take()
            .unwrap_or_else(|| Node::new(Value::Map(Vec::new()), 1, number));
        match merge(old.clone(), doc, &mergers) {
            Ok(m) => out.merged = Some(m),
            Err(why) => {
                problems.push(problem(
                    number,
                    1,
                    "",
                    format!("cannot be merged with the parts before it: {why}"),
                ));
                out.merged = Some(old);
            }
        }
    }
    Ok(out)
}

/// The part's mergers: its `merge_how` (or `merge_type`) key, taken out of the
/// document, over its `Merge-Type` header; cloud-init's part default when neither.
fn part_mergers(
    doc: &mut Node,
    header: Option<&str>,
    part: u16,
    problems: &mut Vec<Problem>,
) -> Option<Mergers> {
    let Value::Map(entries) = &mut doc.value else {
        return None;
    };
    let pos = entries
        .iter()
        .position(|(k, _)| k.text == "merge_how")
        .or_else(|| entries.iter().position(|(k, _)| k.text == "merge_type"));
    let yaml = pos.map(|i| entries.remove(i));
    let mut m = Mergers {
        dict: None,
        list: None,
        str_append: None,
    };
    let mut any = false;
    if let Some(h) = header.filter(|h| !h.trim().is_empty()) {
        match Mergers::parse(h) {
            Ok(parsed) => {
                m = parsed;
                any = true;
            }
            Err(why) => {
                problems.push(problem(part, 1, "Merge-Type", why));
                return None;
            }
        }
    }
    if let Some((k, v)) = yaml {
        let parsed = match &v.value {
            Value::Str(s) => Mergers::parse(s),
            Value::Seq(items) => merge::parse_list(items),
            _ => Err(format!(
                "is {}; write a string such as list(append)+dict(recurse_array)+str()",
                v.kind()
            )),
        };
        match parsed {
            // The document's own mergers come first in cloud-init's lookup: they win.
            Ok(p) => {
                m.dict = p.dict.or(m.dict);
                m.list = p.list.or(m.list);
                m.str_append = p.str_append.or(m.str_append);
                any = true;
            }
            Err(why) => {
                problems.push(problem(part, k.line, &k.text, why));
                return None;
            }
        }
    }
    Some(if any { m } else { Mergers::parts() })
}

/// Reads user-data and, if given, vendor-data, without instance data: a Jinja template's
/// variables all render as missing. The customization and the boot stages use
/// [`read_rendered`].
pub fn read(user: &[u8], vendor_data: Option<&[u8]>) -> Result<ParsedUserData, ReadError> {
    read_rendered(user, vendor_data, &Vars::empty())
}

/// Reads user-data and, if given, vendor-data, rendering Jinja templates with `vars`
/// (the instance data).
pub fn read_rendered(
    user: &[u8],
    vendor_data: Option<&[u8]>,
    vars: &Vars,
) -> Result<ParsedUserData, ReadError> {
    let mut problems = Vec::new();
    let user_in = input(user, 0, "user-data", &mut problems, vars)?;
    let mut infos = user_in.infos;
    let mut scripts = user_in.scripts;
    let mut merged = user_in.merged;
    let mut vendor_applied = false;
    if let Some(v) = vendor_data {
        let enabled = vendor::enabled(merged.as_ref().and_then(|m| m.get("vendor_data")));
        if enabled {
            let v_in = input(v, VENDOR_PART, "vendor-data", &mut problems, vars)?;
            infos.extend(v_in.infos);
            scripts.extend(v_in.scripts);
            vendor_applied = true;
            if let Some(vdoc) = v_in.merged {
                let base = merged
                    .take()
                    .unwrap_or_else(|| Node::new(Value::Map(Vec::new()), 1, 0));
                match merge(base.clone(), vdoc, &Mergers::vendor()) {
                    Ok(m) => merged = Some(m),
                    Err(why) => {
                        problems.push(problem(
                            VENDOR_PART,
                            1,
                            "",
                            format!("vendor-data cannot be merged under the user-data: {why}"),
                        ));
                        merged = Some(base);
                    }
                }
            }
        }
    }
    let (config, more) = match &merged {
        Some(doc) => document::from_node(doc),
        None => (CloudConfig::default(), Vec::new()),
    };
    problems.extend(more);
    Ok(ParsedUserData {
        parts: infos,
        config,
        vendor_applied,
        problems,
        scripts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::commands::Command;

    use crate::cloud_config::parts::test_multipart as mime;

    fn runcmd(u: &ParsedUserData) -> Vec<String> {
        u.config
            .runcmd
            .iter()
            .map(|c| match c {
                Command::Shell(s) => s.clone(),
                Command::Argv(a) => a.join(" "),
            })
            .collect()
    }

    #[test]
    fn parts_merge_later_wins_unless_merge_how_says() {
        let two = mime(&[
            (
                "Content-Type: text/cloud-config",
                "#cloud-config\nruncmd: [a, b]\nhostname: one",
            ),
            (
                "Content-Type: text/cloud-config",
                "#cloud-config\nruncmd: [c]",
            ),
            ("Content-Type: text/x-shellscript", "#!/bin/sh\necho hi"),
        ]);
        let u = read(two.as_bytes(), None).unwrap();
        assert!(u.problems.is_empty(), "{:?}", u.problems);
        assert_eq!(runcmd(&u), ["c"]);
        assert_eq!(u.config.hostname.as_ref().unwrap().as_str(), "one");
        assert_eq!(u.scripts.len(), 1);
        let appended = mime(&[
            ("Content-Type: text/cloud-config", "#cloud-config\nruncmd: [a, b]"),
            ("Content-Type: text/cloud-config", "#cloud-config\nmerge_how: 'dict(recurse_array,no_replace)+list(append)'\nruncmd: [c]"),
            ("Content-Type: text/cloud-config\nMerge-Type: dict(recurse_array,no_replace)+list(prepend)", "#cloud-config\nruncmd: [z]"),
        ]);
        let u = read(appended.as_bytes(), None).unwrap();
        assert!(u.problems.is_empty(), "{:?}", u.problems);
        assert_eq!(runcmd(&u), ["z", "a", "b", "c"]);
    }

    #[test]
    fn vendor_data_goes_under_user_data_unless_disabled() {
        let vendor = b"#cloud-config\nruncmd: [vendor]\nntp: {servers: [v.example]}\nfinal_message: from vendor\n";
        let user = b"#cloud-config\nruncmd: [user]\nntp: {enabled: false}\n";
        let u = read(user, Some(vendor)).unwrap();
        assert!(u.vendor_applied);
        assert_eq!(runcmd(&u), ["user"]);
        let ntp = u.config.ntp.as_ref().unwrap();
        assert_eq!(
            (ntp.enabled, ntp.servers.as_slice()),
            (false, &["v.example".to_string()][..])
        );
        assert_eq!(u.config.final_message.as_deref(), Some("from vendor"));
        for off in [
            "vendor_data: {enabled: false}",
            "vendor_data: false",
            "vendor_data: {enabled: 'no'}",
        ] {
            let user = format!("#cloud-config\n{off}\n");
            let u = read(user.as_bytes(), Some(vendor)).unwrap();
            assert!(!u.vendor_applied, "{off}");
            assert!(u.config.runcmd.is_empty(), "{off}");
        }
        let u = read(
            b"#cloud-config\nvendor_data: {prefix: [/usr/bin/env]}\n",
            Some(vendor),
        )
        .unwrap();
        assert!(u.vendor_applied);
        // Vendor-data without user-data still applies; a vendor script is kept apart.
        let u = read(b"", Some(b"#!/bin/sh\necho v\n")).unwrap();
        assert_eq!(u.scripts[0].0, VENDOR_PART);
    }

    #[test]
    fn problems_name_their_part_and_line() {
        let text = mime(&[
            (
                "Content-Type: text/cloud-config",
                "#cloud-config\nhostname: ok",
            ),
            (
                "Content-Type: text/cloud-config",
                "#cloud-config\nruncmd: [a]\nbootcmd: 5",
            ),
            ("Content-Type: text/cloud-config", "#cloud-config\na: [1"),
            (
                "Content-Type: text/cloud-config",
                "#cloud-config\nmerge_how: 'sideways()'\nb: 1",
            ),
        ]);
        let u = read(text.as_bytes(), None).unwrap();
        let got: Vec<(u16, u32, &str)> = u
            .problems
            .iter()
            .map(|p| (p.part, p.line, p.path.as_str()))
            .collect();
        assert_eq!(got[0].0, 2);
        assert_eq!(got[1].0, 3);
        assert!(got.contains(&(1, 3, "bootcmd")), "{got:?}");
        assert_eq!(u.parts[1].first_line, Some(12));
        let e = read(b"#include\nhttp://x\n", None).unwrap_err();
        assert_eq!(e.which, "user-data");
    }
}
