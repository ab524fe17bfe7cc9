//! The OVF environment and guestinfo metadata at boot: read both, merge them (OVF over
//! guestinfo), apply the result once per instance id, keep the user-data for the late
//! stage, and only then redact the guestinfo keys the metadata lists.
//!
//! These sources stay on the VM across boots, so "once per instance" is what keeps a
//! reboot from redoing the customization; a new instance id means a new customization.

use std::path::Path;

use anyhow::Result;

use super::early::apply_customization;
use super::late::USER_DATA;
use super::state::{self, InstanceResult};
use super::{Context, Ending};
use crate::source::appliance::{PropertyMap, MAPPING_PATH};
use crate::source::merge::{merge, SourceKind};
use crate::source::{guestinfo, ovf, ovf_locate};

/// What was found, before it is applied.
struct Found {
    sources: Vec<(SourceKind, crate::model::Customization)>,
    userdata: Option<Vec<u8>>,
    userdata_from: Option<SourceKind>,
    redact: Vec<String>,
}

/// Applies OVF/guestinfo data if there is any for a new instance. `Ok(None)` when there is
/// no such data at all.
pub fn customize(ctx: &mut Context) -> Result<Option<Ending>> {
    let found = match read(ctx) {
        Ok(Some(f)) => f,
        Ok(None) => return Ok(None),
        Err(reason) => {
            tracing::error!("{reason}");
            return Ok(Some(Ending::Failed(reason)));
        }
    };
    let merged = merge(found.sources);
    let mut origins: std::collections::BTreeMap<String, String> = merged
        .origins
        .iter()
        .map(|(field, kind)| (field.to_string(), kind.name().to_string()))
        .collect();
    if let Some(kind) = found.userdata_from {
        origins.insert("user-data".into(), kind.name().into());
    }
    let mut c = merged.customization;
    let id = c
        .instance_id
        .clone()
        .unwrap_or_else(|| ctx.default_instance_id());
    let dir = state::instance_dir(&id);
    if ctx.root.is_file(&dir.join("result.json")) {
        tracing::info!("instance {id} was customized already; nothing to do this boot");
        return Ok(Some(Ending::Nothing));
    }
    for (field, source) in &origins {
        tracing::info!("{field} from {source}");
    }
    c.instance_id = Some(id.clone());
    let outcome = apply_customization(ctx, &c);
    let error = outcome.as_ref().err().map(|f| f.reason().to_string());
    if error.is_none() {
        if let Some(ud) = &found.userdata {
            ctx.root.write_file(&dir.join(USER_DATA), ud, 0o600)?;
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
    // Only now that the data is applied and recorded may the host forget it.
    for w in guestinfo::redact(ctx.rpc, &found.redact) {
        tracing::warn!("{w}");
    }
    Ok(Some(match error {
        None => {
            tracing::info!("instance {id} customized from its OVF environment / guestinfo data");
            Ending::Done
        }
        Some(reason) => {
            tracing::error!("customizing instance {id} failed: {reason}");
            Ending::Failed(reason)
        }
    }))
}

/// Reads the local seed an OVF `seedfrom` names (`file:///dir/` or `/dir/`): its
/// `meta-data` ranks below the environment, its `user-data` replaces the environment's (as
/// cloud-init). Remote seeds are not followed: nothing at boot goes to the network.
fn read_seed(ctx: &Context, seed: &str, found: &mut Found) -> Result<(), String> {
    let Some(dir) = seed
        .strip_prefix("file://")
        .or_else(|| seed.starts_with('/').then_some(seed))
    else {
        tracing::warn!(
            "OVF seedfrom {seed:?} is not followed: vmcust reads only local file:// seeds"
        );
        return Ok(());
    };
    let dir = Path::new(dir);
    let read = |name: &str| {
        ctx.root
            .read(&dir.join(name))
            .map_err(|e| format!("reading {}: {e}", dir.join(name).display()))
    };
    if let Some(md) = read("meta-data")? {
        let text = String::from_utf8_lossy(&md);
        let md = crate::source::metadata::parse("seedfrom meta-data", &text)
            .map_err(|e| e.to_string())?;
        let (c, warnings) = crate::source::metadata::customization("seedfrom meta-data", &md)
            .map_err(|e| e.to_string())?;
        for w in warnings {
            tracing::warn!("seedfrom meta-data: {w}");
        }
        found.sources.push((SourceKind::OvfSeed, c));
    }
    if let Some(ud) = read("user-data")? {
        found.userdata = Some(ud);
        found.userdata_from = Some(SourceKind::OvfSeed);
    }
    Ok(())
}

/// Reads the OVF environment (seed file, `guestinfo.ovfEnv`, CD) and guestinfo data.
/// Errors are the reason for people, naming the source.
fn read(ctx: &mut Context) -> Result<Option<Found>, String> {
    let mut found = Found {
        sources: Vec::new(),
        userdata: None,
        userdata_from: None,
        redact: Vec::new(),
    };
    let located =
        ovf_locate::locate(&ctx.root, Some(&mut *ctx.rpc)).map_err(|e| format!("{e:#}"))?;
    if let Some(env) = located {
        let parsed = vmcust_ovf::parse(&env.xml)
            .map_err(|e| format!("OVF environment from {:?}: {e}", env.origin))?;
        let map = match ctx.root.read_text(Path::new(MAPPING_PATH)) {
            Ok(Some(text)) => {
                Some(PropertyMap::parse(&text).map_err(|e| format!("{MAPPING_PATH}: {e}"))?)
            }
            Ok(None) => None,
            Err(e) => return Err(format!("reading {MAPPING_PATH}: {e}")),
        };
        let data = ovf::from_environment(&parsed, map.as_ref()).map_err(|e| e.to_string())?;
        for w in &data.warnings {
            tracing::warn!("OVF environment: {w}");
        }
        found.userdata_from = data.userdata.is_some().then_some(SourceKind::Ovf);
        found.userdata = data.userdata;
        found.sources.push((SourceKind::Ovf, data.customization));
        if let Some(seed) = &data.seedfrom {
            read_seed(ctx, seed, &mut found)?;
        }
    }
    if let Some(data) = guestinfo::read(ctx.rpc).map_err(|e| e.to_string())? {
        for w in &data.warnings {
            tracing::warn!("guestinfo: {w}");
        }
        if found.userdata.is_none() && data.userdata.is_some() {
            found.userdata = data.userdata;
            found.userdata_from = Some(SourceKind::Guestinfo);
        }
        found.redact = data.metadata.redact.clone();
        found
            .sources
            .push((SourceKind::Guestinfo, data.customization));
    }
    Ok((!found.sources.is_empty()).then_some(found))
}
