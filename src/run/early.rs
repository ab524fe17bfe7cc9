//! The early stage: before networking starts, take the customization open-vm-tools handed
//! over, apply identity and network (and, once per MARKER-ID, password and the
//! pre-customization script), reconnect the NICs and report to vCenter.
//!
//! Every step is journaled; a run killed anywhere resumes from the pending copy on the
//! next boot and ends where an uninterrupted run would have ended. The hand-over
//! directory and the pending copy (which may hold the password) are removed at the end,
//! whatever the outcome, and a final state is always sent.

use std::path::Path;

use anyhow::{Context as _, Result};

use super::journal::{Journal, Step};
use super::state::{self, InstanceResult, CUST_CFG, IMC_DIR, NICS_TXT, PENDING_DIR};
use super::wait::{wait_for_file, Waited};
use super::{Context, Ending, ScriptEnd};
use crate::apply::apply;
use crate::facts::RootFacts;
use crate::plan::{plan, PlanError, PlanOptions};
use crate::report::{Code, Reporter};
use crate::root::Root;
use crate::scripts::run::Phase;

/// A failure that ends the customization: the code for the host, the text for
/// `guestinfo.gc.status`, and the reason for people.
pub struct Failure {
    code: Code,
    gc_text: &'static str,
    reason: String,
}

impl Failure {
    /// Why it failed, for people.
    pub(super) fn reason(&self) -> &str {
        &self.reason
    }

    pub(super) fn new(code: Code, gc_text: &'static str, reason: impl Into<String>) -> Self {
        Failure {
            code,
            gc_text,
            reason: reason.into(),
        }
    }
}

/// What stopped a traditional customization before its end.
enum Stop {
    /// It failed; report and clean up.
    Failed(Failure),
    /// SIGTERM: leave the journal as it is, the next boot resumes.
    Interrupted,
}

impl From<Failure> for Stop {
    fn from(f: Failure) -> Self {
        Stop::Failed(f)
    }
}

/// Runs the early stage. Precedence: a vSphere spec already handed over (or one left
/// unfinished by an earlier run) first; else the OVF environment and guestinfo data; else
/// wait for a spec up to the maximum. Like cloud-init, OVF/guestinfo data means no wait.
pub fn run(ctx: &mut Context) -> Result<Ending> {
    let imc = imc_allowed(ctx);
    let root = ctx.root.clone();
    let pending = Path::new(PENDING_DIR).join(CUST_CFG);
    let handed_over = Path::new(IMC_DIR).join(CUST_CFG);
    if imc {
        if root.is_file(&handed_over) {
            state::ingest(&root)?;
            return process_pending(ctx);
        }
        if root.is_file(&pending) {
            tracing::info!("resuming the customization an earlier run did not finish");
            return process_pending(ctx);
        }
    }
    if let Some(ending) = super::guest_data::customize(ctx)? {
        return Ok(ending);
    }
    if !imc {
        return Ok(Ending::Nothing);
    }
    let cust_cfg = root.resolve(&handed_over, true)?;
    match wait_for_file(&cust_cfg, ctx.settings.max_wait, ctx.stop)? {
        Waited::Found(after) => {
            tracing::info!("{IMC_DIR}/{CUST_CFG} found after {} ms", after.as_millis())
        }
        Waited::TimedOut => {
            tracing::info!(
                "no {IMC_DIR}/{CUST_CFG} within {} s: nothing to customize",
                ctx.settings.max_wait.as_secs()
            );
            return Ok(Ending::Nothing);
        }
        Waited::Interrupted => return Ok(Ending::Interrupted),
    }
    state::ingest(&root)?;
    process_pending(ctx)
}

/// Whether vSphere specs are ours to handle (settings, a real cloud-init), saying why not.
fn imc_allowed(ctx: &Context) -> bool {
    if !ctx.settings.imc_enabled {
        tracing::info!("vSphere customization is disabled in the settings ([imc] enabled)");
        return false;
    }
    if let Some(reason) = &ctx.step_aside {
        tracing::info!("leaving the vSphere customization to cloud-init: {reason}");
        return false;
    }
    true
}

