//! `power_state` (cloud-init's `cc_power_state_change`): power off, reboot or halt after
//! the customization. cloud-init forks a process that waits for cloud-init to end; vmcust
//! instead asks systemd for a transient unit ordered after the late stage's unit
//! (`systemd-run --no-block --property=After=vmcust-late.service`) that runs
//! `shutdown -P|-r|-H now|+N [message]`: it starts once the late stage has ended, and
//! `shutdown +N` keeps the delay. The `condition` is checked when the late stage reaches
//! the module, under `timeout`. Without `systemd-run` the `shutdown` is scheduled at once
//! with a delay of at least one minute, which the late stage ends well within.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::cloud_config::commands::Command;
use crate::cloud_config::power::{Condition, PowerMode, PowerState};
use crate::root::Root;

use super::exec::{self, Program, RunEnd};
use super::facts::CcFacts;

/// The late stage's unit, which the power change waits for.
pub const LATE_UNIT: &str = "vmcust-late.service";
/// The transient unit's name.
pub const POWER_UNIT: &str = "vmcust-power-state";

/// How the module ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PowerEnd {
    /// Scheduled; what was asked of systemd.
    Scheduled(String),
    /// Not done, and why (condition false).
    NotNow(String),
    /// Failed, or interrupted.
    End(RunEnd),
}

/// `shutdown`'s arguments for `ps`; `min_delay` minutes at least.
pub fn shutdown_args(ps: &PowerState, min_delay: u32) -> Vec<String> {
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
pub fn schedule(
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
pub fn run_power_state(root: &Root, ps: &PowerState, cc: &CcFacts, stop: &AtomicBool) -> PowerEnd {
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
                        super::facts::which(root, &words[0])
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::document;

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
        let end = run_power_state(&root, &ps, &CcFacts::default(), &AtomicBool::new(false));
        assert!(matches!(end, PowerEnd::NotNow(w) if w.contains("not the running system")));
    }
}
