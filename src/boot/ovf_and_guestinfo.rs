//! The OVF environment and guestinfo data at boot: read both through the shared gather
//! (OVF over its local seed over guestinfo), apply the result once per instance id, keep
//! the user-data for the late stage, and only then redact the guestinfo keys the metadata
//! lists.
//!
//! These sources stay on the VM across boots, so "once per instance" is what keeps a
//! reboot from redoing the customization. Guestinfo can also be written from inside the
//! guest, so a new instance id means a new customization only on a new VM
//! ([`vm_identity`](super::vm_identity)): on the VM customized before, guestinfo is not
//! read at all (no call to the host) and a new instance in a local OVF environment is
//! refused, unless the settings re-open the door (`docs/security.md`).

use anyhow::Result;

use super::apply_step::apply_prepared_or_put_back;
use super::vm_identity::{self, Identity, Refusal};
use super::{Context, Ending};
use crate::engine::customize::prepare;
use crate::failure::Failure;
use crate::source::appliance::MappingSource;
use crate::source::{discover, guestinfo, Door, SourceData};
use crate::state::{self, InstanceResult, META_DATA, USER_DATA};

/// Applies OVF/guestinfo data if there is any for a new instance that `identity` lets
/// in. `Ok(None)` when there is no such data at all (or none was read).
pub(crate) fn customize(ctx: &mut Context, identity: &Identity) -> Result<Option<Ending>> {
    let fallback = ctx.default_instance_id();
    let sources_on = ctx.settings.sources.without("imc");
    let trusted = identity.is_new_vm() || ctx.settings.recustomize_same_vm;
    let read_guestinfo = sources_on.contains("guestinfo") && trusted;
    if sources_on.contains("guestinfo") && !read_guestinfo {
        tracing::info!(
            "guestinfo is not read this boot: {}; a new instance-id there is refused \
             (vmcust detect shows it; docs/security.md, [trust] recustomize_same_vm)",
            identity.reason()
        );
    }
    let root = ctx.root.clone();
    let mut door = Door {
        root: &root,
        enabled: sources_on,
        rpc: match read_guestinfo {
            true => Some(&mut *ctx.rpc),
            false => None,
        },
        imc: None,
        given: None,
        mapping: MappingSource::Root,
        media: Default::default(),
    };
    let g = match super::timed("discover (OVF, seeds, guestinfo)", || {
        discover(&mut door, &fallback)
    }) {
        Ok(g) => g,
        Err(f) => {
            tracing::error!("{}; nothing was changed", f.reason);
            return Ok(Some(Ending::Failed(f)));
        }
    };
    if g.is_empty() {
        vm_identity::clear_refusal(&ctx.root);
        return Ok(None);
    }
    for w in &g.warnings {
        tracing::warn!("{w}");
    }
    let id = g.instance_id().clone();
    let dir = state::instance_dir(&id);
    let earlier = ctx.root.is_file(&dir.join(state::RESULT_JSON));
    if earlier
        && state::instance::read_result(&ctx.root, &id).is_some_and(|r| r.failed_without_change())
    {
        // Its customization failed and changed nothing: the VM is as it was, and the
        // corrected data (the same instance-id) is applied as a first customization.
        tracing::info!(
            "instance {id} failed before and changed nothing; customizing it again from {}",
            g.from()
        );
    } else if earlier {
        tracing::info!("instance {id} was customized already; nothing to do this boot");
        vm_identity::clear_refusal(&ctx.root);
        return Ok(Some(Ending::Nothing));
    }
    if !trusted {
        let refusal = Refusal {
            instance_id: id.clone(),
            source: g.from(),
            reason: identity.reason(),
            at: state::now(),
        };
        tracing::warn!("nothing was changed: {refusal}");
        vm_identity::record_refusal(&ctx.root, &refusal);
        return Ok(Some(Ending::Nothing));
    }
    vm_identity::clear_refusal(&ctx.root);
    for found in &g.found {
        tracing::info!("{} read from {}", found.source, found.place);
    }
    let origins = origins(&g);
    for (field, source) in &origins {
        tracing::info!("{field} from {source}");
    }
    let mut degraded = Vec::new();
    let mut user_data = None;
    // Whether a failure left the root as it was: refused while planning, or applied and
    // put back whole. No script or user-data runs in this stage, and a failed instance's
    // user-data is not kept for the late one, so then nothing at all changed.
    let mut nothing_changed = true;
    let outcome = super::timed("facts and plan", || prepare(&ctx.root, &g, ctx.options()))
        .map_err(Failure::from)
        .and_then(|p| {
            degraded.clone_from(&p.steps.degraded);
            user_data = p.steps.user_data.as_ref().map(|u| u.disposition.clone());
            apply_prepared_or_put_back(ctx, &p).map_err(|f| {
                nothing_changed = f.put_back;
                f.failure
            })
        });
    for d in &degraded {
        tracing::warn!("not applied: {d}");
    }
    let error = outcome.as_ref().err().map(|f| f.reason().to_string());
    if error.is_none() {
        if let Some(ud) = &g.user_data {
            ctx.root
                .write_file(&dir.join(USER_DATA), &ud.bytes, 0o600)?;
        }
        // For a real cloud-init given the user-data (the same instance id and host name),
        // and for the instance data every boot writes, user-data or not.
        let md = g.cloud_init_meta_data();
        ctx.root.write_file(&dir.join(META_DATA), &md, 0o600)?;
        if let Some(vd) = &g.vendor_data {
            let path = dir.join(crate::state::VENDOR_DATA);
            ctx.root.write_file(&path, &vd.bytes, 0o600)?;
        }
    }
    state::write_result(
        &ctx.root,
        &InstanceResult {
            instance_id: id.clone(),
            outcome: if error.is_none() { "done" } else { "failed" }.into(),
            code: 0,
            error: error.clone(),
            finished: state::now(),
            steps: if error.is_none() {
                vec!["applied".into()]
            } else {
                vec![]
            },
            origins,
            degraded,
            // What happens to the user-data, as the plan decided; the late stage reads it.
            user_data,
            nothing_changed: error.is_some() && nothing_changed,
        },
    )?;
    vm_identity::record_customization(&ctx.root, &id, &ctx.platform);
    // Only now that the data is applied and recorded may the host forget it.
    for w in guestinfo::redact(ctx.rpc, &g.redact) {
        tracing::warn!("{w}");
    }
    Ok(Some(match outcome {
        Ok(()) => {
            tracing::info!("instance {id} customized from {}", g.from());
            Ending::Done
        }
        Err(f) => {
            tracing::error!("customizing instance {id} failed: {}", f.reason);
            Ending::Failed(f)
        }
    }))
}

/// Field → source name, with the user-data's source under `user-data`.
fn origins(g: &SourceData) -> std::collections::BTreeMap<String, String> {
    let out: std::collections::BTreeMap<String, String> = g
        .origins
        .iter()
        .map(|(field, source)| (field.to_string(), source.to_string()))
        .collect();
    out
}