/// Processes the pending customization to its end.
fn process_pending(ctx: &mut Context) -> Result<Ending> {
    let root = ctx.root.clone();
    let pending = Path::new(PENDING_DIR);
    let bytes = root
        .read(&pending.join(CUST_CFG))?
        .context("the pending customization has no cust.cfg")?;
    let nics = root
        .read_text(&pending.join(NICS_TXT))
        .ok()
        .flatten()
        .map(|t| t.chars().take(1024).collect::<String>());
    let mut journal = Journal::open(&root.resolve(&pending.join("journal"), false)?)?;

    let parsed = match vmcust_imc::Spec::parse(&bytes) {
        Ok(p) => p,
        Err(e) => {
            let first = e.to_string().lines().next().unwrap_or_default().to_string();
            let failure = Failure::new(
                Code::CustomizeFailed,
                "Error parsing the customization specification",
                format!("invalid cust.cfg: {first}"),
            );
            tracing::error!("cust.cfg is invalid, nothing was changed:\n{e}");
            let id = ctx.default_instance_id();
            return finish(ctx, &mut journal, &id, false, nics.as_deref(), Err(failure));
        }
    };
    for w in &parsed.warnings {
        tracing::warn!("cust.cfg: {w}");
    }
    let spec = &parsed.spec;
    let instance_id = spec
        .misc
        .instance_id
        .clone()
        .unwrap_or_else(|| ctx.default_instance_id());
    if spec.kind() == vmcust_imc::SpecKind::RawCloudInit {
        let (instance_id, outcome) = super::raw::customize(ctx, spec, instance_id);
        // Raw cloud-init specs have no NIC list of their own to act on, but a hand-over
        // with nics.txt still gets its NICs connected: silence would leave them off.
        return finish(
            ctx,
            &mut journal,
            &instance_id,
            false,
            nics.as_deref(),
            outcome,
        );
    }
    let gc = spec.misc.post_gc_status;
    if journal_is_fresh(&journal) {
        Reporter::new(ctx.rpc, gc).gc_status("Started");
    }
    let result = traditional(ctx, &mut journal, spec, &instance_id);
    match result {
        Err(Stop::Interrupted) => Ok(Ending::Interrupted),
        Err(Stop::Failed(f)) => {
            finish(ctx, &mut journal, &instance_id, gc, nics.as_deref(), Err(f))
        }
        Ok(()) => finish(ctx, &mut journal, &instance_id, gc, nics.as_deref(), Ok(())),
    }
}

fn journal_is_fresh(journal: &Journal) -> bool {
    Step::ALL.iter().all(|s| !journal.is_done(*s))
}

/// The traditional (LinuxPrep) customization, step by step.
fn traditional(
    ctx: &mut Context,
    journal: &mut Journal,
    spec: &vmcust_imc::Spec,
    instance_id: &str,
) -> Result<(), Stop> {
    let root = ctx.root.clone();
    let mut customization = crate::source::imc::customization(spec);
    customization.instance_id = Some(instance_id.to_string());
    // Password and scripts run once per MARKER-ID, and never without one (as VMware).
    let marker = customization.marker_id.clone();
    let once = marker
        .as_deref()
        .is_some_and(|m| !root.is_file(&state::marker_path(m)));
    if !once {
        if customization.identity.root_password.is_some() {
            tracing::info!("marker {marker:?} already used or absent: the password is left as is");
        }
        customization.identity.root_password = None;
    }
    let script = customization.custom_script.clone().filter(|_| once);

    if let Some(name) = &script {
        let gate = crate::scripts::gate::custom_scripts_enabled(
            &root,
            spec.misc.default_run_post_cust_script,
        );
        if !gate.is_enabled() {
            return Err(Failure::new(
                Code::ScriptDisabled,
                "Custom script is disabled by VM Administrator",
                gate.to_string(),
            )
            .into());
        }
        if !journal.is_done(Step::PreScript) {
            const GC: &str = "Error executing pre-customization script";
            let pending = root
                .resolve(Path::new(PENDING_DIR), true)
                .map_err(|e| Failure::new(Code::CustomizeFailed, GC, e.to_string()))?;
            let staged = crate::scripts::stage::stage_script(&root, &pending, name)
                .map_err(|e| Failure::new(Code::CustomizeFailed, GC, e.to_string()))?;
            match super::run_script(ctx, &staged.script, Phase::Pre) {
                ScriptEnd::Succeeded => {}
                ScriptEnd::Interrupted => return Err(Stop::Interrupted),
                ScriptEnd::Failed(reason) => {
                    return Err(Failure::new(Code::CustomizeFailed, GC, reason).into())
                }
            }
            record(journal, Step::PreScript)?;
        }
    }
    check_stop(ctx)?;

    if !journal.is_done(Step::Applied) {
        apply_customization(ctx, &customization)?;
        record(journal, Step::Applied)?;
    }
    check_stop(ctx)?;

    if script.is_some() && !journal.is_done(Step::PostScheduled) {
        let flag = state::instance_dir(instance_id).join(super::late::POST_PENDING);
        let content: &[u8] = if spec.misc.post_gc_status { b"gc" } else { b"" };
        root.write_file(&flag, content, 0o600).map_err(|e| {
            Failure::new(
                Code::CustomizeFailed,
                "Error executing post-customization script",
                format!("scheduling the post-customization script: {e}"),
            )
        })?;
        record(journal, Step::PostScheduled)?;
    }

    if let (Some(m), false) = (&marker, journal.is_done(Step::Marker)) {
        write_marker(&root, m).map_err(|e| {
            Failure::new(
                Code::CustomizeFailed,
                "Error creating marker files",
                format!("{e:#}"),
            )
        })?;
        record(journal, Step::Marker)?;
    }
    Ok(())
}

