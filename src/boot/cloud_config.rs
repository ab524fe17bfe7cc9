//! Native cloud-config in the boot stages: the current instance's kept user-data (and
//! vendor-data) read again, and its modules and script parts run by
//! `cloud_config::apply`'s drivers — the early ones on every boot (boothooks and `bootcmd`
//! per boot, the others once per instance by their records), the late ones after
//! network-online, also on every boot (`scripts_per_boot`, `final_message`; the others
//! once by their records). Its accounts were applied with the plan (`engine::native`).
//! A failed module is logged, recorded as degraded, and, in the late stage, fails the
//! stage; a kill leaves the records for the next run. Each stage adds how its modules
//! ended, their files and their commands to the instance's `applied.json`.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::{Context, Ending};
use crate::cloud_config::apply::{self, ModuleOutcome, ModuleReport, StageContext};
use crate::cloud_config::jinja::Vars;
use crate::cloud_config::userdata::{self, ParsedUserData};
use crate::cloud_init::instance_data;
use crate::failure::{Failure, FailureKind};
use crate::model::{HostName, InstanceId};
use crate::state::{self, UserDataDisposition, META_DATA, USER_DATA, USER_DATA_DONE, VENDOR_DATA};

/// Which stage's modules.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Which {
    Early,
    Late,
}

/// The newest customized instance and its directory, when its user-data is applied
/// natively.
fn current(ctx: &Context) -> Option<(InstanceId, PathBuf, String)> {
    let newest = state::read_results(&ctx.root).ok()?.into_iter().next()?;
    if newest.outcome != "done" {
        return None;
    }
    let dir = state::instance_dir(&newest.instance_id);
    let bytes = ctx.root.read(&dir.join(USER_DATA)).ok().flatten()?;
    let native = match &newest.user_data {
        Some(decided) => *decided == UserDataDisposition::Native,
        None => super::late::decided(ctx, &dir, &bytes) == UserDataDisposition::Native,
    };
    let from = newest
        .origins
        .get("user-data")
        .cloned()
        .unwrap_or_else(|| "user-data".to_string());
    native.then_some((newest.instance_id, dir, from))
}

/// The kept user-data of `dir`, read and merged as at customization, its Jinja templates
/// rendered with this boot's instance data — which each stage first writes to
/// `/run/cloud-init/` (a tmpfs: every boot), as cloud-init's stages persist it; so a
/// customization handed over in the late stage has it before its modules run.
fn config(
    ctx: &Context,
    id: &InstanceId,
    dir: &Path,
    from: &str,
) -> Result<ParsedUserData, Failure> {
    let read = |name: &str| {
        ctx.root
            .read(&dir.join(name))
            .map_err(|e| Failure::io(format!("reading {}: {e}", dir.join(name).display())))
    };
    let user = read(USER_DATA)?.unwrap_or_default();
    let vendor = read(VENDOR_DATA)?;
    let meta = read(META_DATA)?.unwrap_or_default();
    let host = crate::engine::native::system_host_name(&ctx.root);
    let tree = instance_data::build(
        &ctx.root,
        &instance_data::Inputs {
            meta_data: &meta,
            instance_id: id.as_str(),
            host_name: host.as_deref(),
            source: from,
        },
    );
    instance_data::write(&ctx.root, &tree)
        .map_err(|e| Failure::io(format!("writing {}: {e}", instance_data::SENSITIVE_PATH)))?;
    userdata::read_rendered(&user, vendor.as_deref(), &Vars::new(&tree))
        .map_err(|e| Failure::invalid(e.to_string()))
}

/// The instance data of the newest customized instance whose user-data is not applied
/// natively (none, a script, or handed to nothing): scripts and `cloud-init query` read
/// `/run/cloud-init/instance-data.json` whether or not there was user-data, as on a
/// cloud-init guest. A real cloud-init writes its own, so then nothing is written; an
/// instance that kept no meta-data (a vSphere spec without raw cloud-init data) has
/// none either.
fn metadata_only(ctx: &Context) -> Result<(), Failure> {
    if crate::cloud_init::coexist::real_cloud_init(&ctx.root).is_some() {
        return Ok(());
    }
    let Some(newest) = state::read_results(&ctx.root)
        .ok()
        .and_then(|r| r.into_iter().next())
    else {
        return Ok(());
    };
    if newest.outcome != "done" {
        return Ok(());
    }
    let dir = state::instance_dir(&newest.instance_id);
    let meta = match ctx.root.read(&dir.join(META_DATA)) {
        Ok(Some(meta)) => meta,
        _ => return Ok(()),
    };
    let source = newest
        .origins
        .get("instance-id")
        .or_else(|| newest.origins.values().next())
        .map_or("imc", String::as_str);
    let host = crate::engine::native::system_host_name(&ctx.root);
    let tree = instance_data::build(
        &ctx.root,
        &instance_data::Inputs {
            meta_data: &meta,
            instance_id: newest.instance_id.as_str(),
            host_name: host.as_deref(),
            source,
        },
    );
    instance_data::write(&ctx.root, &tree)
        .map_err(|e| Failure::io(format!("writing {}: {e}", instance_data::SENSITIVE_PATH)))
}

