//! The driver of each boot stage: runs that stage's cloud-config modules in cloud-init's
//! module order, honours each module's frequency through [`Semaphores`], and returns one
//! [`ModuleReport`] per module (ran, skipped and why, failed and why, interrupted) for the
//! caller to log, record and turn into a degraded or failed ending.
//!
//! Early (cloud-init's init stage, before the network): the user-data's `boothooks`,
//! `bootcmd`, `write_files`, `growpart`, `resizefs`, `set_hostname`, `update_etc_hosts`,
//! `ca_certs` — the accounts modules (`users_groups`, `ssh`, `set_passwords`) follow them
//! and are not run here. Late (config and final stages, after network-online): `ntp`,
//! `timezone`, `package_update_upgrade_install`, `write_files_deferred`, the script
//! modules (`scripts_vendor`, `scripts_per_once`, `scripts_per_boot`,
//! `scripts_per_instance`, then `runcmd` and `scripts_user`, whose scripts run together in
//! name order: [`super::scripts`]), `final_message`, `power_state_change`.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde::Serialize;

use crate::cloud_config::parts::Part;
use crate::cloud_config::power::{Condition, PowerMode, PowerState};
use crate::cloud_config::registry::{self, Frequency};
use crate::cloud_config::CloudConfig;
use crate::model::{HostName, InstanceId};
use crate::plan::{Action, Plan};
use crate::root::Root;

use super::exec::{self, Program, RunEnd};
use super::facts::CcFacts;
use super::files::{plan_write_files, Which};
use super::power::{run_power_state, PowerEnd};
use super::scripts::{self, Script, Turn};
use super::semaphore::{Gate, Semaphores};
use super::{certs, commands, disk, final_message, hostname, ntp, packages, timezone};

/// Default time `bootcmd` or `runcmd` may run.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(600);
/// Default time one package-manager command may run.
pub const PACKAGE_TIMEOUT: Duration = Duration::from_secs(1800);
/// Default time a follow-up command (service restart, certificate update) may run.
pub const TOOL_TIMEOUT: Duration = Duration::from_secs(120);

/// What a stage's modules work with.
pub struct StageContext<'a> {
    /// The system being customized.
    pub root: Root,
    /// The instance the cloud-config belongs to.
    pub instance: InstanceId,
    /// This boot's id ([`super::semaphore::boot_id`]).
    pub boot_id: String,
    /// Set by SIGTERM: the running program's group is stopped and no module starts.
    pub stop: &'a AtomicBool,
    /// Time `bootcmd` or `runcmd` may run.
    pub command_timeout: Duration,
    /// Time one package-manager command may run.
    pub package_timeout: Duration,
    /// Time a follow-up command may run.
    pub tool_timeout: Duration,
    /// Where the user-data came from, for `final_message`'s `$DATASOURCE`.
    pub datasource: String,
    /// The metadata's host name, used when the cloud-config names none.
    pub fallback_hostname: Option<HostName>,
    /// The user-data's (then vendor-data's) script and boothook parts, as
    /// [`UserData::scripts`](crate::cloud_config::userdata::UserData::scripts) holds them.
    pub script_parts: Vec<(u16, Part)>,
}

impl<'a> StageContext<'a> {
    /// A context with the default timeouts.
    pub fn new(root: Root, instance: InstanceId, boot_id: String, stop: &'a AtomicBool) -> Self {
        StageContext {
            root,
            instance,
            boot_id,
            stop,
            command_timeout: COMMAND_TIMEOUT,
            package_timeout: PACKAGE_TIMEOUT,
            tool_timeout: TOOL_TIMEOUT,
            datasource: "guestinfo".into(),
            fallback_hostname: None,
            script_parts: Vec::new(),
        }
    }

