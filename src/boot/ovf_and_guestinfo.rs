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

use super::apply_step::{apply_prepared, Failure};
use super::late::USER_DATA;
use super::state::{self, InstanceResult};
use super::vm_identity::{self, Identity, Refusal};
use super::{Context, Ending};
use crate::engine::customize::prepare;
use crate::engine::gather::{gather, origin_name, Gathered, MappingSource, Sources};
use crate::source::{guestinfo, ovf_locate};

/// Applies OVF/guestinfo data if there is any for a new instance that `identity` lets
/// in. `Ok(None)` when there is no such data at all (or none was read).
pub fn customize(ctx: &mut Context, identity: &Identity) -> Result<Option<Ending>> {
    let fallback = ctx.default_instance_id();
    let sources_on = ctx.settings.sources;
    let trusted = identity.is_new_vm() || ctx.settings.recustomize_same_vm;
    let read_guestinfo = sources_on.guestinfo && trusted;
    if sources_on.guestinfo && !read_guestinfo {
        tracing::info!(
            "guestinfo is not read this boot: {}; a new instance-id there is refused \
             (vmcust detect shows it; docs/security.md, [trust] recustomize_same_vm)",
            identity.reason()
        );
    }
    let located = if sources_on.ovf {
        let rpc: Option<&mut dyn crate::host::GuestRpc> = match read_guestinfo {
            true => Some(&mut *ctx.rpc),
            false => None,
        };
        match super::timed("locating the OVF environment", || {
            ovf_locate::locate(&ctx.root, rpc)
        }) {
            Ok(found) => found,
            Err(e) => {
                let reason = format!("{e:#}");
                tracing::error!("{reason}");
                return Ok(Some(Ending::failed(reason)));
            }
        }
    } else {
        None
    };
    let root = ctx.root.clone();
    let sources = Sources {
        imc: None,
        ovf: located,
        guestinfo: match read_guestinfo {
            true => Some(&mut *ctx.rpc),
            false => None,
        },
        mapping: MappingSource::Root,
    };
    let g = match super::timed("gather (OVF, guestinfo)", || {
        gather(&root, sources, &fallback)
    }) {
        Ok(g) => g,
        Err(e) => {
            tracing::error!("{}; nothing was changed", e.reason);
            return Ok(Some(Ending::Failed {
                reason: e.reason,
                invalid: e.invalid,
            }));
        }
    };
    if g.origins.is_empty() && g.userdata.is_none() {
        vm_identity::clear_refusal(&ctx.root);
        return Ok(None);
    }
    for w in &g.warnings {
        tracing::warn!("{w}");
    }
    let id = g.instance_id().clone();
    let dir = state::instance_dir(&id);
    if ctx.root.is_file(&dir.join("result.json")) {
        tracing::info!("instance {id} was customized already; nothing to do this boot");
        vm_identity::clear_refusal(&ctx.root);
        return Ok(Some(Ending::Nothing));
    }
    if !trusted {
        let source = match &g.ovf_origin {
            Some(origin) => format!("the OVF environment ({})", origin_name(origin)),
            None => "guestinfo".to_string(),
        };
        let refusal = Refusal {
            instance_id: id.clone(),
            source,
            reason: identity.reason(),
            at: state::now(),
        };
        tracing::warn!("nothing was changed: {refusal}");
        vm_identity::record_refusal(&ctx.root, &refusal);
        return Ok(Some(Ending::Nothing));
    }
    vm_identity::clear_refusal(&ctx.root);
    if let Some(origin) = &g.ovf_origin {
        tracing::info!("OVF environment read from {}", origin_name(origin));
    }
    let origins = origins(&g);
    for (field, source) in &origins {
        tracing::info!("{field} from {source}");
    }
    let outcome = super::timed("facts and plan", || prepare(&ctx.root, &g, ctx.options()))
        .map_err(Failure::from)
        .and_then(|p| apply_prepared(ctx, &p));
    let invalid = outcome.as_ref().is_err_and(|f| f.is_invalid());
    let error = outcome.as_ref().err().map(|f| f.reason().to_string());
    if error.is_none() {
        if let Some(ud) = &g.userdata {
            ctx.root
                .write_file(&dir.join(USER_DATA), &ud.bytes, 0o600)?;
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
        },
    )?;
    vm_identity::record_customization(&ctx.root, &id, &ctx.platform);
    // Only now that the data is applied and recorded may the host forget it.
    for w in guestinfo::redact(ctx.rpc, &g.redact) {
        tracing::warn!("{w}");
    }
    Ok(Some(match error {
        None => {
            tracing::info!("instance {id} customized from its OVF environment / guestinfo data");
            Ending::Done
        }
        Some(reason) => {
            tracing::error!("customizing instance {id} failed: {reason}");
            Ending::Failed { reason, invalid }
        }
    }))
}

/// Field → source name, with the user-data's source under `user-data`.
fn origins(g: &Gathered) -> std::collections::BTreeMap<String, String> {
    let mut out: std::collections::BTreeMap<String, String> = g
        .origins
        .iter()
        .map(|(field, kind)| (field.to_string(), kind.name().to_string()))
        .collect();
    if let Some(ud) = &g.userdata {
        out.insert("user-data".into(), ud.from.name().into());
    }
    out
}
