//! `snap` (`snap.assertions`, `snap.commands`): cloud-init's `cc_snap`, on Ubuntu only
//! (its `distros: [ubuntu]`; on any other distribution cloud-init skips it, and so does
//! vmcust, saying why). It waits for snapd's seeding (`snap wait system seed.loaded`),
//! writes the assertions to the instance's `snapd.assertions` and has `snap ack` import
//! them, then runs every command — a string through `sh -c`, a list as an argv with
//! `snap` put first when it is not — each bounded by the command timeout; the failures
//! are collected and fail the module after all commands ran, as cloud-init's
//! "Failures running snap commands" does.

use serde::Serialize;

use crate::cloud_config::apply::driver::{absent, failed, skipped, ModuleOutcome, Step};
use crate::cloud_config::apply::exec::{self, Program, RunEnd};
use crate::cloud_config::apply::preview::{action_lines, Look};
use crate::cloud_config::commands::{self, Command};
use crate::cloud_config::node::{Node, Value};
use crate::cloud_config::read::{join, Reader};
use crate::cloud_config::CloudConfig;
use crate::facts::Facts;
use crate::plan::{Action, Contents};

/// Most assertions.
pub(crate) const MAX_ASSERTIONS: usize = 256;
/// Longest assertion, in bytes.
pub(crate) const MAX_ASSERTION: usize = 64 * 1024;
/// cloud-init's instance directories; the assertions file is in the instance's.
pub(crate) const INSTANCES: &str = "/var/lib/cloud/instances";
/// The assertions file's name.
pub(crate) const ASSERTIONS_FILE: &str = "snapd.assertions";

/// `snap`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Snap {
    /// The assertions, in document order (a mapping's values in its order).
    pub assertions: Vec<String>,
    /// The commands, in run order (a mapping's values sorted by key), `snap` already put
    /// first in argv lists.
    pub commands: Vec<Command>,
}

/// `snap`.
pub(crate) fn parse(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    let Some(map) = r.map(node, key, &["assertions", "commands"]) else {
        return;
    };
    let mut snap = Snap::default();
    for (k, v) in map {
        let at = join(key, &k.text);
        match k.text.as_str() {
            "assertions" => {
                let Some(items) = values(r, v, &at, false) else {
                    continue;
                };
                if items.len() > MAX_ASSERTIONS {
                    r.error(
                        v,
                        &at,
                        format!("has {} entries; at most {MAX_ASSERTIONS}", items.len()),
                    );
                    continue;
                }
                for item in &items {
                    if let Some(s) = r.string(item, &at, MAX_ASSERTION) {
                        snap.assertions.push(s);
                    }
                }
            }
            _ => {
                let Some(items) = values(r, v, &at, true) else {
                    continue;
                };
                let list = Node::new(Value::Seq(items), v.line, v.part);
                snap.commands = commands::commands(r, &at, &list, false)
                    .into_iter()
                    .map(with_snap)
                    .collect();
            }
        }
    }
    cfg.snap = Some(snap);
}

/// A list's entries, or a mapping's values (sorted by key when `sorted`, as cloud-init
/// orders `commands`; in document order otherwise, as it takes `assertions`).
fn values(r: &mut Reader, node: &Node, at: &str, sorted: bool) -> Option<Vec<Node>> {
    match &node.value {
        Value::Seq(items) => Some(items.clone()),
        Value::Map(entries) => {
            let mut entries: Vec<_> = entries.iter().collect();
            if sorted {
                entries.sort_by(|a, b| a.0.text.cmp(&b.0.text));
            }
            Some(entries.into_iter().map(|(_, v)| v.clone()).collect())
        }
        _ => {
            r.wrong_type(node, at, "a list or a mapping");
            None
        }
    }
}

/// An argv list starts with `snap` (cloud-init puts it first when it is not).
fn with_snap(c: Command) -> Command {
    match c {
        Command::Argv(mut words) if words.first().map(String::as_str) != Some("snap") => {
            words.insert(0, "snap".into());
            Command::Argv(words)
        }
        other => other,
    }
}

/// The programs it runs.
pub(crate) fn programs(cfg: &CloudConfig) -> &'static [&'static str] {
    if cfg.snap.is_some() {
        &["snap", "sh"]
    } else {
        &[]
    }
}

