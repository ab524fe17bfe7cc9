//! The inputs `show`, `plan` and `apply` take, and loading them into one customization
//! (see `source::merge` for the precedence).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;

use super::InvalidInput;
use crate::host::fake::FakeHost;
use crate::source::appliance::PropertyMap;
use crate::source::merge::{merge, Merged, SourceKind};
use crate::source::ovf_locate::{read_path, OvfOrigin};
use crate::source::{guestinfo, ovf};

/// Where the customization comes from; at least one is needed.
#[derive(Debug, Args)]
pub struct InputArgs {
    /// vSphere guest customization spec (cust.cfg) to read.
    #[arg(long, value_name = "FILE")]
    pub imc: Option<PathBuf>,
    /// OVF environment: an ovf-env.xml file, or an ISO9660 image or CD device holding one.
    #[arg(long, value_name = "FILE|ISO")]
    pub ovf: Option<PathBuf>,
    /// Map an appliance's own OVF property names onto vmcust's fields (docs/ovf.md).
    #[arg(long, value_name = "FILE", requires = "ovf")]
    pub ovf_properties: Option<PathBuf>,
    /// Read guestinfo metadata, userdata and vendordata from this fake host directory.
    #[arg(long, value_name = "DIR")]
    pub guestinfo_dir: Option<PathBuf>,
}

/// Every source read, and the merged customization.
pub struct Loaded {
    /// The spec as validated by `vmcust-imc`, when `--imc` was given.
    pub imc: Option<vmcust_imc::Parsed>,
    /// The OVF environment and where it was found, when `--ovf` was given.
    pub ovf: Option<(OvfOrigin, vmcust_ovf::Environment)>,
    /// User-data by source.
    pub userdata: Vec<(SourceKind, Vec<u8>)>,
    /// The merged customization with each field's source.
    pub merged: Merged,
    /// Non-fatal findings, already logged.
    pub warnings: Vec<String>,
}

/// Reads and validates every given source and merges them.
pub fn load(args: &InputArgs) -> Result<Loaded> {
    if args.imc.is_none() && args.ovf.is_none() && args.guestinfo_dir.is_none() {
        return Err(InvalidInput(
            "no customization given: use --imc FILE, --ovf FILE|ISO or --guestinfo-dir DIR".into(),
        )
        .into());
    }
    let mut sources = Vec::new();
    let mut warnings = Vec::new();
    let mut userdata = Vec::new();
    let imc = match &args.imc {
        Some(path) => {
            let parsed = load_imc(path)?;
            warnings.extend(
                parsed
                    .warnings
                    .iter()
                    .map(|w| format!("{}: {w}", path.display())),
            );
            sources.push((
                SourceKind::Imc,
                crate::source::imc::customization(&parsed.spec),
            ));
            Some(parsed)
        }
        None => None,
    };
    let ovf = match &args.ovf {
        Some(path) => {
            let found = read_path(path)?;
            let env = vmcust_ovf::parse(&found.xml).map_err(|e| {
                InvalidInput(format!("{}: {e}\nnothing was changed", path.display()))
            })?;
            let map = match &args.ovf_properties {
                Some(p) => {
                    let text = std::fs::read_to_string(p)
                        .with_context(|| format!("reading {}", p.display()))?;
                    Some(
                        PropertyMap::parse(&text)
                            .map_err(|e| InvalidInput(format!("{}: {e}", p.display())))?,
                    )
                }
                None => None,
            };
            let data = ovf::from_environment(&env, map.as_ref())
                .map_err(|e| InvalidInput(format!("{}: {e}", path.display())))?;
            warnings.extend(
                data.warnings
                    .iter()
                    .map(|w| format!("{}: {w}", path.display())),
            );
            if let Some(ud) = data.userdata {
                userdata.push((SourceKind::Ovf, ud));
            }
            sources.push((SourceKind::Ovf, data.customization));
            Some((found.origin, env))
        }
        None => None,
    };
    if let Some(dir) = &args.guestinfo_dir {
        let mut host = FakeHost::new(dir);
        match guestinfo::read(&mut host).map_err(|e| InvalidInput(e.to_string()))? {
            Some(data) => {
                warnings.extend(data.warnings.iter().map(|w| format!("guestinfo: {w}")));
                if let Some(ud) = data.userdata {
                    userdata.push((SourceKind::Guestinfo, ud));
                }
                sources.push((SourceKind::Guestinfo, data.customization));
            }
            None => warnings.push(format!(
                "{}: no guestinfo.metadata, userdata or vendordata",
                dir.display()
            )),
        }
    }
    for w in &warnings {
        tracing::warn!("{w}");
    }
    Ok(Loaded {
        imc,
        ovf,
        userdata,
        merged: merge(sources),
        warnings,
    })
}

/// Reads and validates the spec at `path`.
pub fn load_imc(path: &Path) -> Result<vmcust_imc::Parsed> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    vmcust_imc::Spec::parse(&bytes).map_err(|e| {
        InvalidInput(prefix_lines(path, &e.to_string()) + "\nnothing was changed").into()
    })
}

/// `path: ` before every line, so each problem names its file.
fn prefix_lines(path: &Path, text: &str) -> String {
    text.lines()
        .map(|l| format!("{}: {l}", path.display()))
        .collect::<Vec<_>>()
        .join("\n")
}
