//! The early stage: before networking starts, take the customization open-vm-tools handed
//! over, apply identity and network (and, once per MARKER-ID, password and the
//! pre-customization script), reconnect the NICs and report to vCenter.
//!
//! Every step is journaled; a run killed anywhere resumes from the pending copy on the
//! next boot and ends where an uninterrupted run would have ended. The hand-over
//! directory and the pending copy (which may hold the password) are removed at the end,
//! whatever the outcome, and a final state is always sent.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use super::apply_step::apply_prepared;
use super::journal::{Journal, Step};
use super::state as handover;
use super::wait::{wait_for_any, WaitedAny};
use super::{Context, Ending, ScriptEnd};
use crate::engine::customize::{marker_path, prepare, Prepared};
use crate::failure::{Failure, FailureKind};
use crate::model::{FileName, InstanceId};
use crate::report::Reporter;
use crate::root::Root;
use crate::scripts::run::Phase;
use crate::source::imc::ImcInput;
use crate::source::ovf_locate::CD_DEVICES;
use crate::source::{discover, Door, SourceData};
use crate::state::{
    self, InstanceResult, UserDataDisposition, CUST_CFG, IMC_DIR, NICS_TXT, PENDING_DIR,
};

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
pub(crate) fn run(ctx: &mut Context) -> Result<Ending> {
    // Who this VM is, read before this boot is recorded as the last one.
    let identity = super::vm_identity::Identity::read(&ctx.root, &ctx.platform);
    super::vm_identity::record_boot(&ctx.root, &ctx.platform);
    let imc = imc_allowed(ctx);
    let root = ctx.root.clone();
    let pending = Path::new(PENDING_DIR).join(CUST_CFG);
    let handed_over = Path::new(IMC_DIR).join(CUST_CFG);
    if imc {
        if let Err(e) = handover::finish_retirement(&root) {
            tracing::warn!("{e:#}");
        }
        if handover_present(&root) {
            return take_handover(ctx);
        }
        if root.is_file(&pending) {
            tracing::info!("resuming the customization an earlier run did not finish");
            return process_pending(ctx);
        }
    }
    if let Some(ending) = super::ovf_and_guestinfo::customize(ctx, &identity)? {
        return Ok(ending);
    }
    if !identity.may_be_new() {
        tracing::info!(
            "same VM as at the last boot and nothing handed over: not waiting; a {CUST_CFG} \
             that arrives later is applied when it arrives (vmcust-imc.path)"
        );
        return Ok(Ending::Nothing);
    }
    // Wait for whichever comes first: the spec, or a CD drive that was not there yet (its
    // driver may load from udev after this unit started) with an OVF environment on it.
    let mut waiting: Vec<PathBuf> = Vec::new();
    if imc {
        waiting.push(root.resolve(&handed_over, true)?);
    }
    for dev in CD_DEVICES {
        let real = root.resolve(Path::new(dev), true)?;
        if !real.exists() {
            waiting.push(real);
        }
    }
    let deadline = std::time::Instant::now() + ctx.settings.max_wait;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let what = match imc {
            true => format!("{IMC_DIR}/{CUST_CFG} or a CD drive"),
            false => "a CD drive".to_string(),
        };
        match super::timed("waiting", || wait_for_any(&waiting, &what, left, ctx.stop))? {
            WaitedAny::Found(0, after) if imc => {
                tracing::info!("{IMC_DIR}/{CUST_CFG} found after {} ms", after.as_millis());
                return take_handover(ctx);
            }
            WaitedAny::Found(i, after) => {
                let dev = waiting.remove(i);
                tracing::info!(
                    "CD drive {} appeared after {} ms; looking for an OVF environment on it",
                    dev.display(),
                    after.as_millis()
                );
                if let Some(ending) = super::ovf_and_guestinfo::customize(ctx, &identity)? {
                    return Ok(ending);
                }
            }
            WaitedAny::TimedOut => {
                tracing::info!(
                    "no {IMC_DIR}/{CUST_CFG} and no OVF environment within {} s: nothing to customize",
                    ctx.settings.max_wait.as_secs()
                );
                return Ok(Ending::Nothing);
            }
            WaitedAny::Interrupted => return Ok(Ending::Interrupted),
        }
    }
}

