//! The inputs `show`, `plan` and `apply` take, turned into the [`Door`] every source is
//! discovered through (see `source::registry` for the sources and their precedence).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;

use crate::failure::Failure;
use crate::host::guestinfo_dir::GuestinfoDir;
use crate::host::platform::Platform;
use crate::root::Root;
use crate::source::appliance::MappingSource;
use crate::source::imc::ImcInput;
use crate::source::ovf_locate::read_path;
use crate::source::{discover, sniff, Door, Given, SourceData, SourceSet};

/// Where the customization comes from; at least one is needed.
#[derive(Debug, Args)]
pub(crate) struct InputArgs {
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
    /// A seed drive: an ISO9660 or vfat image (or device) labelled config-2 or cidata, or a
    /// directory holding its files; may be given more than once.
    #[arg(long, value_name = "IMAGE|DIR")]
    pub seed: Vec<PathBuf>,
}

impl InputArgs {
    /// Whether any source is given.
    pub(crate) fn is_empty(&self) -> bool {
        self.imc.is_none()
            && self.ovf.is_none()
            && self.guestinfo_dir.is_none()
            && self.seed.is_empty()
    }
}

/// Every source read, and the spec as validated when one was given.
pub(super) struct Loaded {
    /// The spec as validated by `vmcust-imc`, when `--imc` was given (for `show`).
    pub spec: Option<vmcust_imc::Spec>,
    /// The OVF environment, when `--ovf` was given (for `show`).
    pub ovf_environment: Option<vmcust_ovf::Environment>,
    /// Everything gathered.
    pub gathered: SourceData,
}

/// Reads and validates every given source through the same discovery as a boot. `root`
/// supplies the appliance mapping, local OVF seeds, the zones and the default instance id
/// (its DMI UUID), as at boot; without one (`show`) they are looked up in `/`.
pub(super) fn load(args: &InputArgs, root: Option<&Root>) -> Result<Loaded> {
    if args.is_empty() {
        return Err(Failure::usage(
            "no customization given: use FILE (or --imc FILE), --ovf FILE|ISO, --seed IMAGE|DIR \
             or --guestinfo-dir DIR",
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
    let imc = match &args.imc {
        Some(path) => Some(ImcInput {
            parsed: load_imc(path)?,
            dir: path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."))
                .to_path_buf(),
            name: path.display().to_string(),
        }),
        None => None,
    };
    let spec = imc.as_ref().map(|i| i.parsed.spec.clone());
    let mut host = args.guestinfo_dir.as_ref().map(GuestinfoDir::new);
    let mut door = Door {
        root,
        enabled: SourceSet::ALL,
        rpc: host.as_mut().map(|h| h as &mut dyn crate::host::GuestRpc),
        imc,
        given: Some(Given {
            ovf: args.ovf.clone(),
            seeds: args.seed.clone(),
        }),
        mapping: match &args.ovf_properties {
            Some(p) => MappingSource::File(p.clone()),
            None => MappingSource::Root,
        },
        media: Default::default(),
    };
    let fallback = Platform::detect(root.path()).instance_id_or_default();
    let gathered = discover(&mut door, &fallback).map_err(|f| {
        anyhow::Error::from(Failure::new(
            f.kind,
            format!("{}\nnothing was changed", f.reason),
        ))
    })?;
    if let (Some(dir), true) = (&args.guestinfo_dir, gathered.is_empty()) {
        tracing::warn!(
            "{}: no guestinfo.metadata, userdata or vendordata",
            dir.display()
        );
    }
    for w in &gathered.warnings {
        tracing::warn!("{w}");
    }
    // For `show`: the environment as validated (the discovery above has refused a bad one).
    let ovf_environment = match &args.ovf {
        Some(path) => vmcust_ovf::parse(&read_path(path)?.xml).ok(),
        None => None,
    };
    Ok(Loaded {
        spec,
        ovf_environment,
        gathered,
    })
}

/// Reads and validates the spec at `path`.
pub(super) fn load_imc(path: &Path) -> Result<vmcust_imc::Parsed> {
    let bytes =
        vmcust_imc::read_cust_cfg(path).with_context(|| format!("reading {}", path.display()))?;
    vmcust_imc::Spec::parse(&bytes).map_err(|e| {
        let hint = match sniff::hint(&bytes, sniff::Kind::CustCfg) {
            Some(h) => format!("\n{}: {h}", path.display()),
            None => String::new(),
        };
        Failure::invalid(prefix_lines(path, &e.to_string()) + &hint + "\nnothing was changed")
            .into()
    })
}

/// `path: ` before every line, so each problem names its file.
fn prefix_lines(path: &Path, text: &str) -> String {
    text.lines()
        .map(|l| format!("{}: {l}", path.display()))
        .collect::<Vec<_>>()
        .join("\n")
}
