//! Applying a prepared customization at boot, all or nothing, and what follows it (clone
//! hygiene, the network reload). Shared by the vSphere-spec path (`early`) and the
//! OVF/guestinfo path (`ovf_and_guestinfo`).

use super::Context;
use crate::apply::{apply, Change};
use crate::engine::customize::Prepared;
use crate::failure::Failure;

/// A failed apply, and whether it left the root as it was.
pub(crate) struct ApplyFailed {
    /// The failure.
    pub failure: Failure,
    /// Every change made before the failure was put back: nothing changed.
    pub put_back: bool,
}

/// Applies a prepared plan, all or nothing, logging every file it changed.
pub(crate) fn apply_prepared(ctx: &Context, prepared: &Prepared) -> Result<(), Failure> {
    apply_prepared_or_put_back(ctx, prepared).map_err(|f| f.failure)
}

/// [`apply_prepared`], saying on a failure whether the root was left as it was (for the
/// record that tells a failure that changed nothing, `state::InstanceResult`).
pub(crate) fn apply_prepared_or_put_back(
    ctx: &Context,
    prepared: &Prepared,
) -> Result<(), ApplyFailed> {
    let changes =
        super::timed("apply", || apply(&ctx.root, &prepared.plan)).map_err(|e| ApplyFailed {
            failure: Failure::of(&e),
            put_back: crate::apply::put_everything_back(&e),
        })?;
    crate::applied::record(&ctx.root, prepared, &changes, "vmcust run");
    for (action, change) in prepared.plan.actions.iter().zip(changes) {
        if !matches!(change, Change::Unchanged | Change::Skipped) {
            tracing::info!(
                "{} {} ({})",
                crate::apply::done_word(action, change),
                action.path().display(),
                action.purpose()
            );
        }
    }
    // Clone hygiene (fresh SSH host keys, a machine-id of its own) as planned, once per
    // new instance, before any network stack starts; only after the customization
    // applied, so a bad spec still changes nothing.
    if let Some(h) = &prepared.steps.hygiene {
        // Which files were there before: a host key the template lacked is created, not
        // replaced.
        let existed: Vec<std::path::PathBuf> = h
            .paths()
            .into_iter()
            .filter(|p| {
                ctx.root
                    .resolve(p, false)
                    .is_ok_and(|r| std::fs::symlink_metadata(r).is_ok())
            })
            .collect();
        let refreshed = super::timed("clone hygiene", || {
            crate::hygiene::carry_out(&ctx.root, h, ctx.stop)
        });
        match refreshed {
            Ok(changed) => {
                for p in changed {
                    let word = if existed.contains(&p) {
                        "replaced"
                    } else {
                        "created"
                    };
                    tracing::info!("clone hygiene: {word} {}", p.display());
                }
            }
            Err(e) => tracing::warn!("clone hygiene: {e:#}"),
        }
    }
    if let Some(reload) = &prepared.steps.network_reload {
        let warnings = super::timed("making the network stack read the files", || {
            super::reconfigure_network::reconfigure(reload, ctx.stop)
        });
        for w in warnings {
            tracing::warn!("{w}");
        }
    }
    Ok(())
}