/// Whether something is at `/var/run/vmware-imc/cust.cfg`, of whatever type (a directory,
/// FIFO or symlink there is a hand-over to refuse, not nothing).
fn handover_present(root: &Root) -> bool {
    root.resolve(&Path::new(IMC_DIR).join(CUST_CFG), false)
        .is_ok_and(|p| std::fs::symlink_metadata(p).is_ok())
}

/// Takes what open-vm-tools handed over: refused (answered with a failure, moved aside)
/// when it cannot be used, left to cloud-init when it is cloud-init's, otherwise copied
/// into the pending directory and carried out. A hand-over that cannot even be copied
/// (a full disk, a read-only root) is still answered, and removed, so that vCenter does
/// not wait for its timeout and `vmcust-imc.path` does not start the unit for it again.
fn take_handover(ctx: &mut Context) -> Result<Ending> {
    let root = ctx.root.clone();
    if let Some(reason) = handover::check_handover(&root) {
        return refuse_handover(ctx, reason);
    }
    let handed_over = Path::new(IMC_DIR).join(CUST_CFG);
    if let Some(reason) = raw_data_for_cloud_init(ctx, &handed_over) {
        tracing::info!("leaving the vSphere customization to cloud-init: {reason}");
        return Ok(Ending::Nothing);
    }
    if let Err(e) = handover::ingest(&root) {
        let reason = format!("could not take the customization into {PENDING_DIR}: {e:#}");
        tracing::error!("{reason}; nothing was changed");
        // Removed before the answer: a kill in between then loses the answer (vCenter
        // times out) rather than sending it again at the next start (docs/boot.md,
        // "Exactly once").
        if let Err(e) =
            handover::remove_handover(&root).and_then(|()| handover::finish_retirement(&root))
        {
            tracing::warn!("{e:#}");
        }
        super::journal::crash_point_at("handover-removed");
        let failure = Failure::io(reason);
        Reporter::new(ctx.rpc, false).failed(&failure);
        return Ok(Ending::Failed(failure));
    }
    process_pending(ctx)
}

/// Answers a hand-over that cannot be used with a failure, keeps it aside in
/// `/var/lib/vmcust/refused/` and removes it.
fn refuse_handover(ctx: &mut Context, reason: String) -> Result<Ending> {
    let reason = format!(
        "refusing the hand-over: {reason}; only open-vm-tools (root) may hand over a \
         customization, as a regular file of at most {} bytes in a directory only root may write",
        vmcust_imc::MAX_CUST_CFG_BYTES
    );
    tracing::error!(
        "{reason}; nothing was changed, the hand-over is kept in {}",
        state::REFUSED_DIR
    );
    // Moved aside before the answer, as in `take_handover`: at most once.
    let removed = handover::refuse_handover(&ctx.root, &reason);
    super::journal::crash_point_at("handover-removed");
    let failure = Failure::invalid(reason);
    Reporter::new(ctx.rpc, false).failed(&failure);
    removed?;
    Ok(Ending::Failed(failure))
}

/// Why a handed-over spec that carries raw cloud-init data belongs to the real cloud-init
/// installed here (open-vm-tools hands such specs to it whatever
/// `disable_vmware_customization` says), if it does.
fn raw_data_for_cloud_init(ctx: &Context, handed_over: &Path) -> Option<String> {
    let reason =
        crate::cloud_init::coexist::should_step_aside_for_raw_data(&ctx.root, &ctx.settings)?;
    let bytes = ctx.root.read(handed_over).ok().flatten()?;
    let parsed = vmcust_imc::Spec::parse(&bytes).ok()?;
    (parsed.spec.kind() == vmcust_imc::SpecKind::RawCloudInit).then_some(reason)
}