/// Plans and applies a customization; plan errors change nothing.
pub(super) fn apply_customization(
    ctx: &Context,
    c: &crate::model::Customization,
) -> Result<(), Failure> {
    let root = &ctx.root;
    let fail =
        |e: String| Failure::new(Code::CustomizeFailed, "Error applying the customization", e);
    let facts = RootFacts::gather(root, c).map_err(|e| fail(format!("{e:#}")))?;
    let opts = PlanOptions {
        renderer: ctx.settings.renderer,
    };
    let plan = plan(c, &facts, &opts).map_err(|e| match e {
        PlanError::Network(_) => Failure::new(
            Code::NetworkSetupFailed,
            "Error preparing Network Configuration",
            e.to_string(),
        ),
        _ => fail(e.to_string()),
    })?;
    apply(root, &plan).map_err(|e| fail(format!("{e:#}")))?;
    ctx.apply_live_hostname(c);
    Ok(())
}

/// Removes every earlier marker and writes this one (as VMware's engines do).
fn write_marker(root: &Root, marker: &str) -> Result<()> {
    for name in root.list_dir(Path::new(state::STATE_DIR))? {
        if name.starts_with(".markerfile") {
            let path = root.resolve(&Path::new(state::STATE_DIR).join(&name), false)?;
            std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
        }
    }
    root.write_file(&state::marker_path(marker), b"", 0o644)?;
    Ok(())
}

fn record(journal: &mut Journal, step: Step) -> Result<(), Stop> {
    journal.record(step).map_err(|e| {
        Failure::new(
            Code::CustomizeFailed,
            "Error applying the customization",
            format!("recording progress: {e}"),
        )
    })?;
    super::crash_point(step);
    Ok(())
}

fn check_stop(ctx: &Context) -> Result<(), Stop> {
    if ctx.stopped() {
        Err(Stop::Interrupted)
    } else {
        Ok(())
    }
}

/// The end of every customization: NICs connected (also after a failure: silence would
/// leave them disconnected), the final state sent, the result recorded, the hand-over and
/// the pending copy removed.
fn finish(
    ctx: &mut Context,
    journal: &mut Journal,
    instance_id: &str,
    gc: bool,
    nics: Option<&str>,
    outcome: Result<(), Failure>,
) -> Result<Ending> {
    let root = ctx.root.clone();
    if let (Some(nics), false) = (nics, journal.is_done(Step::Nics)) {
        let timing = ctx.nic_timing;
        let stop = ctx.stop;
        let mut reporter = Reporter::new(ctx.rpc, gc);
        let outcome = reporter.connect_nics(nics, &timing, &mut |d| super::sleep_unless(stop, d));
        if outcome == crate::report::NicsOutcome::Interrupted {
            return Ok(Ending::Interrupted);
        }
        let _ = journal.record(Step::Nics);
        super::crash_point(Step::Nics);
    }
    let (code, error) = match &outcome {
        Ok(()) => (Code::Success, None),
        Err(f) => (f.code, Some(f.reason.clone())),
    };
    if !journal.is_done(Step::Reported) {
        let mut reporter = Reporter::new(ctx.rpc, gc);
        match &outcome {
            Ok(()) => reporter.done(),
            Err(f) => reporter.failed(f.code, f.gc_text, &f.reason),
        }
        let _ = journal.record(Step::Reported);
        super::crash_point(Step::Reported);
    }
    let steps = Step::ALL
        .iter()
        .filter(|s| journal.is_done(**s))
        .map(|s| s.name().to_string())
        .collect();
    state::write_result(
        &root,
        &InstanceResult {
            instance_id: instance_id.to_string(),
            outcome: if error.is_none() { "done" } else { "failed" }.into(),
            code: code as u16,
            error: error.clone(),
            finished: state::now(),
            steps,
            origins: Default::default(),
        },
    )?;
    state::remove_handover(&root)?;
    state::remove_pending(&root)?;
    if error.is_some() {
        // No post-customization will run for a failed customization: the staged script
        // (which may hold secrets) goes now.
        crate::scripts::stage::unstage(&root)?;
    }
    match error {
        None => {
            tracing::info!("customization of instance {instance_id} done");
            Ok(Ending::Done)
        }
        Some(reason) => {
            tracing::error!("customization of instance {instance_id} failed: {reason}");
            Ok(Ending::Failed(reason))
        }
    }
}
