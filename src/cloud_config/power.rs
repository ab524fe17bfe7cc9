//! `power_state` (power off, reboot or halt at the end, with delay, message, timeout and
//! condition) and `final_message`.

use serde::Serialize;

use super::commands::{commands, Command};
use super::node::{Node, Value};
use super::read::{join, Reader, Severity};
use super::CloudConfig;
use crate::model::quote;

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

/// `final_message`.
pub fn final_message(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    cfg.final_message = r.string(node, key, 4096);
}

/// `power_state`.
pub fn power_state(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
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
}