/// Whether vSphere specs are ours to handle (settings, a real cloud-init), saying why not.
fn imc_allowed(ctx: &Context) -> bool {
    if !ctx.settings.imc_enabled {
        tracing::info!(
            "vSphere customization is disabled in the settings ([imc] enabled or [trust] sources)"
        );
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
    let mut journal =
        Journal::open(&root.resolve(&pending.join(state::JOURNAL), false)?)?.for_writes_to(&root);
    let fallback = ctx.default_instance_id();

    let parsed = match vmcust_imc::Spec::parse(&bytes) {
        Ok(p) => p,
        Err(e) => {
            let first = e.to_string().lines().next().unwrap_or_default().to_string();
            let failure = Failure::invalid(format!("invalid cust.cfg: {first}"));
            tracing::error!("cust.cfg is invalid, nothing was changed:\n{e}");
            return finish(
                ctx,
                &mut journal,
                &fallback,
                false,
                nics.as_deref(),
                Err(failure),
                None,
            );
        }
    };
    let gc = parsed.spec.misc.post_gc_status;
    let mut door = Door {
        root: &root,
        enabled: crate::source::SourceSet::ALL.only("imc"),
        rpc: None,
        imc: Some(ImcInput {
            parsed,
            dir: root.resolve(pending, true)?,
            name: CUST_CFG.to_string(),
        }),
        given: None,
        mapping: Default::default(),
        media: Default::default(),
    };
    let prepared =
        super::timed("discover (cust.cfg)", || discover(&mut door, &fallback)).and_then(|g| {
            for w in &g.warnings {
                tracing::warn!("{w}");
            }
            let p = super::timed("facts and plan", || prepare(&root, &g, ctx.options()))
                .map_err(Failure::from)?;
            Ok((g, p))
        });
    let (g, prepared) = match prepared {
        Ok(gp) => gp,
        Err(failure) => {
            tracing::error!("{}; nothing was changed", failure.reason);
            return finish(
                ctx,
                &mut journal,
                &fallback,
                gc,
                nics.as_deref(),
                Err(failure),
                None,
            );
        }
    };
    let instance_id = g.instance_id().clone();
    // What happens to the user-data was decided with the plan; the record keeps it for
    // the late stage.
    let user_data = prepared
        .steps
        .user_data
        .as_ref()
        .map(|u| u.disposition.clone());
    if g.imc.is_some_and(|o| o.raw_cloud_init) {
        // Raw cloud-init specs have no NIC list of their own to act on, but a hand-over
        // with nics.txt still gets its NICs connected: silence would leave them off.
        let outcome = if ctx.settings.allow_raw_data {
            apply_prepared(ctx, &prepared).and_then(|()| keep_cloud_init_data(ctx, &g))
        } else {
            Err(Failure::new(
                FailureKind::RawDataDisabled,
                "raw cloud-init data is disabled in the settings ([imc] allow_raw_data = false)",
            ))
        };
        for d in &prepared.steps.degraded {
            tracing::warn!("not applied: {d}");
        }
        let ended = finish(
            ctx,
            &mut journal,
            &instance_id,
            false,
            nics.as_deref(),
            outcome,
            user_data,
        );
        // What the raw data asked for and vmcust does not apply: the record says so.
        if !prepared.steps.degraded.is_empty() {
            state::add_degraded(&root, &instance_id, &prepared.steps.degraded);
        }
        return ended;
    }
    if journal_is_fresh(&journal) {
        Reporter::new(ctx.rpc, gc).gc_status("Started");
    }
    let result = traditional(ctx, &mut journal, &g, &prepared);
    match result {
        Err(Stop::Interrupted) => Ok(Ending::Interrupted),
        Err(Stop::Failed(f)) => finish(
            ctx,
            &mut journal,
            &instance_id,
            gc,
            nics.as_deref(),
            Err(f),
            user_data,
        ),
        Ok(()) => finish(
            ctx,
            &mut journal,
            &instance_id,
            gc,
            nics.as_deref(),
            Ok(()),
            user_data,
        ),
    }
}

fn journal_is_fresh(journal: &Journal) -> bool {
    Step::ALL.iter().all(|s| !journal.is_done(*s))
}

/// The traditional (LinuxPrep) customization, step by step, as [`prepare`] planned it.
fn traditional(
    ctx: &mut Context,
    journal: &mut Journal,
    g: &SourceData,
    prepared: &Prepared,
) -> Result<(), Stop> {
    let root = ctx.root.clone();
    let steps = &prepared.steps;
    let imc = g.imc.unwrap_or_default();
    if let Some(name) = &steps.pre_script {
        let gate =
            crate::scripts::gate::custom_scripts_enabled(&root, imc.default_run_post_cust_script);
        if !gate.is_enabled() {
            return Err(Failure::new(FailureKind::ScriptDisabled, gate.to_string()).into());
        }
        const PRE: FailureKind = FailureKind::PreScriptFailed;
        if journal.is_done(Step::PreScriptStarted) && !journal.is_done(Step::PreScript) {
            // At most once: a script cut off by a power cut or a kill may have done part
            // of its work, and running it again could do that part twice.
            return Err(Failure::new(
                PRE,
                "the pre-customization script was interrupted (power cut or kill) in an \
                 earlier boot; it is not run a second time",
            )
            .into());
        }
        if !journal.is_done(Step::PreScript) {
            let pending = root
                .resolve(Path::new(PENDING_DIR), true)
                .map_err(|e| Failure::new(PRE, e.to_string()))?;
            let staged = crate::scripts::stage::stage_script(&root, &pending, name.as_str())
                .map_err(|e| Failure::new(PRE, e.to_string()))?;
            // Durable before the script starts, or the script does not start: without it a
            // kill during the script would run it a second time at the next boot.
            record_strict(journal, Step::PreScriptStarted)?;
            match super::run_script(ctx, &staged.script, Phase::Pre) {
                ScriptEnd::Succeeded => {}
                // SIGTERM: the script's group was stopped; the next boot reports it as cut
                // off rather than running it again.
                ScriptEnd::Interrupted => return Err(Stop::Interrupted),
                ScriptEnd::Failed(reason) => return Err(Failure::new(PRE, reason).into()),
            }
            record(journal, Step::PreScript)?;
        }
    }
    check_stop(ctx)?;

    if !journal.is_done(Step::Applied) {
        apply_prepared(ctx, prepared)?;
        record(journal, Step::Applied)?;
    }
    check_stop(ctx)?;

    if steps.post_script.is_some() && !journal.is_done(Step::PostScheduled) {
        let flag = state::instance_dir(g.instance_id()).join(crate::state::POST_PENDING);
        let content: &[u8] = if imc.post_gc_status { b"gc" } else { b"" };
        root.write_file(&flag, content, 0o600).map_err(|e| {
            Failure::new(
                FailureKind::PostScriptFailed,
                format!("scheduling the post-customization script: {e}"),
            )
        })?;
        record(journal, Step::PostScheduled)?;
    }

    if let (Some(m), false) = (&steps.marker, journal.is_done(Step::Marker)) {
        write_marker(&root, &m.id)
            .map_err(|e| Failure::new(FailureKind::MarkerFailed, format!("{e:#}")))?;
        record(journal, Step::Marker)?;
    }
    Ok(())
}

/// Keeps raw cloud-init meta-data and user-data for the late stage.
fn keep_cloud_init_data(ctx: &Context, g: &SourceData) -> Result<(), Failure> {
    let dir = state::instance_dir(g.instance_id());
    let keep = |name: &str, bytes: &[u8]| {
        ctx.root
            .write_file(&dir.join(name), bytes, 0o600)
            .map_err(|e| Failure::new(FailureKind::UserDataFailed, format!("keeping {name}: {e}")))
    };
    keep(crate::state::META_DATA, &g.cloud_init_meta_data())?;
    if let Some(ud) = &g.user_data {
        keep(crate::state::USER_DATA, &ud.bytes)?;
    }
    Ok(())
}

/// Removes every earlier marker and writes this one (as VMware's engines do).
fn write_marker(root: &Root, marker: &FileName) -> Result<()> {
    for name in root.list_dir(Path::new(state::STATE_DIR))? {
        if name.starts_with(".markerfile") {
            let path = root.resolve(&Path::new(state::STATE_DIR).join(&name), false)?;
            std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
        }
    }
    root.write_file(&marker_path(marker), b"", 0o644)?;
    Ok(())
}

/// Records a step that guards something that must not happen twice; a step that cannot
/// be recorded fails the customization before that thing happens.
fn record_strict(journal: &mut Journal, step: Step) -> Result<(), Stop> {
    journal.record(step).map_err(|e| {
        Failure::io(format!(
            "recording progress ({}): {e}; the step that must not run twice was not started",
            step.name()
        ))
    })?;
    super::crash_point(step);
    Ok(())
}

/// Records a step that is safe to do again (applying the plan, the marker, the NIC
/// handshake): when the record cannot be written (a full disk), the run goes on, and a
/// run that resumes after a kill merely does the step again.
fn record(journal: &mut Journal, step: Step) -> Result<(), Stop> {
    record_lenient(journal, step);
    Ok(())
}

fn record_lenient(journal: &mut Journal, step: Step) {
    if let Err(e) = journal.record(step) {
        tracing::warn!(
            "could not record progress ({}): {e}; going on (the step is safe to repeat)",
            step.name()
        );
    }
    super::crash_point(step);
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
    instance_id: &InstanceId,
    gc: bool,
    nics: Option<&str>,
    outcome: Result<(), Failure>,
    user_data: Option<UserDataDisposition>,
) -> Result<Ending> {
    let root = ctx.root.clone();
    if let (Some(nics), false) = (nics, journal.is_done(Step::Nics)) {
        let timing = ctx.nic_timing;
        let stop = ctx.stop;
        let mut reporter = Reporter::new(ctx.rpc, gc);
        let outcome = super::timed("NIC handshake", || {
            reporter.connect_nics(nics, &timing, &mut |d| super::sleep_unless(stop, d))
        });
        if outcome == crate::report::NicsOutcome::Interrupted {
            return Ok(Ending::Interrupted);
        }
        record_lenient(journal, Step::Nics);
    }
    let (code, error) = match &outcome {
        Ok(()) => (crate::failure::Code::Success, None),
        Err(f) => (f.kind.code(), Some(f.reason.clone())),
    };
    // Exactly one final state: `reporting` is recorded before the RPC, so a run cut off
    // between the RPC and its record does not send it again. The window left is a kill
    // after that record and before the RPC (microseconds: the record is written, not yet
    // synced, when the RPC goes out): then vCenter gets no final state and times out,
    // which it reports as a failure; the other order would risk two final states. The
    // record is synced right after the RPC; a power cut before that may send the same
    // state again at the next boot. A record that cannot be written (a full disk, a
    // read-only root) does not hold the final state back.
    if journal.is_done(Step::Reporting) && !journal.is_done(Step::Reported) {
        tracing::warn!(
            "an earlier run was stopped while sending the final state; it is not sent again \
             (vCenter has it, or reports a timeout)"
        );
    } else if !journal.is_done(Step::Reported) {
        // What the customization wrote is on disk before vCenter hears it is done (a
        // host may power off or snapshot the VM at once); outside the window above.
        if let Err(e) = ctx.root.sync() {
            tracing::warn!("could not make the customization's files durable: {e}");
        }
        if let Err(e) = journal.record_unsynced(Step::Reporting) {
            tracing::warn!("could not record that the final state is being sent: {e}");
        }
        super::crash_point(Step::Reporting);
        let mut reporter = Reporter::new(ctx.rpc, gc);
        match &outcome {
            Ok(()) => reporter.done(),
            Err(f) => reporter.failed(f),
        }
        super::journal::crash_point_at("sent");
        let _ = journal.sync();
        record_lenient(journal, Step::Reported);
    }
    let steps = Step::ALL
        .iter()
        .filter(|s| journal.is_done(**s))
        .map(|s| s.name().to_string())
        .collect();
    // The final state is out: whatever cannot be recorded now is said in the log, and the
    // pending copy is retired all the same, so that no later run sends another.
    if let Err(e) = state::write_result(
        &root,
        &InstanceResult {
            instance_id: instance_id.clone(),
            outcome: if error.is_none() { "done" } else { "failed" }.into(),
            code: code as u16,
            error: error.clone(),
            finished: state::now(),
            steps,
            origins: Default::default(),
            degraded: Vec::new(),
            user_data,
            // A vSphere customization is not tracked this closely (its pre-script may have
            // run): a failure counts as a customization.
            nothing_changed: false,
        },
    ) {
        tracing::error!("could not record the result of instance {instance_id}: {e:#}");
    }
    super::vm_identity::record_customization(&root, instance_id, &ctx.platform);
    if error.is_some() {
        // No post-customization will run for a failed customization: the staged script
        // (which may hold secrets) goes now.
        if let Err(e) = crate::scripts::stage::unstage(&root) {
            tracing::error!("removing the staged custom script: {e}");
        }
        // Nor its flag: the late stage would run the script and send a second final state.
        // Removed (durably) before the pending copy is retired, so that a kill before
        // then finds the flag with the pending copy, which holds the late stage back.
        let flag = state::instance_dir(instance_id).join(crate::state::POST_PENDING);
        if let Err(e) = super::late::remove_durably(&root, &flag) {
            tracing::error!("removing {}: {e:#}", flag.display());
        }
    }
    if let Err(e) = handover::remove_handover(&root) {
        tracing::error!("{e:#}");
    }
    handover::retire_pending(&root)?;
    match outcome {
        Ok(()) => {
            tracing::info!("customization of instance {instance_id} done");
            Ok(Ending::Done)
        }
        Err(f) => {
            tracing::error!(
                "customization of instance {instance_id} failed: {}",
                f.reason
            );
            Ok(Ending::Failed(f))
        }
    }
}