/// The early stage's modules for the current instance, on every boot; `Some` ending only
/// when SIGTERM stopped them.
pub(crate) fn early(ctx: &mut Context) -> Result<Option<Ending>> {
    let Some((id, dir, from)) = current(ctx) else {
        // The customization is applied already; a convenience file it could not write
        // is a warning, not a failed boot.
        if let Err(e) = metadata_only(ctx) {
            tracing::warn!("instance data: {e}");
        }
        return Ok(None);
    };
    run(ctx, &id, &dir, &from, Which::Early).map(|e| match e {
        Ending::Interrupted => Some(Ending::Interrupted),
        _ => None,
    })
}

/// The late stage's modules for instance `id` (directory `dir`).
pub(crate) fn late(ctx: &mut Context, id: &InstanceId, dir: &Path) -> Result<Ending> {
    let from = state::read_results(&ctx.root)?
        .into_iter()
        .find(|r| &r.instance_id == id)
        .and_then(|r| r.origins.get("user-data").cloned())
        .unwrap_or_else(|| "user-data".to_string());
    let ending = run(ctx, id, dir, &from, Which::Late)?;
    if ending != Ending::Interrupted {
        ctx.root
            .write_record(&dir.join(USER_DATA_DONE), b"applied natively\n", 0o644)?;
    }
    Ok(ending)
}

/// The late stage's modules again on a later boot, when `dir` is the current instance's
/// and its user-data is applied natively: the per-boot ones do their work, the others are
/// skipped by their records.
pub(crate) fn late_again(ctx: &mut Context, dir: &Path) -> Result<Ending> {
    match current(ctx) {
        Some((id, current_dir, from)) if current_dir == dir => {
            run(ctx, &id, dir, &from, Which::Late)
        }
        _ => Ok(Ending::Nothing),
    }
}

fn run(ctx: &mut Context, id: &InstanceId, dir: &Path, from: &str, which: Which) -> Result<Ending> {
    let ParsedUserData {
        config: cfg,
        scripts,
        ..
    } = match config(ctx, id, dir, from) {
        Ok(c) => c,
        Err(f) => {
            tracing::error!("cloud-config of instance {id}: {}", f.reason);
            return Ok(Ending::Failed(f));
        }
    };
    let boot_id = apply::semaphore::boot_id().unwrap_or_else(|_| "unknown-boot".to_string());
    let mut sctx = StageContext::new(ctx.root.clone(), id.clone(), boot_id, ctx.stop);
    sctx.command_timeout = ctx.settings.script_timeout;
    sctx.datasource = from.to_string();
    sctx.fallback_hostname = metadata_host_name(ctx, dir);
    sctx.script_parts = scripts;
    let (stage, reports) = match which {
        Which::Early => (
            "early",
            super::timed("cloud-config (early)", || apply::run_early(&sctx, &cfg)),
        ),
        Which::Late => (
            "late",
            super::timed("cloud-config (late)", || apply::run_late(&sctx, &cfg)),
        ),
    };
    crate::applied::record_modules(
        &ctx.root,
        id,
        stage,
        &reports,
        cfg.timezone.as_ref().map(ToString::to_string),
    );
    Ok(ending_of(ctx, id, stage, &reports))
}

/// The kept meta-data's `local-hostname` (the host name the customization applied): what
/// cloud-init's `set_hostname` and `update_etc_hosts` use when the cloud-config names none.
fn metadata_host_name(ctx: &Context, dir: &Path) -> Option<HostName> {
    let bytes = ctx.root.read(&dir.join(META_DATA)).ok().flatten()?;
    let md = crate::source::metadata::parse("meta-data", std::str::from_utf8(&bytes).ok()?).ok()?;
    HostName::parse(&md.local_hostname?).ok()
}

/// Logs each module's outcome and turns the reports into the stage's ending.
fn ending_of(ctx: &Context, id: &InstanceId, stage: &str, reports: &[ModuleReport]) -> Ending {
    let mut failed = Vec::new();
    for r in reports {
        match &r.outcome {
            ModuleOutcome::Ran { note } => tracing::info!("cloud-config {}: {note}", r.module),
            ModuleOutcome::Skipped { why } => {
                tracing::debug!("cloud-config {}: skipped: {why}", r.module)
            }
            ModuleOutcome::Failed { why } => {
                tracing::error!("cloud-config {} failed: {why}", r.module);
                failed.push(format!(
                    "cloud-config {} ({stage} stage) failed: {why}",
                    r.module
                ));
            }
            ModuleOutcome::Interrupted => return Ending::Interrupted,
        }
    }
    if failed.is_empty() {
        return Ending::Nothing;
    }
    let recorded = state::read_results(&ctx.root)
        .ok()
        .and_then(|all| all.into_iter().find(|r| &r.instance_id == id))
        .map(|r| r.degraded)
        .unwrap_or_default();
    let new: Vec<String> = failed
        .iter()
        .filter(|f| !recorded.contains(f))
        .cloned()
        .collect();
    if !new.is_empty() {
        state::add_degraded(&ctx.root, id, &new);
    }
    Ending::Failed(Failure::new(FailureKind::UserDataFailed, failed.join("; ")))
}
