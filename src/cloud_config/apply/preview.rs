//! What the modules would do, for `vmcust plan` and `show`: each module of both stages
//! with the files it writes (contents of user-data files never shown), the commands and
//! scripts it runs and when (a script part by its name, never its body), or why it does
//! nothing. Nothing is run or written; the planners are the
//! ones the drivers use.

use serde::Serialize;

use crate::cloud_config::parts::Part;
use crate::cloud_config::power::Condition;
use crate::cloud_config::CloudConfig;
use crate::model::HostName;
use crate::plan::Action;

use super::error::ModuleError;
use super::facts::CcFacts;
use super::files::{plan_write_files, Which};
use super::scripts::{self, Scripts};
use super::{certs, commands, hostname, ntp, packages, power, timezone};

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
pub fn action_lines(a: &Action) -> Vec<String> {
    match a {
        Action::WriteFile {
            path,
            mode,
            contents,
            ..
        } => std::iter::once(format!("write {} ({mode:04o})", path.display()))
            .chain(contents.display().lines().map(|l| format!("    | {l}")))
            .collect(),
        Action::WriteOwnedFile {
            path,
            mode,
            uid,
            gid,
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
        other => vec![format!("{other:?}")],
    }
}

fn actions(r: Result<Vec<Action>, ModuleError>, none: &str) -> Vec<String> {
    match r {
        Err(e) => vec![format!("fails: {e}")],
        Ok(a) if a.is_empty() => vec![none.to_string()],
        Ok(a) => a.iter().flat_map(action_lines).collect(),
    }
}

fn script(cmds: &[crate::cloud_config::commands::Command], none: &str) -> Vec<String> {
    if cmds.is_empty() {
        return vec![none.to_string()];
    }
    commands::shellify(cmds)
        .lines()
        .skip(1)
        .map(|l| format!("run: {l}"))
        .collect()
}

fn run_lines(cmds: &[Vec<String>]) -> impl Iterator<Item = String> + '_ {
    cmds.iter().map(|c| format!("run: {}", c.join(" ")))
}

/// What a script module runs, one line per script in run order, or why nothing.
fn script_lines(plan: &Scripts, module: &str, with_runcmd: bool) -> Vec<String> {
    let mut modules = vec![module];
    if with_runcmd {
        modules.push("runcmd");
    }
    let list = plan.of(&modules);
    if list.is_empty() {
        let none = scripts::MODULES
            .iter()
            .find(|m| m.0 == module)
            .map_or("", |m| m.3);
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
    facts: &CcFacts,
    fallback: Option<&HostName>,
    parts: &[(u16, Part)],
) -> Vec<Preview> {
    let plan = scripts::plan(parts, &cfg.runcmd);
    let mut out = Vec::new();
    let mut add = |module, stage, lines| {
        out.push(Preview {
            module,
            stage,
            lines,
        })
    };
    add(
        "boothooks",
        "early",
        script_lines(&plan, "boothooks", false),
    );
    add(
        "bootcmd",
        "early",
        script(&cfg.bootcmd, "nothing: no bootcmd"),
    );
    add(
        "write_files",
        "early",
        actions(
            plan_write_files(cfg, facts, Which::Now),
            "nothing: no write_files entry without defer",
        ),
    );
    let g = cfg.growpart.as_ref();
    add(
        "growpart",
        "early",
        vec![format!(
            "on the running system only: grow the partitions of {} (mode {:?})",
            g.map_or("/".to_string(), |g| g.devices.join(", ")),
            g.map_or(crate::cloud_config::disk::GrowMode::Auto, |g| g.mode)
        )],
    );
    add(
        "resizefs",
        "early",
        vec![match cfg.resize_rootfs {
            Some(crate::cloud_config::disk::ResizeRootfs::No) => {
                "nothing: resize_rootfs is false".into()
            }
            _ => "on the running system only: grow the root file system".into(),
        }],
    );
    add(
        "set_hostname",
        "early",
        actions(
            hostname::plan_set_hostname(cfg, facts, fallback),
            "nothing: no host name, or preserve_hostname",
        ),
    );
    add(
        "update_etc_hosts",
        "early",
        actions(
            hostname::plan_etc_hosts(cfg, facts, fallback),
            "nothing: manage_etc_hosts is not true or localhost",
        ),
    );
    add(
        "ca_certs",
        "early",
        match certs::plan_ca_certs(cfg, facts) {
            Err(e) => vec![format!("fails: {e}")],
            Ok(None) => vec!["nothing: no ca_certs".into()],
            Ok(Some(p)) => p
                .actions
                .iter()
                .flat_map(action_lines)
                .chain(run_lines(&p.commands))
                .collect(),
        },
    );
    add(
        "ntp",
        "late",
        match ntp::plan_ntp(cfg, facts) {
            Err(e) => vec![format!("fails: {e}")],
            Ok(None) => vec!["nothing: no ntp, or enabled: false".into()],
            Ok(Some(p)) => std::iter::once(format!("client {}", p.client.name()))
                .chain(p.actions.iter().flat_map(action_lines))
                .chain(run_lines(&p.commands))
                .collect(),
        },
    );
    add(
        "timezone",
        "late",
        actions(timezone::plan_timezone(cfg, facts), "nothing: no timezone"),
    );
    add(
        "package_update_upgrade_install",
        "late",
        if !packages::wanted(cfg) {
            vec!["nothing: no packages, package_update or package_upgrade".into()]
        } else {
            match packages::detect(facts) {
                None => vec!["fails: the root has no apt-get, dnf, yum or zypper".into()],
                Some(m) => packages::command_lines(m, cfg)
                    .iter()
                    .map(|c| format!("run: {} {}", m.program(), c.join(" ")))
                    .collect(),
            }
        },
    );
    add(
        "write_files_deferred",
        "late",
        actions(
            plan_write_files(cfg, facts, Which::Deferred),
            "nothing: no write_files entry with defer: true",
        ),
    );
    for module in [
        "scripts_vendor",
        "scripts_per_once",
        "scripts_per_boot",
        "scripts_per_instance",
    ] {
        add(module, "late", script_lines(&plan, module, false));
    }
    add("runcmd", "late", script(&cfg.runcmd, "nothing: no runcmd"));
    // runcmd's script is one of these: they run in name order.
    add(
        "scripts_user",
        "late",
        script_lines(&plan, "scripts_user", true),
    );
    add(
        "final_message",
        "late",
        vec![format!(
            "log: {}",
            cfg.final_message
                .as_deref()
                .unwrap_or(super::final_message::DEFAULT)
        )],
    );
    add(
        "power_state_change",
        "late",
        match &cfg.power_state {
            None => vec!["nothing: no power_state".into()],
            Some(ps) => {
                let (p, a) = power::schedule(
                    ps,
                    facts.programs.get("systemd-run").map(String::as_str),
                    facts
                        .programs
                        .get("shutdown")
                        .map_or("shutdown", String::as_str),
                );
                let when = match &ps.condition {
                    Condition::Always(true) => String::new(),
                    Condition::Always(false) => "never (condition is false); ".into(),
                    Condition::Command(c) => format!(
                        "if `{}` succeeds within {} s: ",
                        commands::shellify(std::slice::from_ref(c))
                            .lines()
                            .nth(1)
                            .unwrap_or(""),
                        ps.timeout
                    ),
                };
                vec![format!(
                    "on the running system only, after the late stage: {when}run: {p} {}",
                    a.join(" ")
                )]
            }
        },
    );
    out
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
