//! `vmcust apply`: carry a customization out on a root, all or nothing, and print what
//! changed.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::input::InputArgs;
use super::plan::{load_and_prepare, print_report};
use super::Format;

/// Apply a customization to a root and print what changed.
#[derive(Debug, Args)]
pub(crate) struct ApplyArgs {
    /// The customization spec (cust.cfg); the same as --imc.
    #[arg(value_name = "FILE", conflicts_with = "imc")]
    pub file: Option<PathBuf>,
    /// Root directory of the system to customize (`/` on the VM itself).
    #[arg(long, value_name = "DIR")]
    pub root: PathBuf,
    /// Where the customization comes from.
    #[command(flatten)]
    pub input: InputArgs,
    /// Network stack to write configuration for (default: `[network] renderer`, else the
    /// stack detected in the root; a root with none is an error).
    #[arg(long, value_enum)]
    pub renderer: Option<crate::plan::network::Renderer>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Runs `vmcust apply`. The whole plan is made before anything is written, so an
/// invalid customization changes nothing; a write that fails puts back every earlier
/// change. The boot steps (scripts, marker, user-data) are shown, not performed: they
/// belong to `vmcust run`.
pub(super) fn run(args: ApplyArgs) -> Result<()> {
    let (root, prepared, warnings) =
        load_and_prepare(&args.root, args.file, args.input, args.renderer)?;
    let changes = crate::apply::apply(&root, &prepared.plan)?;
    crate::applied::record(&root, &prepared, &changes, "vmcust apply");
    print_report(&prepared, &warnings, changes, args.format, false)
}
