//! The driver of each boot stage: runs that stage's cloud-config modules in cloud-init's
//! module order, honours each module's frequency through [`Semaphores`], and returns one
//! [`ModuleReport`] per module (ran, skipped and why, failed and why, interrupted) for the
//! caller to log, record and turn into a degraded or failed ending.
//!
//! Which modules each stage runs, in which order and how often, is the module table's
//! ([`crate::cloud_config::modules::TABLE`]): the driver walks the stage's rows, gates
//! each by its records and hands its work a [`Step`]. Script modules run through
//! [`super::scripts`]; `runcmd`'s script runs among `scripts_user`'s, in name order.

use std::cell::{Cell, OnceCell};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde::Serialize;

use crate::cloud_config::modules::{self, Frequency, Run, Stage};
use crate::cloud_config::parts::Part;
use crate::cloud_config::CloudConfig;
use crate::model::{HostName, InstanceId};
use crate::plan::{Action, Plan};
use crate::root::Root;

use super::disk::{gather_live, DiskFacts};
use super::exec::{self, Program, RunEnd};
use super::scripts::{self, Script, Turn};
use super::semaphore::{Gate, Semaphores};
use crate::facts::Facts;

/// Default time `bootcmd` or `runcmd` may run.
pub(crate) const COMMAND_TIMEOUT: Duration = Duration::from_secs(600);
/// Default time one package-manager command may run.
pub(crate) const PACKAGE_TIMEOUT: Duration = Duration::from_secs(1800);
/// Default time a follow-up command (service restart, certificate update) may run.
pub(crate) const TOOL_TIMEOUT: Duration = Duration::from_secs(120);

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
    /// [`ParsedUserData::scripts`](crate::cloud_config::userdata::ParsedUserData::scripts) holds them.
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

    /// Whether the root is the running system.
    pub fn live(&self) -> bool {
        self.root.path() == Path::new("/")
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// The instance's directory of scripts (inside the root).
    pub(crate) fn scripts_dir(&self) -> PathBuf {
        Path::new(crate::state::INSTANCES_DIR)
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
    /// The files its actions touched.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<super::journal::FileDone>,
    /// The programs it ran and how each ended.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<super::journal::CommandDone>,
}

/// The early stage's modules, in order (from the module table).
pub fn early_modules() -> Vec<&'static str> {
    modules::modules_of(Stage::Early)
}

/// The late stage's modules, in order (from the module table).
pub fn late_modules() -> Vec<&'static str> {
    modules::modules_of(Stage::Late)
}

/// A module's work was skipped, and why.
pub(crate) fn skipped(why: impl Into<String>) -> ModuleOutcome {
    ModuleOutcome::Skipped { why: why.into() }
}

/// A module failed, and why.
pub(crate) fn failed(why: impl Into<String>) -> ModuleOutcome {
    ModuleOutcome::Failed { why: why.into() }
}

/// A module found its key absent.
pub(crate) fn absent(key: &str) -> ModuleOutcome {
    skipped(format!("{key} is not in the cloud-config"))
}

