//! The inputs every sub-command takes, and loading them into a customization.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;

use super::InvalidInput;
use crate::model::Customization;

/// Where the customization comes from.
#[derive(Debug, Args)]
pub struct InputArgs {
    /// vSphere guest customization spec (cust.cfg) to read.
    #[arg(long, value_name = "FILE")]
    pub imc: PathBuf,
    /// Network stack to write configuration for (default: detected from the root).
    #[arg(long, value_enum)]
    pub renderer: Option<crate::plan::network::Renderer>,
}

/// A validated spec and what it means.
pub struct Loaded {
    /// The spec as validated by `vmcust-imc`.
    pub parsed: vmcust_imc::Parsed,
    /// Its meaning in the engine's model.
    pub customization: Customization,
}

/// Reads and validates the spec at `path`; warnings go to stderr, prefixed by the path.
pub fn load_imc(path: &Path) -> Result<Loaded> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let parsed = vmcust_imc::Spec::parse(&bytes)
        .map_err(|e| InvalidInput(prefix_lines(path, &e.to_string()) + "\nnothing was changed"))?;
    for w in &parsed.warnings {
        tracing::warn!("{}: {w}", path.display());
    }
    let customization = crate::source::imc::customization(&parsed.spec);
    Ok(Loaded {
        parsed,
        customization,
    })
}

/// `path: ` before every line, so each problem names its file.
fn prefix_lines(path: &Path, text: &str) -> String {
    text.lines()
        .map(|l| format!("{}: {l}", path.display()))
        .collect::<Vec<_>>()
        .join("\n")
}
