//! `power_state_change` (`power_state`): power off, reboot or halt at the end, with
//! delay, message, timeout and condition.
//!
//! `power_state` (cloud-init's `cc_power_state_change`): power off, reboot or halt after
//! the customization. cloud-init forks a process that waits for cloud-init to end; vmcust
//! instead asks systemd for a transient unit ordered after the late stage's unit
//! (`systemd-run --no-block --property=After=vmcust-late.service`) that runs
//! `shutdown -P|-r|-H now|+N [message]`: it starts once the late stage has ended, and
//! `shutdown +N` keeps the delay. The `condition` is checked when the late stage reaches
//! the module, under `timeout`. Without `systemd-run` the `shutdown` is scheduled at once
//! with a delay of at least one minute, which the late stage ends well within.

use crate::cloud_config::apply::commands::shellify;
use crate::cloud_config::apply::driver::{absent, from_end, skipped, ModuleOutcome, Step};
use crate::cloud_config::apply::exec::{self, Program, RunEnd};
use crate::cloud_config::apply::preview::Look;
use crate::cloud_config::commands::{commands, Command};
use crate::cloud_config::node::{Node, Value};
use crate::cloud_config::read::{join, Reader, Severity};
use crate::cloud_config::CloudConfig;
use crate::facts::Facts;
use crate::model::quote;
use crate::root::Root;
use serde::Serialize;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// `power_state.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PowerMode {
    /// `poweroff`.
    Poweroff,
    /// `reboot`.
    Reboot,
    /// `halt`.
    Halt,
}

/// `power_state.condition`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Condition {
    /// `true` (the default) or `false` (never).
    Always(bool),
    /// A command whose exit status 0 means "go ahead".
    Command(Command),
}

/// `power_state`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PowerState {
    /// What to do.
    pub mode: PowerMode,
    /// Minutes to wait first (`now`, the default, is 0).
    pub delay_minutes: u32,
    /// The message shown.
    pub message: Option<String>,
    /// Seconds to wait for the customization to finish first (default 30).
    pub timeout: u32,
    /// When to do it.
    pub condition: Condition,
}

/// `power_state`.
pub(crate) fn parse(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    let Some(map) = r.map(
        node,
        key,
        &["mode", "delay", "message", "timeout", "condition"],
    ) else {
        return;
    };
    let get = |k: &str| map.iter().find(|(key, _)| key.text == k).map(|(_, v)| *v);
    let mode = match get("mode") {
        None => {
            r.error(
                node,
                key,
                "has no mode; write mode: poweroff, reboot or halt",
            );
            None
        }
        Some(m) => match m.as_str() {
            Some("poweroff") => Some(PowerMode::Poweroff),
            Some("reboot") => Some(PowerMode::Reboot),
            Some("halt") => Some(PowerMode::Halt),
            _ => {
                r.error(m, &join(key, "mode"), "write poweroff, reboot or halt");
                None
            }
        },
    };
    let delay = match get("delay") {
        None => Some(0),
        Some(d) => {
            let at = join(key, "delay");
            match &d.value {
                Value::Str(s) if s == "now" => Some(0),
                Value::Int(n) => u32::try_from(*n).ok().or_else(|| {
                    r.error(
                        d,
                        &at,
                        "is negative or too large; write now or whole minutes",
                    );
                    None
                }),
                Value::Str(s) => match s.strip_prefix('+').unwrap_or(s).parse::<u32>() {
                    Ok(n) if !s.is_empty() => {
                        r.report(Severity::Warning, d, &at, "a string delay is deprecated (cloud-init 22.3); write now or an integer");
                        Some(n)
                    }
                    _ => {
                        r.error(
                            d,
                            &at,
                            format!("{} is not a delay; write now or whole minutes", quote(s)),
                        );
                        None
                    }
                },
                _ => {
                    r.wrong_type(d, &at, "now or whole minutes");
                    None
                }
            }
        }
    };
    let message = get("message").and_then(|m| r.line(m, &join(key, "message"), 1024));
    let timeout = match get("timeout") {
        None => Some(30),
        Some(t) => match t.value {
            Value::Int(n) => u32::try_from(n).ok().or_else(|| {
                r.error(
                    t,
                    &join(key, "timeout"),
                    "is negative or too large; write seconds",
                );
                None
            }),
            _ => {
                r.wrong_type(t, &join(key, "timeout"), "seconds (an integer)");
                None
            }
        },
    };
    let condition = match get("condition") {
        None => Some(Condition::Always(true)),
        Some(c) => {
            let at = join(key, "condition");
            match &c.value {
                Value::Bool(b) => Some(Condition::Always(*b)),
                Value::Str(_) | Value::Seq(_) => {
                    // One command: the list form is its argv, as runcmd's entries.
                    let wrapped = Node::new(Value::Seq(vec![c.clone()]), c.line, c.part);
                    let mut cmds = commands(r, &at, &wrapped, false);
                    (cmds.len() == 1).then(|| Condition::Command(cmds.remove(0)))
                }
                _ => {
                    r.wrong_type(c, &at, "true, false or a command");
                    None
                }
            }
        }
    };
    if let (Some(mode), Some(delay_minutes), Some(timeout), Some(condition)) =
        (mode, delay, timeout, condition)
    {
        cfg.power_state = Some(PowerState {
            mode,
            delay_minutes,
            message,
            timeout,
            condition,
        });
    }
}

