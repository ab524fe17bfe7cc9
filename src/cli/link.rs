//! `vmcust cloud-init-link` (hidden): the packages' install scripts keep the `cloud-init`
//! stand-in in step with the system through it (`vmcust::cloud_init::link`).

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use clap::{Args, ValueEnum};

use crate::cloud_init::link;
use crate::root::Root;

/// Install or remove the `cloud-init` stand-in as the system needs (for packaging).
#[derive(Debug, Args)]
pub(crate) struct LinkArgs {
    /// What to do.
    #[arg(value_enum)]
    pub action: Action,
    /// Root directory of the system.
    #[arg(long, value_name = "DIR", default_value = "/")]
    pub root: PathBuf,
}

/// The two actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Action {
    /// Install the stand-in and drop-in when no real cloud-init is there, remove the
    /// drop-in when one is.
    Sync,
    /// Remove the stand-in and the drop-in (package removal).
    Remove,
}

/// Runs `vmcust cloud-init-link`.
pub(super) fn run(args: LinkArgs) -> Result<()> {
    let root =
        Root::new(&args.root).with_context(|| format!("opening root {}", args.root.display()))?;
    let did = match args.action {
        Action::Sync => link::sync(&root)?,
        Action::Remove => link::remove(&root)?,
    };
    for line in did {
        println!("{line}");
    }
    Ok(())
}
