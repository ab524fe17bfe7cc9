//! Raw cloud-init data in a vSphere spec (`[CLOUDINIT] METADATA = metadata`, vSphere 7.0
//! U3+): the metadata file's network and host name are applied like guestinfo metadata,
//! and the user-data is kept for the late stage (cloud-init reference §5.6).

use std::path::Path;

use super::early::{apply_customization, Failure};
use super::state::{self, PENDING_DIR};
use super::Context;
use crate::report::Code;

/// Applies a raw cloud-init spec from the pending directory. Returns the instance id (the
/// metadata's, else `fallback_id`) and the outcome.
pub fn customize(
    ctx: &mut Context,
    spec: &vmcust_imc::Spec,
    fallback_id: String,
) -> (String, Result<(), Failure>) {
    if !ctx.settings.allow_raw_data {
        let reason =
            "raw cloud-init data is disabled in the settings ([imc] allow_raw_data = false)";
        return (
            fallback_id,
            Err(Failure::new(
                Code::CustomizeFailed,
                "Raw cloud-init data is not allowed",
                reason,
            )),
        );
    }
    let read = |name: &str, gc_missing: &'static str| -> Result<String, Failure> {
        let path = Path::new(PENDING_DIR).join(name);
        match ctx.root.read(&path) {
            Ok(Some(bytes)) => String::from_utf8(bytes).map_err(|_| {
                Failure::new(
                    Code::CustomizeFailed,
                    gc_missing,
                    format!("{name} is not UTF-8 text"),
                )
            }),
            Ok(None) => Err(Failure::new(
                Code::CustomizeFailed,
                gc_missing,
                format!("{name} is not in the customization package"),
            )),
            Err(e) => Err(Failure::new(
                Code::CustomizeFailed,
                gc_missing,
                format!("reading {name}: {e}"),
            )),
        }
    };
    let md_name = spec
        .cloudinit
        .metadata
        .as_ref()
        .map_or("metadata", |f| f.as_str());
    let text = match read(md_name, "Error locating the cloud-init meta data file") {
        Ok(t) => t,
        Err(f) => return (fallback_id, Err(f)),
    };
    let md = match crate::source::metadata::parse(md_name, &text) {
        Ok(md) => md,
        Err(e) => {
            return (
                fallback_id,
                Err(Failure::new(
                    Code::WrongMetaFormat,
                    "Error parsing the cloud-init meta data",
                    e.to_string(),
                )),
            )
        }
    };
    let id = md.instance_id.clone().unwrap_or(fallback_id);
    let userdata = match &spec.cloudinit.userdata {
        Some(name) => match read(name.as_str(), "Error locating the cloud-init userdata file") {
            Ok(t) => Some(t.replace('\r', "")),
            Err(f) => return (id, Err(f)),
        },
        None => None,
    };
    let outcome = (|| {
        let (c, warnings) = crate::source::metadata::customization(md_name, &md).map_err(|e| {
            Failure::new(
                Code::WrongMetaFormat,
                "Error parsing the cloud-init meta data",
                e.to_string(),
            )
        })?;
        for w in warnings {
            tracing::warn!("{md_name}: {w}");
        }
        apply_customization(ctx, &c)?;
        let dir = state::instance_dir(&id);
        let keep = |name: &str, bytes: &[u8]| {
            ctx.root
                .write_file(&dir.join(name), bytes, 0o600)
                .map_err(|e| {
                    Failure::new(
                        Code::CustomizeFailed,
                        "Error loading cloud-init userdata file",
                        format!("keeping {name}: {e}"),
                    )
                })
        };
        keep(super::late::META_DATA, text.as_bytes())?;
        if let Some(ud) = &userdata {
            keep(super::late::USER_DATA, ud.as_bytes())?;
        }
        Ok(())
    })();
    (id, outcome)
}
