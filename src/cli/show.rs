//! `vmcust show`: the validated spec, and its network as netplan v2.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use serde::Serialize;

use super::input::{load, InputArgs};
use super::Format;
use crate::facts::NetworkFacts;
use crate::plan::network::{netplan, resolve_devices};
use crate::source::merge::SourceKind;
use crate::source::ovf_locate::OvfOrigin;

/// Arguments of `vmcust show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The customization spec (cust.cfg) to show (the same as --imc).
    #[arg(value_name = "FILE", conflicts_with = "imc")]
    pub file: Option<PathBuf>,
    /// Other sources to show and merge.
    #[command(flatten)]
    pub input: InputArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Json)]
    pub format: Format,
}

#[derive(Serialize)]
struct Shown<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    spec: Option<&'a vmcust_imc::Spec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ovf_environment: Option<vmcust_ovf::Environment>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ovf_found_in: Option<&'a OvfOrigin>,
    warnings: &'a [String],
    customization: &'a crate::model::Customization,
    origins: &'a std::collections::BTreeMap<&'static str, SourceKind>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    userdata_from: Vec<SourceKind>,
    #[serde(skip_serializing_if = "Option::is_none")]
    netplan: Option<netplan::NetplanDoc>,
}

/// The environment with the values of password-like properties replaced, so that
/// printing it cannot leak a secret (`password`, `root_password`, `guestinfo.passwd`, …).
fn redacted(env: &vmcust_ovf::Environment) -> vmcust_ovf::Environment {
    let mut env = env.clone();
    let hide = |p: &mut vmcust_ovf::Property| {
        let k = p.key.to_ascii_lowercase();
        if ["pass", "secret", "token", "key"]
            .iter()
            .any(|w| k.contains(w))
            && k != "public-keys"
        {
            p.value = vmcust_imc::REDACTED.to_string();
        }
    };
    env.properties.iter_mut().for_each(hide);
    env.entities
        .iter_mut()
        .flat_map(|e| e.properties.iter_mut())
        .for_each(hide);
    env
}

/// Runs `vmcust show`.
pub fn run(mut args: ShowArgs) -> Result<()> {
    if let Some(file) = args.file.take() {
        args.input.imc = Some(file);
    }
    let loaded = load(&args.input, None)?;
    let g = &loaded.gathered;
    let c = &g.customization;
    // No target root here: with no device facts the sources' ids name the devices, as
    // cloud-init does without system devices.
    let netplan = match &c.network {
        Some(net) => Some(netplan::document(
            net,
            &resolve_devices(net, &NetworkFacts::default())?,
        )),
        None => None,
    };
    let shown = Shown {
        spec: loaded.spec.as_ref(),
        ovf_environment: loaded.ovf_environment.as_ref().map(redacted),
        ovf_found_in: g.ovf_origin.as_ref(),
        warnings: &g.warnings,
        customization: c,
        origins: &g.origins,
        userdata_from: g.userdata.iter().map(|u| u.from).collect(),
        netplan,
    };
    let text = match args.format {
        Format::Json | Format::Text => serde_json::to_string_pretty(&shown)? + "\n",
        Format::Yaml => crate::yaml::to_string(&shown)?,
    };
    print!("{text}");
    Ok(())
}
