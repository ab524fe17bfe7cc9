//! Applying a prepared customization at boot, all or nothing, and what follows it (clone
//! hygiene, the network reload). Shared by the vSphere-spec path (`early`) and the
//! OVF/guestinfo path (`ovf_and_guestinfo`).

use std::path::Path;

use super::Context;
use crate::apply::{apply, Change};
use crate::engine::customize::Prepared;
use crate::failure::Failure;

/// Applies a prepared plan, all or nothing, logging every file it changed.
pub fn apply_prepared(ctx: &Context, prepared: &Prepared) -> Result<(), Failure> {
    let changes =
        super::timed("apply", || apply(&ctx.root, &prepared.plan)).map_err(|e| Failure::of(&e))?;
    crate::applied::record(&ctx.root, prepared, &changes, "vmcust run");
    for (action, change) in prepared.plan.actions.iter().zip(changes) {
        if !matches!(change, Change::Unchanged | Change::Skipped) {
            tracing::info!(
                "{} {} ({})",
                change.word(false),
                action.path().display(),
                action.purpose()
            );
        }
    }
    // Clone hygiene (fresh SSH host keys, a machine-id of its own) once per new instance,
    // before any network stack starts; only after the customization applied, so a bad
    // spec still changes nothing.
    if let Some(id) = &prepared.steps.instance_id {
        let refreshed = super::timed("clone hygiene", || {
            crate::hygiene::refresh(&ctx.root, &ctx.settings, id.as_str())
        });
        match refreshed {
            Ok(changed) => {
                for p in changed {
                    tracing::info!("clone hygiene: replaced {}", p.display());
                }
            }
            Err(e) => tracing::warn!("clone hygiene: {e:#}"),
        }
    }
    if let (true, Some(renderer)) = (ctx.root.path() == Path::new("/"), prepared.renderer) {
        let up = ctx.reconfigure_network;
        let warnings = super::timed("making the network stack read the files", || {
            super::reconfigure_network::reconfigure(renderer, &prepared.plan, up, ctx.stop)
        });
        for w in warnings {
            tracing::warn!("{w}");
        }
    }
    Ok(())
}
