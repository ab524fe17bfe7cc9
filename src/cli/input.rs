//! The inputs `show`, `plan` and `apply` take, turned into the shared gather's
//! [`Sources`] (see `engine::gather` for what is read and `source::merge` for the
//! precedence).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;

use super::{InvalidInput, UsageError};
use crate::engine::gather::{gather, Gathered, ImcInput, MappingSource, Sources};
use crate::host::guestinfo_dir::GuestinfoDir;
use crate::host::platform::Platform;
use crate::model::InstanceId;
use crate::root::Root;
use crate::source::ovf_locate::read_path;
use crate::source::sniff;

/// Where the customization comes from; at least one is needed.
#[derive(Debug, Args)]
pub struct InputArgs {
    /// vSphere guest customization spec (cust.cfg) to read; raw cloud-init metadata and
    /// user-data it names are read from the same directory.
    #[arg(long, value_name = "FILE")]
    pub imc: Option<PathBuf>,
    /// OVF environment: an ovf-env.xml file, or an ISO9660 image or CD device holding one.
    #[arg(long, value_name = "FILE|ISO")]
    pub ovf: Option<PathBuf>,
    /// Map an appliance's own OVF property names onto vmcust's fields (docs/ovf.md);
    /// default: /etc/vmcust/ovf-properties.conf in the root, as at boot.
    #[arg(long, value_name = "FILE", requires = "ovf")]
    pub ovf_properties: Option<PathBuf>,
    /// Read guestinfo metadata, userdata and vendordata from this directory of key files
    /// (one file per guestinfo key), as the host would answer them.
    #[arg(long, value_name = "DIR")]
    pub guestinfo_dir: Option<PathBuf>,
}

impl InputArgs {
    /// Whether any source is given.
    pub fn is_empty(&self) -> bool {
        self.imc.is_none() && self.ovf.is_none() && self.guestinfo_dir.is_none()
    }
}

/// Every source read, and the spec as validated when one was given.
pub struct Loaded {
    /// The spec as validated by `vmcust-imc`, when `--imc` was given (for `show`).
    pub spec: Option<vmcust_imc::Spec>,
    /// The OVF environment, when `--ovf` was given (for `show`).
    pub ovf_environment: Option<vmcust_ovf::Environment>,
    /// Everything gathered.
    pub gathered: Gathered,
}

/// Reads and validates every given source through the shared gather. `root` supplies
/// the appliance mapping, local OVF seeds and the default instance id (its DMI UUID), as
/// at boot; without one (`show`) they are looked up in `/`.
pub fn load(args: &InputArgs, root: Option<&Root>) -> Result<Loaded> {
    if args.is_empty() {
        return Err(UsageError(
            "no customization given: use FILE (or --imc FILE), --ovf FILE|ISO or --guestinfo-dir DIR"
                .into(),
        )
        .into());
    }
    let slash;
    let root = match root {
        Some(r) => r,
        None => {
            slash = Root::new(Path::new("/")).context("opening /")?;
            &slash
        }
    };
    // The spec's warnings name the file given, not the `cust.cfg` the boot stage reads.
    let mut imc_warnings = Vec::new();
    let imc = match &args.imc {
        Some(path) => Some(ImcInput {
            parsed: {
                let mut parsed = load_imc(path)?;
                check_zone(root, &parsed.spec, path)?;
                imc_warnings = std::mem::take(&mut parsed.warnings)
                    .iter()
                    .map(|w| format!("{}: {w}", path.display()))
                    .collect();
                parsed
            },
            dir: path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."))
                .to_path_buf(),
        }),
        None => None,
    };
    let spec = imc.as_ref().map(|i| i.parsed.spec.clone());
    let ovf = match &args.ovf {
        Some(path) => Some(read_path(path)?),
        None => None,
    };
    let ovf_environment = match &ovf {
        Some(found) => Some(vmcust_ovf::parse(&found.xml).map_err(|e| {
            let path = args.ovf.as_ref().expect("given").display();
            let hint = match sniff::hint(&found.xml, sniff::Kind::OvfEnvironment) {
                Some(h) => format!("\n{path}: {h}"),
                None => String::new(),
            };
            InvalidInput(format!("{path}: {e}{hint}\nnothing was changed"))
        })?),
        None => None,
    };
    let mut host = args.guestinfo_dir.as_ref().map(GuestinfoDir::new);
    let sources = Sources {
        imc,
        ovf,
        guestinfo: host.as_mut().map(|h| h as &mut dyn crate::host::GuestRpc),
        mapping: match &args.ovf_properties {
            Some(p) => MappingSource::File(p.clone()),
            None => MappingSource::Root,
        },
    };
    let fallback = Platform::detect(root.path())
        .default_instance_id()
        .and_then(|id| InstanceId::parse(&id).ok())
        .unwrap_or_else(|| InstanceId::parse("iid-vmcust").expect("a valid instance id"));
    let mut gathered = gather(root, sources, &fallback).map_err(|e| -> anyhow::Error {
        if e.invalid {
            InvalidInput(format!("{}\nnothing was changed", e.reason)).into()
        } else {
            anyhow::Error::from(std::io::Error::other(e.reason))
        }
    })?;
    if let (Some(dir), true) = (
        &args.guestinfo_dir,
        gathered.origins.is_empty() && args.imc.is_none() && args.ovf.is_none(),
    ) {
        tracing::warn!(
            "{}: no guestinfo.metadata, userdata or vendordata",
            dir.display()
        );
    }
    gathered.warnings.splice(0..0, imc_warnings);
    for w in &gathered.warnings {
        tracing::warn!("{w}");
    }
    Ok(Loaded {
        spec,
        ovf_environment,
        gathered,
    })
}

/// Reads and validates the spec at `path`.
pub fn load_imc(path: &Path) -> Result<vmcust_imc::Parsed> {
    let bytes =
        vmcust_imc::read_cust_cfg(path).with_context(|| format!("reading {}", path.display()))?;
    vmcust_imc::Spec::parse(&bytes).map_err(|e| {
        let hint = match sniff::hint(&bytes, sniff::Kind::CustCfg) {
            Some(h) => format!("\n{}: {h}", path.display()),
            None => String::new(),
        };
        InvalidInput(prefix_lines(path, &e.to_string()) + &hint + "\nnothing was changed").into()
    })
}

/// Refuses a spec's time zone that the root does not have, naming the file and line (the
/// gather would say `cust.cfg`, the name at boot).
fn check_zone(root: &Root, spec: &vmcust_imc::Spec, path: &Path) -> Result<()> {
    let Some(zone) = &spec.datetime.timezone else {
        return Ok(());
    };
    let line = spec.datetime.timezone_line.unwrap_or_default();
    let place = format!("{}: line {line}: [DATETIME] TIMEZONE", path.display());
    crate::source::timezone::check(root, zone, &place)
        .map_err(|e| InvalidInput(format!("{e}\nnothing was changed")).into())
}

/// `path: ` before every line, so each problem names its file.
fn prefix_lines(path: &Path, text: &str) -> String {
    text.lines()
        .map(|l| format!("{}: {l}", path.display()))
        .collect::<Vec<_>>()
        .join("\n")
}