/// The assertions file of instance `instance` (a file name).
pub(crate) fn assertions_path(instance: &str) -> String {
    format!("{INSTANCES}/{instance}/{ASSERTIONS_FILE}")
}

/// What the module does on this root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SnapPlan {
    /// `snap wait system seed.loaded` when the root has `snap` (cloud-init skips the
    /// wait without it).
    pub wait: bool,
    /// The assertions file's text, when there are assertions.
    pub assertions: Option<String>,
    /// The commands, as argv (a string as `sh -c <string>`).
    pub commands: Vec<Vec<String>>,
}

/// Plans the module; `Err(why)` when it does nothing here.
pub(crate) fn plan_snap(cfg: &CloudConfig, facts: &Facts) -> Result<SnapPlan, String> {
    let Some(snap) = &cfg.snap else {
        return Err("snap is not in the cloud-config".into());
    };
    if facts.os_id != "ubuntu" {
        let id = if facts.os_id.is_empty() {
            "not named by /etc/os-release"
        } else {
            facts.os_id.as_str()
        };
        return Err(format!(
            "skipped by distro: cloud-init runs snap on Ubuntu only (distros: [ubuntu]); \
             this system is {id}"
        ));
    }
    Ok(SnapPlan {
        wait: facts.has("snap"),
        assertions: (!snap.assertions.is_empty()).then(|| snap.assertions.join("\n")),
        commands: snap
            .commands
            .iter()
            .map(|c| match c {
                Command::Shell(s) => vec!["sh".into(), "-c".into(), s.clone()],
                Command::Argv(words) => words.clone(),
            })
            .collect(),
    })
}

/// The assertions file's action.
fn assertions_action(path: &str, text: &str) -> Action {
    Action::write_file(
        path,
        Contents::text(text.to_string()),
        0o644,
        "snap assertions for snap ack (cloud-config snap)",
    )
}

/// Runs `argv` (its program found in the root) with the command timeout; `users` when
/// it is one of the document's commands, whose words may hold secrets as runcmd's may,
/// so the log and the records give only how many there are.
fn run_one(s: &Step, argv: &[String], users: bool) -> RunEnd {
    let Some(path) = s.cc.programs.get(&argv[0]) else {
        return RunEnd::Failed(format!(
            "snap: {} is not in the root; install it in the template",
            argv[0]
        ));
    };
    let p = Program {
        module: "snap",
        program: path,
        args: argv[1..].to_vec(),
        env: Vec::new(),
        timeout: s.ctx.command_timeout,
        hide_args: users,
    };
    exec::run(&s.ctx.root, &p, s.ctx.stop)
}

/// Waits for seeding, acks the assertions, runs the commands.
pub(crate) fn run(s: &Step) -> ModuleOutcome {
    if s.cfg.snap.is_none() {
        return absent("snap");
    }
    let p = match plan_snap(s.cfg, s.cc) {
        Ok(p) => p,
        Err(why) => return skipped(why),
    };
    if let Err(o) = s.start() {
        return o;
    }
    if p.wait {
        match run_one(
            s,
            &[
                "snap".into(),
                "wait".into(),
                "system".into(),
                "seed.loaded".into(),
            ],
            false,
        ) {
            RunEnd::Succeeded => {}
            RunEnd::Failed(why) => return failed(why),
            RunEnd::Interrupted => return ModuleOutcome::Interrupted,
        }
    }
    if let Some(text) = &p.assertions {
        let path = assertions_path(&s.ctx.instance.file_name());
        if let Err(e) = s.apply(vec![assertions_action(&path, text)]) {
            return failed(format!("snap: writing {path}: {e}"));
        }
        match run_one(s, &["snap".into(), "ack".into(), path], false) {
            RunEnd::Succeeded => {}
            RunEnd::Failed(why) => return failed(why),
            RunEnd::Interrupted => return ModuleOutcome::Interrupted,
        }
    }
    let mut failures = Vec::new();
    for c in &p.commands {
        match run_one(s, c, true) {
            RunEnd::Succeeded => {}
            RunEnd::Failed(why) => failures.push(why),
            RunEnd::Interrupted => return ModuleOutcome::Interrupted,
        }
    }
    if !failures.is_empty() {
        return failed(format!(
            "Failures running snap commands ({} of {}): {}",
            failures.len(),
            p.commands.len(),
            failures.join("; ")
        ));
    }
    ModuleOutcome::Ran {
        note: format!(
            "{} assertion(s), {} command(s)",
            s.cfg.snap.as_ref().map_or(0, |x| x.assertions.len()),
            p.commands.len()
        ),
    }
}