/// The late stage's unit, which the power change waits for.
pub(crate) const LATE_UNIT: &str = "vmcust-late.service";
/// The transient unit's name.
pub(crate) const POWER_UNIT: &str = "vmcust-power-state";

/// How the module ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PowerEnd {
    /// Scheduled; what was asked of systemd.
    Scheduled(String),
    /// Not done, and why (condition false).
    NotNow(String),
    /// Failed, or interrupted.
    End(RunEnd),
}

/// `shutdown`'s arguments for `ps`; `min_delay` minutes at least.
pub(crate) fn shutdown_args(ps: &PowerState, min_delay: u32) -> Vec<String> {
    let flag = match ps.mode {
        PowerMode::Poweroff => "-P",
        PowerMode::Reboot => "-r",
        PowerMode::Halt => "-H",
    };
    let delay = ps.delay_minutes.max(min_delay);
    let when = if delay == 0 {
        "now".to_string()
    } else {
        format!("+{delay}")
    };
    let mut args = vec![flag.to_string(), when];
    if let Some(m) = &ps.message {
        args.push(m.clone());
    }
    args
}

/// The program and arguments that schedule `ps` (`shutdown` found at `shutdown`, inside
/// the root): through `systemd-run` after the late unit when the root has it.
pub(crate) fn schedule(
    ps: &PowerState,
    systemd_run: Option<&str>,
    shutdown: &str,
) -> (String, Vec<String>) {
    match systemd_run {
        Some(run) => {
            let mut args = vec![
                "--no-block".to_string(),
                format!("--unit={POWER_UNIT}"),
                format!("--property=After={LATE_UNIT}"),
                "--description=vmcust cloud-config power_state".to_string(),
                shutdown.to_string(),
            ];
            args.extend(shutdown_args(ps, 0));
            (run.to_string(), args)
        }
        None => (shutdown.to_string(), shutdown_args(ps, 1)),
    }
}

/// Checks the condition, then schedules the power change on the running system.
pub(crate) fn run_power_state(
    root: &Root,
    ps: &PowerState,
    cc: &Facts,
    stop: &AtomicBool,
) -> PowerEnd {
    if root.path() != Path::new("/") {
        return PowerEnd::NotNow("power_state: the root is not the running system".into());
    }
    let timeout = Duration::from_secs(u64::from(ps.timeout.max(1)));
    match &ps.condition {
        Condition::Always(true) => {}
        Condition::Always(false) => {
            return PowerEnd::NotNow("power_state: condition is false".into())
        }
        Condition::Command(c) => {
            let (program, args) = match c {
                Command::Shell(line) => {
                    ("/bin/sh".to_string(), vec!["-c".to_string(), line.clone()])
                }
                Command::Argv(words) => {
                    let p = if words[0].starts_with('/') {
                        Some(words[0].clone())
                    } else {
                        crate::facts::which(root, &words[0])
                    };
                    let Some(p) = p else {
                        return PowerEnd::End(RunEnd::Failed(format!(
                            "power_state: the condition's program {} is not in the root",
                            words[0]
                        )));
                    };
                    (p, words[1..].to_vec())
                }
            };
            let cond = Program {
                module: "power_state condition",
                program: &program,
                args,
                env: Vec::new(),
                timeout,
                hide_args: false,
            };
            match exec::run(root, &cond, stop) {
                RunEnd::Succeeded => {}
                RunEnd::Interrupted => return PowerEnd::End(RunEnd::Interrupted),
                RunEnd::Failed(why) => {
                    return PowerEnd::NotNow(format!("power_state: condition not met ({why})"))
                }
            }
        }
    }
    let Some(shutdown) = cc.programs.get("shutdown") else {
        return PowerEnd::End(RunEnd::Failed(
            "power_state: the root has no shutdown program".into(),
        ));
    };
    let (program, args) = schedule(
        ps,
        cc.programs.get("systemd-run").map(String::as_str),
        shutdown,
    );
    let p = Program {
        module: "power_state",
        program: &program,
        args: args.clone(),
        env: Vec::new(),
        timeout: Duration::from_secs(30),
        hide_args: false,
    };
    match exec::run(root, &p, stop) {
        RunEnd::Succeeded => PowerEnd::Scheduled(format!("{program} {}", args.join(" "))),
        other => PowerEnd::End(other),
    }
}

