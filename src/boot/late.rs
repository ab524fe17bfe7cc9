//! The late stage, after the network is online: the post-customization script that the
//! early stage scheduled, and user-data — handed to cloud-init when it is installed,
//! otherwise run once per instance when it is a `#!` script, or applied natively (its
//! late modules then run again on every boot, for its per-boot scripts).

use std::path::Path;

use anyhow::Result;

use super::{Context, Ending, ScriptEnd};
use crate::engine::customize::user_data_disposition;
use crate::failure::{Failure, FailureKind};
use crate::host::addresses;
use crate::report::Reporter;
use crate::scripts::run::Phase;
use crate::state::{
    InstanceResult, UserDataDisposition, CUST_CFG, INSTANCES_DIR, META_DATA, PENDING_DIR,
    POST_PENDING, POST_STARTED, USER_DATA, USER_DATA_DONE, USER_DATA_STARTED,
};

/// Where cloud-init's NoCloud data source looks for a seed.
pub(crate) const NOCLOUD_SEED: &str = "/var/lib/cloud/seed/nocloud";
/// Where the custom script is staged by the early stage.
pub(crate) const STAGED_SCRIPT: &str = "/root/.customization/customize.sh";

/// Runs the late stage for every instance that has work left.
pub(crate) fn run(ctx: &mut Context) -> Result<Ending> {
    let mut ending = Ending::Nothing;
    // A customization still pending has not sent its final state (an early stage was cut
    // off): its post-script waits until the early stage has finished it, as the script
    // comes after the final state, and a failed customization runs none.
    let unfinished = ctx.root.is_file(&Path::new(PENDING_DIR).join(CUST_CFG));
    for id in ctx.root.list_dir(Path::new(INSTANCES_DIR))? {
        let dir = Path::new(INSTANCES_DIR).join(&id);
        if ctx.root.is_file(&dir.join(POST_PENDING)) && unfinished {
            tracing::warn!(
                "not running the post-customization script of instance {id} yet: a \
                 customization in {PENDING_DIR} is unfinished (an early stage was cut off); \
                 the next early stage finishes it, then a late stage runs the script"
            );
        } else if ctx.root.is_file(&dir.join(POST_PENDING)) {
            ending = post_script(ctx, &dir)?;
            if ending == Ending::Interrupted {
                return Ok(ending);
            }
        }
        if ctx.root.is_file(&dir.join(USER_DATA)) {
            let handled = ctx.root.is_file(&dir.join(USER_DATA_DONE));
            let end = if handled {
                // Handled on an earlier boot: native cloud-config's late modules run on
                // every boot as cloud-init's do, their records skipping what ran.
                super::cloud_config::late_again(ctx, &dir)?
            } else {
                user_data(ctx, &id, &dir)?
            };
            match end {
                Ending::Interrupted => return Ok(Ending::Interrupted),
                Ending::Nothing => {}
                other => ending = other,
            }
        }
    }
    publish_addresses(ctx);
    Ok(ending)
}

/// Tells the host the guest's default addresses (`guestinfo.local-ipv4`/`-ipv6`), waiting
/// a bounded time for one to exist (cloud-init waits without a bound). Only on the running
/// system: another root's addresses are not this machine's.
fn publish_addresses(ctx: &mut Context) {
    if ctx.root.path() != Path::new("/") {
        return;
    }
    let wait = addresses::Wait::from_record(&crate::state::read_wait_on_network(&ctx.root));
    let published = addresses::publish(
        ctx.rpc,
        wait,
        addresses::DEFAULT_WAIT,
        std::time::Duration::from_secs(1),
        || addresses::current(Path::new("/proc")),
    );
    if published.timed_out {
        tracing::warn!(
            "no address appeared within {} s; published what exists",
            addresses::DEFAULT_WAIT.as_secs()
        );
    }
    for w in published.warnings {
        tracing::warn!("{w}");
    }
}

/// The instance id recorded in the instance's directory (named by its file-name form).
fn instance_id(ctx: &Context, dir: &Path, dir_name: &str) -> String {
    ctx.root
        .read_text(&dir.join(crate::state::RESULT_JSON))
        .ok()
        .flatten()
        .and_then(|t| serde_json::from_str::<InstanceResult>(&t).ok())
        .map_or_else(|| dir_name.to_string(), |r| r.instance_id.to_string())
}

/// What happens to the user-data kept in `dir` (`bytes`): what the plan decided, as the
/// instance record keeps it. A record without the decision was written by a vmcust that
/// did not keep it (an upgrade between boots) or could not be written: then, and only
/// then, the decision is made again here by the same rule.
pub(super) fn decided(ctx: &Context, dir: &Path, bytes: &[u8]) -> UserDataDisposition {
    let recorded = ctx
        .root
        .read_text(&dir.join(crate::state::RESULT_JSON))
        .ok()
        .flatten()
        .and_then(|t| serde_json::from_str::<InstanceResult>(&t).ok())
        .and_then(|r| r.user_data);
    recorded.unwrap_or_else(|| {
        let real = crate::cloud_init::coexist::real_cloud_init(&ctx.root).is_some();
        user_data_disposition(bytes, real, ctx.settings.user_data_handler)
    })
}

