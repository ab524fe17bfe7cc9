//! Applying a prepared customization at boot, and how it fails: a [`Failure`] carries the
//! code and `guestinfo.gc.status` text for the host and the reason for people. Shared by
//! the vSphere-spec path (`early`) and the OVF/guestinfo path (`ovf_and_guestinfo`).

use super::Context;
use crate::apply::{apply, Change};
use crate::engine::customize::{PrepareError, Prepared};
use crate::engine::gather::GatherError;
use crate::plan::PlanError;
use crate::report::Code;

/// A failure that ends the customization: the code for the host, the text for
/// `guestinfo.gc.status`, and the reason for people.
pub struct Failure {
    /// The code reported to the host.
    pub code: Code,
    /// The text for `guestinfo.gc.status`.
    pub gc_text: &'static str,
    /// The reason, for people and for the host's `@message`.
    pub reason: String,
    /// The customization itself is at fault (exit 65).
    pub invalid: bool,
}

impl Failure {
    /// Why it failed, for people.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    pub fn new(code: Code, gc_text: &'static str, reason: impl Into<String>) -> Self {
        Failure {
            code,
            gc_text,
            reason: reason.into(),
            invalid: false,
        }
    }

    /// The same failure, caused by the customization itself (exit 65).
    pub fn input(mut self) -> Self {
        self.invalid = true;
        self
    }

    /// Whether the customization itself is at fault.
    pub fn is_invalid(&self) -> bool {
        self.invalid
    }
}

impl From<GatherError> for Failure {
    fn from(e: GatherError) -> Self {
        let invalid = e.invalid;
        let f = Failure::new(e.code, e.gc_text, e.reason);
        if invalid {
            f.input()
        } else {
            f
        }
    }
}

impl From<PrepareError> for Failure {
    fn from(e: PrepareError) -> Self {
        match e {
            PrepareError::Plan(PlanError::Network(_)) => Failure::new(
                Code::NetworkSetupFailed,
                "Error preparing Network Configuration",
                e.to_string(),
            )
            .input(),
            PrepareError::Plan(_) => Failure::new(
                Code::CustomizeFailed,
                "Error applying the customization",
                e.to_string(),
            )
            .input(),
            PrepareError::Facts(_) => Failure::new(
                Code::CustomizeFailed,
                "Error applying the customization",
                e.to_string(),
            ),
        }
    }
}

/// Applies a prepared plan, all or nothing, logging every file it changed.
pub fn apply_prepared(ctx: &Context, prepared: &Prepared) -> Result<(), Failure> {
    let changes = super::timed("apply", || apply(&ctx.root, &prepared.plan)).map_err(|e| {
        Failure::new(
            Code::CustomizeFailed,
            "Error applying the customization",
            format!("{e:#}"),
        )
    })?;
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
    // Clone hygiene (fresh SSH host keys, a machine-id of its own) as planned, once per
    // new instance, before any network stack starts; only after the customization
    // applied, so a bad spec still changes nothing.
    if let Some(h) = &prepared.steps.hygiene {
        let refreshed = super::timed("clone hygiene", || {
            crate::hygiene::carry_out(&ctx.root, h, ctx.stop)
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