    fn live(&self) -> bool {
        self.root.path() == Path::new("/")
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// The instance's directory of scripts (inside the root).
    fn scripts_dir(&self) -> PathBuf {
        Path::new(crate::boot::state::INSTANCES_DIR)
            .join(self.instance.file_name())
            .join("scripts")
    }
}

/// How one module ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "kebab-case")]
pub enum ModuleOutcome {
    /// It did its work.
    Ran {
        /// What it did.
        note: String,
    },
    /// It did nothing.
    Skipped {
        /// Why (not in the cloud-config, already ran, not the running system, a missing
        /// tool in auto mode).
        why: String,
    },
    /// It failed; the customization is to be reported failed or degraded.
    Failed {
        /// Why, naming the key and how to fix it.
        why: String,
    },
    /// SIGTERM stopped it (or stopped the stage before it): the next run goes on; a
    /// module that must not run twice is then reported cut off.
    Interrupted,
}

impl std::fmt::Display for ModuleOutcome {
    /// In words, for logs: `ran: …`, `skipped: …`, `failed: …`, `interrupted`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModuleOutcome::Ran { note } if note.is_empty() => f.write_str("ran"),
            ModuleOutcome::Ran { note } => write!(f, "ran: {note}"),
            ModuleOutcome::Skipped { why } => write!(f, "skipped: {why}"),
            ModuleOutcome::Failed { why } => write!(f, "failed: {why}"),
            ModuleOutcome::Interrupted => {
                f.write_str("interrupted (stopped by SIGTERM; the next run goes on)")
            }
        }
    }
}

/// One module's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModuleReport {
    /// cloud-init's module name (`runcmd`, `write_files_deferred`).
    pub module: &'static str,
    /// How often it runs.
    pub frequency: Frequency,
    /// How it ended.
    pub outcome: ModuleOutcome,
}

/// The early stage's modules, in order.
pub const EARLY_MODULES: &[&str] = &[
    "boothooks",
    "bootcmd",
    "write_files",
    "growpart",
    "resizefs",
    "set_hostname",
    "update_etc_hosts",
    "ca_certs",
];

/// The late stage's modules, in order.
pub const LATE_MODULES: &[&str] = &[
    "ntp",
    "timezone",
    "package_update_upgrade_install",
    "write_files_deferred",
    "scripts_vendor",
    "scripts_per_once",
    "scripts_per_boot",
    "scripts_per_instance",
    "runcmd",
    "scripts_user",
    "final_message",
    "power_state_change",
];

/// The registry's frequency for the module reading `key`.
fn freq(key: &str) -> Frequency {
    registry::lookup(key).map_or(Frequency::PerInstance, |m| m.frequency)
}

fn skipped(why: impl Into<String>) -> ModuleOutcome {
    ModuleOutcome::Skipped { why: why.into() }
}

fn failed(why: impl Into<String>) -> ModuleOutcome {
    ModuleOutcome::Failed { why: why.into() }
}

fn absent(key: &str) -> ModuleOutcome {
    skipped(format!("{key} is not in the cloud-config"))
}

fn from_end(end: RunEnd, note: impl Into<String>) -> ModuleOutcome {
    match end {
        RunEnd::Succeeded => ModuleOutcome::Ran { note: note.into() },
        RunEnd::Failed(why) => failed(why),
        RunEnd::Interrupted => ModuleOutcome::Interrupted,
    }
}

/// Runs modules one after another, with their records.
struct Driver<'c, 'a> {
    ctx: &'c StageContext<'a>,
    sems: Semaphores,
    reports: Vec<ModuleReport>,
    interrupted: bool,
}

/// Hands a module the means to record, durably, that it starts (for a module that must
/// not run twice: called right before its program starts).
struct Start<'s> {
    sems: &'s Semaphores,
    module: &'static str,
    freq: Frequency,
    written: Cell<bool>,
}

impl Start<'_> {
    /// Records the start; an error means the module must not start.
    fn now(&self) -> Result<(), ModuleOutcome> {
        self.sems.start(self.module, self.freq).map_err(|e| {
            failed(format!(
                "{}: could not record that it starts ({e}); it is not run, as it could then run twice",
                self.module
            ))
        })?;
        self.written.set(true);
        Ok(())
    }
}