fn post_script(ctx: &mut Context, dir: &Path) -> Result<Ending> {
    let gc = ctx
        .root
        .read_text(&dir.join(POST_PENDING))?
        .is_some_and(|t| t.trim() == "gc");
    let started = dir.join(POST_STARTED);
    let end = if ctx.root.is_file(&started) {
        // At most once: a script cut off by a power cut or a kill may have done part of
        // its work, and running it again could do that part twice.
        ScriptEnd::Failed(
            "the post-customization script was interrupted (power cut or kill) in an earlier \
             run; it is not run a second time"
                .into(),
        )
    } else if let Err(e) = ctx.root.write_record(&started, b"", 0o600) {
        ScriptEnd::Failed(format!(
            "could not record that the post-customization script starts ({e}); it is not \
             run, as it could then run twice"
        ))
    } else {
        let script = ctx.root.resolve(Path::new(STAGED_SCRIPT), true)?;
        let end = super::run_script(ctx, &script, Phase::Post);
        if end == ScriptEnd::Interrupted {
            // SIGTERM stopped the script's group: the next run reports it as cut off.
            return Ok(Ending::Interrupted);
        }
        end
    };
    // Whatever the outcome, the script ran (at most) once; a failure is reported, not
    // repeated. The flag goes first: a kill after it loses the report of a failure rather
    // than running the script again. The staged copy goes too: it may hold secrets.
    remove_durably(&ctx.root, &dir.join(POST_PENDING))?;
    remove_durably(&ctx.root, &started)?;
    crate::scripts::stage::unstage(&ctx.root)?;
    match end {
        ScriptEnd::Failed(reason) => {
            let failure = Failure::new(FailureKind::PostScriptFailed, reason);
            Reporter::new(ctx.rpc, gc).failed(&failure);
            tracing::error!("post-customization script failed: {}", failure.reason);
            Ok(Ending::Failed(failure))
        }
        _ => {
            tracing::info!("post-customization script done");
            Ok(Ending::Done)
        }
    }
}

/// Removes a record and makes the removal durable (with whatever else is still to be
/// synced); already gone is fine.
pub(crate) fn remove_durably(root: &crate::root::Root, path: &Path) -> Result<()> {
    root.remove_file(path)?;
    Ok(root.sync()?)
}

fn user_data(ctx: &mut Context, id: &str, dir: &Path) -> Result<Ending> {
    let bytes = ctx.root.read(&dir.join(USER_DATA))?.unwrap_or_default();
    let done = |ctx: &Context, note: &str| {
        ctx.root
            .write_record(&dir.join(USER_DATA_DONE), note.as_bytes(), 0o644)
    };
    // The decision `vmcust plan` shows, made once with the plan.
    match decided(ctx, dir, &bytes) {
        UserDataDisposition::CloudInitSeed => {
            let seed = Path::new(NOCLOUD_SEED);
            let meta = ctx.root.read(&dir.join(META_DATA))?.unwrap_or_else(|| {
                format!("instance-id: {}\n", instance_id(ctx, dir, id)).into_bytes()
            });
            ctx.root.write_file(&seed.join("meta-data"), &meta, 0o600)?;
            ctx.root
                .write_file(&seed.join("user-data"), &bytes, 0o600)?;
            done(ctx, "handed to cloud-init\n")?;
            tracing::info!("user-data handed to cloud-init through {NOCLOUD_SEED}");
            return Ok(Ending::Done);
        }
        UserDataDisposition::Rejected(reason) => {
            done(ctx, "rejected\n")?;
            tracing::error!("{reason}");
            return Ok(Ending::failed(FailureKind::UserDataFailed, reason));
        }
        UserDataDisposition::RunScript => {}
        UserDataDisposition::Native => {
            // Its accounts and early modules were applied by the early stage.
            let id = crate::model::InstanceId::parse(&instance_id(ctx, dir, id))
                .map_err(|e| anyhow::anyhow!("instance {id}: {e}"))?;
            return super::cloud_config::late(ctx, &id, dir);
        }
    }
    let started = dir.join(USER_DATA_STARTED);
    if ctx.root.is_file(&started) {
        // At most once, as for the custom scripts.
        let reason = "the user-data script was interrupted (power cut or kill) in an earlier \
                      run; it is not run a second time";
        done(ctx, "cut off\n")?;
        tracing::error!("{reason}");
        return Ok(Ending::failed(FailureKind::UserDataFailed, reason));
    }
    let script = dir.join("user-data.sh");
    ctx.root.write_file(&script, &bytes, 0o700)?;
    // Durable before the script starts, with the script (a record); a record that cannot
    // be written stops the run before the script, which the next boot then runs once.
    ctx.root.write_record(&started, b"", 0o600)?;
    let path = ctx.root.resolve(&script, true)?;
    let end = super::run_script(ctx, &path, Phase::UserData);
    if end == ScriptEnd::Interrupted {
        return Ok(Ending::Interrupted);
    }
    match end {
        ScriptEnd::Failed(reason) => {
            done(ctx, "failed\n")?;
            tracing::error!("user-data script failed: {reason}");
            Ok(Ending::failed(FailureKind::UserDataFailed, reason))
        }
        _ => {
            done(ctx, "ran\n")?;
            tracing::info!("user-data script ran for instance {id}");
            Ok(Ending::Done)
        }
    }
}