/// The wait, the assertions file and its ack, the commands.
pub(crate) fn preview(l: &Look) -> Vec<String> {
    if l.cfg.snap.is_none() {
        return vec!["nothing: snap is not in the cloud-config".into()];
    }
    let p = match plan_snap(l.cfg, l.facts) {
        Ok(p) => p,
        Err(why) => return vec![format!("nothing: {why}")],
    };
    let mut out = Vec::new();
    if p.wait {
        out.push("run: snap wait system seed.loaded".to_string());
    }
    if let Some(text) = &p.assertions {
        let path = assertions_path("<instance-id>");
        // The instance's directory is named when the run knows the instance.
        let lines = action_lines(&assertions_action(&path, text));
        out.extend(
            lines
                .into_iter()
                .map(|l| l.replacen("write ", "for the instance: write ", 1)),
        );
        out.push(format!("run: snap ack {path}"));
    }
    if p.commands.is_empty() && p.assertions.is_none() {
        out.push("nothing: snap has no assertions or commands".into());
    }
    out.extend(p.commands.iter().map(|c| {
        let words: Vec<String> = c.iter().map(|w| super::ansible::shlex_quote(w)).collect();
        format!("run: {}", words.join(" "))
    }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::document;
    use crate::cloud_config::read::Severity;

    fn facts(os_id: &str, snap: bool) -> Facts {
        let mut f = Facts {
            os_id: os_id.into(),
            ..Default::default()
        };
        if snap {
            f.programs.insert("snap".into(), "/usr/bin/snap".into());
        }
        f
    }

    #[test]
    fn commands_are_ordered_and_prefixed_as_cloud_init_does() {
        let doc = "snap:\n  assertions: {b: two, a: one}\n  commands:\n    '01': [install, vlc]\n    '00': snap install core\n    '02': [snap, refresh]\n";
        let (cfg, p) = document::from_text(doc);
        assert!(p.is_empty(), "{p:?}");
        let plan = plan_snap(&cfg, &facts("ubuntu", true)).unwrap();
        assert!(plan.wait);
        // A mapping's assertions in document order, its commands sorted by key.
        assert_eq!(plan.assertions.as_deref(), Some("two\none"));
        assert_eq!(
            plan.commands,
            [
                vec!["sh", "-c", "snap install core"],
                vec!["snap", "install", "vlc"],
                vec!["snap", "refresh"],
            ]
        );
        let (cfg, _) = document::from_text("snap: {commands: [[ls, x], 'echo hi']}");
        let plan = plan_snap(&cfg, &facts("ubuntu", false)).unwrap();
        assert!(!plan.wait, "no snap, no wait");
        assert_eq!(
            plan.commands,
            [vec!["snap", "ls", "x"], vec!["sh", "-c", "echo hi"]]
        );
    }

    #[test]
    fn skipped_by_distro_off_ubuntu() {
        let (cfg, _) = document::from_text("snap: {commands: [[install, vlc]]}");
        for id in ["debian", "rhel", ""] {
            let why = plan_snap(&cfg, &facts(id, true)).unwrap_err();
            assert!(why.starts_with("skipped by distro"), "{why}");
        }
        let lines = preview(&Look {
            cfg: &cfg,
            facts: &facts("debian", true),
            fallback: None,
            scripts: &Default::default(),
        });
        assert_eq!(lines.len(), 1);
        assert!(lines[0].contains("Ubuntu only"), "{lines:?}");
    }

    #[test]
    fn bad_values_are_refused() {
        super::super::test_support::assert_refused(&[
            ("snap: [install]", "snap: is a list; write a mapping"),
            ("snap: {commands: 'snap install x'}", "a list or a mapping"),
            ("snap: {assertions: [[x]]}", "snap.assertions"),
            ("snap: {commands: [{a: b}]}", "snap.commands[0]"),
        ]);
        let (_, p) = document::from_text("snap: {comands: []}");
        assert_eq!(p[0].severity, Severity::Unknown, "{p:?}");
    }
}