impl<'c, 'a> Driver<'c, 'a> {
    fn new(ctx: &'c StageContext<'a>) -> Self {
        Driver {
            ctx,
            sems: Semaphores::new(&ctx.root, &ctx.instance, &ctx.boot_id),
            reports: Vec::new(),
            interrupted: false,
        }
    }

    fn module(
        &mut self,
        module: &'static str,
        freq: Frequency,
        body: impl FnOnce(&StageContext, &Start) -> ModuleOutcome,
    ) {
        if self.interrupted {
            return;
        }
        let outcome = self.gated(module, freq, body);
        self.report(module, freq, outcome);
    }

    fn report(&mut self, module: &'static str, freq: Frequency, outcome: ModuleOutcome) {
        tracing::info!(module, outcome = %outcome, "cloud-config module");
        if outcome == ModuleOutcome::Interrupted {
            self.interrupted = true;
        }
        self.reports.push(ModuleReport {
            module,
            frequency: freq,
            outcome,
        });
    }

    /// Runs `list` in order, each script gated by its own record, and reports each of
    /// `modules` from its scripts' turns. A failing script does not stop the next.
    fn scripts(
        &mut self,
        modules: &[&'static str],
        list: &[&Script],
        env: &[(String, String)],
        prefix: &[String],
    ) {
        if self.interrupted {
            return;
        }
        let mut turns: Vec<Option<Turn>> = vec![None; list.len()];
        for (i, s) in list.iter().enumerate() {
            if self.ctx.stopped() {
                break;
            }
            let turn = scripts::run_one(self.ctx, &self.sems, s, env, prefix);
            tracing::info!(module = s.module, script = %s.name, turn = %turn, "script");
            let stop = turn == Turn::Interrupted;
            turns[i] = Some(turn);
            if stop {
                break;
            }
        }
        for module in modules {
            let mine: Vec<(&Script, Option<&Turn>)> = list
                .iter()
                .zip(&turns)
                .filter(|(s, _)| s.module == *module)
                .map(|(s, t)| (*s, t.as_ref()))
                .collect();
            let outcome = if self.ctx.stopped() && mine.is_empty() {
                ModuleOutcome::Interrupted
            } else {
                scripts::outcome(module, &mine)
            };
            self.report(module, scripts::frequency(module), outcome);
        }
    }

    /// Reports an outcome without touching the records (the root could not be read: the
    /// stage stops, and the next run tries again).
    fn unrecorded(&mut self, module: &'static str, freq: Frequency, outcome: ModuleOutcome) {
        tracing::error!(module, outcome = %outcome, "cloud-config module");
        self.reports.push(ModuleReport {
            module,
            frequency: freq,
            outcome,
        });
    }

    fn gated(
        &self,
        module: &'static str,
        freq: Frequency,
        body: impl FnOnce(&StageContext, &Start) -> ModuleOutcome,
    ) -> ModuleOutcome {
        if self.ctx.stopped() {
            return ModuleOutcome::Interrupted;
        }
        match self.sems.check(module, freq) {
            Err(e) => return failed(format!("{module}: reading its records: {e}")),
            Ok(Gate::Done(note)) => return skipped(format!("already ran ({note})")),
            Ok(Gate::CutOff) => {
                let why = format!(
                    "{module} was interrupted (power cut or kill) in an earlier run; it is not \
                     run a second time"
                );
                return match self.sems.finish(module, freq, "cut off") {
                    Ok(()) => failed(why),
                    Err(e) => failed(format!("{why}; recording that failed too: {e}")),
                };
            }
            Ok(Gate::Run) => {}
        }
        let start = Start {
            sems: &self.sems,
            module,
            freq,
            written: Cell::new(false),
        };
        let outcome = body(self.ctx, &start);
        let note = match &outcome {
            ModuleOutcome::Ran { note } => format!("ran: {note}"),
            ModuleOutcome::Failed { why } => format!("failed: {why}"),
            ModuleOutcome::Skipped { why } if start.written.get() => format!("skipped: {why}"),
            // Nothing done and nothing started: it may run when there is something to do.
            ModuleOutcome::Skipped { .. } | ModuleOutcome::Interrupted => return outcome,
        };
        match self.sems.finish(module, freq, &note) {
            Ok(()) => outcome,
            Err(e) => failed(format!("{module}: {note}, but recording it failed: {e}")),
        }
    }
}

/// Applies `actions` all or nothing.
fn apply(ctx: &StageContext, actions: Vec<Action>) -> Result<String, String> {
    let n = actions.len();
    crate::apply::apply(&ctx.root, &Plan { actions })
        .map(|changes| {
            let changed = changes
                .iter()
                .filter(|c| {
                    matches!(
                        c,
                        crate::apply::Change::Created | crate::apply::Change::Updated
                    )
                })
                .count();
            format!("{n} file(s), {changed} changed")
        })
        .map_err(|e| format!("{e:#}"))
}

/// Runs follow-up commands (`[program, args…]`, the program found in the root); on a
/// root that is not the running system, service restarts are left out.
fn follow_up(ctx: &StageContext, cc: &CcFacts, module: &str, cmds: &[Vec<String>]) -> RunEnd {
    for c in cmds {
        if !ctx.live() && c.get(1).is_some_and(|v| v == "reload-or-restart") {
            continue;
        }
        match run_tool(ctx, cc, module, c) {
            RunEnd::Succeeded => {}
            other => return other,
        }
    }
    RunEnd::Succeeded
}

/// Runs one tool command (`[program, args…]`, the program found in the root by the
/// facts) with the tool timeout.
fn run_tool(ctx: &StageContext, cc: &CcFacts, module: &str, c: &[String]) -> RunEnd {
    let Some(path) = cc.programs.get(&c[0]) else {
        return RunEnd::Failed(format!(
            "{module}: {} is not in the root; install it in the template",
            c[0]
        ));
    };
    let p = Program {
        module,
        program: path,
        args: c[1..].to_vec(),
        env: Vec::new(),
        timeout: ctx.tool_timeout,
        hide_args: false,
    };
    exec::run(&ctx.root, &p, ctx.stop)
}

fn gather(ctx: &StageContext, cfg: &CloudConfig) -> Result<CcFacts, ModuleOutcome> {
    CcFacts::gather(&ctx.root, cfg).map_err(|e| failed(format!("reading the root: {e:#}")))
}

/// Runs the early stage's modules of `cfg`.
pub fn run_early(ctx: &StageContext, cfg: &CloudConfig) -> Vec<ModuleReport> {
    let mut d = Driver::new(ctx);
    // cloud-init runs them while it reads the user-data, before its init modules.
    let plan = scripts::plan(&ctx.script_parts, &cfg.runcmd);
    let env = [("INSTANCE_ID".to_string(), ctx.instance.to_string())];
    d.scripts(&["boothooks"], &plan.of(&["boothooks"]), &env, &[]);
    d.module("bootcmd", freq("bootcmd"), |ctx, start| {
        if cfg.bootcmd.is_empty() {
            return absent("bootcmd");
        }
        if let Err(o) = start.now() {
            return o;
        }
        let env = vec![("INSTANCE_ID".to_string(), ctx.instance.to_string())];
        let script = ctx.scripts_dir().join("bootcmd");
        let end = commands::run_commands(
            &ctx.root,
            "bootcmd",
            &script,
            &cfg.bootcmd,
            env,
            ctx.command_timeout,
            ctx.stop,
        );
        from_end(end, format!("{} command(s)", cfg.bootcmd.len()))
    });
    let cc = match gather(ctx, cfg) {
        Ok(cc) => cc,
        Err(o) => {
            d.unrecorded("write_files", freq("write_files"), o);
            return d.reports;
        }
    };
    d.module(
        "write_files",
        freq("write_files"),
        |ctx, _| match plan_write_files(cfg, &cc, Which::Now) {
            Err(e) => failed(e.to_string()),
            Ok(a) if a.is_empty() => absent("write_files"),
            Ok(a) => apply(ctx, a).map_or_else(failed, |note| ModuleOutcome::Ran { note }),
        },
    );
    let disk_facts = ctx.live().then(|| disk::gather_live(&ctx.root));
    for (module, key) in [("growpart", "growpart"), ("resizefs", "resize_rootfs")] {
        d.module(module, freq(key), |ctx, _| {
            let Some(df) = &disk_facts else {
                return skipped(format!("{module}: the root is not the running system"));
            };
            let step = if module == "growpart" {
                disk::plan_growpart(cfg.growpart.as_ref(), &cc, df)
            } else {
                disk::plan_resizefs(cfg.resize_rootfs, &cc, df)
            };
            match step {
                disk::Step::Skip(why) => {
                    tracing::warn!("{why}");
                    skipped(why)
                }
                disk::Step::Fail(why) => failed(why),
                disk::Step::Run(cmds) => {
                    for c in &cmds {
                        match run_tool(ctx, &cc, module, c) {
                            RunEnd::Succeeded => {}
                            // growpart's answer for a partition that fills its disk.
                            RunEnd::Failed(why) if why.contains("NOCHANGE") => {
                                return ModuleOutcome::Ran {
                                    note: "the partition already fills the disk".into(),
                                }
                            }
                            other => return from_end(other, ""),
                        }
                    }
                    ModuleOutcome::Ran {
                        note: cmds
                            .iter()
                            .map(|c| c.join(" "))
                            .collect::<Vec<_>>()
                            .join("; "),
                    }
                }
            }
        });
    }
    let fallback = ctx.fallback_hostname.as_ref();
    d.module(
        "set_hostname",
        freq("hostname"),
        |ctx, _| match hostname::plan_set_hostname(cfg, &cc, fallback) {
            Err(e) => failed(e.to_string()),
            Ok(a) if a.is_empty() => skipped(if cfg.preserve_hostname {
                "preserve_hostname is true"
            } else {
                "no host name in the cloud-config or the metadata"
            }),
            Ok(a) => apply(ctx, a).map_or_else(failed, |note| ModuleOutcome::Ran { note }),
        },
    );
    d.module(
        "update_etc_hosts",
        freq("manage_etc_hosts"),
        |ctx, _| match hostname::plan_etc_hosts(cfg, &cc, fallback) {
            Err(e) => failed(e.to_string()),
            Ok(a) if a.is_empty() => skipped("manage_etc_hosts is not true or localhost"),
            Ok(a) => apply(ctx, a).map_or_else(failed, |note| ModuleOutcome::Ran { note }),
        },
    );
    d.module(
        "ca_certs",
        freq("ca_certs"),
        |ctx, _| match certs::plan_ca_certs(cfg, &cc) {
            Err(e) => failed(e.to_string()),
            Ok(None) => absent("ca_certs"),
            Ok(Some(p)) => match apply(ctx, p.actions) {
                Err(e) => failed(e),
                Ok(note) => from_end(follow_up(ctx, &cc, "ca_certs", &p.commands), note),
            },
        },
    );
    d.reports
}

/// Runs the late stage's modules of `cfg`.
pub fn run_late(ctx: &StageContext, cfg: &CloudConfig) -> Vec<ModuleReport> {
    let mut d = Driver::new(ctx);
    let cc = match gather(ctx, cfg) {
        Ok(cc) => cc,
        Err(o) => {
            d.unrecorded("ntp", freq("ntp"), o);
            return d.reports;
        }
    };
    d.module("ntp", freq("ntp"), |ctx, _| match ntp::plan_ntp(cfg, &cc) {
        Err(e) => failed(e.to_string()),
        Ok(None) => absent("ntp (enabled)"),
        Ok(Some(p)) => match apply(ctx, p.actions) {
            Err(e) => failed(e),
            Ok(note) => from_end(
                follow_up(ctx, &cc, "ntp", &p.commands),
                format!("{}: {note}", p.client.name()),
            ),
        },
    });
    d.module(
        "timezone",
        freq("timezone"),
        |ctx, _| match timezone::plan_timezone(cfg, &cc) {
            Err(e) => failed(e.to_string()),
            Ok(a) if a.is_empty() => absent("timezone"),
            Ok(a) => apply(ctx, a).map_or_else(failed, |note| ModuleOutcome::Ran { note }),
        },
    );
    d.module(
        "package_update_upgrade_install",
        freq("packages"),
        |ctx, start| {
            if !packages::wanted(cfg) {
                return absent("packages, package_update or package_upgrade");
            }
            let Some(m) = packages::detect(&cc) else {
                return failed(
                    "packages: the root has no package manager vmcust knows (apt-get, dnf, yum, zypper)",
                );
            };
            let path = cc.programs[m.program()].clone();
            let programs = packages::programs(m, &path, cfg, ctx.package_timeout);
            if let Err(o) = start.now() {
                return o;
            }
            let end = exec::run_all(&ctx.root, &programs, ctx.stop);
            let mut note = format!("{} command(s) with {}", programs.len(), m.program());
            if end == RunEnd::Succeeded
                && cfg.package_reboot_if_required
                && (cfg.package_upgrade || !cfg.packages.is_empty())
                && ctx.root.is_file(Path::new("/var/run/reboot-required"))
            {
                let reboot = PowerState {
                    mode: PowerMode::Reboot,
                    delay_minutes: 0,
                    message: Some("package_reboot_if_required".into()),
                    timeout: 30,
                    condition: Condition::Always(true),
                };
                match run_power_state(&ctx.root, &reboot, &cc, ctx.stop) {
                    PowerEnd::Scheduled(how) => note.push_str(&format!("; reboot scheduled: {how}")),
                    PowerEnd::NotNow(why) => note.push_str(&format!("; no reboot: {why}")),
                    PowerEnd::End(e) => return from_end(e, note),
                }
            }
            from_end(end, note)
        },
    );
    d.module(
        "write_files_deferred",
        freq("write_files"),
        |ctx, _| match plan_write_files(cfg, &cc, Which::Deferred) {
            Err(e) => failed(e.to_string()),
            Ok(a) if a.is_empty() => skipped("no write_files entry has defer: true"),
            Ok(a) => apply(ctx, a).map_or_else(failed, |note| ModuleOutcome::Ran { note }),
        },
    );
    let plan = scripts::plan(&ctx.script_parts, &cfg.runcmd);
    for module in [
        "scripts_vendor",
        "scripts_per_once",
        "scripts_per_boot",
        "scripts_per_instance",
    ] {
        let prefix: &[String] = match module {
            "scripts_vendor" => &cfg.vendor_data.prefix,
            _ => &[],
        };
        d.scripts(&[module], &plan.of(&[module]), &[], prefix);
    }
    // runcmd's script is one of the files scripts_user runs, in name order.
    d.scripts(
        &["runcmd", "scripts_user"],
        &plan.of(&["runcmd", "scripts_user"]),
        &[],
        &[],
    );
    d.module("final_message", freq("final_message"), |ctx, _| {
        let text = final_message::render(
            cfg.final_message.as_deref(),
            &final_message::Subs::now(&ctx.datasource),
        );
        tracing::info!(target: "final_message", "{text}");
        ModuleOutcome::Ran { note: text }
    });
    d.module("power_state_change", freq("power_state"), |ctx, start| {
        let Some(ps) = &cfg.power_state else {
            return absent("power_state");
        };
        if !ctx.live() {
            return skipped("power_state: the root is not the running system");
        }
        if let Err(o) = start.now() {
            return o;
        }
        match run_power_state(&ctx.root, ps, &cc, ctx.stop) {
            PowerEnd::Scheduled(how) => ModuleOutcome::Ran { note: how },
            PowerEnd::NotNow(why) => skipped(why),
            PowerEnd::End(e) => from_end(e, ""),
        }
    });
    d.reports
}
