//! `vmcust show`: the validated spec, and its network as netplan v2.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use serde::Serialize;

use super::Format;
use crate::plan::network::{netplan, Device};

/// Arguments of `vmcust show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The customization spec (cust.cfg) to show.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Json)]
    pub format: Format,
}

#[derive(Serialize)]
struct Shown<'a> {
    spec: &'a vmcust_imc::Spec,
    warnings: Vec<String>,
    customization: &'a crate::model::Customization,
    #[serde(skip_serializing_if = "Option::is_none")]
    netplan: Option<netplan::NetplanDoc>,
}

/// Runs `vmcust show`.
pub fn run(args: ShowArgs) -> Result<()> {
    let loaded = super::input::load_imc(&args.file)?;
    // No target root here: devices are named by the spec's ids, as cloud-init does
    // without system devices.
    let netplan = loaded.customization.network.as_ref().map(|net| {
        let devices: Vec<Device> = net
            .interfaces
            .iter()
            .map(|i| Device {
                name: i.id.clone(),
                from_system: false,
            })
            .collect();
        netplan::document(net, &devices)
    });
    let shown = Shown {
        spec: &loaded.parsed.spec,
        warnings: loaded
            .parsed
            .warnings
            .iter()
            .map(|w| w.to_string())
            .collect(),
        customization: &loaded.customization,
        netplan,
    };
    let text = match args.format {
        Format::Json | Format::Text => serde_json::to_string_pretty(&shown)? + "\n",
        Format::Yaml => crate::yaml::to_string(&shown)?,
    };
    print!("{text}");
    Ok(())
}
