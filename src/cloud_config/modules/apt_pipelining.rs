//! `apt_pipelining`: apt's HTTP pipeline depth, as cloud-init's `cc_apt_pipelining` sets it.
//!
//! `false` writes depth 0 (pipelining off), an integer 0–5 that depth, `none`, `unchanged`
//! and `os` leave apt's default; cloud-init ignores anything else with a warning ("Invalid
//! option for apt_pipelining"), and so does vmcust, at the key's line. Only on a root with
//! apt-get (cloud-init's `distros` for it are the apt family).

use crate::cloud_config::apply::driver::{skipped, ModuleOutcome, Step};
use crate::cloud_config::apply::preview::{action_lines, Look};
use crate::cloud_config::node::{Node, Value};
use crate::cloud_config::read::{Reader, Severity};
use crate::cloud_config::CloudConfig;
use crate::facts::Facts;
use crate::plan::{Action, Contents};

/// The file cloud-init writes.
pub(crate) const PIPELINING_FILE: &str = "/etc/apt/apt.conf.d/90cloud-init-pipelining";

/// What a value of `apt_pipelining` means, by cloud-init's reading of it (the value as a
/// lower-case string).
fn meaning(node: &Node) -> Result<Option<u8>, String> {
    let text = match &node.value {
        Value::Bool(b) => b.to_string(),
        Value::Int(n) => n.to_string(),
        Value::Str(s) => s.to_ascii_lowercase(),
        _ => return Err("is not false, none, unchanged, os or an integer 0 to 5".into()),
    };
    match text.as_str() {
        "none" | "unchanged" | "os" => Ok(None),
        "false" => Ok(Some(0)),
        t => match t.parse::<u8>() {
            Ok(n) if n <= 5 => Ok(Some(n)),
            _ => Err(format!(
                "{t} is not a valid option (false, none, unchanged, os or 0 to 5); cloud-init \
                 ignores it with a warning, and so does vmcust"
            )),
        },
    }
}

/// `apt_pipelining`.
pub(crate) fn parse(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    match (&node.value, meaning(node)) {
        (_, Ok(depth)) => cfg.apt_pipelining = Some(depth),
        // What cloud-init's schema allows but its module ignores: a warning.
        (Value::Bool(_) | Value::Int(_) | Value::Str(_), Err(why)) => {
            r.report(Severity::Warning, node, key, why)
        }
        (_, Err(_)) => r.wrong_type(node, key, "false, none, unchanged, os or 0 to 5"),
    }
}

/// The file for a depth, as cloud-init writes it.
pub(crate) fn file_text(depth: u8) -> String {
    format!(
        "//Written by cloud-init per 'apt_pipelining'\nAcquire::http::Pipeline-Depth \"{depth}\";\n"
    )
}

/// Plans the file; `Err` says why nothing is done.
fn plan(cfg: &CloudConfig, facts: &Facts) -> Result<Vec<Action>, String> {
    let Some(value) = cfg.apt_pipelining else {
        return Err("apt_pipelining is not in the cloud-config".into());
    };
    let Some(depth) = value else {
        return Err("apt_pipelining is none, unchanged or os: apt's default is kept".into());
    };
    if !facts.has("apt-get") {
        return Err("the root has no apt-get (not an apt-family system); cloud-init skips apt_pipelining there too".into());
    }
    Ok(vec![Action::write_file(
        PIPELINING_FILE,
        Contents::text(file_text(depth)),
        0o644,
        "cloud-config apt_pipelining",
    )])
}

/// apt-get is looked for when the key asks for a depth.
pub(crate) fn programs(cfg: &CloudConfig) -> &'static [&'static str] {
    if matches!(cfg.apt_pipelining, Some(Some(_))) {
        &["apt-get"]
    } else {
        &[]
    }
}

/// Writes the file.
pub(crate) fn run(s: &Step) -> ModuleOutcome {
    match plan(s.cfg, s.cc) {
        Err(why) => skipped(why),
        Ok(actions) => s.apply_outcome(actions),
    }
}

/// The file, or why nothing.
pub(crate) fn preview(l: &Look) -> Vec<String> {
    match plan(l.cfg, l.facts) {
        Err(why) => vec![format!("nothing: {why}")],
        Ok(actions) => actions.iter().flat_map(action_lines).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::document;

    #[test]
    fn values_as_cloud_init_reads_them() {
        type Case = (&'static str, Option<Option<u8>>, Option<Severity>);
        let table: &[Case] = &[
            ("apt_pipelining: false", Some(Some(0)), None),
            ("apt_pipelining: 3", Some(Some(3)), None),
            ("apt_pipelining: '5'", Some(Some(5)), None),
            ("apt_pipelining: none", Some(None), None),
            ("apt_pipelining: OS", Some(None), None),
            ("apt_pipelining: unchanged", Some(None), None),
            ("apt_pipelining: true", None, Some(Severity::Warning)),
            ("apt_pipelining: 6", None, Some(Severity::Warning)),
            ("apt_pipelining: fast", None, Some(Severity::Warning)),
            ("apt_pipelining: [1]", None, Some(Severity::Error)),
        ];
        for (doc, want, severity) in table {
            let (cfg, p) = document::from_text(doc);
            assert_eq!(cfg.apt_pipelining, *want, "{doc}");
            assert_eq!(p.first().map(|p| p.severity), *severity, "{doc}: {p:?}");
            if let Some(p) = p.first() {
                assert_eq!((p.path.as_str(), p.line), ("apt_pipelining", 1));
            }
        }
    }

    #[test]
    fn writes_the_depth_on_apt_roots_only() {
        let (cfg, _) = document::from_text("apt_pipelining: false");
        let mut f = Facts::default();
        assert!(plan(&cfg, &f).unwrap_err().contains("no apt-get"));
        f.programs
            .insert("apt-get".into(), "/usr/bin/apt-get".into());
        let a = plan(&cfg, &f).unwrap();
        assert_eq!(
            action_lines(&a[0]),
            [
                "write /etc/apt/apt.conf.d/90cloud-init-pipelining (0644)",
                "    | //Written by cloud-init per 'apt_pipelining'",
                "    | Acquire::http::Pipeline-Depth \"0\";",
            ]
        );
        let (cfg, _) = document::from_text("apt_pipelining: os");
        assert!(plan(&cfg, &f).unwrap_err().contains("default is kept"));
    }
}
