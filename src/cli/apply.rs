//! `vmcust apply`: carry a customization out on a root and print what changed.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::input::InputArgs;
use super::plan::{load_and_plan, print_steps};
use super::Format;

/// Arguments of `vmcust apply`.
#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// Root directory of the system to customize (`/` on the VM itself).
    #[arg(long, value_name = "DIR")]
    pub root: PathBuf,
    /// Where the customization comes from.
    #[command(flatten)]
    pub input: InputArgs,
    /// Network stack to write configuration for (default: detected from the root).
    #[arg(long, value_enum)]
    pub renderer: Option<crate::plan::network::Renderer>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Runs `vmcust apply`. The whole plan is made before anything is written, so an
/// invalid customization changes nothing.
pub fn run(args: ApplyArgs) -> Result<()> {
    let (root, plan) = load_and_plan(&args.root, &args.input, args.renderer)?;
    let changes = crate::apply::apply(&root, &plan)?;
    print_steps(&plan, changes, args.format, false)
}
