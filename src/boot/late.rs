//! The late stage, after the network is online: the post-customization script that the
//! early stage scheduled, and user-data — handed to cloud-init when it is installed,
//! otherwise run once per instance when it is a `#!` script.

use std::path::Path;

use anyhow::Result;

use super::state::INSTANCES_DIR;
use super::{Context, Ending, ScriptEnd};
use crate::host::addresses;
use crate::report::{Code, Reporter};
use crate::scripts::run::Phase;

/// Flag in an instance's directory: the post-customization script is still to run. Its
/// content is `gc` when the spec asked for `guestinfo.gc.status` updates.
pub const POST_PENDING: &str = "post-customization-pending";
/// The instance's raw cloud-init meta-data, as received.
pub const META_DATA: &str = "meta-data";
/// The instance's user-data, as received.
pub const USER_DATA: &str = "user-data";
/// Flag: the user-data was handled (run, handed over or rejected) for this instance.
pub const USER_DATA_DONE: &str = "user-data.done";
/// Where cloud-init's NoCloud data source looks for a seed.
pub const NOCLOUD_SEED: &str = "/var/lib/cloud/seed/nocloud";
/// Where the custom script is staged by the early stage.
pub const STAGED_SCRIPT: &str = "/root/.customization/customize.sh";

/// Runs the late stage for every instance that has work left.
pub fn run(ctx: &mut Context) -> Result<Ending> {
    let mut ending = Ending::Nothing;
    for id in ctx.root.list_dir(Path::new(INSTANCES_DIR))? {
        let dir = Path::new(INSTANCES_DIR).join(&id);
        if ctx.root.is_file(&dir.join(POST_PENDING)) {
            ending = post_script(ctx, &dir)?;
            if ending == Ending::Interrupted {
                return Ok(ending);
            }
        }
        if ctx.root.is_file(&dir.join(USER_DATA)) && !ctx.root.is_file(&dir.join(USER_DATA_DONE)) {
            match user_data(ctx, &id, &dir)? {
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
    let published = addresses::publish(
        ctx.rpc,
        addresses::Wait::default(),
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

fn post_script(ctx: &mut Context, dir: &Path) -> Result<Ending> {
    let gc = ctx
        .root
        .read_text(&dir.join(POST_PENDING))?
        .is_some_and(|t| t.trim() == "gc");
    let script = ctx.root.resolve(Path::new(STAGED_SCRIPT), true)?;
    let end = super::run_script(ctx, &script, Phase::Post);
    if end == ScriptEnd::Interrupted {
        return Ok(Ending::Interrupted);
    }
    // Whatever the outcome, the script ran once; a failure is reported, not repeated. The
    // staged copy goes too: it may hold secrets.
    let flag = ctx.root.resolve(&dir.join(POST_PENDING), false)?;
    std::fs::remove_file(flag)?;
    crate::scripts::stage::unstage(&ctx.root)?;
    match end {
        ScriptEnd::Failed(reason) => {
            Reporter::new(ctx.rpc, gc).failed(
                Code::CustomizeFailed,
                "Error executing post-customization script",
                &reason,
            );
            tracing::error!("post-customization script failed: {reason}");
            Ok(Ending::failed(reason))
        }
        _ => {
            tracing::info!("post-customization script done");
            Ok(Ending::Done)
        }
    }
}

fn user_data(ctx: &mut Context, id: &str, dir: &Path) -> Result<Ending> {
    let bytes = ctx.root.read(&dir.join(USER_DATA))?.unwrap_or_default();
    let done = |ctx: &Context, note: &str| {
        ctx.root
            .write_file(&dir.join(USER_DATA_DONE), note.as_bytes(), 0o644)
    };
    if crate::coexist::real_cloud_init(&ctx.root).is_some() {
        let seed = Path::new(NOCLOUD_SEED);
        let meta = ctx
            .root
            .read(&dir.join(META_DATA))?
            .unwrap_or_else(|| format!("instance-id: {id}\n").into_bytes());
        ctx.root.write_file(&seed.join("meta-data"), &meta, 0o600)?;
        ctx.root
            .write_file(&seed.join("user-data"), &bytes, 0o600)?;
        done(ctx, "handed to cloud-init\n")?;
        tracing::info!("user-data handed to cloud-init through {NOCLOUD_SEED}");
        return Ok(Ending::Done);
    }
    if !bytes.starts_with(b"#!") {
        let kind = String::from_utf8_lossy(&bytes[..bytes.len().min(40)])
            .lines()
            .next()
            .unwrap_or_default()
            .to_string();
        done(ctx, "rejected\n")?;
        let reason = format!(
            "user-data starting with {kind:?} needs cloud-init, which is not installed; \
             without cloud-init vmcust runs only user-data that is a #! script"
        );
        tracing::error!("{reason}");
        return Ok(Ending::failed(reason));
    }
    let script = dir.join("user-data.sh");
    ctx.root.write_file(&script, &bytes, 0o700)?;
    let path = ctx.root.resolve(&script, true)?;
    let end = super::run_script(ctx, &path, Phase::UserData);
    if end == ScriptEnd::Interrupted {
        return Ok(Ending::Interrupted);
    }
    match end {
        ScriptEnd::Failed(reason) => {
            done(ctx, "failed\n")?;
            tracing::error!("user-data script failed: {reason}");
            Ok(Ending::failed(reason))
        }
        _ => {
            done(ctx, "ran\n")?;
            tracing::info!("user-data script ran for instance {id}");
            Ok(Ending::Done)
        }
    }
}