/// A module's outcome from how its program ended.
pub(crate) fn from_end(end: RunEnd, note: impl Into<String>) -> ModuleOutcome {
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
pub(crate) struct Start<'s> {
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
        drop(super::journal::take());
        let started = std::time::Instant::now();
        let outcome = self.gated(module, freq, body);
        // Each module is a step of its own in `analyze`, as cloud-init blames each.
        crate::timings::step(&format!("cloud-config {module}"), started);
        self.report(module, freq, outcome);
    }

    fn report(&mut self, module: &'static str, freq: Frequency, outcome: ModuleOutcome) {
        tracing::info!(module, outcome = %outcome, "cloud-config module");
        if outcome == ModuleOutcome::Interrupted {
            self.interrupted = true;
        }
        let (files, commands) = super::journal::take();
        self.reports.push(ModuleReport {
            module,
            frequency: freq,
            outcome,
            files,
            commands,
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
        // What earlier work left in the journal is not these scripts'.
        drop(super::journal::take());
        let mut turns: Vec<Option<Turn>> = vec![None; list.len()];
        for (i, s) in list.iter().enumerate() {
            if self.ctx.stopped() {
                break;
            }
            let started = std::time::Instant::now();
            let turn = scripts::run_one(self.ctx, &self.sems, s, env, prefix);
            crate::timings::step(&format!("cloud-config {} {}", s.module, s.name), started);
            tracing::info!(module = s.module, script = %s.name, turn = %turn, "script");
            let stop = turn == Turn::Interrupted;
            turns[i] = Some(turn);
            if stop {
                break;
            }
        }
        let (_, mut ran) = super::journal::take();
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
            let commands: Vec<_>;
            (commands, ran) = ran.into_iter().partition(|c| c.module == *module);
            self.report(module, scripts::frequency(module), outcome);
            if let Some(last) = self.reports.last_mut() {
                last.commands = commands;
            }
        }
    }

    /// Reports an outcome without touching the records (the root could not be read: the
    /// stage stops, and the next run tries again).
    fn unrecorded(&mut self, module: &'static str, freq: Frequency, outcome: ModuleOutcome) {
        tracing::error!(module, outcome = %outcome, "cloud-config module");
        let (files, commands) = super::journal::take();
        self.reports.push(ModuleReport {
            module,
            frequency: freq,
            outcome,
            files,
            commands,
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

/// Applies `actions` all or nothing; notes each file in the stage's journal.
fn apply(ctx: &StageContext, actions: Vec<Action>) -> Result<String, String> {
    let n = actions.len();
    let plan = Plan { actions };
    crate::apply::apply(&ctx.root, &plan)
        .map(|changes| {
            for (action, change) in plan.actions.iter().zip(&changes) {
                super::journal::file(super::journal::FileDone {
                    path: action.path().display().to_string(),
                    purpose: action.purpose().to_string(),
                    change: crate::apply::done_word(action, *change).to_string(),
                });
            }
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
fn follow_up(ctx: &StageContext, cc: &Facts, module: &str, cmds: &[Vec<String>]) -> RunEnd {
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
fn run_tool(ctx: &StageContext, cc: &Facts, module: &str, c: &[String]) -> RunEnd {
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

fn gather(ctx: &StageContext, cfg: &CloudConfig) -> Result<Facts, ModuleOutcome> {
    Facts::gather(&ctx.root, &crate::cloud_config::wanted::wanted(cfg))
        .map_err(|e| failed(format!("reading the root: {e:#}")))
}

/// What a module's work is handed: the stage, the document, the root's facts, and the
/// means to record its start, apply actions and run tools.
pub struct Step<'s> {
    /// The stage.
    pub ctx: &'s StageContext<'s>,
    /// The document.
    pub cfg: &'s CloudConfig,
    /// The root's facts (empty for a module that does not read the root).
    pub cc: &'s Facts,
    start: &'s Start<'s>,
    disk: &'s OnceCell<Option<DiskFacts>>,
}

impl Step<'_> {
    /// Records, durably, that the module starts (for a module that must not run twice:
    /// right before its program starts); an error is the module's outcome.
    pub fn start(&self) -> Result<(), ModuleOutcome> {
        self.start.now()
    }

    /// Applies `actions` all or nothing: how many files, how many changed.
    pub fn apply(&self, actions: Vec<Action>) -> Result<String, String> {
        apply(self.ctx, actions)
    }

    /// [`Step::apply`] as the module's outcome.
    pub fn apply_outcome(&self, actions: Vec<Action>) -> ModuleOutcome {
        self.apply(actions)
            .map_or_else(failed, |note| ModuleOutcome::Ran { note })
    }

    /// Runs follow-up commands (service restarts left out on a root that is not the
    /// running system).
    pub fn follow_up(&self, module: &str, cmds: &[Vec<String>]) -> RunEnd {
        follow_up(self.ctx, self.cc, module, cmds)
    }

    /// Runs one tool command with the tool timeout.
    pub fn run_tool(&self, module: &str, c: &[String]) -> RunEnd {
        run_tool(self.ctx, self.cc, module, c)
    }

    /// The running system's disks and mounts, read once per stage; `None` for a root
    /// that is not the running system.
    pub fn disk(&self) -> Option<&DiskFacts> {
        self.disk
            .get_or_init(|| self.ctx.live().then(|| gather_live(&self.ctx.root)))
            .as_ref()
    }
}

/// Runs the modules of `stage` of `cfg`, in table order.
fn run_stage(ctx: &StageContext, cfg: &CloudConfig, stage: Stage) -> Vec<ModuleReport> {
    let mut d = Driver::new(ctx);
    let plan = scripts::plan(&ctx.script_parts, &cfg.runcmd);
    let empty = Facts::default();
    let mut cc: Option<Facts> = None;
    let disk = OnceCell::new();
    for m in modules::TABLE.iter().filter(|m| m.stage == stage) {
        match &m.run {
            Run::Elsewhere(_) => {}
            Run::Scripts(s) if s.runs_with.is_some() => {}
            Run::Scripts(s) => {
                let mut together: Vec<&'static str> = modules::TABLE
                    .iter()
                    .filter(|o| matches!(&o.run, Run::Scripts(x) if x.runs_with == Some(m.name)))
                    .map(|o| o.name)
                    .collect();
                together.push(m.name);
                d.scripts(
                    &together,
                    &plan.of(&together),
                    &(s.env)(ctx),
                    (s.prefix)(cfg),
                );
            }
            Run::Body { run, reads_root } => {
                if *reads_root && cc.is_none() {
                    match gather(ctx, cfg) {
                        Ok(facts) => cc = Some(facts),
                        Err(o) => {
                            d.unrecorded(m.name, m.frequency, o);
                            return d.reports;
                        }
                    }
                }
                let facts = cc.as_ref().unwrap_or(&empty);
                d.module(m.name, m.frequency, |ctx, start| {
                    run(&Step {
                        ctx,
                        cfg,
                        cc: facts,
                        start,
                        disk: &disk,
                    })
                });
            }
        }
    }
    d.reports
}

/// Runs the early stage's modules of `cfg`.
pub fn run_early(ctx: &StageContext, cfg: &CloudConfig) -> Vec<ModuleReport> {
    run_stage(ctx, cfg, Stage::Early)
}

/// Runs the late stage's modules of `cfg`.
pub fn run_late(ctx: &StageContext, cfg: &CloudConfig) -> Vec<ModuleReport> {
    run_stage(ctx, cfg, Stage::Late)
}
