//! What the modules would do, for `vmcust plan` and `show`: each module of both stages
//! with the files it writes (contents of user-data files never shown), the commands and
//! scripts it runs and when (a script part by its name, never its body), or why it does
//! nothing. Nothing is run or written; the planners are the
//! ones the drivers use.

use serde::Serialize;

use crate::cloud_config::modules::{self, Run};
use crate::cloud_config::parts::Part;
use crate::cloud_config::CloudConfig;
use crate::model::HostName;
use crate::plan::{Action, FileOwner};

use super::commands;
use super::error::ModuleError;
use super::scripts::{self, Scripts};
use crate::facts::Facts;

/// What a module's preview looks at.
pub struct Look<'a> {
    /// The document.
    pub cfg: &'a CloudConfig,
    /// The root's facts.
    pub facts: &'a Facts,
    /// The metadata's host name, used when the cloud-config names none.
    pub fallback: Option<&'a HostName>,
    /// The user-data's scripts, in run order.
    pub scripts: &'a Scripts,
}

/// One module's preview.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Preview {
    /// cloud-init's module name.
    pub module: &'static str,
    /// `early` or `late`.
    pub stage: &'static str,
    /// What it would do, one line each (or why not).
    pub lines: Vec<String>,
}

/// The plan lines of one action.
pub(crate) fn action_lines(a: &Action) -> Vec<String> {
    match a {
        Action::WriteFile {
            path,
            mode,
            owner: FileOwner::Kept,
            contents,
            ..
        } => std::iter::once(format!("write {} ({mode:04o})", path.display()))
            .chain(contents.display().lines().map(|l| format!("    | {l}")))
            .collect(),
        // A file for a user (cloud-config `write_files` with an `owner`) may hold a secret.
        Action::WriteFile {
            path,
            mode,
            owner: FileOwner::Chown { uid, gid } | FileOwner::InUserDir { uid, gid, .. },
            contents,
            ..
        } => vec![format!(
            "write {} ({mode:04o}, {uid}:{gid}, {} bytes, contents not shown)",
            path.display(),
            contents.bytes().len()
        )],
        Action::Symlink { path, target, .. } => {
            vec![format!("link {} -> {}", path.display(), target.display())]
        }
        Action::Rename { from, to, .. } => {
            vec![format!("move {} to {}", from.display(), to.display())]
        }
        Action::SetHostname { name } => {
            vec![format!(
                "running host name {name} (on the running system only)"
            )]
        }
        Action::MakeDir {
            path,
            mode,
            uid,
            gid,
            ..
        } => vec![format!(
            "mkdir {} ({mode:04o}, {uid}:{gid})",
            path.display()
        )],
    }
}

/// The lines of a planner's actions, `none` when it has none, its error when it fails.
pub(crate) fn actions(r: Result<Vec<Action>, ModuleError>, none: &str) -> Vec<String> {
    match r {
        Err(e) => vec![format!("fails: {e}")],
        Ok(a) if a.is_empty() => vec![none.to_string()],
        Ok(a) => a.iter().flat_map(action_lines).collect(),
    }
}

/// The lines of a command list's script, `none` when it is empty.
pub(crate) fn script(cmds: &[crate::cloud_config::commands::Command], none: &str) -> Vec<String> {
    if cmds.is_empty() {
        return vec![none.to_string()];
    }
    commands::shellify(cmds)
        .lines()
        .skip(1)
        .map(|l| format!("run: {l}"))
        .collect()
}

/// One `run:` line per command.
pub(crate) fn run_lines(cmds: &[Vec<String>]) -> impl Iterator<Item = String> + '_ {
    cmds.iter().map(|c| format!("run: {}", c.join(" ")))
}

/// What a script module runs, one line per script in run order, or why nothing.
pub(crate) fn script_lines(look: &Look, module: &str, with_runcmd: bool) -> Vec<String> {
    let mut names = vec![module];
    if with_runcmd {
        names.push("runcmd");
    }
    let list = look.scripts.of(&names);
    if list.is_empty() {
        let none = match modules::module(module).map(|m| &m.run) {
            Some(Run::Scripts(s)) => s.nothing,
            _ => "",
        };
        return vec![format!("nothing: {none}")];
    }
    list.iter()
        .map(|s| {
            format!(
                "run {} ({}, {} bytes, contents not shown), {}",
                s.name,
                s.from,
                s.body.len(),
                scripts::how_often(s.frequency)
            )
        })
        .collect()
}

/// Every module of both stages, in order; `parts` are the user-data's script parts.
pub fn preview(
    cfg: &CloudConfig,
    facts: &Facts,
    fallback: Option<&HostName>,
    parts: &[(u16, Part)],
) -> Vec<Preview> {
    let plan = scripts::plan(parts, &cfg.runcmd);
    let look = Look {
        cfg,
        facts,
        fallback,
        scripts: &plan,
    };
    modules::TABLE
        .iter()
        .filter_map(|m| {
            m.preview.map(|p| Preview {
                module: m.name,
                stage: m.stage.name(),
                lines: p(&look),
            })
        })
        .collect()
}

/// The preview as text: a header per module, its lines indented.
pub fn to_text(previews: &[Preview]) -> String {
    let mut s = String::new();
    for p in previews {
        s.push_str(&format!("{} ({})\n", p.module, p.stage));
        for l in &p.lines {
            s.push_str(&format!("  {l}\n"));
        }
    }
    s
}