/// The programs it may run.
pub(crate) fn programs(cfg: &CloudConfig) -> &'static [&'static str] {
    if cfg.power_state.is_some() {
        &["systemctl", "systemd-run", "shutdown"]
    } else {
        &[]
    }
}

/// Schedules the power change after the late stage, on the running system only.
pub(crate) fn run(s: &Step) -> ModuleOutcome {
    let Some(ps) = &s.cfg.power_state else {
        return absent("power_state");
    };
    if !s.ctx.live() {
        return skipped("power_state: the root is not the running system");
    }
    if let Err(o) = s.start() {
        return o;
    }
    match run_power_state(&s.ctx.root, ps, s.cc, s.ctx.stop) {
        PowerEnd::Scheduled(how) => ModuleOutcome::Ran { note: how },
        PowerEnd::NotNow(why) => skipped(why),
        PowerEnd::End(e) => from_end(e, ""),
    }
}

/// The command that would change the power state, and when.
pub(crate) fn preview(l: &Look) -> Vec<String> {
    let Some(ps) = &l.cfg.power_state else {
        return vec!["nothing: no power_state".into()];
    };
    let facts = l.facts;
    let (p, a) = schedule(
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
            shellify(std::slice::from_ref(c))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::document;

    #[test]
    fn power_state_good_and_hostile() {
        let (cfg, p) = document::from_text("power_state: {mode: reboot, delay: 5, message: bye, timeout: 10, condition: [test, -f, /x]}\nfinal_message: done\n");
        assert!(p.is_empty(), "{p:?}");
        let ps = cfg.power_state.unwrap();
        assert_eq!(
            (ps.mode, ps.delay_minutes, ps.timeout),
            (PowerMode::Reboot, 5, 10)
        );
        assert_eq!(
            ps.condition,
            Condition::Command(Command::Argv(vec!["test".into(), "-f".into(), "/x".into()]))
        );
        assert_eq!(cfg.final_message.as_deref(), Some("done"));
        let (cfg, _) = document::from_text("power_state: {mode: poweroff}");
        let ps = cfg.power_state.unwrap();
        assert_eq!(
            (ps.delay_minutes, ps.timeout, ps.condition),
            (0, 30, Condition::Always(true))
        );
        let (cfg, p) = document::from_text("power_state: {mode: halt, delay: '+2'}");
        assert_eq!(cfg.power_state.unwrap().delay_minutes, 2);
        assert_eq!(p[0].severity, Severity::Warning);
        for (doc, want) in [
            ("power_state: {delay: now}", "has no mode"),
            ("power_state: {mode: suspend}", "write poweroff"),
            ("power_state: {mode: halt, delay: -1}", "negative"),
            ("power_state: {mode: halt, delay: soon}", "not a delay"),
            ("power_state: {mode: halt, timeout: '30'}", "is a string"),
            (
                "power_state: {mode: halt, condition: 5}",
                "true, false or a command",
            ),
            ("final_message: [a]", "is a list"),
        ] {
            let (_, p) = document::from_text(doc);
            assert!(
                p.iter()
                    .any(|p| p.severity == Severity::Error && p.message.contains(want)),
                "{doc}: {p:?}"
            );
        }
    }

    #[test]
    fn schedules() {
        let ps = |doc: &str| document::from_text(doc).0.power_state.unwrap();
        let (p, a) = schedule(
            &ps("power_state: {mode: reboot}"),
            Some("/usr/bin/systemd-run"),
            "/sbin/shutdown",
        );
        assert_eq!(p, "/usr/bin/systemd-run");
        assert_eq!(
            a.join(" "),
            "--no-block --unit=vmcust-power-state --property=After=vmcust-late.service --description=vmcust cloud-config power_state /sbin/shutdown -r now"
        );
        let (_, a) = schedule(
            &ps("power_state: {mode: poweroff, delay: 5, message: bye now}"),
            Some("/bin/systemd-run"),
            "/sbin/shutdown",
        );
        assert_eq!(a[5..], ["-P", "+5", "bye now"]);
        let (p, a) = schedule(&ps("power_state: {mode: halt}"), None, "/sbin/shutdown");
        assert_eq!(
            (p.as_str(), a.join(" ").as_str()),
            ("/sbin/shutdown", "-H +1")
        );
    }

    #[test]
    fn another_root_is_never_powered_off() {
        let d = tempfile::tempdir().unwrap();
        let root = Root::new(d.path()).unwrap();
        let ps = document::from_text("power_state: {mode: poweroff}")
            .0
            .power_state
            .unwrap();
        let end = run_power_state(&root, &ps, &Facts::default(), &AtomicBool::new(false));
        assert!(matches!(end, PowerEnd::NotNow(w) if w.contains("not the running system")));
    }
}
